package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/latency"
)

// BenchmarkPrimarySetReplicas measures goblin-server's SET throughput and
// latency as a primary with 0 and 1 redis-server 7.0 replicas: 4 clients
// over loopback TCP, each sending one SET at a time (16-byte keys over
// 10k, 16-byte values) for BENCH_SECONDS (default 5) after a 1 s warm-up.
// With a replica it also samples the replication lag: a probe SETs a key
// and reads the replica until the value is there. Run it with
//
//	go test -run '^$' -bench PrimarySetReplicas -benchtime 1x ./cmd/goblin-server/
func BenchmarkPrimarySetReplicas(b *testing.B) {
	secs := 5
	if v := os.Getenv("BENCH_SECONDS"); v != "" {
		secs, _ = strconv.Atoi(v)
	}
	for _, replicas := range []int{0, 1} {
		b.Run(fmt.Sprintf("replicas=%d", replicas), func(b *testing.B) {
			ctx := context.Background()
			addr := goblinTCP(b)
			g := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1})
			defer g.Close()
			var r *redis.Client
			if replicas == 1 {
				host, port, _ := net.SplitHostPort(addr)
				_, ropts := redisServer(b, b.TempDir(), "--replicaof", host, port)
				r = redis.NewClient(ropts)
				defer r.Close()
				testkit.Eventually(b, 60*time.Second, "the replica's link up", func() (bool, string) {
					s := infoFieldCtx(ctx, r, "replication", "master_link_status")
					return s == "up", s
				})
			}
			for range b.N {
				setLoad(b, addr, time.Second) // warm-up
				pid := infoFieldCtx(ctx, g, "server", "process_id")
				cpu0 := cpuTicks(b, pid)
				ops, lat := setLoad(b, addr, time.Duration(secs)*time.Second)
				cpu := float64(cpuTicks(b, pid)-cpu0) * 1e4 / float64(ops) // ticks are 10 ms
				b.ReportMetric(float64(ops)/float64(secs), "sets/s")
				b.ReportMetric(cpu, "goblin-cpu-µs/set")
				report(b, "set", lat)
				b.Logf("%d replicas: %.0f SET/s, goblin's CPU %.2f µs/SET, %v", replicas, float64(ops)/float64(secs), cpu, lat.Summary())
				if r != nil {
					lag := replicationLag(b, addr, r, 500)
					report(b, "lag", lag)
					b.Logf("replication lag (idle primary, SET → visible on the replica): %v", lag.Summary())
				}
			}
		})
	}
}

// cpuTicks returns the user and system CPU time of process pid, in clock
// ticks (/proc/pid/stat fields 14 and 15; 100 per second on Linux).
func cpuTicks(b *testing.B, pid string) int64 {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

// setLoad runs 4 depth-one SET clients for d and returns the SETs done
// and their latencies.
func setLoad(b *testing.B, addr string, d time.Duration) (int64, *latency.Recorder) {
	return latency.SetLoad(b, "tcp", addr, 4, d)
}

// replicationLag SETs a key on the primary n times and each time reads the
// replica until it holds the new value.
func replicationLag(b *testing.B, addr string, r *redis.Client, n int) *latency.Recorder {
	ctx := context.Background()
	g := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1})
	defer g.Close()
	rec := latency.New()
	for i := 0; i < n; i++ {
		want := strconv.Itoa(i)
		start := latency.Now()
		if err := g.Set(ctx, "lag", want, 0).Err(); err != nil {
			b.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			if v, _ := r.Get(ctx, "lag").Result(); v == want {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("the replica never saw lag=%s", want)
			}
		}
		rec.Record(latency.Now() - start)
	}
	return rec
}
