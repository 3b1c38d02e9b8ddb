package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// TestGoblinChainedReplicas: goblin replicating goblin, chained, as real
// processes: a goblin primary P, a goblin replica A of P and a goblin
// replica B of A.
//   - A and B hold P's data after their full syncs and the stream, and B
//     reports P's replication id and reaches P's offset: A relays P's
//     stream unchanged.
//   - The link A→B cut by CLIENT KILL TYPE replica on A resumes with
//     +CONTINUE from A's backlog: A counts one full sync and one partial.
//   - A promoted (REPLICAOF NO ONE) takes a new id; B, dropped, continues
//     from A under the new id with a partial resync, and follows A's own
//     writes.
func TestGoblinChainedReplicas(t *testing.T) {
	t.Parallel() // its own processes and directories; it times nothing
	ctx := context.Background()
	p := startServer(t)
	pc := redis.NewClient(goblinOpts(p))
	defer pc.Close()
	fill(t, pc, 3000)

	a := startServer(t, "--replicaof", strings.Replace(p.tcp, ":", " ", 1))
	ac := redis.NewClient(goblinOpts(a))
	defer ac.Close()
	linkUp(t, ac)
	b := startServer(t, "--replicaof", strings.Replace(a.tcp, ":", " ", 1))
	bc := redis.NewClient(goblinOpts(b))
	defer bc.Close()
	linkUp(t, bc)

	write := func(c *redis.Client, prefix string, n int) {
		t.Helper()
		pl := c.Pipeline()
		for i := range n {
			pl.Set(ctx, fmt.Sprintf("%s:%d", prefix, i), i, 0)
			pl.HIncrBy(ctx, prefix+":h", "n", 1)
		}
		if _, err := pl.Exec(ctx); err != nil {
			t.Fatalf("writes %s: %v", prefix, err)
		}
	}
	write(pc, "stream", 2000)
	caughtUp(t, pc, ac)
	caughtUp(t, pc, bc) // offsets in a chain are the top primary's
	sameData(t, pc, ac)
	sameData(t, pc, bc)
	pid := infoField(t, pc, "replication", "master_replid")
	if got := infoField(t, bc, "replication", "master_replid"); got != pid {
		t.Fatalf("B's master_replid %q, want the top primary's %q", got, pid)
	}

	// The link A→B cut: B continues from A's backlog.
	if n, err := ac.ClientKillByFilter(ctx, "TYPE", "replica").Result(); err != nil || n != 1 {
		t.Fatalf("CLIENT KILL TYPE replica on A: %d, %v; want the one replica B", n, err)
	}
	write(pc, "after-cut", 500)
	testkit.Eventually(t, 60*time.Second, "A to count B's partial resync (sync_partial_ok:1)", func() (bool, string) {
		return infoInt(t, ac, "stats", "sync_partial_ok") == 1, "A's stats: sync_full " +
			infoField(t, ac, "stats", "sync_full") + " sync_partial_ok " + infoField(t, ac, "stats", "sync_partial_ok") +
			" sync_partial_err " + infoField(t, ac, "stats", "sync_partial_err")
	})
	if full := infoInt(t, ac, "stats", "sync_full"); full != 1 {
		t.Fatalf("A served %d full syncs, want only B's first", full)
	}
	caughtUp(t, pc, bc)
	sameData(t, pc, bc)

	// A promoted: a new id, B continues under it, and follows A's writes.
	if err := ac.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	aid := infoField(t, ac, "replication", "master_replid")
	if aid == pid || infoField(t, ac, "replication", "master_replid2") != pid {
		t.Fatalf("promoted A: master_replid %q, master_replid2 %q; want a new id and P's %q as the previous one",
			aid, infoField(t, ac, "replication", "master_replid2"), pid)
	}
	testkit.Eventually(t, 60*time.Second, "B to continue from the promoted A (A's sync_partial_ok:2, B's master_replid A's new one)", func() (bool, string) {
		ok := infoInt(t, ac, "stats", "sync_partial_ok") == 2 && infoField(t, bc, "replication", "master_replid") == aid &&
			infoField(t, bc, "replication", "master_link_status") == "up"
		return ok, "A: sync_full " + infoField(t, ac, "stats", "sync_full") + " sync_partial_ok " + infoField(t, ac, "stats", "sync_partial_ok") +
			"; B: master_replid " + infoField(t, bc, "replication", "master_replid") + " link " + infoField(t, bc, "replication", "master_link_status")
	})
	write(ac, "on-a", 300)
	caughtUp(t, ac, bc)
	sameData(t, ac, bc)
	if err := bc.Get(ctx, "on-a:299").Err(); err != nil {
		t.Fatalf("B reading A's own write after the promotion: %v", err)
	}
}
