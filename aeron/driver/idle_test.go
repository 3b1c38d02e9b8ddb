package driver

import (
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
)

// parkRecorder is a threadBackoff over a manual driver whose parks are
// recorded and move the driver's cycle clock instead of sleeping.
type parkRecorder struct {
	m     *manualDriver
	b     *threadBackoff
	parks []time.Duration
}

func newParkRecorder(t *testing.T) *parkRecorder { return newParkRecorderWith(t, Options{}) }

// newParkRecorderWith is newParkRecorder on a driver with options o.
func newParkRecorderWith(t *testing.T, o Options) *parkRecorder {
	m := newManualDriver(t, o)
	r := &parkRecorder{m: m}
	r.b = newThreadBackoff(m.Driver, &aeron.BackoffIdle{MaxSpins: 2, MaxYields: 1, MinPark: time.Microsecond,
		MaxPark: time.Millisecond})
	r.b.park = func(dt time.Duration) {
		r.parks = append(r.parks, dt)
		m.Driver.nowNs += int64(dt)
	}
	return r
}

// idleFor runs empty cycles until the clock has moved by at least d and
// returns the parks they made.
func (r *parkRecorder) idleFor(d time.Duration) []time.Duration {
	r.parks = r.parks[:0]
	end := r.m.Driver.nowNs + int64(d)
	for r.m.Driver.nowNs < end {
		r.b.Idle(0)
	}
	return r.parks
}

// TestThreadBackoffQuietPark: after work the back-off parks from MinPark
// doubling to MaxPark; once nothing happened for quietAfterNs it doubles
// on to quietMaxPark and no further; work starts it over at MinPark; a
// timer due sooner cuts a quiet park (not below MaxPark); a driver with
// UDP images stays at MaxPark.
func TestThreadBackoffQuietPark(t *testing.T) {
	r := newParkRecorder(t)
	r.m.Driver.timerDeadlineNs = r.m.Driver.nowNs + int64(time.Hour)
	r.b.Idle(1)
	// Two spins and a yield park nothing.
	for range 3 {
		r.b.Idle(0)
	}
	if len(r.parks) != 0 {
		t.Fatalf("parked %v while spinning and yielding", r.parks)
	}
	parks := r.idleFor(time.Duration(quietAfterNs) - 10*time.Millisecond)
	want := []time.Duration{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}
	for i, w := range want {
		if parks[i] != w*time.Microsecond {
			t.Fatalf("park %d is %v, want %v (parks %v)", i, parks[i], w*time.Microsecond, parks[:len(want)])
		}
	}
	for _, p := range parks[len(want):] {
		if p != time.Millisecond {
			t.Fatalf("parked %v before the quiet spell, want MaxPark", p)
		}
	}
	parks = r.idleFor(time.Second)
	var longest time.Duration
	for _, p := range parks {
		longest = max(longest, p)
	}
	if longest != quietMaxPark {
		t.Fatalf("longest quiet park %v, want %v", longest, quietMaxPark)
	}
	if n := len(parks); parks[n-1] != quietMaxPark || parks[n-2] != quietMaxPark {
		t.Fatalf("quiet parks end %v, want %v", parks[n-2:], quietMaxPark)
	}

	// Work starts over.
	r.b.Idle(1)
	for range 3 {
		r.b.Idle(0)
	}
	if parks := r.idleFor(time.Microsecond); parks[0] != time.Microsecond {
		t.Fatalf("first park after work %v, want MinPark", parks[0])
	}

	// A timer due in 2.5 ms cuts the quiet park to it; one due sooner
	// does not cut it below MaxPark.
	r.idleFor(time.Duration(quietAfterNs) + 10*time.Millisecond)
	r.m.Driver.timerDeadlineNs = r.m.Driver.nowNs + int64(2500*time.Microsecond)
	if parks := r.idleFor(time.Nanosecond); parks[0] != 2500*time.Microsecond {
		t.Fatalf("quiet park %v with the timer due in 2.5 ms", parks[0])
	}
	r.m.Driver.timerDeadlineNs = r.m.Driver.nowNs + int64(100*time.Microsecond)
	if parks := r.idleFor(time.Nanosecond); parks[0] != time.Millisecond {
		t.Fatalf("quiet park %v with the timer due in 100 µs, want MaxPark", parks[0])
	}

	// A timer tick alone does not end the quiet spell; other work does.
	r.m.Driver.timerDeadlineNs = r.m.Driver.nowNs + int64(r.m.Driver.opts.TimerInterval)
	r.b.Idle(1)
	if parks := r.idleFor(time.Nanosecond); parks[0] != quietMaxPark {
		t.Fatalf("park %v after a timer tick, want the quiet park", parks[0])
	}
	r.b.Idle(2)
	for range 3 {
		r.b.Idle(0)
	}
	if parks := r.idleFor(time.Nanosecond); parks[0] != time.Microsecond {
		t.Fatalf("park %v after work, want MinPark", parks[0])
	}

	// An image (UDP) keeps the ordinary ceiling.
	r.m.Driver.timerDeadlineNs = r.m.Driver.nowNs + int64(time.Hour)
	r.m.Driver.images = []*publicationImage{{}}
	defer func() { r.m.Driver.images = nil }()
	for _, p := range r.idleFor(time.Second) {
		if p > time.Millisecond {
			t.Fatalf("parked %v with an image", p)
		}
	}
}

