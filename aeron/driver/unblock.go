package driver

import (
	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

// unblockLog frees a log stuck at blockedPosition because a publisher
// claimed space and never committed it (LogBufferUnblocker): the claim is
// turned into padding, or, when the publisher claimed past a term end that
// was never rotated, the log is rotated. abandoned says that no publisher
// is left (the publication drains): then a claim that never got a header
// and has nothing after it up to the tail is padded up to the tail too,
// which with a publisher left could still be one that is about to write
// its header. It reports whether it changed anything.
func unblockLog(l *rawLog, blockedPosition int64, abandoned bool) bool {
	bits := logbuffer.PositionBitsToShift(l.termLength)
	blockedTermCount := int32(blockedPosition >> bits)
	blockedOffset := int(blockedPosition) & (l.termLength - 1)
	activeTermCount := logbuffer.ActiveTermCount(l.meta)
	if activeTermCount == blockedTermCount-1 && blockedOffset == 0 {
		termID := logbuffer.TermID(logbuffer.RawTail(l.meta, int(activeTermCount)%logbuffer.PartitionCount))
		logbuffer.RotateLog(l.meta, activeTermCount, termID)
		return true
	}
	index := int(blockedTermCount) % logbuffer.PartitionCount
	raw := logbuffer.RawTail(l.meta, index)
	termID := logbuffer.TermID(raw)
	tailOffset := logbuffer.TermOffset(raw, l.termLength)
	switch unblockTerm(l.meta, l.terms[index], blockedOffset, tailOffset, termID, abandoned) {
	case unblockedToEnd:
		logbuffer.RotateLog(l.meta, blockedTermCount, termID)
		return true
	case unblocked:
		return true
	}
	return false
}

type unblockStatus uint8

const (
	noAction unblockStatus = iota
	unblocked
	unblockedToEnd
)

// unblockTerm pads over a stuck frame at blockedOffset (TermUnblocker): a
// negative length is a claim whose length is known; a zero length with a
// committed frame later and nothing but zeros between is a claim whose
// header was never written; zeros up to the term end pad to the end. With
// abandoned (no publisher left), zeros up to a tail inside the term are a
// dead publisher's last claim, its header never written, and are padded
// up to the tail. A publisher killed between moving the tail and writing
// the header leaves that: under CPU contention, a few times in a hundred
// in TestKilledClientsAreCleanedUp. Left alone (as the Java driver's
// TermUnblocker leaves it), the publication never drains and its
// subscribers never see the image go.
func unblockTerm(meta, term []byte, blockedOffset, tailOffset int, termID int32, abandoned bool) unblockStatus {
	// Frame lengths: written by publishers (release); acquire here.
	length := shm.LoadInt32Acquire(term, blockedOffset)
	if length < 0 {
		resetHeader(meta, term, blockedOffset, termID, int(-length))
		return unblocked
	}
	if length != 0 {
		return noAction
	}
	status := noAction
	offset := blockedOffset + logbuffer.FrameAlignment
	for ; offset < tailOffset; offset += logbuffer.FrameAlignment {
		if shm.LoadInt32Acquire(term, offset) == 0 {
			continue
		}
		if zeroedBetween(term, blockedOffset, offset) {
			resetHeader(meta, term, blockedOffset, termID, offset-blockedOffset)
			status = unblocked
		}
		break
	}
	switch {
	case offset == len(term) && shm.LoadInt32Acquire(term, blockedOffset) == 0:
		resetHeader(meta, term, blockedOffset, termID, offset-blockedOffset)
		status = unblockedToEnd
	case abandoned && status == noAction && offset >= tailOffset && tailOffset > blockedOffset &&
		shm.LoadInt32Acquire(term, blockedOffset) == 0:
		resetHeader(meta, term, blockedOffset, termID, tailOffset-blockedOffset)
		status = unblocked
	}
	return status
}

func zeroedBetween(term []byte, from, to int) bool {
	for i := to - logbuffer.FrameAlignment; i >= from; i -= logbuffer.FrameAlignment {
		if shm.LoadInt32Acquire(term, i) != 0 {
			return false
		}
	}
	return true
}

// resetHeader writes a padding frame of length bytes at offset from the
// log's default header; the length is stored last (release) so a reader
// sees a complete frame.
func resetHeader(meta, term []byte, offset int, termID int32, length int) {
	h := meta[logbuffer.DefaultFrameHeaderOffset : logbuffer.DefaultFrameHeaderOffset+logbuffer.HeaderLength]
	copy(term[offset+4:offset+logbuffer.HeaderLength], h[4:])
	shm.PutUint16(term, offset+logbuffer.FrameTypeOffset, logbuffer.FrameTypePad)
	shm.PutInt32(term, offset+logbuffer.FrameTermOffsetOffset, int32(offset))
	shm.PutInt32(term, offset+logbuffer.FrameTermIDOffset, termID)
	shm.StoreInt32Release(term, offset+logbuffer.FrameLengthOffset, int32(length))
}
