package monotime

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestNowFollowsTheMonotonicClock: Now never goes back, and a spell
// measured with it matches the same spell measured by time.Since, the
// reading it replaced (within a scheduler's slack).
func TestNowFollowsTheMonotonicClock(t *testing.T) {
	a, t0 := Now(), time.Now()
	time.Sleep(20 * time.Millisecond)
	b, d := Now(), time.Since(t0)
	if b < a {
		t.Fatalf("Now went back: %d then %d", a, b)
	}
	if diff := time.Duration(b-a) - d; diff < -5*time.Millisecond || diff > 5*time.Millisecond {
		t.Errorf("Now measured %v where time.Since measured %v", time.Duration(b-a), d)
	}
	if a < 0 {
		t.Errorf("Now is %d before the process's start", a)
	}
}

// TestTSCAgreesWithNanotime: on a machine whose clock source is the TSC
// (where Now reads it), spells measured by the TSC reading and by the
// runtime's clock agree within 0.1% plus scheduling slack, and Now never
// goes back across many readings.
func TestTSCAgreesWithNanotime(t *testing.T) {
	if src, err := os.ReadFile(clocksourcePath); !haveTSC || err != nil || strings.TrimSpace(string(src)) != "tsc" {
		t.Skip("the kernel's clock source is not the TSC here: Now reads the runtime's clock")
	}
	// init's calibration gives up when no reading pair was tight (the
	// scheduler interrupted every try); try again before testing the TSC.
	for i := 0; i < 5 && !useTSC; i++ {
		calibrate(1_000_000)
	}
	if !useTSC {
		t.Fatal("the clock source is the TSC but no calibration found a tight reading pair in 6 attempts")
	}
	for _, d := range []time.Duration{time.Millisecond, 30 * time.Millisecond} {
		a, n0 := tscNow(), nanotime()
		time.Sleep(d)
		b, n1 := tscNow(), nanotime()
		got, want := b-a, n1-n0
		if diff := got - want; diff < -want/1000-20_000 || diff > want/1000+20_000 {
			t.Errorf("over %v the TSC measured %d ns, the runtime's clock %d ns", d, got, want)
		}
	}
	if off := tscNow() - (nanotime() - start); off < -int64(time.Millisecond) || off > int64(time.Millisecond) {
		t.Errorf("TSC reading is %d ns from the runtime clock's", off)
	}
	last := Now()
	for i := 0; i < 100000; i++ {
		if n := Now(); n < last {
			t.Fatalf("Now went back: %d then %d", last, n)
		} else {
			last = n
		}
	}
}
