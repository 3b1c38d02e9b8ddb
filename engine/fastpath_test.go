package engine

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
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
