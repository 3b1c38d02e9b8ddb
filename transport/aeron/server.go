package aeron

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	ae "github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/transport"
)

// Stats counts what a Server did. Fill it with Server.Stats.
type Stats struct {
	Clients        int   // connected and served now
	Pending        int   // reply path made, not yet connected
	Accepted       int64 // clients whose reply path was made
	Gone           int64 // clients whose image went away or whose reply path closed
	Dropped        int64 // clients dropped because a reply could not be sent for OfferTimeout
	Stalls         int64 // times a reply could not be sent at once and waited (see Options.OfferTimeout)
	Rejected       int64 // clients refused (MaxClients, MaxPending, or the reply publication failed)
	TooLarge       int64 // requests longer than Options.MaxRequest, answered with an error (the client stays)
	Malformed      int64 // clients closed for a malformed goblin frame (after an error reply)
	Chunked        int64 // requests and replies sent in chunks (longer than the stream's max message)
	Buffered       int64 // bytes the clients hold now in partial chunked requests and waiting replies
	Evicted        int64 // clients dropped because Buffered passed Options.MaxClientMemory
	Requests       int64 // requests served
	BytesIn        int64 // request bytes received (whole requests, after reassembly)
	BytesOut       int64 // reply bytes sent (whole replies, before chunking)
	DriverRestarts int64 // media drivers started again after one died
	Reconnects     int64 // times the server re-added its subscription after losing its driver
}

// Server is the loop side of the Aeron transport: one request
// subscription, one response publication per client. Poll, Clients, Stats
// and Close are for the loop goroutine only.
type Server struct {
	o       Options
	name    string
	tgt     transport.Target
	clients []*client // served: reply path connected
	pending []*client // reply path made, not yet connected
	rr      int
	cur     *client
	// replaying: serveHeld is serving requests that waited while their
	// client was parked, which serve must not hold again.
	replaying bool
	out       []byte
	asm       *ae.FragmentAssembler
	onFrag    ae.FragmentHandler
	stats     Stats
	gen       uint64 // the driver generation the loop serves
	stalled   int    // clients whose replies wait in their backlog
	buffer    int64  // what every client's mem adds up to (Stats.Buffered)
	hello     []byte // the first message on every response stream
	errBuf    []byte // error replies the transport makes itself
	closed    bool
	// ctrs are the stat counters SetCounters fills (see ExportCounters),
	// nil while the manager has none allocated on the current client.
	ctrs []*ae.Counter

	// Events from the manager goroutine to the loop. pending is set
	// (release, by the atomic) after appending under mu; the loop loads it
	// on every Poll and takes mu only when it is set.
	mu       sync.Mutex
	events   []event
	evQueued atomic.Bool
	// waiting counts the reply publications the manager made whose
	// client has not connected, and those closed unconnected whose log
	// the driver may still hold: the manager adds one before it makes
	// one (and makes none at MaxPending); the loop takes one off when
	// such a client connects or leaves without a close to linger, the
	// manager when a closed one's replyLinger has passed.
	waiting atomic.Int32

	m *manager

	// emb is the in-process media driver this server runs (or helps run,
	// when another listener of this process owns it), or nil. Poll runs
	// its duty cycle when driverGap has passed since lastDriverWork (the
	// loop's clock): the gap backs off from driverMinGap after a cycle
	// that did work to driverMaxGap while the driver has nothing to do,
	// as the Java driver's own idle strategy backs off. Set before the
	// loop starts; loop only after.
	emb            *embedded
	lastDriverWork int64
	// more: the last Poll spent its FragmentLimit, at moreAt (Deadline).
	more      bool
	moreAt    int64
	driverGap int64
	// network: the driver has UDP sockets (a UDP server's in-process
	// driver), so every Poll runs its duty cycle, and the loop parks on
	// waitFD, an epoll set holding the driver's, so a datagram wakes it.
	network bool
	waitFD  int
	// offset is the loop's clock minus the driver's (they start apart).
	offset    int64
	offsetSet bool
}

