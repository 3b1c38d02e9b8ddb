package runner

import (
	"context"
	"os/exec"
	"path/filepath"
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
	if n := testing.AllocsPerRun(200, func() {
		if err := p.Do(harness.Ping); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("%s: %v allocations per round trip, want 0", name, n)
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
