package uds

// This file is the server side of the socket transports: a listener on a
// Unix socket or a TCP port whose clients are non-blocking sockets watched
// by one epoll instance, polled by the store loop. There is no goroutine
// per connection: Poll accepts, reads, executes (through the Handler,
// inline) and writes, all on the loop goroutine.

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/target"
	"github.com/goblin-kv/goblin/transport"
)

// Errors returned by Listen, wrapped with details.
var (
	// ErrAddrInUse reports that another live server answers on the socket
	// path or already holds the TCP address.
	ErrAddrInUse = errors.New("uds: address in use")
	// ErrConfig reports an invalid Config.
	ErrConfig = errors.New("uds: bad configuration")
)

// Defaults for the zero values of Config.
const (
	DefaultMaxClients = 10000
	DefaultMaxOutput  = 32 << 20
	DefaultMaxInput   = 64 << 20
	DefaultSocketMode = os.FileMode(0o660)
	DefaultCheckEvery = 16
	// DefaultStallTimeout is how long a client may leave MaxOutput bytes of
	// replies unread before it is disconnected.
	DefaultStallTimeout = 5 * time.Second
	DefaultReadBufSize  = 16 << 10
	// shrinkAbove is the buffer capacity above which an emptied input or
	// output buffer is dropped rather than kept, so one large value does
	// not pin megabytes per client.
	shrinkAbove = 256 << 10
	// readBudget bounds the bytes read from one client per readiness
	// event, so one fast sender cannot starve the others.
	readBudget = 1 << 20
	// minChunk and maxChunk bound the request bytes handed to the Handler
	// at once (see serve).
	minChunk = 256
	maxChunk = 16 << 10
	// scanEvery is how often Poll looks for idle and stalled clients.
	scanEvery = 100 * time.Millisecond
	// acceptBatch bounds the clients accepted per readiness event.
	acceptBatch = 64
	// eventBatch is the number of epoll events taken per check.
	eventBatch = 256
)

// Handler executes the requests of one transport's clients. The server
// package adapts the command engine to it; tests use small fakes.
type Handler interface {
	// Open returns the state of a newly accepted client that speaks p.
	Open(p proto.Protocol) Session
}

// Session is one client's request state.
type Session interface {
	// Serve consumes every complete request at the start of in and appends
	// the replies, in order, to out. It returns the bytes consumed, the
	// extended out, and whether the connection must be closed once the
	// replies are written (QUIT, a protocol error).
	Serve(in, out []byte) (consumed int, reply []byte, closeConn bool)
	// Close releases the session when its client goes away.
	Close()
}

// Config describes one listener. Network and Address and Handler are
// required; every other zero value picks the default.
type Config struct {
	// Network is "unix" or "tcp".
	Network string
	// Address is the socket path (unix) or host:port (tcp; port 0 picks a
	// free port, see Server.Addr).
	Address string
	// Proto is the protocol the listener's clients speak.
	Proto proto.Protocol
	// Handler executes the requests.
	Handler Handler
	// MaxClients caps connected clients; further clients are told so (RESP)
	// and closed. Default DefaultMaxClients.
	MaxClients int
	// MaxOutput caps the reply bytes queued for one client. At the cap the
	// server stops reading and executing the client's requests until it
	// reads its replies; a client that leaves the cap unread for
	// StallTimeout is disconnected as a slow consumer. Replies may pass the
	// cap by what one small batch of requests produces. Default
	// DefaultMaxOutput.
	MaxOutput int
	// StallTimeout: see MaxOutput. Default DefaultStallTimeout.
	StallTimeout time.Duration
	// MaxInput caps the bytes of one incomplete request held for a client;
	// past it the client is disconnected. Default DefaultMaxInput.
	MaxInput int
	// IdleTimeout disconnects clients silent for that long; 0 never does.
	IdleTimeout time.Duration
	// SocketMode is the Unix socket file's permission bits. Default 0660.
	SocketMode os.FileMode
	// CheckEvery is how many Poll calls pass between two epoll checks
	// while the sockets are quiet (while they are busy, every Poll checks,
	// and the loop asks for a check whenever it goes idle). Default
	// DefaultCheckEvery; 1 checks on every Poll.
	CheckEvery int
	// Logger receives disconnect reasons at debug and warn level; nil
	// discards them.
	Logger *slog.Logger
}