// The in-process driver's duty cycle runs at least every driverMaxGap —
// the Java driver's longest idle park, so clients' commands are answered
// as promptly as by a frugal Java driver, and the loop may not park
// longer — and, right after it did work (a command, a publication limit
// moving), again within driverMinGap.
const (
	driverMinGap = 10 * time.Microsecond
	driverMaxGap = time.Millisecond
)

// client is one connected client, loop side.
type client struct {
	img    *ae.Image
	pub    *ae.ExclusivePublication
	corr   int64 // image correlation id
	maxMsg int
	sess   transport.MessageSession
	dead   bool
	served bool // its reply publication connected (it left pending)
	// lingers: its reply publication was closed before it connected;
	// the manager gives its place among MaxPending back once the
	// driver has let the log go (replyLinger).
	lingers bool
	session int32
	req     assembly // a chunked request being gathered
	mem     int      // bytes charged for req and backlog (see charge)

	// Replies that could not be offered at once, in order: their bytes
	// and lengths. While any wait, the client's image is not polled, so
	// its later requests wait in the image (the client feels the back
	// pressure) and replies keep their order.
	backlog     []byte
	backlogLens []int
	backlogHead int // backlogLens[backlogHead:] wait; backlog[backlogOff:] holds them
	backlogOff  int
	stalledAt   time.Time // when the oldest waiting reply failed to go
	closeAfter  bool      // release once the backlog is sent (closeConn, a malformed frame)
	closeWhy    string    // why, for the log

	// later is sess when it can answer a request later (a blocking pop).
	// While it is parked its image is not polled; requests that came in
	// the same poll as the parked one wait here, in order (their bytes and
	// lengths), and are served once it is answered.
	later    transport.LaterAware
	held     []byte
	heldLens []int
	// parkedNow is later.Parked() as it stood after the last ServeMessage
	// or answer of c: the only calls in which a LaterAware session parks
	// or unparks (its contract), so between them it cannot change. Loop
	// goroutine only. (Asking the session through the interface cost a
	// round trip three calls.)
	parkedNow bool
}

// parked reports whether c's last request waits for a later answer.
func (c *client) parked() bool { return c.parkedNow }

// Listen starts (or, with Options.External, finds) the media driver,
// subscribes to the request channel and returns the server, ready for the
// loop to poll. An IPC server's driver, by default, runs inside this
// process: Poll runs its duty cycle.
func Listen(o Options) (*Server, error) {
	o.ensureDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	if abs, err := filepath.Abs(o.Dir); err == nil {
		o.Dir = abs
	}
	s := &Server{
		o:    o,
		name: "aeron-" + o.Media + "/" + o.Proto.String(),
		out:  make([]byte, 0, 4096),

		driverGap: int64(driverMinGap),
		waitFD:    -1,
	}
	s.hello = appendHello(nil, hello{proto: o.Proto, maxRequest: o.MaxRequest})
	s.asm = ae.NewFragmentAssembler(s.serve, 4096)
	// A request is at most MaxRequest bytes; a chunk frame adds its header.
	s.asm.SetMaxLength(o.MaxRequest + frameHeaderLen)
	s.onFrag = s.onFragment
	s.tgt = transport.Target{Scheme: transport.Aeron, Address: o.Media, Proto: o.Proto, ProtoSet: true, Params: map[string]string{"dir": o.Dir}}
	if o.Media == ae.MediaUDP {
		s.tgt.Params["endpoint"] = o.Endpoint
		s.tgt.Params["control"] = o.Control
	}
	switch {
	case o.External:
		s.tgt.Params["driver"] = "external"
	case o.JavaDriver:
		s.tgt.Params["driver"] = "java"
	default:
		s.tgt.Params["driver"] = "go"
	}
	m := newManager(s)
	if err := m.start(); err != nil {
		return nil, err
	}
	if s.emb != nil && o.Media == ae.MediaUDP {
		if err := s.watchDriver(); err != nil {
			s.m = m
			s.Close()
			return nil, err
		}
	}
	s.m = m
	go m.run()
	return s, nil
}

