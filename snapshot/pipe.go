package snapshot

import (
	"errors"
	"os"
	"sync/atomic"

	"github.com/goblin-kv/goblin/arena"
)

// errAborted is the writer's result when the loop gave the save up.
var errAborted = errors.New("snapshot: save aborted")

// pipe carries encoded bytes from the loop to the writer goroutine. Its
// buffers are allocated once, when the save begins (a slab of
// MaxBacklog plus two buffers, mapped outside the Go heap and unmapped
// when the save is over, so it neither grows the heap nor stays after the
// save), and circulate between the two: the loop
// copies into the buffer it is filling and queues it when full, taking a
// free one; the writer writes a queued buffer out and returns it. So a save
// allocates nothing per key or per slice, and the garbage collector has no
// reason to run (and stop the loop) because of it.
//
// The loop never waits for the writer: the buffers travel in two
// single-producer single-consumer rings (queue, loop to writer; free,
// writer to loop) of atomic counters, and the loop wakes a sleeping writer
// with a futex wake, a system call that does not block. A lock shared with
// the writer would make the loop wait whenever the kernel preempted the
// writer while it held it, and at WriterIdle a preempted writer may wait
// long for a CPU (a slice of 589 ms, 156 µs of it the loop's CPU, was
// measured with the mutex this replaced). Backlog tells the loop how much
// is queued, so it can stop encoding (but not copy-on-write) while the
// disk is behind; copy-on-write that finds no free buffer then takes a new
// one from the heap (counted in Overflow), and one the queue has no room
// for waits in order in the loop's pending list until a flush (every
// Job.Finished) queues it.
type pipe struct {
	cur []byte // loop only: the buffer being filled
	// mem holds the slab, the buffers' memory (nil once unmapped). The
	// loop maps it; the writer unmaps it when it finishes after the loop
	// has closed or aborted the pipe (the loop touches no buffer after
	// that), so the unmapping (some hundreds of µs of the thread's CPU for
	// a few MiB of small pages) is not the loop's; after a writer's error
	// the loop unmaps it in release. Either way the other side reads them
	// only after done is closed, which orders the two.
	mem  arena.OffHeap
	slab []byte

	queue bufRing // filled buffers: the loop produces, the writer consumes
	free  bufRing // the slab's buffers written out: the writer produces, the loop consumes
	// pending holds, in order, the filled buffers the queue had no room for
	// (copy-on-write far ahead of the writer); loop only. closing: Close
	// was called and closed waits until pending is empty.
	pending [][]byte
	closing bool
	// queued is the bytes in queue and in the write under way: the loop
	// adds a buffer's length before queueing it, the writer subtracts it
	// once written; the loop reads it (Backlog).
	queued   atomic.Int64
	overflow int64 // loop only: buffers allocated because none was free
	// closed (the loop has queued everything) and aborted (the loop gave
	// up: discard the file) are set by the loop, after its last buffer is
	// queued, and read by the writer.
	closed, aborted atomic.Bool
	// err is the writer's first error: written by the writer before it
	// sets failed, read by the loop only after it sees failed set.
	err    error
	failed atomic.Bool
	// sleeping is 1 while the writer waits on it with futexWait (set by the
	// writer, which then looks at the queue once more before it sleeps);
	// the loop, after queueing a buffer or closing, swaps it to 0 and wakes
	// the writer. Both sides' atomics are sequentially consistent, so
	// either the writer sees the new buffer or the loop sees it sleeping.
	sleeping atomic.Uint32
	result   error
	done     chan struct{}
}

// bufRing is a single-producer single-consumer ring of buffers: the
// producer writes a slot and then advances tail; the consumer reads tail,
// takes the slot, clears it and then advances head, after which the
// producer may fill the slot again. Each counter has one writer.
type bufRing struct {
	slots []([]byte)
	head  atomic.Uint64 // written by the consumer
	tail  atomic.Uint64 // written by the producer
}

func newBufRing(n int) bufRing { return bufRing{slots: make([][]byte, n)} }

// put queues b (producer); false when the ring is full.
func (r *bufRing) put(b []byte) bool {
	t := r.tail.Load()
	if t-r.head.Load() == uint64(len(r.slots)) {
		return false
	}
	r.slots[t%uint64(len(r.slots))] = b
	r.tail.Store(t + 1) // publishes the slot
	return true
}

// get takes the oldest buffer (consumer); false when the ring is empty.
func (r *bufRing) get() ([]byte, bool) {
	h := r.head.Load()
	if h == r.tail.Load() {
		return nil, false
	}
	i := h % uint64(len(r.slots))
	b := r.slots[i]
	r.slots[i] = nil
	r.head.Store(h + 1) // hands the slot back to the producer
	return b, true
}

// empty reports whether the ring holds nothing (consumer).
func (r *bufRing) empty() bool { return r.head.Load() == r.tail.Load() }

// pipeBuf is the size of one buffer: four of the encoder's flushes.
const pipeBuf = 256 << 10

// pipeQueue is how many buffers the queue holds at least; the loop keeps
// any more in order in pending.
const pipeQueue = 64

// newPipe returns a pipe whose buffers hold backlog bytes and two more
// buffers.
func newPipe(backlog int64) *pipe {
	n := int(backlog/pipeBuf) + 2
	p := &pipe{done: make(chan struct{}), queue: newBufRing(max(pipeQueue, 2*n)), free: newBufRing(n)}
	// Small pages: the loop touches the slab first as it fills each buffer,
	// a few pages per slice; a huge page (THP "always") would be cleared
	// whole, 2 MiB, in one fault inside one slice.
	p.slab = p.mem.AllocSmallPages(n * pipeBuf)
	for i := range n - 1 {
		p.free.put(p.slab[i*pipeBuf : i*pipeBuf : (i+1)*pipeBuf])
	}
	p.cur = p.slab[(n-1)*pipeBuf : (n-1)*pipeBuf : n*pipeBuf]
	return p
}

