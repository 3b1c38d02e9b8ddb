package idle

import (
	"fmt"
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

// Pause sleeps only once Backoff is past its spins and yields.
func TestPause(t *testing.T) {
	const park = 500 * time.Millisecond
	slept := func(s Strategy, i int) bool {
		start := time.Now()
		s.Pause(i, Params{Spins: 10, Yields: 10, MinPark: park, MaxPark: park})
		return time.Since(start) >= park
	}
	for _, c := range []struct {
		s     Strategy
		i     int
		sleep bool
	}{{Spin, 1000, false}, {Yield, 1000, false}, {Backoff, 5, false}, {Backoff, 15, false}, {Backoff, 20, false}, {Backoff, 21, true}, {Backoff, 1000, true}} {
		if got := slept(c.s, c.i); got != c.sleep {
			t.Errorf("%v.Pause(%d): slept %v, want %v", c.s, c.i, got, c.sleep)
		}
	}
}

// TestStep: the one backoff spins, yields, then parks with doubling parks
// capped at MaxPark; Yield never parks and Spin never yields.
func TestStep(t *testing.T) {
	p := Params{Spins: 3, Yields: 2, MinPark: time.Millisecond, MaxPark: 4 * time.Millisecond}
	var yields int
	var parks []time.Duration
	yield := func() { yields++ }
	park := func(d time.Duration) { parks = append(parks, d) }
	var got []Phase
	for i := 1; i <= 9; i++ {
		got = append(got, Backoff.Step(i, p, yield, park))
	}
	want := []Phase{Spun, Spun, Spun, Yielded, Yielded, Parked, Parked, Parked, Parked}
	if fmt.Sprint(got) != fmt.Sprint(want) || yields != 2 {
		t.Fatalf("phases %v (%d yields), want %v", got, yields, want)
	}
	if fmt.Sprint(parks) != "[1ms 2ms 4ms 4ms]" {
		t.Fatalf("parks %v, want doubling capped at MaxPark", parks)
	}
	if Yield.Step(1000, p, yield, park) != Yielded || Spin.Step(1000, p, yield, park) != Spun || len(parks) != 4 {
		t.Fatal("yield parked or spin did not spin")
	}
}

func TestParams(t *testing.T) {
	if got := (Params{}).WithDefaults(DefaultParams); got != DefaultParams {
		t.Fatalf("zero Params with defaults = %+v", got)
	}
	// A MinPark above the default MaxPark raises the defaulted MaxPark.
	if got := (Params{MinPark: time.Second}).WithDefaults(DefaultParams); got.MaxPark != time.Second || got.Validate() != nil {
		t.Fatalf("MinPark 1s with defaults = %+v", got)
	}
	for _, bad := range []Params{{Spins: -1, MinPark: 1, MaxPark: 1}, {MinPark: 2, MaxPark: 1}, {}} {
		if bad.Validate() == nil {
			t.Errorf("Validate(%+v) accepted", bad)
		}
	}
	if DefaultParams.Validate() != nil {
		t.Error("the defaults do not validate")
	}
}

// TestIdlers: the three strategies as Idlers go through the phases Step
// gives their strategy, yield and park the way they are told, and start
// over on work.
func TestIdlers(t *testing.T) {
	p := Params{Spins: 2, Yields: 1, MinPark: time.Microsecond, MaxPark: 2 * time.Microsecond}
	var yields int
	var parks []time.Duration
	idlers := map[string]Idler{
		"spin":         Spinner{},
		"yield":        Yielder{},
		"thread yield": Yielder{Thread: true},
		"backoff": &Backoffer{Params: p, Yield: func() { yields++ },
			Park: func(d time.Duration) { parks = append(parks, d) }},
	}
	want := map[string]string{
		"spin":         "[1 1 1 1 1 0 1]",
		"yield":        "[2 2 2 2 2 0 2]",
		"thread yield": "[2 2 2 2 2 0 2]",
		"backoff":      "[1 1 2 3 3 0 1]",
	}
	for name, s := range idlers {
		var got []Phase
		for _, work := range []int{0, 0, 0, 0, 0, 1, 0} {
			got = append(got, s.Idle(work))
		}
		if fmt.Sprint(got) != want[name] {
			t.Errorf("%s: phases %v, want %s", name, got, want[name])
		}
	}
	if yields != 1 || fmt.Sprint(parks) != "[1µs 2µs]" {
		t.Errorf("backoff yielded %d times (want 1) and parked %v (want [1µs 2µs])", yields, parks)
	}
}

// A Backoffer with ParkAtOnce parks on its first idle cycle, the parks
// growing as usual; cleared, it spins and yields first again.
func TestBackofferParkAtOnce(t *testing.T) {
	var parks []time.Duration
	yields := 0
	b := &Backoffer{Params: Params{Spins: 3, Yields: 2, MinPark: time.Microsecond, MaxPark: 4 * time.Microsecond},
		Yield: func() { yields++ }, Park: func(d time.Duration) { parks = append(parks, d) }, ParkAtOnce: true}
	var got []Phase
	for _, work := range []int{0, 0, 0, 0, 1, 0} {
		got = append(got, b.Idle(work))
	}
	if fmt.Sprint(got) != "[3 3 3 3 0 3]" || yields != 0 || fmt.Sprint(parks) != "[1µs 2µs 4µs 4µs 1µs]" {
		t.Fatalf("ParkAtOnce: phases %v, %d yields, parks %v; want [3 3 3 3 0 3], 0, [1µs 2µs 4µs 4µs 1µs]", got, yields, parks)
	}
	b.ParkAtOnce = false
	if p := b.Idle(1); p != Busy {
		t.Fatalf("work: %v", p)
	}
	if p := b.Idle(0); p != Spun {
		t.Fatalf("ParkAtOnce off: the first idle cycle %v, want Spun", p)
	}
}
