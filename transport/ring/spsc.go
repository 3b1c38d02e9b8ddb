package ring

import (
	"github.com/goblin-kv/goblin/internal/shm"
)

// One single-producer single-consumer ring of fixed-size records.
//
// Layout inside the mapping, starting at the ring's base offset:
//
//	+0    consumer position (int64)            own 128-byte block
//	+128  (padding: nothing lives here)        keeps the records two cache lines away
//	+256  record 0, record 1, … record N-1     each recordSize bytes, 64-byte aligned
//
// A record is one 8-byte header word and the payload:
//
//	+0   header  uint64: bits 0-31  tag, the low 32 bits of sequence number + 1
//	                     bits 32-62 payload length
//	                     bit  63    more: the message goes on in the next record
//	+8   payload
//
// A message longer than one record's payload is cut into fragments, one per
// record, in consecutive records; every fragment but the last has the more
// bit set and a full payload, and the first one's payload starts with the
// message's total length (fragment.go). A message that fits one record is
// one record with the more bit clear, as if fragments did not exist: its
// consumer tests the same bit it always tested.
//
// The producer's position is not a separate counter: it is the tag of each
// record, published together with the length in one release store of the
// header word, after the payload. The consumer spins on the header of the
// record it expects next, so a small message (up to 56 bytes) and its
// "ready" signal travel together in one cache line — one transfer per
// direction, the theoretical floor. Tags grow with the sequence (modulo
// 2^32), so a record left from the previous lap (tag of seq+1-N) or never
// written (0) is never mistaken for the next one, and nothing needs zeroing
// on wrap-around.
//
// The consumer position (the number of messages consumed) is written only by
// the consumer, once per batch (see commit), and read by the producer, which
// reads it only when its cached copy says the ring is full; it sits alone in
// a 128-byte block so the adjacent-line prefetcher never drags it into a
// record's cache-line pair or the other way round.
const (
	ctlSize      = 256 // control block before the records
	offConsumed  = 0   // consumer position within the control block
	recHeader    = 8   // the header word
	hdrMore      = uint64(1) << 63
	cacheLine    = 64
	minRecord    = cacheLine
	maxRecordCap = 1 << 24
)

// header packs a record's header word.
func header(seq int64, n int, more bool) int64 {
	h := uint64(uint32(seq+1)) | uint64(n)<<32
	if more {
		h |= hdrMore
	}
	return int64(h)
}

// ringBytes is the size of one ring with n records of size bytes.
func ringBytes(n, size int) int { return ctlSize + n*size }

// producer is the writing end of a ring. Process-local state only: the
// shared state is in mem.
type producer struct {
	mem      []byte // the whole mapping
	base     int    // offset of the ring's control block
	mask     int64  // records - 1
	n        int64  // records
	size     int    // record size
	next     int64  // sequence number of the next message to write
	limit    int64  // cached consumer position + n: next < limit means a free record
	maxBytes int    // largest payload
}

// consumer is the reading end of a ring.
type consumer struct {
	mem       []byte
	base      int
	mask      int64
	size      int
	next      int64 // sequence number of the next message to read
	published int64 // consumer position last stored for the producer
	every     int64 // release publishes by itself once this many are pending
}

func newProducer(mem []byte, base, n, size int) producer {
	return producer{mem: mem, base: base, mask: int64(n - 1), n: int64(n), size: size,
		limit: int64(n), maxBytes: size - recHeader}
}

func newConsumer(mem []byte, base, n, size int) consumer {
	return consumer{mem: mem, base: base, mask: int64(n - 1), size: size, every: int64(max(1, n/4))}
}

// slotOff is the offset of the record that holds message seq.
func (p *producer) slotOff(seq int64) int {
	return p.base + ctlSize + int(seq&p.mask)*p.size
}

func (c *consumer) slotOff(seq int64) int {
	return c.base + ctlSize + int(seq&c.mask)*c.size
}

// hasSpace reports whether the next record is free. It refreshes the cached
// consumer position only when the cache says the ring is full.
func (p *producer) hasSpace() bool {
	if p.next < p.limit {
		return true
	}
	p.refresh()
	return p.next < p.limit
}

// hasRoom reports whether the next k records are free (k <= records).
func (p *producer) hasRoom(k int64) bool {
	if p.next+k <= p.limit {
		return true
	}
	p.refresh()
	return p.next+k <= p.limit
}

func (p *producer) refresh() {
	// Consumer position: written by the consumer (release, after it finished
	// with the record), read here (acquire), so once we see position k the
	// consumer no longer reads records < k and we may overwrite them.
	p.limit = shm.LoadInt64Acquire(p.mem, p.base+offConsumed) + p.n
}

