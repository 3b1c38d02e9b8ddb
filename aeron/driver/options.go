package driver

import (
	"errors"
	"fmt"
	"github.com/goblin-kv/goblin/internal/buildinfo"
	"io"
	"os"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/internal/broadcast"
	"github.com/goblin-kv/goblin/aeron/internal/counters"
	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/aeron/internal/ringbuffer"
)

// ErrInvalidOptions is wrapped by every configuration error.
var ErrInvalidOptions = errors.New("aeron driver: invalid options")

// ThreadingMode is how the driver's agents are run. goblin's driver has one
// agent today (the conductor; UDP adds a sender and a receiver), so the
// modes that give agents threads of their own run like Shared; the name is
// kept for the labels AeronStat shows and for aeronmd's command line.
type ThreadingMode string

// The threading modes (io.aeron.driver.ThreadingMode).
const (
	// Shared runs every agent on one goroutine locked to an OS thread
	// (Start).
	Shared ThreadingMode = "SHARED"
	// SharedNetwork and Dedicated are accepted and run like Shared.
	SharedNetwork ThreadingMode = "SHARED_NETWORK"
	Dedicated     ThreadingMode = "DEDICATED"
	// Invoker leaves the duty cycle to the owner, who calls DoWork (New).
	Invoker ThreadingMode = "INVOKER"
)

// FlowControlStrategy names a flow control strategy: max (the most
// advanced receiver sets the limit; Java's UnicastFlowControl and
// MaxMulticastFlowControl), min (the slowest) or tagged (the slowest of
// the receivers with the group tag).
type FlowControlStrategy string

// The flow control strategies.
const (
	FlowControlMax    FlowControlStrategy = "max"
	FlowControlMin    FlowControlStrategy = "min"
	FlowControlTagged FlowControlStrategy = "tagged"
)

