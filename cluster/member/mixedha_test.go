package member_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/cluster"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// TestMixedReplicasFailover: one cluster (cluster-node-timeout 2000) of
// three masters, redis-server R0, goblin G0, redis-server R2, with a
// goblin replica G1 of R0, a redis-server replica R1 of G0 and a goblin
// replica G2 of R2: cluster bus and replication across the two servers.
// Keys written to R0's and G0's slots reach their replicas. SIGKILL of R0
// makes the goblin replica G1 win the election (votes from a goblin and
// a redis-server master) with every key; R0 restarted becomes a
// redis-server replica of goblin G1. SIGKILL of G0 then makes the
// redis-server replica R1 win with every key; G0 restarted becomes a
// goblin replica of redis-server R1. redis-cli --cluster check is clean
// at the end.
func TestMixedReplicasFailover(t *testing.T) {
	t.Parallel()
	rs := startHANodesOf(t, "redis", 3)
	gs := startHANodesOf(t, "goblin", 3)
	r0, r1, r2, g0, g1, g2 := rs[0], rs[1], rs[2], gs[0], gs[1], gs[2]
	all := []*haNode{r0, g0, r2, g1, r1, g2}
	name := map[*haNode]string{r0: "redis R0", r1: "redis R1", r2: "redis R2", g0: "goblin G0", g1: "goblin G1", g2: "goblin G2"}
	ctx := context.Background()
	do := func(x *haNode, args ...any) any {
		t.Helper()
		v, err := x.c.Do(ctx, args...).Result()
		if err != nil {
			t.Fatalf("%s %v: %v", name[x], args, err)
		}
		return v
	}
	ranges := [][2]int{{0, 5460}, {5461, 10922}, {10923, 16383}}
	for i, m := range []*haNode{r0, g0, r2} {
		do(m, "CLUSTER", "ADDSLOTSRANGE", ranges[i][0], ranges[i][1])
		do(m, "CLUSTER", "SET-CONFIG-EPOCH", i+1)
	}
	for _, x := range all {
		if x != g0 {
			do(g0, "CLUSTER", "MEET", "127.0.0.1", x.port, x.busPort)
		}
	}
	for _, x := range all {
		testkit.Eventually(t, 30*time.Second, name[x]+" knowing six connected nodes, cluster_state:ok", func() (bool, string) {
			v, out, err := clusterNodes(x)
			info, _ := x.c.ClusterInfo(ctx).Result()
			return err == nil && len(v) == 6 && !strings.Contains(out, "handshake") && strings.Contains(info, "cluster_state:ok"), out + info
		})
	}
	pairs := [][2]*haNode{{g1, r0}, {r1, g0}, {g2, r2}} // replica, master
	for _, p := range pairs {
		do(p[0], "CLUSTER", "REPLICATE", p[1].id)
	}
	for _, p := range pairs {
		rep, m := p[0], p[1]
		testkit.Eventually(t, 30*time.Second, name[rep]+" replicating "+name[m]+": link up, every node agreeing", func() (bool, string) {
			info, _ := rep.c.Info(ctx, "replication").Result()
			if !strings.Contains(info, "master_link_status:up") {
				return false, info
			}
			for _, x := range all {
				if v, out, err := clusterNodes(x); err != nil || v[rep.id].master != m.id {
					return false, name[x] + ": " + out
				}
			}
			return true, ""
		})
	}
	// Keys in R0's and G0's slots, written to their masters.
	keys := map[*haNode][]string{}
	for k := 0; len(keys[r0]) < 100 || len(keys[g0]) < 100; k++ {
		key := "mx" + strconv.Itoa(k)
		m := r0
		if s := cluster.Slot([]byte(key)); s > 10922 {
			continue
		} else if s > 5460 {
			m = g0
		}
		if len(keys[m]) < 100 {
			do(m, "SET", key, "v"+key)
			keys[m] = append(keys[m], key)
		}
	}
	for _, p := range pairs[:2] {
		rep := p[0]
		testkit.Eventually(t, 20*time.Second, name[rep]+" holding its master's 100 keys (DBSIZE)", func() (bool, string) {
			n, err := rep.c.DBSize(ctx).Result()
			return err == nil && n == 100, fmt.Sprint(n, err)
		})
	}
	// failover kills m and waits for rep to hold its slots on every live
	// node, with every key; then m, restarted, must replicate rep.
	failover := func(m, rep *haNode) {
		t.Helper()
		view, _, err := clusterNodes(m)
		if err != nil {
			t.Fatal(err)
		}
		slots := len(slotsOf(view, m.id))
		killAt := time.Now()
		m.kill(t)
		for _, x := range all {
			if x == m {
				continue
			}
			testkit.Eventually(t, 30*time.Second, fmt.Sprintf("%s seeing %s master of %d slots after %s's SIGKILL", name[x], name[rep], slots, name[m]), func() (bool, string) {
				v, out, err := clusterNodes(x)
				return err == nil && v[rep.id].has("master") && len(slotsOf(v, rep.id)) == slots, out
			})
		}
		t.Logf("%s elected in place of %s: every node agreed %v after the SIGKILL", name[rep], name[m], time.Since(killAt).Round(time.Millisecond))
		for _, k := range keys[m] {
			if v, err := rep.c.Get(ctx, k).Result(); err != nil || v != "v"+k {
				t.Errorf("GET %s on the new master %s: %q %v", k, name[rep], v, err)
			}
		}
		do(rep, "SET", keys[m][0], "after")
		m.start(t)
		testproc.WaitDial(t, "tcp", m.addr, 30*time.Second)
		testkit.Eventually(t, 40*time.Second, name[m]+" restarted as a replica of "+name[rep]+", link up, holding the new write", func() (bool, string) {
			info, _ := m.c.Info(ctx, "replication").Result()
			v, out, err := clusterNodes(m)
			if err != nil || !v[m.id].has("slave") || v[m.id].master != rep.id || !strings.Contains(info, "master_link_status:up") {
				return false, out + info
			}
			n, _ := m.c.DBSize(ctx).Result()
			return n == 100, fmt.Sprintf("DBSIZE %d", n)
		})
		for _, x := range all {
			testkit.Eventually(t, 20*time.Second, name[x]+" listing "+name[m]+" as a healthy replica of "+name[rep], func() (bool, string) {
				v, out, err := clusterNodes(x)
				return err == nil && v[m.id].master == rep.id && !v[m.id].has("fail") && !v[m.id].has("fail?"), out
			})
		}
	}
	failover(r0, g1) // a goblin replica replaces a redis-server master
	failover(g0, r1) // a redis-server replica replaces a goblin master
	haCheckClean(t, g1.addr)
	haCheckClean(t, r1.addr)
}
