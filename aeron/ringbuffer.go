package aeron

import (
	"errors"
	"fmt"

	"github.com/goblin-kv/goblin/internal/shm"
)

// The to-driver buffer is an Agrona ManyToOneRingBuffer: records followed by
// a 768-byte trailer whose int64 fields sit 128 bytes apart so producers and
// the consumer never share a cache line.
const (
	rbTailOffset        = 128 // producers CAS it
	rbHeadCacheOffset   = 256 // producers' cached copy of head
	rbHeadOffset        = 384 // the consumer (driver) stores it
	rbCorrelationOffset = 512 // shared id source, get-and-add 1
	rbHeartbeatOffset   = 640 // driver's epoch-ms liveness stamp
	rbTrailerLength     = 768

	rbHeaderLength   = 8  // int32 length, int32 type
	rbAlignment      = 8  // records are 8-byte aligned
	rbPaddingTypeID  = -1 // padding records
	insufficientRoom = -2
)

// ErrRingFull reports that the to-driver ring buffer had no room for a
// command; the driver is not keeping up or has stopped.
var ErrRingFull = errors.New("aeron: to-driver ring buffer full")

func align(v, a int) int { return (v + a - 1) &^ (a - 1) }

// ringBuffer is a view of a many-to-one ring buffer. The Go client is one of
// many producers; consumption (read) exists for unit tests and a future Go
// driver.
type ringBuffer struct {
	buf      []byte // capacity bytes of records plus the trailer
	capacity int
	trailer  int
	maxMsg   int
}

func newRingBuffer(buf []byte) (ringBuffer, error) {
	capacity := len(buf) - rbTrailerLength
	if capacity <= 0 || capacity&(capacity-1) != 0 {
		return ringBuffer{}, fmt.Errorf("aeron: ring buffer capacity %d is not a power of two", capacity)
	}
	return ringBuffer{buf: buf, capacity: capacity, trailer: capacity, maxMsg: capacity / 8}, nil
}

// nextCorrelationID allocates an id from the counter every client and the
// driver share. Get-and-add is a full fence; the value only needs atomicity.
func (r *ringBuffer) nextCorrelationID() int64 {
	return shm.GetAndAddInt64(r.buf, r.trailer+rbCorrelationOffset, 1)
}

// consumerHeartbeat is the driver's epoch-ms stamp. Writer: the driver
// conductor (release). Reader: clients (acquire).
func (r *ringBuffer) consumerHeartbeat() int64 {
	return shm.LoadInt64Acquire(r.buf, r.trailer+rbHeartbeatOffset)
}

// claim reserves room for a record of recordLength bytes (header included)
// and returns its index, or insufficientRoom. It writes any padding record
// needed to wrap.
func (r *ringBuffer) claim(recordLength int) int {
	required := align(recordLength, rbAlignment)
	capacity := r.capacity
	mask := capacity - 1
	b := r.buf
	// headCache: written by producers (release), read by producers (acquire).
	head := shm.LoadInt64Acquire(b, r.trailer+rbHeadCacheOffset)
	var tail int64
	var tailIndex, padding, writeIndex int
	for {
		// tail: CAS by producers; the acquire load pairs with the winning CAS.
		tail = shm.LoadInt64Acquire(b, r.trailer+rbTailOffset)
		if required > capacity-int(tail-head) {
			// head: written by the consumer with release after zeroing the
			// bytes it consumed; this acquire makes that zeroing visible.
			head = shm.LoadInt64Acquire(b, r.trailer+rbHeadOffset)
			if required > capacity-int(tail-head) {
				return insufficientRoom
			}
			shm.StoreInt64Release(b, r.trailer+rbHeadCacheOffset, head)
		}
		padding = 0
		tailIndex = int(tail) & mask
		toEnd := capacity - tailIndex
		writeIndex = tailIndex
		if required > toEnd {
			writeIndex = 0
			headIndex := int(head) & mask
			if required > headIndex {
				head = shm.LoadInt64Acquire(b, r.trailer+rbHeadOffset)
				headIndex = int(head) & mask
				if required > headIndex {
					return insufficientRoom
				}
				shm.StoreInt64Release(b, r.trailer+rbHeadCacheOffset, head)
			}
			padding = toEnd
		}
		if shm.CompareAndSwapInt64(b, r.trailer+rbTailOffset, tail, tail+int64(required+padding)) {
			break
		}
	}
	if padding != 0 {
		// Padding record: negative length first (release) so the consumer
		// stops, then the type, then the positive length (release) publishes it.
		shm.StoreInt32Release(b, tailIndex, int32(-padding))
		shm.PutInt32(b, tailIndex+4, rbPaddingTypeID)
		shm.StoreInt32Release(b, tailIndex, int32(padding))
	}
	return writeIndex
}

// write appends one record made of the concatenated parts. It returns
// ErrRingFull when there is no room.
func (r *ringBuffer) write(typeID int32, msg []byte) error {
	if typeID < 1 {
		return fmt.Errorf("aeron: ring buffer message type %d must be ≥ 1", typeID)
	}
	if len(msg) > r.maxMsg {
		return fmt.Errorf("aeron: command of %d bytes exceeds the ring buffer's %d-byte limit", len(msg), r.maxMsg)
	}
	recordLength := len(msg) + rbHeaderLength
	i := r.claim(recordLength)
	if i == insufficientRoom {
		return ErrRingFull
	}
	// Length field: the producer stores -length (release) to mark the slot
	// in progress, fills it, then stores +length (release); the consumer's
	// acquire load of a positive length sees the whole record.
	shm.StoreInt32Release(r.buf, i, int32(-recordLength))
	copy(r.buf[i+rbHeaderLength:], msg)
	shm.PutInt32(r.buf, i+4, typeID)
	shm.StoreInt32Release(r.buf, i, int32(recordLength))
	return nil
}

// read consumes up to limit records, calling fn for each (padding skipped),
// zeroes the consumed bytes and advances head. Single consumer only.
func (r *ringBuffer) read(fn func(typeID int32, msg []byte), limit int) int {
	b := r.buf
	head := shm.LoadInt64Acquire(b, r.trailer+rbHeadOffset)
	headIndex := int(head) & (r.capacity - 1)
	contiguous := r.capacity - headIndex
	bytesRead, msgs := 0, 0
	for bytesRead < contiguous && msgs < limit {
		i := headIndex + bytesRead
		// Pairs with the producer's release store of +length.
		length := int(shm.LoadInt32Acquire(b, i))
		if length <= 0 {
			break
		}
		bytesRead += align(length, rbAlignment)
		t := shm.GetInt32(b, i+4)
		if t == rbPaddingTypeID {
			continue
		}
		msgs++
		fn(t, b[i+rbHeaderLength:i+length])
	}
	if bytesRead > 0 {
		clear(b[headIndex : headIndex+bytesRead])
		// Release: producers that acquire head see the zeroed bytes.
		shm.StoreInt64Release(b, r.trailer+rbHeadOffset, head+int64(bytesRead))
	}
	return msgs
}
