package uds

// This file binds and releases the listening socket: a Unix socket file
// (stale ones replaced, live ones left alone) or a TCP address.

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Errors returned by Listen, wrapped with details.
var (
	// ErrAddrInUse reports that another live server answers on the socket
	// path or already holds the TCP address.
	ErrAddrInUse = errors.New("socket transport: address in use")
	// ErrConfig reports an invalid Config.
	ErrConfig = errors.New("socket transport: bad configuration")
)

// Listen binds and listens. A stale Unix socket file (no server answers on
// it) is removed; a live one gives ErrAddrInUse.
func Listen(cfg Config) (*Server, error) {
	if cfg.Handler == nil {
		return nil, fmt.Errorf("%w: no Handler", ErrConfig)
	}
	cfg.ensureDefaults()
	s := &Server{cfg: cfg, lfd: -1, epfd: -1, events: make([]unix.EpollEvent, eventBatch), log: cfg.Logger,
		rbuf: make([]byte, 0, sharedReadSize), wbuf: make([]byte, 0, sharedReadSize), budget: cfg.Budget}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	var err error
	if cfg.TLS != nil && cfg.Network != "tcp" {
		return nil, fmt.Errorf("%w: TLS is served on tcp only", ErrConfig)
	}
	switch cfg.Network {
	case "unix":
		s.name = "uds/" + cfg.Proto.String()
		err = s.listenUnix()
	case "tcp":
		s.name = "tcp/" + cfg.Proto.String()
		if cfg.TLS != nil {
			s.name = "tls/" + cfg.Proto.String()
			if s.tls, err = newTLSBridges(cfg.TLS, s.log, s.name); err != nil {
				return nil, fmt.Errorf("uds: eventfd: %w", err)
			}
		}
		err = s.listenTCP()
	default:
		return nil, fmt.Errorf("%w: network %q (want unix or tcp)", ErrConfig, cfg.Network)
	}
	if err != nil {
		s.release()
		return nil, err
	}
	if s.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		s.release()
		return nil, fmt.Errorf("uds: epoll_create: %w", err)
	}
	if err = unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, s.lfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(s.lfd)}); err != nil {
		s.release()
		return nil, fmt.Errorf("uds: epoll_ctl: %w", err)
	}
	if s.tls != nil {
		if err = unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, s.tls.doorbell, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(s.tls.doorbell)}); err != nil {
			s.release()
			return nil, fmt.Errorf("uds: epoll_ctl: %w", err)
		}
	}
	s.budget.join(s)
	return s, nil
}

func (s *Server) listenUnix() error {
	path := s.cfg.Address
	if len(path) >= len(unix.RawSockaddrUnix{}.Path) {
		return fmt.Errorf("%w: socket path %q is longer than %d bytes", ErrConfig, path, len(unix.RawSockaddrUnix{}.Path)-1)
	}
	if err := prepareSocketDir(path, s.log); err != nil {
		return err
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return fmt.Errorf("%w: %s exists and is not a socket", ErrAddrInUse, path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return fmt.Errorf("%w: a server answers on %s", ErrAddrInUse, path)
		}
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("uds: removing stale socket %s: %w", path, err)
		}
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("uds: socket: %w", err)
	}
	s.lfd = fd
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		if errors.Is(err, unix.EADDRINUSE) {
			return fmt.Errorf("%w: %s: %w", ErrAddrInUse, path, err)
		}
		return fmt.Errorf("uds: bind %s: %w", path, err)
	}
	s.ownsPath = true
	if err := os.Chmod(path, s.cfg.SocketMode); err != nil {
		return fmt.Errorf("uds: chmod %s: %w", path, err)
	}
	if err := unix.Listen(fd, 4096); err != nil {
		return fmt.Errorf("uds: listen %s: %w", path, err)
	}
	s.addr = path
	return nil
}

func (s *Server) listenTCP() error {
	host, port, err := net.SplitHostPort(s.cfg.Address)
	if err != nil {
		return fmt.Errorf("%w: tcp address %q: %w", ErrConfig, s.cfg.Address, err)
	}
	if host == "" {
		host = "127.0.0.1" // loopback unless told otherwise
	}
	ip := net.ParseIP(host)
	if ip == nil {
		ips, err := net.LookupIP(host)
		if err != nil || len(ips) == 0 {
			return fmt.Errorf("%w: tcp host %q: %w", ErrConfig, host, err)
		}
		ip = ips[0]
	}
	pn, err := strconv.Atoi(port)
	if err != nil || pn < 0 || pn > 65535 {
		return fmt.Errorf("%w: tcp port %q", ErrConfig, port)
	}
	var sa unix.Sockaddr
	family := unix.AF_INET
	if ip4 := ip.To4(); ip4 != nil {
		a := &unix.SockaddrInet4{Port: pn}
		copy(a.Addr[:], ip4)
		sa = a
	} else {
		family = unix.AF_INET6
		a := &unix.SockaddrInet6{Port: pn}
		copy(a.Addr[:], ip.To16())
		sa = a
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("tcp: socket: %w", err)
	}
	s.lfd = fd
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		return fmt.Errorf("tcp: SO_REUSEADDR: %w", err)
	}
	if family == unix.AF_INET6 {
		// IPv6 only, as Redis's anetV6Only: a dual-stack [::]:PORT would
		// also take 0.0.0.0:PORT, so redis.conf's default "bind * -::*"
		// (both wildcards on one port) failed with address in use.
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1); err != nil {
			return fmt.Errorf("tcp: IPV6_V6ONLY: %w", err)
		}
	}
	if err := unix.Bind(fd, sa); err != nil {
		if errors.Is(err, unix.EADDRINUSE) {
			return fmt.Errorf("%w: %s: %w", ErrAddrInUse, s.cfg.Address, err)
		}
		return fmt.Errorf("tcp: bind %s: %w", s.cfg.Address, err)
	}
	if err := unix.Listen(fd, 4096); err != nil {
		return fmt.Errorf("tcp: listen %s: %w", s.cfg.Address, err)
	}
	got, err := unix.Getsockname(fd)
	if err != nil {
		return fmt.Errorf("tcp: getsockname: %w", err)
	}
	switch a := got.(type) {
	case *unix.SockaddrInet4:
		s.addr = net.JoinHostPort(net.IP(a.Addr[:]).String(), strconv.Itoa(a.Port))
	case *unix.SockaddrInet6:
		s.addr = net.JoinHostPort(net.IP(a.Addr[:]).String(), strconv.Itoa(a.Port))
	}
	return nil
}

func (s *Server) closeListener() {
	if s.lfd >= 0 {
		unix.Close(s.lfd)
		s.lfd = -1
	}
	if s.ownsPath {
		s.ownsPath = false
		os.Remove(s.cfg.Address)
	}
}

func (s *Server) release() {
	s.closeListener()
	if s.tls != nil {
		s.tls.close()
	}
	if s.epfd >= 0 {
		unix.Close(s.epfd)
		s.epfd = -1
	}
}
