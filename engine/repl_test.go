package engine

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/store"
)

// pushed is a fake connection's out-of-turn output.
type pushed struct{ b []byte }

func (p *pushed) conn(addr string) Conn {
	return Conn{Addr: addr, LocalAddr: "127.0.0.1:6380", FD: -1,
		Push: func(b []byte) bool { p.b = append(p.b, b...); return true }, Kill: func() {}}
}

// fullSync makes s a replica (capa eof) and ticks e until the RDB is sent;
// it returns the replication id and what came before the stream.
func fullSync(t *testing.T, e *Engine, s *Session, out *pushed) string {
	t.Helper()
	if got := do(t, e, s, "REPLCONF", "listening-port", "7777", "capa", "eof", "capa", "psync2"); got != "+OK" {
		t.Fatalf("REPLCONF: %s", got)
	}
	in := resp.AppendCommandString(nil, "PSYNC", "?", "-1")
	if n, reply, _ := e.ServeStream(s, in, nil); n != len(in) || len(reply) != 0 {
		t.Fatalf("PSYNC consumed %d of %d and replied %q (its answer goes out of turn)", n, len(in), reply)
	}
	head := regexp.MustCompile(`^\+FULLRESYNC ([0-9a-f]{40}) (\d+)\r\n\$EOF:([0-9a-f]{40})\r\n`)
	for i := 0; i < 1000; i++ {
		e.Tick(100)
		if m := head.FindSubmatch(out.b); m != nil && len(out.b) > len(m[0])+40 && bytes.HasSuffix(out.b, m[3]) {
			id := string(m[1])
			out.b = out.b[:0]
			return id
		}
	}
	t.Fatalf("no whole +FULLRESYNC / $EOF: transfer after 1000 ticks; got %q", out.b)
	return ""
}

// streamCommands splits a stream into its commands, each as space-joined
// words.
func streamCommands(t *testing.T, b []byte) []string {
	t.Helper()
	var cmds []string
	for len(b) > 0 {
		args, n, err := resp.ReadCommand(b, nil, &resp.Limits{})
		if err != nil || n == 0 {
			t.Fatalf("bad stream at %q: %v", b, err)
		}
		w := make([]string, len(args))
		for i, a := range args {
			w[i] = string(a)
		}
		cmds = append(cmds, strings.Join(w, " "))
		b = b[n:]
	}
	return cmds
}

