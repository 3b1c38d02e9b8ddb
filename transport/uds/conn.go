package uds

// This file is one client connection: accepting it, reading its bytes,
// opening its session once they tell its protocol, serving its requests
// through the session, and closing it (at once, or lingering after a
// refusal).

import (
	"context"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/sbe"
	"github.com/goblin-kv/goblin/transport"
)

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
	sess      transport.StreamSession // nil until the first bytes tell the protocol
	held      buffered                // sess, when it holds memory for partial requests
	delayer   Delayer                 // sess, when it may ask for the client to wait
	exempt    IdleExempter            // sess, when it may be exempt from IdleTimeout
	proto     proto.Protocol          // the client's protocol, once sess is open
	in        []byte                  // unconsumed request bytes are in[:len(in)]
	fresh     []byte                  // replies produced since the last flush: the shared wbuf, or what it grew into (within a serve and flush only)
	pend      [][]byte                // owned blocks of unwritten replies, oldest first; pend[0][wpos:] goes next
	wpos      int
	pendBytes int    // unwritten bytes in pend
	pendCap   int    // capacity of the blocks in pend
	spare     []byte // an emptied block kept for the next push (see push), charged like pend
	pushed    bool   // push was called for it: keep a spare block (a client that is never pushed to keeps none)
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
	peak      int    // the most reply bytes one serve produced (CLIENT LIST's rbp)
	// peer and local are a TLS client's addresses (kept from the accept:
	// naming them is a system call); empty for other clients, whose fd
	// tells.
	peer, local string
	tls         *tlsConn // a TLS client's session (tlsloop.go); nil for plain clients
}

// buffered is a session that holds memory for a partial request.
type buffered interface{ Buffered() int }

// QueueAware is a transport.StreamSession that wants to read how many
// bytes are queued for its client and not yet written (Pub/Sub's output
// limit): right after SetConn the server hands it queued, to be called on
// the loop goroutine only.
type QueueAware interface {
	SetQueued(queued func() int)
}

// ConnAware is a transport.StreamSession that wants to know its
// connection (the command engine's CLIENT LIST, CLIENT KILL and MONITOR):
// right after OpenStream the server tells it the peer's and its own
// address and the socket, and hands it kill, which closes the connection,
// and push, which queues bytes for the client outside of any reply. Both
// are to be called on the loop goroutine only.
type ConnAware interface {
	SetConn(addr, laddr string, fd int, kill func(), push func(b []byte) bool)
}

// IdleExempter is a transport.StreamSession that may be exempt from
// IdleTimeout: a client that waits for what the server sends it (a
// Pub/Sub subscriber, a MONITOR) is not idle, as Redis's timeout spares
// them.
type IdleExempter interface {
	IdleExempt() bool
}

// BufferAware is a transport.StreamSession that shows its connection's
// buffers (CLIENT LIST's qbuf, rbs, obl, oll, omem, events): right after
// SetConn the server hands it a function that fills a BufferStats, to be
// called on the loop goroutine only.
type BufferAware interface {
	SetBufferStats(func(*BufferStats))
}

// BufferStats are one client's buffers as the socket transport holds
// them, in bytes.
type BufferStats struct {
	QueryLen, QueryFree int  // unconsumed request bytes, and the free room after them
	ReplyCap, ReplyPeak int  // the reply buffer being filled (the listener's shared one while it serves the client), and the largest batch of replies the client has had in one serve
	ReplyLen            int  // replies produced in this serve, not yet written
	ReplyBlocks         int  // blocks of replies the socket has not taken
	ReplyMem            int  // their capacity
	Mem                 int  // what the client's memory budget charges it: its own buffers and session state
	Reading, Writing    bool // what epoll watches for it
}

// Delayer is a transport.StreamSession that may ask, after a Serve, for
// its client to be held back: its further requests wait that long
// (neither read nor executed; the loop serves everyone else meanwhile).
// The server's sessions ask after a wrong password.
type Delayer interface {
	Delay() time.Duration
}

// ProtocolErrorer is a transport.StreamSession that can say why it asked
// for its connection to close: the protocol error it answered (the server
// logs it with the client's address), or nil (QUIT).
type ProtocolErrorer interface {
	ProtocolError() error
}

// lingerTime is how long a client refused for a malformed or too large
// request may go on sending before it is closed: its answer is written, the
// write side shut down, and what it still sends is read and dropped, so
// the client sees the error and then the end of the stream rather than a
// write error (EPIPE) or a reset that can destroy the answer unread.
const lingerTime = 5 * time.Second

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
		peer := ""
		if s.tls != nil {
			peer = sockName(sa, nil)
		}
		if int(s.stats.Clients) >= s.cfg.MaxClients {
			s.stats.Rejected++
			s.refuse(fd, peer, refusal(s.cfg.Proto, command.Err, "ERR max number of clients reached"))
			continue
		}
		if s.cfg.Network == "tcp" {
			if s.cfg.Protected != nil && !loopback(sa) && s.cfg.Protected() {
				s.stats.Rejected++
				s.stats.Denied++
				s.refuse(fd, peer, refusal(s.cfg.Proto, command.Err, command.DeniedProtectedMode))
				continue
			}
			unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		}
		c := &conn{fd: fd, proto: s.cfg.Proto, lastSeen: now, lastWrite: now, events: unix.EPOLLIN | unix.EPOLLRDHUP}
		if s.tls != nil {
			// A goroutine makes the handshake; the socket joins the epoll
			// set when it is done (tls.go).
			c.tls, c.events = &tlsConn{}, 0
			c.peer, c.local = peer, sockName(unix.Getsockname(fd))
			if err := s.startTLS(c); err != nil {
				s.log.Warn("TLS handshake not started", "transport", s.name, "client", peer, "err", err)
				unix.Close(fd)
				continue
			}
		} else if err := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: c.events, Fd: int32(fd)}); err != nil {
			s.log.Warn("epoll_ctl add failed", "transport", s.name, "err", err)
			unix.Close(fd)
			continue
		}
		for fd >= len(s.conns) {
			s.conns = append(s.conns, make([]*conn, len(s.conns)+64)...)
		}
		s.conns[fd] = c
		s.stats.Clients++
		s.stats.Accepted++
		if s.debug() {
			s.log.Debug("client connected", "transport", s.name, "client", s.conns[fd].name())
		}
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
	if c.tls != nil && c.tls.tc == nil {
		return // in its handshake, on a goroutine: the socket is not the loop's yet
	}
	total := 0
	eof := false
	// A TLS client's socket may be empty while its tls.Conn still holds
	// records (one Read decrypts one): it is drained only when the
	// tls.Conn says it would block, and if the loop below stops before,
	// the client is listed to be read again (readUnread).
	unread := c.tls != nil
	if unread && c.tls.lc != nil {
		c.tls.lc.drained = false // epoll says there is something to read
	}
	for total < readBudget {
		if !s.room(c) {
			return // dropped at the input limit
		}
		n, err := s.recv(c, c.in[len(c.in):cap(c.in)])
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			if err != unix.EAGAIN {
				eof = true
			}
			unread = false
			s.unshareIn(c)
			break
		}
		if n == 0 {
			eof, unread = true, false
			s.unshareIn(c)
			break
		}
		c.in = c.in[:len(c.in)+n]
		total += n
		drained := c.tls == nil && len(c.in) < cap(c.in)
		s.serve(c)
		if c.fd < 0 {
			return
		}
		if drained || c.closing || c.waiting() || c.paused != 0 {
			break // the socket is drained, or this client has had its share
		}
	}
	if unread && !c.closing {
		s.listUnread(c)
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
	s.log.Warn("client disconnected: request larger than the input limit", "transport", s.name, "client", c.name(), "limit", s.cfg.MaxInput)
	s.sendNow(c, refusal(c.proto, command.Protocol, "ERR Protocol error: request too large (over the server's client input limit)"))
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
	limit := min(s.cfg.PassOutput-c.passOut, s.cfg.MaxOutput-c.backlog()-len(c.fresh))
	n, closeConn, stopped := 0, false, true
	if len(c.in) > 0 && limit > 0 {
		before := len(c.fresh)
		s.serving = c
		n, c.fresh, closeConn = c.sess.Serve(c.in, c.fresh, limit)
		s.serving = nil
		c.passOut += len(c.fresh) - before
		stopped = len(c.fresh)-before >= limit
		if c.delayer != nil {
			if d := c.delayer.Delay(); d > 0 {
				if c.paused == 0 {
					s.held++
				}
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
				s.log.Warn("client disconnected: protocol error", "transport", s.name, "client", c.name(), "err", err)
			}
		}
	}
}

