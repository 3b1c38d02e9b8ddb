package server

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/transport"
)

// Add makes t one of the loop's transports from the next cycle on: a
// listener bound at run time (CONFIG SET tls-port when the server started
// without one). Only a Waitable transport (a socket listener) may be added;
// it is closed with the others when the loop stops. Loop goroutine (a
// CONFIG SET runs in the middle of a cycle's range over the transports,
// which goes on over the slice it started with).
func (l *Loop) Add(t transport.Server) error {
	w, ok := t.(Waitable)
	if !ok || w.WaitFD() < 0 {
		return fmt.Errorf("server: %s cannot join a running loop (not a socket listener)", t.Name())
	}
	if l.parkFD < 0 {
		fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			return fmt.Errorf("server: epoll_create: %w", err)
		}
		l.parkFD = fd
	}
	wfd := w.WaitFD()
	if err := unix.EpollCtl(l.parkFD, unix.EPOLL_CTL_ADD, wfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wfd)}); err != nil {
		return fmt.Errorf("server: epoll_ctl on descriptor %d: %w", wfd, err)
	}
	l.cfg.Transports = append(l.cfg.Transports, t)
	l.pollers = append(l.pollers, t) // a FaultGuarded one keeps its own guard: Run set none for it
	if d, ok := t.(Deadliner); ok {
		l.deadliners = append(l.deadliners, d)
	}
	l.waitables = append(l.waitables, w)
	d, _ := w.(Dormant)
	l.dormant = append(l.dormant, d)
	if p, ok := w.(WaitPreparer); ok {
		l.preparers = append(l.preparers, p)
	}
	l.socketsOnly = len(l.waitables) == len(l.cfg.Transports)
	l.parkEv = make([]unix.EpollEvent, len(l.parkEv)+1) // room for the new waitable's event
	return nil
}
