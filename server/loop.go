package server

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/idle"
	"github.com/goblin-kv/goblin/internal/monotime"
	"github.com/goblin-kv/goblin/internal/rawpoll"
	"github.com/goblin-kv/goblin/transport"
)

// Waitable is implemented by transports whose readiness the kernel can
// report (the socket transports). The loop parks on their descriptors
// instead of sleeping blind, and asks them to check their sockets whenever
// it is otherwise idle, so the check costs nothing while other transports
// are busy.
type Waitable interface {
	// WaitFD is a descriptor (an epoll instance) that polls readable when
	// the transport has work, or −1 when this transport has none (it is
	// then treated as not Waitable).
	WaitFD() int
	// CheckNow makes the next Poll look at the sockets.
	CheckNow()
}

// Dormant is implemented by Waitable transports that may have no socket
// to watch for long spells (the replication link while the server follows
// no primary) and whose Poll notices all their work without one. While
// Dormant reports true, a spinning loop leaves the transport's WaitFD out
// of its checks: a socket listener that is then the only one awake is
// checked directly, one epoll_wait on its own set per spin, rather than
// through the loop's nested set, which would put a second epoll_wait on
// every request's path. Called on the loop goroutine, once per spin.
type Dormant interface {
	Dormant() bool
}

// WaitPreparer is implemented by Waitable transports whose WaitFD reports
// work only once asked to (the Aeron transport's in-process media driver,
// whose sockets stay out of its epoll set while the loop busy-polls,
// because a watched socket makes every datagram pay for a wake-up): the
// loop calls PrepareToWait just before each park.
type WaitPreparer interface {
	PrepareToWait()
}

// Sleeper is implemented by transports the kernel cannot see (the
// shared-memory ring) whose clients can nevertheless wake a parked loop: a
// client that sends while the loop is parked rings a descriptor the loop
// waits on. Without it such a request would wait out the rest of the park.
// A Sleeper is not Waitable on purpose: the loop never makes system calls
// for it on busy or spinning cycles, only around a park. A transport that
// is both is treated as Waitable.
type Sleeper interface {
	// WakeFD is a descriptor (an eventfd) that polls readable when a
	// client rang.
	WakeFD() int
	// PrepareToPark is called just before the loop parks. It tells the
	// transport's clients that the loop is about to park, then looks for
	// work once more and returns false if some is already waiting: the
	// loop then does not park.
	PrepareToPark() bool
	// Unparked is called when the park ends (or was called off), once for
	// every PrepareToPark.
	Unparked()
}

// RestPreparer is implemented by Sleepers that count their parks: the
// loop calls PrepareToRest, not PrepareToPark, before a Rest (a busy
// cycle's wait, see Loop.Rest), so that a rest does not count as a park.
// It does what PrepareToPark does; Unparked ends it.
type RestPreparer interface {
	PrepareToRest() bool
}

// RawParker is implemented by transports that run a goroutine of their
// own which parks through raw system calls, holding its P (the Go
// scheduler's processor) while it sleeps: Aeron replication's media driver
// (driver.Start), beside its Publisher or Source. Beside one, the loop
// parks through a raw system call too and the process gets one P more
// per RawParker while it runs (see Loop.rawPark, docs/idle.md "The loop beside a media
// driver").
type RawParker interface {
	// ParksRaw reports whether such a goroutine runs (fixed for the
	// transport's life).
	ParksRaw() bool
}

// FaultGuarded is implemented by transports whose Poll guards itself
// against a memory fault in a client's shared mapping (the ring:
// debug.SetPanicOnFault and a deferred recover that drops that client, some
// 40 instructions on every Poll, busy or idle). The loop takes the guard
// over for its whole goroutine: Run turns SetPanicOnFault on once and
// recovers around all its cycles, the loop calls PollUnguarded in place of
// Poll, and a recovered panic goes to Survive.
type FaultGuarded interface {
	// PollUnguarded is Poll without the guard: for a goroutine with
	// SetPanicOnFault on, under a recover that hands the panic to Survive.
	PollUnguarded(now int64) int
	// Survive reports whether r, recovered from PollUnguarded, was a
	// fault in one of the transport's client mappings; the transport has
	// then dropped that client.
	Survive(r any) bool
}

