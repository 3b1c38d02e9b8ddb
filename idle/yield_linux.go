package idle

import "golang.org/x/sys/unix"

// ThreadYield gives the calling OS thread's core to another runnable
// thread, with sched_yield(2) as a raw system call the Go scheduler does
// not see (it does not block): the yield for Step of a goroutine locked
// to its thread, where runtime.Gosched would hand the P to another thread
// and back.
func ThreadYield() { unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }
