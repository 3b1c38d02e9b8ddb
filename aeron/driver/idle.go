package driver

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/aeron"
)

// The quiet park: how a Start-ed driver idles once nothing has happened
// for a while (threadBackoff).
const (
	// quietAfterNs is how long the duty cycle must have found nothing to
	// do before the driver parks longer than MaxPark.
	quietAfterNs = int64(100 * time.Millisecond)
	// quietMaxPark is the longest quiet park: the most a command that ends
	// a quiet spell waits for the conductor.
	quietMaxPark = 4 * time.Millisecond
)

// threadBackoff is the back-off a Start-ed driver idles with when its
// strategy is the default one (an aeron.BackoffIdle without a Park of its
// own): aeron.BackoffIdle's spin, yield, park, made cheap on a goroutine
// locked to its OS thread, plus a deeper park once the driver is quiet.
//
//   - It yields the OS thread (sched_yield, as the Java driver's
//     Thread.yield does), not the goroutine: runtime.Gosched on a locked
//     goroutine hands its P to another thread and back, waking two threads
//     per yield, which steals the cores a publisher and a subscriber spin
//     on.
//   - It parks on the driver's sockets (Driver.park), from MinPark
//     doubling to MaxPark, as BackoffIdle does.
//   - When the duty cycle has found nothing to do for quietAfterNs and the
//     driver has no UDP endpoint (whose data and timers want the sender and
//     receiver on time), parks go on doubling to quietMaxPark, never past
//     Driver.Deadline. Nothing in IPC needs the driver sooner: publishers
//     and subscribers share the log, a publisher runs on for seven eighths
//     of its term window before its limit must move, and client liveness
//     is checked on the 1 s timer. Only a command that ends a quiet spell
//     waits longer, up to quietMaxPark; the first work resets the back-off.
//
// It reads the cycle's clock from the driver (DoWork sets nowNs), so it
// belongs to the goroutine that runs DoWork.
type threadBackoff struct {
	d                   *Driver
	park                func(time.Duration) // Driver.park; tests record
	maxSpins, maxYields int
	minPark, maxPark    time.Duration

	spins, yields int
	parkFor       time.Duration // the current step of the doubling park
	lastWorkNs    int64 // the cycle time of the last cycle that did work
}

// newThreadBackoff takes b's parameters, with BackoffIdle's defaults for
// zero fields.
func newThreadBackoff(d *Driver, b *aeron.BackoffIdle) *threadBackoff {
	t := &threadBackoff{d: d, park: d.park, maxSpins: b.MaxSpins, maxYields: b.MaxYields, minPark: b.MinPark, maxPark: b.MaxPark}
	if t.maxSpins <= 0 {
		t.maxSpins = 10
	}
	if t.maxYields <= 0 {
		t.maxYields = 5
	}
	if t.minPark <= 0 {
		t.minPark = time.Microsecond
	}
	if t.maxPark < t.minPark {
		t.maxPark = max(time.Millisecond, t.minPark)
	}
	return t
}

// Idle advances the back-off after a cycle that did no work and resets it
// after one that did.
func (t *threadBackoff) Idle(work int) {
	if work > 0 {
		t.spins, t.yields, t.parkFor = 0, 0, 0
		t.lastWorkNs = t.d.nowNs
		return
	}
	switch {
	case t.spins < t.maxSpins:
		t.spins++
	case t.yields < t.maxYields:
		t.yields++
		threadYield()
	default:
		t.park(t.nextPark())
	}
}

// nextPark doubles the park from MinPark to MaxPark and, while the driver
// is quiet, on to quietMaxPark, cut at the driver's next timer; a driver
// that is no longer quiet is back at MaxPark.
func (t *threadBackoff) nextPark() time.Duration {
	switch {
	case t.parkFor < t.minPark:
		t.parkFor = t.minPark
	case t.parkFor < t.maxPark:
		t.parkFor = min(2*t.parkFor, t.maxPark)
	case t.quiet():
		t.parkFor = max(min(2*t.parkFor, quietMaxPark), t.maxPark)
	default:
		t.parkFor = t.maxPark
	}
	if t.parkFor <= t.maxPark {
		return t.parkFor
	}
	untilTimer := time.Duration(t.d.Deadline() - t.d.nowNs)
	return max(min(t.parkFor, untilTimer), t.maxPark)
}

// quiet: the duty cycle found nothing to do for quietAfterNs, and the
// driver has no UDP endpoint or image.
func (t *threadBackoff) quiet() bool {
	d := t.d
	return d.nowNs-t.lastWorkNs >= quietAfterNs && !d.HasNetwork() && len(d.rcvImages)+len(d.images) == 0
}

// threadYield gives the calling OS thread's core to another runnable
// thread, with sched_yield(2) as a raw system call the Go scheduler does
// not see (use it on a locked goroutine).
func threadYield() { unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }
