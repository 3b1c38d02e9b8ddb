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
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/internal/rawpoll"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/sbe"
	"github.com/goblin-kv/goblin/transport"
)

// Errors returned by Listen, wrapped with details.
var (
	// ErrAddrInUse reports that another live server answers on the socket
	// path or already holds the TCP address.
	ErrAddrInUse = errors.New("socket transport: address in use")
	// ErrConfig reports an invalid Config.
	ErrConfig = errors.New("socket transport: bad configuration")
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
	// DefaultPassOutput is the reply bytes one client's requests may
	// produce per Poll before its further requests wait for the next.
	DefaultPassOutput = 256 << 10
	// shrinkAbove is the buffer capacity above which an emptied input or
	// output buffer is dropped rather than kept, so one large value does
	// not pin megabytes per client.
	shrinkAbove = 256 << 10
	// sharedReadSize is the listener's shared read buffer: a client whose
	// requests all complete within one read never needs one of its own.
	sharedReadSize = 64 << 10
	// sharedWriteKeep is the most capacity the listener's shared reply
	// buffer keeps after a large reply passed through it.
	sharedWriteKeep = 1 << 20
	// idleRelease is how long a client must be quiet before the buffers
	// it kept (up to shrinkAbove each) are released.
	idleRelease = 2 * time.Second
	// readBudget bounds the bytes read from one client per readiness
	// event, so one fast sender cannot starve the others.
	readBudget = 1 << 20
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
	// Serve consumes the complete requests at the start of in and appends
	// the replies, in order, to out. It stops early, leaving the later
	// requests unconsumed, once the replies it appended reach limit bytes;
	// it always serves at least one complete request. It returns the bytes
	// consumed, the extended out, and whether the connection must be
	// closed once the replies are written (QUIT, a protocol error).
	//
	// What is left of in after the consumed bytes is offered again, from
	// its first byte, with whatever arrived since: a session may remember
	// how far it parsed a partial request.
	Serve(in, out []byte, limit int) (consumed int, reply []byte, closeConn bool)
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
	// Proto is the protocol the listener announces (its Name and Target).
	// Each connection's protocol is recognised from its first bytes
	// (proto.Sniff), so RESP and SOFH-framed SBE clients are both served
	// whatever Proto says.
	Proto proto.Protocol
	// Handler executes the requests; it opens each client's session once
	// the client's first bytes tell its protocol.
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
	// past it the client is told so (in its protocol) and disconnected.
	// Default DefaultMaxInput.
	MaxInput int
	// PassOutput caps the reply bytes one client's requests may produce
	// in one Poll: its further requests wait for the next Poll, so a
	// client asking for many large replies cannot hold the loop from the
	// other clients. One request always runs, however large its reply.
	// Default DefaultPassOutput.
	PassOutput int
	// Budget, when set, bounds the buffer memory of the clients of every
	// listener sharing it (see Budget); nil gives the listener a budget
	// of its own without a limit.
	Budget *Budget
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
	// Protected, when set, is asked as each TCP client is accepted from
	// beyond the loopback interface: true (protected mode) refuses the
	// client with command.DeniedProtectedMode, in its listener's protocol,
	// and closes it, as Redis does. Called on the goroutine that polls.
	Protected func() bool
}