// TestReplicationStreamAsRedisPropagates: after a full sync the replica's
// stream holds each data-changing write as Redis 7.0 propagates it: SELECT
// when the database changes, relative expiries as absolute PXAT/PEXPIREAT,
// INCRBYFLOAT as SET KEEPTTL, SPOP as SREM, a transaction as one
// MULTI … EXEC, a lazily expired key as DEL, and no-op writes not at all.
func TestReplicationStreamAsRedisPropagates(t *testing.T) {
	e, clock := newEngine(t, Options{})
	var rout, cout pushed
	rs := e.Open(proto.RESP, nil)
	rs.Attach(rout.conn("127.0.0.1:40000"))
	c := e.Open(proto.RESP, nil)
	c.Attach(cout.conn("127.0.0.1:40001"))
	do(t, e, c, "SET", "before", "sync") // in the RDB, not the stream
	fullSync(t, e, rs, &rout)
	ack := resp.AppendCommandString(nil, "REPLCONF", "ACK", "0")
	if _, reply, _ := e.ServeStream(rs, ack, nil); len(reply) != 0 {
		t.Fatalf("REPLCONF ACK answered %q; a primary must never answer it", reply)
	}

	for _, cmd := range [][]string{
		{"SET", "foo", "bar"},
		{"SET", "foo", "bar", "NX"}, // changes nothing
		{"SET", "e", "1", "EX", "10"},
		{"EXPIRE", "foo", "100"},
		{"INCRBYFLOAT", "f", "1.5"},
		{"MULTI"}, {"SET", "x", "1"}, {"SET", "y", "2"}, {"EXEC"},
		{"DEL", "nokey"}, // changes nothing
		{"SADD", "s", "a"}, {"SPOP", "s"},
		{"SELECT", "3"}, {"SET", "a", "b"}, {"SELECT", "0"},
		{"SET", "src", "v"},
		{"SET", "gd", "v"}, {"GETDEL", "gd"}, {"GETDEL", "gd"}, // as DEL, once: the second changes nothing
	} {
		do(t, e, c, cmd...)
	}
	payload := strings.TrimPrefix(do(t, e, c, "DUMP", "src"), "$")
	do(t, e, c, "RESTORE", "dst", "5000", payload, "REPLACE", "IDLETIME", "30")
	clock.Advance(11 * time.Second)
	if got := do(t, e, c, "GET", "e"); got != "nil" {
		t.Fatalf("GET of an expired key: %s", got)
	}
	e.Tick(100)
	want := []string{
		"ping", // repl-ping-replica-period: one at once, then every 10 s
		"SELECT 0", "SET foo bar",
		fmt.Sprintf("SET e 1 PXAT %d", t0+10_000),
		fmt.Sprintf("PEXPIREAT foo %d", t0+100_000),
		"SET f 1.5 KEEPTTL",
		"MULTI", "SET x 1", "SET y 2", "EXEC",
		"SADD s a", "SREM s a",
		"SELECT 3", "SET a b",
		"SELECT 0", "SET src v",
		"SET gd v", "DEL gd",
		fmt.Sprintf("RESTORE dst %d %s REPLACE ABSTTL IDLETIME 30", t0+5000, payload), // the idle time goes to the replica too
		"DEL e",
		"DEL dst", // expired too, found by the active sweep
		"ping",
	}
	got := streamCommands(t, rout.b)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("stream:\n%q\nwant:\n%q", got, want)
	}
	rout.b = rout.b[:0]

	// WAIT parks the client until the replica acknowledges its last write.
	do(t, e, c, "SET", "w", "1")
	in := resp.AppendCommandString(nil, "WAIT", "1", "0")
	get := resp.AppendCommandString(nil, "GET", "w")
	if n, reply, _ := e.ServeStream(c, append(in, get...), nil); n != len(in) || len(reply) != 0 {
		t.Fatalf("WAIT (with a GET pipelined behind it) consumed %d of %d bytes and answered %q at once", n, len(in), reply)
	}
	// No timed hold: the transport offers the GET again when WAIT's
	// answer is pushed (transport/uds reoffer), not a scan later.
	if d := c.Hold(); d != 0 {
		t.Fatalf("a parked WAIT asks its transport for a hold of %v: the GET behind it would wait for it", d)
	}
	if n, _, _ := e.ServeStream(c, get, nil); n != 0 {
		t.Fatalf("the GET behind a parked WAIT was served (consumed %d)", n)
	}
	e.Tick(100)
	if !strings.Contains(string(rout.b), "REPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*") {
		t.Fatalf("WAIT sent no REPLCONF GETACK *: %q", rout.b)
	}
	if len(cout.b) != 0 {
		t.Fatalf("WAIT answered %q before any ACK", cout.b)
	}
	off := e.Replication().Offset
	e.ServeStream(rs, resp.AppendCommandString(nil, "REPLCONF", "ACK", fmt.Sprint(off)), nil)
	if string(cout.b) != ":1\r\n" {
		t.Fatalf("WAIT after the ACK: %q, want :1", cout.b)
	}
	if got := do(t, e, c, "GET", "w"); got != "$1" {
		t.Fatalf("the GET behind the WAIT, once answered: %s", got)
	}
	if got := do(t, e, c, "ROLE"); got != fmt.Sprintf("[$master :%d [[$127.0.0.1 $7777 $%d]]]", off, off) {
		t.Fatalf("ROLE: %s", got)
	}
}

// TestPSyncContinuesFromTheBacklog: a replica that comes back with the id
// and the next offset gets +CONTINUE and exactly the bytes it missed; one
// with an unknown id or an offset the backlog dropped gets a full sync.
func TestPSyncContinuesFromTheBacklog(t *testing.T) {
	e, _ := newEngine(t, Options{})
	var rout pushed
	rs := e.Open(proto.RESP, nil)
	rs.Attach(rout.conn("127.0.0.1:40000"))
	c := e.Open(proto.RESP, nil)
	id := fullSync(t, e, rs, &rout)
	do(t, e, c, "SET", "a", "1")
	e.Tick(100)
	off := e.Replication().Offset
	e.Close(rs)
	do(t, e, c, "SET", "b", "2")

	var out2 pushed
	r2 := e.Open(proto.RESP, nil)
	r2.Attach(out2.conn("127.0.0.1:40002"))
	do(t, e, r2, "REPLCONF", "capa", "eof", "capa", "psync2")
	e.ServeStream(r2, resp.AppendCommandString(nil, "PSYNC", id, fmt.Sprint(off+1)), nil)
	want := "+CONTINUE " + id + "\r\n" + string(resp.AppendCommandString(nil, "SET", "b", "2"))
	if string(out2.b) != want {
		t.Fatalf("PSYNC %s %d:\n%q\nwant\n%q", id, off+1, out2.b, want)
	}
	var out3 pushed
	r3 := e.Open(proto.RESP, nil)
	r3.Attach(out3.conn("127.0.0.1:40003"))
	e.ServeStream(r3, resp.AppendCommandString(nil, "PSYNC", strings.Repeat("a", 40), "1"), nil)
	if !strings.HasPrefix(string(out3.b), "+FULLRESYNC "+id) {
		t.Fatalf("PSYNC with an unknown id: %q", out3.b)
	}
	if !strings.Contains(e.infoText(t, "stats"), "sync_full:2\r\nsync_partial_ok:1\r\nsync_partial_err:1\r\n") {
		t.Fatalf("INFO stats:\n%s", e.infoText(t, "stats"))
	}
}

