package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// BenchmarkAeronVsTCPReplicas measures a goblin primary's CPU per SET, its
// SET latency and the replication lag with 1, 2 and 4 goblin replicas fed
// over TCP (one Redis-protocol stream per replica) and over one Aeron MDC
// publication (control-mode=dynamic), in the same run, all on loopback:
// 4 depth-one SET clients for BENCH_SECONDS (default 3) after a 1 s
// warm-up (setLoad), the primary's user+system CPU from /proc (its media
// driver thread included), then 300 probe SETs each read back on the
// first replica in a tight loop (replicationLag). Run it with
//
//	go test -run '^$' -bench AeronVsTCPReplicas -benchtime 1x ./cmd/goblin-server/
func BenchmarkAeronVsTCPReplicas(b *testing.B) {
	secs := 3
	if v := os.Getenv("BENCH_SECONDS"); v != "" {
		secs, _ = strconv.Atoi(v)
	}
	for _, n := range []int{1, 2, 4} {
		for _, mode := range []string{"tcp", "aeron"} {
			b.Run(fmt.Sprintf("replicas=%d/%s", n, mode), func(b *testing.B) {
				ctx := context.Background()
				ctl, status := freeUDPPort(b, "127.0.0.1"), freeUDPPort(b, "127.0.0.1")
				var pargs []string
				if mode == "aeron" {
					pargs = []string{"--repl-aeron-channel", fmt.Sprintf("aeron:udp?control-mode=dynamic|control=127.0.0.1:%d", ctl),
						"--repl-aeron-status-channel", fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", status)}
				}
				p := startServerTB(b, pargs...)
				var first *redis.Client
				for i := range n {
					args := []string{"--replicaof", strings.Replace(p.tcp, ":", " ", 1)}
					if mode == "aeron" {
						args = append(args,
							"--replica-aeron-channel", fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d|control=127.0.0.1:%d|control-mode=dynamic", freeUDPPort(b, "127.0.0.1"), ctl),
							"--replica-aeron-status-channel", fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", status))
					}
					r := startServerTB(b, args...)
					rc := redis.NewClient(goblinOpts(r))
					defer rc.Close()
					if mode == "aeron" {
						aeronLive(b, rc)
					} else {
						testkit.Eventually(b, 60*time.Second, "the replica's link up", func() (bool, string) {
							s := infoFieldCtx(ctx, rc, "replication", "master_link_status")
							return s == "up", s
						})
					}
					if i == 0 {
						first = rc
					}
				}
				for range b.N {
					setLoad(b, p.tcp, time.Second) // warm-up
					pc := redis.NewClient(goblinOpts(p))
					pid := infoFieldCtx(ctx, pc, "server", "process_id")
					pc.Close()
					cpu0 := cpuTicks(b, pid)
					ops, lat := setLoad(b, p.tcp, time.Duration(secs)*time.Second)
					cpu := float64(cpuTicks(b, pid)-cpu0) * 1e4 / float64(ops)
					b.ReportMetric(float64(ops)/float64(secs), "sets/s")
					b.ReportMetric(cpu, "primary-cpu-µs/set")
					report(b, "set", lat)
					lag := replicationLag(b, p.tcp, first, 300)
					report(b, "lag", lag)
					b.Logf("%d %s replicas: %.0f SET/s, primary CPU %.2f µs/SET, SET %v; lag %v", n, mode,
						float64(ops)/float64(secs), cpu, lat.Summary(), lag.Summary())
				}
			})
		}
	}
}
