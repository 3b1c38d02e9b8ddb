package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/proto/sbe"
)

// step is one command of the conformance script, written out by hand in
// both protocols (so the test checks the RESP decoder against an
// independent statement of what each command means).
type step struct {
	resp    []string
	sbe     command.Request
	advance time.Duration // move the clock after the step
}

func b(s string) []byte { return []byte(s) }

func strs(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i := range s {
		out[i] = []byte(s[i])
	}
	return out
}

var conformanceScript = []step{
	{resp: []string{"PING"}, sbe: command.Request{Op: command.OpPing}},
	{resp: []string{"PING", "hello"}, sbe: command.Request{Op: command.OpPing, Args: strs("hello")}},
	{resp: []string{"ECHO", "e"}, sbe: command.Request{Op: command.OpEcho, Value: b("e")}},
	{resp: []string{"GET", "k"}, sbe: command.Request{Op: command.OpGet, Key: b("k")}},
	{resp: []string{"SET", "k", "0123456789abcdef"}, sbe: command.Request{Op: command.OpSet, Key: b("k"), Value: b("0123456789abcdef")}},
	{resp: []string{"GET", "k"}, sbe: command.Request{Op: command.OpGet, Key: b("k")}},
	{resp: []string{"SET", "k", "x", "NX"}, sbe: command.Request{Op: command.OpSet, Key: b("k"), Value: b("x"), Flags: command.FlagNX}},
	{resp: []string{"SET", "k", "x", "XX", "GET"}, sbe: command.Request{Op: command.OpSet, Key: b("k"), Value: b("x"), Flags: command.FlagXX | command.FlagGet}},
	{resp: []string{"SET", "k2", "x", "XX"}, sbe: command.Request{Op: command.OpSet, Key: b("k2"), Value: b("x"), Flags: command.FlagXX}},
	{resp: []string{"SET", "k2", "y", "GET"}, sbe: command.Request{Op: command.OpSet, Key: b("k2"), Value: b("y"), Flags: command.FlagGet}},
	{resp: []string{"SET", "k", "v", "EX", "0"}, sbe: command.Request{Op: command.OpSet, Key: b("k"), Value: b("v"), Expiry: command.ExpiryEX, Expire: 0}},
	{resp: []string{"SET", "k", "v", "EX", "10"}, sbe: command.Request{Op: command.OpSet, Key: b("k"), Value: b("v"), Expiry: command.ExpiryEX, Expire: 10}},
	{resp: []string{"TTL", "k"}, sbe: command.Request{Op: command.OpTTL, Key: b("k")}, advance: 2500 * time.Millisecond},
	{resp: []string{"PTTL", "k"}, sbe: command.Request{Op: command.OpPTTL, Key: b("k")}},
	{resp: []string{"TTL", "k"}, sbe: command.Request{Op: command.OpTTL, Key: b("k")}},
	{resp: []string{"SET", "k", "v3", "KEEPTTL"}, sbe: command.Request{Op: command.OpSet, Key: b("k"), Value: b("v3"), Flags: command.FlagKeepTTL}},
	{resp: []string{"PTTL", "k"}, sbe: command.Request{Op: command.OpPTTL, Key: b("k")}},
	{resp: []string{"SET", "p", "v", "PX", "100"}, sbe: command.Request{Op: command.OpSet, Key: b("p"), Value: b("v"), Expiry: command.ExpiryPX, Expire: 100}, advance: 100 * time.Millisecond},
	{resp: []string{"GET", "p"}, sbe: command.Request{Op: command.OpGet, Key: b("p")}},
	{resp: []string{"SET", "a", "v", "PXAT", fmt.Sprint(t0 + 10_000)}, sbe: command.Request{Op: command.OpSet, Key: b("a"), Value: b("v"), Expiry: command.ExpiryPXAT, Expire: t0 + 10_000}},
	{resp: []string{"SET", "a2", "v", "EXAT", fmt.Sprint(t0/1000 + 20)}, sbe: command.Request{Op: command.OpSet, Key: b("a2"), Value: b("v"), Expiry: command.ExpiryEXAT, Expire: t0/1000 + 20}},
	{resp: []string{"PTTL", "a2"}, sbe: command.Request{Op: command.OpPTTL, Key: b("a2")}},
	{resp: []string{"PERSIST", "a"}, sbe: command.Request{Op: command.OpPersist, Key: b("a")}},
	{resp: []string{"PERSIST", "a"}, sbe: command.Request{Op: command.OpPersist, Key: b("a")}},
	{resp: []string{"EXPIRE", "a", "5"}, sbe: command.Request{Op: command.OpExpire, Key: b("a"), Amount: 5}},
	{resp: []string{"PEXPIRE", "a", "50"}, sbe: command.Request{Op: command.OpPExpire, Key: b("a"), Amount: 50}},
	{resp: []string{"PTTL", "a"}, sbe: command.Request{Op: command.OpPTTL, Key: b("a")}},
	{resp: []string{"EXPIRE", "nope", "5"}, sbe: command.Request{Op: command.OpExpire, Key: b("nope"), Amount: 5}},
	{resp: []string{"EXPIRE", "a", "1", "GT"}, sbe: command.Request{Op: command.OpExpire, Key: b("a"), Amount: 1, Flags: command.FlagGT}},
	{resp: []string{"PEXPIRE", "a", "10", "LT"}, sbe: command.Request{Op: command.OpPExpire, Key: b("a"), Amount: 10, Flags: command.FlagLT}},
	{resp: []string{"PTTL", "a"}, sbe: command.Request{Op: command.OpPTTL, Key: b("a")}},
	{resp: []string{"EXPIRE", "a", "5", "NX", "GT"}, sbe: command.Request{Op: command.OpExpire, Key: b("a"), Amount: 5, Flags: command.FlagNX | command.FlagGT}},
	{resp: []string{"EXPIRE", "a", "-1"}, sbe: command.Request{Op: command.OpExpire, Key: b("a"), Amount: -1}},
	{resp: []string{"EXISTS", "a", "k", "k"}, sbe: command.Request{Op: command.OpExists, Key: b("a"), Args: strs("k", "k")}},
	{resp: []string{"INCR", "n"}, sbe: command.Request{Op: command.OpIncr, Key: b("n")}},
	{resp: []string{"INCRBY", "n", "10"}, sbe: command.Request{Op: command.OpIncrBy, Key: b("n"), Amount: 10}},
	{resp: []string{"DECR", "n"}, sbe: command.Request{Op: command.OpDecr, Key: b("n")}},
	{resp: []string{"DECRBY", "n", "20"}, sbe: command.Request{Op: command.OpDecrBy, Key: b("n"), Amount: 20}},
	{resp: []string{"INCR", "k"}, sbe: command.Request{Op: command.OpIncr, Key: b("k")}},
	{resp: []string{"SET", "max", "9223372036854775807"}, sbe: command.Request{Op: command.OpSet, Key: b("max"), Value: b("9223372036854775807")}},
	{resp: []string{"INCRBY", "max", "1"}, sbe: command.Request{Op: command.OpIncrBy, Key: b("max"), Amount: 1}},
	{resp: []string{"MSET", "m1", "1", "m2", "2"}, sbe: command.Request{Op: command.OpMSet, Key: b("m1"), Value: b("1"), Args: strs("m2", "2")}},
	{resp: []string{"MGET", "m1", "zz", "m2"}, sbe: command.Request{Op: command.OpMGet, Key: b("m1"), Args: strs("zz", "m2")}},
	{resp: []string{"DEL", "m1", "m2", "zz"}, sbe: command.Request{Op: command.OpDel, Key: b("m1"), Args: strs("m2", "zz")}},
	{resp: []string{"TYPE", "k"}, sbe: command.Request{Op: command.OpType, Key: b("k")}},
	{resp: []string{"TYPE", "zz"}, sbe: command.Request{Op: command.OpType, Key: b("zz")}},
	{resp: []string{"DBSIZE"}, sbe: command.Request{Op: command.OpDBSize}},
	{resp: []string{"SELECT", "0"}, sbe: command.Request{Op: command.OpSelect, Amount: 0}},
	{resp: []string{"SELECT", "3"}, sbe: command.Request{Op: command.OpSelect, Amount: 3}},
	{resp: []string{"CONFIG", "GET", "save"}, sbe: command.Request{Op: command.OpConfigGet, Key: b("save")}},
	{resp: []string{"CONFIG", "GET", "append*", "databases"}, sbe: command.Request{Op: command.OpConfigGet, Key: b("append*"), Args: strs("databases")}},
	{resp: []string{"CLIENT", "GETNAME"}, sbe: command.Request{Op: command.OpClientGetName}},
	{resp: []string{"CLIENT", "SETNAME", "me"}, sbe: command.Request{Op: command.OpClientSetName, Value: b("me")}},
	{resp: []string{"CLIENT", "GETNAME"}, sbe: command.Request{Op: command.OpClientGetName}},
	{resp: []string{"AUTH", "pw"}, sbe: command.Request{Op: command.OpAuth, Value: b("pw")}},
	{resp: []string{"FLUSHALL"}, sbe: command.Request{Op: command.OpFlushAll}},
	{resp: []string{"DBSIZE"}, sbe: command.Request{Op: command.OpDBSize}},
	{resp: []string{"SET", "z", "1"}, sbe: command.Request{Op: command.OpSet, Key: b("z"), Value: b("1")}},
	{resp: []string{"FLUSHDB"}, sbe: command.Request{Op: command.OpFlushDB}},
	{resp: []string{"EXISTS", "z"}, sbe: command.Request{Op: command.OpExists, Key: b("z")}},
	{resp: []string{"QUIT"}, sbe: command.Request{Op: command.OpQuit}},
}

