package engine

import (
	"bytes"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/proto/sbe"
	"golang.org/x/sys/unix"
)

// serveAll feeds in to a fresh engine, whole or in two pieces split at at
// (as a socket might deliver it), and returns every reply byte and whether
// the engine asked to close.
func serveAll(t *testing.T, p proto.Protocol, in []byte, at int) ([]byte, bool) {
	steadyInfo(t)
	e, _ := newEngine(t, Options{Limits: resp.Limits{MaxBulkLen: 1 << 16, MaxArgs: 64, MaxInlineLen: 1024}, MaxFrame: 1 << 16})
	s := NewSession(p, nil)
	var out []byte
	var buf []byte
	pieces := [][]byte{in}
	if at >= 0 {
		pieces = [][]byte{in[:at], in[at:]}
	}
	for _, piece := range pieces {
		buf = append(buf, piece...)
		n, o, closeConn := e.ServeStream(s, buf, out)
		out = o
		if n < 0 || n > len(buf) {
			t.Fatalf("consumed %d of %d bytes", n, len(buf))
		}
		buf = buf[n:]
		if closeConn {
			return out, true
		}
	}
	return out, false
}

// FuzzServeStream: no input panics, hangs or reads out of bounds; the
// replies are the same whether the bytes arrive whole or split in two;
// every reply is well-formed in the session's protocol; and a connection
// closed for a malformed request ends with a protocol error.
func FuzzServeStream(f *testing.F) {
	var c sbe.Codec
	f.Add([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"), false, uint16(7))
	f.Add([]byte("PING\r\nINCR n\r\nMGET n x\r\nSET k v PX 100 GET\r\n"), false, uint16(9))
	f.Add([]byte("*1\r\n$-5\r\nPING\r\n"), false, uint16(3))
	f.Add([]byte("HELLO 3\r\nCLIENT SETNAME x\r\nCONFIG GET *\r\nINFO\r\nfoo bar\r\n"), false, uint16(30))
	req := sbe.AppendFramed(nil, &c, &command.Request{CorrelationID: 1, Op: command.OpSet, Key: []byte("k"), Value: []byte("v"), Expiry: command.ExpiryPX, Expire: 5})
	req = sbe.AppendFramed(req, &c, &command.Request{CorrelationID: 2, Op: command.OpMGet, Key: []byte("k"), Args: [][]byte{[]byte("x")}})
	f.Add(req, true, uint16(20))
	f.Add(sbe.AppendFramed(nil, &c, &command.Request{CorrelationID: 3, Op: command.OpIncrBy, Key: []byte("n"), Amount: -1 << 63}), true, uint16(0))
	f.Fuzz(func(t *testing.T, in []byte, useSBE bool, split uint16) {
		p := proto.RESP
		if useSBE {
			p = proto.SBE
		}
		whole, closeW := serveAll(t, p, bytes.Clone(in), -1)
		halves, closeH := serveAll(t, p, bytes.Clone(in), int(split)%(len(in)+1))
		if !bytes.Equal(whole, halves) || closeW != closeH {
			t.Fatalf("whole and split differ:\n%q %v\n%q %v", whole, closeW, halves, closeH)
		}
		last := checkReplies(t, p, whole)
		if closeW && !last.quit && !last.protocolError {
			t.Fatalf("closed without QUIT or a protocol error; last reply %q", last.text)
		}
	})
}

type lastReply struct {
	text                string
	quit, protocolError bool
}

// checkReplies requires out to be a sequence of complete, well-formed
// replies and describes the last one.
func checkReplies(t *testing.T, p proto.Protocol, out []byte) lastReply {
	var last lastReply
	var c sbe.Codec
	var rep command.Reply
	for len(out) > 0 {
		if p == proto.RESP {
			_, n, err := parseNode(out) // RESP2 or, after HELLO 3, RESP3
			if err != nil || n == 0 {
				t.Fatalf("malformed RESP reply %q: %v", out, err)
			}
			last = lastReply{text: string(out[:n]), protocolError: bytes.HasPrefix(out, []byte("-ERR Protocol error"))}
			last.quit = string(out[:n]) == "+OK\r\n"
			out = out[n:]
			continue
		}
		msg, n, err := sbe.ReadFrame(out, 0)
		if err != nil || n == 0 {
			t.Fatalf("malformed SBE frame: %v", err)
		}
		if err := c.DecodeReply(msg, &rep); err != nil {
			t.Fatalf("malformed SBE reply: %v", err)
		}
		last = lastReply{text: sbeText(&rep), protocolError: rep.Status == command.Protocol, quit: rep.Kind == command.Simple}
		out = out[n:]
	}
	return last
}

// FuzzServeMessage: one message in, exactly one well-formed reply out.
func FuzzServeMessage(f *testing.F) {
	var c sbe.Codec
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"), false)
	f.Add([]byte("SET k v EX 10\r\n"), false)
	f.Add(c.AppendRequest(nil, &command.Request{CorrelationID: 9, Op: command.OpSet, Key: []byte("k"), Value: []byte("v"), Flags: command.FlagGet}), true)
	f.Add(c.AppendRequest(nil, &command.Request{CorrelationID: 9, Op: command.OpConfigGet, Key: []byte("*")}), true)
	f.Add(c.AppendRequest(nil, &command.Request{CorrelationID: 9, Op: command.OpPing, Compact: true}), true)
	f.Fuzz(func(t *testing.T, msg []byte, useSBE bool) {
		p := proto.RESP
		if useSBE {
			p = proto.SBE
		}
		e, _ := newEngine(t, Options{})
		s := NewSession(p, nil)
		out, _ := e.ServeMessage(s, msg, nil)
		if p == proto.RESP {
			n, err := resp.ReplySize(out)
			if err != nil || n != len(out) {
				t.Fatalf("not exactly one reply: %q (%v)", out, err)
			}
			return
		}
		var rep command.Reply
		if err := c.DecodeReply(out, &rep); err != nil {
			t.Fatalf("reply does not decode: %v", err)
		}
		if l, err := c.MessageLen(out); err != nil || l != len(out) {
			t.Fatalf("reply is %d bytes, message %d (%v)", len(out), l, err)
		}
	})
}

// steadyInfo makes INFO, TIME and MONITOR's readings of the process and
// the wall clock repeatable for the test, so two runs answer alike.
func steadyInfo(t *testing.T) {
	wc, ps, id, gm := wallClock, processStats, newRunID, goMemory
	t.Cleanup(func() { wallClock, processStats, newRunID, goMemory = wc, ps, id, gm })
	goMemory = func([]metrics.Sample) int64 { return 1 << 19 }
	gs := gcScannable
	t.Cleanup(func() { gcScannable = gs })
	gcScannable = func() (int64, int64) { return 1 << 16, 1 << 12 }
	wallClock = func() time.Time { return time.UnixMilli(t0) }
	processStats = func() (int64, unix.Rusage, unix.Rusage) { return 1 << 20, unix.Rusage{}, unix.Rusage{} }
	newRunID = func() string { return "0123456789012345678901234567890123456789" }
}
