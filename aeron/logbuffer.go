package aeron

import (
	"fmt"
	"math/bits"

	"github.com/goblin-kv/goblin/internal/shm"
)

// Log buffer layout: three term partitions followed by a 4096-byte metadata
// section at the end of the file.
const (
	partitionCount    = 3
	logMetaDataLength = 4096

	lmTailOffset          = 0   // int64 ×3 raw tails
	lmActiveTermCount     = 24  // int32
	lmEndOfStreamPosition = 128 // int64
	lmIsConnected         = 136 // int32
	lmCorrelationID       = 256
	lmInitialTermID       = 264
	lmDefaultHeaderLength = 268
	lmMTULength           = 272
	lmTermLength          = 276
	lmPageSize            = 280
	lmDefaultHeader       = 320
	lmResponseCorrelation = 456
	lmIsResponse          = 489
	minTermLength         = 64 * 1024
	maxTermLength         = 1 << 30
	maxMessageLengthLimit = 16 * 1024 * 1024
)

// Data frame header (32 bytes) as written into term buffers.
const (
	headerLength      = 32
	frameAlignment    = 32
	fhLength          = 0
	fhVersion         = 4
	fhFlags           = 5
	fhType            = 6
	fhTermOffset      = 8
	fhSessionID       = 12
	fhStreamID        = 16
	fhTermID          = 20
	fhReservedValue   = 24
	frameTypePad      = 0
	frameTypeData     = 1
	flagBegin         = 0x80
	flagEnd           = 0x40
	flagsUnfragmented = flagBegin | flagEnd
	appendFailed      = -1 // appender result: the term filled up, rotate
)

// logBuffer is one mapped log file (publication or image).
type logBuffer struct {
	data          []byte
	terms         [partitionCount][]byte
	meta          []byte
	termLength    int
	bitsToShift   int
	initialTermID int32
	mtu           int
}

func newLogBuffer(data []byte) (*logBuffer, error) {
	if len(data) < 3*minTermLength+logMetaDataLength {
		return nil, fmt.Errorf("aeron: log buffer of %d bytes is too small", len(data))
	}
	meta := data[len(data)-logMetaDataLength:]
	termLength := int(shm.GetInt32(meta, lmTermLength))
	if termLength < minTermLength || termLength > maxTermLength || termLength&(termLength-1) != 0 ||
		3*termLength+logMetaDataLength > len(data) {
		return nil, fmt.Errorf("aeron: log buffer term length %d is invalid for a %d-byte file", termLength, len(data))
	}
	l := &logBuffer{
		data:          data,
		meta:          meta,
		termLength:    termLength,
		bitsToShift:   bits.TrailingZeros(uint(termLength)),
		initialTermID: shm.GetInt32(meta, lmInitialTermID),
		mtu:           int(shm.GetInt32(meta, lmMTULength)),
	}
	for i := range l.terms {
		l.terms[i] = data[i*termLength : (i+1)*termLength : (i+1)*termLength]
	}
	return l, nil
}

func packTail(termID int32, termOffset int32) int64 {
	return int64(termID)<<32 | int64(uint32(termOffset))
}

func tailTermID(rawTail int64) int32 { return int32(rawTail >> 32) }

func tailTermOffset(rawTail int64, termLength int) int {
	off := rawTail & 0xFFFFFFFF
	if off > int64(termLength) {
		return termLength
	}
	return int(off)
}

func computePosition(termID int32, termOffset int, bitsToShift int, initialTermID int32) int64 {
	termCount := int64(termID - initialTermID) // int32 wrap-around, then widen
	return termCount<<bitsToShift + int64(termOffset)
}

func maxPossiblePosition(termLength int) int64 { return int64(termLength) << 31 }

func computeMaxMessageLength(termLength int) int {
	if termLength/8 < maxMessageLengthLimit {
		return termLength / 8
	}
	return maxMessageLengthLimit
}

// rawTailVolatile: writers are publishers (get-and-add, CAS or release
// store); this acquire load pairs with them.
func (l *logBuffer) rawTail(index int) int64 {
	return shm.LoadInt64Acquire(l.meta, lmTailOffset+8*index)
}

// activeTermCount: written by the publisher that rotates (CAS or release);
// read by publishers with acquire.
func (l *logBuffer) activeTermCount() int32 {
	return shm.LoadInt32Acquire(l.meta, lmActiveTermCount)
}

// isConnected: written by the driver (release); read here with acquire.
func (l *logBuffer) isConnected() bool { return shm.LoadInt32Acquire(l.meta, lmIsConnected) == 1 }

// endOfStreamPosition: written by the driver (release); read with acquire.
func (l *logBuffer) endOfStreamPosition() int64 {
	return shm.LoadInt64Acquire(l.meta, lmEndOfStreamPosition)
}

// rotateLog moves a concurrent publication to the next term: the next
// partition's tail is CASed from the stale "term id - 3" placeholder to the
// new term, then the active term count is CASed forward. Any publisher may
// win either CAS; losers see the new state on their next offer.
func rotateLog(meta []byte, termCount, termID int32) bool {
	nextTermID := termID + 1
	nextTermCount := termCount + 1
	nextIndex := int(nextTermCount) % partitionCount
	expected := nextTermID - partitionCount
	newRaw := packTail(nextTermID, 0)
	off := lmTailOffset + 8*nextIndex
	for {
		raw := shm.LoadInt64Acquire(meta, off)
		if tailTermID(raw) != expected {
			break
		}
		if shm.CompareAndSwapInt64(meta, off, raw, newRaw) {
			break
		}
	}
	return shm.CompareAndSwapInt32(meta, lmActiveTermCount, termCount, nextTermCount)
}

// headerWriter writes the fixed part of data frame headers from the log's
// default header.
type headerWriter struct {
	versionFlagsType int64 // bytes 4..7 of the header, shifted into the high word
	sessionID        int64 // shifted into the high word
	streamID         int64
}

func newHeaderWriter(meta []byte) headerWriter {
	h := meta[lmDefaultHeader : lmDefaultHeader+headerLength]
	return headerWriter{
		versionFlagsType: int64(uint32(shm.GetInt32(h, fhVersion))) << 32,
		sessionID:        int64(shm.GetInt32(h, fhSessionID)) << 32,
		streamID:         int64(uint32(shm.GetInt32(h, fhStreamID))),
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
	shm.PutInt64(term, offset+fhTermOffset, h.sessionID|int64(uint32(offset)))
	shm.PutInt64(term, offset+fhStreamID, int64(termID)<<32|h.streamID)
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
		term[termOffset+fhType] = frameTypePad
		term[termOffset+fhType+1] = 0
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
		last = align(rem+headerLength, frameAlignment)
	}
	return full*(maxPayload+headerLength) + last
}

// writeFragments writes msg as a run of frames starting at termOffset (the
// space is already reserved). Each frame's length is stored last.
func writeFragments(term []byte, termOffset int, h *headerWriter, termID int32, a, b []byte, maxPayload int) {
	flags := byte(flagBegin)
	total := len(a) + len(b)
	remaining := total
	off := termOffset
	for remaining > 0 {
		n := min(remaining, maxPayload)
		frameLength := n + headerLength
		h.write(term, off, frameLength, termID)
		copyAt(term[off+headerLength:off+headerLength+n], a, b, total-remaining)
		if remaining <= maxPayload {
			flags |= flagEnd
		}
		term[off+fhFlags] = flags
		frameLengthRelease(term, off, frameLength)
		flags = 0
		off += align(frameLength, frameAlignment)
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