// watchDriver makes the server's park descriptor: an epoll set holding the
// in-process driver's (each server has its own, so two listeners sharing a
// driver can both be Waitable).
func (s *Server) watchDriver() error {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return fmt.Errorf("aeron transport: epoll_create: %w", err)
	}
	dfd := s.emb.d.WaitFD()
	if err := unix.EpollCtl(fd, unix.EPOLL_CTL_ADD, dfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(dfd)}); err != nil {
		unix.Close(fd)
		return fmt.Errorf("aeron transport: epoll_ctl: %w", err)
	}
	s.network, s.waitFD = true, fd
	return nil
}

// WaitFD is a descriptor that polls readable when a datagram waits for
// the in-process driver of a UDP server (server.Waitable), or −1: the
// loop then parks blind, up to Deadline.
func (s *Server) WaitFD() int { return s.waitFD }

// CheckNow is part of server.Waitable: every Poll reads the driver's
// sockets already.
func (s *Server) CheckNow() {}

// PrepareToWait is server.WaitPreparer: the loop is about to park on
// WaitFD, so the in-process driver's sockets join its epoll set (they
// stay out of it while the loop busy-polls: see driver.PrepareToWait).
func (s *Server) PrepareToWait() {
	if s.network {
		s.emb.d.PrepareToWait() // a failure leaves a park of at most Deadline
	}
}

// Deadline is when (on the loop's clock, as Poll's now) the loop must
// poll again for the in-process driver's next duty cycle, at most
// driverMaxGap after the last; math.MaxInt64 when the server runs none. The loop does not park past
// it (server.Deadliner).
func (s *Server) Deadline() int64 {
	if s.more {
		// The last Poll spent FragmentLimit: requests may wait that
		// nothing wakes a park (or a save's rest, server.Loop.Rest) for.
		return s.moreAt
	}
	switch {
	case s.emb == nil:
		return math.MaxInt64
	case s.network:
		return s.emb.deadline(s.lastDriverWork+int64(driverMaxGap)-s.offset) + s.offset
	}
	return s.lastDriverWork + s.driverGap
}

// Name is "aeron-ipc/sbe", "aeron-udp/resp" and so on.
func (s *Server) Name() string { return s.name }

// Target is the target the server serves, with its driver directory.
func (s *Server) Target() transport.Target { return s.tgt }

// Dir is the Aeron directory of the server's media driver.
func (s *Server) Dir() string { return s.o.Dir }

// Clients is the number of served clients.
func (s *Server) Clients() int { return len(s.clients) }

// Stats fills st (loop goroutine only).
func (s *Server) Stats(st *Stats) {
	*st = s.stats
	st.Clients = len(s.clients)
	st.Pending = len(s.pending)
	st.Buffered = s.buffer
	st.Rejected += s.m.rejected.Load()
	st.DriverRestarts = s.m.restarts.Load()
	st.Reconnects = s.m.reconnects.Load()
}

// UpdateStats implements transport.StatsReporter: the Aeron listener's
// counters in the shape every transport reports (loop goroutine only). A
// client whose image or reply path went is ClientGone, one dropped for
// unsent replies a SlowConsumer; one closed after a reply (QUIT) is the
// remainder.
func (s *Server) UpdateStats(st *transport.Stats) {
	var a Stats
	s.Stats(&a)
	one := transport.Stats{
		Clients:  int64(a.Clients),
		Connects: a.Accepted,
		Rejected: a.Rejected,
		BytesIn:  a.BytesIn,
		BytesOut: a.BytesOut,
		Queued:   a.Buffered,
	}
	one.Disconnects[transport.ClientGone] = a.Gone
	one.Disconnects[transport.SlowConsumer] = a.Dropped
	one.Disconnects[transport.Malformed] = a.Malformed
	one.Disconnects[transport.ClientMemory] = a.Evicted
	one.Disconnects[transport.ServerClosed] = one.Remainder(transport.ServerClosed)
	st.Add(&one)
}

