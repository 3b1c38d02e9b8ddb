package engine

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/proto/sbe"
)

// TestHotPathMatchesGeneral serves the same SBE requests (GET hits and
// misses, an expired key, WRONGTYPE, SET with and without options, a
// value too long) to two engines, one through ServeMessage (which takes
// the hot path where it applies) and one through the general path
// (decodeSBE and serveSBE), and requires the same reply bytes, the same
// store contents and the same counters (calls, the session's commands and
// errors).
func TestHotPathMatchesGeneral(t *testing.T) {
	t.Run("message", func(t *testing.T) { hotPathMatchesGeneral(t, false) })
	t.Run("stream", func(t *testing.T) { hotPathMatchesGeneral(t, true) })
}

// hotPathMatchesGeneral is TestHotPathMatchesGeneral through ServeMessage
// (bare messages) or, framed, through ServeStream (SOFH-framed).
func hotPathMatchesGeneral(t *testing.T, framed bool) {
	hotE, hotClock := newEngine(t, Options{})
	genE, genClock := newEngine(t, Options{})
	hotS, genS := NewSession(proto.SBE, nil), NewSession(proto.SBE, nil)
	var c sbe.Codec
	long := bytes.Repeat([]byte("k"), 1<<17)
	req := func(op command.Op, key, val string, mod func(*command.Request)) command.Request {
		r := command.Request{CorrelationID: 42, Op: op, Key: []byte(key), Value: []byte(val)}
		if mod != nil {
			mod(&r)
		}
		return r
	}
	steps := []struct {
		name string
		r    command.Request
	}{
		{"PING", req(command.OpPing, "", "", nil)},
		{"PING compact", req(command.OpPing, "", "", func(r *command.Request) { r.Compact = true })},
		{"PING message", req(command.OpPing, "", "", func(r *command.Request) { r.Args = [][]byte{[]byte("hi")} })},
		{"SET", req(command.OpSet, "a", "1", nil)},
		{"GET hit", req(command.OpGet, "a", "", nil)},
		{"GET miss", req(command.OpGet, "nope", "", nil)},
		{"SET PX", req(command.OpSet, "e", "v", func(r *command.Request) { r.Expiry, r.Expire = command.ExpiryPX, 50 })},
		{"GET before expiry", req(command.OpGet, "e", "", nil)},
		{"advance", command.Request{}},
		{"GET expired", req(command.OpGet, "e", "", nil)},
		{"SET NX existing", req(command.OpSet, "a", "2", func(r *command.Request) { r.Flags = command.FlagNX })},
		{"SET GET", req(command.OpSet, "a", "3", func(r *command.Request) { r.Flags = command.FlagGet })},
		{"SET overwrite", req(command.OpSet, "a", "4", nil)},
		{"SET empty value", req(command.OpSet, "z", "", nil)},
		{"GET empty value", req(command.OpGet, "z", "", nil)},
		{"SET key too long", req(command.OpSet, string(long), "v", nil)},
		{"LPUSH", req(command.OpLPush, "l", "x", func(r *command.Request) { r.Args = [][]byte{[]byte("x")} })},
		{"GET wrong type", req(command.OpGet, "l", "", nil)},
		{"SET over a list", req(command.OpSet, "l", "s", nil)},
		{"GET after", req(command.OpGet, "a", "", nil)},
	}
	for _, st := range steps {
		if st.name == "advance" {
			hotClock.Advance(100 * time.Millisecond)
			genClock.Advance(100 * time.Millisecond)
			continue
		}
		msg := c.AppendRequest(nil, &st.r)
		callsBefore := hotE.cmd[st.r.Op].calls
		var hotOut []byte
		if framed {
			_, hotOut, _ = hotE.ServeStream(hotS, sbe.AppendFramed(nil, &c, &st.r), nil)
		} else {
			hotOut, _ = hotE.ServeMessage(hotS, msg, nil)
		}
		if err := genE.decodeSBE(msg); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		genOut := genE.serveSBE(genS, msg, nil, framed)
		if !bytes.Equal(hotOut, genOut) {
			t.Errorf("%s: hot reply\n%x\ngeneral\n%x", st.name, hotOut, genOut)
		}
		if got, want := hotE.cmd[st.r.Op].calls, genE.cmd[st.r.Op].calls; got != want || got != callsBefore+1 {
			t.Errorf("%s: calls %d, general %d, want %d", st.name, got, want, callsBefore+1)
		}
		if hotS.Stats.Commands != genS.Stats.Commands || hotS.Stats.Errors != genS.Stats.Errors {
			t.Errorf("%s: session counters differ (errors %d, general %d)", st.name, hotS.Stats.Errors, genS.Stats.Errors)
		}
		h, g := &hotE.cmd[st.r.Op], &genE.cmd[st.r.Op] // the counts; the times measured differ
		if h.calls != g.calls || h.failed != g.failed || h.rejected != g.rejected || h.sampled != g.sampled {
			t.Errorf("%s: commandstats %+v, general %+v", st.name, *h, *g)
		}
	}
	for _, k := range []string{"a", "e", "z", "l", "nope"} {
		h, g := do(t, hotE, NewSession(proto.RESP, nil), "GET", k), do(t, genE, NewSession(proto.RESP, nil), "GET", k)
		if h != g {
			t.Errorf("store differs at %q: %q, general %q", k, h, g)
		}
	}
	if h, g := do(t, hotE, NewSession(proto.RESP, nil), "DBSIZE"), do(t, genE, NewSession(proto.RESP, nil), "DBSIZE"); h != g {
		t.Errorf("DBSIZE %q, general %q", h, g)
	}
}

