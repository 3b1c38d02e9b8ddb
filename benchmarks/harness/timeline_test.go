package harness

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// slowEveryFourth is a Prober whose every fourth measured round trip (after
// the warm-up) sleeps for slow, so the timeline must show those in place.
type slowEveryFourth struct {
	warmup, calls int
	slow          time.Duration
}

func (p *slowEveryFourth) Do(Op) error {
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
// slow round trip shows where it happened. Only lower bounds of durations
// are checked (a sleep lasts at least as long as asked).
func TestTimelineKeepsMeasuredOrder(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Warmup, cfg.Samples = 10, 40
	cfg.Profile = Profiles(2)["backoff"]
	const slow = 2 * time.Millisecond
	path := filepath.Join(t.TempDir(), "ping.timeline.csv")
	pr := &slowEveryFourth{warmup: cfg.Warmup, slow: slow}
	s, _, _, err := measure(&cfg, cfg.Profile, pr, Ping, newProgress(&cfg, nil, 1), path)
	if err != nil {
		t.Fatal(err)
	}
	rows := readCSV(t, path, []string{"round_trip", "latency_ns"}, cfg.Samples)
	if len(rows) != cfg.Samples {
		t.FailNow()
	}
	for i, r := range rows {
		ns, err := strconv.ParseInt(r[1], 10, 64)
		if err != nil || r[0] != strconv.Itoa(i) {
			t.Fatalf("row %d = %v", i+1, r)
		}
		if i%4 == 3 && ns < int64(slow) {
			t.Errorf("round trip %d slept %v but the timeline says %d ns: not in measured order", i, slow, ns)
		}
	}
	if s.Max < int64(slow) {
		t.Errorf("summary max %d ns, want at least %v", s.Max, slow)
	}
}
