package engine

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
)

// fakeFailoverLink is a ReplicaControl that records FollowFailover.
type fakeFailoverLink struct {
	host      string
	port      int
	done      func(error)
	following bool
}

func (f *fakeFailoverLink) Follow(host string, port int) bool {
	f.host, f.port, f.following = host, port, true
	return true
}
func (f *fakeFailoverLink) Unfollow() { f.following = false }
func (f *fakeFailoverLink) Role() (string, int, string, int64) {
	return f.host, f.port, "handshake", -1
}
func (f *fakeFailoverLink) AppendInfo(b []byte) []byte {
	return append(b, "role:slave\r\nmaster_failover_state:no-failover\r\n"...)
}
func (f *fakeFailoverLink) FollowFailover(host string, port int, done func(error)) {
	f.host, f.port, f.done, f.following = host, port, done, true
}

// TestFailoverPausesWrites: FAILOVER holds writes (not reads) until it
// ends, CLIENT UNPAUSE does not end that, the stream gets no PING while it
// waits, the replica's ACK of the offset makes the primary follow it with
// PSYNC FAILOVER (the link's FollowFailover, to the address and port the
// replica announced), and the link's answer ends it: the held write then
// meets a replica (READONLY). A refused PSYNC instead makes the node a
// primary again.
func TestFailoverPausesWrites(t *testing.T) {
	for _, refused := range []bool{false, true} {
		t.Run("refused="+strconv.FormatBool(refused), func(t *testing.T) {
			link := &fakeFailoverLink{}
			e, clock := newEngine(t, Options{Replica: ReplicaOptions{Control: link}})
			c := e.Open(proto.RESP, nil)
			var rout pushed
			rs := e.Open(proto.RESP, nil)
			rs.Attach(rout.conn("127.0.0.1:40000"))
			fullSync(t, e, rs, &rout)
			ack := func() {
				in := resp.AppendCommandString(nil, "REPLCONF", "ACK", strconv.FormatInt(e.Replication().Offset, 10))
				e.ServeStream(rs, in, nil)
			}
			ack()
			do(t, e, c, "SET", "k", "v") // the replica has not acknowledged it
			if got := do(t, e, c, "FAILOVER", "TIMEOUT", "60000"); got != "+OK" {
				t.Fatalf("FAILOVER: %s", got)
			}
			if st := e.infoText(t, "replication"); !strings.Contains(st, "master_failover_state:waiting-for-sync") {
				t.Fatalf("INFO during the failover:\n%s", st)
			}
			held := resp.AppendCommandString(nil, "SET", "k", "w")
			w := e.Open(proto.RESP, nil)
			if n, out, _ := e.ServeStream(w, held, nil); n != 0 || len(out) != 0 || w.Hold() <= 0 {
				t.Fatalf("a write during the failover: consumed %d, answered %q; want it held", n, out)
			}
			if got := do(t, e, c, "GET", "k"); got != "$v" {
				t.Fatalf("a read during the failover: %s", got)
			}
			do(t, e, c, "CLIENT", "UNPAUSE")
			if n, _, _ := e.ServeStream(w, held, nil); n != 0 {
				t.Fatal("CLIENT UNPAUSE let a write through a FAILOVER's pause")
			}
			off := e.Replication().Offset
			clock.Advance(11 * time.Second) // past repl-ping-replica-period
			e.Tick(100)
			if e.Replication().Offset != off || link.done != nil {
				t.Fatalf("before the ACK: offset %d → %d (a PING went out?), following %v", off, e.Replication().Offset, link.done != nil)
			}
			ack()
			e.Tick(100)
			if link.done == nil || link.host != "127.0.0.1" || link.port != 7777 {
				t.Fatalf("after the ACK: FollowFailover(%q, %d), want 127.0.0.1 7777 (the replica's listening-port)", link.host, link.port)
			}
			if st := e.infoText(t, "replication"); !strings.Contains(st, "master_failover_state:failover-in-progress") {
				t.Fatalf("INFO while following the target:\n%s", st)
			}
			if n, _, _ := e.ServeStream(w, held, nil); n != 0 {
				t.Fatal("a write went through while the failover is in progress")
			}
			if refused {
				link.done(errors.New("-ERR PSYNC FAILOVER replid must match my replid."))
				if e.IsReplica() || link.following {
					t.Fatal("a refused failover left the node following its target")
				}
				if got := do(t, e, w, "SET", "k", "w"); got != "+OK" {
					t.Fatalf("the held write after a refused failover: %s", got)
				}
				return
			}
			link.done(nil)
			if st := e.infoText(t, "replication"); !strings.Contains(st, "master_failover_state:no-failover") || !e.IsReplica() {
				t.Fatalf("after the target answered: replica %v, INFO\n%s", e.IsReplica(), st)
			}
			if got := do(t, e, w, "SET", "k", "w"); got != "-READONLY You can't write against a read only replica." {
				t.Fatalf("the held write after the failover: %s", got)
			}
		})
	}
}
