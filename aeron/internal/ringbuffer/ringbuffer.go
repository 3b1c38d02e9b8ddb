// Package ringbuffer is the to-driver buffer of an Aeron CnC file: an
// Agrona ManyToOneRingBuffer that any number of clients write commands into
// and the media driver's conductor alone reads. Both goblin's client
// (producer) and its driver (consumer) use this one implementation.
//
// # Layout
//
// Capacity bytes of records (a power of two), then a TrailerLength (768)
// byte trailer whose int64 fields sit 128 bytes apart so producers and the
// consumer never share a cache line. A record is an int32 length (header
// included, unaligned), an int32 type id and the message, aligned to 8.
package ringbuffer

import (
	"errors"
	"fmt"

	"github.com/goblin-kv/goblin/internal/shm"
)

// Trailer field offsets, relative to the end of the records (the trailer
// start), and record layout.
const (
	TailPositionOffset       = 128 // int64: producers CAS it
	HeadCachePositionOffset  = 256 // int64: producers' cached copy of head
	HeadPositionOffset       = 384 // int64: the consumer (driver) stores it
	CorrelationCounterOffset = 512 // int64: shared id source, get-and-add 1
	ConsumerHeartbeatOffset  = 640 // int64: the driver's epoch-ms liveness stamp
	TrailerLength            = 768

	HeaderLength    = 8 // int32 length, int32 type
	RecordAlignment = 8
	PaddingTypeID   = -1

	lengthOffset = 0
	typeOffset   = 4
)

// ErrFull reports that the ring buffer had no room for a record: its
// consumer is not keeping up or has stopped.
var ErrFull = errors.New("aeron: to-driver ring buffer full")

// RingBuffer is a view of a many-to-one ring buffer in shared memory.
// Write and NextCorrelationID are safe for any number of goroutines and
// processes; Read and Unblock belong to the single consumer.
type RingBuffer struct {
	buf      []byte // capacity bytes of records plus the trailer
	capacity int
	trailer  int
	maxMsg   int
	corrupt  uint64 // records Read found malformed (consumer only)
}

// Corrupt returns how many malformed records Read has skipped: records
// whose length no producer writes, which only a client that scribbles on
// the ring makes. Consumer only.
func (r *RingBuffer) Corrupt() uint64 { return r.corrupt }

// New wraps buf, whose length must be a power of two plus TrailerLength.
func New(buf []byte) (*RingBuffer, error) {
	capacity := len(buf) - TrailerLength
	if capacity <= 0 || capacity&(capacity-1) != 0 {
		return nil, fmt.Errorf("aeron: ring buffer capacity %d is not a power of two", capacity)
	}
	return &RingBuffer{buf: buf, capacity: capacity, trailer: capacity, maxMsg: capacity / 8}, nil
}

// Capacity is the bytes available for records.
func (r *RingBuffer) Capacity() int { return r.capacity }

// MaxMessageLength is the longest message Write accepts (capacity / 8).
func (r *RingBuffer) MaxMessageLength() int { return r.maxMsg }

// NextCorrelationID allocates an id from the counter every client and the
// driver share. Get-and-add is a full fence; the value only needs atomicity.
func (r *RingBuffer) NextCorrelationID() int64 {
	return shm.GetAndAddInt64(r.buf, r.trailer+CorrelationCounterOffset, 1)
}

// ConsumerHeartbeat is the driver's epoch-ms stamp (−1 once it shut
// down). Writer: the driver conductor (release). Readers: clients and
// drivers checking for a live one (acquire).
func (r *RingBuffer) ConsumerHeartbeat() int64 {
	return shm.LoadInt64Acquire(r.buf, r.trailer+ConsumerHeartbeatOffset)
}

// SetConsumerHeartbeat stores the driver's stamp (release); the consumer
// only.
func (r *RingBuffer) SetConsumerHeartbeat(v int64) {
	shm.StoreInt64Release(r.buf, r.trailer+ConsumerHeartbeatOffset, v)
}