// TestHotPathTaken: a GET and a plain SET in the common state go the hot
// way (the general path's decode-and-dispatch is skipped), so the figures
// BenchmarkServe reports are the hot path's.
func TestHotPathTaken(t *testing.T) {
	e, _ := newEngine(t, Options{})
	s := NewSession(proto.SBE, nil)
	var c sbe.Codec
	// The first request goes the general way: it is the sampled one, and
	// it resolves the session's user.
	e.ServeMessage(s, c.AppendRequest(nil, &command.Request{Op: command.OpEcho, Value: []byte("x")}), nil)
	for _, r := range []command.Request{
		{CorrelationID: 1, Op: command.OpSet, Key: []byte("k"), Value: []byte("v")},
		{CorrelationID: 2, Op: command.OpGet, Key: []byte("k")},
	} {
		if err := e.decodeSBE(c.AppendRequest(nil, &r)); err != nil {
			t.Fatal(err)
		}
		if _, ok := e.serveSBEHot(s, &e.req, nil, false); !ok {
			t.Errorf("%s not served by the hot path in the common state", command.Name(r.Op))
		}
	}
	s.tx.on = true
	s.recold()
	if _, ok := e.serveSBEHot(s, &e.req, nil, false); ok {
		t.Error("GET inside MULTI served by the hot path")
	}
}

