package runner

import (
	"context"
	"math"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/benchmarks/harness"
	"github.com/goblin-kv/goblin/benchmarks/harness/internal/sshlab"
	"github.com/goblin-kv/goblin/benchmarks/harness/report"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// TestFloorProbersInProcess: the udp-floor echo and the aeron-go pong,
// served on goroutines of this process over loopback, answer their probers
// round trip after round trip, and a round trip allocates nothing.
func TestFloorProbersInProcess(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	port, err := harness.FreeUDPPort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	echoDone := make(chan error, 1)
	go func() { echoDone <- ServeUDPEcho(ctx, addr) }()
	udp, err := dialProbe(ctx, &harness.Config{}, ProbeSpec{Client: harness.ClientUDPFloor, Target: addr})
	if err != nil {
		t.Fatal(err)
	}
	checkProber(t, "udp-floor", udp)

	p1, _ := harness.FreeUDPPort("127.0.0.1")
	p2, _ := harness.FreeUDPPort("127.0.0.1")
	ping, pong := "aeron:udp?endpoint=127.0.0.1:"+strconv.Itoa(p1), "aeron:udp?endpoint=127.0.0.1:"+strconv.Itoa(p2)
	pongDone := make(chan error, 1)
	go func() { pongDone <- ServeAeronPong(ctx, filepath.Join(t.TempDir(), "pong"), ping, pong) }()
	ag, err := dialProbe(ctx, &harness.Config{}, ProbeSpec{Client: harness.ClientAeronGo, Target: ping + " " + pong})
	if err != nil {
		t.Fatal(err)
	}
	checkProber(t, "aeron-go", ag)
	cancel()
	for _, ch := range []chan error{echoDone, pongDone} {
		if err := <-ch; err != nil {
			t.Error(err)
		}
	}
}

func checkProber(t *testing.T, name string, p harness.Prober) {
	t.Helper()
	defer p.Close()
	if b, ok := p.(harness.Bounded); ok {
		b.Bound(time.Now().Add(2 * time.Minute))
	}
	for i := range 200 {
		if err := p.Do(harness.Ping); err != nil {
			t.Fatalf("%s: round trip %d: %v", name, i, err)
		}
	}
	// Not testing.AllocsPerRun: it sets GOMAXPROCS to 1, and the prober
	// and its peer both spin in this process, so each round trip would
	// wait for the scheduler's 10 ms preemption (the test took 30 s).
	// ReadMemStats counts the whole process, the peer's and the Go
	// driver's background work included, so the test asks for less than
	// one allocation every two round trips in the quietest of three
	// batches: a round trip that allocates makes at least one per round
	// trip in every batch.
	const batch = 200
	least := uint64(math.MaxUint64)
	var ms runtime.MemStats
	for range 3 {
		runtime.ReadMemStats(&ms)
		before := ms.Mallocs
		for i := range batch {
			if err := p.Do(harness.Ping); err != nil {
				t.Fatalf("%s: measured round trip %d: %v", name, i, err)
			}
		}
		runtime.ReadMemStats(&ms)
		least = min(least, ms.Mallocs-before)
	}
	if least >= batch/2 {
		t.Errorf("%s: %d allocations in the quietest %d round trips, want fewer than %d (a round trip allocates)",
			name, least, batch, batch/2)
	}
}

// TestGoblinBenchInProcessUDP runs goblin-bench for real over loopback with
// -driver inproc: goblin PING over two-driver Aeron UDP with both Go
// drivers in-process, the aeron-go ping-pong and the udp-floor, each a
// fresh server process, and checks every case measured its samples.
func TestGoblinBenchInProcessUDP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs goblin-bench and goblin-server")
	}
	sshlab.RequireTools(t, false, "go")
	srv := buildGoblinServer(t)
	bench := testproc.Build(t, "./cmd/goblin-bench")
	out := filepath.Join(t.TempDir(), "run")
	const samples = 300
	cmd := exec.Command(bench, "matrix", "-quiet", "-out", out, "-runs", "1", "-warmup", "100", "-samples", strconv.Itoa(samples),
		"-driver", "inproc", "-systems", "goblin,aeron-go,udp-floor", "-transports", "aeron-udp", "-protocols", "SBE",
		"-ops", "PING", "-profile", "backoff", "-goblin-server", srv, "-case-timeout", "2m")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("goblin-bench: %v\n%s", err, b)
	}
	rows := readCSV(t, filepath.Join(out, report.LatencyCSV), report.LatencyHeader, 3)
	checkRows(t, report.LatencyCSV, rows, report.LatencyHeader, samples)
	seen := map[string]bool{}
	for _, r := range rows {
		if r[5] != harness.StatusOK {
			t.Errorf("%s %s: %s %s", r[1], r[2], r[5], r[14])
		}
		seen[r[1]] = true
	}
	for _, s := range []string{harness.SysGoblin, harness.SysAeronGo, harness.SysUDPFloor} {
		if !seen[s] {
			t.Errorf("no %s row", s)
		}
	}
}
