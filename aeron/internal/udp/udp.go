// Package udp is the datagram socket layer of goblin's media driver: non-
// blocking UDP sockets opened with the options an Aeron channel names
// (bind and connect addresses, socket buffer sizes, multicast group,
// interface and TTL), a batch receive of up to N datagrams in one
// recvmmsg(2) (one recvfrom(2) while the socket has been found empty), a
// batch send of queued datagrams in one sendmmsg(2) (one sendto(2) for a
// single datagram), and an epoll set a parked owner waits on, which holds
// the sockets only while armed for a wait. Addresses are netip.AddrPort, so a
// datagram's source is read without allocating.
//
// Nothing here is safe for concurrent use: the driver's one goroutine owns
// every socket and batch. In steady state (sockets open, batches made)
// receiving and sending allocate nothing.
package udp

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Options describe a socket to open.
type Options struct {
	// Bind is the local address (port 0: an ephemeral one). Unset: the
	// wildcard address of Connect's family.
	Bind netip.AddrPort
	// Connect, when valid, connects the socket: sends go there, and only
	// datagrams from there are received.
	Connect netip.AddrPort
	// RcvBuf and SndBuf set SO_RCVBUF and SO_SNDBUF when non-zero.
	RcvBuf, SndBuf int
	// Group, a multicast address, is joined on Interface (by address; the
	// zero value lets the kernel choose) after binding Group's port on the
	// wildcard address with SO_REUSEADDR.
	Group     netip.Addr
	Interface netip.Addr
	// MulticastIF sets the interface multicast sends leave from, and TTL
	// (when non-zero) their time to live.
	MulticastIF netip.Addr
	TTL         int
	// ReceiveTimestamps sets SO_TIMESTAMPNS: each datagram received
	// carries the kernel's receive time (RecvBatch.Timestamp;
	// timestamps.go).
	ReceiveTimestamps bool
}

// Socket is one non-blocking UDP socket.
type Socket struct {
	fd     int
	v6     bool
	local  netip.AddrPort
	rcvBuf int
	sndBuf int
	ttl    int
	// empty records that the last batch receive found nothing: the next
	// one reads a single datagram with recvfrom(2), which costs the
	// kernel less than recvmmsg(2) (no message headers or iovecs to copy
	// in), so an owner that polls an idle socket in a loop pays less per
	// poll and notices a datagram sooner. Owned by the batch's goroutine.
	empty bool
	// timestamps: SO_TIMESTAMPNS is set (timestamps.go).
	timestamps bool
	// to is the destination a SendTo encodes into; long-lived, so a send
	// passes the kernel a pointer without allocating.
	to unix.RawSockaddrInet6
}

// Errno is a system call's error, its text as the C library's strerror
// gives it ("Address already in use"), which Aeron's clients and tests
// match exactly; Go's own texts start in lower case. errors.Is sees the
// unix.Errno.
type Errno struct{ unix.Errno }

func (e Errno) Error() string {
	s := e.Errno.Error()
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		s = string(s[0]-'a'+'A') + s[1:]
	}
	return s
}

func (e Errno) Unwrap() error { return e.Errno }

// cErr gives a unix.Errno the C library's text.
func cErr(err error) error {
	if n, ok := err.(unix.Errno); ok {
		return Errno{n}
	}
	return err
}

// ErrClosed is returned by calls on a closed socket.
var ErrClosed = errors.New("udp: socket closed")

// Open makes a socket as o says.
func Open(o Options) (*Socket, error) {
	v6 := o.Bind.Addr().Is6() && !o.Bind.Addr().Is4In6() || o.Connect.Addr().Is6() && !o.Connect.Addr().Is4In6() ||
		o.Group.Is6()
	family := unix.AF_INET
	if v6 {
		family = unix.AF_INET6
	}
	fd, err := unix.Socket(family, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_UDP)
	if err != nil {
		return nil, fmt.Errorf("udp: socket: %w", cErr(err))
	}
	s := &Socket{fd: fd, v6: v6}
	if err := s.setup(o); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return s, nil
}

