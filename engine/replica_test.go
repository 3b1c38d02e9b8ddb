package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
)

// fakeLink is a ReplicaControl that follows nothing.
type fakeLink struct{ host string }

func (f *fakeLink) Follow(host string, port int) bool { c := f.host != host; f.host = host; return c }
func (f *fakeLink) Unfollow()                         { f.host = "" }
func (f *fakeLink) Role() (string, int, string, int64) {
	return f.host, 6379, "connected", 42
}
func (f *fakeLink) AppendInfo(b []byte) []byte { return append(b, "role:slave\r\n"...) }

func cmds(args ...[]string) []byte {
	var b []byte
	for _, a := range args {
		b = resp.AppendCommandString(b, a...)
	}
	return b
}

// The primary's stream: the offset advances by the bytes of each command
// applied, a MULTI's bytes only at its EXEC (and the transaction's writes
// appear together), a GETACK stops the batch with its own length so the
// ACK excludes it, SELECT is honoured and a partial command waits.
func TestApplyMasterOffsets(t *testing.T) {
	e, _ := newEngine(t, Options{Replica: ReplicaOptions{Control: &fakeLink{}}})
	e.SetReplica(true)
	client := e.Open(proto.RESP, nil)
	set := cmds([]string{"SET", "a", "1"})
	multi := cmds([]string{"MULTI"}, []string{"SET", "x", "1"}, []string{"SET", "y", "1"})
	exec := cmds([]string{"EXEC"})
	getack := cmds([]string{"REPLCONF", "GETACK", "*"})
	sel := cmds([]string{"SELECT", "3"}, []string{"SET", "b", "2"})

	c, a, g := e.ApplyMaster(set, 0)
	if c != len(set) || a != len(set) || g != 0 {
		t.Fatalf("SET: consumed %d applied %d getack %d, want %d %d 0", c, a, g, len(set), len(set))
	}
	c, a, _ = e.ApplyMaster(multi, 0)
	if c != len(multi) || a != 0 {
		t.Fatalf("MULTI, two SETs: consumed %d applied %d, want %d 0 (the offset waits for EXEC)", c, a, len(multi))
	}
	if got := do(t, e, client, "MGET", "x", "y"); got != "[nil nil]" {
		t.Fatalf("before EXEC a client sees %s", got)
	}
	stream := append(append(append([]byte(nil), exec...), getack...), sel...)
	c, a, g = e.ApplyMaster(stream, 0)
	if want := len(exec) + len(getack); c != want || a != len(multi)+want || g != len(getack) {
		t.Fatalf("EXEC, GETACK: consumed %d applied %d getack %d, want %d %d %d", c, a, g, want, len(multi)+want, len(getack))
	}
	if got := do(t, e, client, "MGET", "x", "y"); got != "[$1 $1]" {
		t.Fatalf("after EXEC a client sees %s", got)
	}
	part := sel[:len(sel)-3]
	if c, _, _ = e.ApplyMaster(part, 0); c != len(cmds([]string{"SELECT", "3"})) {
		t.Fatalf("a partial command was consumed: %d", c)
	}
	if c, _, _ = e.ApplyMaster(sel[c:], 0); c != len(sel)-len(cmds([]string{"SELECT", "3"})) {
		t.Fatalf("the completed command: consumed %d", c)
	}
	do(t, e, client, "SELECT", "3")
	if got := do(t, e, client, "GET", "b"); got != "$2" {
		t.Fatalf("the primary's SELECT 3 then SET b: GET b in db 3 = %s", got)
	}
}