// TestConformance runs the same script through RESP and through SBE, each
// against a fresh store with its own fake clock, and requires the same
// results step by step.
func TestConformance(t *testing.T) {
	er, cr := newEngine(t, Options{})
	es, cs := newEngine(t, Options{})
	sr := NewSession(proto.RESP, nil)
	ss := NewSession(proto.SBE, nil)
	var c sbe.Codec
	var rep command.Reply
	for i, st := range conformanceScript {
		in := resp.AppendCommandString(nil, st.resp...)
		n, out, closeR := er.ServeStream(sr, in, nil)
		if n != len(in) {
			t.Fatalf("step %d: RESP consumed %d of %d", i, n, len(in))
		}
		gotR, _ := respText(t, out)

		req := st.sbe
		req.CorrelationID = uint64(1000 + i)
		framed := sbe.AppendFramed(nil, &c, &req)
		n, out, closeS := es.ServeStream(ss, framed, nil)
		if n != len(framed) {
			t.Fatalf("step %d: SBE consumed %d of %d", i, n, len(framed))
		}
		msg, _, err := sbe.ReadFrame(out, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.DecodeReply(msg, &rep); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		rep.Downgrade() // the RESP side is RESP2
		gotS := sbeText(&rep)
		if gotR != gotS || closeR != closeS {
			t.Errorf("step %d %q:\n RESP %s (close %v)\n  SBE %s (close %v)", i, st.resp, gotR, closeR, gotS, closeS)
		}
		if rep.CorrelationID != req.CorrelationID {
			t.Errorf("step %d: correlation id %d, want %d", i, rep.CorrelationID, req.CorrelationID)
		}
		if (rep.Kind == command.Error) != (rep.Status != command.OK) {
			t.Errorf("step %d: kind %v with status %v", i, rep.Kind, rep.Status)
		}
		cr.Advance(st.advance)
		cs.Advance(st.advance)
	}
	if sr.Stats.Commands != ss.Stats.Commands || sr.Stats.Errors != ss.Stats.Errors {
		t.Errorf("stats differ:\nRESP %+v\n SBE %+v", *sr.Stats, *ss.Stats)
	}
	if ss.Stats.Errors == 0 {
		t.Error("script produced no errors; it should exercise error replies")
	}
}