// TestMinReplicasToWrite: writes are refused with Redis's error while
// fewer replicas than min-replicas-to-write are connected; reads are not.
func TestMinReplicasToWrite(t *testing.T) {
	e, _ := newEngine(t, Options{})
	c := e.Open(proto.RESP, nil)
	do(t, e, c, "CONFIG", "SET", "min-replicas-to-write", "1")
	if got := do(t, e, c, "SET", "k", "v"); got != "-NOREPLICAS Not enough good replicas to write." {
		t.Fatalf("SET without replicas: %s", got)
	}
	if got := do(t, e, c, "GET", "k"); got != "nil" {
		t.Fatalf("GET: %s", got)
	}
	var rout pushed
	rs := e.Open(proto.RESP, nil)
	rs.Attach(rout.conn("127.0.0.1:40000"))
	fullSync(t, e, rs, &rout)
	e.ServeStream(rs, resp.AppendCommandString(nil, "REPLCONF", "ACK", "0"), nil)
	if got := do(t, e, c, "SET", "k", "v"); got != "+OK" {
		t.Fatalf("SET with a replica: %s", got)
	}
}

// TestMinReplicasGateOnPromotion: a replica promoted with too few
// replicas of its own refuses writes from the first one, not from its
// next replication tick (a replica's gate is open while it follows).
func TestMinReplicasGateOnPromotion(t *testing.T) {
	e, _ := newEngine(t, Options{})
	c := e.Open(proto.RESP, nil)
	do(t, e, c, "CONFIG", "SET", "min-replicas-to-write", "1")
	e.SetUpstream(true)
	e.refreshGood() // a tick while it follows: the gate opens
	e.SetUpstream(false)
	if got := do(t, e, c, "SET", "k", "v"); got != "-NOREPLICAS Not enough good replicas to write." {
		t.Fatalf("SET on a node just promoted, without replicas: %s", got)
	}
}

// TestNoReplicaNoPropagationCost: with no backlog, a store reports no
// removals and execute takes no replication path.
func TestNoReplicaNoPropagationCost(t *testing.T) {
	e, _ := newEngine(t, Options{})
	if e.repl.feed {
		t.Fatal("a fresh engine propagates")
	}
	c := e.Open(proto.RESP, nil)
	do(t, e, c, "SET", "k", "v")
	if e.Replication().Offset != 0 || e.Replication().Backlog() != nil {
		t.Fatal("a write without replicas moved the offset or made a backlog")
	}
	_ = store.Options{}
}

func (e *Engine) infoText(t *testing.T, section string) string {
	c := e.Open(proto.RESP, nil)
	defer e.Close(c)
	return do(t, e, c, "INFO", section)
}

// BenchmarkServeSetReplicated is BenchmarkServe's SET over RESP with one
// online replica: the primary's own cost of propagating (the slow path of
// execute, the stream command, the backlog, the replica's queue, and the
// hand-over to its connection once per 16 requests, as Tick would).
func BenchmarkServeSetReplicated(b *testing.B) {
	for _, replicas := range []int{0, 1} {
		b.Run(fmt.Sprintf("replicas=%d", replicas), func(b *testing.B) {
			e, s, _ := benchEngine(b)
			if replicas == 1 {
				sink := Conn{Addr: "127.0.0.1:1", FD: -1, Push: func([]byte) bool { return true }, Kill: func() {}}
				rs := e.Open(proto.RESP, nil)
				rs.Attach(sink)
				e.ServeStream(rs, resp.AppendCommandString(nil, "REPLCONF", "capa", "eof"), nil)
				e.ServeStream(rs, resp.AppendCommandString(nil, "PSYNC", "?", "-1"), nil)
				for i := 0; i < 100 && rs.replica.state != replOnline; i++ {
					e.Tick(100)
				}
				e.ServeStream(rs, resp.AppendCommandString(nil, "REPLCONF", "ACK", "0"), nil)
				if rs.replica.state != replOnline || rs.replica.waitAck {
					b.Fatal("the replica never came online")
				}
			}
			req := resp.AppendCommandString(nil, "SET", "key:000000000042", "0123456789abcdef")
			out := make([]byte, 0, 256)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_, out, _ = e.ServeStream(s, req, out[:0])
				if i%16 == 15 && e.repl.feed {
					e.replFlush()
				}
			}
		})
	}
}

