package snapshot

import (
	"errors"
	"os"
	"sync"

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
// reason to run (and stop the loop) because of it. The mutex is held only
// to queue or take a buffer: the loop never waits on the disk. Backlog
// tells the loop how much is queued, so it can stop encoding (but not
// copy-on-write) while the disk is behind; copy-on-write that finds no
// free buffer then takes a new one from the heap (counted in Overflow).
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

	mu       sync.Mutex
	cond     sync.Cond
	queue    [][]byte
	free     [][]byte
	nbufs    int   // the slab's buffers: free holds at most this many
	queued   int64 // bytes in queue
	overflow int64 // buffers the loop allocated because none was free
	closed   bool  // the loop has written everything
	aborted  bool  // the loop gave up: discard the file
	err      error // the writer's first error
	result   error
	done     chan struct{}
}

// pipeBuf is the size of one buffer: four of the encoder's flushes.
const pipeBuf = 256 << 10

// newPipe returns a pipe whose buffers hold backlog bytes and two more
// buffers.
func newPipe(backlog int64) *pipe {
	n := int(backlog/pipeBuf) + 2
	p := &pipe{done: make(chan struct{}), nbufs: n, free: make([][]byte, 0, n), queue: make([][]byte, 0, n)}
	// Small pages: the loop touches the slab first as it fills each buffer,
	// a few pages per slice; a huge page (THP "always") would be cleared
	// whole, 2 MiB, in one fault inside one slice.
	p.slab = p.mem.AllocSmallPages(n * pipeBuf)
	slab := p.slab
	for i := range n {
		p.free = append(p.free, slab[i*pipeBuf:i*pipeBuf:(i+1)*pipeBuf])
	}
	p.cur, p.free = p.free[n-1], p.free[:n-1]
	p.cond.L = &p.mu
	return p
}

// release unmaps the slab if the writer has not (loop side). Call it only
// once the writer has finished (done is closed) and the loop will write no
// more: every buffer is then unused.
func (p *pipe) release() {
	p.cur = nil
	p.unmap()
}

// unmap drops the buffers and unmaps the slab; the side that calls it is
// the only one left using the pipe.
func (p *pipe) unmap() {
	if p.slab == nil {
		return
	}
	p.mu.Lock()
	p.free, p.queue = nil, nil
	p.mu.Unlock()
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

// push queues the buffer being filled and, with next, takes another.
func (p *pipe) push(next bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return p.err
	}
	if len(p.cur) > 0 {
		p.queue = append(p.queue, p.cur)
		p.queued += int64(len(p.cur))
		p.cond.Signal()
		p.cur = nil
	}
	if !next {
		return nil
	}
	if k := len(p.free); k > 0 {
		p.cur, p.free = p.free[k-1], p.free[:k-1]
	} else {
		p.overflow++
		p.cur = make([]byte, 0, pipeBuf)
	}
	return nil
}

// Backlog returns the bytes queued and not written yet (loop side).
func (p *pipe) Backlog() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.queued + int64(len(p.cur))
}

// Overflow returns how many buffers the loop had to allocate because the
// slab's were all queued.
func (p *pipe) Overflow() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.overflow
}

// Close queues the last bytes and tells the writer they are the last
// (loop side).
func (p *pipe) Close() {
	p.push(false)
	p.mu.Lock()
	p.closed = true
	p.cond.Signal()
	p.mu.Unlock()
}

// Abort tells the writer to stop and discard the file (loop side).
func (p *pipe) Abort() {
	p.mu.Lock()
	p.aborted = true
	p.cond.Signal()
	p.mu.Unlock()
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

// run is the writer goroutine: it writes the queued buffers to f in order,
// unmaps the slab once the loop has closed the pipe, then commits f as
// path.
func (p *pipe) run(f *os.File, path string) {
	defer close(p.done)
	for {
		p.mu.Lock()
		for len(p.queue) == 0 && !p.closed && !p.aborted {
			p.cond.Wait()
		}
		if p.aborted {
			p.mu.Unlock()
			p.unmap() // the loop aborted after its last write
			discard(f)
			p.result = errAborted
			return
		}
		if len(p.queue) == 0 { // closed and drained
			p.mu.Unlock()
			p.unmap() // the loop closed the pipe after its last write
			break
		}
		b := p.queue[0]
		copy(p.queue, p.queue[1:]) // at most nbufs (and overflow) entries: keeps the queue's array
		p.queue[len(p.queue)-1] = nil
		p.queue = p.queue[:len(p.queue)-1]
		p.mu.Unlock()

		_, err := f.Write(b)

		p.mu.Lock()
		p.queued -= int64(len(b))
		if len(p.free) < p.nbufs-1 && cap(b) == pipeBuf { // an overflow buffer beyond the slab's count is dropped
			p.free = append(p.free, b[:0])
		}
		if err != nil {
			p.err = err
		}
		p.mu.Unlock()
		if err != nil {
			discard(f)
			p.result = err
			return
		}
	}
	p.result = commit(f, path)
}
