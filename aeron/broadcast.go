package aeron

import (
	"errors"
	"fmt"

	"github.com/goblin-kv/goblin/internal/shm"
)

// The to-clients buffer is an Agrona broadcast buffer: one transmitter (the
// driver), any number of receivers, records followed by a 128-byte trailer.
const (
	bcTailIntentOffset = 0
	bcTailOffset       = 8
	bcLatestOffset     = 16
	bcTrailerLength    = 128
)

// ErrBroadcastLapped reports that the driver overwrote driver events before
// this client read them; the client resynchronises and the lost events (for
// example an image becoming available) cannot be recovered.
var ErrBroadcastLapped = errors.New("aeron: unable to keep up with the driver's broadcast")

// broadcastReceiver reads the to-clients buffer, copying each record into a
// scratch buffer and re-validating it afterwards (the copy receiver of the
// real clients). Used only by the conductor.
type broadcastReceiver struct {
	buf        []byte
	capacity   int
	trailer    int
	cursor     int64
	nextRecord int64
	lapped     int64
	scratch    []byte
}

func newBroadcastReceiver(buf []byte) (*broadcastReceiver, error) {
	capacity := len(buf) - bcTrailerLength
	if capacity <= 0 || capacity&(capacity-1) != 0 {
		return nil, fmt.Errorf("aeron: broadcast buffer capacity %d is not a power of two", capacity)
	}
	r := &broadcastReceiver{buf: buf, capacity: capacity, trailer: capacity, scratch: make([]byte, 4096)}
	// latest: written by the transmitter (release). Start at the latest
	// record so old events are not replayed.
	r.cursor = shm.LoadInt64Acquire(buf, capacity+bcLatestOffset)
	r.nextRecord = r.cursor
	return r, nil
}

// valid reports whether the record at cursor has not been overwritten:
// tail intent (written by the transmitter with release before it touches a
// record) has not moved a whole capacity past it.
func (r *broadcastReceiver) valid(cursor int64) bool {
	return cursor+int64(r.capacity) > shm.LoadInt64Acquire(r.buf, r.trailer+bcTailIntentOffset)
}

// receive copies the next record, if any, and calls fn with it. It returns
// 1 when a record was delivered, 0 when none was available, and
// ErrBroadcastLapped (after resynchronising to the latest record) when the
// transmitter overtook this receiver.
func (r *broadcastReceiver) receive(fn func(typeID int32, msg []byte)) (int, error) {
	b := r.buf
	mask := r.capacity - 1
	// tail: transmitter stores it (release) after the record is complete.
	tail := shm.LoadInt64Acquire(b, r.trailer+bcTailOffset)
	cursor := r.nextRecord
	if tail <= cursor {
		return 0, nil
	}
	if !r.valid(cursor) {
		// Overtaken: skip to the latest record, which the next call
		// delivers; everything in between is lost.
		r.lapped++
		r.resync()
		return 0, ErrBroadcastLapped
	}
	off := int(cursor) & mask
	r.cursor = cursor
	// Record fields are plain reads; a concurrent overwrite is caught by the
	// re-validation below (seqlock style).
	r.nextRecord = cursor + int64(align(int(shm.GetInt32(b, off)), rbAlignment))
	if shm.GetInt32(b, off+4) == rbPaddingTypeID {
		off = 0
		r.cursor = r.nextRecord
		r.nextRecord += int64(align(int(shm.GetInt32(b, off)), rbAlignment))
	}
	length := int(shm.GetInt32(b, off)) - rbHeaderLength
	typeID := shm.GetInt32(b, off+4)
	if length < 0 || length > r.capacity {
		r.resync()
		return 0, ErrBroadcastLapped
	}
	if cap(r.scratch) < length {
		r.scratch = make([]byte, align(length, 4096))
	}
	msg := r.scratch[:length]
	copy(msg, b[off+rbHeaderLength:off+rbHeaderLength+length])
	if !r.valid(r.cursor) {
		r.lapped++
		r.resync()
		return 0, ErrBroadcastLapped
	}
	fn(typeID, msg)
	return 1, nil
}

func (r *broadcastReceiver) resync() {
	r.cursor = shm.LoadInt64Acquire(r.buf, r.trailer+bcLatestOffset)
	r.nextRecord = r.cursor
}

// broadcastTransmitter writes the to-clients buffer. The driver owns it; this
// implementation exists for unit tests and a future Go driver.
type broadcastTransmitter struct {
	buf      []byte
	capacity int
	trailer  int
}

func newBroadcastTransmitter(buf []byte) (*broadcastTransmitter, error) {
	capacity := len(buf) - bcTrailerLength
	if capacity <= 0 || capacity&(capacity-1) != 0 {
		return nil, fmt.Errorf("aeron: broadcast buffer capacity %d is not a power of two", capacity)
	}
	return &broadcastTransmitter{buf: buf, capacity: capacity, trailer: capacity}, nil
}

// transmit writes one record. Single writer. Ordering: tail intent is
// stored (release) before any record byte is touched, so a receiver that
// re-validates against it after copying detects an overwrite; latest and
// then tail are stored (release) after the record is complete, so a
// receiver that acquire-loads tail sees the whole record.
func (t *broadcastTransmitter) transmit(typeID int32, msg []byte) {
	b := t.buf
	tail := shm.GetInt64(b, t.trailer+bcTailOffset) // single writer
	off := int(tail) & (t.capacity - 1)
	recordLength := len(msg) + rbHeaderLength
	aligned := align(recordLength, rbAlignment)
	toEnd := t.capacity - off
	if toEnd < aligned {
		shm.StoreInt64Release(b, t.trailer+bcTailIntentOffset, tail+int64(aligned+toEnd))
		shm.PutInt32(b, off, int32(toEnd))
		shm.PutInt32(b, off+4, rbPaddingTypeID)
		tail += int64(toEnd)
		off = 0
	} else {
		shm.StoreInt64Release(b, t.trailer+bcTailIntentOffset, tail+int64(aligned))
	}
	shm.PutInt32(b, off, int32(recordLength))
	shm.PutInt32(b, off+4, typeID)
	copy(b[off+rbHeaderLength:], msg)
	shm.StoreInt64Release(b, t.trailer+bcLatestOffset, tail)
	shm.StoreInt64Release(b, t.trailer+bcTailOffset, tail+int64(aligned))
}