// unguarded polls a FaultGuarded transport without its own guard.
type unguarded struct{ g FaultGuarded }

func (u unguarded) Poll(now int64) int { return u.g.PollUnguarded(now) }

// poller is what the loop calls on every cycle: a transport, or its
// unguarded poll.
type poller interface{ Poll(now int64) int }

// Deadliner is implemented by transports that must be polled again by a
// deadline even when they have nothing to do (the Aeron transport with the
// media driver in-process: the driver's duty cycle runs from its Poll), or
// that hold work no descriptor announces (input already read, messages past
// a Poll's cap): those return the last Poll's now, so the loop neither
// parks nor rests (Rest) over it. The loop never parks past the earliest
// deadline.
type Deadliner interface {
	// Deadline is on the loop's clock, the now Poll receives.
	Deadline() int64
}

// LoopStats are the loop's own counters. The loop goroutine owns them.
type LoopStats struct {
	Iterations   int64 // duty cycles run
	Busy         int64 // cycles that did work
	IdleNanos    int64 // time spent in cycles that did no work, parks included
	Parks        int64 // bounded waits taken by the backoff strategy
	ParksSkipped int64 // parks called off because a Sleeper had work waiting
	Rests        int64 // waits taken in busy cycles (Rest: a background save's)
	TickWork     int64 // store maintenance steps done
}

// LoopConfig describes a Loop. Transports are required.
type LoopConfig struct {
	Transports []transport.Server
	// Idle names the idle strategy (see NewIdleStrategy); Options gives
	// the backoff tuning.
	Idle    string
	Options *Options
	// CPUs, when set, pins the loop thread to these CPUs.
	CPUs []int
	// BeginCycle, when set, is called at the start of every cycle, before
	// the transports are polled, with the cycle's clock reading (the now
	// Poll receives, on monotime's clock): the engine times its commands
	// from it.
	BeginCycle func(now int64)
	// Tick runs bounded store maintenance once per cycle (nil: none); it
	// returns the work it did.
	Tick func(budget int) int
	// TickBudget bounds one Tick call.
	TickBudget int
	// TickEvery, when positive, spaces the Ticks of idle cycles: after a
	// Tick that did no work the next runs once TickEvery has passed on
	// the cycle's clock, while a Tick that did work is followed by
	// another on the next cycle (a save's slices, expiry, compaction and
	// replication go on at full pace) and a cycle whose transports did
	// work always ticks (a write's replication stream leaves from Tick). An idle Tick reads the wall
	// clock and scans the store's arena for a page to compact: on this
	// machine class two thirds of an idle spinning cycle of some 120 ns,
	// which a request arriving mid-cycle waits out before it is polled
	// (issue 28). 0 ticks on every cycle.
	TickEvery time.Duration
	// Publish copies the loop-owned counters somewhere the metrics
	// collector can read; the loop calls it every PublishEvery (on an
	// idle cycle if it can) and just before a park once PublishEvery has
	// passed. nil publishes nothing.
	Publish      func(st *LoopStats)
	PublishEvery time.Duration
	// BeforeClose, when set, runs on the loop goroutine once Stop ended
	// the cycles and before the transports close (the shutdown's save).
	BeforeClose func()
	// ParkAtOnce, when set and reporting true, makes the backoff strategy
	// park on the loop's first idle cycle instead of spinning and
	// yielding first (idle.Backoffer.ParkAtOnce), so the loop blocks in
	// epoll_wait on its sockets at once. It applies only to a loop of
	// socket transports alone: with a ring or Aeron transport the loop
	// spins as configured, since their clients do not wake an epoll_wait
	// as quickly. The server sets it while replication moves data (a
	// replica, or a primary with replicas, whose stream moved in the last
	// 100 ms: engine.ReplStreaming): the other end of the replication
	// socket needs the CPU the spins would take, and its data wakes the
	// park. At rest the loop spins first, as a standalone server's does.
	// Called on idle cycles, on the loop goroutine.
	ParkAtOnce func() bool
	// Timers, when set, says how long, up to max, the loop may stay
	// parked before a timer of the caller's is due (the engine's blocked
	// clients, pauses, key expiry). The loop asks before a park longer
	// than the backoff's MaxPark (the doze strategy's), never parks past
	// it, and never parks for less than MaxPark because of it. Loop
	// goroutine.
	Timers func(max time.Duration) time.Duration
}

