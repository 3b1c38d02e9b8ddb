package uds

// This file is the server side of the socket transports: a listener on a
// Unix socket or a TCP port whose clients are non-blocking sockets watched
// by one epoll instance, polled by the store loop. There is no goroutine
// per connection: Poll accepts, reads, executes (through the Handler,
// inline) and writes, all on the loop goroutine.
//
// The Server and its poll cycle are here; binding (listen.go), one
// client's reads and requests (conn.go), its replies (write.go) and the
// limits on clients and their memory (limits.go, budget.go) have files of
// their own, and Config its defaults (config.go).

import (
	"log/slog"
	"math"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/internal/rawpoll"
	"github.com/goblin-kv/goblin/transport"
)

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
	// TLSHandshakeFailures counts a TLS listener's clients whose handshake
	// failed (plaintext, no or a bad certificate, a timeout).
	TLSHandshakeFailures int64
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
	held     int // clients whose requests wait (conn.paused != 0): Deadline
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

	// serving is the client whose requests are being served (kill leaves
	// it to the read path), nil between serves.
	serving *conn
	tls     *tlsBridges // a TLS listener's handshakes (tls.go); nil for plain ones
	// A TLS listener's finished handshakes being taken (takeHandshakes),
	// and its clients that may hold decrypted input no epoll event
	// announces (readUnread), with the list's other half.
	handshakes          []handshake
	unread, unreadSpare []*conn
}

var _ transport.Server = (*Server)(nil)

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
	if s.tls != nil {
		return transport.Target{Scheme: transport.TLS, Address: s.addr, Proto: s.cfg.Proto}
	}
	return transport.Target{Scheme: transport.TCP, Address: s.addr, Proto: s.cfg.Proto}
}

// Clients returns the number of connected clients.
func (s *Server) Clients() int { return int(s.stats.Clients) }

// Stats copies the transport's counters into st.
func (s *Server) Stats(st *Stats) {
	*st = s.stats
	if s.tls != nil {
		st.TLSHandshakeFailures = s.tls.failures.Load()
	}
}

// UpdateStats implements transport.StatsReporter: the socket listener's
// counters in the shape every transport reports. A client closed on the
// engine's request is ServerClosed; one that closed or vanished on its own
// is the remainder (ClientGone).
func (s *Server) UpdateStats(st *transport.Stats) {
	one := transport.Stats{
		Clients:  s.stats.Clients,
		Connects: s.stats.Accepted,
		Rejected: s.stats.Rejected, // and, on a TLS listener, the failed handshakes (below)
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
	if s.tls != nil {
		// A client whose TLS handshake failed was accepted (and gone
		// since), and refused: goblin_rejected_clients_total counts it.
		one.Rejected += s.tls.failures.Load()
	}
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
	if len(s.unread) > 0 {
		n += s.readUnread(now)
	}
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
		if c.fd < 0 || c.closing || c.backlog() >= s.cfg.MaxOutput {
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
		if s.tls != nil && fd == s.tls.doorbell {
			s.takeHandshakes(now)
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
			if c.waiting() && !c.queued && c.backlog() < s.cfg.MaxOutput {
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

// Deadline implements server.Deadliner: while a client's requests are
// held (CLIENT PAUSE, a wrong password's delay), the loop parks no longer
// than until the next scan, which serves them once their wait is over;
// else never (math.MaxInt64). On the loop's clock, like Poll's now. With
// work buffered that no epoll event announces (requests left at
// PassOutput or offered again, decrypted input of a TLS client the next
// Poll would read), it is the last Poll's now: the loop does not park or
// rest (server.Loop.Rest).
func (s *Server) Deadline() int64 {
	if len(s.backlog) > 0 || s.readableUnread() {
		return s.now
	}
	if s.held == 0 {
		return math.MaxInt64
	}
	return s.lastScan + int64(scanEvery) + 1 // Poll scans once now-lastScan > scanEvery
}

// readableUnread reports whether a TLS client holding decrypted input is
// one the next Poll reads (readUnread): not one that waits for its replies
// to drain or is paused, whose turn an epoll event or a scan brings.
func (s *Server) readableUnread() bool {
	for _, c := range s.unread {
		if !c.queued && s.watched(c)&unix.EPOLLIN != 0 {
			return true
		}
	}
	return false
}

// SetIdleTimeout changes IdleTimeout (CONFIG SET timeout), on the loop
// goroutine.
func (s *Server) SetIdleTimeout(d time.Duration) { s.cfg.IdleTimeout = d }

// SetMaxClients changes MaxClients (CONFIG SET maxclients), on the loop
// goroutine; clients over a lowered cap stay connected.
func (s *Server) SetMaxClients(n int) { s.cfg.MaxClients = n }

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
	serveable := func(c *conn) bool { return c.waiting() && c.backlog() < s.cfg.MaxOutput }
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
			if s.flush(c) && (c.pendBytes > 0 || c.unsent() > 0 || serveable(c)) {
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
	if s.tls != nil {
		s.tls.close()
	}
	s.budget.leave(s)
	s.release()
	return nil
}
