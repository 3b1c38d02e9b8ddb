package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"regexp"
	"testing"
	"time"
)

// TestOversizedValueIsAnswered: a client that writes a whole value over
// --proto-max-bulk-len before reading (as redis-cli and goblin-client do)
// must finish its write, read Redis's exact refusal (redis-server 7.0 with
// proto-max-bulk-len 1mb answers these bytes) and then the end of the
// stream, on TCP and on a Unix socket, and the server must log the refusal
// with the client's address and the transport. Closing at once, with the
// value unread, made the client's write fail with EPIPE or ECONNRESET and
// could destroy the answer.
func TestOversizedValueIsAnswered(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--proto-max-bulk-len", "1mb")
	value := bytes.Repeat([]byte("v"), 32<<20) // far beyond the sockets' buffers
	for _, tr := range []struct{ network, addr, name string }{{"tcp", s.tcp, "tcp/resp"}, {"unix", s.sock, "uds/resp"}} {
		t.Run(tr.network, func(t *testing.T) {
			c, err := net.Dial(tr.network, tr.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(60 * time.Second))
			req := fmt.Appendf(nil, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n", len(value))
			if _, err := c.Write(append(append(req, value...), "\r\n"...)); err != nil {
				t.Fatalf("writing the whole oversized request: %v", err)
			}
			got, err := io.ReadAll(c)
			if want := "-ERR Protocol error: invalid bulk length\r\n"; string(got) != want || err != nil {
				t.Fatalf("answer %q, %v; want %q then the end of the stream", got, err, want)
			}
			client := regexp.QuoteMeta(c.LocalAddr().String())
			if tr.network == "unix" {
				client = "unix:" + regexp.QuoteMeta(s.sock)
			}
			s.p.WaitLog(t, `level=WARN msg="client disconnected: protocol error" transport=`+tr.name+
				` client=`+client+` err="Protocol error: invalid bulk length"`, 30*time.Second)
		})
	}
}
