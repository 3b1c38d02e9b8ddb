package snapshot

import "golang.org/x/sys/unix"

// lowerThread makes the calling thread SCHED_IDLE, or nice 19 where the
// kernel refuses that (a seccomp filter denying sched_setattr, say).
// The thread id 0 is the calling thread in both calls.
func lowerThread() {
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}
	if unix.SchedSetAttr(0, &attr, 0) == nil {
		return
	}
	_ = unix.Setpriority(unix.PRIO_PROCESS, 0, 19) // a thread id: this thread only, on Linux
}

// onMainThread reports whether the calling thread is the process's first
// (its thread id is the process id).
func onMainThread() bool { return unix.Gettid() == unix.Getpid() }
