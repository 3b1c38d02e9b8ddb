package member_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/cluster"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/netns"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// TestPartitionMinorityMaster: six goblin nodes, each in a network
// namespace of its own on one bridged LAN (cluster-node-timeout 2000),
// three masters with a replica each; the test reaches each over a unix
// socket. Master 0's port is then cut (every frame dropped): alone on its
// side, it must refuse writes with -CLUSTERDOWN once cluster-node-timeout
// has passed (and not before: it keeps serving until it sees the other
// masters PFAIL), while on the majority side its replica is elected and
// takes writes to its slots. When the port is restored the old master
// must become a replica of the winner, and the winner must hold the
// writes of the partition. Needs root and ip(8).
func TestPartitionMinorityMaster(t *testing.T) {
	t.Parallel()
	testkit.NeedRoot(t, "the partition test's network namespaces")
	bin := testproc.Build(t, "./cmd/goblin-server")
	lan, err := netns.NewLAN(netns.LANOptions{Prefix: "clusterha", Hosts: 6, Impaired: []bool{true}})
	testkit.Require(t, "the partition test's network namespaces", err)
	t.Cleanup(func() {
		if err := lan.Close(); err != nil {
			t.Error(err)
		}
	})
	dir := t.TempDir()
	type pnode struct {
		c    *redis.Client
		id   string
		proc *testproc.Proc
	}
	ns := make([]*pnode, 6)
	ctx := context.Background()
	for i := range ns {
		d := filepath.Join(dir, strconv.Itoa(i))
		sock := filepath.Join(dir, "s"+strconv.Itoa(i))
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		// The namespaces are the test's own: fixed ports cannot collide.
		cmd := lan.Command(i, bin, "--listen", "tcp://"+lan.Addr[i].String()+":7000", "--listen", "uds://"+sock,
			"--protected-mode", "no", "--metrics", "off", "--dir", d, "--cluster-enabled", "yes", "--cluster-node-timeout", "2000")
		p, err := testproc.StartCmd(cmd)
		if err != nil {
			t.Fatal(err)
		}
		n := &pnode{proc: p, c: redis.NewClient(&redis.Options{Network: "unix", Addr: sock, DialTimeout: time.Second, ReadTimeout: 2 * time.Second, MaxRetries: -1})}
		ns[i] = n
		t.Cleanup(func() {
			n.c.Close()
			p.Stop(10 * time.Second)
			if t.Failed() {
				t.Logf("log of node %d:\n%s", i, lastLines(p.Log(), 80))
			}
		})
	}
	do := func(i int, args ...any) any {
		t.Helper()
		v, err := ns[i].c.Do(ctx, args...).Result()
		if err != nil {
			t.Fatalf("node %d %v: %v", i, args, err)
		}
		return v
	}
	for i, n := range ns {
		testkit.Eventually(t, 30*time.Second, fmt.Sprintf("node %d answering CLUSTER MYID on its unix socket", i), func() (bool, string) {
			id, err := n.c.ClusterMyID(ctx).Result()
			n.id = id
			return err == nil && len(id) == 40, fmt.Sprint(err)
		})
	}
	ranges := [][2]int{{0, 5460}, {5461, 10922}, {10923, 16383}}
	for i, r := range ranges {
		do(i, "CLUSTER", "ADDSLOTSRANGE", r[0], r[1])
		do(i, "CLUSTER", "SET-CONFIG-EPOCH", i+1)
	}
	for i := 1; i < 6; i++ {
		do(0, "CLUSTER", "MEET", lan.Addr[i].String(), 7000, 17000)
	}
	allSee := func(what string, cond func(view map[string]nodesLine, info string) bool) {
		t.Helper()
		for i, n := range ns {
			testkit.Eventually(t, 30*time.Second, fmt.Sprintf("node %d: %s", i, what), func() (bool, string) {
				out, err := n.c.ClusterNodes(ctx).Result()
				info, _ := n.c.ClusterInfo(ctx).Result()
				if err != nil {
					return false, err.Error()
				}
				return cond(parseNodes(out), info), out + info
			})
		}
	}
	allSee("six connected nodes and cluster_state:ok", func(view map[string]nodesLine, info string) bool {
		return len(view) == 6 && !strings.Contains(fmt.Sprint(view), "handshake") && strings.Contains(info, "cluster_state:ok")
	})
	for i := 3; i < 6; i++ {
		do(i, "CLUSTER", "REPLICATE", ns[i-3].id)
	}
	for i := 3; i < 6; i++ {
		testkit.Eventually(t, 30*time.Second, fmt.Sprintf("replica %d's link to master %d up", i, i-3), func() (bool, string) {
			info, _ := ns[i].c.Info(ctx, "replication").Result()
			return strings.Contains(info, "master_link_status:up"), info
		})
	}
	allSee("three masters with a replica each, no failure flag", func(view map[string]nodesLine, info string) bool {
		for i := 3; i < 6; i++ {
			if view[ns[i].id].master != ns[i-3].id {
				return false
			}
		}
		return !strings.Contains(fmt.Sprint(view), "fail")
	})
	// Keys of master 0's slots, written before the cut.
	var keys []string
	for k := 0; len(keys) < 50; k++ {
		key := "p" + strconv.Itoa(k)
		if cluster.Slot([]byte(key)) <= 5460 {
			keys = append(keys, key)
		}
	}
	for _, k := range keys {
		do(0, "SET", k, "before")
	}
	// Cut master 0 off.
	if err := lan.Set(0, netns.Impairment{Loss: 1}); err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	var accepted int
	var downAfter time.Duration
	testkit.Eventually(t, 20*time.Second, "the isolated master 0 refusing a write with -CLUSTERDOWN", func() (bool, string) {
		err := ns[0].c.Set(ctx, keys[0], "minority", 0).Err()
		if err == nil {
			accepted++
			time.Sleep(20 * time.Millisecond)
			return false, "SET accepted"
		}
		if strings.HasPrefix(err.Error(), "CLUSTERDOWN The cluster is down") {
			downAfter = time.Since(cut)
			return true, ""
		}
		return false, err.Error()
	})
	if downAfter < 2*time.Second {
		t.Errorf("master 0 refused writes %v after the cut, before cluster-node-timeout (2 s)", downAfter)
	}
	if accepted == 0 {
		t.Error("master 0 accepted no write after the cut: it must serve until it sees the others PFAIL")
	}
	if info := do(0, "CLUSTER", "INFO").(string); !strings.Contains(info, "cluster_state:fail") {
		t.Errorf("isolated master 0's CLUSTER INFO: %s", info)
	}
	// Reads are refused too (cluster-allow-reads-when-down no).
	if err := ns[0].c.Get(ctx, keys[1]).Err(); err == nil || !strings.HasPrefix(err.Error(), "CLUSTERDOWN") {
		t.Errorf("GET on the isolated master: %v, want -CLUSTERDOWN", err)
	}
	// The majority fails over to replica 3.
	var elected time.Duration
	testkit.Eventually(t, 30*time.Second, "replica 3 elected master of slots 0-5460 on the majority side", func() (bool, string) {
		out, err := ns[3].c.ClusterNodes(ctx).Result()
		if err != nil {
			return false, err.Error()
		}
		v := parseNodes(out)
		if v[ns[3].id].has("master") && len(slotsOf(v, ns[3].id)) == 5461 {
			elected = time.Since(cut)
			return true, ""
		}
		return false, out
	})
	for i := 1; i < 6; i++ {
		testkit.Eventually(t, 20*time.Second, fmt.Sprintf("node %d: cluster_state:ok with master 0 failed", i), func() (bool, string) {
			info, _ := ns[i].c.ClusterInfo(ctx).Result()
			out, _ := ns[i].c.ClusterNodes(ctx).Result()
			return strings.Contains(info, "cluster_state:ok") && parseNodes(out)[ns[0].id].has("fail"), info + out
		})
	}
	for _, k := range keys {
		do(3, "SET", k, "majority")
	}
	if info := do(0, "CLUSTER", "INFO").(string); !strings.Contains(info, "cluster_state:fail") {
		t.Errorf("isolated master 0 after the failover: %s", info)
	}
	// Heal.
	if err := lan.Set(0, netns.Impairment{}); err != nil {
		t.Fatal(err)
	}
	healed := time.Now()
	testkit.Eventually(t, 30*time.Second, "the old master 0 a replica of node 3, in its own view and node 3's, link up", func() (bool, string) {
		o0, _ := ns[0].c.ClusterNodes(ctx).Result()
		o3, _ := ns[3].c.ClusterNodes(ctx).Result()
		v0, v3 := parseNodes(o0), parseNodes(o3)
		info, _ := ns[0].c.Info(ctx, "replication").Result()
		return v0[ns[0].id].has("slave") && v0[ns[0].id].master == ns[3].id && v3[ns[0].id].master == ns[3].id &&
			strings.Contains(info, "master_link_status:up"), o0 + o3 + info
	})
	rejoined := time.Since(healed)
	allSee("cluster_state:ok, no failure flag", func(view map[string]nodesLine, info string) bool {
		return strings.Contains(info, "cluster_state:ok") && !strings.Contains(fmt.Sprint(view), "fail")
	})
	for _, k := range keys {
		if v, err := ns[3].c.Get(ctx, k).Result(); err != nil || v != "majority" {
			t.Errorf("GET %s on the new master: %q %v, want the partition's write", k, v, err)
		}
	}
	// The old master, now a replica, redirects.
	if err := ns[0].c.Set(ctx, keys[0], "x", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "MOVED ") {
		t.Errorf("SET on the old master after the heal: %v, want -MOVED", err)
	}
	t.Logf("partition (cluster-node-timeout 2000 ms): the isolated master took %d writes, then -CLUSTERDOWN %v after the cut; replica elected %v after the cut; the old master a replica with its link up %v after the heal",
		accepted, downAfter.Round(time.Millisecond), elected.Round(time.Millisecond), rejoined.Round(time.Millisecond))
}

// parseNodes parses CLUSTER NODES text.
func parseNodes(out string) map[string]nodesLine {
	m := map[string]nodesLine{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l)
		if len(f) < 8 {
			continue
		}
		m[f[0]] = nodesLine{id: f[0], addr: f[1], flags: f[2], master: f[3], slots: f[8:]}
	}
	return m
}