func (s *Socket) setup(o Options) error {
	fd := s.fd
	bind := o.Bind
	if o.Group.IsValid() {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
			return fmt.Errorf("udp: SO_REUSEADDR: %w", err)
		}
		bind = netip.AddrPortFrom(s.wildcard(), o.Bind.Port())
	}
	if !bind.Addr().IsValid() {
		bind = netip.AddrPortFrom(s.wildcard(), bind.Port())
	}
	if o.SndBuf > 0 {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, o.SndBuf); err != nil {
			return fmt.Errorf("udp: SO_SNDBUF %d: %w", o.SndBuf, err)
		}
	}
	if o.RcvBuf > 0 {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, o.RcvBuf); err != nil {
			return fmt.Errorf("udp: SO_RCVBUF %d: %w", o.RcvBuf, err)
		}
	}
	if err := unix.Bind(fd, s.sockaddr(bind)); err != nil {
		return fmt.Errorf("udp: bind %s: %w", bind, cErr(err))
	}
	if o.Group.IsValid() {
		if err := s.join(o.Group, o.Interface); err != nil {
			return err
		}
	}
	if o.MulticastIF.IsValid() {
		if err := s.multicastIF(o.MulticastIF); err != nil {
			return err
		}
	}
	if o.TTL > 0 {
		opt, level := unix.IP_MULTICAST_TTL, unix.IPPROTO_IP
		if s.v6 {
			opt, level = unix.IPV6_MULTICAST_HOPS, unix.IPPROTO_IPV6
		}
		if err := unix.SetsockoptInt(fd, level, opt, o.TTL); err != nil {
			return fmt.Errorf("udp: multicast TTL %d: %w", o.TTL, err)
		}
		s.ttl = o.TTL
	}
	if o.ReceiveTimestamps {
		if err := s.enableTimestamps(); err != nil {
			return err
		}
	}
	if o.Connect.IsValid() {
		if err := unix.Connect(fd, s.sockaddr(o.Connect)); err != nil {
			return fmt.Errorf("udp: connect %s: %w", o.Connect, cErr(err))
		}
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return fmt.Errorf("udp: getsockname: %w", err)
	}
	s.local = fromSockaddr(sa)
	s.rcvBuf, _ = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF)
	s.sndBuf, _ = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF)
	return nil
}

func (s *Socket) wildcard() netip.Addr {
	if s.v6 {
		return netip.IPv6Unspecified()
	}
	return netip.IPv4Unspecified()
}

func (s *Socket) sockaddr(a netip.AddrPort) unix.Sockaddr {
	if s.v6 {
		return &unix.SockaddrInet6{Port: int(a.Port()), Addr: a.Addr().As16()}
	}
	return &unix.SockaddrInet4{Port: int(a.Port()), Addr: a.Addr().Unmap().As4()}
}

func (s *Socket) join(group, iface netip.Addr) error {
	if s.v6 {
		idx := 0
		if iface.IsValid() {
			var err error
			if idx, err = interfaceIndex(iface); err != nil {
				return err
			}
		}
		mreq := &unix.IPv6Mreq{Multiaddr: group.As16(), Interface: uint32(idx)}
		if err := unix.SetsockoptIPv6Mreq(s.fd, unix.IPPROTO_IPV6, unix.IPV6_JOIN_GROUP, mreq); err != nil {
			return fmt.Errorf("udp: join %s: %w", group, err)
		}
		return nil
	}
	mreq := &unix.IPMreq{Multiaddr: group.As4()}
	if iface.IsValid() {
		mreq.Interface = iface.Unmap().As4()
	}
	if err := unix.SetsockoptIPMreq(s.fd, unix.IPPROTO_IP, unix.IP_ADD_MEMBERSHIP, mreq); err != nil {
		return fmt.Errorf("udp: join %s on %s: %w", group, iface, err)
	}
	return nil
}

func (s *Socket) multicastIF(iface netip.Addr) error {
	if s.v6 {
		idx, err := interfaceIndex(iface)
		if err != nil {
			return err
		}
		if err := unix.SetsockoptInt(s.fd, unix.IPPROTO_IPV6, unix.IPV6_MULTICAST_IF, idx); err != nil {
			return fmt.Errorf("udp: IPV6_MULTICAST_IF %s: %w", iface, err)
		}
		return nil
	}
	if err := unix.SetsockoptInet4Addr(s.fd, unix.IPPROTO_IP, unix.IP_MULTICAST_IF, iface.Unmap().As4()); err != nil {
		return fmt.Errorf("udp: IP_MULTICAST_IF %s: %w", iface, err)
	}
	return nil
}

// FD is the socket's descriptor (for an epoll set).
func (s *Socket) FD() int { return s.fd }

// LocalAddr is the address the socket is bound to.
func (s *Socket) LocalAddr() netip.AddrPort { return s.local }

