package aeron

import (
	"sync/atomic"

	"github.com/goblin-kv/goblin/aeron/internal/counters"
	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

// FragmentHandler receives one fragment (a whole message when it is not
// fragmented; wrap it in a FragmentAssembler to get whole messages always).
// buffer points into the mapped log and is valid only during the call.
type FragmentHandler func(buffer []byte, header *Header)

// ControlledAction tells ControlledPoll what to do after a fragment.
type ControlledAction int

// The actions of a ControlledFragmentHandler (io.aeron.logbuffer.ControlledFragmentHandler.Action).
const (
	// ActionAbort: do not consume this fragment; it is delivered again by the
	// next poll.
	ActionAbort ControlledAction = iota + 1
	// ActionBreak: consume this fragment and stop polling.
	ActionBreak
	// ActionCommit: consume this fragment and store the position now.
	ActionCommit
	// ActionContinue: consume this fragment and go on.
	ActionContinue
)

// ControlledFragmentHandler is a FragmentHandler that steers the poll.
type ControlledFragmentHandler func(buffer []byte, header *Header) ControlledAction

// Image is one publisher's stream as seen by one subscription: the replicated
// log and this subscriber's position in it. An image is polled by one
// goroutine at a time (the one polling its Subscription).
type Image struct {
	sub            *Subscription
	log            *logBuffer
	posBuf         []byte // counters values
	posOff         int    // this image's sub-pos counter value
	termMask       int
	header         Header
	correlationID  int64
	sessionID      int32
	joinPosition   int64
	sourceIdentity string
	closed         atomic.Bool
	eosPosition    atomic.Int64 // final position, set when closed
	peekEnd        int64        // position after the peeked message, or 0
	// The term the last read was in, for the poller only: looking the term
	// up from a position (a shift, a modulo and three loads) cost every
	// Poll and ReadMessage some 30 instructions; it changes once a term.
	termCount int64 // position >> bitsToShift of term; -1: none yet
	term      []byte
	shift     int // the log's bitsToShift
}

func newImage(s *Subscription, log *logBuffer, values []byte, posID int32, corr int64, sessionID int32, source string) *Image {
	img := &Image{
		sub:            s,
		log:            log,
		posBuf:         values,
		posOff:         counters.ValueOffsetOf(posID),
		termMask:       log.termLength - 1,
		correlationID:  corr,
		sessionID:      sessionID,
		sourceIdentity: source,
	}
	img.header = Header{initialTermID: log.initialTermID, bitsToShift: log.bitsToShift}
	img.termCount, img.shift = -1, log.bitsToShift
	// sub-pos: the driver stored the join position (release) before it
	// announced the image; acquire here.
	img.joinPosition = shm.LoadInt64Acquire(values, img.posOff)
	return img
}

// CorrelationID identifies the image. For UDP it is allocated by the
// receiving driver; for IPC it is the publication's registration id. A
// response publication names it in response-correlation-id.
func (i *Image) CorrelationID() int64 { return i.correlationID }

// SessionID is the publisher's session id.
func (i *Image) SessionID() int32 { return i.sessionID }

// SourceIdentity is "aeron:ipc" or the sender's host:port.
func (i *Image) SourceIdentity() string { return i.sourceIdentity }

// Subscription is the subscription the image belongs to.
func (i *Image) Subscription() *Subscription { return i.sub }

// JoinPosition is the position the image started at for this subscriber.
func (i *Image) JoinPosition() int64 { return i.joinPosition }

// InitialTermID is the stream's initial term id.
func (i *Image) InitialTermID() int32 { return i.log.initialTermID }

// TermBufferLength is the length of one term.
func (i *Image) TermBufferLength() int { return i.log.termLength }

// IsClosed reports whether the image went away (unavailable, subscription
// or client closed, driver lost).
func (i *Image) IsClosed() bool { return i.closed.Load() }

// Position is this subscriber's position in the stream.
func (i *Image) Position() int64 {
	if i.closed.Load() {
		return i.eosPosition.Load()
	}
	// sub-pos: this goroutine is its only writer; the driver reads it.
	return shm.LoadInt64Acquire(i.posBuf, i.posOff)
}

// IsEndOfStream reports whether the publisher closed the stream and this
// subscriber has consumed all of it.
func (i *Image) IsEndOfStream() bool {
	if i.closed.Load() {
		return true
	}
	return shm.LoadInt64Acquire(i.posBuf, i.posOff) >= i.log.endOfStreamPosition()
}

// setPosition stores the subscriber position with release (this poller is
// its only writer): the driver reads it (acquire) to compute the publisher
// limit and to clean the log, and must not see it before this goroutine's
// reads of the frames it covers are done.
func (i *Image) setPosition(p int64) { shm.StoreInt64ReleaseOnly(i.posBuf, i.posOff, p) }

// termAt is the term buffer that holds position.
func (i *Image) termAt(position int64) []byte {
	if c := position >> i.shift; c != i.termCount {
		i.termCount, i.term = c, i.log.terms[int(c)%logbuffer.PartitionCount]
	}
	return i.term
}

// Poll delivers up to limit fragments from the image's current term to fn
// and returns how many it delivered. It does not allocate.
func (i *Image) Poll(fn FragmentHandler, limit int) int {
	if i.closed.Load() {
		return 0
	}
	// sub-pos: this poller is its only writer, so any load would do; the
	// acquire costs nothing extra on amd64 (a plain MOV).
	position := shm.LoadInt64Acquire(i.posBuf, i.posOff)
	offset := int(position) & i.termMask
	start := offset
	term := i.termAt(position)
	h := &i.header
	h.term = term
	n := 0
	for n < limit && offset < len(term) {
		// Frame length: the publisher (or receiver) stores it with release
		// after the frame is complete; acquire here.
		length := int(shm.LoadInt32Acquire(term, offset))
		if !committed(length, offset, term) {
			break
		}
		frameOffset := offset
		offset += shm.Align(length, logbuffer.FrameAlignment)
		if shm.GetUint16(term, frameOffset+logbuffer.FrameTypeOffset) == logbuffer.FrameTypePad {
			continue
		}
		n++
		h.offset = frameOffset
		fn(term[frameOffset+logbuffer.HeaderLength:frameOffset+length:frameOffset+length], h)
	}
	if offset > start {
		i.setPosition(position + int64(offset-start))
	}
	return n
}

// ControlledPoll is Poll where the handler decides, per fragment, whether to
// continue, commit the position, stop, or leave the fragment for later.
func (i *Image) ControlledPoll(fn ControlledFragmentHandler, limit int) int {
	if i.closed.Load() {
		return 0
	}
	initialPosition := shm.LoadInt64Acquire(i.posBuf, i.posOff) // sub-pos: see Poll
	initialOffset := int(initialPosition) & i.termMask
	offset := initialOffset
	term := i.termAt(initialPosition)
	h := &i.header
	h.term = term
	n := 0
	for n < limit && offset < len(term) {
		length := int(shm.LoadInt32Acquire(term, offset)) // see Poll
		if !committed(length, offset, term) {
			break
		}
		frameOffset := offset
		aligned := shm.Align(length, logbuffer.FrameAlignment)
		offset += aligned
		if shm.GetUint16(term, frameOffset+logbuffer.FrameTypeOffset) == logbuffer.FrameTypePad {
			continue
		}
		n++
		h.offset = frameOffset
		action := fn(term[frameOffset+logbuffer.HeaderLength:frameOffset+length:frameOffset+length], h)
		if action == ActionAbort {
			n--
			offset -= aligned
			break
		}
		if action == ActionBreak {
			break
		}
		if action == ActionCommit {
			initialPosition += int64(offset - initialOffset)
			initialOffset = offset
			i.setPosition(initialPosition)
		}
	}
	if offset > initialOffset {
		i.setPosition(initialPosition + int64(offset-initialOffset))
	}
	return n
}

// NextMessage is the message-at-a-time fast path for request/response: it
// appends the next complete message (reassembling fragments) to dst and
// consumes it. ok is false when no complete message is available yet; then
// nothing is consumed. Padding is skipped. It does not allocate when dst has
// room.
func (i *Image) NextMessage(dst []byte) (msg []byte, ok bool) {
	msg, end, ok := i.next(dst, false)
	if ok {
		i.setPosition(end)
	}
	return msg, ok
}

// Reassembly is ReadMessage's state between calls: whether a message has
// begun, and where it starts in the caller's buffer. The zero value is
// ready; use one per image.
type Reassembly struct {
	start int
	in    bool
}

// InMessage reports whether a message has begun and not ended: its
// fragments so far are in the caller's buffer from the start it had then.
func (r *Reassembly) InMessage() bool { return r.in }

// ReadMessage appends the next message to dst, consuming its fragments as
// they become available: done is true once its last fragment is appended.
// Until then the fragments read so far stay appended to dst, and the
// caller calls again with the same dst (grown, not truncated) and r. An
// unfragmented message is read whole in one call, as by NextMessage.
//
// Unlike NextMessage it does not wait for the whole message before
// consuming any of it. That matters over UDP: the receiving driver accepts
// data only up to the subscriber's position plus its receiver window (128
// KiB by default), so a message longer than the window arrives only if the
// subscriber consumes its first fragments, and NextMessage would wait for
// it forever. Padding and a continuation without its beginning (an image
// joined mid-message) are skipped; a beginning while a message is open
// drops the open one's fragments. It does not allocate when dst has room.
func (i *Image) ReadMessage(dst []byte, r *Reassembly) (out []byte, done bool) {
	if i.closed.Load() {
		return dst, false
	}
	for {
		position := shm.LoadInt64Acquire(i.posBuf, i.posOff) // sub-pos: see Poll
		offset := int(position) & i.termMask
		term := i.termAt(position)
		length := int(shm.LoadInt32Acquire(term, offset)) // stored last by the publisher (release)
		if !committed(length, offset, term) {
			return dst, false
		}
		next := position + int64(shm.Align(length, logbuffer.FrameAlignment))
		if shm.GetUint16(term, offset+logbuffer.FrameTypeOffset) == logbuffer.FrameTypePad {
			i.setPosition(next)
			continue
		}
		flags := term[offset+logbuffer.FrameFlagsOffset]
		if flags&logbuffer.FlagBegin != 0 {
			if r.in {
				dst = dst[:r.start] // the open message never ended
			}
			r.start, r.in = len(dst), true
		} else if !r.in {
			i.setPosition(next) // a continuation without its beginning
			continue
		}
		dst = append(dst, term[offset+logbuffer.HeaderLength:offset+length]...)
		i.setPosition(next)
		if flags&logbuffer.FlagEnd != 0 {
			r.in = false
			return dst, true
		}
	}
}

// PeekMessage is NextMessage without the copy and without consuming: an
// unfragmented message comes back as a view into the log, a fragmented one
// reassembled into scratch (appended to scratch[:0]). The view stays valid
// until Consume, which moves past the message; peeking again without
// Consume returns the same message. It does not allocate.
func (i *Image) PeekMessage(scratch []byte) (msg []byte, ok bool) {
	msg, end, ok := i.next(scratch[:0], true)
	if ok {
		i.peekEnd = end
	}
	return msg, ok
}

// Consume moves past the message the last successful PeekMessage returned.
func (i *Image) Consume() {
	if i.peekEnd != 0 && !i.closed.Load() {
		i.setPosition(i.peekEnd)
	}
	i.peekEnd = 0
}

// next finds the next complete message at the subscriber position and
// returns it (a view when view is set and it is one frame, else appended to
// dst) with the position after it. Padding and stray continuation frames
// are consumed on the way.
func (i *Image) next(dst []byte, view bool) ([]byte, int64, bool) {
	if i.closed.Load() {
		return dst, 0, false
	}
	for {
		position := shm.LoadInt64Acquire(i.posBuf, i.posOff) // sub-pos: see Poll
		offset := int(position) & i.termMask
		term := i.termAt(position)
		// Frame length: stored last by the publisher (release); acquire.
		length := int(shm.LoadInt32Acquire(term, offset))
		if !committed(length, offset, term) {
			return dst, 0, false
		}
		aligned := shm.Align(length, logbuffer.FrameAlignment)
		if shm.GetUint16(term, offset+logbuffer.FrameTypeOffset) == logbuffer.FrameTypePad {
			i.setPosition(position + int64(aligned))
			continue
		}
		flags := term[offset+logbuffer.FrameFlagsOffset]
		if flags&logbuffer.FlagsUnfragmented == logbuffer.FlagsUnfragmented {
			payload := term[offset+logbuffer.HeaderLength : offset+length : offset+length]
			if view {
				return payload, position + int64(aligned), true
			}
			return append(dst, payload...), position + int64(aligned), true
		}
		if flags&logbuffer.FlagBegin == 0 {
			// A stray continuation (joined mid-message): skip it.
			i.setPosition(position + int64(aligned))
			continue
		}
		// Fragments of one message are contiguous in one term: check they
		// are all committed before taking any.
		end := offset + aligned
		for {
			if end >= len(term) {
				return dst, 0, false
			}
			l := int(shm.LoadInt32Acquire(term, end))
			if !committed(l, end, term) {
				return dst, 0, false
			}
			f := term[end+logbuffer.FrameFlagsOffset]
			end += shm.Align(l, logbuffer.FrameAlignment)
			if f&logbuffer.FlagEnd != 0 {
				break
			}
		}
		// The lengths are read again: checked again, since a writer that
		// breaks the protocol may have changed them since the scan.
		start := len(dst)
		for off := offset; off < end; {
			l := int(shm.GetInt32(term, off))
			if !committed(l, off, term) {
				return dst[:start], 0, false
			}
			dst = append(dst, term[off+logbuffer.HeaderLength:off+l]...)
			off += shm.Align(l, logbuffer.FrameAlignment)
		}
		return dst, position + int64(end-offset), true
	}
}

// committed reports whether a frame length read at offset in term is that
// of a whole frame: a header and a payload inside the term. A zero (or,
// while a publisher writes it, negative) length is a frame not committed
// yet. So is a length no publisher following the protocol writes — shorter
// than a header, or running past the term — which an IPC subscriber can
// meet, since every client that may publish on the stream maps the log
// writable: the image then stalls there, as on an uncommitted frame,
// rather than reading outside the frame.
func committed(length, offset int, term []byte) bool {
	return length >= logbuffer.HeaderLength && length <= len(term)-offset
}

func (i *Image) close() {
	if i.closed.Load() {
		return
	}
	// sub-pos as the poller last stored it (the conductor closes the image
	// under the client lock; the value only needs to be a recent one).
	i.eosPosition.Store(shm.LoadInt64Acquire(i.posBuf, i.posOff))
	i.closed.Store(true)
}