// ProducerPosition is the tail: how far producers have claimed (acquire;
// producers CAS it).
func (r *RingBuffer) ProducerPosition() int64 {
	return shm.LoadInt64Acquire(r.buf, r.trailer+TailPositionOffset)
}

// ConsumerPosition is the head: how far the consumer has read (acquire;
// the consumer stores it with release).
func (r *RingBuffer) ConsumerPosition() int64 {
	return shm.LoadInt64Acquire(r.buf, r.trailer+HeadPositionOffset)
}

// claim reserves room for a record of recordLength bytes (header included)
// and returns its index, or −1. It writes any padding record needed to wrap.
func (r *RingBuffer) claim(recordLength int) int {
	required := shm.Align(recordLength, RecordAlignment)
	capacity := r.capacity
	mask := capacity - 1
	b := r.buf
	// headCache: written by producers (release), read by producers (acquire).
	head := shm.LoadInt64Acquire(b, r.trailer+HeadCachePositionOffset)
	var tail int64
	var tailIndex, padding, writeIndex int
	for {
		// tail: CAS by producers; the acquire load pairs with the winning CAS.
		tail = shm.LoadInt64Acquire(b, r.trailer+TailPositionOffset)
		if required > capacity-int(tail-head) {
			// head: written by the consumer with release after zeroing the
			// bytes it consumed; this acquire makes that zeroing visible.
			head = shm.LoadInt64Acquire(b, r.trailer+HeadPositionOffset)
			if required > capacity-int(tail-head) {
				return -1
			}
			shm.StoreInt64Release(b, r.trailer+HeadCachePositionOffset, head)
		}
		padding = 0
		tailIndex = int(tail) & mask
		toEnd := capacity - tailIndex
		writeIndex = tailIndex
		if required > toEnd {
			writeIndex = 0
			headIndex := int(head) & mask
			if required > headIndex {
				head = shm.LoadInt64Acquire(b, r.trailer+HeadPositionOffset)
				headIndex = int(head) & mask
				if required > headIndex {
					return -1
				}
				shm.StoreInt64Release(b, r.trailer+HeadCachePositionOffset, head)
			}
			padding = toEnd
		}
		if shm.CompareAndSwapInt64(b, r.trailer+TailPositionOffset, tail, tail+int64(required+padding)) {
			break
		}
	}
	if padding != 0 {
		// Padding record: negative length first (release) so the consumer
		// stops, then the type, then the positive length (release) publishes it.
		shm.StoreInt32Release(b, tailIndex+lengthOffset, int32(-padding))
		shm.PutInt32(b, tailIndex+typeOffset, PaddingTypeID)
		shm.StoreInt32Release(b, tailIndex+lengthOffset, int32(padding))
	}
	return writeIndex
}

// Write appends one record. It returns ErrFull when there is no room.
func (r *RingBuffer) Write(typeID int32, msg []byte) error {
	if typeID < 1 {
		return fmt.Errorf("aeron: ring buffer message type %d must be ≥ 1", typeID)
	}
	if len(msg) > r.maxMsg {
		return fmt.Errorf("aeron: command of %d bytes exceeds the ring buffer's %d-byte limit", len(msg), r.maxMsg)
	}
	recordLength := len(msg) + HeaderLength
	i := r.claim(recordLength)
	if i < 0 {
		return ErrFull
	}
	// Length field: the producer stores -length (release) to mark the slot
	// in progress, fills it, then stores +length (release); the consumer's
	// acquire load of a positive length sees the whole record.
	shm.StoreInt32Release(r.buf, i+lengthOffset, int32(-recordLength))
	copy(r.buf[i+HeaderLength:], msg)
	shm.PutInt32(r.buf, i+typeOffset, typeID)
	shm.StoreInt32Release(r.buf, i+lengthOffset, int32(recordLength))
	return nil
}

