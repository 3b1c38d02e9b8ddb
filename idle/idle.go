// Package idle is goblin's one vocabulary for what a thread does when a
// poll finds nothing to do: spin (poll again at once, one whole core),
// yield (give the processor to whoever else wants it between polls) or
// back off (spin a while, yield as long again, then park, sleeping between
// polls). The server's store loop (--idle), the ring and Aeron clients
// (wait= in a target) and goblin's in-process Aeron media driver take the
// same names, and all default to Backoff, so that nothing burns a core
// unless asked to. Backoff is one function (Strategy.Step) with one set of
// parameters (Params, DefaultParams) everywhere, and a thread that idles
// between duty cycles does so through one interface, Idler (Spinner,
// Yielder and Backoffer are the three strategies as Idlers).
// docs/idle.md describes the choice once for all of them, and the two
// sites whose parameters differ on purpose (the server's loop, the media
// driver) and why.
package idle

import (
	"errors"
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

// Params are backoff's parameters, named the same wherever a thread backs
// off: the server's loop (server.Options.Backoff), the ring and Aeron
// clients (DialOptions.Backoff) and aeron.BackoffIdle. A zero field means
// its default (WithDefaults).
type Params struct {
	// Spins is how many idle polls in a row spin (poll again at once)
	// before Yield and Backoff start yielding.
	Spins int
	// Yields is how many idle polls after those Backoff yields before it
	// parks.
	Yields int
	// MinPark is Backoff's first park; each further one doubles, up to
	// MaxPark.
	MinPark time.Duration
	MaxPark time.Duration
}

// The default parameters, the same for every thread that waits unless its
// own documentation says why not (docs/idle.md): a waiting client spins
// 4096 empty polls, yields as many, then sleeps 20 µs between polls. The
// park is short because nothing wakes a sleeping client early: each park
// is latency added to the reply it waits for.
const (
	DefaultSpins   = 1 << 12
	DefaultYields  = 1 << 12
	DefaultMinPark = 20 * time.Microsecond
	DefaultMaxPark = DefaultMinPark
)

// DefaultParams are the defaults as Params.
var DefaultParams = Params{Spins: DefaultSpins, Yields: DefaultYields, MinPark: DefaultMinPark, MaxPark: DefaultMaxPark}

// WithDefaults returns p with each zero field set from def; a zero MaxPark
// is at least MinPark.
func (p Params) WithDefaults(def Params) Params {
	if p.Spins == 0 {
		p.Spins = def.Spins
	}
	if p.Yields == 0 {
		p.Yields = def.Yields
	}
	if p.MinPark == 0 {
		p.MinPark = def.MinPark
	}
	if p.MaxPark == 0 {
		p.MaxPark = max(def.MaxPark, p.MinPark)
	}
	return p
}

// ErrParams is wrapped by Validate's error: backoff parameters Step cannot
// follow.
var ErrParams = errors.New("idle: bad backoff parameters")

// Validate reports parameters Step cannot follow: negative counts, or
// parks that are not 0 < MinPark <= MaxPark (a park of 0 or less would
// poll in a tight loop where it should sleep). Validate what WithDefaults
// returns: a zero field is valid there, standing for its default.
func (p Params) Validate() error {
	if p.Spins < 0 || p.Yields < 0 || p.MinPark <= 0 || p.MaxPark < p.MinPark {
		return fmt.Errorf("%w: backoff wants non-negative spins and yields and 0 < min park <= max park, not %+v", ErrParams, p)
	}
	return nil
}

// Phase is what a thread did with one poll.
type Phase uint8

// The phases, in the order a backoff goes through them.
const (
	Busy    Phase = iota // the poll found work: go again at once
	Spun                 // idle, polled again at once
	Yielded              // idle, gave the processor to another thread
	Parked               // idle, slept (or blocked) for a bounded wait
)

// Pause is what a waiting client does after its i-th empty poll (i counts
// from 1 and restarts at each wait): Step with runtime.Gosched and
// time.Sleep. The spinning case is inlined into the caller's poll loop.
func (s Strategy) Pause(i int, p Params) {
	if s == Spin || i <= p.Spins {
		return
	}
	s.Step(i, p, nil, nil)
}

// Step is the one backoff: what strategy s does on the i-th idle poll in
// a row (from 1), with parameters p (defaults filled in). Spin always
// spins; Yield spins p.Spins polls, then yields; Backoff spins p.Spins,
// yields p.Yields, then parks, for MinPark first and twice as long each
// time after, up to MaxPark. yield and park are how this thread yields and
// parks (nil: runtime.Gosched and time.Sleep).
func (s Strategy) Step(i int, p Params, yield func(), park func(time.Duration)) Phase {
	switch {
	case s == Spin || i <= p.Spins:
		return Spun
	case s == Yield || i <= p.Spins+p.Yields:
		if yield == nil {
			runtime.Gosched()
		} else {
			yield()
		}
		return Yielded
	}
	d := p.MinPark
	for n := i - p.Spins - p.Yields - 1; n > 0 && d < p.MaxPark; n-- {
		d *= 2
	}
	d = min(d, p.MaxPark)
	if park == nil {
		time.Sleep(d)
	} else {
		park(d)
	}
	return Parked
}