// TestThreadBackoffAllocatesNothing: the driver's idle strategy, spins,
// yields and parks, allocates nothing.
func TestThreadBackoffAllocatesNothing(t *testing.T) {
	r := newParkRecorder(t)
	n := 0
	r.b.park = func(dt time.Duration) { n++; r.m.Driver.nowNs += int64(dt) }
	i := 0
	allocs := testing.AllocsPerRun(5000, func() {
		i++
		r.b.Idle(i % 1000 / 999) // work once every 1000 cycles
	})
	if allocs != 0 || n == 0 {
		t.Fatalf("%v allocations per idle, %d parks", allocs, n)
	}
}

// TestThreadBackoffQuietWhileStreaming: a subscriber keeping up with a
// publisher moves the limit every eighth of a window, which no longer
// holds the back-off at MaxPark: the driver goes quiet (parks up to
// quietMaxPark) while the publisher keeps more than half its window.
func TestThreadBackoffQuietWhileStreaming(t *testing.T) {
	r := newParkRecorder(t)
	s := newIPCStream(r.m, "aeron:ipc?term-length=64m")
	window := s.p.termWindow
	const perMs = 128 << 10 // bytes a millisecond: a limit move every 32 ms
	start := r.m.Driver.nowNs
	pos, moves, lastLimit := int64(0), 0, s.limit()
	var longest time.Duration
	r.b.park = func(dt time.Duration) {
		longest = max(longest, dt)
		r.m.Driver.nowNs += int64(dt)
		// Whole frames (32-byte aligned), as a publisher appends them.
		pos = (r.m.Driver.nowNs - start) * perMs / int64(time.Millisecond) &^ 31
		s.produce(pos)
		s.consume(pos)
	}
	end := r.m.Driver.nowNs + int64(300*time.Millisecond)
	for r.m.Driver.nowNs < end {
		r.b.Idle(r.m.DoWork(r.m.Driver.nowNs))
		if l := s.limit(); l != lastLimit {
			moves++
			lastLimit = l
		}
		if s.limit()-pos < window/2 {
			t.Fatalf("at %d the limit %d is less than half a window ahead", pos, s.limit())
		}
	}
	if moves < 5 {
		t.Fatalf("the limit moved %d times in 300 ms of streaming", moves)
	}
	if longest != quietMaxPark {
		t.Fatalf("longest park %v while streaming far from the limit, want %v", longest, quietMaxPark)
	}
}

// TestThreadBackoffStaysReadyForASmallWindow: a slow publisher on a small
// window (256 KiB, a limit move every 4 ms) keeps the driver out of its
// quiet parks, as every limit move did before: a burst that fills the
// window waits at most a normal park (MaxPark), never a quiet one.
func TestThreadBackoffStaysReadyForASmallWindow(t *testing.T) {
	r := newParkRecorderWith(t, Options{IPCPublicationTermWindow: 256 << 10})
	s := newIPCStream(r.m, "aeron:ipc?term-length=64m")
	if s.p.termWindow != 256<<10 {
		t.Fatalf("window %d", s.p.termWindow)
	}
	const perMs = 8 << 10 // bytes a millisecond
	start := r.m.Driver.nowNs
	var longest time.Duration
	r.b.park = func(dt time.Duration) {
		longest = max(longest, dt)
		r.m.Driver.nowNs += int64(dt)
		pos := (r.m.Driver.nowNs - start) * perMs / int64(time.Millisecond) &^ 31
		s.produce(pos)
		s.consume(pos)
	}
	end := r.m.Driver.nowNs + int64(300*time.Millisecond)
	for r.m.Driver.nowNs < end {
		r.b.Idle(r.m.DoWork(r.m.Driver.nowNs))
	}
	if longest > time.Millisecond {
		t.Fatalf("longest park %v while a 256 KiB window streams, want at most the MaxPark 1ms", longest)
	}
}
