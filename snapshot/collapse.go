package snapshot

import (
	"errors"
	"sync/atomic"
	"syscall"

	"github.com/goblin-kv/goblin/arena"
)

// CollapseStats counts, for this process, the collapses into huge pages
// that a BulkLoad's End starts after a whole load (arena.Collapse): the
// load at start's (Loader.Close) and a replica's full
// resynchronisations' (engine.Engine.EndFullSync) alike, for INFO
// persistence: the collapse thread never logs.
type CollapseStats struct {
	Started   int64 // collapse threads started
	Running   int64 // of them, still running
	Collapsed int64 // regions the kernel put in huge pages
	Failed    int64 // regions it refused
	Stopped   int64 // collapses a flush of the store stopped early
	LastErrno int64 // the errno of the last refusal, 0 if none (or not an errno)
}

// collapseCounts are CollapseStats' counters. The collapse thread
// (runCollapse) writes them; any goroutine reads them (ReadCollapseStats).
// Each is a count of its own: a reader may see one region's result in
// Collapsed before Running drops, nothing more is promised between them.
var collapseCounts struct {
	started, running, collapsed, failed, stopped, lastErrno atomic.Int64
}

// ReadCollapseStats returns the counts so far.
func ReadCollapseStats() CollapseStats {
	c := &collapseCounts
	return CollapseStats{
		Started: c.started.Load(), Running: c.running.Load(), Collapsed: c.collapsed.Load(),
		Failed: c.failed.Load(), Stopped: c.stopped.Load(), LastErrno: c.lastErrno.Load(),
	}
}

// collapseLower lowers the collapse thread's priority (runCollapse).
var collapseLower = lowerThreadNice

// runCollapse runs cs on a thread of its own at nice 19 (runLowered) and
// counts the results in collapseCounts.
//
// Why nice 19 and not SCHED_IDLE, which a background save's writer may
// use: MADV_COLLAPSE holds the process's memory-map lock (for reading
// while it scans a region, for writing while it copies each 2 MiB), and
// the kernel gives a lock holder no priority boost. A SCHED_IDLE thread
// (weight 3) preempted while holding it on CPUs busy with other work may
// wait many milliseconds before it runs again, and the loop's next mmap (a
// new arena chunk, the index growing, the Go heap growing) waits with it.
// At nice 19 (weight 15 against a normal thread's 1,024) the scheduler
// still gives it its share within a scheduling period, so such a wait is
// bounded by a few milliseconds; the loop still takes a CPU from it first.
func runCollapse(cs []arena.Collapse) {
	c := &collapseCounts
	c.started.Add(1)
	c.running.Add(1)
	runLowered(collapseLower, func() {
		defer c.running.Add(-1)
		for _, col := range cs {
			r := col.Run()
			c.collapsed.Add(int64(r.Collapsed))
			c.failed.Add(int64(r.Failed))
			var errno syscall.Errno
			if errors.As(r.Err, &errno) {
				c.lastErrno.Store(int64(errno))
			}
			if r.Stopped {
				c.stopped.Add(1)
				return
			}
		}
	})
}
