package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/latency"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// BenchmarkPingDuringBgsave measures the stall a depth-one PING client
// sees while a BGSAVE of 1M keys (16 B keys, 16 B values; BENCH_KEYS
// overrides the count) runs, against the same client on the idle server,
// for goblin-server (forkless: the loop walks the keyspace in slices) and
// redis-server 7.0 (fork) in the same run. Run it with
//
//	go test -run '^$' -bench PingDuringBgsave -benchtime 1x ./cmd/goblin-server/
//
// Each sub-benchmark reports idle-p50/p99/p99.9/max and save-p50/… in
// nanoseconds, the PINGs answered during the save and the save's length.
func BenchmarkPingDuringBgsave(b *testing.B) {
	keys := 1_000_000
	if v := os.Getenv("BENCH_KEYS"); v != "" {
		keys, _ = strconv.Atoi(v)
	}
	peers := []struct {
		name  string
		start func(b *testing.B) (sock string)
	}{
		{"goblin", func(b *testing.B) string { return startServerTB(b, "--dir", b.TempDir()).sock }},
		{"redis", startRedisB},
	}
	for _, peer := range peers {
		b.Run(peer.name, func(b *testing.B) {
			sock := peer.start(b)
			fillKeys(b, sock, keys)
			for range b.N {
				idle, save, dur := pingStall(b, sock)
				report(b, "idle", idle)
				report(b, "save", save)
				b.ReportMetric(float64(save.Count()), "pings-during-save")
				b.ReportMetric(float64(dur.Milliseconds()), "save-ms")
				b.Logf("%s, %d keys: idle %v", peer.name, keys, idle.Summary())
				b.Logf("%s, %d keys: during BGSAVE (%v) %v", peer.name, keys, dur.Round(time.Millisecond), save.Summary())
			}
		})
	}
}

func report(b *testing.B, prefix string, r *latency.Recorder) {
	s := r.Summary()
	b.ReportMetric(float64(s.P50), prefix+"-p50-ns")
	b.ReportMetric(float64(s.P99), prefix+"-p99-ns")
	b.ReportMetric(float64(s.P999), prefix+"-p99.9-ns")
	b.ReportMetric(float64(s.Max), prefix+"-max-ns")
}

func startRedisB(b *testing.B) string {
	dir := b.TempDir()
	sock := dir + "/redis.sock"
	bin := testkit.Need(b, "redis-server", "the peer whose fork stall the benchmark shows beside goblin's")
	testproc.Start(b, bin, "--port", "0", "--unixsocket", sock, "--dir", dir, "--save", "", "--appendonly", "no")
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock})
	defer c.Close()
	deadline := time.Now().Add(startTimeout)
	for c.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			b.Fatal("redis-server never answered PING")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return sock
}

// fillKeys writes n keys of 16 bytes with 16-byte values with MSET.
func fillKeys(b *testing.B, sock string, n int) {
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 1})
	defer c.Close()
	ctx := context.Background()
	args := make([]any, 0, 2001)
	for i := 0; i < n; {
		args = append(args[:0], "MSET")
		for j := 0; j < 1000 && i < n; j, i = j+1, i+1 {
			args = append(args, fmt.Sprintf("key:%012d", i), fmt.Sprintf("val:%012d", i))
		}
		if err := c.Do(ctx, args...).Err(); err != nil {
			b.Fatal(err)
		}
	}
	if got, _ := c.DBSize(ctx).Result(); got != int64(n) {
		b.Fatalf("DBSIZE %d after filling %d keys", got, n)
	}
}

// pingStall runs depth-one PINGs on the idle server for two seconds, then
// starts a BGSAVE and runs them until INFO reports it done.
func pingStall(b *testing.B, sock string) (idle, save *latency.Recorder, dur time.Duration) {
	conn, err := net.Dial("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	req := []byte("*1\r\n$4\r\nPING\r\n")
	buf := make([]byte, 7)
	ping := func(r *latency.Recorder) {
		start := latency.Now()
		if _, err := conn.Write(req); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(conn, buf); err != nil || string(buf) != "+PONG\r\n" {
			b.Fatalf("PING: %q, %v", buf, err)
		}
		r.Record(latency.Now() - start)
	}
	idle, save = latency.New(), latency.New()
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); {
		ping(idle)
	}
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 1})
	defer c.Close()
	ctx := context.Background()
	done := make(chan struct{})
	began := time.Now()
	if err := c.BgSave(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	var last string // the last INFO persistence, for a failure message
	go func() {
		defer close(done)
		deadline := time.Now().Add(5 * time.Minute)
		for time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			info, err := c.Info(ctx, "persistence").Result()
			last = info
			if err != nil || strings.Contains(info, "rdb_bgsave_in_progress:0") {
				return
			}
		}
	}()
	for {
		select {
		case <-done:
			if !strings.Contains(last, "rdb_bgsave_in_progress:0") || !strings.Contains(last, "rdb_last_bgsave_status:ok") {
				b.Fatalf("BGSAVE did not end with status ok within 5 minutes; INFO persistence:\n%s", last)
			}
			return idle, save, time.Since(began)
		default:
			ping(save)
		}
	}
}
