package aeron

import (
	"unsafe"

	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
)

// appendUnfragmented writes one whole frame carrying a then b at offset in
// term, the whole unfragmented append in one step:
//
//  1. if meta is not nil, the raw tail at meta[tailOff:] becomes rawTail
//     (release; the exclusive publication's tail, which only this
//     publisher writes; the driver and Position read it with acquire);
//  2. the header's first word with the negative frame length (release, so
//     a reader never sees the later stores without it), then the term
//     offset/session and stream/term id words;
//  3. the payload;
//  4. the positive frame length (release): the subscriber's or driver's
//     acquire load of a positive length sees every byte of the frame.
//
// On amd64 it is one assembly routine of plain MOVs (frame_amd64.s), which
// spares the publisher four calls per message; elsewhere, and under the
// race detector, the same stores go through internal/shm (frame_other.go).
// The caller has checked that the frame fits in the term.
func (h *headerWriter) appendUnfragmented(meta []byte, tailOff int, rawTail int64, term []byte, offset int, termID int32, a, b []byte) {
	frameLength := logbuffer.HeaderLength + len(a) + len(b)
	_ = term[offset : offset+frameLength] // bounds check for the assembly
	var tail *int64
	if meta != nil {
		_ = meta[tailOff : tailOff+8]
		tail = (*int64)(unsafe.Pointer(&meta[tailOff]))
	}
	appendFrame(tail, rawTail, &term[offset],
		h.versionFlagsType|int64(uint32(-frameLength)),
		h.sessionID|int64(uint32(offset)),
		int64(termID)<<32|h.streamID,
		unsafe.SliceData(a), len(a), unsafe.SliceData(b), len(b), int32(frameLength))
}