// Poll serves up to FragmentLimit requests, fairly across clients, and
// handles the manager's events (new clients, gone clients, driver loss).
func (s *Server) Poll(now int64) int {
	work := 0
	s.more = false
	if s.emb != nil && (s.network || now-s.lastDriverWork >= s.driverGap) {
		// A UDP driver runs every Poll: datagrams wait for it.
		s.lastDriverWork = now
		if !s.offsetSet {
			s.offset, s.offsetSet = now-s.emb.now(), true
		}
		if n := s.emb.work(); n > 0 {
			work += n
			s.driverGap = int64(driverMinGap)
		} else {
			s.driverGap = min(2*s.driverGap, int64(driverMaxGap))
		}
	}
	if s.evQueued.Load() {
		work += s.drain()
	}
	if len(s.pending) > 0 {
		work += s.promote()
	}
	if s.stalled > 0 {
		work += s.flush()
	}
	n := len(s.clients)
	if n == 0 {
		return work
	}
	budget := s.o.FragmentLimit
	served := 0
	start := s.rr
	if start >= n {
		start = 0
	}
	s.rr = start + 1
	swept := false
	// j walks the clients round from start: a wrap, not a modulo (a
	// division on every request of a depth-one client).
	for i, j := 0, start; i < n && budget > 0; i, j = i+1, j+1 {
		if j == n {
			j = 0
		}
		c := s.clients[j]
		if c.dead {
			swept = true
			continue
		}
		if len(c.backlogLens) > 0 {
			continue // its replies wait; flush retries them
		}
		if c.later != nil {
			if c.parked() {
				continue // its requests wait for the parked one's answer
			}
			if len(c.heldLens) > 0 {
				n := s.serveHeld(c)
				budget -= n
				work += n
				if c.dead || c.parked() || len(c.heldLens) > 0 {
					continue
				}
			}
		}
		s.cur = c
		got := c.img.Poll(s.onFrag, budget)
		budget -= got
		work += got
		served += got
		if c.dead {
			swept = true
		} else if got == 0 && c.img.IsClosed() {
			// The conductor closed the image (driver lost, or it is
			// going away): the remove event follows; stop polling it now.
			swept = true
			s.stats.Gone++
			s.release(c, true, "image closed")
		}
	}
	s.cur = nil
	// Fragments may wait past the budget; no descriptor says so.
	s.moreAt, s.more = now, budget <= 0
	if served > 0 && s.network {
		// The replies just offered leave now (a duty cycle runs the
		// driver's sender first), not after the loop's store maintenance,
		// idle step and next clock read; on the driver's clock derived
		// from the loop's, which saves reading it again before the send.
		work += s.emb.workAt(now - s.offset)
	}
	if swept {
		s.sweep()
	}
	return work
}

// onFragment is the request subscription's fragment handler: a request in
// one fragment, the common case, goes straight to serve; the fragments of
// a longer one are gathered by the assembler first. (The assembler as the
// handler cost every request a second indirect call.)
func (s *Server) onFragment(buf []byte, h *ae.Header) {
	if h.Unfragmented() {
		s.serve(buf, h)
		return
	}
	s.asm.OnFragment(buf, h)
}

// serve executes one request (whole message) of s.cur and sends the reply.
// A goblin frame (a piece of a chunked request) is gathered first.
func (s *Server) serve(msg []byte, _ *ae.Header) {
	c := s.cur
	if c == nil || c.dead {
		return
	}
	if c.later != nil && (c.parked() || len(c.heldLens) > 0) && !s.replaying {
		// Came in the same poll as a request that parked: it waits its turn.
		c.held = append(c.held, msg...)
		c.heldLens = append(c.heldLens, len(msg))
		s.charge(c) // counts toward MaxClientMemory like a partial request
		return
	}
	if isFrame(msg) {
		var ok bool
		if msg, ok = s.gather(c, msg); !ok {
			return
		}
	} else if len(msg) > s.o.MaxRequest {
		s.refuseLength(c, msg, len(msg))
		return
	}
	reply, closeConn := c.sess.ServeMessage(msg, s.out[:0])
	s.stats.Requests++
	s.stats.BytesIn += int64(len(msg))
	s.stats.BytesOut += int64(len(reply))
	if cap(reply) <= keepBuffer {
		s.out = reply[:0]
	}
	if c.req.buf != nil {
		c.req.reset() // served: give back a large request's buffer
		s.charge(c)
	}
	if c.later != nil {
		c.parkedNow = c.later.Parked()
	}
	if c.parkedNow {
		return // answered later, through answer
	}
	if !s.send(c, reply) {
		return
	}
	if closeConn {
		s.closeAfterReplies(c, "closed by request")
	}
}

