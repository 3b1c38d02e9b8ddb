package server

import (
	"runtime/debug"
	"time"

	"github.com/goblin-kv/goblin/transport/uds"
)

// Returning freed client buffers to the operating system.
//
// Go's heap keeps memory it has freed for reuse, and frees a dropped
// buffer only at the next garbage collection, which a server that
// allocates nothing on its hot path may not run for minutes. So after
// clients drop large buffers (a disconnected slow consumer, a client
// evicted by the memory budget, an idle client's buffers released), the
// server asks the runtime to collect and return the free memory at once —
// on a goroutine of its own, never on the loop, which goes on serving
// while the collector runs beside it.
const (
	// releaseAfter is how many bytes of client buffers must have been
	// freed since the last release to make another worthwhile.
	releaseAfter = 32 << 20
	// releaseEvery spaces releases, each a full collection.
	releaseEvery = time.Second
)

// releaser runs debug.FreeOSMemory when asked, off the loop.
type releaser struct {
	ask      chan struct{}
	done     chan struct{}
	last     time.Time // loop goroutine only
	released int64     // the budget's Released at the last request (loop goroutine only)
	stopped  bool
}

func newReleaser() *releaser {
	r := &releaser{ask: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for range r.ask {
			debug.FreeOSMemory()
		}
	}()
	return r
}

// stop ends the releaser's goroutine; the loop has stopped asking.
func (r *releaser) stop() {
	if !r.stopped {
		r.stopped = true
		close(r.ask)
	}
}

// releaseMemory runs on the loop at every metrics publication: when the
// socket clients have freed releaseAfter bytes since the last release, it
// asks the releaser for another (without waiting for it).
func (s *Server) releaseMemory() {
	var st uds.BudgetStats
	s.budget.Stats(&st)
	r := s.release
	if r.stopped || st.Released-r.released < releaseAfter || time.Since(r.last) < releaseEvery {
		return
	}
	r.released, r.last = st.Released, time.Now()
	select {
	case r.ask <- struct{}{}:
	default: // one is already running
	}
}