// TestFullSyncLengthForm: a replica without capa eof (or with
// repl-diskless-sync no) gets "$<len>" and exactly len RDB bytes, with no
// CRLF after them, and the stream at once; SYNC gets no +FULLRESYNC line.
func TestFullSyncLengthForm(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		e, _ := newEngine(t, Options{})
		c := e.Open(proto.RESP, nil)
		do(t, e, c, "SET", "k", "v")
		var out pushed
		rs := e.Open(proto.RESP, nil)
		rs.Attach(out.conn("127.0.0.1:40000"))
		cmd := []string{"PSYNC", "?", "-1"}
		if legacy {
			cmd = []string{"SYNC"}
		}
		e.ServeStream(rs, resp.AppendCommandString(nil, cmd...), nil)
		for i := 0; i < 100 && rs.replica.state != replOnline; i++ {
			e.Tick(100)
		}
		do(t, e, c, "SET", "k2", "v2")
		e.Tick(100)
		re := regexp.MustCompile(`^(\+FULLRESYNC [0-9a-f]{40} \d+\r\n)?\$(\d+)\r\n`)
		m := re.FindSubmatch(out.b)
		if m == nil || (len(m[1]) > 0) == legacy {
			t.Fatalf("SYNC %v: head of %q", legacy, out.b[:min(len(out.b), 80)])
		}
		var n int
		fmt.Sscan(string(m[2]), &n)
		body := out.b[len(m[0]):]
		if len(body) < n || !bytes.HasPrefix(body, []byte("REDIS0010")) {
			t.Fatalf("RDB of %d bytes announced, %d follow: %q", n, len(body), body[:min(len(body), 20)])
		}
		if got := streamCommands(t, body[n:]); strings.Join(got, "|") != "ping|SELECT 0|SET k2 v2" {
			t.Fatalf("stream after the RDB: %q", got)
		}
	}
}

// TestChainedReplicaRelay: a replica's engine (SetUpstream) that adopted
// its primary's history lets a chained replica continue from it, relays
// the applied stream unchanged (FeedUpstream), makes none of its own, and
// refuses PSYNC while its link is down.
func TestChainedReplicaRelay(t *testing.T) {
	e, _ := newEngine(t, Options{})
	e.SetUpstream(true)
	id := strings.Repeat("ab", 20)
	e.Replication().Adopt(id, 100)
	var out pushed
	sub := e.Open(proto.RESP, nil)
	sub.Attach(out.conn("127.0.0.1:40000"))
	do(t, e, sub, "REPLCONF", "capa", "eof", "capa", "psync2")
	if got := do(t, e, sub, "PSYNC", id, "101"); got != "-NOMASTERLINK Can't SYNC while not connected with my master" {
		t.Fatalf("PSYNC with the link down: %s", got)
	}
	e.SetUpstreamLink(true)
	e.ServeStream(sub, resp.AppendCommandString(nil, "PSYNC", id, "101"), nil)
	if string(out.b) != "+CONTINUE "+id+"\r\n" {
		t.Fatalf("PSYNC to the replica: %q", out.b)
	}
	out.b = out.b[:0]
	c := e.Open(proto.RESP, nil)
	do(t, e, c, "SET", "local", "1") // applied from the primary's stream in real life: not propagated again
	stream := resp.AppendCommandString(nil, "SET", "k", "v")
	e.FeedUpstream(stream)
	e.Tick(100)
	if !bytes.Equal(out.b, stream) || e.Replication().Offset != 100+int64(len(stream)) {
		t.Fatalf("relayed %q (offset %d), want %q", out.b, e.Replication().Offset, stream)
	}
	e.SetUpstream(false) // promotion
	if h := e.Replication(); h.ID2 != id || h.SecondOffset != 100+int64(len(stream))+1 || len(e.repl.replicas) != 0 {
		t.Fatalf("after promotion: id2 %s second %d replicas %d", h.ID2, h.SecondOffset, len(e.repl.replicas))
	}
}

