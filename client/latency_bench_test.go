package client

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit/latency"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// BenchmarkRoundTrip measures depth-one PING, SET (16-byte value) and GET
// round trips over a Unix socket with this client, against goblin-server
// with its loop spinning (--idle spin, RESP and SBE), goblin-server with
// its default idle strategy, and redis-server on a Unix socket (skipped
// with a message when it is not installed), one after the other in the
// same run. Each case reports p50/p90/p99/p99.9/max/mean in ns beside
// ns/op and allocs/op, and the run logs goblin's p50 as a fraction of
// Redis's.
//
//	go test -run '^$' -bench RoundTrip -benchtime 100000x ./client/
//
// Every peer is measured by the same client in two modes: "poll" reads
// with plain blocking reads (parking in Go's network poller), "busypoll"
// spins on non-blocking reads for up to 20µs first (Options.BusyPoll;
// GOBLIN_BENCH_BUSYPOLL=<duration> changes the bound). Busy-polling takes
// the poller wake-up out of every peer's figures when a core is free for
// the client, and costs a great deal when cores are scarce: a spinning
// client competes with the server for the CPU. GOBLIN_BENCH_SERVER=<path>
// measures a prebuilt goblin-server binary instead of building this tree's.
func BenchmarkRoundTrip(b *testing.B) {
	busy := 20 * time.Microsecond
	if v := os.Getenv("GOBLIN_BENCH_BUSYPOLL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			b.Fatalf("GOBLIN_BENCH_BUSYPOLL=%q: want a positive duration", v)
		}
		busy = d
	}
	peers := []struct {
		name  string
		start func(testing.TB) string // returns a target
	}{
		{"goblin-spin", func(tb testing.TB) string { return startGoblin(tb, "spin", "resp") }},
		{"goblin-spin-sbe", func(tb testing.TB) string { return startGoblin(tb, "spin", "sbe") }},
		{"goblin-default", func(tb testing.TB) string { return startGoblin(tb, "", "resp") }},
		{"redis", func(tb testing.TB) string { return "uds://" + startRedis(tb) }},
	}
	modes := []struct {
		name string
		opts Options
	}{
		{"poll", Options{}},
		{"busypoll", Options{BusyPoll: busy}},
	}
	ops := []string{"PING", "SET", "GET"}
	var mu sync.Mutex
	p50 := map[string]int64{} // "peer/mode/op" → p50 of the last run of that case
	for _, peer := range peers {
		b.Run(peer.name, func(b *testing.B) {
			tgt := peer.start(b)
			for _, mode := range modes {
				b.Run(mode.name, func(b *testing.B) {
					c := dialWithT(b, mode.opts, tgt)
					for _, op := range ops {
						b.Run(op, func(b *testing.B) {
							s := measure(b, c, op)
							mu.Lock()
							p50[peer.name+"/"+mode.name+"/"+op] = s.P50
							mu.Unlock()
						})
					}
				})
			}
		})
	}
	var lines []string
	for _, mode := range modes {
		for _, op := range ops {
			r := p50["redis/"+mode.name+"/"+op]
			for _, g := range []string{"goblin-spin", "goblin-spin-sbe", "goblin-default"} {
				if v, ok := p50[g+"/"+mode.name+"/"+op]; ok && r > 0 {
					lines = append(lines, fmt.Sprintf("%-8s %-4s %-15s p50 %7.2fµs  redis %7.2fµs  ratio %.2f",
						mode.name, op, g, float64(v)/1e3, float64(r)/1e3, float64(v)/float64(r)))
				}
			}
		}
	}
	if len(lines) > 0 {
		b.Logf("goblin p50 / redis p50, same client, same run (target ≤ 0.70 with --idle spin):\n%s",
			strings.Join(lines, "\n"))
	}
}

// measure runs b.N depth-one round trips of op after a warm-up and
// reports their latency distribution.
func measure(b *testing.B, c *Client, op string) latency.Summary {
	ctx := context.Background()
	key := "bench:key:000001"
	val := []byte("0123456789abcdef") // 16 bytes
	dst := make([]byte, 0, 64)
	if err := c.Set(ctx, key, val, SetOptions{}); err != nil {
		b.Fatal(err)
	}
	var do func() error
	switch op {
	case "PING":
		do = func() error { return c.Ping(ctx) }
	case "SET":
		do = func() error { return c.Set(ctx, key, val, SetOptions{}) }
	case "GET":
		do = func() error { _, err := c.GetAppend(ctx, dst[:0], key); return err }
	}
	for i := 0; i < 2000; i++ { // warm-up: caches, branch predictors, CPU clocks
		if err := do(); err != nil {
			b.Fatal(err)
		}
	}
	rec := latency.New()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if err := do(); err != nil {
			b.Fatal(err)
		}
		rec.Record(int64(time.Since(t0)))
	}
	b.StopTimer()
	rec.Report(b)
	return rec.Summary()
}

// startGoblin builds and starts goblin-server on a temp Unix socket with
// the given idle strategy ("" for the default) and returns the target.
func startGoblin(tb testing.TB, idle, proto string) string {
	tb.Helper()
	bin := os.Getenv("GOBLIN_BENCH_SERVER") // a prebuilt goblin-server, e.g. another revision
	if bin == "" {
		bin = testproc.Build(tb, "./cmd/goblin-server")
	}
	sock := filepath.Join(tb.TempDir(), "goblin.sock")
	tgt := "uds://" + sock + "?proto=" + proto
	args := []string{"--listen", tgt, "--metrics", "off"}
	if idle != "" {
		args = append(args, "--idle", idle)
	}
	testproc.Start(tb, bin, args...)
	testproc.WaitDial(tb, "unix", sock, 60*time.Second)
	return tgt
}
