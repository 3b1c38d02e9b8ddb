package member_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// TestMixedClusterReshard: three redis-server 7.0 nodes and three goblin
// nodes made into one cluster by redis-cli --cluster create (slots on
// both kinds), --cluster check clean; then, with keys in them, slots are
// resharded from a redis-server node to a goblin node with redis-cli
// --cluster reshard (SETSLOT IMPORTING/MIGRATING, MIGRATE from
// redis-server into goblin, SETSLOT NODE broadcast), after which check is
// clean again, goblin owns the slots on every node's view, and every key
// reads back through a cluster client.
func TestMixedClusterReshard(t *testing.T) {
	t.Parallel()
	var nodes []*node
	var addrs []string
	for i := range 6 {
		var n *node
		if i%2 == 0 {
			n = startRedis(t)
		} else {
			n = startGoblin(t)
		}
		nodes = append(nodes, n)
		addrs = append(addrs, n.addr)
	}
	clusterCreate(t, addrs, 0)
	checkClean(t, nodes[1])
	checkClean(t, nodes[0])
	ctx := context.Background()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	defer cc.Close()
	src, dst := nodes[0], nodes[1] // redis-server, goblin
	srcID, dstID := src.id(t), dst.id(t)
	// Keys everywhere, and at least 50 in the source's first 100 slots.
	vals := map[string]string{}
	for i := range 3000 {
		k := "key:" + strconv.Itoa(i)
		vals[k] = "v" + strconv.Itoa(i*7)
		if err := cc.Set(ctx, k, vals[k], 0).Err(); err != nil {
			t.Fatalf("SET %s: %v", k, err)
		}
	}
	before, _ := src.c.DBSize(ctx).Result()
	out, err := redisCLI(t, "--cluster", "reshard", dst.addr, "--cluster-from", srcID, "--cluster-to", dstID,
		"--cluster-slots", "500", "--cluster-yes")
	if err != nil || strings.Contains(out, "[ERR]") {
		t.Fatalf("redis-cli --cluster reshard: %v\n%s", err, out)
	}
	checkClean(t, dst)
	after, _ := src.c.DBSize(ctx).Result()
	if after >= before || before == 0 {
		t.Errorf("redis-server held %d keys before and %d after resharding 500 slots away", before, after)
	}
	// Every node agrees goblin owns 500 more slots.
	for _, n := range nodes {
		testkit.Eventually(t, 20*time.Second, n.name+" listing the resharded slots under goblin", func() (bool, string) {
			l := n.line(dstID)
			return countSlots(l) == 16384/6+500 || countSlots(l) == 16384/6+1+500, l
		})
	}
	for k, v := range vals {
		got, err := cc.Get(ctx, k).Result()
		if err != nil || got != v {
			t.Fatalf("GET %s after reshard: %q %v, want %q", k, got, err, v)
		}
	}
}

// countSlots counts the slots of a CLUSTER NODES line.
func countSlots(line string) int {
	f := strings.Fields(line)
	n := 0
	for _, r := range f[min(8, len(f)):] {
		if strings.HasPrefix(r, "[") {
			continue
		}
		a, b, ok := strings.Cut(r, "-")
		lo, _ := strconv.Atoi(a)
		hi := lo
		if ok {
			hi, _ = strconv.Atoi(b)
		}
		n += hi - lo + 1
	}
	return n
}