// Handler receives one record. msg points into the ring and is valid only
// during the call.
type Handler func(typeID int32, msg []byte)

// Read consumes up to limit records from the contiguous block at the head,
// calling fn for each (padding skipped), zeroes the consumed bytes and
// advances the head. A record whose length does not fit the block is
// skipped with the rest of the block up to the tail (see Corrupt). It returns how many records it delivered. Single
// consumer only.
func (r *RingBuffer) Read(fn Handler, limit int) int {
	b := r.buf
	head := shm.LoadInt64Acquire(b, r.trailer+HeadPositionOffset)
	headIndex := int(head) & (r.capacity - 1)
	contiguous := r.capacity - headIndex
	bytesRead, msgs := 0, 0
	for bytesRead < contiguous && msgs < limit {
		i := headIndex + bytesRead
		// Pairs with the producer's release store of +length.
		length := int(shm.LoadInt32Acquire(b, i+lengthOffset))
		if length <= 0 {
			break
		}
		if length < HeaderLength || length > contiguous-bytesRead {
			// Not a record any producer wrote: a client scribbled on
			// the ring. What follows cannot be framed either; drop it
			// up to the tail (never past it, or producers would see
			// more room than there is), at least to the next slot.
			tail := shm.LoadInt64Acquire(b, r.trailer+TailPositionOffset)
			skip := min(contiguous, int(max(tail-head, 0)))
			bytesRead = min(contiguous, max(skip, bytesRead+RecordAlignment))
			r.corrupt++
			break
		}
		bytesRead += shm.Align(length, RecordAlignment)
		t := shm.GetInt32(b, i+typeOffset)
		if t == PaddingTypeID {
			continue
		}
		msgs++
		fn(t, b[i+HeaderLength:i+length])
	}
	if bytesRead > 0 {
		clear(b[headIndex : headIndex+bytesRead])
		// Release: producers that acquire head see the zeroed bytes.
		shm.StoreInt64Release(b, r.trailer+HeadPositionOffset, head+int64(bytesRead))
	}
	return msgs
}

// Unblock turns a record that a producer claimed but never committed (it
// died, or stalled, between claim and commit) into padding, so the consumer
// can move past it. The consumer calls it when the head has not moved for
// the client liveness timeout while the tail is ahead. It reports whether
// it unblocked anything.
func (r *RingBuffer) Unblock() bool {
	b := r.buf
	head := shm.LoadInt64Acquire(b, r.trailer+HeadPositionOffset)
	tail := shm.LoadInt64Acquire(b, r.trailer+TailPositionOffset)
	if head == tail {
		return false
	}
	mask := r.capacity - 1
	consumerIndex := int(head) & mask
	producerIndex := int(tail) & mask
	// The length word is written by producers (release); acquire here.
	length := shm.LoadInt32Acquire(b, consumerIndex+lengthOffset)
	if length < 0 {
		// Claimed, length known, never committed: pad over it.
		shm.PutInt32(b, consumerIndex+typeOffset, PaddingTypeID)
		shm.StoreInt32Release(b, consumerIndex+lengthOffset, -length)
		return true
	}
	if length != 0 {
		return false
	}
	// Claimed but not even marked: find the next record's length word and
	// pad up to it if everything in between is still zero.
	limit := r.capacity
	if producerIndex > consumerIndex {
		limit = producerIndex
	}
	for i := consumerIndex + RecordAlignment; i < limit; i += RecordAlignment {
		if shm.LoadInt32Acquire(b, i) == 0 {
			continue
		}
		for j := i - RecordAlignment; j >= consumerIndex; j -= RecordAlignment {
			if shm.LoadInt32Acquire(b, j) != 0 {
				return false
			}
		}
		shm.PutInt32(b, consumerIndex+typeOffset, PaddingTypeID)
		shm.StoreInt32Release(b, consumerIndex+lengthOffset, int32(i-consumerIndex))
		return true
	}
	return false
}