// RcvBuf and SndBuf are the socket buffer sizes the kernel reports (it
// doubles what was asked).
func (s *Socket) RcvBuf() int { return s.rcvBuf }

// SndBuf is the socket's send buffer size.
func (s *Socket) SndBuf() int { return s.sndBuf }

// TTL is the multicast TTL set on the socket (0: the OS default).
func (s *Socket) TTL() int { return s.ttl }

// Close closes the socket.
func (s *Socket) Close() error {
	if s.fd < 0 {
		return nil
	}
	err := unix.Close(s.fd)
	s.fd = -1
	return err
}

// Every socket call here passes MSG_DONTWAIT, so none can block, and each
// is made with RawSyscall6 (directly, so the pointers passed as uintptr
// stay alive), which the Go scheduler does not see. With Syscall6 a
// busy-polling owner is "in a system call" most of the time as far as
// the runtime knows, and that costs its neighbours: every 10 ms the
// runtime's monitor thread (sysmon) finds the owner's goroutine running
// too long, takes its processor away in the middle of such a call, and,
// having taken one, goes back to waking every 20 µs for the next few
// milliseconds. On two cores each of those wake-ups preempts a spinning
// thread: on the 2-vCPU VM a thread of the owner's own process other than
// the owner ran during 92-93 % of the round trips slower than 3x the
// median (thousands a second, the raw socket floor's included), and raw
// calls took the two-namespace Aeron UDP ping-pong's slow round trips
// from 5-8 % to about 1 % (docs/results/transport-latency.md, "Tails on this VM"). Under
// three extra CPU hogs both kinds give millisecond p99s (2.6-2.7 ms with
// Syscall6, 1.2-2.2 ms raw, alternated), so raw costs nothing there either.

// Send sends b on a connected socket and returns the bytes sent: 0 when
// the kernel has no room (EAGAIN) or the peer's port was unreachable (an
// earlier datagram's ICMP error, reported once), as for a Java
// DatagramChannel. Any other error is returned.
func (s *Socket) Send(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(s.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)),
		unix.MSG_DONTWAIT, 0, 0)
	return sent(int(n), e)
}

// SendTo sends b to addr; results as Send.
func (s *Socket) SendTo(b []byte, to netip.AddrPort) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	l := s.encode(&s.to, to)
	n, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(s.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)),
		unix.MSG_DONTWAIT, uintptr(unsafe.Pointer(&s.to)), uintptr(l))
	return sent(int(n), e)
}

func sent(n int, e syscall.Errno) (int, error) {
	switch e {
	case 0:
		return n, nil
	case unix.EAGAIN, unix.ECONNREFUSED, unix.ENOBUFS:
		return 0, nil
	}
	return 0, e
}

// encode writes addr into raw (as the socket's family) and returns its
// length.
func (s *Socket) encode(raw *unix.RawSockaddrInet6, a netip.AddrPort) int {
	p := a.Port()
	if s.v6 {
		raw.Family = unix.AF_INET6
		raw.Port = p<<8 | p>>8
		raw.Addr = a.Addr().As16()
		raw.Flowinfo, raw.Scope_id = 0, 0
		return unix.SizeofSockaddrInet6
	}
	r4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(raw))
	r4.Family = unix.AF_INET
	r4.Port = p<<8 | p>>8
	r4.Addr = a.Addr().Unmap().As4()
	r4.Zero = [8]uint8{}
	return unix.SizeofSockaddrInet4
}

func fromSockaddr(sa unix.Sockaddr) netip.AddrPort {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(a.Addr), uint16(a.Port))
	}
	return netip.AddrPort{}
}

// decode reads a raw socket address the kernel wrote (either family).
func decode(raw *unix.RawSockaddrInet6) netip.AddrPort {
	switch raw.Family {
	case unix.AF_INET:
		r4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(raw))
		return netip.AddrPortFrom(netip.AddrFrom4(r4.Addr), r4.Port<<8|r4.Port>>8)
	case unix.AF_INET6:
		a := netip.AddrFrom16(raw.Addr)
		if a.Is4In6() {
			a = a.Unmap()
		}
		return netip.AddrPortFrom(a, raw.Port<<8|raw.Port>>8)
	}
	return netip.AddrPort{}
}

// RecvBatch receives up to its capacity of datagrams in one recvmmsg(2).
type RecvBatch struct {
	msgs    []unix.Mmsghdr
	iovs    []unix.Iovec
	names   []unix.RawSockaddrInet6
	bufs    [][]byte
	ctrl    [][]byte // control messages (receive timestamps; timestamps.go)
	ctlSet  bool     // some Controllen may be non-zero (the last Recv was of a timestamping socket)
	n       int
	namelen uint32 // recvfrom's address length, in and out
}

