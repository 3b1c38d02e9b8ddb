package member_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// configMap is CONFIG GET pattern's reply as a map.
func configMap(t *testing.T, n *node, pattern string) map[string]string {
	t.Helper()
	m, err := n.c.ConfigGet(context.Background(), pattern).Result()
	if err != nil {
		t.Fatalf("%s CONFIG GET %s: %v", n.name, pattern, err)
	}
	return m
}

// TestClusterConfig: CONFIG GET cluster-* of a goblin node lists the same
// parameters, with the same values, as redis-server 7.0's (both started
// with the same cluster flags), and CONFIG SET of each, to its own value,
// succeeds or is refused as immutable on goblin exactly as on
// redis-server. Then a set takes effect: cluster-replica-no-failover yes
// puts the nofailover flag on the goblin node, in its own CLUSTER NODES
// and, carried by the bus header, in redis-server's view of it.
func TestClusterConfig(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g, r := startGoblin(t), startRedis(t)
	gm, rm := configMap(t, g, "cluster-*"), configMap(t, r, "cluster-*")
	names := func(m map[string]string) []string {
		var ns []string
		for k := range m {
			ns = append(ns, k)
		}
		sort.Strings(ns)
		return ns
	}
	if gn, rn := fmt.Sprint(names(gm)), fmt.Sprint(names(rm)); gn != rn {
		t.Fatalf("CONFIG GET cluster-* names:\ngoblin       %s\nredis-server %s", gn, rn)
	}
	for k, rv := range rm {
		if k == "cluster-port" { // each node's own bus port
			continue
		}
		if gm[k] != rv {
			t.Errorf("CONFIG GET %s: goblin %q, redis-server %q", k, gm[k], rv)
		}
	}
	for _, k := range names(rm) {
		gerr := g.c.ConfigSet(ctx, k, gm[k]).Err()
		rerr := r.c.ConfigSet(ctx, k, rm[k]).Err()
		if fmt.Sprint(gerr) != fmt.Sprint(rerr) {
			t.Errorf("CONFIG SET %s %q: goblin %v, redis-server %v", k, gm[k], gerr, rerr)
		}
	}
	// Bad values are refused as Redis refuses them.
	for _, kv := range [][2]string{{"cluster-node-timeout", "-1"}, {"cluster-replica-no-failover", "maybe"},
		{"cluster-migration-barrier", "x"}, {"cluster-preferred-endpoint-type", "dns"}} {
		gerr := g.c.ConfigSet(ctx, kv[0], kv[1]).Err()
		rerr := r.c.ConfigSet(ctx, kv[0], kv[1]).Err()
		if gerr == nil || rerr == nil {
			t.Errorf("CONFIG SET %s %s: goblin %v, redis-server %v; want both refused", kv[0], kv[1], gerr, rerr)
		}
	}
	// Settings take effect.
	for _, n := range []*node{g, r} {
		if err := n.c.ConfigSet(ctx, "cluster-replica-no-failover", "yes").Err(); err != nil {
			t.Fatal(err)
		}
		if err := n.c.ConfigSet(ctx, "cluster-node-timeout", "3000").Err(); err != nil {
			t.Fatal(err)
		}
		if got := configMap(t, n, "cluster-slave-no-failover")["cluster-slave-no-failover"]; got != "yes" {
			t.Errorf("%s cluster-slave-no-failover (the alias) after setting cluster-replica-no-failover: %q", n.name, got)
		}
	}
	gid, rid := g.id(t), r.id(t)
	if l := g.line(gid); !strings.Contains(strings.Fields(l)[2], "nofailover") {
		t.Errorf("goblin's own line after cluster-replica-no-failover yes: %s", l)
	}
	g.meet(t, r)
	testkit.Eventually(t, 20*time.Second, "redis-server listing the goblin node with the nofailover flag (from its bus header)", func() (bool, string) {
		return sees(r, gid, "nofailover")
	})
	testkit.Eventually(t, 20*time.Second, "goblin listing the redis-server node with the nofailover flag", func() (bool, string) {
		return sees(g, rid, "nofailover")
	})
	g.do(t, "CONFIG", "SET", "cluster-replica-no-failover", "no")
	testkit.Eventually(t, 20*time.Second, "redis-server dropping the goblin node's nofailover flag", func() (bool, string) {
		l := r.line(gid)
		f := strings.Fields(l)
		return len(f) > 2 && !strings.Contains(f[2], "nofailover"), l
	})
}

// TestReplicaNoFailover: a replica with cluster-replica-no-failover yes
// (set by CONFIG SET) does not start an election when its master is
// SIGKILLed: its master's slots stay failed well past node timeout plus
// the longest election delay, while every peer lists it as nofailover. A
// manual CLUSTER FAILOVER FORCE on it still elects it.
func TestReplicaNoFailover(t *testing.T) {
	t.Parallel()
	nodes := createCluster(t)
	sh := shards(t, nodes)
	var m, r *node
	for mm, rs := range sh {
		if len(rs) > 0 {
			m, r = mm, rs[0]
			break
		}
	}
	if m == nil {
		t.Fatal("no master with a replica")
	}
	rid, mid := r.id(t), m.id(t)
	r.do(t, "CONFIG", "SET", "cluster-replica-no-failover", "yes")
	for _, n := range nodes {
		if n == r || n == m {
			continue
		}
		testkit.Eventually(t, 20*time.Second, n.addr+" listing the replica as nofailover", func() (bool, string) { return sees(n, rid, "nofailover") })
	}
	if err := m.proc.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var other *node
	for _, n := range nodes {
		if n != m && n != r {
			other = n
			break
		}
	}
	testkit.Eventually(t, 20*time.Second, "the killed master flagged fail", func() (bool, string) {
		l := other.line(mid)
		return strings.Contains(strings.Fields(l)[2], "fail"), l
	})
	// Node timeout 2 s; an election would start within 0.5-1 s plus 1 s
	// per rank. Give it 5 s more.
	time.Sleep(5 * time.Second)
	if l := r.line(rid); !strings.Contains(strings.Fields(l)[2], "slave") {
		t.Fatalf("the no-failover replica changed role after its master died: %s\n%s", l, lastLines(r.proc.Log(), 20))
	}
	if strings.Contains(r.proc.Log(), "starting a failover election") {
		t.Fatalf("the no-failover replica started an election:\n%s", lastLines(r.proc.Log(), 20))
	}
	r.do(t, "CLUSTER", "FAILOVER", "FORCE")
	testkit.Eventually(t, 20*time.Second, "the replica a master after CLUSTER FAILOVER FORCE", func() (bool, string) {
		l := r.line(rid)
		f := strings.Fields(l)
		return len(f) > 3 && strings.Contains(f[2], "master") && countSlots(l) > 0, l
	})
}
