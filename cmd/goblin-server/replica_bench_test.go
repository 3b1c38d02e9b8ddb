package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// redisReplica starts an empty redis-server 7.0 to compare goblin with.
func redisReplica(b testing.TB) *redis.Client {
	b.Helper()
	bin := testkit.Need(b, "redis-server", "the Redis replica goblin is compared with")
	dir := b.TempDir()
	sock := filepath.Join(dir, "replica.sock")
	testproc.Start(b, bin, "--port", strconv.Itoa(freeTCPPort(b)), "--bind", "127.0.0.1", "--unixsocket", sock,
		"--dir", dir, "--save", "", "--appendonly", "no", "--daemonize", "no")
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock})
	b.Cleanup(func() { c.Close() })
	testkit.Eventually(b, startTimeout, "the redis replica answering PING", func() (bool, string) {
		err := c.Ping(context.Background()).Err()
		return err == nil, fmt.Sprint(err)
	})
	return c
}

// syncTime sends REPLICAOF to c and returns the time until the snapshot
// is loaded and the link is up.
func syncTime(b testing.TB, c *redis.Client, port int) time.Duration {
	b.Helper()
	start := time.Now()
	if err := c.Do(context.Background(), "REPLICAOF", "127.0.0.1", strconv.Itoa(port)).Err(); err != nil {
		b.Fatal(err)
	}
	for {
		if infoField(b, c, "replication", "master_link_status") == "up" && infoField(b, c, "replication", "master_sync_in_progress") == "0" {
			return time.Since(start)
		}
		if time.Since(start) > 5*time.Minute {
			b.Fatal("timed out waiting for master_link_status:up")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// BenchmarkReplicaFullSync: the full resynchronisation of 1 M keys (a
// quarter each strings, hashes, sets, lists) from a redis-server 7.0
// primary (diskless transfer, its 7.0 default), by goblin and by a
// redis-server replica, in the same run, one after the other, each
// from REPLICAOF to master_link_status:up.
//
//	go test -run '^$' -bench ReplicaFullSync -benchtime 1x ./cmd/goblin-server/
//
// BENCH_VALUE=N makes the primary hold BENCH_KEYS (default 1,000,000)
// string keys of 16 bytes with N-byte values instead (as the persistence
// benchmarks' keys). BENCH_PEER_BIN=path adds a goblin-server built
// elsewhere (the parent commit, to compare a change) as another replica
// of the same primary; BENCH_ROUNDS rounds (default 1) sync every replica
// in turn, the two goblins' order swapped every round. For each goblin it
// reports the seconds from REPLICAOF to the link up (-s), the process's
// CPU by then (-cpu-s) and once it idles again (-settled-cpu-s: the
// collapse into huge pages after the load included), medians over the
// rounds. For example, 1 KB values against BASE, the commit the change
// being measured starts from (main, for a branch):
//
//	git worktree add --detach /tmp/before BASE && (cd /tmp/before && go build -o /tmp/goblin-before ./cmd/goblin-server)
//	BENCH_VALUE=1024 BENCH_ROUNDS=3 BENCH_PEER_BIN=/tmp/goblin-before \
//	  go test -run '^$' -bench ReplicaFullSync -benchtime 1x -timeout 60m ./cmd/goblin-server/
func BenchmarkReplicaFullSync(b *testing.B) {
	port, rc, _ := redisPrimary(b)
	keys := 1_000_000
	if os.Getenv("BENCH_VALUE") != "" {
		var value int
		keys, value, _ = benchEnv(b)
		fillKeys(b, rc.Options().Addr, keys, value)
	} else {
		fill(b, rc, keys/4)
	}
	b.Logf("primary holds %d keys, used_memory %s", rc.DBSize(context.Background()).Val(), infoField(b, rc, "memory", "used_memory_human"))
	goblins := []*syncReplica{{name: "goblin", s: startServerTB(b)}}
	if bin := os.Getenv("BENCH_PEER_BIN"); bin != "" {
		goblins = append(goblins, &syncReplica{name: "peer", s: startServerBin(b, bin, nil, nil)})
	}
	rounds := 1
	if v, err := strconv.Atoi(os.Getenv("BENCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	rr := redisReplica(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for round := range rounds {
			order := slices.Clone(goblins)
			if round%2 == 1 {
				slices.Reverse(order)
			}
			for _, g := range order {
				g.sync(b, port, keys, round)
			}
			rt := syncTime(b, rr, port)
			b.ReportMetric(rt.Seconds(), "redis-s")
			b.Logf("round %d, redis-server: full sync of %d keys in %v", round+1, keys, rt.Round(time.Millisecond))
			rr.Do(context.Background(), "REPLICAOF", "NO", "ONE")
		}
	}
	for _, g := range goblins {
		b.ReportMetric(medianOf(g.secs), g.name+"-s")
		b.ReportMetric(medianOf(g.cpu), g.name+"-cpu-s")
		b.ReportMetric(medianOf(g.settled), g.name+"-settled-cpu-s")
	}
}

// syncReplica is a goblin replica of BenchmarkReplicaFullSync and its
// figures, one a round.
type syncReplica struct {
	name               string
	s                  *srv
	secs, cpu, settled []float64
}

// sync has the replica follow the primary at port, times the full
// resynchronisation and its CPU, checks the keys and promotes the replica
// again (so the next round's REPLICAOF is a full resynchronisation too).
func (g *syncReplica) sync(b *testing.B, port, keys, round int) {
	b.Helper()
	c := redis.NewClient(goblinOpts(g.s))
	defer c.Close()
	cpu0 := processCPU(g.s.p.PID)
	d := syncTime(b, c, port)
	cpu := processCPU(g.s.p.PID) - cpu0
	settled := idleCPU(g.s.p.PID) - cpu0
	if n := c.DBSize(context.Background()).Val(); n != int64(keys) {
		b.Fatalf("%s holds %d keys after the sync, want %d", g.name, n, keys)
	}
	g.secs, g.cpu, g.settled = append(g.secs, d.Seconds()), append(g.cpu, cpu.Seconds()), append(g.settled, settled.Seconds())
	b.Logf("round %d, %s: full sync of %d keys in %v, %v of CPU by then, %v once idle (INFO goblin_load_collapse_regions:%s)",
		round+1, g.name, keys, d.Round(time.Millisecond), cpu.Round(10*time.Millisecond), settled.Round(10*time.Millisecond),
		infoField(b, c, "persistence", "goblin_load_collapse_regions"))
	if err := c.Do(context.Background(), "REPLICAOF", "NO", "ONE").Err(); err != nil {
		b.Fatal(err)
	}
}

// idleCPU waits until process pid idles (less than 20 ms of CPU in half a
// second, at most 30 s) and returns its CPU time then (processCPU).
func idleCPU(pid int) time.Duration {
	last := processCPU(pid)
	for range 60 {
		time.Sleep(500 * time.Millisecond)
		now := processCPU(pid)
		if now-last < 20*time.Millisecond {
			return now
		}
		last = now
	}
	return last
}

// BenchmarkReplicaLag: the time from sending a write to the
// redis-server primary to its value being readable on the replica, while
// a writer keeps a steady load of 20 000 writes/s on the primary; probes
// every 2 ms, the replica polled by one client in a tight loop (so the
// figure includes up to one loopback round trip). goblin and a
// redis-server replica of the same primary are measured in turn.
//
//	go test -run '^$' -bench ReplicaLag -benchtime 1x ./cmd/goblin-server/
func BenchmarkReplicaLag(b *testing.B) {
	ctx := context.Background()
	port, rc, _ := redisPrimary(b)
	fill(b, rc, 10000)
	g := startServerTB(b)
	gc := redis.NewClient(goblinOpts(g))
	defer gc.Close()
	rr := redisReplica(b)
	syncTime(b, gc, port)
	syncTime(b, rr, port)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var written atomic.Int64
	wg.Add(1)
	go func() { // 20 000 writes/s: 100 pipelined SETs every 5 ms
		defer wg.Done()
		wc := redis.NewClient(rc.Options())
		defer wc.Close()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			p := wc.Pipeline()
			for j := 0; j < 100; j++ {
				p.Set(ctx, "load:"+strconv.Itoa((i*100+j)%50000), i, 0)
			}
			if _, err := p.Exec(ctx); err != nil {
				b.Error(err)
				return
			}
			written.Add(100)
		}
	}()
	defer func() { close(stop); wg.Wait() }()

	const probes = 3000
	measure := func(name string, replica *redis.Client) []time.Duration {
		lags := make([]time.Duration, 0, probes)
		for i := 0; i < probes; i++ {
			v := name + strconv.Itoa(i)
			start := time.Now()
			if err := rc.Set(ctx, "probe", v, 0).Err(); err != nil {
				b.Fatal(err)
			}
			for {
				got, err := replica.Get(ctx, "probe").Result()
				if err != nil && err != redis.Nil {
					b.Fatal(err)
				}
				if got == v {
					break
				}
				if time.Since(start) > 10*time.Second {
					b.Fatalf("%s never showed probe %s", name, v)
				}
			}
			lags = append(lags, time.Since(start))
			time.Sleep(2 * time.Millisecond)
		}
		slices.Sort(lags)
		return lags
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		before := written.Load()
		t0 := time.Now()
		gl := measure("goblin", gc)
		rl := measure("redis", rr)
		rate := float64(written.Load()-before) / time.Since(t0).Seconds()
		pct := func(l []time.Duration, p float64) time.Duration { return l[int(float64(len(l)-1)*p)] }
		b.ReportMetric(float64(pct(gl, 0.5).Microseconds()), "goblin-p50-µs")
		b.ReportMetric(float64(pct(gl, 0.99).Microseconds()), "goblin-p99-µs")
		b.ReportMetric(float64(pct(rl, 0.5).Microseconds()), "redis-p50-µs")
		b.ReportMetric(float64(pct(rl, 0.99).Microseconds()), "redis-p99-µs")
		b.Logf("lag at %.0f writes/s, %d probes each (write sent to the primary → readable on the replica): goblin p50 %v p99 %v max %v; redis-server p50 %v p99 %v max %v",
			rate, probes, pct(gl, 0.5), pct(gl, 0.99), gl[len(gl)-1], pct(rl, 0.5), pct(rl, 0.99), rl[len(rl)-1])
	}
}