// ConfigFor fills Network, Address and Proto from a uds or tcp target.
func ConfigFor(t target.Target) (Config, error) {
	c := Config{Proto: t.Proto}
	switch t.Scheme {
	case target.UDS:
		c.Network, c.Address = "unix", t.Path
	case target.TCP:
		c.Network, c.Address = "tcp", t.Address
	default:
		return c, fmt.Errorf("%w: scheme %q is not uds or tcp", ErrConfig, t.Scheme)
	}
	for k := range t.Params {
		if k != "mode" {
			return c, fmt.Errorf("%w: unknown parameter %q in %s", ErrConfig, k, t)
		}
	}
	if m, ok := t.Params["mode"]; ok {
		if t.Scheme != target.UDS {
			return c, fmt.Errorf("%w: mode applies to uds targets only", ErrConfig)
		}
		v, err := strconv.ParseUint(m, 8, 32)
		if err != nil || v > 0o777 {
			return c, fmt.Errorf("%w: mode %q is not octal permission bits", ErrConfig, m)
		}
		c.SocketMode = os.FileMode(v)
	}
	return c, nil
}

func (c *Config) ensureDefaults() {
	if c.MaxClients <= 0 {
		c.MaxClients = DefaultMaxClients
	}
	if c.MaxOutput <= 0 {
		c.MaxOutput = DefaultMaxOutput
	}
	if c.MaxInput <= 0 {
		c.MaxInput = DefaultMaxInput
	}
	if c.SocketMode == 0 {
		c.SocketMode = DefaultSocketMode
	}
	if c.CheckEvery <= 0 {
		c.CheckEvery = DefaultCheckEvery
	}
	if c.StallTimeout <= 0 {
		c.StallTimeout = DefaultStallTimeout
	}
}

// Stats are the transport's own counters (the command engine counts
// requests). The loop owns them; Server.Stats copies them out.
type Stats struct {
	Clients        int64 // connected now
	Accepted       int64 // clients accepted since start
	Rejected       int64 // clients refused because of MaxClients
	SlowConsumers  int64 // clients disconnected because of MaxOutput
	InputTooLarge  int64 // clients disconnected because of MaxInput
	IdleTimeouts   int64 // clients disconnected because of IdleTimeout
	BytesIn        int64
	BytesOut       int64
	EpollChecks    int64 // epoll_wait calls made by Poll
	ProtocolCloses int64 // connections the handler asked to close
}

// Server is a listening socket transport. Its methods other than Addr and
// Name must be called from the loop goroutine only.
type Server struct {
	cfg      Config
	name     string
	addr     string // resolved address (the path, or host:port with the real port)
	lfd      int
	epfd     int
	conns    []*conn // indexed by fd
	events   []unix.EpollEvent
	cycles   int
	hot      bool // the last check found events: check again on the next Poll
	lastScan int64
	now      int64
	closed   bool
	stats    Stats
	log      *slog.Logger
	ownsPath bool
}

// conn is one client.
type conn struct {
	fd        int
	sess      Session
	in        []byte // unconsumed request bytes are in[:len(in)]
	out       []byte // reply bytes not yet written are out[wpos:]
	wpos      int
	lastSeen  int64  // last time it sent something
	lastWrite int64  // last time a write made progress or replies were queued
	closing   bool   // write what is queued, then close
	partial   bool   // in holds the start of a request that was offered and is incomplete
	events    uint32 // what epoll watches for this client
}

var _ transport.Server = (*Server)(nil)