// Loop is the store loop: one goroutine locked to its OS thread that polls
// every transport, runs store maintenance, publishes metrics and idles.
type Loop struct {
	cfg        LoopConfig
	pollers    []poller       // cfg.Transports, FaultGuarded ones as unguarded
	guarded    []FaultGuarded // the transports whose fault guard Run holds
	idle       idle.Idler
	atOnce     *idle.Backoffer // the backoff whose ParkAtOnce follows cfg.ParkAtOnce; nil when it does not apply
	maxPark    time.Duration   // the backoff's longest park; a longer one is a doze, bounded by cfg.Timers
	waitables  []Waitable
	dormant    []Dormant      // per waitable: nil, or the waitable as a Dormant
	preparers  []WaitPreparer // the waitables that must be asked before a park
	sleepers   []Sleeper
	restPrep   []RestPreparer // per sleeper: nil, or the sleeper as a RestPreparer
	deadliners []Deadliner
	// blind counts the transports nothing in the park set wakes for
	// (neither Waitable with a descriptor nor Sleeper: Aeron IPC, Aeron
	// with an external driver, the replication Publisher). A busy cycle
	// never rests beside one (Rest): its requests would wait out the rest.
	blind int
	// socketsOnly: every transport is Waitable, so nothing else shares
	// the loop and an idle cycle may always check the sockets.
	socketsOnly bool
	// rawPark: a RawParker's goroutine shares the process, so the loop
	// parks through a raw system call and Run adds a P (extraP). With the
	// loop parked through Syscall6 beside a goroutine that holds the
	// other P in raw parks, the runtime's monitor (sysmon) finds the
	// loop's P in a system call with no idle P left, retakes it on every
	// park and so never backs off from its 20 µs polling: thousands of
	// wake-ups a second at rest (docs/idle.md). rawParkers counts them:
	// each holds a P of its own while it sleeps (a replica with a
	// standing-by publication runs two media drivers).
	rawPark     bool
	rawParkers  int
	parkFD      int
	parkEv      []unix.EpollEvent
	parkTS      unix.Timespec
	stats       LoopStats
	prev        int64
	prevIdle    bool
	lastPublish int64
	// lastTick is the cycle clock of the last Tick; tickBusy says it did
	// work (see LoopConfig.TickEvery).
	lastTick int64
	tickBusy bool
	// polled is the work the current cycle's polls found (Served).
	polled int
	// staleCycles counts the cycles since the clock was last read; spun
	// says the last cycle was idle and only spun (idle.Spun).
	staleCycles int
	spun        bool
	stop        atomic.Bool
	done        chan struct{}
	// stopFD is an eventfd in the park set that Stop rings, so a dozing
	// loop stops at once rather than at the end of its doze; -1 when the
	// loop never dozes. stopMu keeps Stop's write off a closed descriptor.
	stopMu sync.Mutex
	stopFD int
}

