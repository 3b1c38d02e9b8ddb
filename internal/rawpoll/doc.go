// Package rawpoll makes the non-blocking polls a busy-polling loop repeats
// on every spin (epoll_wait with a zero timeout, read and write on a
// non-blocking descriptor) raw system calls, which the Go scheduler does
// not see.
//
// A goroutine that spins on ordinary system calls (syscall.Syscall, which
// x/sys/unix uses) is, to the runtime, "in a system call" most of the
// time: its monitor thread (sysmon) keeps finding it there, takes its
// processor and then wakes every 20 µs for milliseconds, each wake-up a
// thread that preempts a spinner on a two-core machine
// (docs/results/transport-latency.md, "Tails on this VM"). A call that never blocks loses nothing by skipping
// the scheduler's bookkeeping; a call that may block must never come here.
package rawpoll