// Options configure a Driver. The zero value works: it gives the Java
// driver's defaults (Configuration.java, 1.51), with private (0700/0600)
// files in the default Aeron directory. Durations and sizes of zero take the
// default named beside them.
type Options struct {
	// Dir is the Aeron directory (aeron.dir; default aeron.DefaultDir()).
	Dir string
	// DirDeleteOnStart deletes Dir at start without checking for a live
	// driver (aeron.dir.delete.on.start).
	DirDeleteOnStart bool
	// DirDeleteOnShutdown deletes Dir at Close (aeron.dir.delete.on.shutdown).
	DirDeleteOnShutdown bool
	// WarnIfDirExists reports an existing Dir through Warn
	// (aeron.dir.warn.if.exists).
	WarnIfDirExists bool
	// DriverTimeout is how old a CnC heartbeat may be for the driver that
	// wrote it to count as alive (aeron.driver.timeout; 10 s).
	DriverTimeout time.Duration

	// ThreadingMode is reported in the cycle-time counters' labels. Start
	// runs Shared (the default); New leaves the cycle to the owner and
	// reports Invoker.
	ThreadingMode ThreadingMode
	// Idle is the idle strategy of the goroutine Start runs (default the
	// Java driver's back-off: 10 spins, 20 yields, then sleeps from 1 µs
	// to 1 ms).
	Idle aeron.IdleStrategy
	// WakeOnOffer tells a Start-ed driver with the default idle strategy
	// that every client publishing or subscribing through it runs in this
	// process and calls Driver.Wake after it offers or consumes (goblin's
	// replication media drivers). Such a driver, once its duty cycle has
	// found nothing to do for 4 ms, parks longer (doubling to 8 ms, never
	// past its next timer) even with UDP endpoints and images, as one
	// without any does after 100 ms (idle.go): datagrams end a park on the
	// sockets, Wake ends it for its clients' offers and consumption. A
	// client of another process that offers would wait out the park.
	WakeOnOffer bool

	TimerInterval             time.Duration // aeron.timer.interval (1 s)
	ClientLivenessTimeout     time.Duration // aeron.client.liveness.timeout (10 s)
	PublicationUnblockTimeout time.Duration // aeron.publication.unblock.timeout (15 s)
	ImageLivenessTimeout      time.Duration // aeron.image.liveness.timeout (10 s): IPC reject cool-down
	PublicationLingerTimeout  time.Duration // aeron.publication.linger.timeout (5 s): recorded in logs
	// Untethered subscriptions: window-limit (5 s), linger (0: the
	// window-limit value in effect) and resting (10 s) timeouts
	// (aeron.untethered.*.timeout).
	UntetheredWindowLimitTimeout time.Duration
	UntetheredLingerTimeout      time.Duration
	UntetheredRestingTimeout     time.Duration
	// CounterFreeToReuseTimeout keeps a freed counter id out of use this
	// long (aeron.counters.free.to.reuse.timeout; 1 s).
	CounterFreeToReuseTimeout time.Duration
	// ConductorCycleThreshold counts conductor cycles longer than it
	// (aeron.driver.conductor.cycle.threshold; 100 ms).
	ConductorCycleThreshold time.Duration

	// SenderCycleThreshold and ReceiverCycleThreshold count the sender's
	// and the receiver's cycles longer than them
	// (aeron.driver.sender.cycle.threshold,
	// aeron.driver.receiver.cycle.threshold; 100 ms each). One thread runs
	// every agent, so each agent's cycle is the thread's.
	SenderCycleThreshold, ReceiverCycleThreshold time.Duration
	// CPUAffinity, when not empty, pins the thread Start runs the driver
	// on to these CPUs (aeron.conductor.cpu.affinity; the sender's and the
	// receiver's may name the same CPU only, as one thread runs them).
	CPUAffinity []int

	// UDP (the sender and the receiver).
	//
	// PublicationConnectionTimeout forgets a receiver that sent no status
	// message this long (aeron.publication.connection.timeout; 5 s).
	PublicationConnectionTimeout time.Duration
	// StatusMessageTimeout is the longest a receiver goes without sending
	// a status message (aeron.rcv.status.message.timeout; 200 ms).
	StatusMessageTimeout time.Duration
	// InitialWindowLength is the receiver window a subscription without
	// rcv-wnd advertises, at most half a term
	// (aeron.rcv.initial.window.length; 128 KiB).
	InitialWindowLength int
	// SocketRcvbuf and SocketSndbuf set SO_RCVBUF and SO_SNDBUF of
	// every UDP socket whose channel names no so-rcvbuf or so-sndbuf
	// (aeron.socket.so_rcvbuf 128 KiB, aeron.socket.so_sndbuf 0: the
	// OS default). SocketSndbuf −1 also means the OS default.
	SocketRcvbuf, SocketSndbuf int
	// MulticastTTL is the TTL of multicast sends whose channel has no
	// ttl= (aeron.socket.multicast.ttl; 0: the OS default).
	MulticastTTL int
	// NakUnicastDelay is how long a unicast receiver waits before it NAKs
	// a gap (aeron.nak.unicast.delay; 1 µs, the minimum), and
	// NakUnicastRetryDelayRatio times that between NAKs of one gap
	// (aeron.nak.unicast.retry.delay.ratio; 100).
	NakUnicastDelay           time.Duration
	NakUnicastRetryDelayRatio int
	// NakMulticastMaxBackoff and NakMulticastGroupSize shape the
	// randomised NAK delay of multicast receivers
	// (aeron.nak.multicast.max.backoff 10 ms, aeron.nak.multicast.group.size 10).
	NakMulticastMaxBackoff time.Duration
	NakMulticastGroupSize  int
	// RetransmitUnicastDelay delays a resend after a NAK
	// (aeron.retransmit.unicast.delay; 0: at once), and
	// RetransmitUnicastLinger ignores NAKs of a range resent this
	// recently (aeron.retransmit.unicast.linger; 10 ms).
	RetransmitUnicastDelay  time.Duration
	RetransmitUnicastLinger time.Duration
	// SendToStatusPollRatio: the sender reads status messages at least
	// every this many duty cycles that sent data
	// (aeron.send.to.status.poll.ratio; 6).
	SendToStatusPollRatio int
	// UnicastFlowControl and MulticastFlowControl are the flow control
	// of unicast channels and of multicast and multi-destination channels
	// without fc= (the C driver's AERON_UNICAST_FLOWCONTROL_SUPPLIER and
	// AERON_MULTICAST_FLOWCONTROL_SUPPLIER; "": max).
	UnicastFlowControl, MulticastFlowControl FlowControlStrategy
	// FlowControlGroupTag, FlowControlGroupMinSize and
	// FlowControlReceiverTimeout are the min and tagged strategies' group
	// tag (tagged only), required group size and receiver timeout when
	// fc= does not name them (aeron.flow.control.group.tag,
	// aeron.flow.control.group.min.size 0,
	// aeron.flow.control.receiver.timeout 5 s).
	FlowControlGroupTag        *int64
	FlowControlGroupMinSize    int
	FlowControlReceiverTimeout time.Duration
	// ReceiverGroupTag, when set, is the group tag of every receive
	// endpoint whose channel has no gtag= (aeron.receiver.group.tag).
	ReceiverGroupTag *int64

	// IncomingInterceptors names the C driver's test interceptors every
	// datagram read passes first, comma-separated: loss, fixed-loss,
	// multi-gap-loss (AERON_UDP_CHANNEL_INCOMING_INTERCEPTORS; "": none).
	// LossArgs, FixedLossArgs and MultiGapLossArgs are their arguments
	// as the C driver reads them (key=value|key=value;
	// AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_{LOSS,FIXED_LOSS,MULTI_GAP_LOSS}_ARGS):
	// loss: rate (0..1), seed, recv-msg-mask (hex, bit 1<<frame type);
	// fixed-loss: term-id, term-offset, length; multi-gap-loss: term-id,
	// gap-radix, gap-length, total-gaps. See docs/aeron.md.
	IncomingInterceptors                      string
	LossArgs, FixedLossArgs, MultiGapLossArgs string

	// NameResolver is the name resolver: "" or "default" (DNS and
	// /etc/hosts) or "csv_table", the C driver's test resolver, whose table
	// is NameResolverInitArgs: rows name,initialHost,reResolutionHost
	// separated by '|' (aeron.name.resolver.supplier,
	// aeron.name.resolver.init.args; resolution.go).
	NameResolver, NameResolverInitArgs string
	// EventLog and EventLogDisable name the events the event log writes
	// and leaves out, EventLogFilename the file it appends to (standard
	// output without one; EventLogOutput, when set, wins over both)
	// (aeron.event.log, aeron.event.log.disable, aeron.event.log.filename;
	// eventlog.go).
	EventLog, EventLogDisable, EventLogFilename string
	EventLogOutput                              io.Writer
	// ReResolutionCheckInterval is how often endpoints and control
	// addresses given by name are checked for re-resolution
	// (aeron.driver.reresolution.check.interval, 1 s).
	ReResolutionCheckInterval time.Duration
	// AsyncExecutorEnabled records aeron.driver.async.executor.enabled
	// (the Java and C default, true, runs name resolution on an executor
	// thread). This driver has no executor: with either value a host name
	// is resolved on the conductor, synchronously, as the C driver does
	// with false; only resolution's latency can tell the two apart.
	AsyncExecutorEnabled bool
	// NameResolverThreshold counts name resolutions (a lookup through the
	// resolver, csv_table row included) that take longer than it, beside
	// the longest one (system counters 32 and 33;
	// aeron.driver.name.resolver.threshold, 5 s).
	NameResolverThreshold time.Duration
	// The driver name resolver (driverresolver.go): this driver's name,
	// the host:port[/prefix] its resolver socket binds (set: the resolver
	// runs; aeron.driver.resolver.interface) and the comma-separated
	// host:port list of bootstrap neighbors, every one used, at most 20
	// (aeron.driver.resolver.name, .bootstrap.neighbor).
	ResolverName, ResolverInterface, ResolverBootstrapNeighbor string
	// SenderWildcardPortRange and ReceiverWildcardPortRange, "LOW HIGH",
	// are the ports sockets the driver would bind to port 0 take instead
	// (aeron.sender.wildcard.port.range, aeron.receiver.wildcard.port.range;
	// portmanager.go). Empty: the kernel picks.
	SenderWildcardPortRange, ReceiverWildcardPortRange string
	// The driver name resolver's timings (aeron.driver.resolver.*: neighbor
	// and cache entry timeout 10 s, self resolution 1 s, neighbor
	// resolution 2 s, bootstrap neighbor re-resolution 1 m).
	ResolverNeighborTimeout, ResolverSelfResolutionInterval       time.Duration
	ResolverNeighborResolutionInterval, ResolverBootstrapInterval time.Duration

	// Limits on what senders on the network can make the receiver
	// allocate: a SETUP for a wanted stream makes an image, a log of three
	// terms of the length the SETUP names, and anyone who can send a
	// datagram to a receive endpoint can send one (docs/aeron.md, "Trust
	// model"). A SETUP past a limit makes no image: the refusal goes to
	// the error log, and the sender is heard again once the limit allows.
	//
	// MaxImageTermLength is the longest term an image may have
	// (aeron.image.term.buffer.max.length; 64 MiB, a power of two from
	// 64 KiB to 1 GiB): a publication with longer terms gets no image.
	MaxImageTermLength int
	// MaxImagesLength bounds the bytes of all image logs together, from
	// an image's creation to the end of its life
	// (aeron.image.buffers.max.length; 1 GiB).
	MaxImagesLength int64
	// StreamSessionLimit is how many images (sessions) one stream of one
	// receive endpoint may have at once
	// (aeron.driver.stream.session.limit, AERON_DRIVER_STREAM_SESSION_LIMIT
	// as in the C driver; 1024 here, where the C and Java drivers have no
	// limit).
	StreamSessionLimit int

	TermLength               int // aeron.term.buffer.length (16 MiB): UDP publications
	IPCTermLength            int // aeron.ipc.term.buffer.length (64 MiB)
	MTU                      int // aeron.mtu.length (1408): UDP publications
	IPCMTU                   int // aeron.ipc.mtu.length (1408)
	PublicationTermWindow    int // aeron.publication.term.window.length (0: term/2)
	IPCPublicationTermWindow int // aeron.ipc.publication.term.window.length (0: term/2)
	FilePageSize             int // aeron.file.page.size (4 KiB)
	// DenseLogs allocates log files whole instead of sparse
	// (aeron.term.buffer.sparse.file=false).
	DenseLogs bool
	// NoStorageChecks skips the free-space check before creating a log
	// (aeron.perform.storage.checks=false).
	NoStorageChecks bool
	// LowStorageWarning reports (in the error log) a log
	// created when no more than this many bytes are left
	// (aeron.low.file.store.warning.threshold; 160 MiB).
	LowStorageWarning int64

	ToDriverBufferLength   int // aeron.conductor.buffer.length (1 MiB + 768)
	ToClientsBufferLength  int // aeron.clients.buffer.length (1 MiB + 128)
	CountersBufferLength   int // aeron.counters.buffer.length (8 MiB of values; metadata is 4×)
	ErrorBufferLength      int // aeron.error.buffer.length (4 MiB)
	LossReportBufferLength int // aeron.loss.report.buffer.length (1 MiB)
	// ResourceFreeLimit bounds the logs freed per cycle
	// (aeron.driver.resource.free.limit; 10).
	ResourceFreeLimit int
	// ReservedSessionIDLow..High are never handed out as automatic session
	// ids (aeron.publication.reserved.session.id.low/high; −1..1000). Both
	// zero means the default.
	ReservedSessionIDLow, ReservedSessionIDHigh int32
	// Untethered, NoRejoin and Unreliable flip the subscription defaults
	// (aeron.tether.subscriptions, aeron.rejoin.stream,
	// aeron.reliable.stream, all true in Aeron).
	Untethered, NoRejoin, Unreliable bool
	// SpiesSimulateConnection and MaxResend are recorded in logs
	// (aeron.spies.simulate.connection false, aeron.max.resend 16).
	SpiesSimulateConnection bool
	MaxResend               int

	// TerminationValidator decides whether a TERMINATE_DRIVER command with
	// this token stops the driver (aeron.driver.termination.validator).
	// nil refuses every request, as the real drivers do by default.
	TerminationValidator func(dir string, token []byte) bool
	// TerminationHook runs (on the driver's goroutine) when a request was
	// allowed. nil: Start's goroutine stops the driver; an embedded
	// driver does nothing.
	TerminationHook func()

	// DirPerm and FilePerm are the modes of the directories and files the
	// driver creates (0700 and 0600: only the driver's user may use it).
	DirPerm, FilePerm os.FileMode
	// Group, a group name or numeric gid, shares the driver with that
	// group, whose members' clients can then use it, as goblin's Java
	// driver launcher does: the directory belongs to the group, 02750
	// (setgid, so what the driver creates in it belongs to the group too),
	// and the files are 0660 unless DirPerm and FilePerm say otherwise.
	Group string

	// Warn receives the warnings the C driver prints to stderr while it
	// starts (directory exists, errors saved). nil drops them. Warnings
	// of a running driver (low storage, error frames) go to the CnC
	// error log only.
	Warn func(msg string)
	// ErrorHandler receives every error the conductor records in the CnC
	// error log (refused commands included). nil drops them.
	ErrorHandler func(error)
}

