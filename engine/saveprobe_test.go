package engine

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/proto"
)

// TestBgsaveReportsLoopMeasurement: INFO persistence reports what the last
// BGSAVE did to the loop: the cycles it took (one slice each), a longest
// cycle no shorter than the longest slice (a cycle holds its slice), a
// histogram whose buckets add up to the cycles, the loop thread's CPU, and
// no overflow buffer for a save with no writes.
func TestBgsaveReportsLoopMeasurement(t *testing.T) {
	// The probe reads the thread CPU clock of the goroutine that ticks
	// the engine, which in a server is the loop's, locked to its thread:
	// lock this one too, or a move to another thread between two readings
	// subtracts one thread's CPU time from another's.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	e, _ := newEngine(t, Options{Persistence: Persistence{Dir: t.TempDir(), SaveSlice: time.Microsecond}})
	s := NewSession(proto.RESP, nil)
	for i := range 20000 {
		do(t, e, s, "SET", fmt.Sprintf("key:%06d", i), strconv.Itoa(i))
	}
	if got := infoField(t, e, s, "goblin_bgsave_cycles"); got != "0" {
		t.Errorf("goblin_bgsave_cycles = %s before any save", got)
	}
	if got := do(t, e, s, "BGSAVE"); got != "+Background saving started" {
		t.Fatalf("BGSAVE: %s", got)
	}
	ticks := 0
	var lastTick time.Duration // the last Tick, which holds the last slice
	for e.Saving() {
		t0 := time.Now()
		e.Tick(1)
		lastTick = time.Since(t0)
		ticks++
		if ticks > 1_000_000 {
			t.Fatal("the background save never finished")
		}
	}
	num := func(name string) int64 {
		v, err := strconv.ParseInt(infoField(t, e, s, name), 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return v
	}
	if got := infoField(t, e, s, "rdb_last_bgsave_status"); got != "ok" {
		t.Fatalf("rdb_last_bgsave_status = %s", got)
	}
	cycles := num("goblin_bgsave_cycles")
	if cycles < 10 || cycles >= int64(ticks) {
		t.Errorf("goblin_bgsave_cycles = %d for a save of 20,000 keys in 1 µs slices over %d ticks", cycles, ticks)
	}
	// Every slice but the last lies within a cycle (from its start to
	// the next slice's). The last has no cycle after it: when it is the
	// longest (a stall in a slice after the walk lets the writer finish,
	// so such a slice is the last; 2 of 20 runs beside two busy loops),
	// it lies within the last Tick, which the test timed (1 µs for the
	// two clocks' rounding).
	if c, sl := num("goblin_bgsave_max_cycle_us"), num("goblin_bgsave_max_slice_us"); c < sl && sl > lastTick.Microseconds()+1 {
		t.Errorf("the longest slice %d µs is longer than the longest cycle %d µs and than the last Tick %v", sl, c, lastTick)
	}
	if num("goblin_bgsave_max_cycle_cpu_us") < 0 {
		t.Error("negative loop CPU time")
	}
	// The cycle's CPU time is split at the slice's end: the part after it
	// lies within a cycle (1 µs of slack for the rounding; the last slice
	// has no cycle after it, so its own part is not bounded so).
	if c, sl, rest := num("goblin_bgsave_max_cycle_cpu_us"), num("goblin_bgsave_max_slice_cpu_us"), num("goblin_bgsave_max_rest_cpu_us"); sl <= 0 || rest < 0 || rest > c+1 {
		t.Errorf("slice CPU %d µs and rest CPU %d µs against a longest cycle of %d µs of CPU", sl, rest, c)
	}
	for _, field := range []string{"goblin_bgsave_cycle_hist", "goblin_bgsave_cycle_cpu_hist"} {
		var sum int64
		hist := infoField(t, e, s, field)
		for _, kv := range strings.Split(hist, ",") {
			_, v, _ := strings.Cut(kv, "=")
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("%s %q: %v", field, hist, err)
			}
			sum += n
		}
		if sum != cycles || !strings.HasPrefix(hist, "le16us=") || !strings.Contains(hist, ",more=") {
			t.Errorf("%s %q adds up to %d, want the %d cycles", field, hist, sum, cycles)
		}
	}
	// The longest cycles in CPU time, most first: the first is the longest
	// cycle, each holds its slice, and each began within the save.
	top := infoField(t, e, s, "goblin_bgsave_longest_cycles")
	recs := strings.Split(top, ",")
	if len(recs) != 4 {
		t.Errorf("goblin_bgsave_longest_cycles %q: want 4 of %d cycles", top, cycles)
	}
	prev := int64(-1)
	for i, r := range recs {
		var cpu, slice, wall, at int64
		if _, err := fmt.Sscanf(r, "%d/%d/%d@%d", &cpu, &slice, &wall, &at); err != nil {
			t.Fatalf("goblin_bgsave_longest_cycles %q: %v", top, err)
		}
		if i == 0 && cpu != num("goblin_bgsave_max_cycle_cpu_us") || prev >= 0 && cpu > prev || slice > cpu || at <= 0 {
			t.Errorf("goblin_bgsave_longest_cycles %q: entry %d against a longest cycle of %d µs of CPU", top, i, num("goblin_bgsave_max_cycle_cpu_us"))
		}
		prev = cpu
	}
	if b, end := num("goblin_bgsave_begin_cpu_us"), num("goblin_bgsave_end_cpu_us"); b < 0 || end < 0 {
		t.Errorf("begin %d µs, end %d µs of CPU", b, end)
	}
	if got := num("goblin_bgsave_overflow_buffers"); got != 0 {
		t.Errorf("goblin_bgsave_overflow_buffers = %d for a save with no writes", got)
	}
}