// release unmaps the slab if the writer has not (loop side). Call it only
// once the writer has finished (done is closed) and the loop will write no
// more: every buffer is then unused.
func (p *pipe) release() {
	p.cur = nil
	// No slice into the slab outlives it: the free ring's buffers and, after
	// an abort, the queue's unwritten ones (the writer has finished, so the
	// loop is the rings' only user now).
	clear(p.free.slots)
	clear(p.queue.slots)
	p.unmap()
}

// unmap unmaps the slab; the side that calls it is the only one left using
// the pipe.
func (p *pipe) unmap() {
	if p.slab == nil {
		return
	}
	p.mem.Free(p.slab)
	p.slab = nil
}

// Write copies b into the pipe's buffers (loop side), queueing each one it
// fills. It fails only once the writer has failed.
func (p *pipe) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		c := copy(p.cur[len(p.cur):cap(p.cur)], b)
		p.cur, b = p.cur[:len(p.cur)+c], b[c:]
		if len(p.cur) == cap(p.cur) {
			if err := p.push(true); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

// push queues the buffer being filled and, with next, takes another
// (loop side).
func (p *pipe) push(next bool) error {
	if p.failed.Load() {
		return p.err
	}
	if len(p.cur) > 0 {
		p.queued.Add(int64(len(p.cur)))
		if len(p.pending) > 0 || !p.queue.put(p.cur) {
			p.pending = append(p.pending, p.cur) // behind the others: the order holds
		}
		p.cur = nil
		p.flush()
		p.wake()
	}
	if !next {
		return nil
	}
	if b, ok := p.free.get(); ok {
		p.cur = b
	} else {
		p.overflow++
		p.cur = make([]byte, 0, pipeBuf)
	}
	return nil
}

// flush moves pending buffers into the queue while it has room, and
// closes the pipe once Close was called and none is left (loop side; Job
// calls it on every Finished).
func (p *pipe) flush() {
	k := 0
	for k < len(p.pending) && p.queue.put(p.pending[k]) {
		p.pending[k] = nil
		k++
	}
	if k > 0 {
		p.pending = p.pending[:copy(p.pending, p.pending[k:])]
		p.wake()
	}
	if p.closing && len(p.pending) == 0 && !p.closed.Load() {
		p.closed.Store(true)
		p.wake()
	}
}

// wake wakes the writer if it sleeps (loop side); it never blocks.
func (p *pipe) wake() {
	if p.sleeping.Load() == 1 && p.sleeping.CompareAndSwap(1, 0) {
		futexWake(&p.sleeping)
	}
}

// wait sleeps until the loop queues a buffer, closes or aborts the pipe
// (writer side); it may return early.
func (p *pipe) wait() {
	p.sleeping.Store(1)
	if !p.queue.empty() || p.closed.Load() || p.aborted.Load() {
		p.sleeping.Store(0)
		return
	}
	futexWait(&p.sleeping, 1)
}

// Backlog returns the bytes queued and not written yet (loop side).
func (p *pipe) Backlog() int64 {
	return p.queued.Load() + int64(len(p.cur))
}

// Overflow returns how many buffers the loop had to allocate because the
// slab's were all queued (loop side).
func (p *pipe) Overflow() int64 { return p.overflow }

// Close queues the last bytes and tells the writer they are the last
// (loop side), at once or, with buffers pending, in the flush that queues
// the last of them.
func (p *pipe) Close() {
	p.push(false)
	p.closing = true
	p.flush()
}

// Abort tells the writer to stop and discard the file (loop side).
func (p *pipe) Abort() {
	p.aborted.Store(true)
	p.wake()
}

// finished reports whether the writer has finished; it never blocks.
func (p *pipe) finished() bool {
	done, _ := p.Result()
	return done
}

// Result reports whether the writer has finished and with what error; it
// never blocks.
func (p *pipe) Result() (finished bool, err error) {
	select {
	case <-p.done:
		return true, p.result
	default:
		return false, nil
	}
}

// beforeWrite, when a test sets it (before the save begins, so the writer
// goroutine's start orders it), runs before each of the writer's writes.
var beforeWrite func()

// run is the writer goroutine: it writes the queued buffers to f in order,
// unmaps the slab once the loop has closed the pipe, then commits f as
// path.
func (p *pipe) run(f *os.File, path string) {
	defer close(p.done)
	for {
		if p.aborted.Load() {
			p.unmap() // the loop aborted after its last write
			discard(f)
			p.result = errAborted
			return
		}
		b, ok := p.queue.get()
		if !ok {
			if !p.closed.Load() {
				p.wait()
				continue
			}
			// Closed: the loop queued its last buffer before it said so.
			if b, ok = p.queue.get(); !ok {
				p.unmap() // the loop closed the pipe after its last write
				break
			}
		}
		if beforeWrite != nil {
			beforeWrite()
		}
		_, err := f.Write(b)
		p.queued.Add(-int64(len(b)))
		if cap(b) == pipeBuf {
			p.free.put(b[:0]) // a full ring drops it: one of the overflow buffers
		}
		if err != nil {
			p.err = err
			p.failed.Store(true)
			discard(f)
			p.result = err
			return
		}
	}
	p.result = commit(f, path)
}
