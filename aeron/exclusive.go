package aeron

import (
	"fmt"

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
	termID            int32
	termOffset        int
	activeIndex       int
	termBeginPosition int64
}

func (p *ExclusivePublication) initTail() {
	log := p.log
	termCount := log.activeTermCount()
	p.activeIndex = int(termCount) % partitionCount
	raw := log.rawTail(p.activeIndex)
	p.termID = tailTermID(raw)
	p.termOffset = tailTermOffset(raw, log.termLength)
	p.termBeginPosition = computePosition(p.termID, 0, log.bitsToShift, log.initialTermID)
}

// Offer appends msg and returns the new position or a negative status; see
// Publication.Offer. Single writer only. It does not allocate.
func (p *ExclusivePublication) Offer(msg []byte) int64 { return p.offer2(msg, nil) }

// Offer2 offers the concatenation of a and b as one message.
func (p *ExclusivePublication) Offer2(a, b []byte) int64 { return p.offer2(a, b) }

// OfferVectored offers the concatenation of parts as one message; see
// Publication.OfferVectored.
func (p *ExclusivePublication) OfferVectored(parts [][]byte) int64 {
	switch len(parts) {
	case 0:
		return p.offer2(nil, nil)
	case 1:
		return p.offer2(parts[0], nil)
	case 2:
		return p.offer2(parts[0], parts[1])
	}
	return offerGathered(parts, p.maxPayload, p.maxMessage, p.offer2, p.offerIntoClaim)
}

func (p *ExclusivePublication) offerIntoClaim(length int, parts [][]byte) int64 {
	var c BufferClaim
	r := p.TryClaim(length, &c)
	if r > 0 {
		b := c.Buffer()
		n := 0
		for _, part := range parts {
			n += copy(b[n:], part)
		}
		c.Commit()
	}
	return r
}

func (p *ExclusivePublication) offer2(a, b []byte) int64 {
	if p.closed.Load() {
		return Closed
	}
	length := len(a) + len(b)
	limit := shm.LoadInt64Acquire(p.limitBuf, p.limitOff) // pub-lmt (driver, release)
	position := p.termBeginPosition + int64(p.termOffset)
	if position >= limit {
		return p.backPressureStatus(position, length)
	}
	log := p.log
	term := log.terms[p.activeIndex]
	tailOff := lmTailOffset + 8*p.activeIndex
	var required int
	if length <= p.maxPayload {
		required = align(length+headerLength, frameAlignment)
	} else {
		if length > p.maxMessage {
			panic(fmt.Errorf("%w: %d bytes > max message length %d", ErrMessageTooLong, length, p.maxMessage))
		}
		required = fragmentedLength(length, p.maxPayload)
	}
	result := p.termOffset + required
	// The raw tail is advanced (release) before the frame is written, as the
	// Java client does. Writer: this publisher only. Readers: the driver
	// (producer position, cleaning) and Position, with acquire loads.
	shm.StoreInt64ReleaseOnly(log.meta, tailOff, packTail(p.termID, int32(result)))
	if result > len(term) {
		handleEndOfTerm(term, p.termOffset, &p.hw, p.termID)
		return p.rotate()
	}
	if length <= p.maxPayload {
		off := p.termOffset
		frameLength := length + headerLength
		p.hw.write(term, off, frameLength, p.termID)
		n := copy(term[off+headerLength:], a)
		copy(term[off+headerLength+n:], b)
		frameLengthRelease(term, off, frameLength)
	} else {
		writeFragments(term, p.termOffset, &p.hw, p.termID, a, b, p.maxPayload)
	}
	p.termOffset = result
	return p.termBeginPosition + int64(result)
}

// rotate moves to the next term after the current one filled up.
func (p *ExclusivePublication) rotate() int64 {
	log := p.log
	if p.termBeginPosition+int64(log.termLength) >= p.maxPosition {
		return MaxPositionExceeded
	}
	next := (p.activeIndex + 1) % partitionCount
	nextTermID := p.termID + 1
	p.activeIndex = next
	p.termOffset = 0
	p.termID = nextTermID
	p.termBeginPosition += int64(log.termLength)
	// Next partition's tail: single writer, so a release store suffices;
	// then the active term count (release) tells everyone else.
	shm.StoreInt64Release(log.meta, lmTailOffset+8*next, packTail(nextTermID, 0))
	shm.StoreInt32Release(log.meta, lmActiveTermCount, nextTermID-log.initialTermID)
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
	position := p.termBeginPosition + int64(p.termOffset)
	if position >= limit {
		return p.backPressureStatus(position, length)
	}
	log := p.log
	term := log.terms[p.activeIndex]
	frameLength := length + headerLength
	result := p.termOffset + align(frameLength, frameAlignment)
	// Raw tail: single writer, release; see offer2.
	shm.StoreInt64ReleaseOnly(log.meta, lmTailOffset+8*p.activeIndex, packTail(p.termID, int32(result)))
	if result > len(term) {
		handleEndOfTerm(term, p.termOffset, &p.hw, p.termID)
		return p.rotate()
	}
	p.hw.write(term, p.termOffset, frameLength, p.termID)
	claim.term, claim.offset, claim.length = term, p.termOffset, frameLength
	p.termOffset = result
	return p.termBeginPosition + int64(result)
}
