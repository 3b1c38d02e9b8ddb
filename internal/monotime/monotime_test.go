package monotime

import (
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