// TestHotPathRestrictedUser: a user restricted to some commands and keys
// takes the hot path for what its rules allow (permit's fast checks,
// asked by hotReady), and goes the general way, to be refused with
// NOPERM and an ACL LOG entry, for what they do not: the hot path never
// lets through what execute's check would refuse.
func TestHotPathRestrictedUser(t *testing.T) {
	e, _ := newEngine(t, Options{})
	admin := NewSession(proto.RESP, nil)
	if got := do(t, e, admin, "ACL", "SETUSER", "app", "on", ">pw", "~key:*", "%R~ro:*", "+ping", "+get", "+set"); got != "+OK" {
		t.Fatalf("ACL SETUSER: %s", got)
	}
	do(t, e, admin, "SET", "ro:1", "v")
	s := NewSession(proto.SBE, nil)
	var c sbe.Codec
	e.ServeMessage(s, c.AppendRequest(nil, &command.Request{Op: command.OpAuth, Key: []byte("app"), Value: []byte("pw")}), nil)
	if s.user.Name() != "app" {
		t.Fatalf("AUTH app: the session's user is %q", s.user.Name())
	}
	for _, tc := range []struct {
		r   command.Request
		hot bool
	}{
		{command.Request{Op: command.OpPing}, true},
		{command.Request{Op: command.OpSet, Key: []byte("key:1"), Value: []byte("v")}, true},
		{command.Request{Op: command.OpGet, Key: []byte("key:1")}, true},
		{command.Request{Op: command.OpGet, Key: []byte("ro:1")}, true},
		{command.Request{Op: command.OpSet, Key: []byte("ro:1"), Value: []byte("v")}, false}, // read-only pattern
		{command.Request{Op: command.OpGet, Key: []byte("secret")}, false},
	} {
		tc.r.Version = 2
		if err := e.decodeSBE(c.AppendRequest(nil, &tc.r)); err != nil {
			t.Fatal(err)
		}
		if _, ok := e.serveSBEHot(s, &e.req, nil, false); ok != tc.hot {
			t.Errorf("%s %q: served by the hot path %v, want %v", command.Name(tc.r.Op), tc.r.Key, ok, tc.hot)
		}
	}
	rs := NewSession(proto.RESP, nil)
	do(t, e, rs, "AUTH", "app", "pw")
	if got := do(t, e, rs, "GET", "key:1"); got != "$v" {
		t.Fatalf("GET key:1: %q", got)
	}
	if got := do(t, e, rs, "SET", "ro:1", "w"); got != "-NOPERM this user has no permissions to access one of the keys used as arguments" {
		t.Fatalf("SET ro:1: %q", got)
	}
	if got := do(t, e, rs, "GET", "secret"); got != "-NOPERM this user has no permissions to access one of the keys used as arguments" {
		t.Fatalf("GET secret: %q", got)
	}
	// The two RESP denials; the SBE requests the hot path turned away were
	// only offered to it here, never executed.
	if n := e.aclLog.Len(); n != 2 {
		t.Fatalf("ACL LOG holds %d entries, want the 2 denials", n)
	}
}

// TestHotPathMatchesGeneralRESP is TestHotPathMatchesGeneral for RESP
// (RESP2 and RESP3): ServeStream, which takes the hot path for PING, GET
// and SET, against the general serveRESP, on the same commands.
func TestHotPathMatchesGeneralRESP(t *testing.T) {
	for _, resp3 := range []bool{false, true} {
		hotE, hotClock := newEngine(t, Options{})
		genE, genClock := newEngine(t, Options{})
		hotS, genS := NewSession(proto.RESP, nil), NewSession(proto.RESP, nil)
		hotS.resp3, genS.resp3 = resp3, resp3
		long := strings.Repeat("k", 1<<17)
		for _, cmd := range [][]string{
			{"PING"}, {"SET", "a", "1"}, {"GET", "a"}, {"GET", "nope"}, {"SET", "e", "v", "PX", "50"},
			{"GET", "e"}, {"advance"}, {"GET", "e"}, {"SET", "a", "2", "NX"}, {"SET", "a", "3", "GET"},
			{"SET", "a", "4"}, {"SET", "z", ""}, {"GET", "z"}, {"SET", long, "v"}, {"LPUSH", "l", "x"},
			{"GET", "l"}, {"SET", "l", "s"}, {"GET", "a"}, {"PING"},
			// values of every bulk-header width around the guessed two digits
			{"SET", "v9", "123456789"}, {"GET", "v9"}, {"SET", "v10", "0123456789"}, {"GET", "v10"},
			{"SET", "v99", strings.Repeat("x", 99)}, {"GET", "v99"}, {"SET", "v100", strings.Repeat("y", 100)}, {"GET", "v100"},
			{"SET", "v1k", strings.Repeat("z", 1000)}, {"GET", "v1k"}, {"SET", "v12k", strings.Repeat("w", 12345)}, {"GET", "v12k"},
			{"SET", "i", "-12345678901"}, {"GET", "i"}, {"GET", "z"},
		} {
			if cmd[0] == "advance" {
				hotClock.Advance(100 * time.Millisecond)
				genClock.Advance(100 * time.Millisecond)
				continue
			}
			in := resp.AppendCommandString(nil, cmd...)
			_, hotOut, _ := hotE.ServeStream(hotS, in, nil)
			args, _, err := resp.ReadCommand(in, nil, &genE.o.Limits)
			if err != nil {
				t.Fatal(err)
			}
			genS.lastAt = genE.now
			genOut := genE.serveRESP(genS, args, nil)
			name := fmt.Sprintf("resp3=%v %.20q", resp3, cmd)
			if !bytes.Equal(hotOut, genOut) {
				t.Errorf("%s: hot reply %q, general %q", name, hotOut, genOut)
			}
			op := command.ByName([]byte(cmd[0]))
			h, g := &hotE.cmd[op], &genE.cmd[op]
			if h.calls != g.calls || h.failed != g.failed || h.rejected != g.rejected || h.sampled != g.sampled {
				t.Errorf("%s: commandstats %+v, general %+v", name, *h, *g)
			}
			if hotS.Stats.Commands != genS.Stats.Commands || hotS.Stats.Errors != genS.Stats.Errors {
				t.Errorf("%s: session counters differ", name)
			}
		}
		for _, k := range []string{"a", "e", "z", "l", "nope"} {
			if h, g := do(t, hotE, NewSession(proto.RESP, nil), "GET", k), do(t, genE, NewSession(proto.RESP, nil), "GET", k); h != g {
				t.Errorf("resp3=%v: store differs at %q: %q, general %q", resp3, k, h, g)
			}
		}
	}
}