// serveHeld serves, in order, the requests that waited while c was parked,
// until one parks again; it returns how many it served.
func (s *Server) serveHeld(c *client) int {
	s.cur, s.replaying = c, true
	n, off := 0, 0
	for n < len(c.heldLens) && !c.dead && !c.parked() {
		l := c.heldLens[n]
		s.serve(c.held[off:off+l], nil)
		off += l
		n++
	}
	s.cur, s.replaying = nil, false
	c.held = c.held[:copy(c.held, c.held[off:])]
	c.heldLens = c.heldLens[:copy(c.heldLens, c.heldLens[n:])]
	if len(c.heldLens) == 0 && cap(c.held) > keepBuffer {
		c.held = nil
		s.charge(c)
	}
	return n
}

// answer sends the later reply of c's parked request (a blocking pop
// served by another client's push, or timed out) as any reply goes: at
// once, or after its backlog. It returns false if c is gone.
func (s *Server) answer(c *client, reply []byte) bool {
	if c.dead {
		return false
	}
	s.stats.BytesOut += int64(len(reply))
	return s.send(c, reply)
}

// gather adds one chunk of a request to c's assembly and returns the whole
// request once its last piece came. A request longer than MaxRequest is
// answered with an error at its first piece and its other pieces are
// dropped as they come; the client stays. A malformed chunk is answered
// with a protocol error and closes the client.
func (s *Server) gather(c *client, msg []byte) ([]byte, bool) {
	ch, err := parseChunk(msg)
	if err == nil && !c.req.inProgress() && ch.total > s.o.MaxRequest {
		s.refuseLength(c, ch.piece, ch.total)
		c.req.discard = true
	}
	var done bool
	if err == nil {
		done, err = c.req.add(ch)
		if !s.charge(c) {
			return nil, false
		}
	}
	if err != nil {
		s.stats.Malformed++
		s.errBuf = errorReply(s.errBuf[:0], s.o.Proto, nil, "ERR Protocol error: "+err.Error())
		if s.send(c, s.errBuf) {
			s.closeAfterReplies(c, "malformed frame: "+err.Error())
		}
		return nil, false
	}
	if !done {
		return nil, false
	}
	if c.req.discard {
		c.req.reset()
		s.charge(c)
		return nil, false
	}
	s.stats.Chunked++
	return c.req.buf, true
}

// refuseLength answers a request of n bytes, which starts with head, with
// an error naming the limit.
func (s *Server) refuseLength(c *client, head []byte, n int) {
	s.stats.TooLarge++
	s.errBuf = errorReply(s.errBuf[:0], s.o.Proto, head, fmt.Sprintf(
		"ERR request of %d bytes exceeds the server's request limit of %d bytes (goblin-server --client-input-limit)",
		n, s.o.MaxRequest))
	s.send(c, s.errBuf)
}

// closeAfterReplies releases c once the replies waiting in its backlog
// (the last of them says why) have gone, or now if none wait.
func (s *Server) closeAfterReplies(c *client, why string) {
	if c.dead {
		return
	}
	if len(c.backlogLens) > 0 {
		c.closeAfter, c.closeWhy = true, why
		return
	}
	s.stats.Gone++
	s.release(c, true, why)
}

// send offers reply on c's publication. A reply that cannot go at once
// (back-pressured, the driver's admin action, or not connected) is retried
// OfferRetries times; if it still cannot go, it waits in c's backlog and
// Poll retries it (flush) without blocking the loop, until OfferTimeout
// after the first failure, when the client is dropped. A freshly connected
// publication whose limit the driver has not raised yet, or a driver or
// client starved of CPU for a moment, is thus not mistaken for a client
// that stopped reading. A closed publication or an exhausted stream
// releases the client at once. A reply longer than the stream's maximum
// message goes in chunks. send returns false if c was released.
func (s *Server) send(c *client, reply []byte) bool {
	if len(reply) > c.maxMsg {
		return s.sendChunked(c, reply)
	}
	if len(c.backlogLens) == 0 {
		if c.pub.Offer(reply) > 0 {
			return true
		}
		if sent, alive := s.offerRetrying(c, reply, nil); sent || !alive {
			return alive
		}
	}
	return s.queue(c, reply, nil)
}

