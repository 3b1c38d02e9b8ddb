package idle

import (
	"fmt"
	"testing"
	"time"
)

// TestDozer: a Dozer spins, yields and parks as its Backoffer does until
// the parks reach MaxPark, then each idle cycle parks twice as long as the
// one before up to Doze; work starts it over; with Doze at most MaxPark
// it is the Backoffer; ParkAtOnce applies as to a Backoffer.
func TestDozer(t *testing.T) {
	var parks []time.Duration
	yields := 0
	z := &Dozer{Backoffer: Backoffer{Params: Params{Spins: 2, Yields: 1, MinPark: time.Microsecond, MaxPark: 4 * time.Microsecond},
		Yield: func() { yields++ }, Park: func(d time.Duration) { parks = append(parks, d) }}, Doze: 20 * time.Microsecond}
	var got []Phase
	for _, work := range []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0} {
		got = append(got, z.Idle(work))
	}
	const want = "[1 1 2 3 3 3 3 3 3 3 0 1 1 2 3 3]"
	const wantParks = "[1µs 2µs 4µs 8µs 16µs 20µs 20µs 1µs 2µs]"
	if fmt.Sprint(got) != want || yields != 2 || fmt.Sprint(parks) != wantParks {
		t.Fatalf("phases %v, %d yields, parks %v; want %s, 2, %s", got, yields, parks, want, wantParks)
	}

	parks = parks[:0]
	z.Idle(1)
	z.Doze = z.MaxPark // no doze: the Backoffer's parks
	for range 8 {
		z.Idle(0)
	}
	if fmt.Sprint(parks) != "[1µs 2µs 4µs 4µs 4µs]" {
		t.Fatalf("Doze = MaxPark: parks %v, want the Backoffer's [1µs 2µs 4µs 4µs 4µs]", parks)
	}

	parks = parks[:0]
	z.Doze = 20 * time.Microsecond
	z.Idle(1)
	z.ParkAtOnce = true
	for range 5 {
		if p := z.Idle(0); p != Parked {
			t.Fatalf("ParkAtOnce: idle cycle %v, want Parked", p)
		}
	}
	if fmt.Sprint(parks) != "[1µs 2µs 4µs 8µs 16µs]" {
		t.Fatalf("ParkAtOnce: parks %v, want [1µs 2µs 4µs 8µs 16µs]", parks)
	}
}

// TestDozerAllocs: an idle cycle of a Dozer, dozing or not, allocates
// nothing (the server's loop runs one per idle cycle).
func TestDozerAllocs(t *testing.T) {
	z := &Dozer{Backoffer: Backoffer{Params: Params{Spins: 2, Yields: 1, MinPark: time.Microsecond, MaxPark: 2 * time.Microsecond},
		Yield: func() {}, Park: func(time.Duration) {}}, Doze: time.Millisecond}
	i := 0
	if a := testing.AllocsPerRun(1000, func() {
		i++
		z.Idle(i % 50 / 49) // work every 50 cycles: all the phases
	}); a != 0 {
		t.Fatalf("%v allocations per idle cycle, want 0", a)
	}
}
