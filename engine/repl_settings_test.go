package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
)

// TestReplBacklogTTL: a primary whose last replica left more than
// repl-backlog-ttl seconds ago frees its backlog and takes a new id (INFO
// repl_backlog_active:0), as Redis; the next replica gets a full sync, and
// a replica's PSYNC with the old id is not continued.
func TestReplBacklogTTL(t *testing.T) {
	e, clock := newEngine(t, Options{})
	var out pushed
	s := e.Open(proto.RESP, nil)
	s.Attach(out.conn("127.0.0.1:40001"))
	id := fullSync(t, e, s, &out)
	if got := do(t, e, e.Open(proto.RESP, nil), "CONFIG", "SET", "repl-backlog-ttl", "10"); got != "+OK" {
		t.Fatalf("CONFIG SET repl-backlog-ttl: %s", got)
	}
	e.Close(s)
	for i := 0; i < 5; i++ { // 5 s: kept
		clock.Advance(time.Second)
		e.Tick(100)
	}
	if info := e.infoText(t, "replication"); !strings.Contains(info, "repl_backlog_active:1") || !strings.Contains(info, id) {
		t.Fatalf("5 s after the last replica left:\n%s", info)
	}
	for i := 0; i < 7; i++ { // 12 s: freed
		clock.Advance(time.Second)
		e.Tick(100)
	}
	info := e.infoText(t, "replication")
	if !strings.Contains(info, "repl_backlog_active:0") || strings.Contains(info, id) {
		t.Fatalf("12 s after the last replica left, with repl-backlog-ttl 10:\n%s", info)
	}
	// The old history is gone: a PSYNC for it is a full sync.
	var o2 pushed
	s2 := e.Open(proto.RESP, nil)
	s2.Attach(o2.conn("127.0.0.1:40002"))
	e.ServeStream(s2, resp.AppendCommandString(nil, "PSYNC", id, "1"), nil)
	for i := 0; i < 100 && !strings.Contains(string(o2.b), "\r\n"); i++ {
		e.Tick(100)
	}
	if !strings.HasPrefix(string(o2.b), "+FULLRESYNC ") {
		t.Fatalf("PSYNC with the freed history's id: %q", o2.b)
	}
	if info := e.infoText(t, "replication"); !strings.Contains(info, "repl_backlog_active:1") {
		t.Fatalf("a new replica did not start a backlog again:\n%s", info)
	}
}

// TestReplDisklessSyncDelay: with repl-diskless-sync-delay 5, a replica's
// full sync starts once it has waited 5 s, and a second replica that
// arrived meanwhile shares the snapshot.
func TestReplDisklessSyncDelay(t *testing.T) {
	e, clock := newEngine(t, Options{})
	if got := do(t, e, e.Open(proto.RESP, nil), "CONFIG", "SET", "repl-diskless-sync-delay", "5"); got != "+OK" {
		t.Fatalf("CONFIG SET repl-diskless-sync-delay: %s", got)
	}
	var o1, o2 pushed
	a, b := e.Open(proto.RESP, nil), e.Open(proto.RESP, nil)
	a.Attach(o1.conn("127.0.0.1:40001"))
	b.Attach(o2.conn("127.0.0.1:40002"))
	for _, s := range []*Session{a, b} {
		do(t, e, s, "REPLCONF", "capa", "eof", "capa", "psync2")
	}
	e.ServeStream(a, resp.AppendCommandString(nil, "PSYNC", "?", "-1"), nil)
	for i := 0; i < 3; i++ {
		clock.Advance(time.Second)
		e.Tick(100)
	}
	if len(o1.b) != 0 {
		t.Fatalf("the sync started before the delay: %q", o1.b)
	}
	e.ServeStream(b, resp.AppendCommandString(nil, "PSYNC", "?", "-1"), nil)
	for i := 0; i < 3; i++ {
		clock.Advance(time.Second)
		e.Tick(100)
	}
	for i := 0; i < 100; i++ {
		e.Tick(100)
	}
	if !strings.HasPrefix(string(o1.b), "+FULLRESYNC ") || !strings.HasPrefix(string(o2.b), "+FULLRESYNC ") {
		t.Fatalf("after the delay: first replica %.60q, second %.60q", o1.b, o2.b)
	}
	head := func(b []byte) string { // +FULLRESYNC and the $EOF: mark, which is the sync's own
		lines := strings.SplitN(string(b), "\r\n", 3)
		return lines[0] + " " + lines[1]
	}
	if head(o1.b) != head(o2.b) || !strings.Contains(head(o1.b), "$EOF:") {
		t.Fatalf("the two replicas did not share one snapshot: %q and %q", head(o1.b), head(o2.b))
	}
}