// ConfigFor fills Network, Address and Proto from a uds or tcp target.
func ConfigFor(t transport.Target) (Config, error) {
	c := Config{Proto: t.Proto}
	switch t.Scheme {
	case transport.UDS:
		c.Network, c.Address = "unix", t.Path
	case transport.TCP:
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
		if t.Scheme != transport.UDS {
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
	if c.PassOutput <= 0 {
		c.PassOutput = DefaultPassOutput
	}
	if c.Budget == nil {
		c.Budget = new(Budget)
	}
}

// Stats are the transport's own counters (the command engine counts
// requests). The loop owns them; Server.Stats copies them out.
type Stats struct {
	Clients        int64 // connected now
	Accepted       int64 // clients accepted since start
	Rejected       int64 // clients refused: MaxClients, or protected mode
	Denied         int64 // of which refused by protected mode
	SlowConsumers  int64 // clients disconnected because of MaxOutput
	InputTooLarge  int64 // clients disconnected because of MaxInput
	IdleTimeouts   int64 // clients disconnected because of IdleTimeout
	BytesIn        int64
	BytesOut       int64
	EpollChecks    int64 // epoll_wait calls made by Poll
	ProtocolCloses int64 // connections the handler asked to close
	Evicted        int64 // clients disconnected because the Budget's total passed its limit
	Buffered       int64 // bytes this listener's clients hold in buffers now (see Budget)
	Deferred       int64 // times a client's requests waited for the next Poll at PassOutput
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

	// Shared by every client, used within one client's read or write and
	// never held across Polls (see conn).
	rbuf []byte
	wbuf []byte
	// Clients with requests left at PassOutput, served again on the next
	// Poll; spare is the other half of the double buffer.
	backlog, spare []*conn
	pass           uint64 // Poll count, for PassOutput
	budget         *Budget
}

// conn is one client.
//
// Between two Polls a client holds its own input buffer only while part
// of a request (or requests held back at a limit) waits in it, and reply
// blocks only while the socket has not taken them: a client whose requests
// complete within a read and whose replies the socket takes at once is
// served from the listener's shared buffers and holds no memory of its
// own. Unwritten replies are a queue of blocks, each the leftover of one
// serve, so new replies never make the client's older ones move.
type conn struct {
	fd        int
	sess      Session        // nil until the first bytes tell the protocol
	held      buffered       // sess, when it holds memory for partial requests
	delayer   Delayer        // sess, when it may ask for the client to wait
	proto     proto.Protocol // the client's protocol, once sess is open
	in        []byte         // unconsumed request bytes are in[:len(in)]
	fresh     []byte         // replies produced since the last flush: the shared wbuf, or what it grew into (within a serve and flush only)
	pend      [][]byte       // owned blocks of unwritten replies, oldest first; pend[0][wpos:] goes next
	wpos      int
	pendBytes int    // unwritten bytes in pend
	pendCap   int    // capacity of the blocks in pend
	mem       int    // bytes charged to the budget: buffers and session state
	lastSeen  int64  // last time it sent something
	lastWrite int64  // last time a write made progress or replies were queued
	pass      uint64 // the Poll passOut counts for
	passOut   int    // reply bytes produced in that Poll
	closing   bool   // write what is queued, then close
	discard   bool   // closing after a refused request: once the replies are written, linger
	linger    int64  // when non-zero: lingering (see lingerTime) until this time
	partial   bool   // in holds the start of a request that was offered and is incomplete
	queued    bool   // on the backlog: requests wait for the next Poll
	paused    int64  // when non-zero, the time until which the client's requests wait (Delayer)
	inShared  bool   // in is the listener's rbuf (within a read only)
	events    uint32 // what epoll watches for this client
}

// buffered is a session that holds memory for a partial request.
type buffered interface{ Buffered() int }

// ConnAware is a Session that wants to know its connection (the command
// engine's CLIENT LIST, CLIENT KILL and MONITOR): right after Open the
// server tells it the peer's and its own address and the socket, and
// hands it kill, which closes the connection, and push, which queues bytes
// for the client outside of any reply. Both are to be called on the loop
// goroutine only.
type ConnAware interface {
	SetConn(addr, laddr string, fd int, kill func(), push func(b []byte) bool)
}

// Delayer is a Session that may ask, after a Serve, for its client to be
// held back: its further requests wait that long (neither read nor
// executed; the loop serves everyone else meanwhile). The server's
// sessions ask after a wrong password.
type Delayer interface {
	Delay() time.Duration
}

// ProtocolErrorer is a Session that can say why it asked for its
// connection to close: the protocol error it answered (the server logs it
// with the client's address), or nil (QUIT).
type ProtocolErrorer interface {
	ProtocolError() error
}

// lingerTime is how long a client refused for a malformed or too large
// request may go on sending before it is closed: its answer is written, the
// write side shut down, and what it still sends is read and dropped, so
// the client sees the error and then the end of the stream rather than a
// write error (EPIPE) or a reset that can destroy the answer unread.
const lingerTime = 5 * time.Second

var _ transport.Server = (*Server)(nil)

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

// Name returns "uds/resp", "tcp/sbe" and so on.
func (s *Server) Name() string { return s.name }

// Addr returns the bound address: the socket path, or host:port with the
// port the kernel picked when the configured port was 0.
func (s *Server) Addr() string { return s.addr }

// Target returns the target clients dial to reach this listener.
func (s *Server) Target() transport.Target {
	if s.cfg.Network == "unix" {
		return transport.Target{Scheme: transport.UDS, Path: s.addr, Proto: s.cfg.Proto}
	}
	return transport.Target{Scheme: transport.TCP, Address: s.addr, Proto: s.cfg.Proto}
}

// Clients returns the number of connected clients.
func (s *Server) Clients() int { return int(s.stats.Clients) }

// Stats copies the transport's counters into st.
func (s *Server) Stats(st *Stats) { *st = s.stats }

// UpdateStats implements transport.StatsReporter: the socket listener's
// counters in the shape every transport reports. A client closed on the
// engine's request is ServerClosed; one that closed or vanished on its own
// is the remainder (ClientGone).
func (s *Server) UpdateStats(st *transport.Stats) {
	one := transport.Stats{
		Clients:  s.stats.Clients,
		Connects: s.stats.Accepted,
		Rejected: s.stats.Rejected,
		BytesIn:  s.stats.BytesIn,
		BytesOut: s.stats.BytesOut,
		Queued:   s.stats.Buffered,
	}
	one.Disconnects[transport.ServerClosed] = s.stats.ProtocolCloses
	one.Disconnects[transport.SlowConsumer] = s.stats.SlowConsumers
	one.Disconnects[transport.InputTooLarge] = s.stats.InputTooLarge
	one.Disconnects[transport.IdleTimeout] = s.stats.IdleTimeouts
	one.Disconnects[transport.ClientMemory] = s.stats.Evicted
	one.Disconnects[transport.ClientGone] = one.Remainder(transport.ClientGone)
	st.Add(&one)
}

// WaitFD returns the epoll descriptor that becomes readable when a socket
// of this listener has work, so the loop can park on it instead of
// sleeping blind.
func (s *Server) WaitFD() int { return s.epfd }

// CheckNow makes the next Poll check the sockets whatever CheckEvery says;
// the loop calls it when it is otherwise idle.
func (s *Server) CheckNow() { s.hot = true }

// Poll checks the sockets (every CheckEvery calls while quiet, every call
// while busy or after CheckNow), accepts clients, reads and executes their
// requests and writes the replies. Clients whose requests were cut off at
// PassOutput in the last Poll are served first. It returns the number of
// clients and sockets that had work.
//
// The idle and stall policy (scan) runs after the sockets are handled, and
// a due scan forces the check: a loop held off the CPU for longer than
// IdleTimeout or StallTimeout must first read what a client sent and write
// what a client now accepts, and only then judge who is still idle or
// stalled, or it would drop a client whose socket is ready right now.
func (s *Server) Poll(now int64) int {
	s.now = now
	s.pass++
	n := s.serveBacklog()
	scanDue := now-s.lastScan > int64(scanEvery) && s.stats.Clients > 0
	n += s.pollSockets(now, scanDue)
	if scanDue {
		s.lastScan = now
		s.scan(now)
	}
	return n
}

// serveBacklog serves the clients whose requests waited at PassOutput.
func (s *Server) serveBacklog() int {
	if len(s.backlog) == 0 {
		return 0
	}
	list := s.backlog
	s.backlog = s.spare[:0]
	for _, c := range list {
		c.queued = false
		if c.fd < 0 || c.closing || c.pendBytes >= s.cfg.MaxOutput {
			continue // gone, or waiting for its replies to drain (flush resumes it)
		}
		s.serve(c)
		s.flush(c)
	}
	clear(list)
	s.spare = list[:0]
	s.hot = true // their sockets may hold more: check them on the next Poll
	return len(list)
}

// pollSockets is Poll's socket work; force skips the CheckEvery pacing.
func (s *Server) pollSockets(now int64, force bool) int {
	s.cycles++
	if !force && !s.hot && s.cycles < s.cfg.CheckEvery {
		return 0
	}
	s.cycles = 0
	s.stats.EpollChecks++
	// A spinning loop makes this check every CheckEvery cycles: raw, so the
	// runtime's monitor does not see a thread that lives in system calls
	// (package rawpoll).
	n, err := rawpoll.EpollWaitNow(s.epfd, s.events)
	if err != nil || n <= 0 {
		s.hot = len(s.backlog) > 0
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
			if c.waiting() && !c.queued && c.pendBytes < s.cfg.MaxOutput {
				s.serve(c) // requests held back while the replies drained
				if !s.flush(c) {
					continue
				}
			}
			if ev.Events&unix.EPOLLIN == 0 || c.events&unix.EPOLLIN == 0 {
				continue
			}
		}
		if (c.queued || c.paused != 0) && ev.Events&(unix.EPOLLHUP|unix.EPOLLERR) == 0 {
			continue // its backlog is served first, on the next Poll; or it waits
		}
		if ev.Events&(unix.EPOLLIN|unix.EPOLLHUP|unix.EPOLLERR|unix.EPOLLRDHUP) != 0 {
			s.read(c, now)
		}
	}
	return n
}

func (s *Server) accept(now int64) {
	for i := 0; i < acceptBatch; i++ {
		fd, sa, err := unix.Accept4(s.lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
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
			unix.Write(fd, refusal(s.cfg.Proto, command.Err, "ERR max number of clients reached"))
			unix.Close(fd)
			continue
		}
		if s.cfg.Network == "tcp" {
			if s.cfg.Protected != nil && !loopback(sa) && s.cfg.Protected() {
				s.stats.Rejected++
				s.stats.Denied++
				unix.Write(fd, refusal(s.cfg.Proto, command.Err, command.DeniedProtectedMode))
				unix.Close(fd)
				continue
			}
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
		s.conns[fd] = &conn{fd: fd, proto: s.cfg.Proto, lastSeen: now, lastWrite: now, events: unix.EPOLLIN | unix.EPOLLRDHUP}
		s.stats.Clients++
		s.stats.Accepted++
	}
}

// read reads what the client sent (up to readBudget), executes every
// complete request and writes the replies once.
func (s *Server) read(c *conn, now int64) {
	if c.linger != 0 {
		s.drain(c)
		return
	}
	if c.closing {
		// The client was told to go (QUIT, protocol error) and its replies
		// are draining: HUP or ERR means it is gone.
		s.drop(c)
		return
	}
	total := 0
	eof := false
	for total < readBudget {
		if !s.room(c) {
			return // dropped at the input limit
		}
		n, err := unix.Read(c.fd, c.in[len(c.in):cap(c.in)])
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			if err != unix.EAGAIN {
				eof = true
			}
			s.unshareIn(c)
			break
		}
		if n == 0 {
			eof = true
			s.unshareIn(c)
			break
		}
		c.in = c.in[:len(c.in)+n]
		total += n
		drained := len(c.in) < cap(c.in)
		s.serve(c)
		if c.fd < 0 {
			return
		}
		if drained || c.closing || c.waiting() || c.paused != 0 {
			break // the socket is drained, or this client has had its share
		}
	}
	if total > 0 {
		c.lastSeen = now
		s.stats.BytesIn += int64(total)
	}
	if eof && c.fd >= 0 {
		// Answer what was read, then go: the peer may have shut down only
		// its write side.
		c.closing = true
	}
	s.flush(c)
}

// room makes space for a read in c.in: the shared read buffer when the
// client has nothing pending, else its own buffer, grown when less than
// 4 KiB is free. It disconnects the client past MaxInput (and reports
// false).
func (s *Server) room(c *conn) bool {
	if len(c.in) == 0 && cap(c.in) < sharedReadSize {
		s.dropIn(c)
		c.in, c.inShared = s.rbuf[:0], true
		return true
	}
	if cap(c.in)-len(c.in) >= 4096 {
		return true
	}
	if len(c.in) >= s.cfg.MaxInput {
		s.inputTooLarge(c)
		return false
	}
	size := min(max(2*cap(c.in), DefaultReadBufSize), s.cfg.MaxInput+4096)
	if !s.reserve(c, size-cap(c.in)) {
		return false // evicted rather than allowed to take the memory
	}
	in := make([]byte, len(c.in), size)
	copy(in, c.in)
	s.dropIn(c)
	c.in = in
	return s.account(c)
}

// inputTooLarge tells the client its request passed MaxInput, in its
// protocol, and disconnects it.
func (s *Server) inputTooLarge(c *conn) {
	s.stats.InputTooLarge++
	s.log.Warn("client disconnected: request larger than the input limit", "transport", s.name, "client", peerName(c.fd), "limit", s.cfg.MaxInput)
	unix.Write(c.fd, refusal(c.proto, command.Protocol, "ERR Protocol error: request too large (over the server's client input limit)"))
	c.closing = true
	s.lingerOn(c)
}

// unshareIn gives c its own copy of what is left in the shared read
// buffer, or nothing when nothing is left.
func (s *Server) unshareIn(c *conn) {
	if !c.inShared {
		return
	}
	c.inShared = false
	if len(c.in) == 0 {
		c.in = nil
		return
	}
	in := make([]byte, len(c.in), max(2*len(c.in), 4096))
	copy(in, c.in)
	c.in = in
	s.account(c)
}

// dropIn releases c's own input buffer.
func (s *Server) dropIn(c *conn) {
	if !c.inShared {
		c.in = nil
	}
	c.inShared = false
}

// serve executes the complete requests in c.in, appending the replies to
// c.fresh (written by flush). It hands the session all of c.in with a reply
// limit: what is left of PassOutput in this Poll, and of MaxOutput. When
// the session stops at PassOutput, the client goes on the backlog and is
// served first on the next Poll, so one client asking for many large
// replies shares the loop; when the queued replies reach MaxOutput, the
// client's input is no longer watched until it reads them (see flush).
//
// A request that is still incomplete when the input runs out stays at the
// front of c.in and c.partial is set. The next serve offers it again with
// the bytes that arrived since, and the session's parser resumes where it
// stopped (it remembers how far it parsed), so each read costs in
// proportion to the bytes it brought, not to the bytes buffered.
func (s *Server) serve(c *conn) {
	if c.sess == nil && !s.open(c) {
		c.partial = true // too few bytes to tell the protocol
		s.unshareIn(c)
		return
	}
	if c.paused != 0 {
		s.unshareIn(c)
		return
	}
	if c.pass != s.pass {
		c.pass, c.passOut = s.pass, 0
	}
	if c.fresh == nil {
		c.fresh = s.wbuf[:0]
	}
	limit := min(s.cfg.PassOutput-c.passOut, s.cfg.MaxOutput-c.pendBytes-len(c.fresh))
	n, closeConn, stopped := 0, false, true
	if len(c.in) > 0 && limit > 0 {
		before := len(c.fresh)
		n, c.fresh, closeConn = c.sess.Serve(c.in, c.fresh, limit)
		c.passOut += len(c.fresh) - before
		stopped = len(c.fresh)-before >= limit
		if c.delayer != nil {
			if d := c.delayer.Delay(); d > 0 {
				c.paused = s.now + int64(d)
				stopped = true // what is left waits, complete or not
			}
		}
	}
	// Stopped at a limit, the rest of c.in may hold complete requests
	// (flush queues the client for the next Poll, or its replies must
	// drain first); otherwise it holds part of one, or nothing.
	c.partial = n < len(c.in) && !stopped && !closeConn
	if n > 0 {
		rest := copy(c.in, c.in[n:])
		c.in = c.in[:rest]
		if rest == 0 && !c.inShared && cap(c.in) > shrinkAbove {
			c.in = nil
		}
	}
	s.unshareIn(c)
	if closeConn {
		s.stats.ProtocolCloses++
		c.closing = true
		if pe, ok := c.sess.(ProtocolErrorer); ok {
			if err := pe.ProtocolError(); err != nil {
				c.discard = true
				s.log.Warn("client disconnected: protocol error", "transport", s.name, "client", peerName(c.fd), "err", err)
			}
		}
	}
}

// peerName returns the client's address for logs: ip:port, or for a Unix
// socket client (unnamed) the listener's path.
func peerName(fd int) string {
	if sa, err := unix.Getpeername(fd); err == nil {
		if _, ok := sa.(*unix.SockaddrUnix); !ok {
			return sockName(sa, nil)
		}
	}
	if sa, err := unix.Getsockname(fd); err == nil {
		if u, ok := sa.(*unix.SockaddrUnix); ok {
			return "unix:" + u.Name
		}
	}
	return "?"
}

// lingerOn ends c's answers: its write side is shut down (the client reads
// the end of the stream after the refusal) and what it still sends is read
// and dropped (drain) until it closes or lingerTime passes (scan).
func (s *Server) lingerOn(c *conn) {
	if c.fd < 0 {
		return
	}
	unix.Shutdown(c.fd, unix.SHUT_WR)
	c.linger = s.now + int64(lingerTime)
	s.dropIn(c)
	c.in = nil
	if s.account(c) {
		s.watch(c)
	}
}

// drain reads and drops what a lingering client sends, and closes it at
// the end of its stream.
func (s *Server) drain(c *conn) {
	for total := 0; total < readBudget; {
		n, err := unix.Read(c.fd, s.rbuf[:cap(s.rbuf)])
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return
		case err != nil || n == 0:
			s.drop(c)
			return
		}
		total += n
		s.stats.BytesIn += int64(n)
	}
}

