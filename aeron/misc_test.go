package aeron

import (
	"fmt"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/idle"
)

func TestIdleStrategies(t *testing.T) {
	for _, s := range []IdleStrategy{SpinIdle{}, YieldIdle{}, SleepIdle{Period: time.Microsecond}, &BackoffIdle{}} {
		for i := 0; i < 30; i++ {
			s.Idle(0)
		}
		s.Idle(1)
	}
	var parks []time.Duration
	b := &BackoffIdle{MaxSpins: 2, MaxYields: 1, MinPark: time.Microsecond, MaxPark: 4 * time.Microsecond,
		Park: func(d time.Duration) { parks = append(parks, d) }}
	for i := 0; i < 7; i++ {
		b.Idle(0)
	}
	if fmt.Sprint(parks) != "[1µs 2µs 4µs 4µs]" {
		t.Fatalf("back-off parks %v, want 2 spins, 1 yield, then doubling capped at 4µs", parks)
	}
	b.Idle(5)
	b.Idle(0)
	if len(parks) != 4 {
		t.Fatal("work did not reset the back-off")
	}
}

func TestThreadSleepSleepsAndDoesNotAllocate(t *testing.T) {
	start := time.Now()
	ThreadSleep(2 * time.Millisecond)
	if time.Since(start) < time.Millisecond {
		t.Fatalf("ThreadSleep(2ms) returned after %v", time.Since(start))
	}
	if n := testing.AllocsPerRun(100, func() { ThreadSleep(time.Microsecond) }); n != 0 {
		t.Fatalf("%v allocations per ThreadSleep", n)
	}
	var slept time.Duration
	b := &BackoffIdle{MaxSpins: 1, MaxYields: 1, Park: func(d time.Duration) { slept += d }}
	for range 4 {
		b.Idle(0)
	}
	if slept == 0 {
		t.Fatal("BackoffIdle did not park with its Park")
	}
}

// TestBackoffIdleNonPositiveParks: a BackoffIdle park of 0 or less takes
// idle's default, as it always has, rather than a park of no time, which
// would poll in a tight loop where the strategy should sleep.
func TestBackoffIdleNonPositiveParks(t *testing.T) {
	for _, f := range []BackoffIdle{{MinPark: -time.Microsecond}, {MaxPark: -time.Microsecond}, {MinPark: -time.Second, MaxPark: -time.Microsecond}} {
		var parks []time.Duration
		b := f
		b.MaxSpins, b.MaxYields = 1, 1
		b.Park = func(d time.Duration) { parks = append(parks, d) }
		for range 4 {
			b.Idle(0)
		}
		if fmt.Sprint(parks) != fmt.Sprint([]time.Duration{idle.DefaultMinPark, idle.DefaultMinPark}) {
			t.Errorf("MinPark %v MaxPark %v: parks %v, want idle's default twice", f.MinPark, f.MaxPark, parks)
		}
	}
}
