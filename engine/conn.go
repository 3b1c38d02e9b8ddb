package engine

import "net"

// Conn is what a transport can tell the engine about a client's
// connection, and do for it: the server hands it over with Session.Attach
// when the transport offers it (the Unix and TCP socket transports do).
// Every function is called on the loop goroutine only.
type Conn struct {
	// Addr and LocalAddr are the connection's addresses as CLIENT LIST
	// shows them ("127.0.0.1:50000"; a Unix socket's path and ":0").
	Addr, LocalAddr string
	// FD is the socket's file descriptor (-1 when there is none).
	FD int
	// Kill closes the connection (CLIENT KILL of another client).
	Kill func()
	// Push queues b for the client outside of any reply (MONITOR's
	// stream, Pub/Sub messages) and reports whether it could; it copies b.
	Push func(b []byte) bool
	// Queued returns the bytes queued for the client and not yet written
	// (nil: unknown); Pub/Sub's client-output-buffer-limit reads it after
	// each Push.
	Queued func() int
	// Buffers, when set, fills in the connection's buffers as the
	// transport holds them, for CLIENT LIST.
	Buffers func(*ConnBuffers)
	// Park and Answer are set by a message transport that can answer a
	// request later (see Session.AttachLater). Park tells it that the
	// request being served is answered later: it sends no reply for it
	// now, and serves none of the client's further requests until Answer
	// has sent that reply (a blocked pop's element, or its timeout) as the
	// client's next reply message. Answer copies b and reports whether it
	// could send it. Stream transports answer later through Push instead.
	Park   func()
	Answer func(b []byte) bool
}

// ConnBuffers are a connection's buffers in bytes, as CLIENT LIST shows
// them: QueryLen and QueryFree are qbuf and qbuf-free, ReplyCap and
// ReplyPeak rbs and rbp, ReplyLen obl, ReplyBlocks oll, ReplyMem omem; Mem
// is what the transport holds for the client in all (part of tot-mem);
// Reading and Writing are events r and w.
type ConnBuffers struct {
	QueryLen, QueryFree int
	ReplyCap, ReplyPeak int
	ReplyLen            int
	ReplyBlocks         int
	ReplyMem            int
	Mem                 int
	Reading, Writing    bool
}

// WaitsForServer reports whether the client waits for what the server
// sends it out of turn (it has Pub/Sub subscriptions, is a MONITOR, or is
// blocked in a blocking pop or WAIT): such a client is not idle when it
// sends nothing (Redis's timeout spares it).
func (s *Session) WaitsForServer() bool { return s.pubsub || s.monitor || s.waiting }

// SetQueued tells the engine how to read the bytes queued for the
// session's client (see Conn.Queued), after Attach.
func (s *Session) SetQueued(q func() int) { s.conn.Queued = q }

// Attach records the session's connection. Without it the session shows
// no address in CLIENT LIST, cannot be killed by another client (only
// marked to close when it next sends a request) and cannot MONITOR.
func (s *Session) Attach(c Conn) {
	s.conn = c
	host, _, err := net.SplitHostPort(c.Addr)
	s.unix = err == nil && net.ParseIP(host) == nil // a socket path, not an IP
}

// AttachLater gives a message transport's session (the ring, Aeron) a way
// to answer a request later (see Conn.Park and Conn.Answer), so that a
// blocking pop that finds no data parks there as it does on a socket,
// without blocking the loop.
func (s *Session) AttachLater(park func(), answer func(b []byte) bool) {
	s.conn.Park, s.conn.Answer = park, answer
}

// Addr is the client's address as CLIENT LIST shows it ("" when the
// transport gave none), for logs.
func (s *Session) Addr() string { return s.conn.Addr }

// AttachBuffers gives the session the transport's view of its buffers
// (CLIENT LIST's qbuf, rbs, obl, oll, omem, events).
func (s *Session) AttachBuffers(f func(*ConnBuffers)) { s.conn.Buffers = f }