// NewRecvBatch makes a batch of n datagram buffers of size bytes each.
func NewRecvBatch(n, size int) *RecvBatch {
	b := &RecvBatch{msgs: make([]unix.Mmsghdr, n), iovs: make([]unix.Iovec, n),
		names: make([]unix.RawSockaddrInet6, n), bufs: make([][]byte, n), ctrl: make([][]byte, n)}
	mem := make([]byte, n*size)
	ctrl := make([]byte, n*controlLength)
	for i := range n {
		b.bufs[i] = mem[i*size : (i+1)*size : (i+1)*size]
		b.ctrl[i] = ctrl[i*controlLength : (i+1)*controlLength : (i+1)*controlLength]
		b.msgs[i].Hdr.Control = &b.ctrl[i][0]
		b.iovs[i] = unix.Iovec{Base: &b.bufs[i][0], Len: uint64(size)}
		b.msgs[i].Hdr.Iov = &b.iovs[i]
		b.msgs[i].Hdr.Iovlen = 1
		b.msgs[i].Hdr.Name = (*byte)(unsafe.Pointer(&b.names[i]))
	}
	return b
}

// Recv reads what s has waiting, up to the batch's capacity, without
// blocking, and returns how many datagrams came (0 when none). A pending
// ICMP error (ECONNREFUSED) reads as none. After a Recv of s that found
// nothing, the next one reads at most one datagram, with recvfrom(2): an
// idle socket polled in a loop costs less that way, and a socket that
// receives again is read in batches from the Recv after.
func (b *RecvBatch) Recv(s *Socket) (int, error) {
	if s.empty && !s.timestamps {
		return b.recvOne(s)
	}
	for i := range b.msgs {
		b.msgs[i].Hdr.Namelen = unix.SizeofSockaddrInet6
		b.msgs[i].Hdr.Flags = 0
	}
	if s.timestamps || b.ctlSet {
		b.setControl(s.timestamps)
	}
	r, _, e := unix.RawSyscall6(unix.SYS_RECVMMSG, uintptr(s.fd), uintptr(unsafe.Pointer(&b.msgs[0])),
		uintptr(len(b.msgs)), unix.MSG_DONTWAIT, 0, 0)
	return b.received(s, int(r), e)
}

// recvOne reads one datagram with recvfrom(2) into the batch's first
// buffer. MSG_TRUNC makes the kernel return the datagram's real length, so
// a datagram longer than the buffer is seen as truncated, as recvmmsg
// reports it.
func (b *RecvBatch) recvOne(s *Socket) (int, error) {
	buf := b.bufs[0]
	b.namelen = unix.SizeofSockaddrInet6
	r, _, e := unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(s.fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)),
		unix.MSG_DONTWAIT|unix.MSG_TRUNC, uintptr(unsafe.Pointer(&b.names[0])), uintptr(unsafe.Pointer(&b.namelen)))
	if e == 0 {
		b.msgs[0].Hdr.Flags = 0
		b.msgs[0].Hdr.Controllen = 0
		b.msgs[0].Len = uint32(r)
		if int(r) > len(buf) {
			b.msgs[0].Hdr.Flags = unix.MSG_TRUNC
			b.msgs[0].Len = uint32(len(buf))
		}
		r = 1
	}
	return b.received(s, int(r), e)
}

// received ends a Recv of s: r datagrams came, or e says why none did.
func (b *RecvBatch) received(s *Socket, r int, e syscall.Errno) (int, error) {
	b.n = 0
	switch e {
	case 0:
		b.n = r
	case unix.EAGAIN, unix.ECONNREFUSED, unix.EINTR:
	default:
		return 0, e
	}
	s.empty = b.n == 0
	return b.n, nil
}

// Datagram is the i-th datagram of the last Recv. A datagram longer than
// the buffer arrives cut short: Truncated says so.
func (b *RecvBatch) Datagram(i int) []byte { return b.bufs[i][:b.msgs[i].Len] }

// Truncated reports that the i-th datagram did not fit its buffer.
func (b *RecvBatch) Truncated(i int) bool { return b.msgs[i].Hdr.Flags&unix.MSG_TRUNC != 0 }

// From is the i-th datagram's source.
func (b *RecvBatch) From(i int) netip.AddrPort { return decode(&b.names[i]) }

