// Package wiretest holds the wire bytes of the depth-one requests goblin's
// transport tests and benchmarks send (PING, SET of a 16-byte value, GET of
// that key) in RESP and SBE, and the check of their replies, so that every
// transport measures the same messages the client library sends.
package wiretest

import (
	"testing"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/proto/sbe"
	"github.com/goblin-kv/goblin/transport"
	"golang.org/x/sys/unix"
)

// Key and Value are what the SET request writes and the GET request reads.
const (
	Key   = "bench:key"
	Value = "0123456789abcdef"
)

// Request encodes one request of op ("PING", "SET" or "GET") in p. In SBE,
// PING is the 16-byte Ping message, as the client library sends it.
func Request(p proto.Protocol, op string) []byte {
	key, val := []byte(Key), []byte(Value)
	if p == proto.RESP {
		switch op {
		case "PING":
			return resp.AppendCommandString(nil, "PING")
		case "SET":
			return resp.AppendCommand(nil, []byte("SET"), key, val)
		}
		return resp.AppendCommand(nil, []byte("GET"), key)
	}
	r := command.Request{CorrelationID: 1, Op: command.OpPing, Compact: true}
	switch op {
	case "SET":
		r.Op, r.Key, r.Value = command.OpSet, key, val
	case "GET":
		r.Op, r.Key = command.OpGet, key
	}
	var c sbe.Codec
	return c.AppendRequest(nil, &r)
}

// CheckReply fails tb unless got is the reply to op's Request in p: PONG,
// OK, or Value.
func CheckReply(tb testing.TB, p proto.Protocol, op string, got []byte) {
	tb.Helper()
	want := map[string]string{"PING": "PONG", "SET": "OK", "GET": Value}[op]
	if p == proto.RESP {
		r, _, err := resp.ReadReply(got)
		if err != nil || string(r.Data) != want {
			tb.Fatalf("%s answered %q (%v)", op, got, err)
		}
		return
	}
	var c sbe.Codec
	var r command.Reply
	if err := c.DecodeReply(got, &r); err != nil || string(r.Value) != want {
		tb.Fatalf("%s answered %+v (%v)", op, r, err)
	}
}

// Pong is a transport.MessageHandler that answers every request with
// +PONG without the engine: a message transport and the loop alone, to
// tell their cost from the engine's in benchmarks.
type Pong struct{}

// OpenMessage implements transport.MessageHandler.
func (Pong) OpenMessage(proto.Protocol) transport.MessageSession { return Pong{} }

// ServeMessage implements transport.MessageSession.
func (Pong) ServeMessage(_, out []byte) ([]byte, bool) {
	return append(out, "+PONG\r\n"...), false
}

// Close implements transport.MessageSession.
func (Pong) Close() {}

// RawUnix connects a non-blocking client socket to the Unix socket at
// path, for a test that drives a whole round trip (client write, server
// poll, client read) on one goroutine, so that AllocsPerRun sees only the
// server's allocations. The caller closes it.
func RawUnix(tb testing.TB, path string) int {
	tb.Helper()
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		tb.Fatal(err)
	}
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		tb.Fatal(err)
	}
	return fd
}
