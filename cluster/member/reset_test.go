package member_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// TestClusterReset: CLUSTER RESET on a replica empties its data set, as
// Redis's clusterReset does (emptyData), besides making it a slotless
// master that knows only itself: a goblin replica and a redis-server 7.0
// replica of the same goblin master, both holding the master's keys, end
// with DBSIZE 0; the master keeps its keys; RESET HARD gives a new id.
func TestClusterReset(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, g, r := startGoblin(t), startGoblin(t), startRedis(t)
	m.do(t, "CLUSTER", "ADDSLOTSRANGE", 0, 16383)
	m.meet(t, g)
	m.meet(t, r)
	mid := m.id(t)
	for _, n := range []*node{g, r} {
		testkit.Eventually(t, 20*time.Second, n.name+" seeing the master connected", func() (bool, string) { return sees(n, mid, "master") })
		n.do(t, "CLUSTER", "REPLICATE", mid)
	}
	waitStateOK(t, 30*time.Second, m.addr) // a master's first 2 s are -CLUSTERDOWN
	const keys = 200
	for i := range keys {
		m.do(t, "SET", "k"+strconv.Itoa(i), "v")
	}
	for _, n := range []*node{g, r} {
		testkit.Eventually(t, 30*time.Second, n.name+" replica holding the master's "+strconv.Itoa(keys)+" keys", func() (bool, string) {
			k, err := n.c.DBSize(ctx).Result()
			return err == nil && k == keys, strconv.FormatInt(k, 10) + " keys"
		})
	}
	gid := g.id(t)
	for _, n := range []*node{g, r} {
		id := n.id(t)
		if got := n.do(t, "CLUSTER", "RESET"); got != "OK" {
			t.Fatalf("%s CLUSTER RESET: %v", n.name, got)
		}
		testkit.Eventually(t, 10*time.Second, n.name+" empty after CLUSTER RESET", func() (bool, string) {
			k, err := n.c.DBSize(ctx).Result()
			return err == nil && k == 0, strconv.FormatInt(k, 10) + " keys"
		})
		out, _ := n.c.ClusterNodes(ctx).Result()
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 1 || !strings.HasPrefix(lines[0], id+" ") || !strings.Contains(lines[0], "myself,master") || countSlots(lines[0]) != 0 {
			t.Errorf("%s CLUSTER NODES after RESET: %s", n.name, out)
		}
	}
	if k, _ := m.c.DBSize(ctx).Result(); k != keys {
		t.Errorf("the master holds %d keys after its replicas' reset, want %d", k, keys)
	}
	g.do(t, "CLUSTER", "RESET", "HARD")
	if id := g.id(t); id == gid {
		t.Errorf("CLUSTER RESET HARD kept the id %s", id)
	}
}
