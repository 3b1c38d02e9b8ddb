package aeron

import (
	"runtime"
	"time"
)

// IdleStrategy decides what a polling loop does after a duty cycle that
// did workCount units of work: a positive count means "busy, go again", zero
// means "idle". Implementations are not safe for concurrent use; give each
// loop its own.
type IdleStrategy interface {
	Idle(workCount int)
}

// SpinIdle never gives up the CPU. The goroutine using it occupies a whole
// core; lock it to its OS thread (runtime.LockOSThread) for stable latency.
type SpinIdle struct{}

// Idle returns at once.
func (SpinIdle) Idle(int) {}

// YieldIdle yields to the Go scheduler when idle.
type YieldIdle struct{}

// Idle calls runtime.Gosched when workCount is zero.
func (YieldIdle) Idle(workCount int) {
	if workCount <= 0 {
		runtime.Gosched()
	}
}

// SleepIdle sleeps for Period when idle (1 ms if Period is zero).
type SleepIdle struct{ Period time.Duration }

// Idle sleeps when workCount is zero.
func (s SleepIdle) Idle(workCount int) {
	if workCount > 0 {
		return
	}
	d := s.Period
	if d <= 0 {
		d = time.Millisecond
	}
	time.Sleep(d)
}

// BackoffIdle spins, then yields, then sleeps with an exponentially growing
// period, and starts over as soon as there is work: low latency while busy,
// little CPU while idle. Zero fields take the defaults in parentheses.
type BackoffIdle struct {
	MaxSpins  int           // spins before yielding (10)
	MaxYields int           // yields before sleeping (5)
	MinPark   time.Duration // first sleep (1 µs)
	MaxPark   time.Duration // longest sleep (1 ms)
	// Park sleeps (nil: time.Sleep). A goroutine locked to its OS thread
	// parks more cheaply with ThreadSleep, which keeps the Go scheduler
	// out of every wake-up.
	Park func(time.Duration)

	spins, yields int
	park          time.Duration
}

// Idle advances the back-off state when idle and resets it on work.
func (b *BackoffIdle) Idle(workCount int) {
	if workCount > 0 {
		b.spins, b.yields, b.park = 0, 0, 0
		return
	}
	maxSpins, maxYields := b.MaxSpins, b.MaxYields
	if maxSpins == 0 {
		maxSpins = 10
	}
	if maxYields == 0 {
		maxYields = 5
	}
	switch {
	case b.spins < maxSpins:
		b.spins++
	case b.yields < maxYields:
		b.yields++
		runtime.Gosched()
	default:
		minPark, maxPark := b.MinPark, b.MaxPark
		if minPark <= 0 {
			minPark = time.Microsecond
		}
		if maxPark <= 0 {
			maxPark = time.Millisecond
		}
		if b.park < minPark {
			b.park = minPark
		}
		if b.Park != nil {
			b.Park(b.park)
		} else {
			time.Sleep(b.park)
		}
		b.park = min(2*b.park, maxPark)
	}
}
