package driver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/goblin-kv/goblin/aeron"
)

// Properties is driver configuration as the C media driver reads it: Java
// property names (aeron.dir) folded to environment variable names
// (AERON_DIR). The process environment is the base layer; -D definitions
// and properties files given to aeronmd override it, later ones winning,
// so a script that configures the C driver configures this one.
type Properties map[string]string

// EnvName is the environment variable a property name maps to: upper case,
// dots to underscores (aeron.socket.so_rcvbuf → AERON_SOCKET_SO_RCVBUF).
func EnvName(property string) string {
	return strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(property), ".", "_"))
}

// PropertiesFromEnv takes every AERON_* variable of environ (os.Environ()
// form) as the base layer.
func PropertiesFromEnv(environ []string) Properties {
	p := Properties{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "AERON_") {
			p[k] = v
		}
	}
	return p
}

// Set defines property name; an empty value removes it (as aeronmd unsets
// the variable).
func (p Properties) Set(name, value string) {
	if value == "" {
		delete(p, EnvName(name))
		return
	}
	p[EnvName(name)] = value
}

// Get returns the property given by its Java name.
func (p Properties) Get(name string) (string, bool) {
	v, ok := p[EnvName(name)]
	return v, ok
}

// ErrBadProperty wraps every error about a -D definition, a properties
// file or a property's value.
var ErrBadProperty = errors.New("aeron driver: bad configuration")

// Define applies one -D argument's text, "name=value" or "name:value" as
// one properties-file line.
func (p Properties) Define(def string) error {
	name, value, ok := splitProperty(def)
	if !ok {
		return fmt.Errorf("%w: malformed define %q (want name=value)", ErrBadProperty, def)
	}
	p.Set(name, value)
	return nil
}

func splitProperty(line string) (name, value string, ok bool) {
	i := strings.IndexAny(line, "=:")
	if i <= 0 {
		return "", "", false
	}
	name = strings.TrimSpace(line[:i])
	value = strings.TrimLeft(line[i+1:], " \t")
	return name, value, name != ""
}

// Load reads a properties file — a path, a file:// URL or an http(s)://
// URL fetched within 10 seconds — and applies its definitions: "name=value"
// or "name:value" lines, "#" and "!" comment lines, a trailing backslash
// continuing a line.
func (p Properties) Load(source string) error {
	var r io.Reader
	switch {
	case strings.HasPrefix(source, "http://") || strings.HasPrefix(source, "https://"):
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, source, nil)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrBadProperty, source, err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrBadProperty, source, err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%w: %s: HTTP %s", ErrBadProperty, source, resp.Status)
		}
		r = resp.Body
	default:
		f, err := os.Open(strings.TrimPrefix(source, "file://"))
		if err != nil {
			return fmt.Errorf("%w: %w", ErrBadProperty, err)
		}
		defer f.Close()
		r = f
	}
	sc := bufio.NewScanner(r)
	var pending strings.Builder
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimLeft(sc.Text(), " \t")
		if pending.Len() == 0 && (line == "" || line[0] == '#' || line[0] == '!') {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			pending.WriteString(strings.TrimSuffix(line, "\\"))
			continue
		}
		pending.WriteString(line)
		full := pending.String()
		pending.Reset()
		name, value, ok := splitProperty(full)
		if !ok {
			return fmt.Errorf("%w: %s:%d: %q is not name=value", ErrBadProperty, source, n, full)
		}
		p.Set(name, value)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrBadProperty, source, err)
	}
	return nil
}

// property describes one configuration property the driver reads.
type property struct {
	name  string
	help  string
	apply func(o *Options, v string) error
}

func durationProp(name, help string, field func(*Options) *time.Duration) property {
	return property{name, help, func(o *Options, v string) error {
		ns, err := parseDuration(name, v)
		if err != nil {
			return err
		}
		*field(o) = time.Duration(ns)
		return nil
	}}
}

func sizeProp(name, help string, field func(*Options) *int) property {
	return property{name, help, func(o *Options, v string) error {
		n, err := parseSize(name, v)
		if err != nil {
			return err
		}
		if n > 1<<31-1 {
			return fmt.Errorf("%s=%s does not fit an int32", name, v)
		}
		*field(o) = int(n)
		return nil
	}}
}

func boolProp(name, help string, field func(*Options) *bool, invert bool) property {
	return property{name, help, func(o *Options, v string) error {
		*field(o) = (v == "true") != invert
		return nil
	}}
}

