package idle

import (
	"runtime"
	"time"
)

// Idler is the one idle-strategy interface: what a polling thread does
// after a duty cycle, given how much work the cycle did. The server's loop
// (server.NewIdleStrategy), the pure-Go Aeron client and media driver
// (aeron.IdleStrategy is this interface, under Agrona's name) all take it.
// An Idler keeps the state of one thread's wait: give each loop its own.
type Idler interface {
	// Idle is called once per duty cycle. work > 0 means the cycle did
	// something (and the strategy starts over); work <= 0 asks it to spin,
	// yield or park. It returns the phase it chose.
	Idle(work int) Phase
}

// Spinner is Spin as an Idler: it never gives the processor up, so the
// thread using it takes a whole core, busy or not. Lock such a thread to
// its OS thread (runtime.LockOSThread) for stable latency.
type Spinner struct{}

// Idle implements Idler.
func (Spinner) Idle(work int) Phase {
	if work > 0 {
		return Busy
	}
	return Spun
}

// Yielder gives the processor up on every idle cycle: the core stays
// nearly as busy as with Spinner, but other runnable threads get it first.
// Thread picks how: ThreadYield (sched_yield), for a goroutine locked to
// its OS thread such as the server's loop; else runtime.Gosched.
type Yielder struct{ Thread bool }

// Idle implements Idler.
func (y Yielder) Idle(work int) Phase {
	if work > 0 {
		return Busy
	}
	if y.Thread {
		ThreadYield()
	} else {
		runtime.Gosched()
	}
	return Yielded
}

// Backoffer is Backoff as an Idler: Backoff.Step over the idle cycles in a
// row, with Params (fill them with WithDefaults first), starting over on
// any cycle with work.
type Backoffer struct {
	Params
	// Yield is how the thread yields (nil: runtime.Gosched; ThreadYield
	// for a goroutine locked to its OS thread).
	Yield func()
	// Park blocks for a bounded wait (nil: time.Sleep).
	Park func(time.Duration)
	// ParkAtOnce skips the spins and the yields: every idle cycle parks,
	// the parks growing from MinPark as usual. For a thread whose Park
	// wakes as soon as work comes (the server's loop blocking in
	// epoll_wait on its sockets), where spinning only takes the CPU from
	// the thread that will bring the work. Its owner may change it
	// between calls of Idle.
	ParkAtOnce bool

	idle int // idle cycles since the last work
}

// Idle implements Idler.
func (b *Backoffer) Idle(work int) Phase {
	if work > 0 {
		b.idle = 0
		return Busy
	}
	b.idle++
	i := b.idle
	if b.ParkAtOnce {
		i += b.Spins + b.Yields
	}
	return Backoff.Step(i, b.Params, b.Yield, b.Park)
}