// SendBatch queues datagrams and sends them in one sendmmsg(2).
type SendBatch struct {
	msgs  []unix.Mmsghdr
	iovs  []unix.Iovec
	names []unix.RawSockaddrInet6
	n     int
}

// NewSendBatch makes a batch of up to n datagrams.
func NewSendBatch(n int) *SendBatch {
	b := &SendBatch{msgs: make([]unix.Mmsghdr, n), iovs: make([]unix.Iovec, n), names: make([]unix.RawSockaddrInet6, n)}
	for i := range n {
		b.msgs[i].Hdr.Iov = &b.iovs[i]
		b.msgs[i].Hdr.Iovlen = 1
	}
	return b
}

// Len is the number of queued datagrams; Full reports no more room.
func (b *SendBatch) Len() int { return b.n }

// Full reports whether the batch holds as many datagrams as it can.
func (b *SendBatch) Full() bool { return b.n == len(b.msgs) }

// Add queues p (which must stay untouched until Flush) for a connected
// socket, or to addr when addr is valid.
func (b *SendBatch) Add(s *Socket, p []byte, to netip.AddrPort) {
	i := b.n
	b.iovs[i] = unix.Iovec{Base: &p[0], Len: uint64(len(p))}
	if to.IsValid() {
		l := s.encode(&b.names[i], to)
		b.msgs[i].Hdr.Name = (*byte)(unsafe.Pointer(&b.names[i]))
		b.msgs[i].Hdr.Namelen = uint32(l)
	} else {
		b.msgs[i].Hdr.Name = nil
		b.msgs[i].Hdr.Namelen = 0
	}
	b.n++
}

// Flush sends the queued datagrams on s and returns how many the kernel
// took, in order; the rest are dropped from the batch (the caller sends
// them again from its log, as after a short send). An ICMP error or a full
// socket buffer ends the batch early without an error. A single datagram
// goes with sendto(2), which the kernel does with less work than a
// sendmmsg(2) of one.
func (b *SendBatch) Flush(s *Socket) (int, error) {
	switch b.n {
	case 0:
		return 0, nil
	case 1:
		b.n = 0
		m := &b.msgs[0]
		r, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(s.fd), uintptr(unsafe.Pointer(b.iovs[0].Base)),
			uintptr(b.iovs[0].Len), unix.MSG_DONTWAIT, uintptr(unsafe.Pointer(m.Hdr.Name)), uintptr(m.Hdr.Namelen))
		if e != 0 {
			return sent(0, e)
		}
		m.Len = uint32(r)
		return 1, nil
	}
	r, _, e := unix.RawSyscall6(unix.SYS_SENDMMSG, uintptr(s.fd), uintptr(unsafe.Pointer(&b.msgs[0])), uintptr(b.n),
		unix.MSG_DONTWAIT, 0, 0)
	b.n = 0
	n, err := sent(int(r), e)
	return n, err
}

// Sent is the length the kernel reported for the i-th datagram of the last
// Flush.
func (b *SendBatch) Sent(i int) int { return int(b.msgs[i].Len) }

// Poller is an epoll set of sockets that an owner parks on: it polls
// readable when one of them has a datagram waiting, but only while armed.
// A socket in an epoll set costs every datagram that arrives for it a
// wake-up callback in the sender's system call (the socket's wait queue
// is not empty; with the set nested in other sets, one callback per
// level), on the path of a round trip whether or not anyone waits; an
// owner that busy-polls its sockets never waits, so the sockets join the
// set only when it is armed (Arm, before a wait) and leave it when
// disarmed. Arming reports a socket that is readable already, so a
// datagram that came before the Arm is not missed.
//
// Add, Remove, Arm, Disarm and Close may be called from any goroutine
// (mu orders them); the set's descriptor is the same for the Poller's
// life.
type Poller struct {
	fd int
	// armed is written under mu; read without it (Armed) by the owner's
	// duty cycle, which only decides whether to look closer.
	armed atomic.Bool
	mu    sync.Mutex
	socks []*Socket // the sockets the set holds while armed (under mu)
	// arms counts Arm calls (DisarmIf's generation): written under mu,
	// read without it by the owner's duty cycle while armed.
	arms atomic.Uint64
	// Park's timeout and event buffer, long-lived so a park allocates nothing.
	ts unix.Timespec
	ev [1]unix.EpollEvent
}

// NewPoller makes an empty, disarmed set.
func NewPoller() (*Poller, error) {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("udp: epoll_create: %w", err)
	}
	return &Poller{fd: fd}, nil
}