// properties are the ones this driver reads, with their Java names.
var properties = []property{
	{"aeron.dir", "Aeron directory (default /dev/shm/aeron-<user>)", func(o *Options, v string) error { o.Dir = v; return nil }},
	boolProp("aeron.dir.delete.on.start", "delete the directory at start without checking for a live driver",
		func(o *Options) *bool { return &o.DirDeleteOnStart }, false),
	boolProp("aeron.dir.delete.on.shutdown", "delete the directory at shutdown",
		func(o *Options) *bool { return &o.DirDeleteOnShutdown }, false),
	boolProp("aeron.dir.warn.if.exists", "warn when the directory exists", func(o *Options) *bool { return &o.WarnIfDirExists }, false),
	{"aeron.driver.timeout", "ms a CnC heartbeat may age for its driver to count as alive (10000)", func(o *Options, v string) error {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms <= 0 {
			return fmt.Errorf("aeron.driver.timeout=%s is not a positive number of milliseconds", v)
		}
		o.DriverTimeout = time.Duration(ms) * time.Millisecond
		return nil
	}},
	{"aeron.threading.mode", "DEDICATED, SHARED_NETWORK, SHARED (all run as one thread) or INVOKER", func(o *Options, v string) error {
		o.ThreadingMode = ThreadingMode(strings.ToUpper(v))
		return nil
	}},
	{"aeron.conductor.idle.strategy", "idle strategy: backoff (default), spin, noop, yield, sleep-ns, sleep-ms", func(o *Options, v string) error {
		s, err := ParseIdleStrategy(v)
		o.Idle = s
		return err
	}},
	{"aeron.shared.idle.strategy", "idle strategy in SHARED mode (overrides aeron.conductor.idle.strategy)", func(o *Options, v string) error {
		s, err := ParseIdleStrategy(v)
		o.Idle = s
		return err
	}},
	durationProp("aeron.timer.interval", "heartbeat and liveness check period (1s)", func(o *Options) *time.Duration { return &o.TimerInterval }),
	durationProp("aeron.client.liveness.timeout", "client liveness timeout (10s)", func(o *Options) *time.Duration { return &o.ClientLivenessTimeout }),
	durationProp("aeron.publication.unblock.timeout", "unblock a stalled publisher after (15s)", func(o *Options) *time.Duration { return &o.PublicationUnblockTimeout }),
	durationProp("aeron.image.liveness.timeout", "image liveness timeout, the reject cool-down (10s)", func(o *Options) *time.Duration { return &o.ImageLivenessTimeout }),
	durationProp("aeron.publication.linger.timeout", "publication linger recorded in logs (5s)", func(o *Options) *time.Duration { return &o.PublicationLingerTimeout }),
	durationProp("aeron.untethered.window.limit.timeout", "untethered window limit timeout (5s)", func(o *Options) *time.Duration { return &o.UntetheredWindowLimitTimeout }),
	durationProp("aeron.untethered.linger.timeout", "untethered linger timeout (the window limit timeout)", func(o *Options) *time.Duration { return &o.UntetheredLingerTimeout }),
	durationProp("aeron.untethered.resting.timeout", "untethered resting timeout (10s)", func(o *Options) *time.Duration { return &o.UntetheredRestingTimeout }),
	durationProp("aeron.counters.free.to.reuse.timeout", "keep freed counter ids unused for (1s)", func(o *Options) *time.Duration { return &o.CounterFreeToReuseTimeout }),
	durationProp("aeron.driver.conductor.cycle.threshold", "count conductor cycles longer than (100ms)", func(o *Options) *time.Duration { return &o.ConductorCycleThreshold }),
	sizeProp("aeron.term.buffer.length", "UDP term length (16m)", func(o *Options) *int { return &o.TermLength }),
	sizeProp("aeron.image.term.buffer.max.length", "longest term an image may have (64m)", func(o *Options) *int { return &o.MaxImageTermLength }),
	{"aeron.image.buffers.max.length", "bytes of all image logs together (1g)", func(o *Options, v string) error {
		n, err := parseSize("aeron.image.buffers.max.length", v)
		o.MaxImagesLength = n
		return err
	}},
	{"aeron.driver.stream.session.limit", "images one stream of one receive endpoint may have (1024)", func(o *Options, v string) error {
		n, err := strconv.ParseInt(v, 10, 32)
		if err == nil && n < 1 {
			return fmt.Errorf("%d is not a positive number of sessions", n)
		}
		o.StreamSessionLimit = int(n)
		return err
	}},
	sizeProp("aeron.ipc.term.buffer.length", "IPC term length (64m)", func(o *Options) *int { return &o.IPCTermLength }),
	sizeProp("aeron.mtu.length", "UDP MTU (1408)", func(o *Options) *int { return &o.MTU }),
	sizeProp("aeron.ipc.mtu.length", "IPC MTU (1408)", func(o *Options) *int { return &o.IPCMTU }),
	sizeProp("aeron.publication.term.window.length", "UDP publication window (term/2)", func(o *Options) *int { return &o.PublicationTermWindow }),
	sizeProp("aeron.ipc.publication.term.window.length", "IPC publication window (term/2)", func(o *Options) *int { return &o.IPCPublicationTermWindow }),
	sizeProp("aeron.file.page.size", "file page size (4k)", func(o *Options) *int { return &o.FilePageSize }),
	boolProp("aeron.term.buffer.sparse.file", "sparse log files (true)", func(o *Options) *bool { return &o.DenseLogs }, true),
	boolProp("aeron.perform.storage.checks", "check free space before creating a log (true)", func(o *Options) *bool { return &o.NoStorageChecks }, true),
	{"aeron.low.file.store.warning.threshold", "warn when free space falls to (160m)", func(o *Options, v string) error {
		n, err := parseSize("aeron.low.file.store.warning.threshold", v)
		o.LowStorageWarning = n
		return err
	}},
	sizeProp("aeron.conductor.buffer.length", "to-driver buffer (1m + 768)", func(o *Options) *int { return &o.ToDriverBufferLength }),
	sizeProp("aeron.clients.buffer.length", "to-clients buffer (1m + 128)", func(o *Options) *int { return &o.ToClientsBufferLength }),
	sizeProp("aeron.counters.buffer.length", "counters values (8m; metadata is 4 times it)", func(o *Options) *int { return &o.CountersBufferLength }),
	sizeProp("aeron.error.buffer.length", "distinct error log (4m)", func(o *Options) *int { return &o.ErrorBufferLength }),
	sizeProp("aeron.loss.report.buffer.length", "loss report (1m)", func(o *Options) *int { return &o.LossReportBufferLength }),
	{"aeron.driver.resource.free.limit", "logs freed per cycle (10)", func(o *Options, v string) error {
		n, err := strconv.Atoi(v)
		o.ResourceFreeLimit = n
		return err
	}},
	{"aeron.publication.reserved.session.id.low", "lowest reserved session id (-1)", func(o *Options, v string) error {
		n, err := strconv.ParseInt(v, 10, 32)
		o.ReservedSessionIDLow = int32(n)
		return err
	}},
	{"aeron.publication.reserved.session.id.high", "highest reserved session id (1000)", func(o *Options, v string) error {
		n, err := strconv.ParseInt(v, 10, 32)
		o.ReservedSessionIDHigh = int32(n)
		return err
	}},
	boolProp("aeron.tether.subscriptions", "subscriptions tethered by default (true)", func(o *Options) *bool { return &o.Untethered }, true),
	boolProp("aeron.rejoin.stream", "untethered subscriptions rejoin by default (true)", func(o *Options) *bool { return &o.NoRejoin }, true),
	boolProp("aeron.reliable.stream", "reliable subscriptions by default (true; UDP only)", func(o *Options) *bool { return &o.Unreliable }, true),
	boolProp("aeron.spies.simulate.connection", "spies simulate a connection (false)", func(o *Options) *bool { return &o.SpiesSimulateConnection }, false),
	{"aeron.max.resend", "retransmit actions of a multicast or multi-destination publication (16)", func(o *Options, v string) error {
		n, err := strconv.Atoi(v)
		o.MaxResend = n
		return err
	}},
	{"aeron.print.configuration", "print the options at start (false)", func(o *Options, v string) error { return nil }},
	durationProp("aeron.publication.connection.timeout", "forget a receiver silent for (5s)", func(o *Options) *time.Duration { return &o.PublicationConnectionTimeout }),
	durationProp("aeron.rcv.status.message.timeout", "longest a receiver goes without a status message (200ms)", func(o *Options) *time.Duration { return &o.StatusMessageTimeout }),
	sizeProp("aeron.rcv.initial.window.length", "receiver window without rcv-wnd (128k)", func(o *Options) *int { return &o.InitialWindowLength }),
	sizeProp("aeron.socket.so_rcvbuf", "SO_RCVBUF of UDP sockets (128k)", func(o *Options) *int { return &o.SocketRcvbuf }),
	{"aeron.socket.so_sndbuf", "SO_SNDBUF of UDP sockets (0: the OS default)", func(o *Options, v string) error {
		n, err := parseSize("aeron.socket.so_sndbuf", v)
		o.SocketSndbuf = int(n)
		if err == nil && n == 0 {
			o.SocketSndbuf = -1
		}
		return err
	}},
	{"aeron.socket.multicast.ttl", "multicast TTL (0: the OS default)", func(o *Options, v string) error {
		n, err := strconv.Atoi(v)
		o.MulticastTTL = n
		return err
	}},
	durationProp("aeron.nak.unicast.delay", "unicast NAK delay (1us, the minimum)", func(o *Options) *time.Duration { return &o.NakUnicastDelay }),
	{"aeron.nak.unicast.retry.delay.ratio", "unicast NAK retry delay as a multiple of the delay (100)", func(o *Options, v string) error {
		n, err := strconv.Atoi(v)
		o.NakUnicastRetryDelayRatio = n
		return err
	}},
	durationProp("aeron.nak.multicast.max.backoff", "multicast NAK maximum back-off (10ms)", func(o *Options) *time.Duration { return &o.NakMulticastMaxBackoff }),
	{"aeron.nak.multicast.group.size", "multicast NAK group size guess (10)", func(o *Options, v string) error {
		n, err := strconv.Atoi(v)
		o.NakMulticastGroupSize = n
		return err
	}},
	durationProp("aeron.retransmit.unicast.delay", "delay of a resend after a NAK (0)", func(o *Options) *time.Duration { return &o.RetransmitUnicastDelay }),
	durationProp("aeron.retransmit.unicast.linger", "ignore NAKs of a range resent within (10ms)", func(o *Options) *time.Duration { return &o.RetransmitUnicastLinger }),
	{"aeron.send.to.status.poll.ratio", "sender duty cycles per status message read while sending (6)", func(o *Options, v string) error {
		n, err := strconv.Atoi(v)
		o.SendToStatusPollRatio = n
		return err
	}},
	{"aeron.receiver.group.tag", "group tag of receive endpoints without gtag= (unset)", func(o *Options, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		o.ReceiverGroupTag = &n
		return err
	}},
	durationProp("aeron.driver.sender.cycle.threshold", "count sender cycles longer than (100ms)", func(o *Options) *time.Duration { return &o.SenderCycleThreshold }),
	durationProp("aeron.driver.receiver.cycle.threshold", "count receiver cycles longer than (100ms)", func(o *Options) *time.Duration { return &o.ReceiverCycleThreshold }),
	{"aeron.conductor.cpu.affinity", "pin the driver's thread to this CPU (-1: none)", func(o *Options, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < -1 {
			return fmt.Errorf("%q is not a CPU number or -1", v)
		}
		o.CPUAffinity = nil
		if n >= 0 {
			o.CPUAffinity = []int{n}
		}
		return nil
	}},
	agentCPUProp("aeron.sender.cpu.affinity"),
	agentCPUProp("aeron.receiver.cpu.affinity"),
	agentIdleProp("aeron.sender.idle.strategy"),
	agentIdleProp("aeron.receiver.idle.strategy"),
	agentIdleProp("aeron.sharednetwork.idle.strategy"),
	{"aeron.unicast.flowcontrol.supplier", "flow control of unicast channels: unicast_max (default), multicast_min, multicast_tagged, or the C function names", func(o *Options, v string) error {
		s, err := flowControlSupplier(v)
		o.UnicastFlowControl = s
		return err
	}},
	{"aeron.multicast.flowcontrol.supplier", "flow control of multicast channels without fc=: multicast_max (default), multicast_min, multicast_tagged, or the C function names", func(o *Options, v string) error {
		s, err := flowControlSupplier(v)
		o.MulticastFlowControl = s
		return err
	}},
	{"aeron.flow.control.group.tag", "group tag of tagged flow control without g: (unset)", func(o *Options, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		o.FlowControlGroupTag = &n
		return err
	}},
	{"aeron.flow.control.group.min.size", "receivers min and tagged flow control wait for (0)", func(o *Options, v string) error {
		n, err := strconv.ParseInt(v, 10, 32)
		if err == nil && n < 0 {
			return fmt.Errorf("%d is negative", n)
		}
		o.FlowControlGroupMinSize = int(n)
		return err
	}},
	durationProp("aeron.flow.control.receiver.timeout", "min and tagged flow control forget a receiver silent for (5s)", func(o *Options) *time.Duration { return &o.FlowControlReceiverTimeout }),
	{"aeron.enable.experimental.features", "true or false: no feature is experimental in 1.51 (C gates none either)", func(o *Options, v string) error {
		return nil
	}},
	{"aeron.driver.async.executor.enabled", "true or false; either way name resolution runs on the conductor (no executor thread)", func(o *Options, v string) error {
		if v != "true" && v != "false" {
			return fmt.Errorf("want true or false")
		}
		o.AsyncExecutorEnabled = v == "true"
		return nil
	}},
	onlyValueProp("aeron.driver.connect", "true", "unicast send sockets are always connected, as the C driver's with true"),
	onlyValueProp("aeron.receiver.group.consideration", "INFER", "group semantics are inferred from the channel"),
	onlyValueProp("aeron.congestioncontrol.supplier", "aeron_congestion_control_default_strategy_supplier", "static window congestion control only"),
	onlyValueProp("aeron.udp.channel.transport.bindings.media", "default", "the kernel's UDP sockets only"),
	onlyValueProp("aeron.conductor.udp.channel.transport.bindings.media", "default", "the kernel's UDP sockets only"),
	{"aeron.name.resolver.supplier", "default (DNS and /etc/hosts), csv_table (the C driver's test table) or driver (the driver name resolver; needs aeron.driver.resolver.interface)", func(o *Options, v string) error {
		switch v {
		case "default", "aeron_default_name_resolver_supplier":
			o.NameResolver = "default"
		case "csv_table", "aeron_csv_table_name_resolver_supplier":
			o.NameResolver = "csv_table"
		case "driver", "aeron_driver_name_resolver_supplier":
			o.NameResolver = "driver"
		default:
			return fmt.Errorf("%s: not supported by this driver unless default, csv_table or driver: %s",
				EnvName("aeron.name.resolver.supplier"), v)
		}
		return nil
	}},
	{"aeron.event.log", "events to log: names, admin, all, ids or a 0x mask, comma separated (client commands and responses are written)", func(o *Options, v string) error {
		var check [len(agentEventNames)]bool
		o.EventLog = v
		return setEvents(&check, v, true)
	}},
	{"aeron.event.log.disable", "events not to log, as aeron.event.log names them", func(o *Options, v string) error {
		var check [len(agentEventNames)]bool
		o.EventLogDisable = v
		return setEvents(&check, v, false)
	}},
	{"aeron.event.log.filename", "file the event log is appended to (standard output)", func(o *Options, v string) error {
		o.EventLogFilename = v
		return nil
	}},
	{"aeron.driver.resolver.name", "this driver's name for the driver name resolver", func(o *Options, v string) error {
		o.ResolverName = v
		return nil
	}},
	{"aeron.driver.resolver.interface", "host:port[/prefix] the driver name resolver binds; set, the resolver runs", func(o *Options, v string) error {
		o.ResolverInterface = v
		return nil
	}},
	{"aeron.driver.resolver.bootstrap.neighbor", "driver name resolver: host:port[,host:port...] of the bootstrap neighbors (at most 20)", func(o *Options, v string) error {
		o.ResolverBootstrapNeighbor = v
		return nil
	}},
	{"aeron.sender.wildcard.port.range", "\"LOW HIGH\": ports for a publication's control address given with port 0", func(o *Options, v string) error {
		if _, err := parsePortRange(EnvName("aeron.sender.wildcard.port.range"), v); err != nil {
			return err
		}
		o.SenderWildcardPortRange = v
		return nil
	}},
	{"aeron.receiver.wildcard.port.range", "\"LOW HIGH\": ports for subscription endpoints (and the resolver) given with port 0", func(o *Options, v string) error {
		if _, err := parsePortRange(EnvName("aeron.receiver.wildcard.port.range"), v); err != nil {
			return err
		}
		o.ReceiverWildcardPortRange = v
		return nil
	}},
	{"aeron.name.resolver.init.args", "csv_table rows name,initialHost,reResolutionHost separated by |", func(o *Options, v string) error {
		o.NameResolverInitArgs = v
		return nil
	}},
	durationProp("aeron.driver.reresolution.check.interval", "how often names are checked for re-resolution (1s)", func(o *Options) *time.Duration { return &o.ReResolutionCheckInterval }),
	durationProp("aeron.driver.name.resolver.threshold", "count name resolutions longer than (5s)", func(o *Options) *time.Duration { return &o.NameResolverThreshold }),
	durationProp("aeron.driver.resolver.neighbor.timeout", "driver name resolver: forget a silent neighbor after (10s)", func(o *Options) *time.Duration { return &o.ResolverNeighborTimeout }),
	durationProp("aeron.driver.resolver.self.resolution.interval", "driver name resolver: self resolution period (1s)", func(o *Options) *time.Duration { return &o.ResolverSelfResolutionInterval }),
	durationProp("aeron.driver.resolver.neighbor.resolution.interval", "driver name resolver: neighbor resolution period (2s)", func(o *Options) *time.Duration { return &o.ResolverNeighborResolutionInterval }),
	durationProp("aeron.driver.resolver.bootstrap.neighbor.resolution.interval", "driver name resolver: bootstrap re-resolution period (1m)", func(o *Options) *time.Duration { return &o.ResolverBootstrapInterval }),
	{"aeron.udp.channel.incoming.interceptors", "test interceptors every datagram read passes: loss, fixed-loss, multi-gap-loss (comma-separated)", func(o *Options, v string) error {
		o.IncomingInterceptors = v
		return nil
	}},
	{"aeron.udp.channel.transport.bindings.loss.args", "loss interceptor: rate=R|seed=S|recv-msg-mask=0xM", func(o *Options, v string) error {
		o.LossArgs = v
		return nil
	}},
	{"aeron.udp.channel.transport.bindings.fixed.loss.args", "fixed-loss interceptor: term-id=T|term-offset=O|length=L", func(o *Options, v string) error {
		o.FixedLossArgs = v
		return nil
	}},
	{"aeron.udp.channel.transport.bindings.multi.gap.loss.args", "multi-gap-loss interceptor: term-id=T|gap-radix=R|gap-length=L|total-gaps=N", func(o *Options, v string) error {
		o.MultiGapLossArgs = v
		return nil
	}},
	{"aeron.driver.termination.validator", "allow or deny (default) TERMINATE_DRIVER requests", func(o *Options, v string) error {
		switch v {
		case "allow", "io.aeron.driver.DefaultAllowTerminationValidator":
			o.TerminationValidator = func(string, []byte) bool { return true }
		case "deny", "io.aeron.driver.DefaultDenyTerminationValidator":
			o.TerminationValidator = nil
		default:
			return fmt.Errorf("aeron.driver.termination.validator=%s is not allow or deny", v)
		}
		return nil
	}},
}

