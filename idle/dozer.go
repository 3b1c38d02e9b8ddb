package idle

import "time"

// Dozer is Backoffer for a thread whose park ends as soon as work comes
// (the server's loop blocking in epoll_wait on its sockets) and that may
// stay idle for long: once the backoff's parks have reached MaxPark, each
// further idle cycle parks twice as long as the one before, up to Doze.
// A thread idle for seconds then wakes a few times a second instead of
// once every MaxPark, and a busy thread backs off exactly as Backoffer
// does, since any work starts the Dozer over.
//
// A Dozer asks for parks longer than MaxPark, so its Park must end each
// one at the thread's next timer (the server's loop bounds a park by its
// deadlines and its engine's timers): the doze saves the wake-ups that
// find nothing to do, not those that run a timer.
type Dozer struct {
	Backoffer
	// Doze is the longest park; at most MaxPark, the Dozer is a Backoffer.
	Doze time.Duration

	dozing time.Duration // the last doze's length; 0: not dozing
}

// Idle implements Idler.
func (z *Dozer) Idle(work int) Phase {
	if work > 0 {
		z.dozing = 0
		return z.Backoffer.Idle(work)
	}
	if z.dozing == 0 || z.Doze <= z.MaxPark {
		ph := z.Backoffer.Idle(work)
		if ph == Parked && z.atMaxPark() {
			z.dozing = z.MaxPark
		}
		return ph
	}
	z.dozing = min(2*z.dozing, z.Doze)
	if z.Park == nil {
		time.Sleep(z.dozing)
	} else {
		z.Park(z.dozing)
	}
	return Parked
}

// atMaxPark reports whether the backoff's last park was MaxPark long
// (Strategy.Step's doubling from MinPark).
func (b *Backoffer) atMaxPark() bool {
	i := b.idle
	if b.ParkAtOnce {
		i += b.Spins + b.Yields
	}
	d := b.MinPark
	for n := i - b.Spins - b.Yields - 1; n > 0 && d < b.MaxPark; n-- {
		d *= 2
	}
	return d >= b.MaxPark
}