// sendChunked sends a reply longer than the stream's maximum message as
// chunk frames, each as long as the stream allows; those that cannot go at
// once wait in the backlog like any reply.
func (s *Server) sendChunked(c *client, reply []byte) bool {
	if len(reply) > MaxChunkedMessage {
		s.errBuf = errorReply(s.errBuf[:0], s.o.Proto, nil, fmt.Sprintf(
			"ERR reply of %d bytes exceeds the Aeron transport's message limit of %d bytes", len(reply), MaxChunkedMessage))
		return s.send(c, s.errBuf)
	}
	s.stats.Chunked++
	piece := c.maxMsg - frameHeaderLen
	var hdr [frameHeaderLen]byte
	for off := 0; off < len(reply); off += piece {
		end := min(off+piece, len(reply))
		putChunkHeader(&hdr, off, len(reply))
		if len(c.backlogLens) == 0 {
			sent, alive := s.offerRetrying(c, hdr[:], reply[off:end])
			if !alive {
				return false
			}
			if sent {
				continue
			}
		}
		if !s.queue(c, hdr[:], reply[off:end]) {
			return false
		}
	}
	return true
}

// offerRetrying offers a+b as one message up to OfferRetries times. sent
// says it went; alive is false if the publication failed for good and c
// was released.
func (s *Server) offerRetrying(c *client, a, b []byte) (sent, alive bool) {
	var r int64
	for range s.o.OfferRetries {
		if r = c.pub.Offer2(a, b); r > 0 {
			return true, true
		}
		if !retryable(r) {
			s.stats.Gone++
			s.dropForReply(c, "reply offer: "+ae.StatusString(r)+" ("+pubState(c.pub)+")")
			return false, false
		}
	}
	return false, true
}

// queue appends a+b as one message to c's backlog, starting the stall
// clock if the backlog was empty. It returns false if the memory it took
// got c dropped (see charge).
func (s *Server) queue(c *client, a, b []byte) bool {
	if len(c.backlogLens) == 0 {
		s.stats.Stalls++
		s.stalled++
		c.stalledAt = time.Now()
		s.o.Logger.Debug("aeron reply waits", "transport", s.name, "image", c.corr, "session", c.session,
			"publication", pubState(c.pub))
	}
	c.backlog = append(append(c.backlog, a...), b...)
	c.backlogLens = append(c.backlogLens, len(a)+len(b))
	return s.charge(c)
}

// charge brings c's share of Buffered up to date (what its partial
// request and waiting replies hold) and, while the total is over
// MaxClientMemory, drops the client holding the most (Redis's
// maxmemory-clients, as the socket listeners do). It reports whether c
// itself is still served.
func (s *Server) charge(c *client) bool {
	if !c.dead {
		mem := cap(c.req.buf) + cap(c.backlog) + cap(c.held)
		s.buffer += int64(mem - c.mem)
		c.mem = mem
	}
	for s.o.MaxClientMemory > 0 && s.buffer > s.o.MaxClientMemory {
		var big *client
		for _, list := range [][]*client{s.clients, s.pending} {
			for _, x := range list {
				if !x.dead && x.mem > 0 && (big == nil || x.mem > big.mem) {
					big = x
				}
			}
		}
		if big == nil {
			break
		}
		s.stats.Evicted++
		s.dropForReply(big, fmt.Sprintf("the clients hold %d bytes in partial requests and waiting replies, past the limit of %d (goblin-server --maxmemory-clients); this one held the most, %d",
			s.buffer, s.o.MaxClientMemory, big.mem))
	}
	return !c.dead
}