// Defaults, as in the Java driver's Configuration.java.
const (
	defaultDriverTimeout     = 10 * time.Second
	defaultTimerInterval     = time.Second
	defaultClientLiveness    = 10 * time.Second
	defaultUnblockTimeout    = 15 * time.Second
	defaultImageLiveness     = 10 * time.Second
	defaultLinger            = 5 * time.Second
	defaultUntetheredWindow  = 5 * time.Second
	defaultUntetheredResting = 10 * time.Second
	defaultFreeToReuse       = time.Second
	defaultCycleThreshold    = 100 * time.Millisecond
	defaultTermLength        = 16 << 20
	defaultIPCTermLength     = 64 << 20
	defaultMTU               = 1408
	maxUDPPayloadLength      = 65504
	defaultPageSize          = 4 << 10
	defaultLowStorageWarning = 160 << 20
	defaultToDriverLength    = 1<<20 + ringbuffer.TrailerLength
	defaultToClientsLength   = 1<<20 + broadcast.TrailerLength
	defaultCountersLength    = 8 << 20
	maxCountersLength        = 500 << 20
	defaultErrorLength       = 4 << 20
	defaultLossReportLength  = 1 << 20
	defaultResourceFreeLimit = 10
	defaultReservedLow       = -1
	defaultReservedHigh      = 1000
	defaultMaxResend         = 16
	maxResendLimit           = 256
	defaultDirPerm           = 0o700
	defaultFilePerm          = 0o600
	clockUpdateInterval      = time.Millisecond
	defaultIdleMaxSpins      = 10
	defaultIdleMaxYields     = 20
	defaultIdleMinPark       = time.Microsecond
	defaultIdleMaxPark       = time.Millisecond
	commandDrainLimit        = 1
	maxErrorMessageLength    = 1023

	defaultConnectionTimeout   = 5 * time.Second
	defaultSMTimeout           = 200 * time.Millisecond
	defaultSocketRcvbuf        = 128 << 10
	defaultNakUnicastDelay     = time.Microsecond
	minNakUnicastDelayNs       = int64(time.Microsecond)
	defaultNakRetryRatio       = 100
	defaultNakMulticastBackoff = 10 * time.Millisecond
	defaultNakMulticastGroup   = 10
	defaultRetransmitLinger    = 10 * time.Millisecond
	defaultSendToStatusRatio   = 6
	defaultMaxImageTermLength  = 64 << 20
	defaultMaxImagesLength     = 1 << 30
	defaultStreamSessionLimit  = 1024
)

