//go:build !amd64 || race

package aeron

import (
	"unsafe"

	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

// appendFrame is the portable appendUnfragmented body: the same stores in
// the same order as frame_amd64.s, each through internal/shm (sync/atomic
// where ordering matters, which the race detector understands).
func appendFrame(tail *int64, rawTail int64, frame *byte, w0, w1, w2 int64, a *byte, na int, b *byte, nb int, frameLength int32) {
	if tail != nil {
		shm.StoreInt64ReleaseOnly(unsafe.Slice((*byte)(unsafe.Pointer(tail)), 8), 0, rawTail)
	}
	f := unsafe.Slice(frame, logbuffer.HeaderLength+na+nb)
	shm.StoreInt64ReleaseOnly(f, 0, w0)
	shm.PutInt64(f, logbuffer.FrameTermOffsetOffset, w1)
	shm.PutInt64(f, logbuffer.FrameStreamIDOffset, w2)
	n := copy(f[logbuffer.HeaderLength:], unsafe.Slice(a, na))
	copy(f[logbuffer.HeaderLength+n:], unsafe.Slice(b, nb))
	frameLengthRelease(f, 0, int(frameLength))
}

// offerFast is the portable twin of the assembly in frame_amd64.s: the
// same checks and the same stores, through the log's slices.
func (p *ExclusivePublication) offerFast(a, b []byte) int64 {
	s := &p.appendState
	length := int64(len(a) + len(b))
	if length > s.payloadLimit {
		return 0
	}
	position := s.termBeginPosition + s.termOffset
	if position >= shm.LoadInt64Acquire(p.limitBuf, p.limitOff) { // pub-lmt: driver writes (release)
		return 0
	}
	result := s.termOffset + int64(shm.Align(int(length)+logbuffer.HeaderLength, logbuffer.FrameAlignment))
	if result > s.termLength {
		return 0
	}
	termID := int32(s.termID)
	p.hw.appendUnfragmented(p.log.meta, logbuffer.TermTailCountersOffset+8*p.activeIndex, logbuffer.PackTail(termID, int32(result)),
		p.log.terms[p.activeIndex], int(s.termOffset), termID, a, b)
	s.termOffset = result
	return s.termBeginPosition + result
}