// waiting reports whether c.in holds requests that were read but not
// served because a limit stopped the last serve.
func (c *conn) waiting() bool { return len(c.in) > 0 && !c.partial && !c.closing && c.paused == 0 }

// open opens c's session once its first bytes tell its protocol; it
// reports false while they cannot yet.
func (s *Server) open(c *conn) bool {
	p, ok := proto.Sniff(c.in)
	if !ok {
		return false
	}
	c.proto = p
	c.sess = s.cfg.Handler.Open(p)
	c.held, _ = c.sess.(buffered)
	c.delayer, _ = c.sess.(Delayer)
	if a, ok := c.sess.(ConnAware); ok {
		laddr, addr := sockName(unix.Getsockname(c.fd)), sockName(unix.Getpeername(c.fd))
		if strings.HasSuffix(laddr, ":0") { // a Unix peer is unnamed: Redis shows the server's path
			addr = laddr
		}
		a.SetConn(addr, laddr, c.fd,
			func() { s.kill(c) }, func(b []byte) bool { return s.push(c, b) })
	}
	return true
}

// sockName formats a socket address as CLIENT LIST shows it: ip:port, or
// a Unix socket's path and ":0".
func sockName(sa unix.Sockaddr, err error) string {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return net.JoinHostPort(net.IP(a.Addr[:]).String(), strconv.Itoa(a.Port))
	case *unix.SockaddrInet6:
		return net.JoinHostPort(net.IP(a.Addr[:]).String(), strconv.Itoa(a.Port))
	case *unix.SockaddrUnix:
		return a.Name + ":0"
	}
	return ""
}

