// Package idle is goblin's one vocabulary for what a thread does when a
// poll finds nothing to do: spin (poll again at once, one whole core),
// yield (give the processor to whoever else wants it between polls) or
// back off (spin a while, yield as long again, then park, sleeping between
// polls). The server's store loop (--idle), the ring and Aeron clients
// (wait= in a target) and goblin's in-process Aeron media driver take the
// same names, and all default to Backoff, so that nothing burns a core
// unless asked to. docs/idle.md describes the choice once for all of
// them.
package idle

import (
	"fmt"
	"runtime"
	"time"
)

// Strategy is one of the three ways to wait.
type Strategy uint8

const (
	// Backoff spins, then yields, then parks: cheap on CPU, it adds up to
	// one park of latency to waits that outlast the spin and the yields.
	// The zero value, and the default everywhere.
	Backoff Strategy = iota
	// Yield spins, then gives the processor up between polls (the core
	// stays busy when nothing else wants it).
	Yield
	// Spin polls again at once: the lowest latency, and one whole core
	// while waiting. Lock such a thread to its OS thread.
	Spin
)

// Default is the strategy of every zero configuration.
const Default = Backoff

// Parse turns a name into a Strategy: "spin", "yield", "backoff", or
// "park", the clients' older spelling of backoff, which keeps working.
// "" is Default.
func Parse(s string) (Strategy, error) {
	switch s {
	case "spin":
		return Spin, nil
	case "yield":
		return Yield, nil
	case "backoff", "park", "":
		return Backoff, nil
	}
	return 0, fmt.Errorf("idle strategy %q: want spin, yield or backoff", s)
}

// String is the strategy's name, as Parse takes it.
func (s Strategy) String() string {
	switch s {
	case Spin:
		return "spin"
	case Yield:
		return "yield"
	case Backoff:
		return "backoff"
	}
	return fmt.Sprintf("idle(%d)", uint8(s))
}

// Client-side defaults: how a client of the ring or Aeron transport waits
// for a reply (see Pause).
const (
	// DefaultSpinLimit is how many empty polls Yield and Backoff spin
	// before they yield, and Backoff yields before it parks.
	DefaultSpinLimit = 1 << 12
	// DefaultParkTime is how long Backoff sleeps between polls once it
	// parks.
	DefaultParkTime = 20 * time.Microsecond
)

// Pause is what a waiting client does after its i-th empty poll (i counts
// from 1 and restarts at each wait): nothing while it spins, then
// runtime.Gosched, then (Backoff) a sleep of park between polls.
// The spinning case is inlined into the caller's poll loop.
func (s Strategy) Pause(i, spinLimit int, park time.Duration) {
	if s == Spin || i < spinLimit {
		return
	}
	s.giveUp(i, spinLimit, park)
}

// giveUp yields, or parks once Backoff has yielded spinLimit times.
func (s Strategy) giveUp(i, spinLimit int, park time.Duration) {
	if s == Yield || i < 2*spinLimit {
		runtime.Gosched()
		return
	}
	time.Sleep(park)
}
