package rawpoll

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// EpollWaitNow is epoll_wait(epfd, events, 0): the ready events, at once,
// never blocking (a zero timeout), made with RawSyscall6 (epoll_pwait with
// no signal mask, which every Linux architecture has). An interrupted or
// failed call reports no event and its error. events must not be empty;
// the kernel writes into it during the call and nothing else touches it.
func EpollWaitNow(epfd int, events []unix.EpollEvent) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])),
		uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// Read is read(2) on a non-blocking descriptor (EAGAIN when nothing
// waits), made with RawSyscall: a busy-polling reader's check for input.
// b must not be empty; the kernel writes into it during the call and
// nothing else touches it.
func Read(fd int, b []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// Write is write(2) on a non-blocking descriptor (EAGAIN when it has no
// room), made with RawSyscall. b must not be empty.
func Write(fd int, b []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