// kill closes c (CLIENT KILL): its socket is shut down for reading, so the
// read path sees the end of its stream and drops it like any client that
// went away.
func (s *Server) kill(c *conn) {
	if c.fd >= 0 && s.conns[c.fd] == c {
		unix.Shutdown(c.fd, unix.SHUT_RD)
	}
}

// push queues b for c outside of any reply (MONITOR), as a block of its
// own that the next writable event sends; it is charged like a reply.
func (s *Server) push(c *conn, b []byte) bool {
	if c.fd < 0 || s.conns[c.fd] != c || c.closing || c.pendBytes+len(b) > s.cfg.MaxOutput {
		return false
	}
	block := append([]byte(nil), b...)
	c.pend = append(c.pend, block)
	c.pendBytes += len(block)
	c.pendCap += cap(block)
	s.watch(c)
	return true
}

// SetIdleTimeout changes IdleTimeout (CONFIG SET timeout), on the loop
// goroutine.
func (s *Server) SetIdleTimeout(d time.Duration) { s.cfg.IdleTimeout = d }

// SetMaxClients changes MaxClients (CONFIG SET maxclients), on the loop
// goroutine; clients over a lowered cap stay connected.
func (s *Server) SetMaxClients(n int) { s.cfg.MaxClients = n }

// flush writes queued replies and updates what epoll watches for c. It
// returns false if the client was dropped: on a write error, on passing
// the budget, or once a closing client's replies are written.
func (s *Server) flush(c *conn) bool {
	if c.fd < 0 || c.linger != 0 {
		return false // gone, or everything written and the write side shut
	}
	progress, failed := false, false
	for len(c.pend) > 0 && !failed {
		n, done, err := s.write(c, c.pend[0][c.wpos:])
		progress = progress || n > 0
		c.wpos += n
		c.pendBytes -= n
		if err != nil {
			failed = true
		} else if !done {
			break
		} else {
			c.pendCap -= cap(c.pend[0])
			c.pend[0] = nil
			c.pend = c.pend[1:]
			c.wpos = 0
		}
	}
	if len(c.pend) == 0 {
		c.pend = nil // drop the emptied queue's array
	}
	written := 0
	if len(c.fresh) > 0 && len(c.pend) == 0 && !failed {
		n, _, err := s.write(c, c.fresh)
		progress = progress || n > 0
		written = n
		failed = err != nil
	}
	s.keepFresh(c, written)
	if failed {
		s.drop(c)
		return false
	}
	if c.pendBytes == 0 && c.closing {
		if c.discard {
			c.discard = false
			s.lingerOn(c)
			return false
		}
		s.drop(c)
		return false
	}
	if progress || c.pendBytes == 0 || c.events&unix.EPOLLOUT == 0 {
		// Progress, nothing queued, or replies queued just now: the stall
		// clock (see scan) starts over.
		c.lastWrite = s.now
	}
	if !s.account(c) {
		return false
	}
	if c.waiting() && !c.queued && c.pendBytes < s.cfg.MaxOutput {
		// Requests left at a limit, and room for their replies: no
		// socket event will come for bytes already read, so serve them
		// on the next Poll. (At MaxOutput, EPOLLOUT resumes them.)
		s.stats.Deferred++
		c.queued = true
		s.backlog = append(s.backlog, c)
	}
	s.watch(c)
	return true
}

