package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/argv"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/proto/sbe"
)

// serveRaw serves one command and returns its reply bytes (none when the
// client blocked).
func serveRaw(t *testing.T, e *Engine, s *Session, args ...string) string {
	t.Helper()
	in := resp.AppendCommandString(nil, args...)
	n, out, _ := e.ServeStream(s, in, nil)
	if n != len(in) {
		t.Fatalf("%q: consumed %d of %d", args, n, len(in))
	}
	return string(out)
}

// TestBlockingAllocs: a blocking pop that finds data (BLPOP, BRPOP,
// BZPOPMIN, BLMOVE, BLMPOP) allocates nothing per request.
func TestBlockingAllocs(t *testing.T) {
	e, _ := newEngine(t, Options{Params: redisDefaultParams})
	rs := e.Open(proto.RESP, nil)
	do(t, e, rs, "RPUSH", "l", "a", "b", "c")
	do(t, e, rs, "ZADD", "z", "1", "a", "2", "b")
	for _, cycle := range [][]string{
		{"RPUSH l v", "BLPOP l 0"}, {"RPUSH l v", "BRPOP nokey l 1.5"}, {"ZADD z 3 c", "BZPOPMIN z 0"},
		{"BLMOVE l l LEFT RIGHT 0"}, {"RPUSH l v", "BLMPOP 0 1 l RIGHT"},
	} {
		var wire [][]byte
		for _, c := range cycle {
			wire = append(wire, resp.AppendCommand(nil, strs(strings.Fields(c)...)...))
		}
		out := make([]byte, 0, 4096)
		run := func() {
			for _, w := range wire {
				_, out, _ = e.ServeStream(rs, w, out[:0])
			}
		}
		run()
		if len(out) == 0 || out[0] == '-' || out[0] == '_' || string(out) == "*-1\r\n" {
			t.Fatalf("%q: %q, want an element", cycle, out)
		}
		if a := testing.AllocsPerRun(200, run) / float64(len(cycle)); a != 0 {
			t.Errorf("%q: %.2f allocations per request, want 0", cycle, a)
		}
	}
}

// TestBlockedTimeoutFromTick: a blocked client is answered the null array
// by the Tick that finds its timeout passed on the engine's clock, not
// before; the request pipelined behind it waits, then is served.
func TestBlockedTimeoutFromTick(t *testing.T) {
	e, clock := newEngine(t, Options{})
	var out pushed
	s := e.Open(proto.RESP, nil)
	s.Attach(out.conn("127.0.0.1:40001"))
	in := resp.AppendCommandString(nil, "BLPOP", "k", "1.5")
	ping := resp.AppendCommandString(nil, "PING")
	if n, reply, _ := e.ServeStream(s, append(in, ping...), nil); n != len(in) || len(reply) != 0 {
		t.Fatalf("BLPOP on an empty list consumed %d of %d bytes and answered %q at once", n, len(in), reply)
	}
	if s.Hold() == 0 {
		t.Fatal("a blocked client asks its transport for no hold: the PING behind it would never be offered again")
	}
	if n, _, _ := e.ServeStream(s, ping, nil); n != 0 {
		t.Fatal("the PING behind a blocked BLPOP was served")
	}
	clock.Advance(1499 * time.Millisecond)
	e.Tick(100)
	if len(out.b) != 0 {
		t.Fatalf("answered %q before the timeout", out.b)
	}
	clock.Advance(time.Millisecond)
	e.Tick(100)
	if string(out.b) != "*-1\r\n" {
		t.Fatalf("after the timeout: %q, want *-1", out.b)
	}
	if got := do(t, e, s, "PING"); got != "+PONG" {
		t.Fatalf("the PING behind it: %s", got)
	}
}

// TestBlockedClientCloses: a blocked client that disconnects is forgotten:
// a later push is not popped for it, and blocked_clients drops.
func TestBlockedClientCloses(t *testing.T) {
	e, _ := newEngine(t, Options{})
	var out pushed
	s := e.Open(proto.RESP, nil)
	s.Attach(out.conn("127.0.0.1:40001"))
	c := e.Open(proto.RESP, nil)
	serveRaw(t, e, s, "BLPOP", "q", "0")
	if info := e.infoText(t, "clients"); !strings.Contains(info, "blocked_clients:1") {
		t.Fatalf("INFO clients while one is blocked:\n%s", info)
	}
	e.Close(s)
	if info := e.infoText(t, "clients"); !strings.Contains(info, "blocked_clients:0") {
		t.Fatalf("INFO clients after the blocked client left:\n%s", info)
	}
	do(t, e, c, "RPUSH", "q", "v")
	if got := do(t, e, c, "LLEN", "q"); got != ":1" || len(out.b) != 0 {
		t.Fatalf("LLEN after a push nobody waits for: %s (the closed client got %q)", got, out.b)
	}
}