// Listen binds and listens. A stale Unix socket file (no server answers on
// it) is removed; a live one gives ErrAddrInUse.
func Listen(cfg Config) (*Server, error) {
	if cfg.Handler == nil {
		return nil, fmt.Errorf("%w: no Handler", ErrConfig)
	}
	cfg.ensureDefaults()
	s := &Server{cfg: cfg, lfd: -1, epfd: -1, events: make([]unix.EpollEvent, eventBatch), log: cfg.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	var err error
	switch cfg.Network {
	case "unix":
		s.name = "uds/" + cfg.Proto.String()
		err = s.listenUnix()
	case "tcp":
		s.name = "tcp/" + cfg.Proto.String()
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
	return s, nil
}

func (s *Server) listenUnix() error {
	path := s.cfg.Address
	if len(path) >= len(unix.RawSockaddrUnix{}.Path) {
		return fmt.Errorf("%w: socket path %q is longer than %d bytes", ErrConfig, path, len(unix.RawSockaddrUnix{}.Path)-1)
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
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("uds: socket directory: %w", err)
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("uds: socket: %w", err)
	}
	s.lfd = fd
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		if errors.Is(err, unix.EADDRINUSE) {
			return fmt.Errorf("%w: %s: %v", ErrAddrInUse, path, err)
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
		return fmt.Errorf("%w: tcp address %q: %v", ErrConfig, s.cfg.Address, err)
	}
	if host == "" {
		host = "127.0.0.1" // loopback unless told otherwise
	}
	ip := net.ParseIP(host)
	if ip == nil {
		ips, err := net.LookupIP(host)
		if err != nil || len(ips) == 0 {
			return fmt.Errorf("%w: tcp host %q: %v", ErrConfig, host, err)
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
		return fmt.Errorf("uds: socket: %w", err)
	}
	s.lfd = fd
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		return fmt.Errorf("uds: SO_REUSEADDR: %w", err)
	}
	if err := unix.Bind(fd, sa); err != nil {
		if errors.Is(err, unix.EADDRINUSE) {
			return fmt.Errorf("%w: %s: %v", ErrAddrInUse, s.cfg.Address, err)
		}
		return fmt.Errorf("uds: bind %s: %w", s.cfg.Address, err)
	}
	if err := unix.Listen(fd, 4096); err != nil {
		return fmt.Errorf("uds: listen %s: %w", s.cfg.Address, err)
	}
	got, err := unix.Getsockname(fd)
	if err != nil {
		return fmt.Errorf("uds: getsockname: %w", err)
	}
	switch a := got.(type) {
	case *unix.SockaddrInet4:
		s.addr = net.JoinHostPort(net.IP(a.Addr[:]).String(), strconv.Itoa(a.Port))
	case *unix.SockaddrInet6:
		s.addr = net.JoinHostPort(net.IP(a.Addr[:]).String(), strconv.Itoa(a.Port))
	}
	return nil
}

// Name returns "uds/resp", "tcp/sbe" and so on.
func (s *Server) Name() string { return s.name }

// Addr returns the bound address: the socket path, or host:port with the
// port the kernel picked when the configured port was 0.
func (s *Server) Addr() string { return s.addr }

// Target returns the target clients dial to reach this listener.
func (s *Server) Target() target.Target {
	if s.cfg.Network == "unix" {
		return target.Target{Scheme: target.UDS, Path: s.addr, Proto: s.cfg.Proto}
	}
	return target.Target{Scheme: target.TCP, Address: s.addr, Proto: s.cfg.Proto}
}

// Clients returns the number of connected clients.
func (s *Server) Clients() int { return int(s.stats.Clients) }

// Stats copies the transport's counters into st.
func (s *Server) Stats(st *Stats) { *st = s.stats }

// WaitFD returns the epoll descriptor that becomes readable when a socket
// of this listener has work, so the loop can park on it instead of
// sleeping blind.
func (s *Server) WaitFD() int { return s.epfd }

// CheckNow makes the next Poll check the sockets whatever CheckEvery says;
// the loop calls it when it is otherwise idle.
func (s *Server) CheckNow() { s.hot = true }

// Poll checks the sockets (every CheckEvery calls while quiet, every call
// while busy or after CheckNow), accepts clients, reads and executes their
// requests and writes the replies. It returns the number of sockets that
// had work.
//
// The idle and stall policy (scan) runs after the sockets are handled, and
// a due scan forces the check: a loop held off the CPU for longer than
// IdleTimeout or StallTimeout must first read what a client sent and write
// what a client now accepts, and only then judge who is still idle or
// stalled, or it would drop a client whose socket is ready right now.
func (s *Server) Poll(now int64) int {
	s.now = now
	scanDue := now-s.lastScan > int64(scanEvery) && s.stats.Clients > 0
	n := s.pollSockets(now, scanDue)
	if scanDue {
		s.lastScan = now
		s.scan(now)
	}
	return n
}

// pollSockets is Poll's socket work; force skips the CheckEvery pacing.
func (s *Server) pollSockets(now int64, force bool) int {
	s.cycles++
	if !force && !s.hot && s.cycles < s.cfg.CheckEvery {
		return 0
	}
	s.cycles = 0
	s.stats.EpollChecks++
	n, err := unix.EpollWait(s.epfd, s.events, 0)
	if err != nil || n <= 0 {
		s.hot = false
		return 0
	}
	s.hot = true
	for i := 0; i < n; i++ {
		ev := &s.events[i]
		fd := int(ev.Fd)
		if fd == s.lfd {
			s.accept(now)
			continue
		}
		if fd >= len(s.conns) || s.conns[fd] == nil {
			continue
		}
		c := s.conns[fd]
		if ev.Events&unix.EPOLLOUT != 0 {
			if !s.flush(c) {
				continue
			}
			if !c.closing && len(c.in) > 0 && len(c.out)-c.wpos < s.cfg.MaxOutput {
				s.serve(c) // requests held back while the replies drained
				if c.fd < 0 {
					continue
				}
			}
			if ev.Events&unix.EPOLLIN == 0 || c.events&unix.EPOLLIN == 0 {
				continue
			}
		}
		if ev.Events&(unix.EPOLLIN|unix.EPOLLHUP|unix.EPOLLERR|unix.EPOLLRDHUP) != 0 {
			s.read(c, now)
		}
	}
	return n
}

func (s *Server) accept(now int64) {
	for i := 0; i < acceptBatch; i++ {
		fd, _, err := unix.Accept4(s.lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if err != nil {
			if err == unix.EINTR || err == unix.ECONNABORTED {
				continue
			}
			if err != unix.EAGAIN {
				s.log.Warn("accept failed", "transport", s.name, "err", err)
			}
			return
		}
		if int(s.stats.Clients) >= s.cfg.MaxClients {
			s.stats.Rejected++
			if s.cfg.Proto == proto.RESP {
				unix.Write(fd, []byte("-ERR max number of clients reached\r\n"))
			}
			unix.Close(fd)
			continue
		}
		if s.cfg.Network == "tcp" {
			unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		}
		if err := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(fd)}); err != nil {
			s.log.Warn("epoll_ctl add failed", "transport", s.name, "err", err)
			unix.Close(fd)
			continue
		}
		for fd >= len(s.conns) {
			s.conns = append(s.conns, make([]*conn, len(s.conns)+64)...)
		}
		s.conns[fd] = &conn{fd: fd, sess: s.cfg.Handler.Open(s.cfg.Proto), lastSeen: now, lastWrite: now, events: unix.EPOLLIN | unix.EPOLLRDHUP}
		s.stats.Clients++
		s.stats.Accepted++
	}
}

// read reads what the client sent (up to readBudget), executes every
// complete request and writes the replies once.
func (s *Server) read(c *conn, now int64) {
	if c.closing {
		// The client was told to go (QUIT, protocol error) and its replies
		// are draining: HUP or ERR means it is gone.
		s.drop(c)
		return
	}
	total := 0
	eof := false
	for total < readBudget {
		if cap(c.in)-len(c.in) < 4096 {
			if !s.grow(c) {
				return
			}
		}
		n, err := unix.Read(c.fd, c.in[len(c.in):cap(c.in)])
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			if err != unix.EAGAIN {
				eof = true
			}
			break
		}
		if n == 0 {
			eof = true
			break
		}
		c.in = c.in[:len(c.in)+n]
		total += n
		if len(c.in) < cap(c.in) {
			break // the socket is drained
		}
	}
	if total > 0 {
		c.lastSeen = now
		s.stats.BytesIn += int64(total)
		s.serve(c)
	}
	if eof && c.fd >= 0 {
		// Answer what was read, then go: the peer may have shut down only
		// its write side.
		c.closing = true
		s.flush(c)
	}
}