// write writes b to c's socket until it is all written (done) or the socket
// is full; err is a write error other than EAGAIN.
func (s *Server) write(c *conn, b []byte) (n int, done bool, err error) {
	for n < len(b) {
		m, err := unix.Write(c.fd, b[n:])
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			if err == unix.EAGAIN {
				return n, false, nil
			}
			return n, false, err
		}
		n += m
		s.stats.BytesOut += int64(m)
	}
	return n, true, nil
}

// keepFresh ends a serve-and-flush whose write took the first written
// bytes of c.fresh: the replies the socket did not take become a block of
// c's own, copied out of the shared buffer, or, when a large reply made
// the shared buffer grow (append moved it), the grown array itself, so
// nothing large is copied twice. The shared buffer is left as it was, or
// takes the grown array when it was all written and is not too big.
func (s *Server) keepFresh(c *conn, written int) {
	f := c.fresh
	if f == nil {
		return
	}
	c.fresh = nil
	grown := cap(f) != cap(s.wbuf) || (cap(f) > 0 && &f[:1][0] != &s.wbuf[:1][0])
	rest := f[written:]
	switch {
	case len(rest) == 0:
		if grown && cap(f) <= sharedWriteKeep {
			s.wbuf = f[:0] // the grown buffer becomes the shared one
		}
		return
	case grown:
		// Keep the whole array (and charge all of it); only an empty
		// queue gets fresh replies written, so written is where the
		// block's next byte is.
		if len(c.pend) == 0 {
			c.wpos = written
		}
		c.pend = append(c.pend, f)
		c.pendBytes += len(rest)
		c.pendCap += cap(f)
	default:
		c.pend = append(c.pend, append(make([]byte, 0, len(rest)), rest...))
		c.pendBytes += len(rest)
		c.pendCap += len(rest)
	}
}

