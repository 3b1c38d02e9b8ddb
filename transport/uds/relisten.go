package uds

// This file moves a TCP listener's listening socket at run time (CONFIG SET
// tls-port, as Redis 7.0 allows): the new socket is bound before the old
// one closes, so a port that cannot be bound changes nothing, and the
// connected clients stay, as Redis's changeListenPort keeps them.

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Listening reports whether the listener accepts clients (it has a
// listening socket). Loop goroutine.
func (s *Server) Listening() bool { return s.lfd >= 0 }

// Relisten binds address (host:port, for a TCP listener only) and accepts
// on it from now on instead of the current address; the connected clients
// are not touched (port 0 lets the kernel choose; Addr tells which).
// Relisten("") closes the listening socket: no more clients are accepted
// until a later Relisten. On an error nothing changed. Loop goroutine.
func (s *Server) Relisten(address string) error {
	if s.closed {
		return fmt.Errorf("%w: the listener is closed", ErrConfig)
	}
	if s.cfg.Network != "tcp" {
		return fmt.Errorf("%w: only a TCP listener moves (this one is %s)", ErrConfig, s.cfg.Network)
	}
	oldFD, oldAddr, oldCfg := s.lfd, s.addr, s.cfg.Address
	if address == "" {
		s.stopListening(oldFD)
		return nil
	}
	s.lfd, s.cfg.Address = -1, address
	err := s.listenTCP()
	if err == nil {
		err = unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, s.lfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(s.lfd)})
	}
	if err != nil {
		if s.lfd >= 0 {
			unix.Close(s.lfd)
		}
		s.lfd, s.addr, s.cfg.Address = oldFD, oldAddr, oldCfg
		return err
	}
	s.stopListening(oldFD)
	return nil
}

// stopListening closes the listening socket fd (−1: none), leaving the
// clients; s.lfd becomes −1 when it was fd.
func (s *Server) stopListening(fd int) {
	if fd < 0 {
		return
	}
	unix.EpollCtl(s.epfd, unix.EPOLL_CTL_DEL, fd, nil)
	unix.Close(fd)
	if s.lfd == fd {
		s.lfd = -1
	}
}
