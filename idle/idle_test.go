package idle

import (
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]Strategy{"spin": Spin, "yield": Yield, "backoff": Backoff, "park": Backoff, "": Default} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
		if in != "" && in != "park" && got.String() != in {
			t.Errorf("%v.String() = %q, want %q", got, got.String(), in)
		}
	}
	if _, err := Parse("nap"); err == nil {
		t.Error("Parse(nap) accepted")
	}
	var zero Strategy
	if zero != Backoff || Default != Backoff {
		t.Error("the zero Strategy is not Backoff")
	}
}

// Pause sleeps only once Backoff is past twice the spin limit.
func TestPause(t *testing.T) {
	const park = 500 * time.Millisecond
	slept := func(s Strategy, i int) bool {
		start := time.Now()
		s.Pause(i, 10, park)
		return time.Since(start) >= park
	}
	for _, c := range []struct {
		s     Strategy
		i     int
		sleep bool
	}{{Spin, 1000, false}, {Yield, 1000, false}, {Backoff, 5, false}, {Backoff, 15, false}, {Backoff, 20, true}, {Backoff, 1000, true}} {
		if got := slept(c.s, c.i); got != c.sleep {
			t.Errorf("%v.Pause(%d): slept %v, want %v", c.s, c.i, got, c.sleep)
		}
	}
}