// EnsureDefaults fills every zero field with its default.
func (o *Options) EnsureDefaults() {
	if o.Dir == "" {
		o.Dir = aeron.DefaultDir()
	}
	setDur := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	setInt := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	setDur(&o.DriverTimeout, defaultDriverTimeout)
	if o.ThreadingMode == "" {
		o.ThreadingMode = Shared
	}
	if o.Idle == nil {
		o.Idle = &aeron.BackoffIdle{MaxSpins: defaultIdleMaxSpins, MaxYields: defaultIdleMaxYields,
			MinPark: defaultIdleMinPark, MaxPark: defaultIdleMaxPark, Park: aeron.ThreadSleep}
	}
	setDur(&o.TimerInterval, defaultTimerInterval)
	setDur(&o.ReResolutionCheckInterval, time.Second)
	setDur(&o.NameResolverThreshold, 5*time.Second)
	setDur(&o.ResolverNeighborTimeout, 10*time.Second)
	setDur(&o.ResolverSelfResolutionInterval, time.Second)
	setDur(&o.ResolverNeighborResolutionInterval, 2*time.Second)
	setDur(&o.ResolverBootstrapInterval, time.Minute)
	setDur(&o.ClientLivenessTimeout, defaultClientLiveness)
	setDur(&o.PublicationUnblockTimeout, defaultUnblockTimeout)
	setDur(&o.ImageLivenessTimeout, defaultImageLiveness)
	setDur(&o.PublicationLingerTimeout, defaultLinger)
	setDur(&o.UntetheredWindowLimitTimeout, defaultUntetheredWindow)
	setDur(&o.UntetheredRestingTimeout, defaultUntetheredResting)
	setDur(&o.CounterFreeToReuseTimeout, defaultFreeToReuse)
	setDur(&o.ConductorCycleThreshold, defaultCycleThreshold)
	setDur(&o.SenderCycleThreshold, defaultCycleThreshold)
	setDur(&o.ReceiverCycleThreshold, defaultCycleThreshold)
	setDur(&o.PublicationConnectionTimeout, defaultConnectionTimeout)
	setDur(&o.StatusMessageTimeout, defaultSMTimeout)
	setInt(&o.InitialWindowLength, defaultInitialWindowLength)
	if o.SocketRcvbuf == 0 {
		o.SocketRcvbuf = defaultSocketRcvbuf
	}
	if o.SocketSndbuf < 0 {
		o.SocketSndbuf = 0
	}
	setDur(&o.NakUnicastDelay, defaultNakUnicastDelay)
	setInt(&o.NakUnicastRetryDelayRatio, defaultNakRetryRatio)
	setDur(&o.NakMulticastMaxBackoff, defaultNakMulticastBackoff)
	setInt(&o.NakMulticastGroupSize, defaultNakMulticastGroup)
	setDur(&o.RetransmitUnicastLinger, defaultRetransmitLinger)
	setInt(&o.SendToStatusPollRatio, defaultSendToStatusRatio)
	setInt(&o.MaxImageTermLength, defaultMaxImageTermLength)
	if o.MaxImagesLength <= 0 {
		o.MaxImagesLength = defaultMaxImagesLength
	}
	setInt(&o.StreamSessionLimit, defaultStreamSessionLimit)
	setInt(&o.TermLength, defaultTermLength)
	setInt(&o.IPCTermLength, defaultIPCTermLength)
	setInt(&o.MTU, defaultMTU)
	setInt(&o.IPCMTU, defaultMTU)
	setInt(&o.FilePageSize, defaultPageSize)
	if o.LowStorageWarning <= 0 {
		o.LowStorageWarning = defaultLowStorageWarning
	}
	setInt(&o.ToDriverBufferLength, defaultToDriverLength)
	setInt(&o.ToClientsBufferLength, defaultToClientsLength)
	setInt(&o.CountersBufferLength, defaultCountersLength)
	setInt(&o.ErrorBufferLength, defaultErrorLength)
	setInt(&o.LossReportBufferLength, defaultLossReportLength)
	setInt(&o.ResourceFreeLimit, defaultResourceFreeLimit)
	if o.ReservedSessionIDLow == 0 && o.ReservedSessionIDHigh == 0 {
		o.ReservedSessionIDLow, o.ReservedSessionIDHigh = defaultReservedLow, defaultReservedHigh
	}
	setInt(&o.MaxResend, defaultMaxResend)
	if o.DirPerm == 0 {
		o.DirPerm = defaultDirPerm
		if o.Group != "" {
			o.DirPerm = 0o750 | os.ModeSetgid
		}
	}
	if o.FilePerm == 0 {
		o.FilePerm = defaultFilePerm
		if o.Group != "" {
			o.FilePerm = 0o660
		}
	}
}

