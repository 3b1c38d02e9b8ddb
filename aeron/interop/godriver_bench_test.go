package interop

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/javadriver"
	"github.com/goblin-kv/goblin/internal/testproc"
)

// The Go driver beside the Java driver, same run, same idle profile (both
// SHARED with the back-off idle strategy: 10 spins, 20 yields, sleeps of
// 1 µs to 1 ms), each a process of its own:
//
//	go test -run '^$' -bench GoDriver -benchtime 1x ./aeron/interop/
//
//   - BenchmarkGoDriverPingPong: the Java client's Ping and Pong (32-byte
//     messages) over each driver, alternating drivers GOBLIN_DRIVER_ROUNDS
//     times (default 3); p50/p99 per driver (medians over the rounds) and
//     the go/java ratios.
//   - BenchmarkGoDriverThroughput: the Java client's Throughput program
//     (one publisher, one subscriber, 32 bytes), alternating likewise.
//   - BenchmarkGoDriverAddPublication: command → ready for an exclusive IPC
//     publication, as goblin's Go client sees it (GOBLIN_ADDS adds per
//     driver, default 200), alternating one add on each.
//   - BenchmarkGoDriverIdleCPU: each driver's CPU (utime+stime from
//     /proc/<pid>/stat) over GOBLIN_IDLE_S seconds (default 10) with one
//     idle client connected, as a percentage of one core.

// driverPair is the two drivers a comparison runs on.
type driverPair struct {
	javaDir, goDir string
	javaPID, goPID int
}

func startDriverPair(b *testing.B) driverPair {
	b.Helper()
	jd := startDriver(b, javadriver.Options{Profile: javadriver.Frugal})
	bin := testproc.Build(b, "./aeron/cmd/aeronmd")
	dir := filepath.Join(b.TempDir(), "aeron")
	p := testproc.Start(b, bin, "-Daeron.dir="+dir, "-Daeron.threading.mode=SHARED", "-Daeron.shared.idle.strategy=backoff")
	p.WaitLog(b, "serving", startTimeout)
	return driverPair{javaDir: jd.Dir(), goDir: dir, javaPID: jd.PID(), goPID: p.PID}
}

func BenchmarkGoDriverPingPong(b *testing.B) {
	j := needJava(b)
	dp := startDriverPair(b)
	rounds := envInt("GOBLIN_DRIVER_ROUNDS", 3)
	warmup := envInt("GOBLIN_PING_WARMUP", 10_000)
	count := envInt("GOBLIN_PING_COUNT", 100_000)
	var p50, p99 [2][]float64 // 0 java, 1 go
	for range b.N {
		for range rounds {
			for k, dir := range []string{dp.javaDir, dp.goDir} {
				r := javaPing(b, j, dir, 32, warmup, count)
				p50[k] = append(p50[k], r.p50)
				p99[k] = append(p99[k], r.p99)
			}
		}
	}
	jp50, jp99, gp50, gp99 := median(p50[0]), median(p99[0]), median(p50[1]), median(p99[1])
	b.ReportMetric(jp50, "java-p50-ns")
	b.ReportMetric(jp99, "java-p99-ns")
	b.ReportMetric(gp50, "go-p50-ns")
	b.ReportMetric(gp99, "go-p99-ns")
	b.ReportMetric(gp50/jp50, "p50-go/java")
	b.ReportMetric(gp99/jp99, "p99-go/java")
	b.Logf("Java Ping/Pong RTT, 32 B, %d rounds of %d: Java driver p50 %v p99 %v (all %v / %v); Go driver p50 %v p99 %v (all %v / %v)",
		rounds, count, jp50, jp99, p50[0], p99[0], gp50, gp99, p50[1], p99[1])
}

func BenchmarkGoDriverThroughput(b *testing.B) {
	j := needJava(b)
	dp := startDriverPair(b)
	rounds := envInt("GOBLIN_DRIVER_ROUNDS", 3)
	duration := time.Duration(envInt("GOBLIN_TPUT_MS", 3000)) * time.Millisecond
	var rates [2][]float64
	for range b.N {
		for range rounds {
			for k, dir := range []string{dp.javaDir, dp.goDir} {
				rates[k] = append(rates[k], javaThroughput(b, j, dir, 32, time.Second, duration))
			}
		}
	}
	jr, gr := median(rates[0]), median(rates[1])
	b.ReportMetric(jr, "java-msgs/s")
	b.ReportMetric(gr, "go-msgs/s")
	b.ReportMetric(gr/jr, "go/java")
	b.Logf("Java Throughput, 32 B: Java driver %.0f msgs/s (%v), Go driver %.0f msgs/s (%v)", jr, rates[0], gr, rates[1])
}

