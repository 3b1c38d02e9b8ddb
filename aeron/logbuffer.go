package aeron

import (
	"fmt"
	"math/bits"

	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

// appendFailed is the appenders' result when the term filled up: rotate.
const appendFailed = -1

// logBuffer is one mapped log file (publication or image).
type logBuffer struct {
	data          []byte
	terms         [logbuffer.PartitionCount][]byte
	meta          []byte
	termLength    int
	bitsToShift   int
	initialTermID int32
	mtu           int
}

func newLogBuffer(data []byte) (*logBuffer, error) {
	if len(data) < 3*logbuffer.MinTermLength+logbuffer.MetadataLength {
		return nil, fmt.Errorf("aeron: log buffer of %d bytes is too small", len(data))
	}
	meta := data[len(data)-logbuffer.MetadataLength:]
	termLength := int(shm.GetInt32(meta, logbuffer.TermLengthOffset))
	if termLength < logbuffer.MinTermLength || termLength > logbuffer.MaxTermLength || termLength&(termLength-1) != 0 ||
		3*termLength+logbuffer.MetadataLength > len(data) {
		return nil, fmt.Errorf("aeron: log buffer term length %d is invalid for a %d-byte file", termLength, len(data))
	}
	l := &logBuffer{
		data:          data,
		meta:          meta,
		termLength:    termLength,
		bitsToShift:   bits.TrailingZeros(uint(termLength)),
		initialTermID: shm.GetInt32(meta, logbuffer.InitialTermIDOffset),
		mtu:           int(shm.GetInt32(meta, logbuffer.MTULengthOffset)),
	}
	for i := range l.terms {
		l.terms[i] = data[i*termLength : (i+1)*termLength : (i+1)*termLength]
	}
	return l, nil
}

// rawTailVolatile: writers are publishers (get-and-add, CAS or release
// store); this acquire load pairs with them.
func (l *logBuffer) rawTail(index int) int64 {
	return shm.LoadInt64Acquire(l.meta, logbuffer.TermTailCountersOffset+8*index)
}

// activeTermCount: written by the publisher that rotates (CAS or release);
// read by publishers with acquire.
func (l *logBuffer) activeTermCount() int32 {
	return shm.LoadInt32Acquire(l.meta, logbuffer.ActiveTermCountOffset)
}

// isConnected: written by the driver (release); read here with acquire.
func (l *logBuffer) isConnected() bool {
	return shm.LoadInt32Acquire(l.meta, logbuffer.IsConnectedOffset) == 1
}

// endOfStreamPosition: written by the driver (release); read with acquire.
func (l *logBuffer) endOfStreamPosition() int64 {
	return shm.LoadInt64Acquire(l.meta, logbuffer.EndOfStreamPositionOffset)
}

// headerWriter writes the fixed part of data frame headers from the log's
// default header.
type headerWriter struct {
	versionFlagsType int64 // bytes 4..7 of the header, shifted into the high word
	sessionID        int64 // shifted into the high word
	streamID         int64
}

func newHeaderWriter(meta []byte) headerWriter {
	h := meta[logbuffer.DefaultFrameHeaderOffset : logbuffer.DefaultFrameHeaderOffset+logbuffer.HeaderLength]
	return headerWriter{
		versionFlagsType: int64(uint32(shm.GetInt32(h, logbuffer.FrameVersionOffset))) << 32,
		sessionID:        int64(shm.GetInt32(h, logbuffer.FrameSessionIDOffset)) << 32,
		streamID:         int64(uint32(shm.GetInt32(h, logbuffer.FrameStreamIDOffset))),
	}
}

// write stores the header of a frame of frameLength bytes at offset with a
// negative length, so readers (who stop at length ≤ 0) ignore it until the
// caller stores the positive length with release.
func (h *headerWriter) write(term []byte, offset, frameLength int, termID int32) {
	// The first word (length, version, flags, type) is a release store, as
	// in the Java client (putLongRelease then a store-store fence): the plain
	// stores after it cannot become visible before it (x86 keeps stores in
	// order; elsewhere and under -race it is a sequentially consistent
	// atomic store, which is stronger).
	shm.StoreInt64ReleaseOnly(term, offset, h.versionFlagsType|int64(uint32(-frameLength)))
	shm.PutInt64(term, offset+logbuffer.FrameTermOffsetOffset, h.sessionID|int64(uint32(offset)))
	shm.PutInt64(term, offset+logbuffer.FrameStreamIDOffset, int64(termID)<<32|h.streamID)
}

// frameLengthRelease publishes a frame: the reader's acquire load of a
// positive length sees every byte written before this store.
// Writer: the publisher (or the driver's receiver). Readers: subscribers
// and the driver's sender, with acquire loads.
func frameLengthRelease(term []byte, offset, length int) {
	shm.StoreInt32ReleaseOnly(term, offset, int32(length))
}

// handleEndOfTerm pads the rest of the term when this append was the one
// that crossed its end.
func handleEndOfTerm(term []byte, termOffset int, h *headerWriter, termID int32) int {
	termLength := len(term)
	if termOffset < termLength {
		pad := termLength - termOffset
		h.write(term, termOffset, pad, termID)
		term[termOffset+logbuffer.FrameTypeOffset] = logbuffer.FrameTypePad
		term[termOffset+logbuffer.FrameTypeOffset+1] = 0
		frameLengthRelease(term, termOffset, pad)
	}
	return appendFailed
}

// fragmentedLength is the term space a message of length bytes takes when
// split into frames of at most maxPayload bytes.
func fragmentedLength(length, maxPayload int) int {
	full := length / maxPayload
	rem := length % maxPayload
	last := 0
	if rem > 0 {
		last = shm.Align(rem+logbuffer.HeaderLength, logbuffer.FrameAlignment)
	}
	return full*(maxPayload+logbuffer.HeaderLength) + last
}

// writeFragments writes msg as a run of frames starting at termOffset (the
// space is already reserved). Each frame's length is stored last.
func writeFragments(term []byte, termOffset int, h *headerWriter, termID int32, a, b []byte, maxPayload int) {
	flags := byte(logbuffer.FlagBegin)
	total := len(a) + len(b)
	remaining := total
	off := termOffset
	for remaining > 0 {
		n := min(remaining, maxPayload)
		frameLength := n + logbuffer.HeaderLength
		h.write(term, off, frameLength, termID)
		copyAt(term[off+logbuffer.HeaderLength:off+logbuffer.HeaderLength+n], a, b, total-remaining)
		if remaining <= maxPayload {
			flags |= logbuffer.FlagEnd
		}
		term[off+logbuffer.FrameFlagsOffset] = flags
		frameLengthRelease(term, off, frameLength)
		flags = 0
		off += shm.Align(frameLength, logbuffer.FrameAlignment)
		remaining -= n
	}
}

// copyAt fills dst from the concatenation of a and b starting at from.
func copyAt(dst, a, b []byte, from int) {
	if from < len(a) {
		n := copy(dst, a[from:])
		copy(dst[n:], b)
		return
	}
	copy(dst, b[from-len(a):])
}
