package aeron

import (
	"time"

	"github.com/goblin-kv/goblin/idle"
)

// IdleStrategy decides what a polling loop does after a duty cycle that
// did workCount units of work: a positive count means "busy, go again", zero
// means "idle". It is package idle's one idle interface, idle.Idler, under
// the name Agrona and the Aeron clients give it (Options.ConductorIdle, the
// media driver's idle properties). Implementations are not safe for
// concurrent use; give each loop its own.
type IdleStrategy = idle.Idler

// SpinIdle never gives up the CPU (Agrona's BusySpinIdleStrategy; package
// idle's Spinner). The goroutine using it occupies a whole core; lock it to
// its OS thread (runtime.LockOSThread) for stable latency.
type SpinIdle = idle.Spinner

// YieldIdle yields to the Go scheduler when idle (Agrona's
// YieldingIdleStrategy; package idle's Yielder, whose zero value calls
// runtime.Gosched).
type YieldIdle = idle.Yielder

// SleepIdle sleeps for Period when idle (1 ms if Period is zero), as
// Agrona's SleepingIdleStrategy does.
type SleepIdle struct{ Period time.Duration }

// Idle sleeps when workCount is zero.
func (s SleepIdle) Idle(workCount int) idle.Phase {
	if workCount > 0 {
		return idle.Busy
	}
	time.Sleep(s.period())
	return idle.Parked
}

// period is the sleep, Period or 1 ms.
func (s SleepIdle) period() time.Duration {
	if s.Period <= 0 {
		return time.Millisecond
	}
	return s.Period
}

// BackoffIdle spins, then yields, then sleeps from MinPark, doubling up to
// MaxPark, and starts over as soon as there is work: low latency while
// busy, little CPU while idle. It is package idle's one backoff
// (idle.Backoff's Step, as idle.Backoffer runs it); its fields keep the
// names of Agrona's BackoffIdleStrategy, which the media driver's idle
// properties set. Zero fields take idle's defaults (idle.DefaultParams),
// those in parentheses, and so do parks of 0 or less: 4096 spins, 4096
// yields, then sleeps of a constant 20 µs (a waiting client's, not
// Agrona's 1 µs to 1 ms: set the parks for a thread that may idle long).
type BackoffIdle struct {
	MaxSpins  int           // spins before yielding (idle.DefaultSpins)
	MaxYields int           // yields before sleeping (idle.DefaultYields)
	MinPark   time.Duration // first sleep (idle.DefaultMinPark)
	MaxPark   time.Duration // longest sleep (idle.DefaultMaxPark)
	// Park sleeps (nil: time.Sleep). A goroutine locked to its OS thread
	// parks more cheaply with ThreadSleep, which keeps the Go scheduler
	// out of every wake-up.
	Park func(time.Duration)

	idle int // idle calls since the last work
}

// Idle advances the back-off when idle and resets it on work.
func (b *BackoffIdle) Idle(workCount int) idle.Phase {
	if workCount > 0 {
		b.idle = 0
		return idle.Busy
	}
	b.idle++
	return idle.Backoff.Step(b.idle, b.Params(), nil, b.Park)
}

// Params are b's parameters as package idle's, its zero fields filled
// with idle.DefaultParams. A park of 0 or less counts as zero: the
// default, not a park of no time, which would poll in a tight loop.
func (b *BackoffIdle) Params() idle.Params {
	p := idle.Params{Spins: b.MaxSpins, Yields: b.MaxYields, MinPark: max(b.MinPark, 0), MaxPark: max(b.MaxPark, 0)}
	return p.WithDefaults(idle.DefaultParams)
}
