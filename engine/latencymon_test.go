package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
)

// TestLatencyMonitorEvents: samples at or over latency-monitor-threshold
// become events, fast commands apart, one sample per event and second (the
// largest), as Redis's latencyAddSample; LATEST, HISTORY, GRAPH (the
// sparkline worked out by hand from Redis's sparkline.c), DOCTOR and RESET
// read them.
func TestLatencyMonitorEvents(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	old := wallClock
	wallClock = func() time.Time { return now }
	defer func() { wallClock = old }()
	e, _ := newEngine(t, Options{LatencyMonitorThreshold: 1})
	s := e.Open(proto.RESP, nil)
	get, save := &command.Request{Op: command.OpGet}, &command.Request{Op: command.OpSave}
	e.commandTimed(s, get, 3e6)
	e.commandTimed(s, save, 5e6)
	e.commandTimed(s, get, 7e6)     // the same second: kept as the larger
	e.commandTimed(s, get, 999_999) // under the threshold
	now = now.Add(2 * time.Second)
	e.commandTimed(s, get, 2e6)
	// The commands below are timed too: a threshold they cannot reach
	// keeps them out of the events.
	e.lat.threshold = 1_000_000
	ts := "1700000000"
	ts2 := "1700000002"
	for _, c := range []struct{ args, want string }{
		{"LATENCY LATEST", "[[$fast-command :" + ts2 + " :2 :7] [$command :" + ts + " :5 :5]]"},
		{"LATENCY HISTORY fast-command", "[[:" + ts + " :7] [:" + ts2 + " :2]]"},
		{"LATENCY HISTORY FAST-COMMAND", "[[:" + ts + " :7] [:" + ts2 + " :2]]"},
		{"LATENCY HISTORY nosuch", "[]"},
		{"LATENCY GRAPH fast-command", "$fast-command - high 7 ms, low 2 ms (all time high 7 ms)\n" + strings.Repeat("-", 80) + "\n" +
			"# \n| \n| \n|_\n  \n20\nss\n"},
	} {
		if got := do(t, e, s, strings.Fields(c.args)...); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.args, got, c.want)
		}
	}
	doctor := do(t, e, s, "LATENCY", "DOCTOR")
	for _, want := range []string{
		"$Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n" +
			"1. fast-command: 2 latency spikes (average 4ms, mean deviation 2ms, period 1.00 sec). Worst all time event 7ms.\n" +
			"2. command: 1 latency spikes (average 5ms, mean deviation 0ms, period 2.00 sec). Worst all time event 5ms.\n" +
			"\nI have a few advices for you:\n\n",
		"- Check your Slow Log to understand what are the commands you are running which are too slow to execute.",
		"- The system is slow to execute Redis code paths not containing system calls.",
	} {
		if !strings.Contains(doctor, want) {
			t.Errorf("LATENCY DOCTOR lacks %q:\n%s", want, doctor)
		}
	}
	if got := do(t, e, s, "LATENCY", "RESET", "fast-command", "nosuch"); got != ":1" {
		t.Fatalf("LATENCY RESET fast-command: %s", got)
	}
	if got := do(t, e, s, "LATENCY", "LATEST"); got != "[[$command :"+ts+" :5 :5]]" {
		t.Fatalf("after the reset: %s", got)
	}
}

// TestLatencyHistogramBuckets: the histogram's buckets, cumulative counts
// and percentiles, as Redis's hdr_histogram (2 significant figures) and
// fillCommandCDF give them, worked out by hand.
func TestLatencyHistogramBuckets(t *testing.T) {
	var h cmdHist
	for _, ns := range []int64{500, 1500, 40_000, 2_000_000} {
		h.record(ns)
	}
	var got [][2]int64
	h.cdf(func(us, cum int64) { got = append(got, [2]int64{us, cum}) })
	want := [][2]int64{{1, 1}, {2, 2}, {66, 3}, {2113, 4}}
	if len(got) != len(want) {
		t.Fatalf("cdf %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("cdf %v, want %v", got, want)
		}
	}
	for _, c := range []struct {
		p    float64
		want int64
	}{{50, 1503}, {99, 2_007_039}, {0, 500}, {25, 501}, {100, 2_007_039}} {
		if v := h.percentile(c.p); v != c.want {
			t.Errorf("p%v = %d ns, want %d", c.p, v, c.want)
		}
	}
	// The range is Redis's: 1 ns to 1 s.
	var edge cmdHist
	edge.record(0)
	edge.record(5e9)
	if edge.total != 2 || edge.percentile(100) < 1e9 {
		t.Fatalf("clamped values: total %d, max %d", edge.total, edge.percentile(100))
	}
}

// TestLatencyTrackingUsesTheSlowLogsTiming: every command is counted while
// the slow log times every command; with the slow log off only the one in
// sampleEvery that is timed anyway, so tracking adds no clock read.
func TestLatencyTrackingUsesTheSlowLogsTiming(t *testing.T) {
	e, _ := newEngine(t, Options{})
	s := e.Open(proto.RESP, nil)
	for range 10 {
		do(t, e, s, "GET", "k")
	}
	if got := e.lat.hist[command.OpGet].total; got != 10 {
		t.Fatalf("slow log on: %d GETs counted, want 10", got)
	}
	off := int64(-1)
	e, _ = newEngine(t, Options{SlowlogSlowerThan: &off})
	s = e.Open(proto.RESP, nil)
	for range 2 * sampleEvery {
		do(t, e, s, "GET", "k")
	}
	if h := e.lat.hist[command.OpGet]; h == nil || h.total != 2 {
		t.Fatalf("slow log off: %v GETs counted of %d, want the 2 sampled", h, 2*sampleEvery)
	}
	do(t, e, s, "CONFIG", "SET", "latency-tracking", "no")
	before := e.lat.hist[command.OpGet].total
	for range 2 * sampleEvery {
		do(t, e, s, "GET", "k")
	}
	if e.lat.hist[command.OpGet].total != before {
		t.Fatal("latency-tracking no still counted")
	}
}