// NewLoop prepares a loop; Run runs it.
func NewLoop(cfg LoopConfig) (*Loop, error) {
	if cfg.Options == nil {
		cfg.Options = &Options{}
	}
	cfg.Options.EnsureDefaults()
	if cfg.TickBudget <= 0 {
		cfg.TickBudget = cfg.Options.TickBudget
	}
	if cfg.PublishEvery <= 0 {
		cfg.PublishEvery = cfg.Options.MetricsInterval
	}
	l := &Loop{cfg: cfg, parkFD: -1, stopFD: -1, done: make(chan struct{})}
	for _, t := range cfg.Transports {
		if g, ok := t.(FaultGuarded); ok {
			l.guarded = append(l.guarded, g)
			l.pollers = append(l.pollers, unguarded{g})
		} else {
			l.pollers = append(l.pollers, t)
		}
		if d, ok := t.(Deadliner); ok {
			l.deadliners = append(l.deadliners, d)
		}
		if r, ok := t.(RawParker); ok && r.ParksRaw() {
			l.rawPark = true
			l.rawParkers++
		}
		if w, ok := t.(Waitable); ok && w.WaitFD() >= 0 {
			l.waitables = append(l.waitables, w)
			d, _ := w.(Dormant)
			l.dormant = append(l.dormant, d)
			if p, ok := w.(WaitPreparer); ok {
				l.preparers = append(l.preparers, p)
			}
		} else if s, ok := t.(Sleeper); ok {
			l.sleepers = append(l.sleepers, s)
			r, _ := s.(RestPreparer)
			l.restPrep = append(l.restPrep, r)
		} else {
			l.blind++
		}
	}
	l.socketsOnly = len(l.waitables) == len(cfg.Transports)
	if len(l.waitables)+len(l.sleepers) > 0 {
		fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			return nil, fmt.Errorf("server: epoll_create: %w", err)
		}
		l.parkFD = fd
		l.parkEv = make([]unix.EpollEvent, len(l.waitables)+len(l.sleepers))
		fds := make([]int, 0, len(l.parkEv))
		for _, w := range l.waitables {
			fds = append(fds, w.WaitFD())
		}
		for _, s := range l.sleepers {
			fds = append(fds, s.WakeFD())
		}
		for _, wfd := range fds {
			// Nested epoll for the sockets, an eventfd for each Sleeper:
			// the loop's park descriptor polls readable when any of them
			// does.
			if err := unix.EpollCtl(fd, unix.EPOLL_CTL_ADD, wfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wfd)}); err != nil {
				unix.Close(fd)
				return nil, fmt.Errorf("server: epoll_ctl on descriptor %d: %w", wfd, err)
			}
		}
	}
	idler, err := NewIdleStrategy(cfg.Idle, cfg.Options, l.park)
	if err != nil {
		l.closeParkFD()
		return nil, err
	}
	l.idle = idler
	b, _ := idler.(*idle.Backoffer)
	if z, ok := idler.(*idle.Dozer); ok {
		b = &z.Backoffer
		if !l.socketsOnly || l.parkFD < 0 {
			// Beside a ring or Aeron transport, doze is backoff: their
			// clients and the media driver's timers keep the loop to
			// the backoff's parks. So is a loop with nothing to wake its
			// parks (no transport yet): it sleeps.
			z.Doze = 0
		} else if err := l.addStopFD(); err != nil {
			l.closeParkFD()
			return nil, err
		}
	}
	if b != nil {
		l.maxPark = b.MaxPark
		if l.socketsOnly && cfg.ParkAtOnce != nil {
			l.atOnce = b
		}
	}
	return l, nil
}

// park blocks for up to d, or until a socket transport has work or a
// Sleeper's client rings. It first asks every Sleeper to announce the park
// and does not park if one of them already has work waiting.
func (l *Loop) park(d time.Duration) {
	if d = l.parkLength(d); d <= 0 {
		return
	}
	for i, s := range l.sleepers {
		if !s.PrepareToPark() {
			for _, p := range l.sleepers[:i+1] {
				p.Unparked()
			}
			l.stats.ParksSkipped++
			return
		}
	}
	l.stats.Parks++
	if now := monotime.Now(); l.cfg.Publish != nil && now-l.lastPublish >= int64(l.cfg.PublishEvery) {
		// A park may last long: publish what it would leave unpublished.
		l.lastPublish = now
		l.cfg.Publish(&l.stats)
	}
	l.wait(d)
}

// Rest parks the loop for up to d in the middle of a busy cycle, as an
// idle cycle's park does but without its bookkeeping, whatever the idle
// strategy: a socket's request, a ring client's doorbell or a transport's
// deadline ends it at once. A background save's walk rests so that the
// threads it shares the CPUs with (the clients it has just answered, the
// save's writer) get one (engine.SaveRest). It reports whether the loop
// waited. It does not when nothing could end the wait early: no park set,
// a transport the park set does not watch (blind), work already buffered
// in a transport (a Deadline now), or a kernel without epoll_pwait2, whose
// epoll_wait counts in milliseconds (a 20 µs rest would last 1 ms). Loop
// goroutine only (from Tick).
func (l *Loop) Rest(d time.Duration) bool {
	if l.parkFD < 0 || l.blind > 0 || noPwait2.Load() {
		return false
	}
	if d = l.deadlineBound(d); d <= 0 {
		return false
	}
	for i, s := range l.sleepers {
		var ok bool
		if r := l.restPrep[i]; r != nil {
			ok = r.PrepareToRest()
		} else {
			ok = s.PrepareToPark()
		}
		if !ok {
			for _, p := range l.sleepers[:i+1] {
				p.Unparked()
			}
			return false
		}
	}
	l.stats.Rests++
	l.wait(d)
	return true
}

