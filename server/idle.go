package server

import (
	"fmt"
	"time"

	"github.com/goblin-kv/goblin/idle"
)

// IdleStrategy decides what the loop thread does after a duty cycle, given
// how much work the cycle did. It is called from the loop goroutine only.
type IdleStrategy interface {
	// Idle is called once per duty cycle. work > 0 means the cycle did
	// something (and the strategy resets); work == 0 asks it to spin, yield
	// or park. It returns the phase it chose.
	Idle(work int) Phase
}

// Phase is what an IdleStrategy did with a cycle (package idle's phases).
type Phase = idle.Phase

// The phases, in the order a backoff goes through them.
const (
	Busy    = idle.Busy    // the cycle did work: go again at once
	Spun    = idle.Spun    // idle, polled again at once
	Yielded = idle.Yielded // idle, gave the CPU to another thread (sched_yield)
	Parked  = idle.Parked  // idle, blocked for a bounded wait
)

// Parker blocks the loop thread for up to d, returning early when a
// transport that can signal readiness has work. The loop provides it.
type Parker func(d time.Duration)

// Names of the idle strategies, as --idle spells them: package idle's,
// which the clients' wait= takes too ("park" is accepted for backoff).
// TestIdleNames checks they are the same.
const (
	IdleSpin    = "spin"
	IdleYield   = "yield"
	IdleBackoff = "backoff"
)

// DefaultIdle is the strategy a zero Options uses: idle.Default (backoff),
// so an idle server sleeps instead of burning a core.
const DefaultIdle = IdleBackoff

// DefaultBackoff is the loop's backoff: 200 idle cycles spinning, 20
// yielding, then parks of 1 ms. These differ from idle.DefaultParams on
// purpose. A parked loop blocks in epoll_wait on the listeners and the
// ring's doorbell, so a request wakes it at once and its park bounds only
// how late store maintenance and metrics run: a client's 20 µs park would
// wake an idle server 50,000 times a second for nothing. And a loop cycle
// polls every listener, so 200 cycles spin about as long (some 10 µs) as
// many more of a client's one-word polls; the figures of the latency
// matrix were measured with these.
var DefaultBackoff = idle.Params{Spins: 200, Yields: 20, MinPark: time.Millisecond, MaxPark: time.Millisecond}

// Spin never gives the CPU up: the loop polls continuously, for the lowest
// latency at the cost of one whole core, busy or not.
type Spin struct{}

// Idle implements IdleStrategy.
func (Spin) Idle(work int) Phase {
	if work > 0 {
		return Busy
	}
	return Spun
}

// Yield calls sched_yield on every idle cycle: the core stays nearly
// as busy as with Spin, but other runnable threads get it first.
type Yield struct{}

// Idle implements IdleStrategy.
func (Yield) Idle(work int) Phase {
	if work > 0 {
		return Busy
	}
	idle.ThreadYield()
	return Yielded
}

// Backoff spins for Spins idle cycles, then yields (sched_yield) for
// Yields, then parks, starting at MinPark and doubling up to MaxPark (package
// idle's one backoff, idle.Strategy.Step). Any cycle with work starts over.
type Backoff struct {
	idle.Params
	// Park blocks for a bounded wait; nil sleeps.
	Park Parker

	idle int // idle cycles since the last work
}

// Idle implements IdleStrategy.
func (b *Backoff) Idle(work int) Phase {
	if work > 0 {
		b.idle = 0
		return Busy
	}
	b.idle++
	return idle.Backoff.Step(b.idle, b.Params, idle.ThreadYield, b.Park)
}

// NewIdleStrategy returns the strategy named name ("" means DefaultIdle)
// with the given park function for backoff.
func NewIdleStrategy(name string, o *Options, park Parker) (IdleStrategy, error) {
	s, err := idle.Parse(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	switch s {
	case idle.Spin:
		return Spin{}, nil
	case idle.Yield:
		return Yield{}, nil
	}
	return &Backoff{Params: o.Backoff.WithDefaults(DefaultBackoff), Park: park}, nil
}
