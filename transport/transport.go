// Package transport holds the two small interfaces every goblin transport
// implements: Server, the side the store loop polls, and Conn, the side the
// client library drives. The implementations live in the subpackages
// transport/uds (Unix and TCP sockets), transport/ring (goblin's
// shared-memory rings) and transport/aeron (Aeron IPC and UDP).
//
// A transport only moves bytes. Decoding, executing and encoding belong to
// the command engine (package engine), which a Server calls inline from
// the loop goroutine: no channel, lock or goroutine hop sits between a
// request's arrival and its execution.
//
// The client library dials sockets itself; other transports register a
// Dialer for their target scheme when their package is linked in (see
// Dialer), so a program links only the transports it imports.
package transport

import (
	"errors"
	"time"

	"github.com/goblin-kv/goblin/proto"
)

// Server is the server side of one listening transport. Every method is
// called from the store loop goroutine only; none may block.
type Server interface {
	// UpdateStats adds the listener's counters, the same for every
	// transport, to the caller's struct (see StatsReporter).
	StatsReporter
	// Name identifies the transport and its protocol in logs and metrics,
	// e.g. "uds/resp", "tcp/resp", "ring/sbe", "aeron-ipc/sbe".
	Name() string
	// Poll does a bounded amount of work: accepts clients, reads requests,
	// executes them through the command engine, and writes or queues the
	// replies. It returns how much work it did (0 means idle), which the
	// loop's idle strategy uses. now is the loop's monotonic clock in
	// nanoseconds, read once per duty cycle.
	Poll(now int64) int
	// Clients is the number of connected clients.
	Clients() int
	// Close stops accepting, answers what was already read where it can,
	// closes every client and releases the transport's resources (socket
	// files, shared-memory files). It is called once.
	Close() error
}

// Conn is the client side of a transport: a pipe to one server that
// carries encoded requests one way and encoded replies the other. It is
// not safe for concurrent use; the client library serialises access.
type Conn interface {
	// Write sends one complete encoded request (already framed for stream
	// transports). Message transports send it as exactly one message.
	Write(p []byte) error
	// ReadAppend appends received reply bytes to dst and returns the
	// extended slice. Stream transports append whatever has arrived (at
	// least one byte); message transports append exactly one message. It
	// waits until data arrives, the deadline passes (ErrTimeout) or the
	// connection fails.
	ReadAppend(dst []byte) ([]byte, error)
	// SetDeadline bounds the following Write and ReadAppend calls; the
	// zero time means no deadline.
	SetDeadline(t time.Time) error
	// Close releases the connection.
	Close() error
}

// ProtocolConn is implemented by client connections whose handshake tells
// the listener's protocol (ring, Aeron). A client dialled with a target
// that names no protocol (transport.Target.ProtoSet false) speaks the one
// the connection reports.
type ProtocolConn interface {
	Conn
	// Protocol is the protocol the server's listener speaks.
	Protocol() proto.Protocol
}

// TryWriter is implemented by a message transport's Conn whose request
// channel holds a bounded amount. A pipelining client sends with TryWrite
// and reads a reply whenever it reports false, so it never waits for room
// that the server can free only by handing it replies it is not reading.
type TryWriter interface {
	Conn
	// TryWrite sends p as one message, as Write does, if the connection
	// can take all of it without waiting for the server, and reports
	// whether it did; when it reports false nothing was sent. A message too
	// large ever to fit at once always reports false: send it with Write
	// once no reply is outstanding.
	TryWrite(p []byte) (bool, error)
}

// Errors shared by every transport's client side, so callers can test for
// them with errors.Is whatever the transport.
var (
	// ErrTimeout reports that a deadline passed before the operation
	// finished.
	ErrTimeout = errors.New("transport: deadline exceeded")
	// ErrClosed reports use of a connection after Close.
	ErrClosed = errors.New("transport: connection closed")
	// ErrServerGone reports that the server died, restarted or closed the
	// connection.
	ErrServerGone = errors.New("transport: server is gone")
	// ErrMessageTooLarge reports a message larger than the transport or
	// the server accepts. Returned by Write, it means nothing was sent and
	// the connection stays usable.
	ErrMessageTooLarge = errors.New("transport: message too large")
	// ErrProtocolMismatch reports a dial whose protocol (proto=) is not the
	// one the listener speaks; the error names both.
	ErrProtocolMismatch = errors.New("transport: protocol mismatch")
)
