package member_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// walkRedisSlots is how many slots each redis-server node starts with in
// TestMigrationWalk (the goblin nodes share the rest). Every one of them
// is moved, slot by slot, with its keys; the number keeps the walk at
// about a minute so the package stays well inside go test's timeout.
// GOBLIN_WALK_SLOTS overrides it (up to 5400: each goblin node keeps a
// few slots of its own). Coverage cut (CI time): 512, was 1024; the same
// moves, half as many of them (1,536 slots under the client load instead
// of 3,072); the walk took 22 CPU-s of the race run at 1024.
const walkRedisSlots = 512

// TestMigrationWalk is the migration path of a Redis Cluster user: three
// redis-server 7.0 nodes and three goblin nodes in one cluster (slots on
// both, nodes.conf epochs 1-6, CLUSTER MEET across), keys in every slot;
// a go-redis ClusterClient writes and reads throughout, every read
// checked against a model; redis-cli --cluster reshard moves every slot
// of each redis-server node, with its keys (MIGRATE from redis-server
// into goblin), onto a goblin node; redis-cli --cluster del-node removes
// the redis-server nodes (each became a replica of the goblin node that
// took its last slot, as Redis 7.0 makes an emptied master). The client
// sees no error (-MOVED and -ASK are followed by the client, as any Redis
// Cluster client does), every key written before the walk reads back,
// and --cluster check is clean on the three goblin nodes.
func TestMigrationWalk(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	per := walkRedisSlots
	if v, err := strconv.Atoi(os.Getenv("GOBLIN_WALK_SLOTS")); err == nil && v > 0 && v <= 5400 {
		per = v
	}
	var reds, gobs, all []*node
	// Redis's default node timeout: the walk is not about failure
	// detection, and on a loaded machine a process stalled for the tests'
	// usual 2 s would be marked FAIL and take the cluster down mid-walk
	// (redis-cli then stops at -CLUSTERDOWN).
	const timeout = "15000"
	for range 3 {
		reds = append(reds, startRedis(t, "--cluster-node-timeout", timeout))
		gobs = append(gobs, startGoblin(t, "--cluster-node-timeout", timeout))
	}
	all = append(append(all, reds...), gobs...)
	// Slots: redis-server i has [i*per, (i+1)*per); goblin the rest, in
	// thirds. Distinct config epochs, as redis-cli --cluster create sets.
	rest := 16384 - 3*per
	for i, r := range reds {
		r.do(t, "CLUSTER", "ADDSLOTSRANGE", i*per, (i+1)*per-1)
	}
	for i, g := range gobs {
		lo := 3*per + i*rest/3
		hi := 3*per + (i+1)*rest/3 - 1
		g.do(t, "CLUSTER", "ADDSLOTSRANGE", lo, hi)
	}
	for i, n := range all {
		n.do(t, "CLUSTER", "SET-CONFIG-EPOCH", i+1)
	}
	for _, n := range all[1:] {
		all[0].meet(t, n)
	}
	checkClean(t, gobs[0])
	var allAddrs []string
	for _, n := range all {
		allAddrs = append(allAddrs, n.addr)
	}
	waitStateOK(t, 60*time.Second, allAddrs...)

	// Keys everywhere, before the walk.
	var seed []string
	for _, g := range gobs {
		seed = append(seed, g.addr)
	}
	newClient := func() *redis.ClusterClient {
		return redis.NewClusterClient(&redis.ClusterOptions{Addrs: seed, MaxRedirects: 16, MaxRetries: -1,
			ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second, ClusterStateReloadInterval: time.Second})
	}
	cc := newClient()
	defer cc.Close()
	const keys = 3000
	for i := range keys {
		k := "walk:" + strconv.Itoa(i)
		if err := cc.Set(ctx, k, "v"+strconv.Itoa(i), 0).Err(); err != nil {
			t.Fatalf("SET %s before the walk: %v", k, err)
		}
	}
	var before int64
	for _, r := range reds {
		n, _ := r.c.DBSize(ctx).Result()
		before += n
	}
	if before == 0 {
		t.Fatal("the redis-server nodes hold no key before the walk")
	}

	// The client under load: 4 workers over 100 keys each.
	lr := &loadRun{cc: newClient(), seenAfter: map[string]bool{}}
	lr.start(4, 100)
	halted := false
	defer func() {
		if !halted {
			lr.halt()
		}
	}()
	start := time.Now()
	for i, r := range reds {
		rid, gid := r.id(t), gobs[i].id(t)
		// A minute, and 100 ms a slot: a loaded machine has moved as few
		// as 28 slots a second.
		t0 := time.Now()
		out, err := redisCLIWithin(t, time.Minute+time.Duration(per)*100*time.Millisecond, "--cluster", "reshard", gobs[i].addr,
			"--cluster-from", rid, "--cluster-to", gid, "--cluster-slots", strconv.Itoa(per), "--cluster-yes")
		if err != nil || strings.Contains(out, "[ERR]") {
			t.Fatalf("redis-cli --cluster reshard from redis-server %s: %v\n%s", r.addr, err, lastLines(out, 30))
		}
		took := time.Since(t0)
		t.Logf("reshard of %d slots from redis-server %s: %v, %.0f slots/s", per, r.addr, took.Round(time.Millisecond), float64(per)/took.Seconds())
		checkClean(t, gobs[i])
		if l := r.line(rid); countSlots(l) != 0 {
			t.Fatalf("redis-server %s still owns slots after the reshard: %s", r.addr, l)
		}
		// A master that lost its last slot becomes a replica of the node
		// that took it (cluster-allow-replica-migration yes, Redis's
		// default): the redis-server node now replicates the goblin node.
		gl := gobs[i]
		testkit.Eventually(t, 30*time.Second, "redis-server "+r.addr+" a replica of the goblin node that took its slots, or an empty master", func() (bool, string) {
			f := strings.Fields(r.line(rid))
			if len(f) < 4 {
				return false, strings.Join(f, " ")
			}
			n, _ := r.c.DBSize(ctx).Result()
			return strings.Contains(f[2], "slave") && f[3] == gid || strings.Contains(f[2], "master") && n == 0,
				strings.Join(f, " ") + "; " + strconv.FormatInt(n, 10) + " keys; goblin " + gl.line(gid)
		})
	}
	resharded := time.Since(start)
	for _, r := range reds {
		cliOK(t, "Sending CLUSTER RESET SOFT to the deleted node.", "--cluster", "del-node", gobs[0].addr, r.id(t))
	}
	for _, g := range gobs {
		testkit.Eventually(t, 30*time.Second, g.addr+" knowing only the three goblin nodes", func() (bool, string) {
			out, err := g.c.ClusterNodes(ctx).Result()
			return err == nil && len(strings.Split(strings.TrimSpace(out), "\n")) == 3, out
		})
	}
	time.Sleep(time.Second) // the client keeps going on the goblin-only cluster
	lr.halt()
	halted = true
	out := checkClean(t, gobs[0])
	if strings.Count(out, "M: ") != 3 {
		t.Errorf("--cluster check after del-node does not list three masters:\n%s", out)
	}
	for i := range keys {
		k := "walk:" + strconv.Itoa(i)
		got, err := cc.Get(ctx, k).Result()
		if errors.Is(err, redis.Nil) || err == nil && got != "v"+strconv.Itoa(i) {
			t.Errorf("key %s after the walk: %q %v, want %q", k, got, err, "v"+strconv.Itoa(i))
		} else if err != nil {
			t.Errorf("GET %s after the walk: %v", k, err)
		}
	}
	lr.mu.Lock()
	violations := lr.violations
	lr.mu.Unlock()
	for _, v := range violations {
		t.Error(v)
	}
	if n := lr.errs.Load(); n != 0 {
		t.Errorf("the client saw %d errors during the walk (last: %s)", n, lr.lastError())
	}
	t.Logf("migration walk: %d slots (%d keys on redis-server) resharded in %v; the client ran %d commands, %d errors",
		3*per, before, resharded.Round(time.Millisecond), lr.ops.Load(), lr.errs.Load())
}