// TestSessionColdFollowsState: Session.cold, the one flag the hot paths
// test for the session's own state, follows every command that changes
// what it stands for (MULTI, EXEC, DISCARD, CLIENT REPLY, CLIENT
// NO-TOUCH, SUBSCRIBE and UNSUBSCRIBE, RESET), and checkCold catches a
// change that did not call recold.
func TestSessionColdFollowsState(t *testing.T) {
	e, _ := newEngine(t, Options{})
	s, _ := subscriber(e) // with a connection to push to, for SUBSCRIBE
	for _, step := range []struct {
		cmd  []string
		cold bool
	}{
		{[]string{"MULTI"}, true},
		{[]string{"SET", "k", "v"}, true},
		{[]string{"EXEC"}, false},
		{[]string{"MULTI"}, true},
		{[]string{"DISCARD"}, false},
		{[]string{"CLIENT", "NO-TOUCH", "on"}, true},
		{[]string{"CLIENT", "NO-TOUCH", "off"}, false},
		{[]string{"CLIENT", "REPLY", "SKIP"}, true}, // this reply and the next are skipped
		{[]string{"GET", "k"}, false},
		{[]string{"CLIENT", "REPLY", "OFF"}, true},
		{[]string{"CLIENT", "REPLY", "ON"}, false},
		{[]string{"SUBSCRIBE", "ch"}, true},
		{[]string{"UNSUBSCRIBE", "ch"}, false},
		{[]string{"SUBSCRIBE", "ch"}, true},
		{[]string{"RESET"}, false},
		{[]string{"CLIENT", "NO-TOUCH", "on"}, true},
		{[]string{"RESET"}, false}, // RESET clears NO-TOUCH and the mute after the subscriptions
		{[]string{"CLIENT", "REPLY", "OFF"}, true},
		{[]string{"RESET"}, false},
	} {
		in := resp.AppendCommandString(nil, step.cmd...)
		n, got, _ := e.ServeStream(s, in, nil) // CLIENT REPLY's replies may be left out
		if n != len(in) {
			t.Fatalf("%q: consumed %d of %d bytes", step.cmd, n, len(in))
		}
		if s.cold != step.cold || s.cold != s.coldNow() {
			t.Errorf("after %q (%q): cold %v, want %v (the state says %v)", step.cmd, got, s.cold, step.cold, s.coldNow())
		}
	}
	s.noTouch = true // a change that forgets recold
	defer func() {
		if recover() == nil {
			t.Error("checkCold passed a stale flag")
		}
	}()
	s.checkCold()
}
