package aeron

import (
	"testing"
	"time"
)

func TestIdleStrategies(t *testing.T) {
	for _, s := range []IdleStrategy{SpinIdle{}, YieldIdle{}, SleepIdle{Period: time.Microsecond}, &BackoffIdle{}} {
		for i := 0; i < 30; i++ {
			s.Idle(0)
		}
		s.Idle(1)
	}
	b := &BackoffIdle{MaxSpins: 2, MaxYields: 1, MinPark: time.Microsecond, MaxPark: 4 * time.Microsecond}
	for i := 0; i < 10; i++ {
		b.Idle(0)
	}
	if b.park != 4*time.Microsecond {
		t.Fatalf("back-off park %v, want capped at 4µs", b.park)
	}
	b.Idle(5)
	if b.spins != 0 || b.park != 0 {
		t.Fatal("work did not reset the back-off")
	}
}
