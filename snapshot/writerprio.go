package snapshot

import (
	"fmt"
	"runtime"
	"strings"
)

// WriterPriority is the kernel scheduling priority of a background save's
// writer thread (Options.WriterPriority, CONFIG bgsave-writer-priority).
//
// The writer shares the machine's CPUs with the loop, which walks the
// keyspace itself in every cycle of a save, and with the clients. At the
// process's own priority the kernel treats the three alike: a client woken
// by its reply may wait for the writer (or the loop) to use up its time
// slice, a millisecond or more, before it runs. At WriterIdle, the
// default, the writer's thread is SCHED_IDLE: any other thread that wakes
// takes its CPU at once and a CPU running only it counts as idle when the
// kernel places a waking thread, so the writer runs on the CPU time
// nothing else wants. On a machine whose CPUs something else keeps busy
// that may be almost none (a SCHED_IDLE thread weighs 3 against a normal
// thread's 1,024, and an unprivileged process cannot raise it back), so
// the loop watches: once it has waited for the writer RescueAfter in all
// and a RescueShare-th of the save's time, a rescuer at the process's
// priority takes the rest of the file over (pipe.rescue). On a quiet
// machine the idle writer gave the clients the lower p99.9 during a save
// in 15 runs of 17, 1.7-2.0 times their idle p99.9 with the final code
// (docs/persistence.md, "(a) The stall a depth-one PING client sees").
type WriterPriority int

const (
	// WriterIdle runs the writer on a thread of its own with the
	// SCHED_IDLE policy (nice 19 where the kernel refuses SCHED_IDLE),
	// rescued at the process's priority if it gets too little CPU time.
	// The default.
	WriterIdle WriterPriority = iota
	// WriterNormal runs the writer as any other goroutine, at the
	// process's priority.
	WriterNormal
)

// String is the name CONFIG GET shows.
func (p WriterPriority) String() string {
	if p == WriterIdle {
		return "idle"
	}
	return "normal"
}

// ParseWriterPriority reads "idle" or "normal", in any case.
func ParseWriterPriority(s string) (WriterPriority, error) {
	switch {
	case strings.EqualFold(s, "idle"):
		return WriterIdle, nil
	case strings.EqualFold(s, "normal"):
		return WriterNormal, nil
	}
	return 0, fmt.Errorf("snapshot: writer priority %q: want idle or normal", s)
}

// runWriter runs fn, a background save's writer, on a goroutine of its own
// at priority p. At WriterIdle that goroutine has an OS thread of its own
// whose priority it lowers, and it never unlocks the thread: a goroutine
// that exits while locked takes its thread with it, so the lowered
// priority (which an unprivileged process cannot raise back) never returns
// to the Go runtime's pool of threads for other goroutines to run on. The
// main thread is the exception (the runtime parks it for good instead of
// ending it, and signals may still run on it): a writer that lands there
// moves to another thread, which the main thread stays locked away from
// until the writer is done. Failing to lower the priority only leaves the
// writer at the process's. lowers says beforehand which way it goes.
//
// A process that may run on one CPU alone (runtime.NumCPU, from its
// affinity mask at start) runs the writer as WriterNormal: the loop, busy
// in every cycle of a save, would leave a SCHED_IDLE writer on the same
// CPU almost nothing (a BGSAVE of 1 M keys under `taskset -c 0` took
// 5.6-11.5 s against 0.31-0.44 s at normal priority, the loop spinning).
func runWriter(p WriterPriority, fn func()) {
	if !lowers(p) {
		go fn()
		return
	}
	runLowered(lowerThread, fn)
}

// lowers reports whether runWriter runs a writer of priority p on a thread
// of its own at a lowered priority (so a rescuer could help it).
func lowers(p WriterPriority) bool { return p == WriterIdle && runtime.NumCPU() >= 2 }

// runLowered runs fn on a goroutine of its own, on an OS thread of its own
// whose priority lower lowers, as runWriter describes; on a single CPU as
// any goroutine.
func runLowered(lower func(), fn func()) {
	if runtime.NumCPU() < 2 {
		go fn()
		return
	}
	go func() {
		runtime.LockOSThread()
		if !onMainThread() {
			lower()
			fn()
			return // and the thread ends
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			runtime.LockOSThread() // another thread: this one is locked to the goroutine waiting below
			lower()
			fn()
		}()
		<-done
		runtime.UnlockOSThread()
	}()
}
