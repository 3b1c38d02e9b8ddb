package snapshot

import (
	"errors"
	"os"
	"sync/atomic"
	"time"

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
// for waits in order in the loop's pending list until a flush (on every
// push, every Step the walk is paused in, and every Job.Finished once
// every key is encoded) queues it.
type pipe struct {
	cur []byte // loop only: the buffer being filled
	// mem holds the slab, the buffers' memory. The loop maps it; the last
	// of its users to leave unmaps it (users counts them: the loop until it
	// closes or aborts the pipe or releases it, each writer until it
	// returns, and the goroutine that faults the slab in as the save
	// begins). So a writer that finishes after the loop has closed or
	// aborted the pipe unmaps it (some hundreds of µs of the thread's CPU
	// for a few MiB of small pages, not the loop's; a SCHED_IDLE one hands
	// it to a goroutine, leave), the loop after a writer's error (it may
	// still be copying into a buffer), and a first writer a rescuer took
	// over from once its last write returns.
	mem      arena.OffHeap
	slab     []byte
	users    atomic.Int32
	unmapped atomic.Bool
	loopUser bool // loop only: the loop still counts among users

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
	// errp is the writers' first error, nil until one fails: set once
	// (compare-and-swap) by a writer, read by the loop and the writers.
	errp atomic.Pointer[error]
	// sleeping[w] is 1 while writer w (0 the first, 1 a rescuer) waits on
	// it with futexWait (set by the writer, which then looks at the queue
	// once more before it sleeps); the loop, after queueing a buffer or
	// closing, swaps each to 0 and wakes that writer. Both sides' atomics
	// are sequentially consistent, so either the writer sees the new
	// buffer or the loop sees it sleeping. One word per writer: a first
	// writer's late store cannot undo a rescuer's.
	sleeping [2]atomic.Uint32

	// The writers. The first starts with the save; at WriterIdle the loop
	// may start a rescuer at the process's priority when the first gets
	// too little CPU time (rescue). Only the holder of token takes buffers
	// from queue, gives them back to free and moves off: the first writer
	// takes it for each such operation (tokenFree to tokenFirst and back)
	// and for its end (tokenDone); a rescuer takes it for good when it is
	// free (tokenRescue), after which the first writer, finding it gone,
	// stops after the write it may have under way. Each buffer is written
	// at its own offset (off, the holder's), so a rescuer's writes need
	// not wait for that one, which inflight counts until it returns.
	token    atomic.Uint32
	off      int64 // the file offset of the next buffer taken; the token holder's
	inflight atomic.Int32
	f        *os.File
	path     string
	// idleFirst (the first writer runs on a SCHED_IDLE thread, so a rescuer
	// could help it) is set before any writer starts and only read after;
	// rescued (a rescuer was started) is the loop's; taken is set by a
	// rescuer once it holds the token (a rescuer started as the first
	// writer ends takes nothing).
	idleFirst, rescued bool
	taken              atomic.Bool
	// result and done are the end of the save: set and closed by the
	// writer that ends it (the first, or the rescuer once it took over).
	result error
	done   chan struct{}
}

// The states of pipe.token.
const (
	tokenFree   = iota // the first writer may take it
	tokenFirst         // the first writer holds it for one operation
	tokenDone          // the first writer holds it for good: it ends the save
	tokenRescue        // a rescuer holds it for good
)

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
	p := &pipe{done: make(chan struct{}), queue: newBufRing(max(pipeQueue, 2*n)), free: newBufRing(n), loopUser: true}
	p.users.Store(1) // the loop; the first writer and the populating goroutine join in start
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

// release leaves the slab, unmapping it if the writers have left it (loop
// side). Call it only once the save has ended (done is closed) and the
// loop will write no more.
func (p *pipe) release() {
	p.cur = nil
	// No slice into the slab outlives it: the free ring's buffers and, after
	// an abort, the queue's unwritten ones (the save has ended: a writer
	// still running is a first writer a rescuer took over from, which
	// touches neither ring again).
	clear(p.free.slots)
	clear(p.queue.slots)
	p.loopLeaves()
}

// loopLeaves drops the loop from the slab's users, once (loop side).
func (p *pipe) loopLeaves() {
	if p.loopUser {
		p.loopUser = false
		p.leave(false)
	}
}

// leave drops one user of the slab; the last unmaps it. lowered says the
// caller's thread may be SCHED_IDLE: the unmapping then runs on a goroutine
// at the process's priority, since munmap holds the process's memory-map
// lock for writing, and a SCHED_IDLE thread preempted while it holds it
// would stop every page fault of the process, the loop's too, until the
// kernel ran it again.
func (p *pipe) leave(lowered bool) {
	if p.users.Add(-1) != 0 {
		return
	}
	if lowered {
		go p.unmapSlab()
		return
	}
	p.unmapSlab()
}

func (p *pipe) unmapSlab() {
	p.mem.Free(p.slab)
	p.unmapped.Store(true)
}

// join adds a user of the slab unless the last has left already.
func (p *pipe) join() bool {
	for {
		n := p.users.Load()
		if n == 0 {
			return false
		}
		if p.users.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// setErr records a writer's error unless one was recorded first.
func (p *pipe) setErr(err error) { p.errp.CompareAndSwap(nil, &err) }

// failure returns the writers' first error, or nil.
func (p *pipe) failure() error {
	if e := p.errp.Load(); e != nil {
		return *e
	}
	return nil
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
	if err := p.failure(); err != nil {
		return err
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
// calls it while the walk is paused and on every Finished).
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

// wake wakes the writers that sleep; it never blocks.
func (p *pipe) wake() {
	for w := range p.sleeping {
		p.wakeWriter(w)
	}
}

// wakeWriter wakes writer w (0 the first, 1 a rescuer) if it sleeps.
func (p *pipe) wakeWriter(w int) {
	if s := &p.sleeping[w]; s.Load() == 1 && s.CompareAndSwap(1, 0) {
		futexWake(s)
	}
}

// wait sleeps until the loop queues a buffer, closes or aborts the pipe or,
// for the first writer, a rescuer takes over (writer side); it may return
// early.
func (p *pipe) wait(rescuer bool) {
	s := &p.sleeping[writerIndex(rescuer)]
	s.Store(1)
	if !p.queue.empty() || p.closed.Load() || p.aborted.Load() || !rescuer && p.token.Load() == tokenRescue {
		s.Store(0)
		return
	}
	futexWait(s, 1)
}

// writerIndex is a writer's index in sleeping.
func writerIndex(rescuer bool) int {
	if rescuer {
		return 1
	}
	return 0
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
	p.loopLeaves() // push queued the last buffer the loop filled
	p.closing = true
	p.flush()
}

// Abort tells the writer to stop and discard the file (loop side).
func (p *pipe) Abort() {
	p.aborted.Store(true)
	p.loopLeaves()
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
// goroutine's start orders it), runs before each of the writers' writes.
var beforeWrite func(rescuer bool)

// start runs the first writer at priority prio, to write the queued
// buffers to f and commit it as path (loop side, once).
func (p *pipe) start(f *os.File, path string, prio WriterPriority) {
	p.f, p.path, p.idleFirst = f, path, lowers(prio)
	p.users.Add(2) // the first writer, and the populating goroutine below
	// The slab's pages, which the loop touches first as it fills each
	// buffer (a page fault each, more than a thousand per save, each some
	// microseconds of the loop's time and on a virtual machine sometimes a
	// host's fault of far more): faulted in at once, while the loop fills
	// its first buffer, on a goroutine at the process's priority (the
	// populating holds the memory-map lock for reading; a SCHED_IDLE thread
	// preempted there would hold up the loop's next mapping).
	go func() {
		arena.Populate(p.slab)
		p.leave(false)
	}()
	runWriter(prio, func() { p.run(false) })
}

// rescue starts a writer at the process's priority to take over from a
// first writer that runs at a lower one (WriterIdle) and gets too little
// CPU time (loop side; Job decides when). At most once a save; nothing
// once the save's writers have all left.
func (p *pipe) rescue() bool {
	if !p.idleFirst || p.rescued || !p.join() {
		return false
	}
	p.rescued = true
	go p.run(true)
	return true
}

// Rescued reports whether a rescuer took the writing over.
func (p *pipe) Rescued() bool { return p.taken.Load() }

// enter takes the token for one operation on the rings (the first writer;
// a rescuer holds it already): false once a rescuer has it.
func (p *pipe) enter(rescuer bool) bool {
	return rescuer || p.token.CompareAndSwap(tokenFree, tokenFirst)
}

// exit gives the token back after enter.
func (p *pipe) exit(rescuer bool) {
	if !rescuer {
		p.token.Store(tokenFree)
	}
}

// run is a writer goroutine: it writes the queued buffers to f in order
// (each at its offset), then commits f as path once the loop has closed
// the pipe, or discards it once the loop aborted it or a write failed. A
// rescuer first takes the token from the first writer; the first stops
// once it finds the token gone.
func (p *pipe) run(rescuer bool) {
	left, lowered := false, !rescuer && p.idleFirst
	defer func() {
		if !left {
			p.leave(lowered)
		}
	}()
	if rescuer {
		for !p.token.CompareAndSwap(tokenFree, tokenRescue) {
			if p.token.Load() == tokenDone {
				return // the first writer is ending the save itself
			}
			// The first writer is taking or returning a buffer, and may have
			// been preempted there: look again in a millisecond (a shorter
			// wait would take its CPU from it all the more often).
			time.Sleep(time.Millisecond)
		}
		p.taken.Store(true)
		p.wakeWriter(0) // a first writer asleep stops
	}
	for {
		if !p.enter(rescuer) {
			return
		}
		if p.aborted.Load() || p.failure() != nil {
			left = true
			p.end(rescuer, lowered)
			return
		}
		b, ok := p.queue.get()
		if !ok && p.closed.Load() {
			// Closed: the loop queued its last buffer before it said so.
			if b, ok = p.queue.get(); !ok {
				left = true
				p.end(rescuer, lowered)
				return
			}
		}
		if !ok {
			p.exit(rescuer)
			p.wait(rescuer)
			continue
		}
		off := p.off
		p.off += int64(len(b))
		p.inflight.Add(1)
		p.exit(rescuer)
		if beforeWrite != nil {
			beforeWrite(rescuer)
		}
		err := p.writeAt(b, off)
		p.queued.Add(-int64(len(b)))
		if err != nil {
			p.setErr(err)
		} else if cap(b) == pipeBuf && p.enter(rescuer) {
			p.free.put(b[:0]) // a full ring drops it: one of the overflow buffers
			p.exit(rescuer)
		}
		p.inflight.Add(-1)
	}
}

// writePiece is the most one write system call writes: a buffered write
// holds the file's inode lock, which the other writer's writes and the
// unlink of a discarded file wait for, so a first writer preempted in one
// (a SCHED_IDLE thread is preempted wherever it is, most often in its
// writes, where its CPU time goes) holds up a rescuer for the rest of one
// piece, not of a whole buffer.
const writePiece = 64 << 10

// writeAt writes b at off in pieces of writePiece; it stops between
// pieces once the loop has aborted the save.
func (p *pipe) writeAt(b []byte, off int64) error {
	for len(b) > 0 {
		if p.aborted.Load() {
			return errAborted
		}
		n := min(len(b), writePiece)
		if _, err := p.f.WriteAt(b[:n], off); err != nil {
			return err
		}
		b, off = b[n:], off+int64(n)
	}
	return nil
}

// end ends the save: the writer calling it holds the token (a first writer
// takes it for good). It leaves the slab, then commits the file or, after
// an abort or a failed write, discards it, and closes done. lowered: the
// caller's thread may be SCHED_IDLE (leave).
func (p *pipe) end(rescuer, lowered bool) {
	if !rescuer {
		p.token.Store(tokenDone)
	}
	// A rescuer commits only once the first writer's last write has
	// returned; an abort (SHUTDOWN) or a failed write discards the file
	// without waiting for it (the write lands, if ever, in a file no name
	// leads to: the descriptor's close waits for it).
	for p.inflight.Load() > 0 && !p.aborted.Load() && p.failure() == nil {
		time.Sleep(time.Millisecond) // as long as the starved thread takes to finish its buffer's pieces
	}
	p.leave(lowered)
	if lowered {
		// The commit's fsync and rename (or the discard's unlink, which
		// frees the file's pages) hold locks a SCHED_IDLE thread must not
		// be preempted in, and the loop may wait for done (SHUTDOWN): at the
		// process's priority.
		go p.conclude(rescuer)
		return
	}
	p.conclude(rescuer)
}

// conclude commits the file or, after an abort or a failed write,
// discards it, sets result and closes done (end).
func (p *pipe) conclude(rescuer bool) {
	switch err := p.failure(); {
	case p.aborted.Load():
		discard(p.f)
		p.result = errAborted
	case err != nil:
		discard(p.f)
		p.result = err
	default:
		p.result = commit(p.f, p.path)
	}
	if rescuer {
		p.wakeWriter(0) // a first writer asleep stops
	}
	close(p.done)
}
