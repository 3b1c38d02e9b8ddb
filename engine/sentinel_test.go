package engine

import (
	"testing"

	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
)

// TestScriptKillAnswersNotBusy: redis-sentinel sends SCRIPT KILL to an
// instance whose PING answered BUSY; goblin runs no scripts, so it answers
// as an idle Redis does, not with an unknown-command error.
func TestScriptKillAnswersNotBusy(t *testing.T) {
	e, _ := newEngine(t, Options{})
	s := e.Open(proto.RESP, nil)
	for _, c := range [][]string{{"SCRIPT", "KILL"}, {"script", "kill"}} {
		if got := do(t, e, s, c...); got != "-NOTBUSY No scripts in execution right now." {
			t.Fatalf("%v: %q, want Redis's NOTBUSY", c, got)
		}
	}
	if got := do(t, e, s, "SCRIPT", "LOAD", "return 1"); got != "-ERR unknown subcommand 'LOAD'. Try SCRIPT HELP." {
		t.Fatalf("SCRIPT LOAD: %q", got)
	}
}

// TestPublishPropagatesToReplicas: outside cluster mode Redis 7.0
// propagates PUBLISH to its replicas (src/pubsub.c publishCommand), even
// with no subscriber on the primary, and a replica applying it delivers
// the message to its own subscribers: Sentinel's hello messages reach the
// replicas both ways.
func TestPublishPropagatesToReplicas(t *testing.T) {
	e, _ := newEngine(t, Options{})
	var rout pushed
	rs := e.Open(proto.RESP, nil)
	rs.Attach(rout.conn("127.0.0.1:40000"))
	fullSync(t, e, rs, &rout)
	e.ServeStream(rs, resp.AppendCommandString(nil, "REPLCONF", "ACK", "0"), nil) // the RDB is loaded: the stream may start
	c := e.Open(proto.RESP, nil)
	if got := do(t, e, c, "PUBLISH", "__sentinel__:hello", "hi"); got != ":0" {
		t.Fatalf("PUBLISH: %s", got)
	}
	e.Tick(100)
	if got := streamCommands(t, rout.b); len(got) == 0 || got[len(got)-1] != "PUBLISH __sentinel__:hello hi" {
		t.Fatalf("the stream after PUBLISH: %q, want it to end with the PUBLISH", got)
	}

	r, _ := newEngine(t, Options{Replica: ReplicaOptions{Control: &fakeLink{}}})
	r.SetReplica(true)
	var sout pushed
	sub := r.Open(proto.RESP, nil)
	sub.Attach(sout.conn("127.0.0.1:40002"))
	do(t, r, sub, "SUBSCRIBE", "__sentinel__:hello")
	sout.b = sout.b[:0]
	in := cmds([]string{"PUBLISH", "__sentinel__:hello", "hi"})
	if c, a, _ := r.ApplyMaster(in, 0); c != len(in) || a != len(in) {
		t.Fatalf("the replica applied %d of %d bytes", a, len(in))
	}
	if want := "*3\r\n$7\r\nmessage\r\n$18\r\n__sentinel__:hello\r\n$2\r\nhi\r\n"; string(sout.b) != want {
		t.Fatalf("the replica's subscriber got %q, want %q", sout.b, want)
	}
}
