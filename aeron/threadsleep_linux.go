package aeron

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ThreadSleep blocks the calling OS thread for d with nanosleep(2), as a
// raw system call the Go scheduler does not see: a goroutine locked to its
// thread (runtime.LockOSThread) that parks with it wakes once per park, as
// a Java or C agent thread does, where time.Sleep on a locked thread costs
// a timer on another thread and a hand-off back (three to four context
// switches). Use it only on locked threads and for short parks (its
// processor is unavailable to other goroutines meanwhile): a BackoffIdle's
// Park on a dedicated polling thread.
func ThreadSleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
}