// grow makes room in c.in, or disconnects the client past MaxInput.
func (s *Server) grow(c *conn) bool {
	if c.in == nil {
		c.in = make([]byte, 0, DefaultReadBufSize)
		return true
	}
	if len(c.in) >= s.cfg.MaxInput {
		s.stats.InputTooLarge++
		s.log.Warn("client disconnected: request larger than the input limit", "transport", s.name, "limit", s.cfg.MaxInput)
		if s.cfg.Proto == proto.RESP {
			unix.Write(c.fd, []byte("-ERR Protocol error: request too large\r\n"))
		}
		s.drop(c)
		return false
	}
	n := min(2*cap(c.in), s.cfg.MaxInput+4096)
	in := make([]byte, len(c.in), n)
	copy(in, c.in)
	c.in = in
	return true
}

// serve executes the complete requests in c.in and writes the replies.
//
// The engine executes every complete request in the slice it is given, so
// serve hands it small slices: it starts at minChunk bytes and doubles
// while replies stay small, drops back to minChunk after a call that
// produced a lot of output, and stops once the queued replies reach
// MaxOutput. Requests left over wait in c.in, and the client's input is no
// longer watched, until the client reads its replies (see flush). A slice
// that holds no complete request is doubled until it does.
//
// A request that is still incomplete when the input runs out stays at the
// front of c.in and c.partial is set: the next serve offers all of c.in at
// once, and the session's parser resumes where it stopped (it remembers
// how far it parsed), so each read costs in proportion to the bytes it
// brought, not to the bytes buffered.
func (s *Server) serve(c *conn) {
	for {
		off := 0
		closeConn, capped := false, false
		chunk := minChunk
		if c.partial {
			chunk = len(c.in)
		}
		c.partial = false
		for off < len(c.in) && !closeConn {
			if len(c.out)-c.wpos >= s.cfg.MaxOutput {
				capped = true
				break
			}
			end := min(len(c.in), off+chunk)
			before := len(c.out)
			n, out, cl := c.sess.Serve(c.in[off:end], c.out)
			c.out, closeConn = out, cl
			off += n
			if n == 0 {
				if cl {
					break
				}
				if end == len(c.in) {
					c.partial = true // an incomplete request: wait for more bytes
					break
				}
				chunk *= 2 // a request larger than the slice
				continue
			}
			if len(c.out)-before > s.cfg.MaxOutput/16 {
				chunk = minChunk
			} else if chunk < maxChunk {
				chunk *= 2
			}
		}
		if off > 0 {
			rest := copy(c.in, c.in[off:])
			c.in = c.in[:rest]
			if rest == 0 && cap(c.in) > shrinkAbove {
				c.in = nil
			}
		}
		if closeConn {
			s.stats.ProtocolCloses++
			c.closing = true
		}
		if !s.flush(c) {
			return // dropped
		}
		// Stopped at the cap but the socket took enough of the replies:
		// go on now, since no event will come for requests already read.
		if !capped || c.closing || len(c.out)-c.wpos >= s.cfg.MaxOutput {
			return
		}
	}
}

