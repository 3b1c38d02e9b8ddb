package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/latency"
)

// BenchmarkAeronReplicationLag measures the replication lag over Aeron
// against its floor, the one-way Aeron UDP latency between the same two
// namespaces, in one run: a primary (host 0) and one replica (host 1), per
// path (multicast, mdc; tcp for reference), and rounds that each measure,
// probe by probe in turn (so that all see the machine's load of the same
// moments),
//
//   - the one-way latency: two aeronmd drivers, one in each namespace (the
//     defaults the servers' private drivers run with), a 64-byte message
//     from host 0 to host 1 timed from the Offer to its arrival at the
//     subscriber (timedOnce: this process holds both clients, so one
//     monotonic clock times both ends);
//   - the lag: a SET written on the primary's Unix socket until the
//     replica returns the value to a client reading its shared-memory
//     ring in a tight loop (newWriteLagProbe: the SET's reply is read
//     after, so no wake-up of the probe's own is in it);
//   - the lag with the SET's reply awaited first (lagProbe, the older
//     figures' probe), for reference;
//
// AERON_LAG_PROBES probes each (default 300, after 200 to warm up), one at
// a time, 1 ms apart, so every driver and loop involved has backed off to
// its park between probes, as a write that comes alone finds them; then
// as many ping-pongs, half of whose round trip (oneWay) the older figures
// quote. It reports the medians over the rounds (AERON_LAG_ROUNDS,
// default 5) of each round's p50 and p99, and the lag p50 over the one-way
// p50.
//
// Both readers spin, as alike as they can be: the one-way subscriber polls
// its image in a tight loop, the lag's ring client (wait=spin) GETs in one.
// AERON_LAG_READ=yield makes both give the CPU up (sched_yield) between
// polls that find nothing (and AERON_LAG_RING_WAIT="&wait=yield" the ring
// client while it waits for a reply). AERON_LAG_TRACE=DIR records the
// scheduler's events during the first round of each path for
// benchmarks/aeronlag/breakdown.py (lagTrace).
//
// Then, the servers and drivers at rest for AERON_REST_SECONDS (default
// 5), the CPU each process takes (ms of CPU a second, user+system from
// /proc/PID/stat): the primary's and the replica's (store loop, media
// driver and runtime) and each aeronmd's (a Go media driver alone, with
// one UDP publication and one subscription).
//
//	go test -run '^$' -bench AeronReplicationLag -benchtime 1x -timeout 20m ./cmd/goblin-server/
func BenchmarkAeronReplicationLag(b *testing.B) {
	rounds, err := strconv.Atoi(envOr("AERON_LAG_ROUNDS", "5"))
	if err != nil || rounds < 1 {
		b.Fatalf("AERON_LAG_ROUNDS: %q is not a count of rounds", envOr("AERON_LAG_ROUNDS", ""))
	}
	probes, err := strconv.Atoi(envOr("AERON_LAG_PROBES", "300"))
	if err != nil || probes < 10 {
		b.Fatalf("AERON_LAG_PROBES: %q is not a count of at least 10 probes", envOr("AERON_LAG_PROBES", ""))
	}
	rest, err := strconv.Atoi(envOr("AERON_REST_SECONDS", "5"))
	if err != nil || rest < 1 {
		b.Fatalf("AERON_REST_SECONDS: %q is not a number of seconds", envOr("AERON_REST_SECONDS", ""))
	}
	paths := strings.Split(envOr("AERON_BENCH_PATHS", "multicast,mdc,tcp"), ",")
	read := envOr("AERON_LAG_READ", "spin")
	if read != "yield" && read != "spin" {
		b.Fatalf("AERON_LAG_READ: %q is neither yield nor spin", read)
	}
	a := newAeronLAN(b, 1, nil)
	ping := startAeronPingPong(b, a, 0, 1)
	ping.yield = read == "yield"
	var rows []string
	for range b.N {
		for _, path := range paths {
			if err := a.usePath(path); err != nil {
				b.Fatalf("AERON_BENCH_PATHS: %v", err)
			}
			a.replicas = nil
			rring := benchRing(b)
			var replica *nsServer
			if a.channel == nil {
				a.primary = a.start(b, 0)
				replica = a.start(b, 1, "--listen", rring, "--replicaof", strings.Replace(a.primary.tcp, ":", " ", 1))
				a.replicas = append(a.replicas, replica)
			} else {
				a.startPrimary(b)
				replica = a.startReplica(b, 1, "--listen", rring)
				aeronLive(b, replica.c)
			}
			want := infoInt(b, a.primary.c, "replication", "master_repl_offset")
			testkit.Eventually(b, 60*time.Second, fmt.Sprintf("the replica to reach the primary's offset %d", want), func() (bool, string) {
				got := infoInt(b, replica.c, "replication", "slave_repl_offset")
				return got >= want, fmt.Sprintf("at %d", got)
			})
			primary := dialBench(b, "uds://"+a.primary.sock)
			replicaRing := dialBench(b, rring+envOr("AERON_LAG_RING_WAIT", "&wait=spin"))
			probe := newWriteLagProbe(b, a.primary.sock, replicaRing)
			awaited := newLagProbe(primary, replicaRing)
			probe.yield, awaited.yield = read == "yield", read == "yield"
			for range 200 { // warm-up
				probe.once(b)
				awaited.once(b)
				ping.timedOnce(b)
				time.Sleep(time.Millisecond)
			}
			var lag50, lag99, ow50, ow99, rtt50, aw50 []float64
			for r := range rounds {
				// The lag, the lag with the SET's reply awaited and the
				// one-way message take turns probe by probe, so all see
				// the same load from moment to moment.
				ow, lag, aw := latency.New(), latency.New(), latency.New()
				var tr *lagTrace
				if dir := os.Getenv("AERON_LAG_TRACE"); dir != "" && r == 0 {
					tr = startLagTrace(b, dir, path)
				}
				for range probes {
					lag.Record(probe.once(b))
					tr.probe(probe)
					time.Sleep(time.Millisecond)
					ow.Record(ping.timedOnce(b))
					time.Sleep(time.Millisecond)
					aw.Record(awaited.once(b))
					time.Sleep(time.Millisecond)
				}
				tr.stop(b, map[string]string{
					"primary": infoFieldCtx(context.Background(), a.primary.c, "server", "process_id"),
					"replica": infoFieldCtx(context.Background(), replica.c, "server", "process_id"),
					"bench":   strconv.Itoa(os.Getpid()),
				})
				half := ping.oneWay(b, probes)
				ow50, ow99 = append(ow50, float64(ow.Quantile(0.5))), append(ow99, float64(ow.Quantile(0.99)))
				rtt50 = append(rtt50, float64(half.Quantile(0.5)))
				lag50, lag99 = append(lag50, float64(lag.Quantile(0.5))), append(lag99, float64(lag.Quantile(0.99)))
				aw50 = append(aw50, float64(aw.Quantile(0.5)))
				b.Logf("%s round %d: lag p50 %s p99 %s (SET awaited: p50 %s); one-way p50 %s p99 %s; half a round trip p50 %s; lag/one-way p50 %.2f", path, r+1,
					us(lag.Quantile(0.5)), us(lag.Quantile(0.99)), us(aw.Quantile(0.5)), us(ow.Quantile(0.5)), us(ow.Quantile(0.99)),
					us(half.Quantile(0.5)), float64(lag.Quantile(0.5))/float64(ow.Quantile(0.5)))
			}
			pids := []string{
				infoFieldCtx(context.Background(), a.primary.c, "server", "process_id"),
				infoFieldCtx(context.Background(), replica.c, "server", "process_id"),
				strconv.Itoa(ping.pids[0]), strconv.Itoa(ping.pids[1]),
			}
			cpu := restCPU(b, pids, time.Duration(rest)*time.Second)
			m := func(v []float64) int64 { return int64(medianOf(v)) }
			ratio := medianOf(lag50) / medianOf(ow50)
			b.ReportMetric(medianOf(lag50)/1e3, path+"-lag-p50-µs")
			b.ReportMetric(medianOf(lag99)/1e3, path+"-lag-p99-µs")
			b.ReportMetric(medianOf(ow50)/1e3, path+"-oneway-p50-µs")
			b.ReportMetric(ratio, path+"-lag/oneway-p50")
			b.ReportMetric(medianOf(aw50)/1e3, path+"-lag-set-awaited-p50-µs")
			row := fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s | %.2f | %.1f | %.1f | %.1f | %.1f |", path,
				us(m(lag50)), us(m(lag99)), us(m(aw50)), us(m(ow50)), us(m(ow99)), us(m(rtt50)), ratio, cpu[0], cpu[1], cpu[2], cpu[3])
			rows = append(rows, row)
			b.Log(row)
			primary.Close()
			replicaRing.Close()
			replica.p.Stop(10 * time.Second)
			a.primary.p.Stop(10 * time.Second)
		}
	}
	fmt.Printf("\n%d rounds of %d probes, medians of the rounds' quantiles; CPU at rest over %d s, ms/s\n"+
		"| path | lag p50 | lag p99 | lag p50, SET awaited | Aeron one-way p50 | one-way p99 | ½ round trip p50 | lag/one-way p50 | primary at rest | replica at rest | aeronmd host 0 | aeronmd host 1 |\n"+
		"|---|---|---|---|---|---|---|---|---|---|---|---|\n%s\n", rounds, probes, rest, strings.Join(rows, "\n"))
}