// reserve charges c for extra bytes it is about to allocate; it reports
// false when that disconnected c.
func (s *Server) reserve(c *conn, extra int) bool {
	s.stats.Buffered += int64(extra)
	return s.budget.charge(c, c.mem+extra)
}

// account charges c's buffers and session state to the budget; it reports
// false when that disconnected c.
func (s *Server) account(c *conn) bool {
	mem := c.pendCap
	if !c.inShared {
		mem += cap(c.in)
	}
	if c.held != nil {
		mem += c.held.Buffered()
	}
	if mem == c.mem {
		return true
	}
	s.stats.Buffered += int64(mem - c.mem)
	return s.budget.charge(c, mem)
}

// evict disconnects c because the budget's total passed its limit.
func (s *Server) evict(c *conn, b *Budget) {
	s.stats.Evicted++
	s.log.Warn("client disconnected: client buffers passed their total limit", "transport", s.name,
		"client_bytes", c.mem, "total", b.used, "limit", b.Limit)
	unix.Write(c.fd, refusal(c.proto, command.Err, "ERR client memory limit reached: this client's buffers were the largest (maxmemory-clients)"))
	s.drop(c)
}

// watched returns the events epoll should report for c: input while it is
// served (not while it is closing or its replies are at MaxOutput, which
// holds a pipelining client back until it reads), output while replies are
// queued.
func (s *Server) watched(c *conn) uint32 {
	pending := c.pendBytes
	var ev uint32
	if c.linger != 0 {
		return unix.EPOLLIN | unix.EPOLLRDHUP
	}
	if !c.closing && pending < s.cfg.MaxOutput && c.paused == 0 {
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

// drop closes a client at once and releases what it held.
func (s *Server) drop(c *conn) {
	if c.fd < 0 || s.conns[c.fd] != c {
		return
	}
	unix.EpollCtl(s.epfd, unix.EPOLL_CTL_DEL, c.fd, nil)
	unix.Close(c.fd)
	s.conns[c.fd] = nil
	c.fd = -1
	if c.sess != nil {
		c.sess.Close()
	}
	c.in, c.inShared, c.fresh, c.pend, c.pendBytes, c.pendCap = nil, false, nil, nil, 0, 0
	s.stats.Buffered -= int64(c.mem)
	s.budget.charge(c, 0)
	s.stats.Clients--
}

// scan disconnects idle clients (IdleTimeout) and clients whose queued
// replies have stayed at MaxOutput with nothing written for stallTimeout,
// and releases the buffers of clients quiet for idleRelease.
func (s *Server) scan(now int64) {
	idle := int64(s.cfg.IdleTimeout)
	for _, c := range s.conns {
		switch {
		case c == nil:
		case c.linger != 0:
			if now > c.linger {
				s.drop(c)
			}
		case idle > 0 && now-c.lastSeen > idle && now-c.lastWrite > idle:
			s.stats.IdleTimeouts++
			s.log.Debug("client disconnected: idle timeout", "transport", s.name)
			s.drop(c)
		case c.pendBytes >= s.cfg.MaxOutput && now-c.lastWrite > int64(s.cfg.StallTimeout):
			s.slowConsumer(c)
		case c.paused != 0 && now >= c.paused:
			c.paused = 0 // its wait is over: serve what it sent meanwhile
			s.serve(c)
			s.flush(c)
		case c.mem > 0 && now-c.lastSeen > int64(idleRelease) && now-c.lastWrite > int64(idleRelease):
			if len(c.in) == 0 {
				c.in = nil
			}
			s.account(c)
		}
	}
}

func (s *Server) slowConsumer(c *conn) {
	s.stats.SlowConsumers++
	s.log.Warn("client disconnected: it does not read its replies", "transport", s.name, "queued", c.pendBytes, "limit", s.cfg.MaxOutput)
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
	// Requests left at PassOutput or held back while replies drained are
	// answered too, as long as replies keep draining.
	serveable := func(c *conn) bool { return c.waiting() && c.pendBytes < s.cfg.MaxOutput }
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		pending := false
		for _, c := range s.conns {
			if c == nil {
				continue
			}
			if serveable(c) {
				s.pass++
				c.queued = false
				s.serve(c)
			}
			if s.flush(c) && (c.pendBytes > 0 || serveable(c)) {
				pending = true
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
	s.backlog = nil
	s.budget.leave(s)
	s.release()
	return nil
}

// refusal is the error reply a client gets, in its protocol, when the
// transport itself turns it away (too many clients, a request over the
// input limit, the client memory budget): a RESP error line, or a
// SOFH-framed SBE Reply of kind failure with the same text (correlation id
// 0, as for a protocol error).
// loopback reports whether a TCP peer is on the loopback interface
// (127.0.0.0/8, ::1, or an IPv4-mapped 127.x address).
func loopback(sa unix.Sockaddr) bool {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return a.Addr[0] == 127
	case *unix.SockaddrInet6:
		return net.IP(a.Addr[:]).IsLoopback()
	}
	return false
}

func refusal(p proto.Protocol, status command.Status, text string) []byte {
	if p == proto.SBE {
		var c sbe.Codec
		return c.AppendFramedReply(nil, &command.Reply{Status: status, Kind: command.Error, Value: []byte(text)})
	}
	return []byte("-" + text + "\r\n")
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
