package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A kernel trace of four moments, in tracefs's text with trace_clock mono:
// at 100.000010 s a thread of goblin-bench runs in place of the spinner,
// at 100.000110 s only a timer interrupt comes, at 100.000210 s a kworker
// runs, and at 100.000310 s a datagram arrives (NET_RX: the benchmark's
// own traffic, no cause).
const tailsTrace = `# tracer: nop
#
    goblin-bench-10    [001] d..2. 100.000010: sched_switch: prev_comm=goblin-bench prev_pid=10 prev_prio=120 prev_state=R ==> next_comm=goblin-bench next_pid=11 next_prio=120
    goblin-bench-10    [001] d.h1. 100.000110: local_timer_entry: vector=236
   goblin-server-20    [000] d..2. 100.000210: sched_switch: prev_comm=goblin-server prev_pid=20 prev_prio=120 prev_state=R ==> next_comm=kworker/0:1 next_pid=30 next_prio=120
   goblin-server-20    [000] ..s1. 100.000310: softirq_entry: vec=3 [action=NET_RX]
`

// TestAttributeTails: slow round trips (over 3× the median) are put down
// to what the trace shows during them, and fast ones are counted with
// what they saw, so a cause that also shows in fast round trips stands out.
func TestAttributeTails(t *testing.T) {
	events, err := ParseKernelTrace(strings.NewReader(tailsTrace))
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 4 || events[0].At != 100_000_010_000 || events[0].CPU != 1 || events[0].Next != "goblin-bench" || events[2].Next != "kworker/0:1" {
		t.Fatalf("parsed %+v", events)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "ping.timeline.csv")
	// 20 round trips of 10 µs, back to back from 99.999 s; then four slow
	// ones of 50 µs around each event and a fast one over the NET_RX.
	var b strings.Builder
	b.WriteString("round_trip,latency_ns,start_mono_ns\n")
	row := 0
	add := func(start, lat int64) {
		fmt.Fprintf(&b, "%d,%d,%d\n", row, lat, start)
		row++
	}
	for i := range 20 {
		add(99_999_000_000+int64(i)*10_000, 10_000)
	}
	add(100_000_000_000, 50_000) // goblin-bench's own thread at +10 µs
	add(100_000_100_000, 50_000) // the timer at +110 µs
	add(100_000_200_000, 50_000) // the kworker at +210 µs
	add(100_000_305_000, 10_000) // NET_RX at +310 µs: fast
	add(100_000_400_000, 50_000) // nothing
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	rounds, err := ReadTimeline(path)
	if err != nil {
		t.Fatal(err)
	}
	rep := AttributeTails(rounds, events, []string{"goblin-bench", "goblin-server"})
	if rep.Rounds != 25 || rep.P50 != 10_000 || rep.Slow != 4 || rep.Fast != 21 {
		t.Fatalf("report %+v", rep)
	}
	want := map[string]int{CauseOwnThread: 1, CauseTimer: 1, CauseOtherTask + "kworker": 1, CauseNothingSeen: 1}
	for _, c := range rep.Causes {
		if want[c.Cause] != c.Slow || c.SlowMedian != 50_000 {
			t.Errorf("cause %+v, want %d slow of 50 µs", c, want[c.Cause])
		}
		if c.Cause == CauseNothingSeen && c.FastWithCause != 21 {
			t.Errorf("%d fast round trips saw nothing, want 21 (NET_RX is no cause)", c.FastWithCause)
		}
		delete(want, c.Cause)
	}
	if len(want) != 0 {
		t.Errorf("causes missing: %v", want)
	}
	var out strings.Builder
	WriteTailReport(&out, "ping", rep)
	if !strings.Contains(out.String(), "| "+CauseOwnThread+" | 25.0 % | 50.000 |") {
		t.Errorf("table:\n%s", out.String())
	}
}

// TestReadTimelineWantsStartTimes: a timeline from before start times were
// written is refused with a clear error.
func TestReadTimelineWantsStartTimes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.timeline.csv")
	os.WriteFile(path, []byte("round_trip,latency_ns\n0,1000\n"), 0o644)
	if _, err := ReadTimeline(path); err == nil || !strings.Contains(err.Error(), "start_mono_ns") {
		t.Errorf("err = %v, want one naming start_mono_ns", err)
	}
}