// retryable reports whether an offer result is one to try again: the
// stream is full for now, the driver is busy, or (UDP) the client's driver
// has not sent a status message for a while. Closed and
// MaxPositionExceeded are final.
func retryable(r int64) bool {
	return r == ae.BackPressured || r == ae.AdminAction || r == ae.NotConnected
}

// flush retries the stalled clients' waiting replies, in order, and drops
// a client whose oldest waiting reply has not gone for OfferTimeout.
func (s *Server) flush() int {
	work := 0
	var now time.Time
	for _, c := range s.clients {
		if c.dead || len(c.backlogLens) == 0 {
			continue
		}
		if c.img.IsClosed() { // the client went: its remove event follows
			s.stats.Gone++
			s.release(c, true, "image closed")
			continue
		}
		sent := 0
		var r int64
		for _, n := range c.backlogLens[c.backlogHead:] {
			if r = c.pub.Offer(c.backlog[c.backlogOff : c.backlogOff+n]); r <= 0 {
				break
			}
			c.backlogOff += n
			sent++
		}
		// What went is skipped, not moved: a chunked reply's backlog is as
		// long as the reply, and moving it after every few chunks sent
		// would cost the loop the square of its length.
		c.backlogHead += sent
		work += sent
		if c.backlogHead == len(c.backlogLens) {
			s.unstall(c)
			s.charge(c)
			if c.closeAfter {
				s.stats.Gone++
				s.release(c, true, c.closeWhy)
			}
			continue
		}
		if sent > 0 {
			c.stalledAt = time.Now() // progress: the client reads; time the rest from now
		}
		if !retryable(r) {
			s.stats.Gone++
			s.dropForReply(c, "reply offer: "+ae.StatusString(r)+" ("+pubState(c.pub)+")")
			continue
		}
		if now.IsZero() {
			now = time.Now()
		}
		if waited := now.Sub(c.stalledAt); waited >= s.o.OfferTimeout {
			s.stats.Dropped++
			s.dropForReply(c, fmt.Sprintf("reply not sent for %v (offer timeout %v): %s (%s)",
				waited.Round(time.Millisecond), s.o.OfferTimeout, ae.StatusString(r), pubState(c.pub)))
		}
	}
	return work
}

// unstall forgets c's backlog (sent, or the client is going).
func (s *Server) unstall(c *client) {
	if len(c.backlogLens) == 0 {
		return
	}
	s.stalled--
	c.backlog, c.backlogLens = c.backlog[:0], c.backlogLens[:0]
	c.backlogHead, c.backlogOff = 0, 0
	if cap(c.backlog) > 64<<10 {
		c.backlog = nil
	}
}

// pubState describes a reply publication for logs: connected, closed,
// position and the driver's limit.
func pubState(p *ae.ExclusivePublication) string {
	return fmt.Sprintf("connected=%t closed=%t position=%d limit=%d",
		p.IsConnected(), p.IsClosed(), p.Position(), p.PositionLimit())
}

// release marks c dead, closes its session and hands its publication to the
// manager to close (unless the whole client is being thrown away). A
// client going is normal and logged at Debug; see dropForReply.
func (s *Server) release(c *client, closePub bool, why string) {
	s.releaseAt(c, closePub, slog.LevelDebug, why)
}

// dropForReply releases c because a reply to it could not be sent, which
// is not normal: it is logged at Warn.
func (s *Server) dropForReply(c *client, why string) {
	s.releaseAt(c, true, slog.LevelWarn, why)
}

func (s *Server) releaseAt(c *client, closePub bool, lvl slog.Level, why string) {
	if c.dead {
		return
	}
	s.o.Logger.Log(context.Background(), lvl, "aeron client released", "transport", s.name, "image", c.corr,
		"session", c.session, "why", why)
	c.dead = true
	s.unstall(c)
	s.buffer -= int64(c.mem)
	c.mem, c.req = 0, assembly{}
	c.sess.Close()
	s.asm.FreeSessionBuffer(c.session)
	if closePub {
		c.lingers = !c.served
		s.m.post(mgrEvent{kind: mgrClosePub, pub: c.pub, unconnected: c.lingers})
	}
}

