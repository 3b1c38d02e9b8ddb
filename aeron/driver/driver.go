package driver

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/aeron"

	"github.com/goblin-kv/goblin/aeron/internal/broadcast"
	"github.com/goblin-kv/goblin/aeron/internal/cnc"
	"github.com/goblin-kv/goblin/aeron/internal/command"
	"github.com/goblin-kv/goblin/aeron/internal/counters"
	"github.com/goblin-kv/goblin/aeron/internal/errorlog"
	"github.com/goblin-kv/goblin/aeron/internal/ringbuffer"
	"github.com/goblin-kv/goblin/aeron/internal/udp"
	"github.com/goblin-kv/goblin/aeron/internal/wire"
	"github.com/goblin-kv/goblin/internal/shm"
)

// LossReportFile is the loss report's name in the Aeron directory.
const LossReportFile = "loss-report.dat"

// Driver is a media driver: it owns an Aeron directory and answers the
// clients that connect to it. Make one with New (the owner runs its duty
// cycle by calling DoWork) or Start (a goroutine of its own runs it).
// DoWork and Close belong to one goroutine at a time; the other methods
// may be called from any goroutine.
type Driver struct {
	// The three agents (DriverConductor, Sender, Receiver) run one after
	// the other in DoWork, on one goroutine, so nothing is handed between
	// threads (the C driver's shared threading mode); the Driver holds
	// what they share and the owner's side: the files, the wait, the
	// goroutine of a Start-ed driver.
	driverContext
	conductor
	sender   sender
	receiver receiver

	cncData    []byte
	lastWorkNs int64  // start of the last cycle that did work, or 0
	waitGen    uint64 // the poller's arm generation DoWork last saw
	lastWaitNs int64  // when DoWork first saw it (waitGen's Arm)
	closed     bool
	runner     *runner
	// bells: Wake's and WorkFD's eventfds (doorbell.go), for a Start-ed
	// driver with the default idle strategy; nil otherwise.
	bells *doorbells
}

// New prepares the Aeron directory, creates cnc.dat and loss-report.dat
// and returns a driver whose duty cycle the caller runs with DoWork (the
// Invoker threading mode). The directory is refused, with ErrActiveDriver,
// when a live driver uses it.
func New(o Options) (*Driver, error) {
	if o.ThreadingMode == "" {
		o.ThreadingMode = Invoker
	}
	return newDriver(o)
}

func newDriver(o Options) (*Driver, error) {
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	incoming, err := newIncomingInterceptors(&o)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	events, err := newEventLog(&o, versionInfo())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	if err := prepareDir(&o); err != nil {
		events.close()
		return nil, err
	}
	d := &Driver{}
	d.driverContext = driverContext{opts: o, recvBatch: udp.NewRecvBatch(recvBatchSize, maxUDPPayloadLength+32),
		ctl: make([]byte, 64), errFrame: make([]byte, 0, wire.ErrHeaderLength+wire.ErrMaxMessageLength), incoming: incoming}
	d.conductor = conductor{driverContext: &d.driverContext, sender: &d.sender, receiver: &d.receiver,
		osb: readOSSocketBuffers(), nextSessionID: d32Random(),
		rsp: make([]byte, 0, 512), scratch: make([]byte, 0, 512),
		sendEndpoints: map[string]*sendEndpoint{}, receiveEndpoints: map[string]*receiveEndpoint{},
		receiverIDSeed: int64(rand.Uint64()), epochClock: epochMillis, events: events}
	d.conductor.onCommandFn = d.conductor.onCommand
	d.sender = sender{driverContext: &d.driverContext, conductor: &d.conductor, batch: udp.NewSendBatch(maxDatagramsPerSend)}
	d.receiver = receiver{driverContext: &d.driverContext, conductor: &d.conductor}
	if d.poller, err = udp.NewPoller(); err != nil {
		return nil, err
	}
	if err := d.createCnC(); err != nil {
		if d.cncData != nil {
			shm.Unmap(d.cncData)
		}
		if d.lossReport != nil {
			shm.Unmap(d.lossReport)
		}
		d.poller.Close()
		events.close()
		return nil, err
	}
	d.releaser = newLogReleaser()
	return d, nil
}

