package member_test

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// redisCLI runs redis-cli with args and returns its output; it is
// killed after 3 minutes.
func redisCLI(t testing.TB, args ...string) (string, error) {
	t.Helper()
	return redisCLIWithin(t, 3*time.Minute, args...)
}

// redisCLIWithin runs redis-cli with args, killed after timeout, and
// returns its output, saying so when it was killed.
func redisCLIWithin(t testing.TB, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	bin := testkit.Need(t, "redis-cli", "redis-cli --cluster")
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("redis-cli killed after %v: %w", timeout, err)
	}
	return string(out), err
}

// checkClean runs redis-cli --cluster check against n and fails the test
// unless it reports every slot covered, agreement and no open slot.
func checkClean(t *testing.T, n *node) string {
	t.Helper()
	return checkCleanAt(t, n.addr, 60*time.Second)
}

// checkCleanAt waits up to timeout for redis-cli --cluster check at addr
// to report every slot covered, agreement and no open slot, and returns
// its output.
func checkCleanAt(tb testing.TB, addr string, timeout time.Duration) string {
	tb.Helper()
	var out string
	testkit.Eventually(tb, timeout, "redis-cli --cluster check "+addr+" reporting a clean cluster", func() (bool, string) {
		o, err := redisCLI(tb, "--cluster", "check", addr)
		out = o
		return err == nil && strings.Contains(o, "[OK] All nodes agree about slots configuration.") &&
			strings.Contains(o, "[OK] All 16384 slots covered.") && !strings.Contains(o, "[ERR]") && !strings.Contains(o, "[WARNING]"), o
	})
	return out
}

// clusterCreate makes the nodes at addrs one cluster with redis-cli
// --cluster create and replicas replicas per master, and waits for every
// node to report cluster_state:ok, so the caller may write at once.
func clusterCreate(tb testing.TB, addrs []string, replicas int) {
	tb.Helper()
	args := append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	out, err := redisCLI(tb, args...)
	if err != nil || !strings.Contains(out, "[OK] All 16384 slots covered.") {
		tb.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	waitStateOK(tb, 60*time.Second, addrs...)
}

// waitStateOK waits until every node at addrs reports cluster_state:ok in
// CLUSTER INFO, and on timeout names the nodes that did not with the
// state they reported. redis-cli --cluster create returns once the nodes
// agree on the slots, which is not serving yet: a master waits 2 s after
// its start (Redis's CLUSTER_WRITABLE_DELAY) and, having seen a minority
// while the nodes met, the rejoin delay, before its state turns ok; a
// write before then is answered -CLUSTERDOWN.
func waitStateOK(tb testing.TB, timeout time.Duration, addrs ...string) {
	tb.Helper()
	cs := make([]*redis.Client, len(addrs))
	for i, a := range addrs {
		cs[i] = redis.NewClient(&redis.Options{Addr: a})
		defer cs[i].Close()
	}
	testkit.Eventually(tb, timeout, "cluster_state:ok on every one of "+strconv.Itoa(len(addrs))+" nodes", func() (bool, string) {
		var notOK []string
		for i, c := range cs {
			info, err := c.ClusterInfo(context.Background()).Result()
			if err != nil {
				notOK = append(notOK, addrs[i]+": "+err.Error())
			} else if !strings.Contains(info, "cluster_state:ok") {
				state, _, _ := strings.Cut(info, "\r\n")
				notOK = append(notOK, addrs[i]+": "+state)
			}
		}
		return len(notOK) == 0, "not ok: " + strings.Join(notOK, "; ")
	})
}

// TestRedisCLIClusterCreate: redis-cli --cluster create makes a cluster
// of six goblin nodes with --cluster-replicas 1 (ADDSLOTS,
// SET-CONFIG-EPOCH, MEET, REPLICATE), waits for the nodes to agree, and
// --cluster check finds three masters with one replica each, all slots
// covered, no open slot. Each replica follows its master with goblin's
// replication: a key written on a master is readable on its replica.
func TestRedisCLIClusterCreate(t *testing.T) {
	t.Parallel()
	var nodes []*node
	var addrs []string
	for range 6 {
		n := startGoblin(t)
		nodes = append(nodes, n)
		addrs = append(addrs, n.addr)
	}
	clusterCreate(t, addrs, 1)
	out := checkClean(t, nodes[0])
	if got := strings.Count(out, "slots | 1 slaves."); got != 3 {
		t.Errorf("check: %d masters with one replica, want 3:\n%s", got, out)
	}
	// Replication under the cluster: find a master and its replica, as
	// the master sees it.
	ctx := context.Background()
	var m, rep *node
	testkit.Eventually(t, 20*time.Second, "a master listing its replica in CLUSTER NODES", func() (bool, string) {
		var views []string
		for _, x := range nodes {
			xid := x.id(t)
			info, _ := x.c.ClusterNodes(ctx).Result()
			views = append(views, info)
			for _, l := range strings.Split(info, "\n") {
				f := strings.Fields(l)
				if len(f) < 4 || f[3] != xid {
					continue
				}
				for _, r := range nodes {
					if strings.Contains(f[1], ":"+strconv.Itoa(r.port)+"@") {
						m, rep = x, r
						return true, ""
					}
				}
			}
		}
		return false, strings.Join(views, "\n--\n")
	})
	var key string
	for i := 0; ; i++ {
		key = "k" + strconv.Itoa(i)
		if err := m.c.Set(ctx, key, "v", 0).Err(); err == nil {
			break
		} else if !strings.HasPrefix(err.Error(), "MOVED") || i > 100000 {
			t.Fatalf("SET on a master: %v", err)
		}
	}
	testkit.Eventually(t, 20*time.Second, "the replica holding its master's key "+key, func() (bool, string) {
		n, err := rep.c.DBSize(ctx).Result()
		return err == nil && n == 1, "dbsize " + strconv.FormatInt(n, 10)
	})
	// The replica redirects to its master, as Redis's does without READONLY.
	if err := rep.c.Get(ctx, key).Err(); err == nil || !strings.HasPrefix(err.Error(), "MOVED") || !strings.HasSuffix(err.Error(), m.addr) {
		t.Errorf("GET on the replica: %v, want MOVED to %s", err, m.addr)
	}
}
