// Package broadcast is the to-clients buffer of an Aeron CnC file: an
// Agrona broadcast buffer that one transmitter (the media driver's
// conductor) writes events into and every client reads, each at its own
// pace. goblin's driver transmits and goblin's client receives through this
// one implementation.
//
// # Layout
//
// Capacity bytes of records (a power of two), then a TrailerLength (128)
// byte trailer holding the tail intent, tail and latest counters. Records
// are laid out as in the to-driver ring buffer: int32 length, int32 type,
// message, aligned to 8; type −1 pads to the end of the buffer.
package broadcast

import (
	"errors"
	"fmt"

	"github.com/goblin-kv/goblin/internal/shm"
)

// Trailer field offsets (relative to the trailer start) and record layout.
const (
	TailIntentCounterOffset = 0  // int64
	TailCounterOffset       = 8  // int64
	LatestCounterOffset     = 16 // int64
	TrailerLength           = 128

	HeaderLength    = 8
	RecordAlignment = 8
	PaddingTypeID   = -1

	lengthOffset = 0
	typeOffset   = 4
)

// ErrLapped reports that the transmitter overwrote events before this
// receiver read them; the receiver resynchronises to the latest event and
// the lost ones cannot be recovered.
var ErrLapped = errors.New("aeron: unable to keep up with the driver's broadcast")

func capacityOf(buf []byte) (int, error) {
	capacity := len(buf) - TrailerLength
	if capacity <= 0 || capacity&(capacity-1) != 0 {
		return 0, fmt.Errorf("aeron: broadcast buffer capacity %d is not a power of two", capacity)
	}
	return capacity, nil
}

// Receiver reads the buffer, copying each record into a scratch buffer and
// re-validating it afterwards (the copy receiver of the real clients). One
// goroutine at a time.
type Receiver struct {
	buf        []byte
	capacity   int
	trailer    int
	cursor     int64
	nextRecord int64
	lapped     int64
	scratch    []byte
}

// NewReceiver starts reading at the latest record, so a new client does
// not replay old events.
func NewReceiver(buf []byte) (*Receiver, error) {
	capacity, err := capacityOf(buf)
	if err != nil {
		return nil, err
	}
	r := &Receiver{buf: buf, capacity: capacity, trailer: capacity, scratch: make([]byte, 4096)}
	r.resync()
	return r, nil
}

// Lapped counts how often the transmitter overtook this receiver.
func (r *Receiver) Lapped() int64 { return r.lapped }

// valid reports whether the record at cursor has not been overwritten:
// tail intent (written by the transmitter with release before it touches a
// record) has not moved a whole capacity past it.
func (r *Receiver) valid(cursor int64) bool {
	return cursor+int64(r.capacity) > shm.LoadInt64Acquire(r.buf, r.trailer+TailIntentCounterOffset)
}

// Receive copies the next record, if any, and calls fn with the copy. It
// returns 1 when a record was delivered, 0 when none was available, and
// ErrLapped (after resynchronising to the latest record) when the
// transmitter overtook this receiver.
func (r *Receiver) Receive(fn func(typeID int32, msg []byte)) (int, error) {
	b := r.buf
	mask := r.capacity - 1
	// tail: transmitter stores it (release) after the record is complete.
	tail := shm.LoadInt64Acquire(b, r.trailer+TailCounterOffset)
	cursor := r.nextRecord
	if tail <= cursor {
		return 0, nil
	}
	if !r.valid(cursor) {
		// Overtaken: skip to the latest record, which the next call
		// delivers; everything in between is lost.
		r.lapped++
		r.resync()
		return 0, ErrLapped
	}
	off := int(cursor) & mask
	r.cursor = cursor
	// Record fields are plain reads; a concurrent overwrite is caught by the
	// re-validation below (seqlock style).
	r.nextRecord = cursor + int64(shm.Align(int(shm.GetInt32(b, off+lengthOffset)), RecordAlignment))
	if shm.GetInt32(b, off+typeOffset) == PaddingTypeID {
		off = 0
		r.cursor = r.nextRecord
		r.nextRecord += int64(shm.Align(int(shm.GetInt32(b, off+lengthOffset)), RecordAlignment))
	}
	length := int(shm.GetInt32(b, off+lengthOffset)) - HeaderLength
	typeID := shm.GetInt32(b, off+typeOffset)
	if length < 0 || length > r.capacity {
		r.resync()
		return 0, ErrLapped
	}
	if cap(r.scratch) < length {
		r.scratch = make([]byte, shm.Align(length, 4096))
	}
	msg := r.scratch[:length]
	copy(msg, b[off+HeaderLength:off+HeaderLength+length])
	if !r.valid(r.cursor) {
		r.lapped++
		r.resync()
		return 0, ErrLapped
	}
	fn(typeID, msg)
	return 1, nil
}

func (r *Receiver) resync() {
	// latest: written by the transmitter (release) after each record.
	r.cursor = shm.LoadInt64Acquire(r.buf, r.trailer+LatestCounterOffset)
	r.nextRecord = r.cursor
}

// Transmitter writes the buffer. There is exactly one (the driver's
// conductor).
type Transmitter struct {
	buf      []byte
	capacity int
	trailer  int
}

// NewTransmitter wraps buf, whose length must be a power of two plus
// TrailerLength.
func NewTransmitter(buf []byte) (*Transmitter, error) {
	capacity, err := capacityOf(buf)
	if err != nil {
		return nil, err
	}
	return &Transmitter{buf: buf, capacity: capacity, trailer: capacity}, nil
}

// MaxMessageLength is the longest message Transmit accepts (capacity / 8).
func (t *Transmitter) MaxMessageLength() int { return t.capacity / 8 }

// Transmit writes one record; msg must not exceed MaxMessageLength.
// Ordering: tail intent is stored (release) before any record byte is
// touched, so a receiver that re-validates against it after copying detects
// an overwrite; latest and then tail are stored (release) after the record
// is complete, so a receiver that acquire-loads tail sees the whole record.
func (t *Transmitter) Transmit(typeID int32, msg []byte) {
	b := t.buf
	tail := shm.GetInt64(b, t.trailer+TailCounterOffset) // single writer
	off := int(tail) & (t.capacity - 1)
	recordLength := len(msg) + HeaderLength
	aligned := shm.Align(recordLength, RecordAlignment)
	toEnd := t.capacity - off
	if toEnd < aligned {
		shm.StoreInt64Release(b, t.trailer+TailIntentCounterOffset, tail+int64(aligned+toEnd))
		shm.PutInt32(b, off+lengthOffset, int32(toEnd))
		shm.PutInt32(b, off+typeOffset, PaddingTypeID)
		tail += int64(toEnd)
		off = 0
	} else {
		shm.StoreInt64Release(b, t.trailer+TailIntentCounterOffset, tail+int64(aligned))
	}
	shm.PutInt32(b, off+lengthOffset, int32(recordLength))
	shm.PutInt32(b, off+typeOffset, typeID)
	copy(b[off+HeaderLength:], msg)
	shm.StoreInt64Release(b, t.trailer+LatestCounterOffset, tail)
	shm.StoreInt64Release(b, t.trailer+TailCounterOffset, tail+int64(aligned))
}