func d32Random() int32 { return int32(rand.Uint32()) }

func epochMillis() int64 { return time.Now().UnixMilli() }

// nanoClock is a monotonic clock in ns (the event log's timestamps).
func nanoClock() int64 { return int64(time.Since(clockBase)) }

var clockBase = time.Now()

// createCnC lays out cnc.dat and the loss report and signals the CnC
// ready, in the order of MediaDriver.Context.conclude.
func (d *Driver) createCnC() error {
	o := &d.opts
	lengths := cnc.Lengths{
		ToDriver:       o.ToDriverBufferLength,
		ToClients:      o.ToClientsBufferLength,
		CountersMeta:   counters.MetadataLength / counters.ValueLength * o.CountersBufferLength,
		CountersValues: o.CountersBufferLength,
		ErrorLog:       o.ErrorBufferLength,
	}
	path := filepath.Join(o.Dir, cnc.FileName)
	fileLength := lengths.FileLength(o.FilePageSize)
	data, err := createMapped(path, fileLength, o.FilePerm)
	if err != nil {
		return err
	}
	d.cncData = data
	now := time.Now()
	cnc.FillMetadata(data, lengths, cnc.Metadata{
		ClientLivenessTimeoutNs: int64(o.ClientLivenessTimeout),
		StartTimestampMs:        now.UnixMilli(),
		PID:                     int64(os.Getpid()),
		FilePageSize:            int32(o.FilePageSize),
	})
	s := lengths.Slice(data)
	freeToReuseMs := max(o.CounterFreeToReuseTimeout.Milliseconds(), 1)
	d.counters = counters.NewManager(s.CountersMeta, s.CountersValues, freeToReuseMs)
	d.values = s.CountersValues
	if err := d.allocateSystemCounters(now.UnixMilli()); err != nil {
		return err
	}
	if d.tx, err = broadcast.NewTransmitter(s.ToClients); err != nil {
		return err
	}
	if d.ring, err = ringbuffer.New(s.ToDriver); err != nil {
		return err
	}
	d.errors = errorlog.NewLog(s.ErrorLog)
	lossLength := max(shm.Align(o.LossReportBufferLength, o.FilePageSize), defaultLossReportLength)
	loss, err := createExclusive(filepath.Join(o.Dir, LossReportFile), o.FilePerm)
	if err != nil {
		return fmt.Errorf("aeron driver: create loss report: %w", err)
	}
	err = loss.Truncate(int64(lossLength))
	if err == nil {
		d.lossReport, err = syscall.Mmap(int(loss.Fd()), 0, lossLength, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	}
	loss.Close()
	if err != nil {
		return fmt.Errorf("aeron driver: size and map loss report: %w", err)
	}
	d.counters.SetValue(sysBytesCurrentlyMapped, int64(fileLength+lossLength))
	// The first id a client gets is 1, as with the real drivers.
	d.ring.NextCorrelationID()
	d.epochMs = now.UnixMilli()
	d.ring.SetConsumerHeartbeat(d.epochMs)
	cnc.SignalReady(data)
	return unix.Msync(data, unix.MS_SYNC)
}

func createMapped(path string, length int, perm os.FileMode) ([]byte, error) {
	f, err := createExclusive(path, perm)
	if err != nil {
		return nil, fmt.Errorf("aeron driver: create %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Truncate(int64(length)); err != nil {
		return nil, fmt.Errorf("aeron driver: size %s: %w", path, err)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, length, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("aeron driver: map %s: %w", path, err)
	}
	return data, nil
}

// allocateSystemCounters allocates counters 0..45 in order, then sets the
// version counters and the labels that name the threading mode.
func (d *Driver) allocateSystemCounters(nowMs int64) error {
	info := versionInfo()
	var key [4]byte
	for id := int32(0); id < numSystemCounters; id++ {
		label := systemCounterLabels[id]
		if n := len(label); n > 2 && label[n-2:] == "%v" {
			label = label[:n-2] + info
		}
		key[0], key[1], key[2], key[3] = byte(id), byte(id>>8), byte(id>>16), byte(id>>24)
		got, err := d.counters.Allocate(0, key[:], []byte(label), nowMs)
		if err != nil {
			return fmt.Errorf("aeron driver: system counters: %w", err)
		}
		if got != id {
			return fmt.Errorf("aeron driver: system counter %d got id %d", id, got)
		}
		d.counters.SetRegistrationID(id, int64(id))
		d.counters.SetOwnerID(id, -1)
	}
	d.counters.SetValue(sysAeronVersion, versionPacked)
	d.counters.SetValue(sysControlProtocolVersion, command.ControlProtocolVersion)
	mode := string(d.opts.ThreadingMode)
	d.counters.AppendLabel(sysConductorMaxCycleTime, []byte(": "+mode))
	d.counters.AppendLabel(sysConductorCycleThresholdExceeded,
		[]byte(": threshold="+formatDuration(d.opts.ConductorCycleThreshold)+" "+mode))
	d.counters.AppendLabel(sysSenderMaxCycleTime, []byte(": "+mode))
	d.counters.AppendLabel(sysSenderCycleThresholdExceeded,
		[]byte(": threshold="+formatDuration(d.opts.SenderCycleThreshold)+" "+mode))
	d.counters.AppendLabel(sysReceiverMaxCycleTime, []byte(": "+mode))
	d.counters.AppendLabel(sysReceiverCycleThresholdExceeded,
		[]byte(": threshold="+formatDuration(d.opts.ReceiverCycleThreshold)+" "+mode))
	d.counters.AppendLabel(sysNameResolverThresholdExceeded, []byte(": threshold="+formatDuration(d.opts.NameResolverThreshold)))
	var err error
	if d.senderPorts, err = parsePortRange(EnvName("aeron.sender.wildcard.port.range"), d.opts.SenderWildcardPortRange); err != nil {
		return fmt.Errorf("aeron driver: %w", err)
	}
	if d.receiverPorts, err = parsePortRange(EnvName("aeron.receiver.wildcard.port.range"), d.opts.ReceiverWildcardPortRange); err != nil {
		return fmt.Errorf("aeron driver: %w", err)
	}
	if err := d.conductor.initNameResolver(); err != nil {
		return err
	}
	return d.conductor.initDriverNameResolver(nowMs)
}

// formatDuration writes a duration as Agrona's SystemUtil.formatDuration
// does: the largest whole unit of s, ms, us, ns.
func formatDuration(d time.Duration) string {
	ns := int64(d)
	for _, u := range []struct {
		unit   int64
		suffix string
	}{{int64(time.Second), "s"}, {int64(time.Millisecond), "ms"}, {int64(time.Microsecond), "us"}} {
		if ns >= u.unit && ns%u.unit == 0 {
			return fmt.Sprint(ns/u.unit) + u.suffix
		}
	}
	return fmt.Sprint(ns) + "ns"
}

// Dir is the Aeron directory the driver owns.
func (d *Driver) Dir() string { return d.opts.Dir }

// DoWork runs one duty cycle of the driver — the sender's, the
// conductor's and the receiver's work, in that order, as one agent — and
// returns the work it did (0: nothing to do). nowNs is a monotonic clock reading in
// nanoseconds from any fixed origin that never goes back, the same origin
// for every call. It does not block and, in steady state, allocates
// nothing. Call it from one goroutine at a time, at least every
// millisecond or so while clients are active: commands wait for it, and a
// publisher's limit only moves when it runs.
func (d *Driver) DoWork(nowNs int64) int {
	if !d.started {
		d.onStart(nowNs)
	}
	d.nowNs = nowNs
	if d.clockDeadlineNs-nowNs < 0 {
		d.clockDeadlineNs = nowNs + int64(clockUpdateInterval)
		d.epochMs = d.epochClock()
	}
	if d.lastWorkNs != 0 {
		d.trackCycle(nowNs - d.lastWorkNs)
		d.lastWorkNs = 0
	}
	if d.poller.Armed() {
		d.disarmIfSpinning(nowNs)
	}
	work := 0
	// The sender goes first (the Java driver's shared agent runs the
	// conductor first): what an owner offered just before this call leaves
	// before the conductor's bookkeeping, so the least stands between an
	// offer and its datagram. Nothing the conductor does in a cycle
	// changes what the sender may send in it: snd-lmt comes from status
	// messages; a publication the conductor adds sends from the next cycle.
	if len(d.sender.publications)+len(d.sendEndpoints) > 0 {
		work += d.sender.doWork(nowNs)
	}
	work += d.conductor.doWork(nowNs)
	if len(d.receiver.endpoints)+len(d.receiver.images)+len(d.receiver.pendingSetups) > 0 {
		work += d.receiver.doWork(nowNs)
	}
	for _, img := range d.receiver.images {
		d.warmAhead(&img.log.terms, d.subPosition(img.hwm), img.bitsToShift, img.termLength)
	}
	if work > 0 {
		d.lastWorkNs = nowNs
	}
	return work
}

// trackCycle records how long a cycle that did work took, measured to the
// start of the next cycle (DutyCycleStallTracker: the maximum, and a count
// of cycles over the threshold), for each agent: one thread runs them all,
// so each agent's cycle is the thread's, as in the C driver's SHARED mode.
func (d *Driver) trackCycle(ns int64) {
	d.trackAgentCycle(ns, sysConductorMaxCycleTime, sysConductorCycleThresholdExceeded, d.opts.ConductorCycleThreshold)
	d.trackAgentCycle(ns, sysSenderMaxCycleTime, sysSenderCycleThresholdExceeded, d.opts.SenderCycleThreshold)
	d.trackAgentCycle(ns, sysReceiverMaxCycleTime, sysReceiverCycleThresholdExceeded, d.opts.ReceiverCycleThreshold)
}

func (d *Driver) trackAgentCycle(ns int64, maxID, exceededID int32, threshold time.Duration) {
	if ns > d.counters.Value(maxID) {
		d.counters.SetValue(maxID, ns)
	}
	if ns > int64(threshold) {
		d.counters.AddValue(exceededID, 1)
	}
}

// Deadline is the latest time (on DoWork's clock) by which DoWork must run
// again for the driver's timers (heartbeat, client liveness, and with UDP
// its SETUPs, heartbeats, status messages, NAKs and retransmits) to stay
// on schedule; an owner that parks may park until then (on WaitFD, so a
// datagram ends the park), but client commands, publication limits and
// data a publisher of another goroutine or process appends also wait for
// the next DoWork.
func (d *Driver) Deadline() int64 {
	if len(d.sender.publications)+len(d.receiver.images)+len(d.receiver.pendingSetups) == 0 {
		return d.timerDeadlineNs
	}
	return d.receiver.deadline(d.sender.deadline(d.timerDeadlineNs))
}

// Terminated reports whether a client asked the driver to stop with a
// TERMINATE_DRIVER command the TerminationValidator allowed.
func (d *Driver) Terminated() bool { return d.terminated.Load() }

// Close stops the driver as the real ones stop: every log is unmapped and
// deleted, the CnC heartbeat is set to −1 (clients read "driver shut
// down"), the files are unmapped, and with DirDeleteOnShutdown the
// directory is deleted. A Start-ed driver's goroutine is stopped first.
// Close is idempotent.
func (d *Driver) Close() error {
	if d.runner != nil {
		d.runner.stop()
	}
	if d.closed {
		return nil
	}
	d.closed = true
	defer d.conductor.events.close()
	var errs []error
	for _, e := range d.sendEndpoints {
		d.closeSendSockets(e)
	}
	for _, e := range d.receiveEndpoints {
		e.closeSockets()
	}
	d.poller.Close()
	if d.bells != nil {
		d.bells.close()
	}
	if d.nameResolver != nil {
		d.nameResolver.close()
	}
	logs := d.endOfLife
	for _, f := range d.releaser.stop() {
		logs = append(logs, f.log)
	}
	for _, p := range d.ipcPublications {
		logs = append(logs, p.log)
	}
	for _, p := range d.netPublications {
		logs = append(logs, p.log)
	}
	for _, img := range d.images {
		logs = append(logs, img.log)
	}
	d.ipcPublications, d.netPublications, d.images, d.endOfLife = nil, nil, nil, nil
	for _, l := range logs {
		if err := d.freeRawLog(l); err != nil {
			errs = append(errs, err)
		}
	}
	if d.lossReport != nil {
		if err := shm.Unmap(d.lossReport); err != nil {
			errs = append(errs, err)
		}
		d.lossReport = nil
	}
	d.ring.SetConsumerHeartbeat(-1)
	if err := unix.Msync(d.cncData, unix.MS_SYNC); err != nil {
		errs = append(errs, err)
	}
	if err := shm.Unmap(d.cncData); err != nil {
		errs = append(errs, err)
	}
	d.cncData = nil
	if d.opts.DirDeleteOnShutdown {
		if err := os.RemoveAll(d.opts.Dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// runner runs a driver's duty cycle on a goroutine locked to its OS
// thread (the Shared threading mode).
type runner struct {
	stopFlag atomic.Bool
	done     chan struct{}
	once     sync.Once
}

func (r *runner) stop() {
	r.once.Do(func() { r.stopFlag.Store(true) })
	<-r.done
}

// Start creates a driver like New and runs its duty cycle on a goroutine
// of its own, locked to an OS thread, idling with Options.Idle. An allowed
// TERMINATE_DRIVER stops the goroutine (then Done is closed; call Close);
// so does Close.
func Start(o Options) (*Driver, error) {
	if o.ThreadingMode == "" {
		o.ThreadingMode = Shared
	}
	defaultIdle := o.Idle == nil
	d, err := newDriver(o)
	if err != nil {
		return nil, err
	}
	idle := d.opts.Idle
	if b, ok := idle.(*aeron.BackoffIdle); ok && (defaultIdle || b.Park == nil) {
		// The Java driver's back-off, made for a locked thread, parking on
		// the UDP sockets (so a datagram ends a park at once) and deeper
		// when quiet (idle.go).
		tb := newThreadBackoff(d, b)
		tb.locked = true
		idle = tb
		if d.bells, err = newDoorbells(d.poller.FD()); err != nil {
			d.Close()
			return nil, fmt.Errorf("aeron driver: the wake-up eventfds: %w", err)
		}
	}
	bells := d.bells
	r := &runner{done: make(chan struct{})}
	d.runner = r
	pinned := make(chan error, 1)
	go func() {
		defer close(r.done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := pinThread(d.opts.CPUAffinity); err != nil {
			pinned <- err
			return
		}
		pinned <- nil
		start := time.Now()
		for !r.stopFlag.Load() && !d.terminated.Load() {
			if bells == nil {
				idle.Idle(d.DoWork(int64(time.Since(start))))
				continue
			}
			bells.beforeCycle()
			work := d.DoWork(int64(time.Since(start)))
			if work > 0 {
				bells.afterWork()
			}
			idle.Idle(work)
		}
	}()
	if err := <-pinned; err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// pinThread pins the calling (locked) thread to cpus; none: no change.
func pinThread(cpus []int) error {
	if len(cpus) == 0 {
		return nil
	}
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("aeron driver: pin the driver thread to CPUs %v: %w", cpus, err)
	}
	return nil
}

// park waits up to dt for a datagram on the driver's sockets (a locked
// thread's park, as aeron.ThreadSleep sleeps).
func (d *Driver) park(dt time.Duration) {
	d.PrepareToWait()
	b := d.bells
	if b != nil && !b.park() {
		return // a client offered since the last cycle: run another
	}
	if !d.poller.Park(dt) {
		aeron.ThreadSleep(dt)
	}
	if b != nil {
		b.unparked()
	}
}

// Done is closed when a Start-ed driver's goroutine has stopped (Close, or
// an allowed TERMINATE_DRIVER). nil for a New driver.
func (d *Driver) Done() <-chan struct{} {
	if d.runner == nil {
		return nil
	}
	return d.runner.done
}
