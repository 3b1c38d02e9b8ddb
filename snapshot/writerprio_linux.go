package snapshot

import (
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// lowerThread makes the calling thread SCHED_IDLE, or nice 19 where the
// kernel refuses that (a seccomp filter denying sched_setattr, say).
// The thread id 0 is the calling thread in both calls.
func lowerThread() {
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}
	if unix.SchedSetAttr(0, &attr, 0) == nil {
		return
	}
	lowerThreadNice()
}

// lowerThreadNice gives the calling thread nice 19, the lowest normal
// priority (thread id 0: this thread only, on Linux).
func lowerThreadNice() { _ = unix.Setpriority(unix.PRIO_PROCESS, 0, 19) }

// onMainThread reports whether the calling thread is the process's first
// (its thread id is the process id).
func onMainThread() bool { return unix.Gettid() == unix.Getpid() }

// The futex operations (linux/futex.h), private to this process.
const (
	futexWaitPrivate = 0 | 128 // FUTEX_WAIT | FUTEX_PRIVATE_FLAG
	futexWakePrivate = 1 | 128 // FUTEX_WAKE | FUTEX_PRIVATE_FLAG
)

// futexWait sleeps while *addr holds val, until futexWake or a signal; a
// blocking system call, so the Go runtime hands the thread's P on.
func futexWait(addr *atomic.Uint32, val uint32) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWaitPrivate, uintptr(val), 0, 0, 0)
}

// futexWake wakes a thread sleeping in futexWait on addr. It does not
// block: raw, so the loop calling it does not pass through the scheduler.
func futexWake(addr *atomic.Uint32) {
	unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWakePrivate, 1, 0, 0, 0)
}