// TestSaveRest: while a background save runs, the loop is asked to rest
// after a cycle that served requests (bgsave-loop-rest requests), after
// every slice (always, the default) or never (no), and never once the
// save is over; INFO counts the rests.
func TestSaveRest(t *testing.T) {
	e, _ := newEngine(t, Options{Persistence: Persistence{Dir: t.TempDir(), SaveSlice: time.Microsecond}})
	s := NewSession(proto.RESP, nil)
	for i := range 20000 {
		do(t, e, s, "SET", fmt.Sprintf("key:%06d", i), strconv.Itoa(i))
	}
	if d := e.SaveRest(true); d != 0 {
		t.Errorf("SaveRest(served) = %v with no save running", d)
	}
	for _, c := range []struct {
		mode         string
		served, idle bool // a rest after a cycle that served, after one that did not
	}{{"requests", true, false}, {"always", true, true}, {"no", false, false}} {
		do(t, e, s, "CONFIG", "SET", "bgsave-loop-rest", c.mode)
		if got := do(t, e, s, "BGSAVE"); got != "+Background saving started" {
			t.Fatalf("BGSAVE: %s", got)
		}
		e.Tick(1)
		if !e.Saving() {
			t.Fatal("a save of 20,000 keys in 1 µs slices ended in one tick")
		}
		if got := e.SaveRest(true) > 0; got != c.served {
			t.Errorf("bgsave-loop-rest %s: rest after a cycle that served requests: %v, want %v", c.mode, got, c.served)
		}
		if got := e.SaveRest(false) > 0; got != c.idle {
			t.Errorf("bgsave-loop-rest %s: rest after a cycle that served none: %v, want %v", c.mode, got, c.idle)
		}
		// INFO counts the rests the loop took (SaveRested), not those it
		// was asked for: a loop may decline one (server.Loop.Rest).
		e.SaveRested()
		e.SaveRested()
		rests := 2
		for e.Saving() {
			e.Tick(1)
		}
		if d := e.SaveRest(true); d != 0 {
			t.Errorf("bgsave-loop-rest %s: SaveRest(served) = %v after the save", c.mode, d)
		}
		if got, want := infoField(t, e, s, "goblin_bgsave_loop_rests"), strconv.Itoa(rests); got != want {
			t.Errorf("bgsave-loop-rest %s: goblin_bgsave_loop_rests = %s, want %s", c.mode, got, want)
		}
	}
}

// TestSaveRestEndsWithTheWalk: in bgsave-loop-rest requests mode, a cycle
// that served requests rests only while the walk has keys left; once every
// key is encoded and only the writer's tail remains (the save still runs),
// the loop does not compete with the writer and does not rest.
func TestSaveRestEndsWithTheWalk(t *testing.T) {
	// A 100 ms slice: on a loaded machine too, the first encodes all 100 keys.
	e, _ := newEngine(t, Options{Persistence: Persistence{Dir: t.TempDir(), SaveSlice: 100 * time.Millisecond}})
	s := NewSession(proto.RESP, nil)
	do(t, e, s, "CONFIG", "SET", "bgsave-loop-rest", "requests")
	for i := range 100 {
		do(t, e, s, "SET", fmt.Sprintf("key:%03d", i), strconv.Itoa(i))
	}
	tail := 0 // saves seen running after their walk
	for try := 0; try < 20 && tail < 3; try++ {
		if got := do(t, e, s, "BGSAVE"); got != "+Background saving started" {
			t.Fatalf("BGSAVE: %s", got)
		}
		// The first Tick encodes every key, and the writer is rarely done by the Tick's end (it writes,
		// syncs and renames the file).
		e.Tick(1)
		if e.Saving() {
			tail++
			if d := e.SaveRest(true); d != 0 {
				t.Errorf("SaveRest(served) = %v after the walk encoded every key", d)
			}
		}
		finishSave(t, e)
	}
	if tail == 0 {
		t.Fatal("no save of 100 keys was still running after its first slice: the writer's tail was never seen")
	}
}