// A replica refuses normal clients' writes (READONLY) at once and inside
// MULTI, answers LOADING during a full sync, and MASTERDOWN with
// replica-serve-stale-data no while the link is down; the master client
// writes through all of it.
func TestReplicaGate(t *testing.T) {
	e, _ := newEngine(t, Options{Replica: ReplicaOptions{Control: &fakeLink{}, NoStaleData: true}})
	c := e.Open(proto.RESP, nil)
	if got := do(t, e, c, "REPLICAOF", "primary", "6379"); got != "+OK" {
		t.Fatalf("REPLICAOF: %s", got)
	}
	if got := do(t, e, c, "REPLICAOF", "primary", "6379"); got != "+OK Already connected to specified master" {
		t.Fatalf("REPLICAOF again: %s", got)
	}
	if got := do(t, e, c, "GET", "k"); !strings.HasPrefix(got, "-MASTERDOWN") {
		t.Fatalf("GET with the link down and serve-stale-data no: %s", got)
	}
	if got := do(t, e, c, "ROLE"); got != "[$slave $primary :6379 $connected :42]" {
		t.Fatalf("ROLE: %s", got)
	}
	e.SetMasterLink(true)
	if got := do(t, e, c, "SET", "k", "v"); got != "-READONLY You can't write against a read only replica." {
		t.Fatalf("SET on a replica: %s", got)
	}
	do(t, e, c, "MULTI")
	if got := do(t, e, c, "SET", "k", "v"); !strings.Contains(got, "READONLY") {
		t.Fatalf("SET queued on a replica: %s", got)
	}
	if got := do(t, e, c, "EXEC"); !strings.Contains(got, "EXECABORT") {
		t.Fatalf("EXEC after a refused write: %s", got)
	}
	e.BeginFullSync()
	if got := do(t, e, c, "GET", "k"); got != "-LOADING Redis is loading the dataset in memory" {
		t.Fatalf("GET during the load: %s", got)
	}
	e.EndFullSync(true)
	e.ApplyMaster(cmds([]string{"SET", "k", "fromprimary"}), 0)
	if got := do(t, e, c, "GET", "k"); got != "$fromprimary" {
		t.Fatalf("GET after the primary's SET: %s", got)
	}
	if got := do(t, e, c, "REPLICAOF", "NO", "ONE"); got != "+OK" {
		t.Fatalf("REPLICAOF NO ONE: %s", got)
	}
	if got := do(t, e, c, "SET", "k", "mine"); got != "+OK" {
		t.Fatalf("SET after REPLICAOF NO ONE: %s", got)
	}
}

// A replica's key whose time has passed reads as missing but stays until
// the primary's DEL; a promoted replica expires keys again.
func TestReplicaKeepsExpiredKeys(t *testing.T) {
	e, clock := newEngine(t, Options{Replica: ReplicaOptions{Control: &fakeLink{}}})
	c := e.Open(proto.RESP, nil)
	do(t, e, c, "REPLICAOF", "primary", "6379")
	e.SetMasterLink(true)
	e.ApplyMaster(cmds([]string{"SET", "k", "v", "PX", "100"}, []string{"HSET", "h", "f", "v"}, []string{"PEXPIRE", "h", "100"}), 0)
	clock.Advance(time.Second)
	for i := 0; i < 10; i++ {
		e.Tick(1 << 20)
	}
	if got := do(t, e, c, "GET", "k"); got != "nil" {
		t.Fatalf("GET of an expired key on a replica: %s", got)
	}
	if got := do(t, e, c, "HGET", "h", "f"); got != "nil" {
		t.Fatalf("HGET of an expired hash on a replica: %s", got)
	}
	if got := do(t, e, c, "DBSIZE"); got != ":2" {
		t.Fatalf("DBSIZE = %s: the replica deleted expired keys itself", got)
	}
	e.ApplyMaster(cmds([]string{"DEL", "k"}), 0)
	if got := do(t, e, c, "DBSIZE"); got != ":1" {
		t.Fatalf("DBSIZE after the primary's DEL = %s", got)
	}
	do(t, e, c, "REPLICAOF", "NO", "ONE")
	do(t, e, c, "HGET", "h", "f")
	if got := do(t, e, c, "DBSIZE"); got != ":0" {
		t.Fatalf("DBSIZE on the promoted server after reading its expired key = %s", got)
	}
}

// Applying the primary's stream allocates nothing per command.
func TestApplyMasterAllocs(t *testing.T) {
	e, _ := newEngine(t, Options{Replica: ReplicaOptions{Control: &fakeLink{}}})
	e.SetReplica(true)
	in := cmds([]string{"SET", "k", "v"}, []string{"HSET", "h", "f", "v"}, []string{"DEL", "k"}, []string{"SELECT", "0"}, []string{"PING"})
	e.ApplyMaster(in, 0)
	if n := testing.AllocsPerRun(200, func() {
		if c, _, _ := e.ApplyMaster(in, 0); c != len(in) {
			t.Fatalf("consumed %d of %d", c, len(in))
		}
	}); n != 0 {
		t.Fatalf("%v allocations per batch of 5 commands", n)
	}
}