// restCPU returns the CPU each of pids takes over d, in milliseconds of
// CPU a second (user+system, from /proc/PID/stat, in clock ticks of 10 ms).
func restCPU(b *testing.B, pids []string, d time.Duration) []float64 {
	t0 := make([]int64, len(pids))
	for i, pid := range pids {
		t0[i] = cpuTicks(b, pid)
	}
	start := time.Now()
	time.Sleep(d)
	el := time.Since(start).Seconds()
	out := make([]float64, len(pids))
	for i, pid := range pids {
		out[i] = float64(cpuTicks(b, pid)-t0[i]) * 10 / el
	}
	return out
}

// medianOf returns the median of v, leaving v as it was.
func medianOf(v []float64) float64 {
	v = slices.Clone(v) // callers keep their order
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// lagTrace records the kernel's scheduler events (perf record: every
// wake-up and context switch, on CLOCK_MONOTONIC) during one round of lag
// probes, and each probe's start and end on the same clock, so that a
// probe's way can be followed thread by thread: AERON_LAG_TRACE=DIR
// (needs perf and root) writes DIR/PATH.perf.data, DIR/PATH.probes (one
// "start end" line per probe, ns) and DIR/PATH.pids (role pid, then the
// thread ids). benchmarks/aeronlag/breakdown.py reads them.
type lagTrace struct {
	dir, path string
	perf      *exec.Cmd
	base      int64 // CLOCK_MONOTONIC minus latency.Now
	lines     []byte
}

func startLagTrace(b *testing.B, dir, path string) *lagTrace {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	t := &lagTrace{dir: dir, path: path}
	cmd := exec.Command("perf", "record", "-q", "-a", "-k", "CLOCK_MONOTONIC", "-e", "sched:sched_wakeup,sched:sched_switch",
		"-o", filepath.Join(dir, path+".perf.data"))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatalf("AERON_LAG_TRACE: perf: %v", err)
	}
	t.perf = cmd
	time.Sleep(2 * time.Second) // perf opens its events
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	t.base = ts.Nano() - latency.Now()
	return t
}

// probe notes the window of the probe p just ran.
func (t *lagTrace) probe(p *lagProbe) {
	if t == nil {
		return
	}
	t.lines = fmt.Appendf(t.lines, "%d %d\n", p.start+t.base, p.end+t.base)
}

func (t *lagTrace) stop(b *testing.B, pids map[string]string) {
	if t == nil {
		return
	}
	t.perf.Process.Signal(os.Interrupt)
	t.perf.Wait()
	var roles []byte
	for role, pid := range pids {
		roles = fmt.Appendf(roles, "%s %s", role, pid)
		ents, _ := os.ReadDir("/proc/" + pid + "/task")
		for _, e := range ents {
			roles = fmt.Appendf(roles, " %s", e.Name())
		}
		roles = append(roles, '\n')
	}
	for name, data := range map[string][]byte{".probes": t.lines, ".pids": roles} {
		if err := os.WriteFile(filepath.Join(t.dir, t.path+name), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("AERON_LAG_TRACE: %s.{perf.data,probes,pids} in %s", t.path, t.dir)
}