// Served reports whether the current cycle's polls found work (requests
// served, clients accepted). Loop goroutine only (from Tick).
func (l *Loop) Served() bool { return l.polled > 0 }

// wait blocks for up to d on the park set (park and Rest; the Sleepers
// have been told).
func (l *Loop) wait(d time.Duration) {
	if l.parkFD < 0 {
		time.Sleep(d)
		return
	}
	for _, p := range l.preparers {
		p.PrepareToWait()
	}
	l.epollWait(d)
	for _, s := range l.sleepers {
		s.Unparked()
	}
}

// parkLength bounds a park the idle strategy asked for: a doze (longer
// than the backoff's MaxPark) by the caller's timers, but to no less than
// MaxPark; any park by the Deadliners' earliest deadline.
func (l *Loop) parkLength(d time.Duration) time.Duration {
	if d > l.maxPark && l.cfg.Timers != nil {
		d = max(min(d, l.cfg.Timers(d)), l.maxPark)
	}
	return l.deadlineBound(d)
}

// deadlineBound bounds a wait by the Deadliners' earliest deadline.
func (l *Loop) deadlineBound(d time.Duration) time.Duration {
	if len(l.deadliners) > 0 {
		now := monotime.Now()
		for _, t := range l.deadliners {
			d = min(d, time.Duration(t.Deadline()-now))
		}
	}
	return d
}

// Stop asks the loop to finish its current cycle, close every transport
// (which answers what was read and closes clients) and return. It does not
// wait; Done is closed when Run has returned.
func (l *Loop) Stop() {
	l.stop.Store(true)
	l.stopMu.Lock()
	if l.stopFD >= 0 {
		one := [8]byte{1}
		_, _ = unix.Write(l.stopFD, one[:])
	}
	l.stopMu.Unlock()
}

// addStopFD makes Stop wake a parked loop: an eventfd in the park set.
func (l *Loop) addStopFD() error {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("server: eventfd: %w", err)
	}
	if err := unix.EpollCtl(l.parkFD, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
		unix.Close(fd)
		return fmt.Errorf("server: epoll_ctl on descriptor %d: %w", fd, err)
	}
	l.stopFD = fd
	l.parkEv = append(l.parkEv, unix.EpollEvent{})
	return nil
}

// CheckSockets makes the next cycle look at every Waitable transport
// (socket listener) whatever its CheckEvery says. Loop goroutine only.
func (l *Loop) CheckSockets() {
	for _, w := range l.waitables {
		w.CheckNow()
	}
}

// Done is closed when Run returns.
func (l *Loop) Done() <-chan struct{} { return l.done }

// Run runs the loop on the calling goroutine, locked to its OS thread,
// until Stop. It then closes the transports and returns the first error
// they gave.
func (l *Loop) Run() error {
	defer close(l.done)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if len(l.cfg.CPUs) > 0 {
		var set unix.CPUSet
		for _, c := range l.cfg.CPUs {
			set.Set(c)
		}
		// pid 0 is the calling thread: the one this goroutine is locked to.
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			l.shutdown()
			return fmt.Errorf("server: pinning the loop to CPUs %v: %w", l.cfg.CPUs, err)
		}
	}
	if l.rawPark {
		// The loop's raw parks hold its P, and each RawParker's goroutine
		// holds one while it sleeps: one more P per RawParker leaves the
		// server's other goroutines (a BGSAVE's writer, replication,
		// metrics) every P but the loop's, instead of their waiting for
		// the scheduler to preempt a parked one (two media drivers and
		// the loop would otherwise hold all three Ps of a 2-CPU process).
		addP(l.rawParkers)
		defer addP(-l.rawParkers)
	}
	if len(l.guarded) > 0 {
		// The FaultGuarded transports' guard, for the whole goroutine
		// (cycles recovers); the setting before is restored on return.
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	}
	l.lastPublish = monotime.Now()
	for !l.stop.Load() {
		l.cycles()
	}
	if l.cfg.BeforeClose != nil {
		l.cfg.BeforeClose()
	}
	return l.shutdown()
}