// TestBlockingWithoutPush: on a transport that cannot answer later (no
// Push: the ring, Aeron) and over SBE, a blocking pop answers at once.
func TestBlockingWithoutPush(t *testing.T) {
	e, _ := newEngine(t, Options{})
	s := e.Open(proto.RESP, nil)
	for _, cmd := range [][]string{{"BLPOP", "q", "0"}, {"BZPOPMAX", "q", "0"}, {"BLMPOP", "0", "1", "q", "LEFT"}} {
		if got := serveRaw(t, e, s, cmd...); got != "*-1\r\n" {
			t.Fatalf("%q without Push: %q, want *-1 at once", cmd, got)
		}
	}
	if got := serveRaw(t, e, s, "BRPOPLPUSH", "q", "d", "0"); got != "$-1\r\n" {
		t.Fatalf("BRPOPLPUSH without Push: %q, want $-1 at once", got)
	}
	if len(e.blocked) != 0 {
		t.Fatalf("%d clients blocked", len(e.blocked))
	}
}

// TestBlockingPopsPropagate: a blocking pop served at once or later is
// propagated as Redis propagates it: its non-blocking form.
func TestBlockingPopsPropagate(t *testing.T) {
	e, _ := newEngine(t, Options{})
	var rout, cout, bout pushed
	rs := e.Open(proto.RESP, nil)
	rs.Attach(rout.conn("127.0.0.1:40000"))
	c := e.Open(proto.RESP, nil)
	c.Attach(cout.conn("127.0.0.1:40001"))
	b := e.Open(proto.RESP, nil)
	b.Attach(bout.conn("127.0.0.1:40002"))
	fullSync(t, e, rs, &rout)
	e.ServeStream(rs, resp.AppendCommandString(nil, "REPLCONF", "ACK", "0"), nil)
	rout.b = rout.b[:0]
	for _, cmd := range [][]string{
		{"RPUSH", "l", "a", "b", "c"}, {"BLPOP", "nokey", "l", "0"}, {"BRPOP", "l", "0"},
		{"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"}, {"BZPOPMIN", "z", "0"}, {"BZPOPMAX", "z", "0"},
		{"RPUSH", "m", "1", "2", "3"}, {"BLMPOP", "0", "2", "nokey", "m", "LEFT", "COUNT", "2"},
		{"BLMOVE", "m", "d", "LEFT", "RIGHT", "0"}, {"BRPOPLPUSH", "d", "m", "0"},
		{"BZMPOP", "0", "1", "z", "MAX", "COUNT", "9"},
	} {
		serveRaw(t, e, c, cmd...)
	}
	serveRaw(t, e, b, "BLPOP", "q", "0")
	serveRaw(t, e, c, "RPUSH", "q", "x")
	serveRaw(t, e, b, "BLMPOP", "0", "1", "q2", "RIGHT", "COUNT", "5")
	serveRaw(t, e, c, "RPUSH", "q2", "1", "2")
	serveRaw(t, e, b, "BLMOVE", "q3", "q4", "RIGHT", "LEFT", "0")
	serveRaw(t, e, c, "RPUSH", "q3", "v")
	serveRaw(t, e, b, "BZPOPMIN", "zq", "0")
	serveRaw(t, e, c, "ZADD", "zq", "1", "m")
	want := []string{
		"RPUSH l a b c", "LPOP l", "RPOP l",
		"ZADD z 1 a 2 b 3 c 4 d", "ZPOPMIN z", "ZPOPMAX z",
		"RPUSH m 1 2 3", "LPOP m 2", "LMOVE m d LEFT RIGHT", "RPOPLPUSH d m", "ZPOPMAX z 2",
		"RPUSH q x", "LPOP q", "RPUSH q2 1 2", "RPOP q2 2", "RPUSH q3 v", "LMOVE q3 q4 RIGHT LEFT",
		"ZADD zq 1 m", "ZPOPMIN zq",
	}
	e.Tick(100) // sends the stream
	var got []string
	for _, c := range streamCommands(t, rout.b) {
		if c != "ping" && c != "SELECT 0" {
			got = append(got, c)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("stream:\n%q\nwant:\n%q", got, want)
	}
	if want := "*2\r\n$1\r\nq\r\n$1\r\nx\r\n*2\r\n$2\r\nq2\r\n*2\r\n$1\r\n2\r\n$1\r\n1\r\n$1\r\nv\r\n*3\r\n$2\r\nzq\r\n$1\r\nm\r\n$1\r\n1\r\n"; string(bout.b) != want {
		t.Fatalf("the blocked client's answers: %q, want %q", bout.b, want)
	}
}

// TestBLPopWaits: on a socket (Push) BLPOP on an empty list answers
// nothing at once; another client's LPUSH makes the element its answer,
// pushed out of turn, and the waiter's next request is served as usual.
func TestBLPopWaits(t *testing.T) {
	e, _ := newEngine(t, Options{})
	var out pushed
	w := e.Open(proto.RESP, nil)
	w.Attach(out.conn("127.0.0.1:40001"))
	c := e.Open(proto.RESP, nil)
	if got := serveRaw(t, e, w, "BLPOP", "q", "0"); got != "" {
		t.Fatalf("BLPOP on an empty list answered %q at once", got)
	}
	if got := do(t, e, c, "LPUSH", "q", "job"); got != ":1" {
		t.Fatalf("LPUSH: %s", got)
	}
	if string(out.b) != "*2\r\n$1\r\nq\r\n$3\r\njob\r\n" {
		t.Fatalf("the waiter got %q, want [q, job]", out.b)
	}
	if got := do(t, e, c, "LLEN", "q"); got != ":0" {
		t.Fatalf("LLEN after the waiter popped: %s", got)
	}
	if got := do(t, e, w, "PING"); got != "+PONG" {
		t.Fatalf("the waiter's PING: %s", got)
	}
}

// laterConn records what the engine tells a message transport that can
// answer later (Session.AttachLater).
type laterConn struct {
	parks   int
	answers [][]byte
}

func (l *laterConn) attach(s *Session) {
	s.AttachLater(func() { l.parks++ }, func(b []byte) bool {
		l.answers = append(l.answers, append([]byte(nil), b...))
		return true
	})
}

// TestAnswerLater: on a message transport that can answer later a
// blocking pop parks (Park, no reply now) and is answered through Answer:
// with the element another client pushes (RESP), with the null array when
// its timeout passes (SBE: a Reply with the blocked request's correlation
// id).
func TestAnswerLater(t *testing.T) {
	e, clock := newEngine(t, Options{})
	var rl, sl laterConn
	rs := e.Open(proto.RESP, nil)
	rl.attach(rs)
	c := e.Open(proto.RESP, nil)
	if reply, closeConn := e.ServeMessage(rs, resp.AppendCommandString(nil, "BRPOP", "a", "b", "0"), nil); len(reply) != 0 || closeConn || rl.parks != 1 {
		t.Fatalf("BRPOP over a message transport: reply %q, close %v, %d parks; want none, false, 1", reply, closeConn, rl.parks)
	}
	do(t, e, c, "RPUSH", "b", "x", "y")
	if len(rl.answers) != 1 || string(rl.answers[0]) != "*2\r\n$1\r\nb\r\n$1\r\ny\r\n" {
		t.Fatalf("answers after RPUSH: %q, want one [b, y]", rl.answers)
	}

	ss := e.Open(proto.SBE, nil)
	sl.attach(ss)
	var codec sbe.Codec
	var d argv.Decoder
	var r command.Request
	if !d.Decode(&r, strs("BLPOP", "empty", "1.5")) {
		t.Fatalf("decoding BLPOP: %s", d.Text)
	}
	r.CorrelationID = 77
	msg := codec.AppendRequest(nil, &r)
	if reply, _ := e.ServeMessage(ss, msg, nil); len(reply) != 0 || sl.parks != 1 {
		t.Fatalf("SBE BLPOP: reply %x, %d parks; want none, 1", reply, sl.parks)
	}
	clock.Advance(1500 * time.Millisecond)
	e.Tick(100)
	if len(sl.answers) != 1 {
		t.Fatalf("%d SBE answers after the timeout, want 1", len(sl.answers))
	}
	var rep command.Reply
	if err := codec.DecodeReply(sl.answers[0], &rep); err != nil {
		t.Fatalf("the SBE answer %x: %v", sl.answers[0], err)
	}
	if rep.CorrelationID != 77 || rep.Kind != command.NilArray {
		t.Fatalf("the SBE answer: correlation %d, kind %v; want 77, the null array", rep.CorrelationID, rep.Kind)
	}
	if info := e.infoText(t, "clients"); !strings.Contains(info, "blocked_clients:0") {
		t.Fatalf("INFO clients after both were answered:\n%s", info)
	}
}
