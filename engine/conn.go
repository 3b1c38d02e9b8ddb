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
	// stream) and reports whether it could.
	Push func(b []byte) bool
	// Buffers, when set, fills in the connection's buffers as the
	// transport holds them, for CLIENT LIST.
	Buffers func(*ConnBuffers)
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

// Attach records the session's connection. Without it the session shows
// no address in CLIENT LIST, cannot be killed by another client (only
// marked to close when it next sends a request) and cannot MONITOR.
func (s *Session) Attach(c Conn) {
	s.conn = c
	host, _, err := net.SplitHostPort(c.Addr)
	s.unix = err == nil && net.ParseIP(host) == nil // a socket path, not an IP
}

// AttachBuffers gives the session the transport's view of its buffers
// (CLIENT LIST's qbuf, rbs, obl, oll, omem, events).
func (s *Session) AttachBuffers(f func(*ConnBuffers)) { s.conn.Buffers = f }
