package snapshot

import (
	"errors"
	"os"
	"sync"
)

// errAborted is the writer's result when the loop gave the save up.
var errAborted = errors.New("snapshot: save aborted")

// pipe carries encoded bytes from the loop to the writer goroutine. The
// loop's Write copies into a free buffer (or a new one) and queues it
// under the mutex, which the writer holds only to take or return a buffer:
// the loop never waits on the disk. Backlog tells the loop how much is
// queued, so it can stop encoding (but not copy-on-write) while the disk
// is behind.
type pipe struct {
	mu      sync.Mutex
	cond    sync.Cond
	queue   [][]byte
	free    [][]byte
	queued  int64
	closed  bool  // the loop has written everything
	aborted bool  // the loop gave up: discard the file
	err     error // the writer's first error
	result  error
	done    chan struct{}
}

const pipeBuf = 256 << 10

func newPipe() *pipe {
	p := &pipe{done: make(chan struct{})}
	p.cond.L = &p.mu
	return p
}

// Write queues a copy of b for the writer (loop side). It fails only once
// the writer has failed.
func (p *pipe) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return 0, p.err
	}
	var buf []byte
	if n := len(p.free); n > 0 && cap(p.free[n-1]) >= len(b) {
		buf, p.free = p.free[n-1], p.free[:n-1]
	} else {
		buf = make([]byte, 0, max(len(b), pipeBuf))
	}
	buf = append(buf[:0], b...)
	p.queue = append(p.queue, buf)
	p.queued += int64(len(buf))
	p.cond.Signal()
	return len(b), nil
}

// Backlog returns the bytes queued and not written yet.
func (p *pipe) Backlog() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.queued
}

// Close tells the writer the last byte is queued (loop side).
func (p *pipe) Close() {
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
// then commits f as path.
func (p *pipe) run(f *os.File, path string) {
	defer close(p.done)
	for {
		p.mu.Lock()
		for len(p.queue) == 0 && !p.closed && !p.aborted {
			p.cond.Wait()
		}
		if p.aborted {
			p.mu.Unlock()
			discard(f)
			p.result = errAborted
			return
		}
		if len(p.queue) == 0 { // closed and drained
			p.mu.Unlock()
			break
		}
		b := p.queue[0]
		p.queue[0] = nil
		p.queue = p.queue[1:]
		p.mu.Unlock()

		_, err := f.Write(b)

		p.mu.Lock()
		p.queued -= int64(len(b))
		if len(p.free) < 8 {
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