// Validate checks the options as the Java driver's Context.conclude does.
// Call EnsureDefaults first.
func (o *Options) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidOptions}, a...)...)
	}
	switch o.ThreadingMode {
	case Shared, SharedNetwork, Dedicated, Invoker:
	default:
		return bad("threading mode %q is not SHARED, SHARED_NETWORK, DEDICATED or INVOKER", o.ThreadingMode)
	}
	if o.PublicationUnblockTimeout <= o.ClientLivenessTimeout {
		return bad("publicationUnblockTimeoutNs=%d <= clientLivenessTimeoutNs=%d",
			o.PublicationUnblockTimeout.Nanoseconds(), o.ClientLivenessTimeout.Nanoseconds())
	}
	if o.ClientLivenessTimeout <= o.TimerInterval {
		return bad("clientLivenessTimeoutNs=%d <= timerIntervalNs=%d",
			o.ClientLivenessTimeout.Nanoseconds(), o.TimerInterval.Nanoseconds())
	}
	for _, t := range []struct {
		name string
		d    time.Duration
	}{{"untethered window limit timeout", o.UntetheredWindowLimitTimeout},
		{"untethered linger timeout", o.UntetheredLingerTimeout},
		{"untethered resting timeout", o.UntetheredRestingTimeout}} {
		if t.d != 0 && t.d <= o.TimerInterval {
			return bad("%s %v must be longer than the timer interval %v", t.name, t.d, o.TimerInterval)
		}
	}
	for _, t := range []struct {
		name string
		n    int
	}{{"aeron.term.buffer.length", o.TermLength}, {"aeron.ipc.term.buffer.length", o.IPCTermLength},
		{"aeron.image.term.buffer.max.length", o.MaxImageTermLength}} {
		if err := logbuffer.CheckTermLength(t.n); err != nil {
			return bad("%s: %v", t.name, err)
		}
	}
	for _, t := range []struct {
		name string
		n    int
	}{{"aeron.mtu.length", o.MTU}, {"aeron.ipc.mtu.length", o.IPCMTU}} {
		if err := checkMTU(t.n); err != nil {
			return bad("%s: %v", t.name, err)
		}
	}
	if err := logbuffer.CheckPageSize(o.FilePageSize); err != nil {
		return bad("aeron.file.page.size: %v", err)
	}
	if n := o.ToDriverBufferLength - ringbuffer.TrailerLength; n < 1<<20 || n&(n-1) != 0 {
		return bad("aeron.conductor.buffer.length %d must be a power of two of at least 1 MiB plus %d",
			o.ToDriverBufferLength, ringbuffer.TrailerLength)
	}
	if n := o.ToClientsBufferLength - broadcast.TrailerLength; n < 1<<20 || n&(n-1) != 0 {
		return bad("aeron.clients.buffer.length %d must be a power of two of at least 1 MiB plus %d",
			o.ToClientsBufferLength, broadcast.TrailerLength)
	}
	if o.CountersBufferLength%counters.ValueLength != 0 || o.CountersBufferLength > maxCountersLength {
		return bad("aeron.counters.buffer.length %d must be a multiple of %d up to %d",
			o.CountersBufferLength, counters.ValueLength, maxCountersLength)
	}
	if o.CountersBufferLength/counters.ValueLength < numSystemCounters {
		return bad("aeron.counters.buffer.length %d holds fewer than the %d system counters", o.CountersBufferLength, numSystemCounters)
	}
	if o.ErrorBufferLength < 1<<10 {
		return bad("aeron.error.buffer.length %d is too small", o.ErrorBufferLength)
	}
	if o.ReservedSessionIDLow > o.ReservedSessionIDHigh {
		return bad("reserved session id range %d..%d is empty", o.ReservedSessionIDLow, o.ReservedSessionIDHigh)
	}
	if o.SocketRcvbuf < 0 {
		return bad("aeron.socket.so_rcvbuf %d is negative", o.SocketRcvbuf)
	}
	if o.InitialWindowLength < o.MTU {
		return bad("aeron.rcv.initial.window.length %d is less than aeron.mtu.length %d", o.InitialWindowLength, o.MTU)
	}
	if o.NakUnicastDelay < time.Duration(minNakUnicastDelayNs) {
		return bad("aeron.nak.unicast.delay %v is below the minimum of 1us", o.NakUnicastDelay)
	}
	if o.MaxResend < 1 || o.MaxResend > maxResendLimit {
		return bad("aeron.max.resend %d must be 1..%d", o.MaxResend, maxResendLimit)
	}
	if o.DirPerm&0o700 != 0o700 || o.FilePerm&0o600 != 0o600 {
		return bad("the driver's own user needs rwx on directories and rw on files (got %v, %v)", o.DirPerm, o.FilePerm)
	}
	return nil
}

