package aeron

import (
	"fmt"
	"sync/atomic"

	"github.com/goblin-kv/goblin/aeron/internal/command"
	"github.com/goblin-kv/goblin/aeron/internal/counters"
	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

// pubBase is what concurrent and exclusive publications share: the mapped
// log, the position limit counter and identity.
type pubBase struct {
	client         *Client
	log            *logBuffer
	hw             headerWriter
	limitBuf       []byte // counters values buffer
	limitOff       int    // offset of the pub-lmt counter value
	channel        string
	streamID       int32
	sessionID      int32
	registrationID int64
	originalRegID  int64
	statusID       int32
	maxPayload     int
	maxMessage     int
	maxPosition    int64
	closed         atomic.Bool
	exclusive      bool
}

func (p *pubBase) init(c *Client, values []byte, log *logBuffer, limitCounterID int32) {
	p.client = c
	p.log = log
	p.hw = newHeaderWriter(log.meta)
	p.limitBuf = values
	p.limitOff = counters.ValueOffsetOf(limitCounterID)
	p.maxPayload = log.mtu - logbuffer.HeaderLength
	p.maxMessage = logbuffer.ComputeMaxMessageLength(log.termLength)
	p.maxPosition = logbuffer.MaxPossiblePosition(log.termLength)
}

// Channel is the channel URI the publication was added with.
func (p *pubBase) Channel() string { return p.channel }

// StreamID is the publication's stream id.
func (p *pubBase) StreamID() int32 { return p.streamID }

// SessionID is the publication's session id (the image session id
// subscribers see).
func (p *pubBase) SessionID() int32 { return p.sessionID }

// RegistrationID is the correlation id of the add command that created
// this publication object (what REMOVE_PUBLICATION names).
func (p *pubBase) RegistrationID() int64 { return p.registrationID }

// OriginalRegistrationID is the driver's id for the underlying log: for a
// concurrent publication shared by several adds, the first add's id. Over
// IPC it is the correlation id of the image subscribers see, so an IPC
// response publication names it in response-correlation-id.
func (p *pubBase) OriginalRegistrationID() int64 { return p.originalRegID }

// InitialTermID is the stream's initial term id.
func (p *pubBase) InitialTermID() int32 { return p.log.initialTermID }

// TermBufferLength is the length of one term.
func (p *pubBase) TermBufferLength() int { return p.log.termLength }

// MaxPayloadLength is the largest message sent in one frame (MTU − 32), the
// largest TryClaim.
func (p *pubBase) MaxPayloadLength() int { return p.maxPayload }

// MaxMessageLength is the largest message Offer accepts (fragmented above
// MaxPayloadLength): min(term length / 8, 16 MiB).
func (p *pubBase) MaxMessageLength() int { return p.maxMessage }

// ChannelStatusID is the channel status counter id (−1 for IPC).
func (p *pubBase) ChannelStatusID() int32 { return p.statusID }

// IsConnected reports whether a subscriber is connected (the driver's
// is-connected flag in the log metadata).
func (p *pubBase) IsConnected() bool { return !p.closed.Load() && p.log.isConnected() }

// IsClosed reports whether the publication was closed (by Close, or because
// the client closed or lost its driver).
func (p *pubBase) IsClosed() bool { return p.closed.Load() }

// PositionLimit is the position up to which the driver lets the publication
// write (its pub-lmt counter), or Closed.
func (p *pubBase) PositionLimit() int64 {
	if p.closed.Load() {
		return Closed
	}
	// pub-lmt: written by the driver conductor (release); acquire here.
	return shm.LoadInt64Acquire(p.limitBuf, p.limitOff)
}

// Position is the publication's current tail position, or Closed.
func (p *pubBase) Position() int64 {
	if p.closed.Load() {
		return Closed
	}
	termCount := p.log.activeTermCount()
	raw := p.log.rawTail(int(termCount) % logbuffer.PartitionCount)
	return logbuffer.ComputePosition(logbuffer.TermID(raw), logbuffer.TermOffset(raw, p.log.termLength), p.log.bitsToShift, p.log.initialTermID)
}

func (p *pubBase) backPressureStatus(position int64, length int) int64 {
	if position+int64(shm.Align(length+logbuffer.HeaderLength, logbuffer.FrameAlignment)) >= p.maxPosition {
		return MaxPositionExceeded
	}
	if p.log.isConnected() {
		return BackPressured
	}
	return NotConnected
}

// AddDestination adds a destination (e.g. "aeron:udp?endpoint=host:port")
// to a multi-destination-cast publication, one whose channel has
// control-mode=manual. It waits for the driver's reply.
func (p *pubBase) AddDestination(channel string) error {
	return p.client.destination(command.AddDestination, p.registrationID, channel)
}

// RemoveDestination removes a destination added with AddDestination.
func (p *pubBase) RemoveDestination(channel string) error {
	return p.client.destination(command.RemoveDestination, p.registrationID, channel)
}

// Close removes the publication from the driver (REMOVE_PUBLICATION) and
// marks it closed; later offers return Closed. The log stays mapped for the
// client's resource linger so a concurrent offer in flight stays safe.
func (p *pubBase) Close() error {
	if p.closed.Load() {
		return nil
	}
	return p.client.releasePublication(p)
}

// Publication is a concurrent publication: any number of goroutines may
// offer to it at once (space is reserved with an atomic get-and-add on the
// term tail). Add one with Client.AddPublication.
type Publication struct {
	pubBase
}

// Offer appends msg to the stream and returns the new stream position, or
// a negative status (NotConnected, BackPressured, AdminAction, Closed,
// MaxPositionExceeded). Messages above MaxPayloadLength are fragmented;
// messages above MaxMessageLength panic with ErrMessageTooLong (programmer
// error, as in the real clients). Offer does not allocate.
func (p *Publication) Offer(msg []byte) int64 { return p.offer2(msg, nil) }

// Offer2 offers the concatenation of a and b as one message (a vectored
// offer without a slice of slices), e.g. a header and a body.
func (p *Publication) Offer2(a, b []byte) int64 { return p.offer2(a, b) }

// OfferVectored offers the concatenation of parts as one message. Up to two
// parts, or any number totalling at most MaxPayloadLength, are written
// straight into the term without allocating; three or more parts that need
// fragmenting are first gathered into a new buffer.
func (p *Publication) OfferVectored(parts [][]byte) int64 {
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

// offerIntoClaim is offerGathered's claim path; see
// ExclusivePublication.offerIntoClaim.
func (p *Publication) offerIntoClaim(length int, parts [][]byte) int64 {
	var c BufferClaim
	r := p.TryClaim(length, &c)
	if r > 0 {
		c.fill(parts)
	}
	return r
}

func (p *Publication) offer2(a, b []byte) int64 {
	length := len(a) + len(b)
	index, status := p.activePartition(length)
	if status < 0 {
		return status
	}
	if length <= p.maxPayload {
		return p.appendUnfragmented(index, a, b)
	}
	if length > p.maxMessage {
		panic(fmt.Errorf("%w: %d bytes > max message length %d", ErrMessageTooLong, length, p.maxMessage))
	}
	return p.appendFragmented(index, a, b)
}

// activePartition returns the partition to append to, or a status (< 0)
// when the append must not go ahead: closed, a rotation in progress
// (ADMIN_ACTION), or the position limit reached.
func (p *Publication) activePartition(length int) (int, int64) {
	if p.closed.Load() {
		return 0, Closed
	}
	log := p.log
	limit := shm.LoadInt64Acquire(p.limitBuf, p.limitOff) // pub-lmt (driver, release)
	termCount := log.activeTermCount()
	index := int(termCount) % logbuffer.PartitionCount
	raw := log.rawTail(index)
	termID := logbuffer.TermID(raw)
	if termCount != termID-log.initialTermID {
		return 0, AdminAction // another publisher is rotating
	}
	position := logbuffer.ComputePosition(termID, logbuffer.TermOffset(raw, log.termLength), log.bitsToShift, log.initialTermID)
	if position >= limit {
		return 0, p.backPressureStatus(position, length)
	}
	return index, 0
}

// reserve claims required bytes of the partition with get-and-add on its
// raw tail (a full fence; concurrent publishers each get a disjoint range)
// and returns the term id and offset the range starts at, and the stream
// position after it. The term id comes from the get-and-add, not from the
// earlier read, so a publisher delayed across rotations still writes the
// right header.
func (p *Publication) reserve(index, required int) (termID int32, termOffset int, position int64) {
	log := p.log
	raw := shm.GetAndAddInt64(log.meta, logbuffer.TermTailCountersOffset+8*index, int64(required))
	termID = logbuffer.TermID(raw)
	termOffset = logbuffer.TermOffset(raw, log.termLength)
	position = logbuffer.ComputePosition(termID, termOffset+required, log.bitsToShift, log.initialTermID)
	return termID, termOffset, position
}

// endOfLog pads the rest of the term when this reservation crossed its
// end, then rotates to the next term (or reports the end of the stream).
func (p *Publication) endOfLog(term []byte, termID int32, termOffset int, position int64) int64 {
	handleEndOfTerm(term, termOffset, &p.hw, termID)
	if position >= p.maxPosition {
		return MaxPositionExceeded
	}
	logbuffer.RotateLog(p.log.meta, termID-p.log.initialTermID, termID)
	return AdminAction
}

func (p *Publication) appendUnfragmented(index int, a, b []byte) int64 {
	term := p.log.terms[index]
	frameLength := len(a) + len(b) + logbuffer.HeaderLength
	termID, off, position := p.reserve(index, shm.Align(frameLength, logbuffer.FrameAlignment))
	if off+shm.Align(frameLength, logbuffer.FrameAlignment) > len(term) {
		return p.endOfLog(term, termID, off, position)
	}
	p.hw.appendUnfragmented(nil, 0, 0, term, off, termID, a, b)
	return position
}

func (p *Publication) appendFragmented(index int, a, b []byte) int64 {
	term := p.log.terms[index]
	required := fragmentedLength(len(a)+len(b), p.maxPayload)
	termID, off, position := p.reserve(index, required)
	if off+required > len(term) {
		return p.endOfLog(term, termID, off, position)
	}
	writeFragments(term, off, &p.hw, termID, a, b, p.maxPayload)
	return position
}

// TryClaim reserves length bytes (at most MaxPayloadLength) in the term for
// the caller to fill in place, avoiding a copy. On success (a positive
// position) write the payload into claim.Buffer() and call Commit or Abort
// promptly: subscribers stall behind an open claim. It does not allocate.
func (p *Publication) TryClaim(length int, claim *BufferClaim) int64 {
	if length > p.maxPayload {
		panic(fmt.Errorf("%w: claim of %d bytes > max payload %d", ErrMessageTooLong, length, p.maxPayload))
	}
	index, status := p.activePartition(length)
	if status < 0 {
		return status
	}
	term := p.log.terms[index]
	frameLength := length + logbuffer.HeaderLength
	aligned := shm.Align(frameLength, logbuffer.FrameAlignment)
	termID, off, position := p.reserve(index, aligned)
	if off+aligned > len(term) {
		return p.endOfLog(term, termID, off, position)
	}
	p.hw.write(term, off, frameLength, termID)
	claim.term, claim.offset, claim.length = term, off, frameLength
	return position
}

// BufferClaim is a frame reserved by TryClaim. Reuse one value per
// goroutine; it holds no allocation.
type BufferClaim struct {
	term   []byte
	offset int
	length int
}

// Buffer is the claimed payload space.
func (c *BufferClaim) Buffer() []byte {
	return c.term[c.offset+logbuffer.HeaderLength : c.offset+c.length : c.offset+c.length]
}

// SetReservedValue sets the frame's 64-bit reserved value.
func (c *BufferClaim) SetReservedValue(v int64) {
	shm.PutInt64(c.term, c.offset+logbuffer.FrameReservedValueOffset, v)
}

// SetFlags overrides the frame flags (default 0xC0, a whole message).
func (c *BufferClaim) SetFlags(f uint8) { c.term[c.offset+logbuffer.FrameFlagsOffset] = f }

// Commit publishes the claimed frame: its length is stored with release,
// so a subscriber that sees it sees the payload.
func (c *BufferClaim) Commit() {
	if c.term == nil {
		return
	}
	frameLengthRelease(c.term, c.offset, c.length)
	c.term = nil
}

// fill copies parts, one after another, into the claimed frame and
// commits it. They total exactly the claimed length.
func (c *BufferClaim) fill(parts [][]byte) {
	b := c.Buffer()
	n := 0
	for _, part := range parts {
		n += copy(b[n:], part)
	}
	c.Commit()
}

// Abort turns the claimed frame into padding that subscribers skip.
func (c *BufferClaim) Abort() {
	if c.term == nil {
		return
	}
	shm.PutUint16(c.term, c.offset+logbuffer.FrameTypeOffset, logbuffer.FrameTypePad)
	frameLengthRelease(c.term, c.offset, c.length)
	c.term = nil
}

// offerGathered handles vectors of three or more parts.
func offerGathered(parts [][]byte, maxPayload, maxMessage int, offer func(a, b []byte) int64, claim func(int, [][]byte) int64) int64 {
	total := 0
	for _, p := range parts {
		total += len(p)
	}
	if total <= maxPayload {
		return claim(total, parts)
	}
	if total > maxMessage {
		panic(fmt.Errorf("%w: %d bytes > max message length %d", ErrMessageTooLong, total, maxMessage))
	}
	buf := make([]byte, 0, total)
	for _, p := range parts {
		buf = append(buf, p...)
	}
	return offer(buf, nil)
}
