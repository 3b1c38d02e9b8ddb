package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// BenchmarkForwardedWrites: one primary publishing over MDC on loopback
// and two forwarding replicas of it, one with a status channel (its writes
// go over Aeron) and one without (over TCP); a depth-one client on each
// replica's Unix socket sends forwarded SETs, the two alternating in blocks
// of 200, 2,000 each (BENCH_FORWARDED to change). It reports each path's
// p50 and p99 (a write forwarded, run on the primary and applied on the
// replica) and the Aeron p50 as a multiple of the TCP p50 in the same run.
func BenchmarkForwardedWrites(b *testing.B) {
	ctx := context.Background()
	n := 2000
	if v, err := strconv.Atoi(os.Getenv("BENCH_FORWARDED")); err == nil && v > 0 {
		n = v
	}
	ctl, status := freeUDPPort(b, "127.0.0.1"), freeUDPPort(b, "127.0.0.1")
	p := startServerTB(b, "--repl-aeron-channel", fmt.Sprintf("aeron:udp?control-mode=dynamic|control=127.0.0.1:%d", ctl),
		"--repl-aeron-status-channel", fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", status))
	replica := func(aeronPath bool) *redis.Client {
		args := []string{"--replicaof", strings.Replace(p.tcp, ":", " ", 1), "--replica-forward-writes",
			"--replica-aeron-channel", fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d|control=127.0.0.1:%d|control-mode=dynamic", freeUDPPort(b, "127.0.0.1"), ctl)}
		if aeronPath {
			args = append(args, "--replica-aeron-status-channel", fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", status))
		}
		r := startServerTB(b, args...)
		c := redis.NewClient(&redis.Options{Network: "unix", Addr: r.sock, PoolSize: 1})
		b.Cleanup(func() { c.Close() })
		aeronLive(b, c)
		return c
	}
	clients := map[string]*redis.Client{"aeron": replica(true), "tcp": replica(false)}
	lat := map[string][]time.Duration{}
	for range 2 { // warm up both paths
		for name, c := range clients {
			if err := c.Set(ctx, "warm", name, 0).Err(); err != nil {
				b.Fatalf("%s: forwarded SET: %v", name, err)
			}
		}
	}
	b.ResetTimer()
	for i := 0; i < n; i += 200 {
		for _, name := range []string{"aeron", "tcp"} {
			c := clients[name]
			for j := range min(200, n-i) {
				t0 := time.Now()
				if err := c.Set(ctx, fmt.Sprintf("%s:%d", name, i+j), "v", 0).Err(); err != nil {
					b.Fatalf("%s: forwarded SET: %v", name, err)
				}
				lat[name] = append(lat[name], time.Since(t0))
			}
		}
	}
	b.StopTimer()
	if a := infoInt(b, clients["aeron"], "replication", "forwarded_aeron"); a < int64(n) {
		b.Fatalf("the Aeron replica forwarded only %d of %d writes over Aeron", a, n)
	}
	pct := func(d []time.Duration, q float64) time.Duration {
		slices.Sort(d)
		return d[int(q*float64(len(d)-1))]
	}
	for _, name := range []string{"aeron", "tcp"} {
		b.ReportMetric(float64(pct(lat[name], 0.5).Microseconds()), name+"-p50-µs")
		b.ReportMetric(float64(pct(lat[name], 0.99).Microseconds()), name+"-p99-µs")
	}
	b.ReportMetric(float64(pct(lat["aeron"], 0.5))/float64(pct(lat["tcp"], 0.5)), "aeron/tcp-p50")
}