func checkMTU(n int) error {
	switch {
	case n <= logbuffer.HeaderLength:
		return fmt.Errorf("mtuLength=%d <= HEADER_LENGTH=%d", n, logbuffer.HeaderLength)
	case n > maxUDPPayloadLength:
		return fmt.Errorf("mtuLength=%d > MAX_UDP_PAYLOAD_LENGTH=%d", n, maxUDPPayloadLength)
	case n%logbuffer.FrameAlignment != 0:
		return fmt.Errorf("mtuLength=%d is not a multiple of FRAME_ALIGNMENT=%d", n, logbuffer.FrameAlignment)
	}
	return nil
}

// producerWindowLength is the publication window: half the term, or the
// configured window when it is smaller (Configuration.producerWindowLength).
func producerWindowLength(termLength, configured int) int {
	w := termLength / 2
	if configured != 0 {
		w = min(configured, w)
	}
	return w
}

// Version is the Aeron version this driver speaks (its protocol, CnC and
// log layouts), the driver version counter's value.
const Version = "1.51.0"

const versionPacked = 1<<16 | 51<<8 // 1.51.0 as major<<16 | minor<<8 | patch

// versionInfo is the text after "Errors: " and "Aeron software: " in the
// system counters' labels: the Aeron version spoken, and in place of the C
// driver's git commit, this build of goblin (Build).
func versionInfo() string {
	return "version=" + Version + " commit=" + Build()
}

// Build names this build of goblin from the binary's build information:
// goblin@<module version>, and +<VCS revision> (12 hex digits, -dirty
// when built from a modified tree) when the build recorded one, e.g.
// goblin@devel+2ed253b1a2c3 or goblin@v1.4.0.
func Build() string { return buildinfo.Read().Label() }