// cycles runs duty cycles until the loop stops. With FaultGuarded
// transports it recovers (survive): a fault in a client's mapping ends the
// cycle it happened in, that transport drops the client, and cycles
// returns for Run to go on; any other panic goes on.
func (l *Loop) cycles() {
	if len(l.guarded) > 0 {
		defer l.survive()
	}
	for !l.stop.Load() {
		l.cycle()
	}
}

// survive is cycles' recover: a panic no FaultGuarded transport takes
// goes on.
func (l *Loop) survive() {
	r := recover()
	if r == nil {
		return
	}
	for _, g := range l.guarded {
		if g.Survive(r) {
			return
		}
	}
	panic(r)
}

// idleClockEvery: after an idle cycle, the clock is read on one cycle in
// idleClockEvery (see cycle).
const idleClockEvery = 4

// cycle runs one duty cycle.
func (l *Loop) cycle() {
	// Monotonic nanoseconds, the cycle's one clock read: the vDSO clock,
	// no allocation. The engine times its commands from it. After an idle
	// cycle only every idleClockEvery-th reads it: an idle spinning cycle
	// is some 25 ns, half of it the read (the TSC, on this machine
	// class), and a request arriving mid-cycle waits out the rest before
	// it is polled. A cycle that finds work then runs on a reading at
	// most idleClockEvery-1 spinning cycles old (tens of nanoseconds,
	// which the engine's timing of its requests includes); a busy cycle,
	// a yield or a park is always followed by a fresh one.
	// A loop of sockets alone reads it every cycle: its spinning cycles
	// each make an epoll_wait, so a reading three of them old would be
	// up to a microsecond stale, for a saving its sockets cannot show.
	now := l.prev
	if !l.spun || l.socketsOnly || l.staleCycles >= idleClockEvery-1 {
		now, l.staleCycles = monotime.Now(), 0
	} else {
		l.staleCycles++
	}
	if l.cfg.BeginCycle != nil {
		l.cfg.BeginCycle(now)
	}
	if l.prevIdle {
		l.stats.IdleNanos += now - l.prev
	}
	l.prev = now
	work := 0
	for _, t := range l.pollers {
		work += t.Poll(now)
	}
	l.polled = work
	// A cycle that served requests always ticks: the replication stream
	// of a write, WAIT's GETACK and a new replica's sync go out from Tick
	// (engine.tickRepl), and a primary with replicas parks at once when
	// idle (ParkAtOnce), so a skipped Tick would hold them a whole park.
	if l.cfg.Tick != nil && (work > 0 || l.tickBusy || now-l.lastTick >= int64(l.cfg.TickEvery) || l.lastTick == 0) {
		tw := l.cfg.Tick(l.cfg.TickBudget)
		l.lastTick, l.tickBusy = now, tw > 0
		l.stats.TickWork += int64(tw)
		work += tw
	}
	l.stats.Iterations++
	if work > 0 {
		l.stats.Busy++
	}
	l.prevIdle = work == 0
	// Publish once the interval has passed, preferably on an idle cycle
	// so a busy loop is not taxed; a loop busy for two intervals publishes
	// anyway.
	if due := now - l.lastPublish; l.cfg.Publish != nil && due >= int64(l.cfg.PublishEvery) &&
		(work == 0 || due >= 2*int64(l.cfg.PublishEvery)) {
		l.lastPublish = now
		l.cfg.Publish(&l.stats)
	}
	if work == 0 && l.atOnce != nil {
		l.atOnce.ParkAtOnce = l.cfg.ParkAtOnce()
	}
	phase := l.idle.Idle(work)
	l.spun = phase == idle.Spun
	switch {
	case phase >= idle.Yielded:
		// The loop is idle: the sockets get checked on the next cycle
		// whatever their CheckEvery says.
		for _, w := range l.waitables {
			w.CheckNow()
		}
	case phase == idle.Spun && l.socketsOnly:
		// Nothing but sockets share the loop, so checking them taxes no
		// other transport. With one awake listener, its own next Poll
		// checks it; with several, one epoll_wait on the nested
		// descriptor says which have work.
		if w := l.onlyAwake(); w != nil {
			w.CheckNow()
			break
		}
		n, _ := rawpoll.EpollWaitNow(l.parkFD, l.parkEv) // repeated every spin: raw, see package rawpoll
		for i := 0; i < n; i++ {
			for _, w := range l.waitables {
				if int32(w.WaitFD()) == l.parkEv[i].Fd {
					w.CheckNow()
				}
			}
		}
	}
}

