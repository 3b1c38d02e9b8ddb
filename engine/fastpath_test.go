package engine

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/proto/sbe"
)

// TestCompactPingFastPath: the compact SBE PING skips Request decoding and
// Reply building when the session is plain, and must answer and count
// exactly as the general path does; in every other state (MULTI, before
// AUTH, the sampled request) it must take the general path's answer.
func TestCompactPingFastPath(t *testing.T) {
	var c sbe.Codec
	ping := func(corr uint64) []byte {
		return c.AppendRequest(nil, &command.Request{Op: command.OpPing, CorrelationID: corr, Compact: true})
	}
	reply := func(t *testing.T, out []byte) command.Reply {
		t.Helper()
		var r command.Reply
		if err := c.DecodeReply(out, &r); err != nil {
			t.Fatalf("reply % x: %v", out, err)
		}
		return r
	}

	t.Run("plain", func(t *testing.T) {
		e, _ := newEngine(t, Options{})
		s := NewSession(proto.SBE, nil)
		const n = 3*sampleEvery + 5 // crosses the sampled (general-path) requests
		for i := uint64(1); i <= n; i++ {
			out, closeConn := e.ServeMessage(s, ping(i), nil)
			if closeConn || !bytes.Equal(out, sbe.AppendPong(nil, i)) {
				t.Fatalf("PING %d answered % x (close %v), want the Pong", i, out, closeConn)
			}
		}
		if got := s.Stats.Commands[command.OpPing]; got != n {
			t.Errorf("session counted %d PINGs, want %d", got, n)
		}
		rs := NewSession(proto.RESP, nil)
		if info := do(t, e, rs, "INFO", "commandstats"); !strings.Contains(info, fmt.Sprintf("cmdstat_ping:calls=%d,", n)) {
			t.Errorf("INFO commandstats after %d PINGs:\n%s", n, info)
		}
	})

	t.Run("multi", func(t *testing.T) {
		e, _ := newEngine(t, Options{})
		s := NewSession(proto.SBE, nil)
		out, _ := e.ServeMessage(s, c.AppendRequest(nil, &command.Request{Op: command.OpMulti, CorrelationID: 1}), nil)
		if r := reply(t, out); r.Kind != command.Simple || string(r.Value) != "OK" {
			t.Fatalf("MULTI answered %+v", r)
		}
		out, _ = e.ServeMessage(s, ping(2), nil)
		if r := reply(t, out); r.Kind != command.Simple || string(r.Value) != "QUEUED" || r.CorrelationID != 2 {
			t.Fatalf("PING inside MULTI answered %+v, want QUEUED", r)
		}
		out, _ = e.ServeMessage(s, c.AppendRequest(nil, &command.Request{Op: command.OpExec, CorrelationID: 3}), nil)
		if r := reply(t, out); r.Kind != command.Array || len(r.Items) != 1 || string(r.Items[0].Value) != "PONG" {
			t.Fatalf("EXEC answered %+v, want [PONG]", r)
		}
	})

	t.Run("acl", func(t *testing.T) {
		e, _ := newEngine(t, Options{})
		rs := NewSession(proto.RESP, nil)
		if got := do(t, e, rs, "ACL", "SETUSER", "noping", "on", "nopass", "+@all", "-ping"); got != "+OK" {
			t.Fatalf("ACL SETUSER answered %s", got)
		}
		s := NewSession(proto.SBE, nil)
		s.user, s.authed = e.users.Get("noping"), true
		out, _ := e.ServeMessage(s, ping(5), nil)
		if r := reply(t, out); r.Kind != command.Error || !strings.HasPrefix(string(r.Value), "NOPERM") || r.CorrelationID != 5 {
			t.Fatalf("PING by a user without +ping answered %+v, want NOPERM", r)
		}
	})

	t.Run("noauth", func(t *testing.T) {
		e, _ := newEngine(t, Options{RequirePass: "secret"})
		s := NewSession(proto.SBE, nil)
		out, _ := e.ServeMessage(s, ping(4), nil)
		if r := reply(t, out); r.Status != command.NoAuth || r.CorrelationID != 4 {
			t.Fatalf("PING before AUTH answered %+v, want NOAUTH", r)
		}
	})
}

// TestRESPStreamFirstHot: ServeStreamLimit serves a stream's first
// command, when it is a hot PING, GET or SET, before its loop: a stream
// of hot and other commands in any order, in one call, gets the replies
// (and leaves the store) as the same commands sent one call each, and a
// limit still stops it after the first command.
func TestRESPStreamFirstHot(t *testing.T) {
	cmds := [][]string{
		{"SET", "key:000000000001", "value:0000000001"}, {"GET", "key:000000000001"}, {"PING"},
		{"INCR", "n"}, {"GET", "key:000000000001"}, {"GET", "nokey"}, {"SET", "k2", "v2"}, {"GET", "k2"},
	}
	for first := range cmds { // each command first in the stream
		order := append(append([][]string{}, cmds[first:]...), cmds[:first]...)
		one, _ := newEngine(t, Options{})
		whole, _ := newEngine(t, Options{})
		for _, e := range []*Engine{one, whole} {
			e.BeginCycle(0) // the slow log's timing batched: the hot paths open
			if e.inPlaceOff {
				t.Fatal("the in-place hot paths are off")
			}
		}
		so, sw := NewSession(proto.RESP, nil), NewSession(proto.RESP, nil)
		var want, in []byte
		for _, c := range order {
			b := resp.AppendCommandString(nil, c...)
			n, out, _ := one.ServeStream(so, b, nil)
			if n != len(b) {
				t.Fatalf("%q: consumed %d of %d", c, n, len(b))
			}
			want = append(want, out...)
			in = append(in, b...)
		}
		n, got, closed := whole.ServeStream(sw, in, nil)
		if n != len(in) || closed || string(got) != string(want) {
			t.Errorf("stream from %q: consumed %d of %d, closed %v, replies\n%q\nwant\n%q", order[0], n, len(in), closed, got, want)
		}
		if g, w := do(t, whole, sw, "GET", "n"), do(t, one, so, "GET", "n"); g != w {
			t.Errorf("stream from %q: n is %s, want %s", order[0], g, w)
		}
		// A limit of one byte: the first command only.
		first := resp.AppendCommandString(nil, order[0]...)
		if n, _, _ := whole.ServeStreamLimit(sw, in, nil, 1); n != len(first) {
			t.Errorf("stream from %q with a 1-byte limit: consumed %d, want the first command's %d", order[0], n, len(first))
		}
	}
}
