package driver

import (
	"runtime"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/idle"
)

// The quiet park: how a Start-ed driver idles once nothing has happened
// for a while (threadBackoff).
const (
	// quietAfterNs is how long the duty cycle must have found nothing to
	// do before the driver parks longer than MaxPark.
	quietAfterNs = int64(100 * time.Millisecond)
	// quietMaxPark is the longest quiet park: the most a command that ends
	// a quiet spell waits for the conductor.
	quietMaxPark = 8 * time.Millisecond
	// quietAfterWakeNs is quietAfterNs for a driver whose clients wake it
	// (Options.WakeOnOffer): with UDP its heartbeats and status messages
	// are work every 100 to 200 ms, so the spell must start sooner to
	// save anything; what needs the driver sooner wakes it (a datagram,
	// a Wake) or is a timer the quiet park is cut at.
	quietAfterWakeNs = int64(4 * time.Millisecond)
)

// threadBackoff is the back-off a Start-ed driver idles with when its
// strategy is the default one (an aeron.BackoffIdle without a Park of its
// own): package idle's backoff (idle.Backoff.Step, as BackoffIdle runs
// it), made cheap on a goroutine locked to its OS thread, plus a deeper
// park once the driver is quiet.
//
//   - It yields the OS thread (sched_yield, as the Java driver's
//     Thread.yield does), not the goroutine: runtime.Gosched on a locked
//     goroutine hands its P to another thread and back, waking two threads
//     per yield, which steals the cores a publisher and a subscriber spin
//     on.
//   - It parks on the driver's sockets (Driver.park), from MinPark
//     doubling to MaxPark, as BackoffIdle does.
//   - When the duty cycle has found nothing to do for quietAfterNs and the
//     driver has no UDP endpoint or image (whose data and timers want the
//     sender and receiver on time), parks go on doubling to quietMaxPark,
//     never past Driver.Deadline. Nothing in IPC needs the driver sooner:
//     publishers and subscribers share the log, a publisher runs on for
//     seven eighths of its term window before its limit must move, and
//     client liveness is checked on the 1 s timer. Only a command that
//     ends a quiet spell waits longer, up to quietMaxPark; the first work
//     resets the back-off, but not a timer tick alone (tickOnly).
//   - During a quiet spell the goroutine unlocks its thread (and locks it
//     again on the first work): the Go scheduler sees a goroutine that
//     never blocks (its parks are raw system calls) and preempts it every
//     10 ms or so; a locked goroutine preempted hands its P to another
//     thread and back (three or four thread wake-ups), an unlocked one
//     goes back on its own thread (one wake-up of an idle one at most):
//     on an idle driver that saves about a fifth of its wake-ups. With
//     GOMAXPROCS=1 (aeronmd's) it also passes through the scheduler
//     (runtime.Gosched) before each quiet park, which then wakes no other
//     thread (there is no idle P to hand work to) and keeps the scheduler
//     from preempting it at all: what is left of an idle driver's
//     wake-ups is its parks and the runtime's sysmon, ~125 and ~100 a
//     second.
//
// It reads the cycle's clock from the driver (DoWork sets nowNs), so it
// belongs to the goroutine that runs DoWork.
type threadBackoff struct {
	d          *Driver
	p          idle.Params
	park       func(time.Duration) // Driver.park; tests record
	parkFn     func(time.Duration) // parkQuiet, bound once
	idleCycles int                 // idle cycles in a row
	quietPark  time.Duration       // the current quiet park, 0 when not quiet
	lastWorkNs int64               // the cycle time of the last cycle that did work
	// locked: the goroutine is locked to its thread (Start's), and
	// unlocked: it unlocked it for a quiet spell.
	locked, unlocked bool
	// oneP: GOMAXPROCS is 1, so a Gosched wakes no other thread.
	oneP bool
}

// newThreadBackoff takes b's parameters (zero fields take package idle's
// defaults, as BackoffIdle's do).
func newThreadBackoff(d *Driver, b *aeron.BackoffIdle) *threadBackoff {
	t := &threadBackoff{d: d, p: b.Params(), park: d.park}
	t.parkFn = t.parkQuiet
	t.oneP = runtime.GOMAXPROCS(0) == 1
	return t
}

// Idle implements idle.Idler (aeron.IdleStrategy): it advances the
// back-off after a cycle that did no work and resets it after one that
// did.
func (t *threadBackoff) Idle(work int) idle.Phase {
	if work > 0 && !t.tickOnly(work) {
		t.idleCycles, t.quietPark = 0, 0
		t.relock()
		t.lastWorkNs = t.d.nowNs
		return idle.Busy
	}
	t.idleCycles++
	return idle.Backoff.Step(t.idleCycles, t.p, idle.ThreadYield, t.parkFn)
}