// name returns the client's address for logs (see peerName).
func (c *conn) name() string {
	if c.peer != "" {
		return c.peer
	}
	return peerName(c.fd)
}

// refuse writes a refusal to a client turned away at accept and closes it;
// a TLS client gets it over TLS, from a goroutine of its own.
func (s *Server) refuse(fd int, peer string, text []byte) {
	if s.tls != nil {
		s.refuseTLS(fd, peer, text)
		return
	}
	unix.Write(fd, text)
	unix.Close(fd)
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
	if c.tls != nil {
		s.closeWriteTLS(c)
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
	c.sess = s.cfg.Handler.OpenStream(p)
	c.held, _ = c.sess.(buffered)
	c.delayer, _ = c.sess.(Delayer)
	c.exempt, _ = c.sess.(IdleExempter)
	if a, ok := c.sess.(ConnAware); ok {
		laddr, addr := sockName(unix.Getsockname(c.fd)), sockName(unix.Getpeername(c.fd))
		if c.peer != "" {
			laddr, addr = c.local, c.peer
		} else if strings.HasSuffix(laddr, ":0") { // a Unix peer is unnamed: Redis shows the server's path
			addr = laddr
		}
		a.SetConn(addr, laddr, c.fd,
			func() { s.kill(c) }, func(b []byte) bool { return s.push(c, b) })
	}
	if q, ok := c.sess.(QueueAware); ok {
		q.SetQueued(func() int { return c.pendBytes })
	}
	if a, ok := c.sess.(BufferAware); ok {
		a.SetBufferStats(func(b *BufferStats) { s.bufferStats(c, b) })
	}
	return true
}

// bufferStats fills b with c's buffers.
func (s *Server) bufferStats(c *conn, b *BufferStats) {
	*b = BufferStats{QueryLen: len(c.in), QueryFree: cap(c.in) - len(c.in),
		ReplyCap: cap(c.fresh), ReplyPeak: c.peak, ReplyLen: len(c.fresh),
		ReplyBlocks: len(c.pend), ReplyMem: c.pendCap, Mem: c.mem,
		Reading: c.events&unix.EPOLLIN != 0, Writing: c.events&unix.EPOLLOUT != 0}
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

// kill closes c (CLIENT KILL, a subscriber over its output limit): at once
// when c is not the client being served, releasing what it queued (a
// client whose replies fill MaxOutput is not watched for input, so
// waiting for the read path to see the end of its stream would leave it
// connected); else its socket is shut down for reading, so the read path
// sees the end of its stream and drops it like any client that went away.
func (s *Server) kill(c *conn) {
	if c.fd < 0 || s.conns[c.fd] != c {
		return
	}
	if c == s.serving {
		unix.Shutdown(c.fd, unix.SHUT_RD)
		return
	}
	s.drop(c)
}

// pushBlock is the capacity of a new block of pushed bytes; pushes
// append to the last queued block while it has room, so a subscriber
// receiving many small messages queues few blocks.
const pushBlock = 16 << 10

// push sends b to c outside of any reply (MONITOR, Pub/Sub messages, a
// replica's stream): written at once when nothing of c's waits to be
// written (one write, no epoll change: a replica's stream is pushed every
// loop cycle); else, or for what the socket did not take, appended to the
// last queued block when it has room, else queued in a block of its own
// (the client's spare block when it has one), that the next writable
// event sends; it is charged like a reply. A client that reads what it is
// sent costs no allocation per push once its first block exists: the
// emptied block is kept as its spare (see flush).
func (s *Server) push(c *conn, b []byte) bool {
	if c.fd < 0 || s.conns[c.fd] != c || c.closing || c.pendBytes+len(b) > s.cfg.MaxOutput {
		return false
	}
	s.reoffer(c)
	if len(c.pend) == 0 && c.fresh == nil { // not inside c's own serve: nothing to overtake
		n, done, _ := s.write(c, b) // after a write error the next flush drops c
		if n > 0 {
			c.lastWrite = s.now
		}
		if done {
			return true
		}
		b = b[n:] // the rest waits for a writable event
	}
	if n := len(c.pend); n > 0 && cap(c.pend[n-1])-len(c.pend[n-1]) >= len(b) {
		c.pend[n-1] = append(c.pend[n-1], b...) // every queued block is c's own
	} else {
		block := c.spare
		c.spare, c.pushed = nil, true
		if cap(block) < len(b) {
			block = make([]byte, 0, max(len(b), pushBlock))
		}
		c.pend = append(c.pend, append(block[:0], b...))
		c.pendCap += cap(block)
	}
	c.pendBytes += len(b)
	s.watch(c)
	return true
}

// reoffer puts a client whose session left read requests unconsumed
// (a parked WAIT answers through a push, and then its next requests may
// run) on the backlog, so the next Poll offers them again: no socket event
// comes for bytes already read. A request really incomplete costs one more
// parse. Not from inside c's own serve, which decides for itself.
func (s *Server) reoffer(c *conn) {
	if !c.partial || len(c.in) == 0 || c.queued || c.fresh != nil || c.paused != 0 {
		return
	}
	c.partial = false
	c.queued = true
	s.backlog = append(s.backlog, c)
	s.hot = true
}

// drop closes a client at once and releases what it held.
func (s *Server) drop(c *conn) {
	if c.fd < 0 || s.conns[c.fd] != c {
		return
	}
	if s.debug() {
		s.log.Debug("client disconnected", "transport", s.name, "client", c.name())
	}
	if c.tls != nil {
		s.closeTLS(c)
	}
	unix.EpollCtl(s.epfd, unix.EPOLL_CTL_DEL, c.fd, nil)
	unix.Close(c.fd)
	s.conns[c.fd] = nil
	if c.paused != 0 {
		c.paused = 0
		s.held--
	}
	c.fd = -1
	if c.sess != nil {
		c.sess.Close()
	}
	c.in, c.inShared, c.fresh, c.pend, c.pendBytes, c.pendCap, c.spare = nil, false, nil, nil, 0, 0, nil
	s.stats.Buffered -= int64(c.mem)
	s.budget.charge(c, 0)
	s.stats.Clients--
}

// debug reports whether the log takes debug lines: a client's connect and
// disconnect are logged at debug, and naming the client costs a system call
// (getpeername) that the loop spends only when someone reads them.
func (s *Server) debug() bool { return s.log.Enabled(context.Background(), slog.LevelDebug) }

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

// refusal is the error reply a client gets, in its protocol, when the
// transport itself turns it away (too many clients, a request over the
// input limit, the client memory budget): a RESP error line, or a
// SOFH-framed SBE Reply of kind failure with the same text (correlation id
// 0, as for a protocol error).
func refusal(p proto.Protocol, status command.Status, text string) []byte {
	if p == proto.SBE {
		var c sbe.Codec
		return c.AppendFramedReply(nil, &command.Reply{Status: status, Kind: command.Error, Value: []byte(text)})
	}
	return []byte("-" + text + "\r\n")
}
