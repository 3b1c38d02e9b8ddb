package runner

import (
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/benchmarks/harness"
	"golang.org/x/sys/unix"
)

// monotonicNow reads CLOCK_MONOTONIC from the kernel.
func monotonicNow(t *testing.T) int64 {
	t.Helper()
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		t.Fatal(err)
	}
	return ts.Nano()
}

// slowEveryFourth is a Prober whose every fourth measured round trip (after
// the warm-up) sleeps for slow, so the timeline must show those in place.
type slowEveryFourth struct {
	warmup, calls int
	slow          time.Duration
}

func (p *slowEveryFourth) Do(harness.Op) error {
	if n := p.calls - p.warmup; n >= 0 && n%4 == 3 {
		time.Sleep(p.slow)
	}
	p.calls++
	return nil
}
func (p *slowEveryFourth) Describe() string { return "test prober" }
func (p *slowEveryFourth) Close() error     { return nil }

// TestTimelineKeepsMeasuredOrder: -timeline writes one row per measured
// round trip, in the order measured (the summary sorts its own copy), so a
// slow round trip shows where it happened, and with its start on
// CLOCK_MONOTONIC, so it shows when. Only lower bounds of durations are
// checked (a sleep lasts at least as long as asked).
func TestTimelineKeepsMeasuredOrder(t *testing.T) {
	cfg := harness.DefaultConfig()
	cfg.Warmup, cfg.Samples = 10, 40
	cfg.Profile = harness.Profiles(2)["backoff"]
	const slow = 2 * time.Millisecond
	path := filepath.Join(t.TempDir(), "ping.timeline.csv")
	pr := &slowEveryFourth{warmup: cfg.Warmup, slow: slow}
	before := monotonicNow(t)
	s, _, _, err := measure(&cfg, cfg.Profile, pr, harness.Ping, newProgress(&cfg, nil, 1), path)
	if err != nil {
		t.Fatal(err)
	}
	after := monotonicNow(t)
	rows := readCSV(t, path, []string{"round_trip", "latency_ns", "start_mono_ns"}, cfg.Samples)
	if len(rows) != cfg.Samples {
		t.FailNow()
	}
	prevStart, prevNs := before, int64(0)
	for i, r := range rows {
		ns, err1 := strconv.ParseInt(r[1], 10, 64)
		start, err2 := strconv.ParseInt(r[2], 10, 64)
		if err1 != nil || err2 != nil || r[0] != strconv.Itoa(i) {
			t.Fatalf("row %d = %v", i+1, r)
		}
		if i%4 == 3 && ns < int64(slow) {
			t.Errorf("round trip %d slept %v but the timeline says %d ns: not in measured order", i, slow, ns)
		}
		// Each round trip starts after the one before it ended, and all
		// of them between the test's own CLOCK_MONOTONIC reads.
		if start < prevStart+prevNs || start+ns > after {
			t.Errorf("round trip %d: start %d ns (CLOCK_MONOTONIC) and %d ns long, but the one before started at %d and lasted %d, and the run ended by %d",
				i, start, ns, prevStart, prevNs, after)
		}
		prevStart, prevNs = start, ns
	}
	if s.Max < int64(slow) {
		t.Errorf("summary max %d ns, want at least %v", s.Max, slow)
	}
}

// gcCounter is a Prober whose warm-up leaves garbage behind (as starting
// and dialing a real client does) and whose measured round trips allocate
// nothing and note how many GC cycles the runtime has completed.
type gcCounter struct {
	warmup, calls int
	keep          [][]byte
	first, last   uint64
	sample        []metrics.Sample
}

func (p *gcCounter) Do(harness.Op) error {
	switch n := p.calls - p.warmup; {
	case n < -1:
		// 64 MiB kept live, so a cycle takes milliseconds to mark.
		p.keep = append(p.keep, make([]byte, 64<<10))
		if len(p.keep) > 1024 {
			p.keep = p.keep[1:]
		}
	case n == -1:
		// The last warm-up round trip leaves a collection running, as an
		// allocation of a dialing client or a driver can: with GOGC at 1 %
		// this allocation starts a cycle, whose marking goes on after.
		old := debug.SetGCPercent(1)
		p.keep = append(p.keep, make([]byte, 1<<20))
		debug.SetGCPercent(old)
	case n == 0:
		metrics.Read(p.sample)
		p.first = p.sample[0].Value.Uint64()
	default:
		metrics.Read(p.sample)
		p.last = p.sample[0].Value.Uint64()
	}
	p.calls++
	return nil
}
func (p *gcCounter) Describe() string { return "test prober" }
func (p *gcCounter) Close() error     { return nil }

// TestNoGCWhileMeasuring: the measured round trips of a prober that
// allocates nothing see no garbage collection, even when the warm-up left
// garbage and a collection running (as the first case of a run did, whose
// measured round trips saw one cycle complete).
func TestNoGCWhileMeasuring(t *testing.T) {
	cfg := harness.DefaultConfig()
	cfg.Warmup, cfg.Samples = 2000, 1_000_000
	cfg.Profile = harness.Profiles(2)["backoff"]
	pr := &gcCounter{warmup: cfg.Warmup, sample: []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}}
	path := filepath.Join(t.TempDir(), "ping.timeline.csv")
	if _, _, _, err := measure(&cfg, cfg.Profile, pr, harness.Ping, newProgress(&cfg, nil, 1), path); err != nil {
		t.Fatal(err)
	}
	if pr.last != pr.first {
		t.Errorf("%d GC cycles completed during the measured round trips, want 0", pr.last-pr.first)
	}
}