func BenchmarkGoDriverAddPublication(b *testing.B) {
	needJava(b)
	dp := startDriverPair(b)
	n := envInt("GOBLIN_ADDS", 200)
	clients := make([]*aeron.Client, 2)
	for k, dir := range []string{dp.javaDir, dp.goDir} {
		c, err := aeron.Connect(aeron.Options{Dir: dir, DriverTimeout: 30 * time.Second, NoPrefault: true})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		clients[k] = c
	}
	var took [2][]float64
	for range b.N {
		for i := range n {
			for k, c := range clients {
				start := time.Now()
				p, err := c.AddExclusivePublication("aeron:ipc?term-length=64k", int32(5000+i))
				took[k] = append(took[k], float64(time.Since(start)))
				if err != nil {
					b.Fatal(err)
				}
				p.Close()
			}
		}
	}
	jm, gm := median(took[0]), median(took[1])
	b.ReportMetric(jm, "java-ns/add")
	b.ReportMetric(gm, "go-ns/add")
	b.ReportMetric(gm/jm, "go/java")
	b.Logf("add exclusive IPC publication (64 KiB terms), command → ready, median of %d: Java driver %v, Go driver %v",
		len(took[0]), time.Duration(jm), time.Duration(gm))
}

// cpuTicks reads a process's utime+stime in clock ticks.
func cpuTicks(b *testing.B, pid int) float64 {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the ")" closing the command name: state is field 3,
	// utime field 14, stime field 15.
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return u + s
}

func clockTicks() float64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if n, err2 := strconv.ParseFloat(strings.TrimSpace(string(out)), 64); err == nil && err2 == nil && n > 0 {
		return n
	}
	return 100
}

// wakeups counts the voluntary context switches of every thread of pid:
// how often its threads went to sleep, which on an idle machine is the
// cost of idling.
func wakeups(b *testing.B, pid int) float64 {
	files, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/status")
	n := 0.0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue // a thread that just exited
		}
		for _, l := range strings.Split(string(raw), "\n") {
			if v, ok := strings.CutPrefix(l, "voluntary_ctxt_switches:"); ok {
				x, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
				n += x
			}
		}
	}
	return n
}

func BenchmarkGoDriverIdleCPU(b *testing.B) {
	needJava(b)
	dp := startDriverPair(b)
	for _, dir := range []string{dp.javaDir, dp.goDir} {
		c, err := aeron.Connect(aeron.Options{Dir: dir, DriverTimeout: 30 * time.Second})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		if _, err := c.AddSubscription("aeron:ipc", 1); err != nil {
			b.Fatal(err)
		}
	}
	time.Sleep(2 * time.Second) // let start-up work settle
	secs := envInt("GOBLIN_IDLE_S", 10)
	hz := clockTicks()
	var pct, sw [2]float64
	for range b.N {
		j0, g0 := cpuTicks(b, dp.javaPID), cpuTicks(b, dp.goPID)
		jw, gw := wakeups(b, dp.javaPID), wakeups(b, dp.goPID)
		start := time.Now()
		time.Sleep(time.Duration(secs) * time.Second)
		el := time.Since(start).Seconds()
		pct[0] = 100 * (cpuTicks(b, dp.javaPID) - j0) / hz / el
		pct[1] = 100 * (cpuTicks(b, dp.goPID) - g0) / hz / el
		sw[0] = (wakeups(b, dp.javaPID) - jw) / el
		sw[1] = (wakeups(b, dp.goPID) - gw) / el
	}
	b.ReportMetric(pct[0], "java-%core")
	b.ReportMetric(pct[1], "go-%core")
	b.ReportMetric(sw[0], "java-sleeps/s")
	b.ReportMetric(sw[1], "go-sleeps/s")
	b.Logf("idle driver CPU over %ds, one idle client: Java driver %.2f%% of a core (%.0f sleeps/s), Go driver %.2f%% (%.0f sleeps/s)",
		secs, pct[0], sw[0], pct[1], sw[1])
}
