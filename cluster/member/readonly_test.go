package member_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// getCalls returns cmdstat_get's calls in n's INFO commandstats.
func getCalls(t *testing.T, n *node) int {
	t.Helper()
	info, err := n.c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatalf("INFO commandstats on %s: %v", n.addr, err)
	}
	m := regexp.MustCompile(`cmdstat_get:calls=(\d+)`).FindStringSubmatch(info)
	if m == nil {
		return 0
	}
	v, _ := strconv.Atoi(m[1])
	return v
}

// TestReadOnlyReplicas: a replica answers -MOVED to its master for a
// key of its master's slots, until the connection sends READONLY: then
// it serves reads (with the replicated value) and still redirects
// writes; READWRITE ends that. A go-redis ClusterClient with ReadOnly
// has its GETs served by the replicas (their INFO commandstats count
// them, the masters' do not).
func TestReadOnlyReplicas(t *testing.T) {
	t.Parallel()
	nodes := createCluster(t)
	sh := shards(t, nodes)
	ctx := context.Background()
	var m, rep *node
	for x, rs := range sh {
		m, rep = x, rs[0]
		break
	}
	key := keyOn(t, m, "ro")
	testkit.Eventually(t, 20*time.Second, "the replica holding as many keys as its master", func() (bool, string) {
		a, _ := m.c.DBSize(ctx).Result()
		b, _ := rep.c.DBSize(ctx).Result()
		return a == b && a > 0, strconv.FormatInt(a, 10) + " vs " + strconv.FormatInt(b, 10)
	})
	conn := rep.c.Conn()
	defer conn.Close()
	moved := func(err error) bool {
		return err != nil && strings.HasPrefix(err.Error(), "MOVED ") && strings.HasSuffix(err.Error(), " "+m.addr)
	}
	if err := conn.Get(ctx, key).Err(); !moved(err) {
		t.Errorf("GET without READONLY on the replica: %v, want -MOVED to %s", err, m.addr)
	}
	if err := conn.ReadOnly(ctx).Err(); err != nil {
		t.Fatalf("READONLY: %v", err)
	}
	if v, err := conn.Get(ctx, key).Result(); err != nil || v != "x" {
		t.Errorf("GET after READONLY on the replica: %q %v, want x", v, err)
	}
	if err := conn.Set(ctx, key, "y", 0).Err(); !moved(err) {
		t.Errorf("SET after READONLY on the replica: %v, want -MOVED to %s", err, m.addr)
	}
	// A key of another master's slots is still redirected there.
	for o := range sh {
		if o == m {
			continue
		}
		other := keyOn(t, o, "ro-other")
		if err := conn.Get(ctx, other).Err(); err == nil || !strings.HasSuffix(err.Error(), " "+o.addr) {
			t.Errorf("GET of another master's key after READONLY: %v, want -MOVED to %s", err, o.addr)
		}
		break
	}
	if err := conn.ReadWrite(ctx).Err(); err != nil {
		t.Fatalf("READWRITE: %v", err)
	}
	if err := conn.Get(ctx, key).Err(); !moved(err) {
		t.Errorf("GET after READWRITE on the replica: %v, want -MOVED to %s", err, m.addr)
	}

	// go-redis with ReadOnly: the replicas serve the reads.
	var addrs []string
	for _, n := range nodes {
		addrs = append(addrs, n.addr)
	}
	writer := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	defer writer.Close()
	for i := range 200 {
		if err := writer.Set(ctx, "rk"+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatalf("SET rk%d: %v", i, err)
		}
	}
	before := map[*node]int{}
	for _, n := range nodes {
		before[n] = getCalls(t, n)
	}
	testkit.Eventually(t, 20*time.Second, "every replica holding its master's keys", func() (bool, string) {
		for x, rs := range sh {
			a, _ := x.c.DBSize(ctx).Result()
			b, _ := rs[0].c.DBSize(ctx).Result()
			if a != b {
				return false, x.addr + ": " + strconv.FormatInt(a, 10) + " vs " + strconv.FormatInt(b, 10)
			}
		}
		return true, ""
	})
	// CLUSTER SLOTS lists a replica once its gossiped offset is not 0.
	testkit.Eventually(t, 20*time.Second, "every node's CLUSTER SLOTS listing a replica for each range", func() (bool, string) {
		for _, n := range nodes {
			v, err := n.c.Do(ctx, "CLUSTER", "SLOTS").Slice()
			if err != nil {
				return false, err.Error()
			}
			for _, x := range v {
				// start, end, master, replicas...
				if r, _ := x.([]any); len(r) < 4 {
					return false, n.addr + ": no replica in " + fmt.Sprint(r[:min(len(r), 2)]...)
				}
			}
		}
		return true, ""
	})
	rc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ReadOnly: true})
	defer rc.Close()
	for i := range 200 {
		v, err := rc.Get(ctx, "rk"+strconv.Itoa(i)).Result()
		if err != nil || v != strconv.Itoa(i) {
			t.Fatalf("ReadOnly cluster client GET rk%d: %q %v", i, v, err)
		}
	}
	served := 0
	for x, rs := range sh {
		if d := getCalls(t, x) - before[x]; d != 0 {
			t.Errorf("master %s served %d GETs of the ReadOnly client, want 0", x.addr, d)
		}
		served += getCalls(t, rs[0]) - before[rs[0]]
	}
	if served < 200 {
		t.Errorf("replicas served %d GETs, want the client's 200", served)
	}
}