// sweep removes dead clients from the served list.
func (s *Server) sweep() {
	keep := s.clients[:0]
	for _, c := range s.clients {
		if !c.dead {
			keep = append(keep, c)
		}
	}
	clear(s.clients[len(keep):])
	s.clients = keep
}

// promote moves clients whose reply publication connected to the served
// list. Until then their requests wait in their images.
func (s *Server) promote() int {
	work := 0
	keep := s.pending[:0]
	for _, c := range s.pending {
		switch {
		case c.dead:
			if !c.lingers {
				s.waiting.Add(-1)
			}
		case c.pub.IsConnected() && c.pub.PositionLimit() > c.pub.Position():
			// Connected and the driver has raised the publication's limit:
			// the driver links a subscriber (connected) a moment before it
			// grants the first window, and a reply offered in between would
			// look back-pressured. The hello goes first.
			if s.send(c, s.hello) {
				c.served = true
				s.clients = append(s.clients, c)
			}
			if !c.lingers {
				s.waiting.Add(-1)
			}
			work++
		case c.pub.IsClosed() || c.img.IsClosed():
			s.stats.Gone++
			s.release(c, true, "gone before connecting") // lingers
		default:
			keep = append(keep, c)
		}
	}
	clear(s.pending[len(keep):])
	s.pending = keep
	return work
}

// drain handles the manager's events on the loop goroutine.
func (s *Server) drain() int {
	s.mu.Lock()
	evs := s.events
	s.events = nil
	s.evQueued.Store(false)
	s.mu.Unlock()
	for _, e := range evs {
		switch e.kind {
		case evAdd:
			if e.gen != s.gen || s.closed {
				s.m.post(mgrEvent{kind: mgrClosePub, pub: e.pub, unconnected: true})
				continue
			}
			if len(s.clients)+len(s.pending) >= s.o.MaxClients {
				s.stats.Rejected++
				s.m.post(mgrEvent{kind: mgrClosePub, pub: e.pub, unconnected: true})
				continue
			}
			c := &client{img: e.img, pub: e.pub, corr: e.img.CorrelationID(), session: e.img.SessionID(),
				maxMsg: e.pub.MaxMessageLength(), sess: s.o.Handler.OpenMessage(s.o.Proto)}
			if l, ok := c.sess.(transport.LaterAware); ok {
				c.later = l
				l.SetAnswer(func(reply []byte) bool {
					c.parkedNow = l.Parked() // unparked: this is its answer
					return s.answer(c, reply)
				})
			}
			s.pending = append(s.pending, c)
			s.stats.Accepted++
		case evRemove:
			for _, list := range [][]*client{s.clients, s.pending} {
				for _, c := range list {
					if c.corr == e.corr && !c.dead {
						s.stats.Gone++
						s.release(c, true, "image unavailable")
					}
				}
			}
			s.sweep()
		case evReset:
			for _, list := range [][]*client{s.clients, s.pending} {
				for _, c := range list {
					if !c.dead {
						s.stats.Gone++
						s.release(c, false, "driver lost")
					}
				}
			}
			for _, c := range s.pending {
				if !c.lingers {
					s.waiting.Add(-1)
				}
			}
			s.clients, s.pending = s.clients[:0], s.pending[:0]
			s.ctrs = nil // they go with the manager's old client
			s.gen = e.gen
			close(e.ack)
		case evCounters:
			if e.gen == s.gen && !s.closed {
				s.ctrs = e.ctrs
			}
		}
	}
	return len(evs)
}

// Close closes every client, the subscription and the Aeron client, and
// stops the media driver if the server started it.
func (s *Server) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.stalled = 0
	for _, list := range [][]*client{s.clients, s.pending} {
		for _, c := range list {
			if !c.dead {
				c.dead = true
				c.sess.Close()
			}
		}
	}
	s.clients, s.pending = nil, nil
	s.ctrs = nil // the manager removes them once stopped
	close(s.m.stop)
	<-s.m.done
	if s.waitFD >= 0 {
		unix.Close(s.waitFD)
		s.waitFD = -1
	}
	return s.m.closeErr
}