// flush writes queued replies and updates what epoll watches for c. It
// returns false if the client was dropped: on a write error, or once a
// closing client's replies are written.
func (s *Server) flush(c *conn) bool {
	progress := false
	for c.wpos < len(c.out) {
		n, err := unix.Write(c.fd, c.out[c.wpos:])
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			if err == unix.EAGAIN {
				break
			}
			s.drop(c)
			return false
		}
		c.wpos += n
		progress = progress || n > 0
		s.stats.BytesOut += int64(n)
	}
	pending := len(c.out) - c.wpos
	if pending == 0 {
		c.out = c.out[:0]
		c.wpos = 0
		if cap(c.out) > shrinkAbove {
			c.out = nil
		}
		if c.closing {
			s.drop(c)
			return false
		}
	} else if c.wpos > shrinkAbove && c.wpos > pending {
		c.out = c.out[:copy(c.out, c.out[c.wpos:])]
		c.wpos = 0
	}
	if progress || len(c.out) == 0 || c.events&unix.EPOLLOUT == 0 {
		// Progress, nothing queued, or replies queued just now: the stall
		// clock (see scan) starts over.
		c.lastWrite = s.now
	}
	s.watch(c)
	return true
}

// watched returns the events epoll should report for c: input while it is
// served (not while it is closing or its replies are at MaxOutput, which
// holds a pipelining client back until it reads), output while replies are
// queued.
func (s *Server) watched(c *conn) uint32 {
	pending := len(c.out) - c.wpos
	var ev uint32
	if !c.closing && pending < s.cfg.MaxOutput {
		ev = unix.EPOLLIN | unix.EPOLLRDHUP
	}
	if pending > 0 {
		ev |= unix.EPOLLOUT
	}
	return ev
}