// TestClusterDownReads: three goblin masters without replicas; one is
// SIGKILLed and marked FAIL. With cluster-require-full-coverage yes (the
// default) the others report cluster_state:fail: a node with
// cluster-allow-reads-when-down yes still serves reads of its own slots
// and refuses writes with Redis's "-CLUSTERDOWN The cluster is down and
// only accepts read commands"; a node without it refuses both with
// "-CLUSTERDOWN The cluster is down"; SPUBLISH is served until
// cluster-allow-pubsubshard-when-down is set to no. With
// cluster-require-full-coverage no the state stays ok and the surviving
// masters serve their slots as usual.
func TestClusterDownReads(t *testing.T) {
	t.Parallel()
	for _, full := range []bool{true, false} {
		t.Run("full-coverage-"+strconv.FormatBool(full), func(t *testing.T) {
			cov := "yes"
			if !full {
				cov = "no"
			}
			var nodes []*node
			var addrs []string
			for i := range 3 {
				reads := "no"
				if i == 0 {
					reads = "yes"
				}
				n := startGoblin(t, "--cluster-allow-reads-when-down", reads, "--cluster-require-full-coverage", cov)
				nodes = append(nodes, n)
				addrs = append(addrs, n.addr)
			}
			clusterCreate(t, addrs, 0)
			checkClean(t, nodes[0])
			ctx := context.Background()
			k0, k1 := keyOn(t, nodes[0], "a"), keyOn(t, nodes[1], "b")
			deadID := nodes[2].id(t)
			if err := nodes[2].proc.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			for _, n := range nodes[:2] {
				testkit.Eventually(t, 30*time.Second, n.addr+" marking the killed master fail", func() (bool, string) {
					l := n.line(deadID)
					f := strings.Fields(l + " x x x")
					return strings.Contains(","+f[2]+",", ",fail,"), l
				})
			}
			if !full {
				for _, n := range nodes[:2] {
					info, _ := n.c.ClusterInfo(ctx).Result()
					if !strings.Contains(info, "cluster_state:ok") {
						t.Errorf("%s with full coverage off: %s", n.addr, info)
					}
				}
				if err := nodes[0].c.Set(ctx, k0, "z", 0).Err(); err != nil {
					t.Errorf("SET of its own slot with full coverage off: %v", err)
				}
				if err := nodes[1].c.Set(ctx, k1, "z", 0).Err(); err != nil {
					t.Errorf("SET of its own slot with full coverage off: %v", err)
				}
				return
			}
			testkit.Eventually(t, 20*time.Second, "cluster_state:fail on both survivors", func() (bool, string) {
				a, _ := nodes[0].c.ClusterInfo(ctx).Result()
				b, _ := nodes[1].c.ClusterInfo(ctx).Result()
				return strings.Contains(a, "cluster_state:fail") && strings.Contains(b, "cluster_state:fail"), a + b
			})
			if v, err := nodes[0].c.Get(ctx, k0).Result(); err != nil || v != "x" {
				t.Errorf("GET with cluster-allow-reads-when-down yes while down: %q %v", v, err)
			}
			if err := nodes[0].c.Set(ctx, k0, "y", 0).Err(); err == nil || err.Error() != "CLUSTERDOWN The cluster is down and only accepts read commands" {
				t.Errorf("SET with cluster-allow-reads-when-down yes while down: %v", err)
			}
			for _, err := range []error{nodes[1].c.Get(ctx, k1).Err(), nodes[1].c.Set(ctx, k1, "y", 0).Err()} {
				if err == nil || err.Error() != "CLUSTERDOWN The cluster is down" {
					t.Errorf("GET/SET with cluster-allow-reads-when-down no while down: %v", err)
				}
			}
			// Shard channels: served while down by default
			// (cluster-allow-pubsubshard-when-down yes), refused once it is
			// set to no, as Redis 7.0's getNodeByQuery.
			if n, err := nodes[1].c.SPublish(ctx, k1, "m").Result(); err != nil || n != 0 {
				t.Errorf("SPUBLISH while down, cluster-allow-pubsubshard-when-down yes: %v %v", n, err)
			}
			nodes[1].do(t, "CONFIG", "SET", "cluster-allow-pubsubshard-when-down", "no")
			if err := nodes[1].c.SPublish(ctx, k1, "m").Err(); err == nil || err.Error() != "CLUSTERDOWN The cluster is down" {
				t.Errorf("SPUBLISH while down, cluster-allow-pubsubshard-when-down no: %v", err)
			}
		})
	}
}
