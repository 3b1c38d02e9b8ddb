package server

import (
	"fmt"
	"time"

	"github.com/goblin-kv/goblin/idle"
)

// The loop's idle strategy is an idle.Idler (package idle's one idle
// interface): idle.Spinner, idle.Yielder or idle.Backoffer, as
// NewIdleStrategy makes them for the loop thread.

// Parker blocks the loop thread for up to d, returning early when a
// transport that can signal readiness has work. The loop provides it.
type Parker func(d time.Duration)

// Names of the idle strategies, as --idle spells them: package idle's,
// which the clients' wait= takes too ("park" is accepted for backoff),
// and doze, the loop's own. TestIdleNames checks they are the same.
const (
	IdleSpin    = "spin"
	IdleYield   = "yield"
	IdleBackoff = "backoff"
	// IdleDoze is backoff that dozes off at rest: in a loop of socket
	// transports alone, once the backoff's parks have reached their
	// longest (DefaultBackoff's 1 ms), the parks double up to DefaultDoze,
	// each ending at the loop's next timer (the engine's, the cluster
	// bus's cron) or as soon as a socket has work. A busy server backs
	// off as with backoff; a server idle for seconds wakes about ten
	// times a second instead of a thousand. Beside a ring or Aeron
	// transport it is backoff. idle.Dozer.
	IdleDoze = "doze"
)

// DefaultIdle is the strategy a zero Options uses: doze, so an idle
// server sleeps instead of burning a core, and wakes only for its timers.
// The clients' default stays idle.Default (backoff): nothing wakes a
// client's park early.
const DefaultIdle = IdleDoze

// DefaultDoze is doze's longest park: Redis's default hz (10), the period
// of the loop's slowest-resolution periodic work (the cluster bus's cron,
// the idle-client scan, the save points' check, the ops/sec sample).
const DefaultDoze = 100 * time.Millisecond

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

// NewIdleStrategy returns the loop's idle strategy named name ("" means
// DefaultIdle): spin never gives the CPU up (the lowest latency, one whole
// core, busy or not); yield calls sched_yield on every idle cycle; backoff
// spins, yields (sched_yield), then parks with park (nil sleeps), with
// o.Backoff's parameters over DefaultBackoff.
//
// doze is backoff that dozes (idle.Dozer, up to DefaultDoze); NewLoop
// keeps its parks at the backoff's beside a transport that is not a
// socket.
func NewIdleStrategy(name string, o *Options, park Parker) (idle.Idler, error) {
	if name == "" {
		name = DefaultIdle
	}
	if name == IdleDoze {
		return &idle.Dozer{Backoffer: *newBackoffer(o, park), Doze: DefaultDoze}, nil
	}
	s, err := idle.Parse(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	switch s {
	case idle.Spin:
		return idle.Spinner{}, nil
	case idle.Yield:
		return idle.Yielder{Thread: true}, nil
	}
	return newBackoffer(o, park), nil
}

func newBackoffer(o *Options, park Parker) *idle.Backoffer {
	return &idle.Backoffer{Params: o.Backoff.WithDefaults(DefaultBackoff), Yield: idle.ThreadYield, Park: park}
}