// Options turns the properties into driver options; properties this
// driver does not use are ignored, as the real drivers ignore unknown
// ones. The shared idle strategy wins over the conductor's (it comes
// later in the table), as in SHARED mode.
func (p Properties) Options() (Options, error) {
	var o Options
	if err := p.refuseUnsupported(); err != nil {
		return o, err
	}
	for _, prop := range properties {
		v, ok := p.Get(prop.name)
		if !ok || v == "@null" {
			continue
		}
		if err := prop.apply(&o, v); err != nil {
			return o, fmt.Errorf("%w: %s=%s (%s): %w", ErrBadProperty, prop.name, v, EnvName(prop.name), err)
		}
	}
	// One thread runs every agent: the sender's and the receiver's CPU
	// may only be the conductor's.
	for _, name := range []string{"aeron.sender.cpu.affinity", "aeron.receiver.cpu.affinity"} {
		v, ok := p.Get(name)
		if !ok || v == "@null" || v == "-1" {
			continue
		}
		if n, _ := strconv.Atoi(v); len(o.CPUAffinity) != 1 || o.CPUAffinity[0] != n {
			return o, fmt.Errorf("%w: %s: not supported by this driver unless it names the conductor's CPU "+
				"(one thread runs every agent; set AERON_CONDUCTOR_CPU_AFFINITY)", ErrBadProperty, EnvName(name))
		}
	}
	return o, nil
}

