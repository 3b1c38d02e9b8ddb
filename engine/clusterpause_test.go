package engine

import (
	"testing"
	"time"

	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
)

// TestClusterPauseIsItsOwnPause: the cluster bus's pause for a manual
// failover holds writes, not reads; CLIENT UNPAUSE does not end it (as
// Redis keeps PAUSE_DURING_FAILOVER apart from CLIENT PAUSE), while
// ClusterPause(0) and its deadline do; a CLIENT PAUSE in force during it
// goes on after it ends.
func TestClusterPauseIsItsOwnPause(t *testing.T) {
	e, clock := newEngine(t, Options{})
	c := e.Open(proto.RESP, nil)
	w := e.Open(proto.RESP, nil)
	write := resp.AppendCommandString(nil, "SET", "k", "w")
	heldWrite := func() bool {
		n, out, _ := e.ServeStream(w, write, nil)
		d := w.Hold()
		if n == 0 && (len(out) != 0 || d <= 0) {
			t.Fatalf("a write neither served nor held: answered %q, hold %v", out, d)
		}
		return n == 0
	}

	e.ClusterPause(time.Second)
	if !heldWrite() {
		t.Fatal("a write went through the cluster pause")
	}
	if got := do(t, e, c, "GET", "k"); got != "nil" {
		t.Fatalf("a read during the cluster pause: %s", got)
	}
	do(t, e, c, "CLIENT", "UNPAUSE")
	if !heldWrite() {
		t.Fatal("CLIENT UNPAUSE ended the cluster pause")
	}
	e.ClusterPause(0)
	if heldWrite() {
		t.Fatal("ClusterPause(0) left writes held")
	}

	e.ClusterPause(time.Second)
	do(t, e, c, "CLIENT", "PAUSE", "5000", "WRITE")
	clock.Advance(2 * time.Second) // past the cluster pause, inside CLIENT PAUSE
	if !heldWrite() {
		t.Fatal("the cluster pause's end also ended a CLIENT PAUSE")
	}
	clock.Advance(4 * time.Second)
	if heldWrite() {
		t.Fatal("writes still held after both pauses ended")
	}
}