// TestReplTimeoutDropsSilentReplica: an online replica that sends no ACK
// for repl-timeout is disconnected; one that ACKs stays.
func TestReplTimeoutDropsSilentReplica(t *testing.T) {
	e, clock := newEngine(t, Options{})
	var o1, o2 pushed
	quiet, talker := e.Open(proto.RESP, nil), e.Open(proto.RESP, nil)
	quiet.Attach(o1.conn("127.0.0.1:40001"))
	talker.Attach(o2.conn("127.0.0.1:40002"))
	fullSync(t, e, quiet, &o1)
	fullSync(t, e, talker, &o2)
	for _, s := range []*Session{quiet, talker} {
		e.ServeStream(s, resp.AppendCommandString(nil, "REPLCONF", "ACK", "0"), nil)
	}
	for i := 0; i < 7; i++ {
		clock.Advance(10 * time.Second)
		e.ServeStream(talker, resp.AppendCommandString(nil, "REPLCONF", "ACK", "0"), nil)
		e.Tick(100)
	}
	if len(e.repl.replicas) != 1 || e.repl.replicas[0].s != talker || quiet.replica != nil {
		t.Fatalf("after 70 s: %d replicas; the silent one dropped: %v", len(e.repl.replicas), quiet.replica == nil)
	}
}

// TestReplicaGoneMidSyncReleasesTheCut: a replica that disconnects during
// its full sync ends the snapshot, so the stores' cut is free again (a
// BGSAVE can start) and the next replica gets a sync of its own.
func TestReplicaGoneMidSyncReleasesTheCut(t *testing.T) {
	e, _ := newEngine(t, Options{Persistence: Persistence{Dir: t.TempDir()}})
	c := e.Open(proto.RESP, nil)
	for i := 0; i < 20000; i++ {
		do(t, e, c, "SET", fmt.Sprintf("key:%d", i), strings.Repeat("v", 100))
	}
	var out pushed
	rs := e.Open(proto.RESP, nil)
	rs.Attach(out.conn("127.0.0.1:40000"))
	do(t, e, rs, "REPLCONF", "capa", "eof")
	e.ServeStream(rs, resp.AppendCommandString(nil, "PSYNC", "?", "-1"), nil)
	if e.repl.job == nil {
		t.Fatal("no snapshot started")
	}
	e.Close(rs)
	if e.repl.job != nil || e.repl.finishing {
		t.Fatal("the snapshot goes on for a replica that left")
	}
	if got := do(t, e, c, "BGSAVE"); got != "+Background saving started" {
		t.Fatalf("BGSAVE after the replica left: %s", got)
	}
}

// TestPromotedReplicaPropagatesItsWrites: a replica that never had
// replicas of its own (its backlog comes from the full sync, Adopt) and is
// promoted propagates its own writes afterwards: the offset moves and a
// former sibling that continues from it receives them. This is how
// Sentinel fails over: the promoted replica had no replica of its own.
func TestPromotedReplicaPropagatesItsWrites(t *testing.T) {
	e, _ := newEngine(t, Options{})
	e.SetUpstream(true)
	id := strings.Repeat("cd", 20)
	e.Replication().Adopt(id, 100)
	stream := resp.AppendCommandString(nil, "SET", "k", "v")
	e.FeedUpstream(stream) // the primary's stream, applied and relayed
	e.SetUpstream(false)   // REPLICAOF NO ONE
	at := e.Replication().Offset
	var out pushed
	sib := e.Open(proto.RESP, nil)
	sib.Attach(out.conn("127.0.0.1:40001"))
	do(t, e, sib, "REPLCONF", "capa", "eof", "capa", "psync2")
	e.ServeStream(sib, resp.AppendCommandString(nil, "PSYNC", id, fmt.Sprint(at+1)), nil)
	if !strings.HasPrefix(string(out.b), "+CONTINUE ") {
		t.Fatalf("the sibling's PSYNC %s %d: %q, want +CONTINUE", id, at+1, out.b)
	}
	out.b = out.b[:0]
	c := e.Open(proto.RESP, nil)
	if got := do(t, e, c, "SET", "after", "1"); got != "+OK" {
		t.Fatalf("SET on the promoted node: %s", got)
	}
	e.Tick(100)
	if e.Replication().Offset == at || !strings.Contains(string(out.b), "after") {
		t.Fatalf("after a write on the promoted node: offset %d (was %d), sibling got %q; want the SET propagated", e.Replication().Offset, at, out.b)
	}
}
