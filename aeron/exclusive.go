package aeron

import (
	"fmt"
	"unsafe"

	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

// ExclusivePublication is a publication with a single writer: only one
// goroutine at a time may call Offer, Offer2, OfferVectored and TryClaim (no
// atomic read-modify-write on the tail, so it is cheaper than Publication).
// The other methods (Position reads the shared raw tail) are safe from any
// goroutine. Add one with Client.AddExclusivePublication; every add gets its
// own session.
type ExclusivePublication struct {
	pubBase
	activeIndex int
	appendState
}

// appendState is the exclusive publisher's position in its log, kept in
// one place for the offer fast path: offerFast (frame_amd64.s) reads and
// writes it through the go_asm.h field offsets, so its fields are plain
// 8-byte words. The addresses point into the driver's mapped files, which
// the client keeps mapped until after the publication's linger; they are
// uintptrs because only the assembly dereferences them (the portable path
// uses the log's slices).
type appendState struct {
	termAddr          uintptr // start of the active term
	tailAddr          uintptr // the active partition's raw tail in the log meta
	limitAddr         uintptr // the pub-lmt counter value
	termLength        int64
	termOffset        int64
	termBeginPosition int64
	termID            int64 // an int32, sign-extended
	payloadLimit      int64 // the largest payload one frame carries (maxPayload)
	hdrVersionFlags   int64 // the headerWriter's words (see headerWriter)
	hdrSession        int64
	hdrStream         int64
}

func (p *ExclusivePublication) initTail() {
	log := p.log
	termCount := log.activeTermCount()
	raw := log.rawTail(int(termCount) % logbuffer.PartitionCount)
	s := &p.appendState
	s.limitAddr = uintptr(unsafe.Pointer(&p.limitBuf[p.limitOff]))
	s.termLength = int64(log.termLength)
	s.payloadLimit = int64(p.maxPayload)
	s.hdrVersionFlags, s.hdrSession, s.hdrStream = p.hw.versionFlagsType, p.hw.sessionID, p.hw.streamID
	p.setActive(int(termCount)%logbuffer.PartitionCount, logbuffer.TermID(raw), logbuffer.TermOffset(raw, log.termLength))
}

// setActive makes partition index, holding termID, the one appended to,
// from termOffset on.
func (p *ExclusivePublication) setActive(index int, termID int32, termOffset int) {
	log := p.log
	s := &p.appendState
	p.activeIndex = index
	s.termAddr = uintptr(unsafe.Pointer(&log.terms[index][0]))
	s.tailAddr = uintptr(unsafe.Pointer(&log.meta[logbuffer.TermTailCountersOffset+8*index]))
	s.termID = int64(termID)
	s.termOffset = int64(termOffset)
	s.termBeginPosition = logbuffer.ComputePosition(termID, 0, log.bitsToShift, log.initialTermID)
}

// Offer appends msg and returns the new position or a negative status; see
// Publication.Offer. Single writer only. It does not allocate.
func (p *ExclusivePublication) Offer(msg []byte) int64 { return p.Offer2(msg, nil) }

// Offer2 offers the concatenation of a and b as one message.
func (p *ExclusivePublication) Offer2(a, b []byte) int64 {
	// The common case (open, not back-pressured, one frame that fits in
	// the active term) is one call; everything else takes offer2.
	if !p.closed.Load() {
		if r := p.offerFast(a, b); r > 0 {
			return r
		}
	}
	return p.offer2(a, b)
}

// OfferVectored offers the concatenation of parts as one message; see
// Publication.OfferVectored.
func (p *ExclusivePublication) OfferVectored(parts [][]byte) int64 {
	switch len(parts) {
	case 0:
		return p.Offer2(nil, nil)
	case 1:
		return p.Offer2(parts[0], nil)
	case 2:
		return p.Offer2(parts[0], parts[1])
	}
	return offerGathered(parts, p.maxPayload, p.maxMessage, p.offer2, p.offerIntoClaim)
}

// offerIntoClaim is offerGathered's claim path. The claim stays on this
// method's stack: passed to TryClaim through a func value it would escape.
func (p *ExclusivePublication) offerIntoClaim(length int, parts [][]byte) int64 {
	var c BufferClaim
	r := p.TryClaim(length, &c)
	if r > 0 {
		c.fill(parts)
	}
	return r
}

// offer2 is the whole offer: closed, back pressure, fragmentation and the
// end of the term.
func (p *ExclusivePublication) offer2(a, b []byte) int64 {
	if p.closed.Load() {
		return Closed
	}
	length := len(a) + len(b)
	limit := shm.LoadInt64Acquire(p.limitBuf, p.limitOff) // pub-lmt (driver, release)
	position := p.termBeginPosition + p.termOffset
	if position >= limit {
		return p.backPressureStatus(position, length)
	}
	log := p.log
	term := log.terms[p.activeIndex]
	tailOff := logbuffer.TermTailCountersOffset + 8*p.activeIndex
	termOffset, termID := int(p.termOffset), int32(p.termID)
	var required int
	if length <= p.maxPayload {
		required = shm.Align(length+logbuffer.HeaderLength, logbuffer.FrameAlignment)
	} else {
		if length > p.maxMessage {
			panic(fmt.Errorf("%w: %d bytes > max message length %d", ErrMessageTooLong, length, p.maxMessage))
		}
		required = fragmentedLength(length, p.maxPayload)
	}
	result := termOffset + required
	// The raw tail is advanced (release) before the frame is written, as the
	// Java client does. Writer: this publisher only. Readers: the driver
	// (producer position, cleaning) and Position, with acquire loads.
	rawTail := logbuffer.PackTail(termID, int32(result))
	switch {
	case result > len(term):
		shm.StoreInt64ReleaseOnly(log.meta, tailOff, rawTail)
		handleEndOfTerm(term, termOffset, &p.hw, termID)
		return p.rotate()
	case length <= p.maxPayload:
		p.hw.appendUnfragmented(log.meta, tailOff, rawTail, term, termOffset, termID, a, b)
	default:
		shm.StoreInt64ReleaseOnly(log.meta, tailOff, rawTail)
		writeFragments(term, termOffset, &p.hw, termID, a, b, p.maxPayload)
	}
	p.termOffset = int64(result)
	return p.termBeginPosition + int64(result)
}

// rotate moves to the next term after the current one filled up.
func (p *ExclusivePublication) rotate() int64 {
	log := p.log
	if p.termBeginPosition+int64(log.termLength) >= p.maxPosition {
		return MaxPositionExceeded
	}
	next := (p.activeIndex + 1) % logbuffer.PartitionCount
	nextTermID := int32(p.termID) + 1
	p.setActive(next, nextTermID, 0)
	// Next partition's tail: single writer, so a release store suffices;
	// then the active term count (release) tells everyone else.
	shm.StoreInt64Release(log.meta, logbuffer.TermTailCountersOffset+8*next, logbuffer.PackTail(nextTermID, 0))
	shm.StoreInt32Release(log.meta, logbuffer.ActiveTermCountOffset, nextTermID-log.initialTermID)
	return AdminAction
}

// TryClaim reserves length bytes (at most MaxPayloadLength) for the caller
// to fill; see Publication.TryClaim. Single writer only.
func (p *ExclusivePublication) TryClaim(length int, claim *BufferClaim) int64 {
	if length > p.maxPayload {
		panic(fmt.Errorf("%w: claim of %d bytes > max payload %d", ErrMessageTooLong, length, p.maxPayload))
	}
	if p.closed.Load() {
		return Closed
	}
	limit := shm.LoadInt64Acquire(p.limitBuf, p.limitOff)
	position := p.termBeginPosition + p.termOffset
	if position >= limit {
		return p.backPressureStatus(position, length)
	}
	log := p.log
	term := log.terms[p.activeIndex]
	termOffset, termID := int(p.termOffset), int32(p.termID)
	frameLength := length + logbuffer.HeaderLength
	result := termOffset + shm.Align(frameLength, logbuffer.FrameAlignment)
	// Raw tail: single writer, release; see offer2.
	shm.StoreInt64ReleaseOnly(log.meta, logbuffer.TermTailCountersOffset+8*p.activeIndex, logbuffer.PackTail(termID, int32(result)))
	if result > len(term) {
		handleEndOfTerm(term, termOffset, &p.hw, termID)
		return p.rotate()
	}
	p.hw.write(term, termOffset, frameLength, termID)
	claim.term, claim.offset, claim.length = term, termOffset, frameLength
	p.termOffset = int64(result)
	return p.termBeginPosition + int64(result)
}