// onlyAwake returns the one waitable that is not Dormant when there is
// exactly one, else nil.
func (l *Loop) onlyAwake() Waitable {
	var awake Waitable
	for i, w := range l.waitables {
		if d := l.dormant[i]; d != nil && d.Dormant() {
			continue
		}
		if awake != nil {
			return nil
		}
		awake = w
	}
	return awake
}

func (l *Loop) shutdown() error {
	var first error
	for _, t := range l.cfg.Transports {
		if err := t.Close(); err != nil && first == nil {
			first = fmt.Errorf("server: closing %s: %w", t.Name(), err)
		}
	}
	if l.cfg.Publish != nil {
		l.cfg.Publish(&l.stats)
	}
	l.closeParkFD()
	return first
}

// epollWait waits on an epoll set for up to d, to the nanosecond with
// epoll_pwait2 (Linux 5.11+), else rounded up to a millisecond: a deadline
// a few microseconds away (an in-process media driver's NAK or retransmit
// timer) then costs a park of that length, not of a millisecond.
func (l *Loop) epollWait(d time.Duration) {
	if !noPwait2.Load() {
		// parkTS lives in the loop, so passing it to the kernel allocates nothing.
		l.parkTS = unix.NsecToTimespec(int64(d))
		if l.rawPark {
			// Raw: the scheduler does not see it, the loop keeps its P
			// (Run added one), and sysmon has no P in a system call to
			// retake. A signal (the scheduler's preemption, every 10 ms
			// or so) ends the park early with EINTR: one more cycle.
			_, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(l.parkFD), uintptr(unsafe.Pointer(&l.parkEv[0])),
				uintptr(len(l.parkEv)), uintptr(unsafe.Pointer(&l.parkTS)), 0, 0)
			if e != unix.ENOSYS {
				return
			}
			noPwait2.Store(true)
		}
	}
	if !noPwait2.Load() {
		_, _, e := unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(l.parkFD), uintptr(unsafe.Pointer(&l.parkEv[0])),
			uintptr(len(l.parkEv)), uintptr(unsafe.Pointer(&l.parkTS)), 0, 0)
		if e != unix.ENOSYS {
			return
		}
		noPwait2.Store(true)
	}
	unix.EpollWait(l.parkFD, l.parkEv, int((d+time.Millisecond-1)/time.Millisecond))
}

// noPwait2 records that the kernel has no epoll_pwait2.
var noPwait2 atomic.Bool

// extraMu makes addP's read and write of GOMAXPROCS one step.
var extraMu sync.Mutex

// addP adds n Ps to GOMAXPROCS (n < 0 takes them back): one per running
// loop that parks raw. It changes the current value by n rather than
// setting one it saved, so a program that sets GOMAXPROCS while a loop
// runs keeps its setting, and a process that starts and stops servers
// (tests) ends where it began. Setting GOMAXPROCS switches off the
// runtime's updates of it from a changing CPU limit (Go 1.25); they are
// not switched back on (runtime.SetDefaultGOMAXPROCS reads the calling
// thread's CPU affinity, and the loop's thread may be pinned to one CPU).
func addP(n int) {
	extraMu.Lock()
	defer extraMu.Unlock()
	runtime.GOMAXPROCS(max(1, runtime.GOMAXPROCS(0)+n))
}

// RawPark reports whether the loop parks through a raw system call (a
// RawParker is among its transports).
func (l *Loop) RawPark() bool { return l.rawPark }

func (l *Loop) closeParkFD() {
	l.stopMu.Lock()
	if l.stopFD >= 0 {
		unix.Close(l.stopFD)
		l.stopFD = -1
	}
	l.stopMu.Unlock()
	if l.parkFD >= 0 {
		unix.Close(l.parkFD)
		l.parkFD = -1
	}
}