// parkQuiet parks for dt, the backoff's park; once the backoff is at
// MaxPark and the driver is quiet, for the quiet park instead, which
// doubles from MaxPark to quietMaxPark, cut at the driver's next timer
// (not below MaxPark).
func (t *threadBackoff) parkQuiet(dt time.Duration) {
	if dt < t.p.MaxPark || !t.quiet() {
		t.quietPark = 0
		t.relock()
		t.park(dt)
		return
	}
	if t.locked && !t.unlocked {
		runtime.UnlockOSThread()
		t.unlocked = true
	}
	if t.unlocked && t.oneP {
		runtime.Gosched()
	}
	t.quietPark = max(min(2*t.quietPark, quietMaxPark), dt)
	untilTimer := time.Duration(t.d.Deadline() - t.d.nowNs)
	t.park(max(min(t.quietPark, untilTimer), dt))
}

// tickOnly: the cycle's one unit of work was the conductor's timer tick
// (DoWork just moved the timer deadline one interval past this cycle).
// A tick alone does not reset the back-off: nothing follows it that wants
// the conductor soon, and on an idle driver with the 1 s timer a reset
// would mean 100 ms of 1 ms parks every second, half its wake-ups.
func (t *threadBackoff) tickOnly(work int) bool {
	d := t.d
	return work == 1 && d.timerDeadlineNs-int64(d.opts.TimerInterval) == d.nowNs
}

// relock locks the goroutine to its thread again after a quiet spell.
func (t *threadBackoff) relock() {
	if t.unlocked {
		runtime.LockOSThread()
		t.unlocked = false
	}
}

// quiet: the duty cycle found nothing to do for quietAfterNs, and the
// driver has no UDP endpoint or image; or, its clients waking it
// (Options.WakeOnOffer, with the doorbells of a Start-ed driver), for
// quietAfterWakeNs.
func (t *threadBackoff) quiet() bool {
	d := t.d
	if d.opts.WakeOnOffer && d.bells != nil {
		return d.nowNs-t.lastWorkNs >= quietAfterWakeNs
	}
	return d.nowNs-t.lastWorkNs >= quietAfterNs && !d.HasNetwork() && len(d.receiver.images)+len(d.images) == 0
}

// WaitFD is a descriptor (an epoll set of the driver's UDP sockets) that
// polls readable when a datagram waits, once PrepareToWait armed it: an
// owner that parks between duty cycles calls PrepareToWait, then waits on
// it (with a timeout of at most Deadline), so a datagram wakes it at once.
// It stays the same for the driver's life.
func (d *Driver) WaitFD() int { return d.poller.FD() }

// disarmAfterNs: once DoWork has run this long with no PrepareToWait, its
// owner is taken to busy-poll, and the sockets leave WaitFD's set.
const disarmAfterNs = int64(2e6)

// PrepareToWait arms WaitFD: the driver's sockets join its epoll set, so
// it polls readable while a datagram waits, one that came before the call
// included. An owner calls it each time before it waits on WaitFD; any
// goroutine may. The sockets stay in the set until DoWork has run for
// disarmAfterNs with no PrepareToWait: an owner that busy-polls never
// waits, and a socket in an epoll set makes every datagram that comes for
// it pay for a wake-up callback (in the sender's system call, one per
// level of nested sets) on the round trip's path. A failure to arm
// (epoll_ctl) is returned; WaitFD then stays unreadable, so the owner
// waits out its timeout.
func (d *Driver) PrepareToWait() error {
	_, err := d.poller.Arm()
	return err
}

// disarmIfSpinning takes the sockets out of WaitFD's set once no owner
// has armed it for disarmAfterNs (while armed, DoWork calls it each
// cycle). A PrepareToWait between the look at the generation and the
// disarm keeps the set armed (udp.Poller.DisarmIf).
func (d *Driver) disarmIfSpinning(nowNs int64) {
	gen := d.poller.Arms()
	if gen != d.waitGen {
		d.waitGen, d.lastWaitNs = gen, nowNs
		return
	}
	if nowNs-d.lastWaitNs >= disarmAfterNs {
		d.poller.DisarmIf(gen)
	}
}

// HasNetwork reports whether the driver has UDP sockets open: then its
// owner should run the duty cycle on every pass of its loop (or park on
// WaitFD), since datagrams wait for it.
func (d *Driver) HasNetwork() bool { return len(d.sendEndpoints)+len(d.receiveEndpoints) > 0 }