// claim returns the payload area of the next record, full capacity and zero
// length, for the caller to append into. The caller checked hasSpace.
func (p *producer) claim() []byte {
	off := p.slotOff(p.next) + recHeader
	return p.mem[off : off : off+p.maxBytes]
}

// publish makes the claimed record visible with n payload bytes; more says
// the message goes on in the next record.
func (p *producer) publish(n int, more bool) {
	// Header word: written by the producer with a release store, after the
	// payload, so the payload is visible to the consumer whose acquire load
	// sees this sequence's tag. Read by the consumer (acquire). Release is
	// all the protocol needs (nobody waits on a store-load order: both sides
	// poll), so it is the plain-MOV release store, not a locked one.
	shm.StoreInt64ReleaseOnly(p.mem, p.slotOff(p.next), header(p.next, n, more))
	p.next++
}

// publishFenced is publish with a sequentially consistent store (a locked
// XCHG on amd64): no later load of this thread may pass it. A client
// publishes requests with it only when the server cannot fence it with
// membarrier before parking, because it loads serverParked next (Dekker's
// pattern, see doorbell.go).
func (p *producer) publishFenced(n int, more bool) {
	// Header word: as in publish, but the store is also a full fence.
	shm.StoreInt64Release(p.mem, p.slotOff(p.next), header(p.next, n, more))
	p.next++
}

// put copies msg (at most maxBytes) into the next record and publishes it
// as one record, with publishFenced's store when fenced: claim, copy and
// publish with the record's place computed once. The caller checked
// hasSpace.
func (p *producer) put(msg []byte, fenced bool) {
	off := p.slotOff(p.next)
	copy(p.mem[off+recHeader:off+recHeader+p.maxBytes], msg)
	h := header(p.next, len(msg), false)
	// Header word: written here, after the payload, read by the consumer
	// (acquire); see publish and publishFenced for the two stores.
	if fenced {
		shm.StoreInt64Release(p.mem, off, h)
	} else {
		shm.StoreInt64ReleaseOnly(p.mem, off, h)
	}
	p.next++
}

// offer copies msg into the next record and publishes it. It returns false
// when the ring is full. len(msg) must be at most maxBytes.
func (p *producer) offer(msg []byte) bool {
	if !p.hasSpace() {
		return false
	}
	copy(p.claim()[:len(msg)], msg)
	p.publish(len(msg), false)
	return true
}

// idle reports whether the consumer has nothing to do: no message in the
// next record (peek's test) and every release committed. Small enough to
// be inlined into the server's poll, which skips an idle client's serve.
func (c *consumer) idle() bool {
	// Header word: written by the producer (release); read here with
	// acquire, as in peek.
	return c.published == c.next && uint32(shm.LoadInt64Acquire(c.mem, c.slotOff(c.next))) != uint32(c.next+1)
}

// peek returns the next record's payload (aliasing shared memory), whether
// more records of its message follow, and whether one is ready. The payload
// stays valid until release.
func (c *consumer) peek() (payload []byte, more bool, ok bool) {
	off := c.slotOff(c.next)
	// Header word: written by the producer (release, after the payload);
	// read here with acquire, so once its tag is next+1 the payload is
	// complete. Any other tag (0, or an earlier lap's) means not yet.
	h := uint64(shm.LoadInt64Acquire(c.mem, off))
	if uint32(h) != uint32(c.next+1) {
		return nil, false, false
	}
	more = h&hdrMore != 0
	n := int(h &^ hdrMore >> 32)
	if n > c.size-recHeader {
		// Only a foreign writer could produce this; read no further than
		// the record (the message will not parse, or its fragments will
		// not add up).
		n = c.size - recHeader
	}
	p := off + recHeader
	return c.mem[p : p+n : p+n], more, true
}

// release is done with the head record. The producer learns of it at the
// next commit, which release does itself once a quarter of the ring is
// pending; callers commit before they wait, so a producer waiting for room
// is never left waiting on a consumer that is waiting for it.
func (c *consumer) release() {
	c.next++
	if c.next-c.published >= c.every {
		c.commit()
	}
}

// commit publishes the consumer position. Publishing once per batch rather
// than per record keeps a locked store off the round trip's critical path.
func (c *consumer) commit() {
	if c.published == c.next {
		return
	}
	c.published = c.next
	// Consumer position: written by the consumer only, with a release store
	// after it has finished reading the records before it, so the producer
	// (acquire load in hasSpace) never overwrites a record still being read.
	// Release alone (plain MOV): a release store also orders the earlier
	// loads of the records before it.
	shm.StoreInt64ReleaseOnly(c.mem, c.base+offConsumed, c.next)
}