// FD is the epoll descriptor.
func (p *Poller) FD() int { return p.fd }

// Add makes s one of the set's sockets (watched for readability while
// the set is armed).
func (p *Poller) Add(s *Socket) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.armed.Load() {
		if err := p.watch(s); err != nil {
			return err
		}
	}
	p.socks = append(p.socks, s)
	return nil
}

func (p *Poller) watch(s *Socket) error {
	if err := unix.EpollCtl(p.fd, unix.EPOLL_CTL_ADD, s.fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(s.fd)}); err != nil {
		return fmt.Errorf("udp: epoll_ctl add %d: %w", s.fd, err)
	}
	return nil
}

// Remove takes s out of the set (before s is closed).
func (p *Poller) Remove(s *Socket) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, x := range p.socks {
		if x == s {
			if p.armed.Load() {
				unix.EpollCtl(p.fd, unix.EPOLL_CTL_DEL, s.fd, nil)
			}
			p.socks = append(p.socks[:i], p.socks[i+1:]...)
			return
		}
	}
}

// Arm puts the sockets in the set, if they are not there yet: from now on
// the set polls readable while one of them has a datagram waiting,
// including one that came before. Call it before waiting on FD. It
// returns the arm's generation, for DisarmIf.
func (p *Poller) Arm() (uint64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	gen := p.arms.Add(1)
	if p.armed.Load() {
		return gen, nil
	}
	for i, s := range p.socks {
		if err := p.watch(s); err != nil {
			for _, w := range p.socks[:i] {
				unix.EpollCtl(p.fd, unix.EPOLL_CTL_DEL, w.fd, nil)
			}
			return gen, err
		}
	}
	p.armed.Store(true)
	return gen, nil
}

// Armed reports whether the sockets are in the set.
func (p *Poller) Armed() bool { return p.armed.Load() }

// Arms is the generation of the last Arm.
func (p *Poller) Arms() uint64 { return p.arms.Load() }

// DisarmIf takes the sockets out of the set unless someone armed it again
// since the Arm of generation gen (whoever did is about to wait): the
// set then no longer polls readable, and datagrams cost no wake-up. It
// reports whether it disarmed.
func (p *Poller) DisarmIf(gen uint64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.armed.Load() || p.arms.Load() != gen {
		return false
	}
	for _, s := range p.socks {
		unix.EpollCtl(p.fd, unix.EPOLL_CTL_DEL, s.fd, nil)
	}
	p.armed.Store(false)
	return true
}

// Ready waits up to timeout (0: not at all, rounded up to a millisecond
// otherwise) for the set to poll readable and reports whether it does; an
// interrupted wait starts again.
func (p *Poller) Ready(timeout time.Duration) (bool, error) {
	ms := int((timeout + time.Millisecond - 1) / time.Millisecond)
	var ev [1]unix.EpollEvent
	for {
		n, err := unix.EpollWait(p.fd, ev[:], ms)
		if err == unix.EINTR {
			continue
		}
		return n > 0, err
	}
}

// Close closes the epoll descriptor.
func (p *Poller) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fd < 0 {
		return nil
	}
	err := unix.Close(p.fd)
	p.fd = -1
	p.armed.Store(false)
	return err
}

func interfaceIndex(a netip.Addr) (int, error) {
	ifs, err := interfaces()
	if err != nil {
		return 0, err
	}
	for _, i := range ifs {
		for _, x := range i.addrs {
			if x == a {
				return i.index, nil
			}
		}
	}
	return 0, fmt.Errorf("udp: no interface has address %s", a)
}

// Park blocks the calling OS thread until a socket of the set is readable
// (the set armed) or d passes, whichever comes first, with epoll_pwait2 as a raw system
// call the Go scheduler does not see (as aeron.ThreadSleep parks): use it
// on a goroutine locked to its thread, for short parks. It reports false
// when the kernel has no epoll_pwait2 (before Linux 5.11); the caller then
// sleeps instead.
func (p *Poller) Park(d time.Duration) bool {
	if noPwait2.Load() {
		return false
	}
	p.ts = unix.NsecToTimespec(int64(d))
	_, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(p.fd), uintptr(unsafe.Pointer(&p.ev[0])), 1,
		uintptr(unsafe.Pointer(&p.ts)), 0, 0)
	if e == unix.ENOSYS {
		noPwait2.Store(true)
		return false
	}
	return true
}

var noPwait2 atomic.Bool