// refuseUnsupported refuses the first (by name) of the C driver's
// variables this driver does not support.
func (p Properties) refuseUnsupported() error {
	var names []string
	for name := range p {
		if _, ok := refusedVariables[name]; ok && p[name] != "@null" {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	return fmt.Errorf("%w: %s: not supported by this driver (%s)", ErrBadProperty, names[0], refusedVariables[names[0]])
}

// agentCPUProp is the sender's or the receiver's CPU affinity: parsed
// here, checked against the conductor's in Options.
func agentCPUProp(name string) property {
	return property{name, "the conductor's CPU or -1 (one thread runs every agent)", func(o *Options, v string) error {
		if n, err := strconv.Atoi(v); err != nil || n < -1 {
			return fmt.Errorf("%q is not a CPU number or -1", v)
		}
		return nil
	}}
}

// agentIdleProp is the sender's, the receiver's or the shared-network
// idle strategy: the name must be one ParseIdleStrategy knows; one thread
// runs every agent, with the conductor's (or shared) strategy, as the C
// driver's SHARED mode does not use these.
func agentIdleProp(name string) property {
	return property{name, "checked; one thread runs every agent with aeron.shared.idle.strategy", func(o *Options, v string) error {
		_, err := ParseIdleStrategy(v)
		return err
	}}
}

// onlyValueProp is a C driver variable of which this driver supports one
// value, the one it behaves as: any other is refused.
func onlyValueProp(name, value, why string) property {
	return property{name, "only " + value + ": " + why, func(o *Options, v string) error {
		if v != value {
			return fmt.Errorf("%s: not supported by this driver unless %s (%s)", EnvName(name), value, why)
		}
		return nil
	}}
}

// flowControlSupplier maps the C driver's flow control supplier names (the
// table names and the function names aeron_flow_control_strategy_supplier_load
// accepts) to the strategies.
func flowControlSupplier(v string) (FlowControlStrategy, error) {
	switch v {
	case "unicast_max", "multicast_max", "aeron_unicast_flow_control_strategy_supplier",
		"aeron_max_multicast_flow_control_strategy_supplier":
		return FlowControlMax, nil
	case "multicast_min", "aeron_min_flow_control_strategy_supplier":
		return FlowControlMin, nil
	case "multicast_tagged", "aeron_tagged_flow_control_strategy_supplier":
		return FlowControlTagged, nil
	}
	return "", fmt.Errorf("unknown flow control supplier %q (unicast_max, multicast_max, multicast_min, multicast_tagged)", v)
}

// refusedVariables are the C driver's variables this driver does not
// support, with why: setting one stops the driver at start, naming it,
// rather than leaving it without effect.
var refusedVariables = map[string]string{
	"AERON_AGENT_ON_START_FUNCTION":                       "no dynamic libraries",
	"AERON_DRIVER_DYNAMIC_LIBRARIES":                      "no dynamic libraries",
	"AERON_CONDUCTOR_IDLE_STRATEGY_INIT_ARGS":             "idle strategies take no arguments",
	"AERON_SENDER_IDLE_STRATEGY_INIT_ARGS":                "idle strategies take no arguments",
	"AERON_RECEIVER_IDLE_STRATEGY_INIT_ARGS":              "idle strategies take no arguments",
	"AERON_SHARED_IDLE_STRATEGY_INIT_ARGS":                "idle strategies take no arguments",
	"AERON_SHAREDNETWORK_IDLE_STRATEGY_INIT_ARGS":         "idle strategies take no arguments",
	"AERON_DRIVER_ASYNC_EXECUTOR_IDLE_STRATEGY":           "no async executor: name resolution runs on the conductor",
	"AERON_DRIVER_ASYNC_EXECUTOR_IDLE_STRATEGY_INIT_ARGS": "no async executor: name resolution runs on the conductor",
	"AERON_CUBICCONGESTIONCONTROL_INITIALRTT":             "static window congestion control only",
	"AERON_CUBICCONGESTIONCONTROL_MEASURERTT":             "static window congestion control only",
	"AERON_CUBICCONGESTIONCONTROL_TCPMODE":                "static window congestion control only",
	"AERON_DEBUG_RECEIVE_CONTROL_LOSS_RATE":               "no debug channel endpoints; use the loss interceptors",
	"AERON_DEBUG_RECEIVE_CONTROL_LOSS_SEED":               "no debug channel endpoints; use the loss interceptors",
	"AERON_DEBUG_RECEIVE_DATA_LOSS_RATE":                  "no debug channel endpoints; use the loss interceptors",
	"AERON_DEBUG_RECEIVE_DATA_LOSS_SEED":                  "no debug channel endpoints; use the loss interceptors",
	"AERON_DEBUG_SEND_CONTROL_LOSS_RATE":                  "no debug channel endpoints; use the loss interceptors",
	"AERON_DEBUG_SEND_CONTROL_LOSS_SEED":                  "no debug channel endpoints; use the loss interceptors",
	"AERON_DEBUG_SEND_DATA_LOSS_RATE":                     "no debug channel endpoints; use the loss interceptors",
	"AERON_DEBUG_SEND_DATA_LOSS_SEED":                     "no debug channel endpoints; use the loss interceptors",
	"AERON_NETWORK_PUBLICATION_MAX_MESSAGES_PER_SEND":     "the sender's batch is fixed",
	"AERON_RECEIVER_IO_VECTOR_CAPACITY":                   "the receiver's batch is fixed",
	"AERON_SENDER_IO_VECTOR_CAPACITY":                     "the sender's batch is fixed",
	"AERON_UDP_CHANNEL_OUTGOING_INTERCEPTORS":             "no outgoing interceptors (the incoming loss interceptors are supported)",
}

// CDriverVariables are the environment variables the C media driver
// (aeronmd 1.51.0) reads: every *_ENV_VAR of aeron-driver/src/main/c that
// its .c files use, and the client's that the driver reads. Each is
// applied (a property this driver reads) or refused (refusedVariables).
var CDriverVariables = []string{
	"AERON_AGENT_ON_START_FUNCTION",
	"AERON_CLIENTS_BUFFER_LENGTH",
	"AERON_CLIENT_LIVENESS_TIMEOUT",
	"AERON_CONDUCTOR_BUFFER_LENGTH",
	"AERON_CONDUCTOR_CPU_AFFINITY",
	"AERON_CONDUCTOR_IDLE_STRATEGY",
	"AERON_CONDUCTOR_IDLE_STRATEGY_INIT_ARGS",
	"AERON_CONDUCTOR_UDP_CHANNEL_TRANSPORT_BINDINGS_MEDIA",
	"AERON_CONGESTIONCONTROL_SUPPLIER",
	"AERON_COUNTERS_BUFFER_LENGTH",
	"AERON_COUNTERS_FREE_TO_REUSE_TIMEOUT",
	"AERON_CUBICCONGESTIONCONTROL_INITIALRTT",
	"AERON_CUBICCONGESTIONCONTROL_MEASURERTT",
	"AERON_CUBICCONGESTIONCONTROL_TCPMODE",
	"AERON_DEBUG_RECEIVE_CONTROL_LOSS_RATE",
	"AERON_DEBUG_RECEIVE_CONTROL_LOSS_SEED",
	"AERON_DEBUG_RECEIVE_DATA_LOSS_RATE",
	"AERON_DEBUG_RECEIVE_DATA_LOSS_SEED",
	"AERON_DEBUG_SEND_CONTROL_LOSS_RATE",
	"AERON_DEBUG_SEND_CONTROL_LOSS_SEED",
	"AERON_DEBUG_SEND_DATA_LOSS_RATE",
	"AERON_DEBUG_SEND_DATA_LOSS_SEED",
	"AERON_DIR",
	"AERON_DIR_DELETE_ON_SHUTDOWN",
	"AERON_DIR_DELETE_ON_START",
	"AERON_DIR_WARN_IF_EXISTS",
	"AERON_DRIVER_ASYNC_EXECUTOR_ENABLED",
	"AERON_DRIVER_ASYNC_EXECUTOR_IDLE_STRATEGY",
	"AERON_DRIVER_ASYNC_EXECUTOR_IDLE_STRATEGY_INIT_ARGS",
	"AERON_DRIVER_CONDUCTOR_CYCLE_THRESHOLD",
	"AERON_DRIVER_CONNECT",
	"AERON_DRIVER_DYNAMIC_LIBRARIES",
	"AERON_DRIVER_NAME_RESOLVER_THRESHOLD",
	"AERON_DRIVER_RECEIVER_CYCLE_THRESHOLD",
	"AERON_DRIVER_RERESOLUTION_CHECK_INTERVAL",
	"AERON_DRIVER_RESOLVER_BOOTSTRAP_NEIGHBOR",
	"AERON_DRIVER_RESOLVER_BOOTSTRAP_NEIGHBOR_RESOLUTION_INTERVAL",
	"AERON_DRIVER_RESOLVER_INTERFACE",
	"AERON_DRIVER_RESOLVER_NAME",
	"AERON_DRIVER_RESOLVER_NEIGHBOR_RESOLUTION_INTERVAL",
	"AERON_DRIVER_RESOLVER_NEIGHBOR_TIMEOUT",
	"AERON_DRIVER_RESOLVER_SELF_RESOLUTION_INTERVAL",
	"AERON_DRIVER_RESOURCE_FREE_LIMIT",
	"AERON_DRIVER_SENDER_CYCLE_THRESHOLD",
	"AERON_DRIVER_STREAM_SESSION_LIMIT",
	"AERON_DRIVER_TERMINATION_VALIDATOR",
	"AERON_DRIVER_TIMEOUT",
	"AERON_ENABLE_EXPERIMENTAL_FEATURES",
	"AERON_ERROR_BUFFER_LENGTH",
	"AERON_EVENT_LOG",
	"AERON_EVENT_LOG_DISABLE",
	"AERON_EVENT_LOG_FILENAME",
	"AERON_FILE_PAGE_SIZE",
	"AERON_FLOW_CONTROL_GROUP_MIN_SIZE",
	"AERON_FLOW_CONTROL_GROUP_TAG",
	"AERON_FLOW_CONTROL_RECEIVER_TIMEOUT",
	"AERON_IMAGE_LIVENESS_TIMEOUT",
	"AERON_IPC_MTU_LENGTH",
	"AERON_IPC_PUBLICATION_TERM_WINDOW_LENGTH",
	"AERON_IPC_TERM_BUFFER_LENGTH",
	"AERON_LOSS_REPORT_BUFFER_LENGTH",
	"AERON_LOW_FILE_STORE_WARNING_THRESHOLD",
	"AERON_MAX_RESEND",
	"AERON_MTU_LENGTH",
	"AERON_MULTICAST_FLOWCONTROL_SUPPLIER",
	"AERON_NAK_MULTICAST_GROUP_SIZE",
	"AERON_NAK_MULTICAST_MAX_BACKOFF",
	"AERON_NAK_UNICAST_DELAY",
	"AERON_NAK_UNICAST_RETRY_DELAY_RATIO",
	"AERON_NAME_RESOLVER_INIT_ARGS",
	"AERON_NAME_RESOLVER_SUPPLIER",
	"AERON_NETWORK_PUBLICATION_MAX_MESSAGES_PER_SEND",
	"AERON_PERFORM_STORAGE_CHECKS",
	"AERON_PRINT_CONFIGURATION",
	"AERON_PUBLICATION_CONNECTION_TIMEOUT",
	"AERON_PUBLICATION_LINGER_TIMEOUT",
	"AERON_PUBLICATION_RESERVED_SESSION_ID_HIGH",
	"AERON_PUBLICATION_RESERVED_SESSION_ID_LOW",
	"AERON_PUBLICATION_TERM_WINDOW_LENGTH",
	"AERON_PUBLICATION_UNBLOCK_TIMEOUT",
	"AERON_RCV_INITIAL_WINDOW_LENGTH",
	"AERON_RCV_STATUS_MESSAGE_TIMEOUT",
	"AERON_RECEIVER_CPU_AFFINITY",
	"AERON_RECEIVER_GROUP_CONSIDERATION",
	"AERON_RECEIVER_GROUP_TAG",
	"AERON_RECEIVER_IDLE_STRATEGY",
	"AERON_RECEIVER_IDLE_STRATEGY_INIT_ARGS",
	"AERON_RECEIVER_IO_VECTOR_CAPACITY",
	"AERON_RECEIVER_WILDCARD_PORT_RANGE",
	"AERON_REJOIN_STREAM",
	"AERON_RELIABLE_STREAM",
	"AERON_RETRANSMIT_UNICAST_DELAY",
	"AERON_RETRANSMIT_UNICAST_LINGER",
	"AERON_SENDER_CPU_AFFINITY",
	"AERON_SENDER_IDLE_STRATEGY",
	"AERON_SENDER_IDLE_STRATEGY_INIT_ARGS",
	"AERON_SENDER_IO_VECTOR_CAPACITY",
	"AERON_SENDER_WILDCARD_PORT_RANGE",
	"AERON_SEND_TO_STATUS_POLL_RATIO",
	"AERON_SHAREDNETWORK_IDLE_STRATEGY",
	"AERON_SHAREDNETWORK_IDLE_STRATEGY_INIT_ARGS",
	"AERON_SHARED_IDLE_STRATEGY",
	"AERON_SHARED_IDLE_STRATEGY_INIT_ARGS",
	"AERON_SOCKET_MULTICAST_TTL",
	"AERON_SOCKET_SO_RCVBUF",
	"AERON_SOCKET_SO_SNDBUF",
	"AERON_SPIES_SIMULATE_CONNECTION",
	"AERON_TERM_BUFFER_LENGTH",
	"AERON_TERM_BUFFER_SPARSE_FILE",
	"AERON_TETHER_SUBSCRIPTIONS",
	"AERON_THREADING_MODE",
	"AERON_TIMER_INTERVAL",
	"AERON_UDP_CHANNEL_INCOMING_INTERCEPTORS",
	"AERON_UDP_CHANNEL_OUTGOING_INTERCEPTORS",
	"AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_FIXED_LOSS_ARGS",
	"AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_LOSS_ARGS",
	"AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_MEDIA",
	"AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_MULTI_GAP_LOSS_ARGS",
	"AERON_UNICAST_FLOWCONTROL_SUPPLIER",
	"AERON_UNTETHERED_LINGER_TIMEOUT",
	"AERON_UNTETHERED_RESTING_TIMEOUT",
	"AERON_UNTETHERED_WINDOW_LIMIT_TIMEOUT",
}

// imageLimitProperties name the limits on what senders on the network
// can make the receiver allocate (Options.MaxImageTermLength and the two
// beside it).
var imageLimitProperties = []string{"aeron.image.term.buffer.max.length", "aeron.image.buffers.max.length",
	"aeron.driver.stream.session.limit"}

// ApplyImageLimits sets o's image limits from the properties that name
// them and leaves the rest of o alone: an embedding program (goblin-server)
// that builds its own Options takes these from the AERON_* environment.
func (p Properties) ApplyImageLimits(o *Options) error {
	for _, prop := range properties {
		for _, name := range imageLimitProperties {
			if prop.name != name {
				continue
			}
			if v, ok := p.Get(name); ok && v != "@null" {
				if err := prop.apply(o, v); err != nil {
					return fmt.Errorf("%w: %s=%s: %w", ErrBadProperty, name, v, err)
				}
			}
		}
	}
	return nil
}

// PropertyHelp lists the properties the driver reads, one "name: help"
// line each, sorted, for --help.
func PropertyHelp() string {
	lines := make([]string, 0, len(properties))
	for _, p := range properties {
		lines = append(lines, fmt.Sprintf("  %-45s %s (env %s)", p.name, p.help, EnvName(p.name)))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// ParseIdleStrategy maps the Java and C drivers' idle strategy names to
// goblin's: backoff (10 spins, 20 yields, sleeps from 1 µs to 1 ms), spin
// and noop (busy spin: a whole core), yield, sleep-ns (1 µs) and sleep-ms
// (1 ms). Agrona class names are accepted too.
func ParseIdleStrategy(name string) (aeron.IdleStrategy, error) {
	switch name {
	case "backoff", "org.agrona.concurrent.BackoffIdleStrategy":
		// Start parks it on the driver's sockets.
		return &aeron.BackoffIdle{MaxSpins: defaultIdleMaxSpins, MaxYields: defaultIdleMaxYields,
			MinPark: defaultIdleMinPark, MaxPark: defaultIdleMaxPark}, nil
	case "spin", "noop", "org.agrona.concurrent.BusySpinIdleStrategy", "org.agrona.concurrent.NoOpIdleStrategy":
		return aeron.SpinIdle{}, nil
	case "yield", "org.agrona.concurrent.YieldingIdleStrategy":
		return aeron.YieldIdle{}, nil
	case "sleep-ns", "org.agrona.concurrent.SleepingIdleStrategy":
		return aeron.SleepIdle{Period: time.Microsecond}, nil
	case "sleep-ms", "org.agrona.concurrent.SleepingMillisIdleStrategy":
		return aeron.SleepIdle{Period: time.Millisecond}, nil
	}
	return nil, fmt.Errorf("unknown idle strategy %q (backoff, spin, noop, yield, sleep-ns, sleep-ms)", name)
}