// watch tells epoll what to report for c, when that changed.
func (s *Server) watch(c *conn) {
	ev := s.watched(c)
	if ev == c.events {
		return
	}
	c.events = ev
	unix.EpollCtl(s.epfd, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: ev, Fd: int32(c.fd)})
}

// drop closes a client at once.
func (s *Server) drop(c *conn) {
	if c.fd < 0 || s.conns[c.fd] != c {
		return
	}
	unix.EpollCtl(s.epfd, unix.EPOLL_CTL_DEL, c.fd, nil)
	unix.Close(c.fd)
	s.conns[c.fd] = nil
	c.fd = -1
	c.sess.Close()
	c.in, c.out = nil, nil
	s.stats.Clients--
}

// scan disconnects idle clients (IdleTimeout) and clients whose queued
// replies have stayed at MaxOutput with nothing written for stallTimeout.
func (s *Server) scan(now int64) {
	idle := int64(s.cfg.IdleTimeout)
	for _, c := range s.conns {
		switch {
		case c == nil:
		case idle > 0 && now-c.lastSeen > idle && now-c.lastWrite > idle:
			s.stats.IdleTimeouts++
			s.log.Debug("client disconnected: idle timeout", "transport", s.name)
			s.drop(c)
		case len(c.out)-c.wpos >= s.cfg.MaxOutput && now-c.lastWrite > int64(s.cfg.StallTimeout):
			s.slowConsumer(c)
		}
	}
}

func (s *Server) slowConsumer(c *conn) {
	s.stats.SlowConsumers++
	s.log.Warn("client disconnected: it does not read its replies", "transport", s.name, "queued", len(c.out)-c.wpos, "limit", s.cfg.MaxOutput)
	s.drop(c)
}

// Close stops accepting and removes the socket file, reads and answers
// what clients already sent, gives their replies up to a second to drain,
// then closes every client.
func (s *Server) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if s.lfd >= 0 {
		unix.EpollCtl(s.epfd, unix.EPOLL_CTL_DEL, s.lfd, nil)
	}
	s.closeListener()
	for _, c := range s.conns {
		if c != nil && !c.closing {
			s.read(c, s.now)
		}
	}
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		pending := false
		for _, c := range s.conns {
			if c != nil && c.wpos < len(c.out) {
				if s.flush(c) && c.wpos < len(c.out) {
					pending = true
				}
			}
		}
		if !pending {
			break
		}
		unix.EpollWait(s.epfd, s.events, 10)
	}
	for _, c := range s.conns {
		if c != nil {
			s.drop(c)
		}
	}
	s.release()
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
	if s.epfd >= 0 {
		unix.Close(s.epfd)
		s.epfd = -1
	}
}
