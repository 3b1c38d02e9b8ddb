package aeron

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	ae "github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/javadriver"
	"github.com/goblin-kv/goblin/idle"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/transport"
)

// Defaults.
const (
	DefaultStream          int32 = 1001 // request stream id
	DefaultReplyStream     int32 = 1002 // response (reply) stream id
	DefaultTermLength            = 4 << 20
	DefaultFragmentLimit         = 32
	DefaultOfferRetries          = 128
	DefaultOfferTimeout          = 5 * time.Second
	DefaultMaxClients            = 1024
	DefaultMaxPending            = 16
	DefaultMaxRequest            = 64 << 20
	DefaultMaxClientMemory       = 1 << 30
	DefaultDriverTimeout         = 10 * time.Second
)

// Errors.
var (
	// ErrConfig is wrapped by every bad target parameter or option.
	ErrConfig = errors.New("aeron transport: bad configuration")
	// ErrDirInUse reports that a live media driver already runs in the
	// directory a server was told to start its own driver in.
	ErrDirInUse = errors.New("aeron transport: a media driver already runs in the directory")
	// ErrNoServer reports that no server answered a dial: the request
	// publication or the response channel did not connect in time.
	ErrNoServer = errors.New("aeron transport: no server answered")
)

// DefaultDir is the Aeron directory of the media driver a server starts
// when its target names none (dir=), and the directory IPC clients look in
// when theirs names none: /dev/shm/goblin-aeron-<uid> (the temp dir where
// /dev/shm is missing). One server per machine can use it; give others
// their own dir=.
func DefaultDir() string {
	base := os.TempDir()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		base = "/dev/shm"
	}
	return filepath.Join(base, "goblin-aeron-"+strconv.Itoa(os.Getuid()))
}

// Options configure a Server. Media, the UDP addresses and Handler are
// required; the zero value of every other field works.
type Options struct {
	// Media is "ipc" or "udp".
	Media string
	// Endpoint is the UDP request endpoint host:port the server's driver
	// binds (aeron:udp?endpoint=SERVER_IP:REQUEST_PORT).
	Endpoint string
	// Control is the UDP response control address host:port: the server's
	// response publications bind it (on the server), and clients' response
	// subscriptions name the same address. It must be an address of the
	// server's host, never a client's.
	Control string
	// Proto is the protocol spoken on the streams.
	Proto proto.Protocol
	// Stream and ReplyStream are the request and response stream ids
	// (default DefaultStream, DefaultReplyStream).
	Stream, ReplyStream int32
	// TermLength is the term length of the response publications (a power
	// of two, 64 KiB to 1 GiB; default DefaultTermLength). A reply longer
	// than an eighth of it (the stream's maximum message) goes in chunks.
	TermLength int
	// MaxRequest is the longest request a client may send, in bytes
	// (default DefaultMaxRequest; at most MaxChunkedMessage). A longer one
	// is answered with an error naming the limit, and the client stays.
	// Clients learn it from the server's hello and refuse such a request
	// before sending it.
	MaxRequest int
	// MaxClientMemory caps the bytes all clients together may hold in
	// partial chunked requests and replies waiting to be sent; past it the
	// client holding the most is dropped (Stats.Evicted). 0 means
	// DefaultMaxClientMemory; negative, no limit.
	MaxClientMemory int64
	// Dir is the media driver's Aeron directory (default DefaultDir()).
	Dir string
	// External says a driver something else runs lives in Dir. Otherwise
	// the server runs goblin's Go media driver (package aeron/driver)
	// inside its own process, its duty cycle run by the store loop (for
	// UDP too: the loop reads the driver's sockets and parks on them), or,
	// with JavaDriver, starts the Java media driver, supervises it and
	// restarts it if it dies.
	External bool
	// JavaDriver makes the server start and supervise the Java media
	// driver instead of running the Go driver in-process (driver=java).
	JavaDriver bool
	// Profile is the profile of the driver the server starts (default
	// javadriver.Frugal).
	Profile javadriver.Profile
	// Group (a group name or gid) shares the directory of the driver the
	// server starts with that group, whose members' clients can then use
	// it (directories 02750, files 0660); without it only the server's
	// user can (0700, 0600). See javadriver.Options.Group.
	Group string
	// Driver holds further options for the driver the server starts (its
	// Dir and Profile are overridden by the fields above).
	Driver javadriver.Options
	// FragmentLimit bounds the requests served per Poll (default
	// DefaultFragmentLimit).
	FragmentLimit int
	// OfferRetries bounds the immediate retries of a reply that cannot be
	// offered (back-pressured, admin action, not connected); after them
	// the reply waits and each Poll retries it, without blocking the loop
	// or polling that client's requests (default DefaultOfferRetries).
	OfferRetries int
	// OfferTimeout bounds how long a client's reply may wait: after it the
	// client is dropped and counted (Stats.Dropped). It rides out a driver
	// or client that is slow for a moment (CPU starvation, a publication
	// whose first window the driver has not granted yet) and drops one
	// that stopped reading (default DefaultOfferTimeout).
	OfferTimeout time.Duration
	// MaxClients bounds the connected clients (default DefaultMaxClients).
	MaxClients int
	// MaxPending bounds the clients whose reply publication is made but
	// not yet connected, with those whose went without connecting in the
	// last 8 s (the driver keeps the log for the 5 s publication linger
	// and a little more)
	// (default DefaultMaxPending). Each holds a reply log of three terms,
	// and over UDP anyone who can send the request endpoint a SETUP
	// asking for a response channel makes a client; a real one connects
	// within a round trip. At the bound the next new client gets its
	// reply publication when a place frees, oldest first.
	MaxPending int
	// Handler makes the session of each new client. Required.
	Handler transport.MessageHandler
	// Logger receives driver and client events (default: discard).
	Logger *slog.Logger
}

// defaultStreams fills in the stream ids and the term length, which
// servers and clients default alike.
func defaultStreams(stream, replyStream *int32, termLength *int) {
	if *stream == 0 {
		*stream = DefaultStream
	}
	if *replyStream == 0 {
		*replyStream = DefaultReplyStream
	}
	if *termLength == 0 {
		*termLength = DefaultTermLength
	}
}

func (o *Options) ensureDefaults() {
	defaultStreams(&o.Stream, &o.ReplyStream, &o.TermLength)
	if o.Dir == "" {
		o.Dir = DefaultDir()
	}
	if o.FragmentLimit <= 0 {
		o.FragmentLimit = DefaultFragmentLimit
	}
	if o.OfferRetries <= 0 {
		o.OfferRetries = DefaultOfferRetries
	}
	if o.OfferTimeout <= 0 {
		o.OfferTimeout = DefaultOfferTimeout
	}
	if o.MaxClients <= 0 {
		o.MaxClients = DefaultMaxClients
	}
	if o.MaxPending <= 0 {
		o.MaxPending = DefaultMaxPending
	}
	if o.MaxRequest <= 0 {
		o.MaxRequest = DefaultMaxRequest
	}
	if o.MaxClientMemory == 0 {
		o.MaxClientMemory = DefaultMaxClientMemory
	}
	o.MaxRequest = min(o.MaxRequest, MaxChunkedMessage)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

func (o *Options) validate() error {
	if err := checkMedia(o.Media, o.Endpoint, o.Control); err != nil {
		return err
	}
	if o.Handler == nil {
		return fmt.Errorf("%w: Options.Handler is nil", ErrConfig)
	}
	if o.Proto != proto.RESP && o.Proto != proto.SBE {
		return fmt.Errorf("%w: unknown protocol %v", ErrConfig, o.Proto)
	}
	if o.Stream == o.ReplyStream {
		return fmt.Errorf("%w: request and reply streams are both %d", ErrConfig, o.Stream)
	}
	return checkTermLength(o.TermLength)
}

// checkMedia checks the media and, for UDP, the endpoint and control
// addresses: the checks servers and clients share.
func checkMedia(media, endpoint, control string) error {
	switch media {
	case ae.MediaIPC:
	case ae.MediaUDP:
		if err := checkHostPort("endpoint", endpoint); err != nil {
			return err
		}
		return checkHostPort("control", control)
	default:
		return fmt.Errorf("%w: media %q: want ipc or udp", ErrConfig, media)
	}
	return nil
}

func checkHostPort(name, v string) error {
	if v == "" {
		return fmt.Errorf("%w: aeron:udp needs %s=HOST:PORT", ErrConfig, name)
	}
	if _, _, err := net.SplitHostPort(v); err != nil {
		return fmt.Errorf("%w: %s=%q: %w", ErrConfig, name, v, err)
	}
	return nil
}

func checkTermLength(n int) error {
	if n < 64<<10 || n > 1<<30 || n&(n-1) != 0 {
		return fmt.Errorf("%w: term-length %d is not a power of two from 64 KiB to 1 GiB", ErrConfig, n)
	}
	return nil
}

// DialOptions configure Dial. Media (and Control for UDP) are required.
type DialOptions struct {
	// Media is "ipc" or "udp".
	Media string
	// Endpoint is the server's UDP request endpoint host:port.
	Endpoint string
	// Control is the server's UDP response control address host:port (the
	// same value the server listens with: an address of the server).
	Control string
	// Proto is the protocol to speak; the server must speak it too, or
	// Dial fails with transport.ErrProtocolMismatch naming both.
	Proto proto.Protocol
	// ProtoAuto makes Proto only a default: the connection speaks the
	// protocol the server's hello names (a target without proto=).
	ProtoAuto bool
	// Stream, ReplyStream and TermLength as in Options.
	Stream, ReplyStream int32
	TermLength          int
	// Dir is the Aeron directory of the driver to use. Empty means, for
	// IPC, DefaultDir() (the server's driver); for UDP, a driver of this
	// process's own, started on first use and shared by its connections
	// (the two-driver case): goblin's Go media driver inside this process,
	// whose duty cycle the connection runs while it waits (and an idle
	// goroutine while no call is in progress), or with JavaDriver the Java
	// media driver.
	Dir string
	// JavaDriver makes a UDP client without Dir start the Java media
	// driver as its own driver instead of the in-process Go driver
	// (driver=java).
	JavaDriver bool
	// Profile is the profile of the Java driver started for UDP with
	// JavaDriver (default Frugal).
	Profile javadriver.Profile
	// Wait is how the client waits for a reply or for room to send (see
	// package idle): Backoff, the zero value, spins, yields, then parks;
	// Spin for latency runs.
	Wait idle.Strategy
	// Backoff tunes Yield and Backoff (zero fields: idle.DefaultParams;
	// what Params.Validate refuses, a negative field say, fails Dial with
	// idle.ErrParams).
	Backoff idle.Params
	// DriverTimeout is how old the driver's heartbeat may get before the
	// connection reports the driver lost (default 10 s).
	DriverTimeout time.Duration

	// dirFrom says where Dir came from, for errors: "dir=" (the target),
	// "AERON_DIR" (the environment) or "" (the caller, or the default).
	dirFrom string
}

// AeronDirEnv is the environment variable Aeron's tools and clients read
// for the media driver's directory; a client target without dir= uses it
// (before DefaultDir for IPC, and instead of a driver of its own for UDP).
const AeronDirEnv = "AERON_DIR"

// dirNote names the driver directory a connection used and where that
// came from, for its errors.
func (o *DialOptions) dirNote(dir string) string {
	switch {
	case o.dirFrom == "AERON_DIR":
		return "media driver directory " + dir + " (from $AERON_DIR)"
	case o.dirFrom == "dir=":
		return "media driver directory " + dir + " (the target's dir=)"
	case dir == DefaultDir():
		return "media driver directory " + dir + " (the default: no dir= in the target, $AERON_DIR unset)"
	}
	return "media driver directory " + dir
}

func (o *DialOptions) ensureDefaults() {
	defaultStreams(&o.Stream, &o.ReplyStream, &o.TermLength)
	o.Backoff = o.Backoff.WithDefaults(idle.DefaultParams)
	if o.DriverTimeout <= 0 {
		o.DriverTimeout = DefaultDriverTimeout
	}
	if o.Media == ae.MediaIPC && o.Dir == "" {
		o.Dir = DefaultDir()
	}
}

func (o *DialOptions) validate() error {
	if err := checkMedia(o.Media, o.Endpoint, o.Control); err != nil {
		return err
	}
	if err := o.Backoff.Validate(); err != nil {
		return fmt.Errorf("%w: DialOptions.Backoff: %w", ErrConfig, err)
	}
	return checkTermLength(o.TermLength)
}

// The target parameters. Server and client accept each other's, so one
// target string serves both.
var (
	serverParams = map[string]bool{"endpoint": true, "control": true, "dir": true, "driver": true, "profile": true,
		"stream": true, "reply-stream": true, "term-length": true, "group": true}
	clientParams = map[string]bool{"endpoint": true, "control": true, "dir": true, "driver": true, "profile": true,
		"stream": true, "reply-stream": true, "term-length": true, "wait": true, "driver-timeout": true}
)

// ConfigFor fills a server's Options from an aeron target:
//
//	aeron:ipc?proto=sbe|dir=/dev/shm/goblin-aeron|driver=go
//	aeron:udp?endpoint=10.0.0.1:40123|control=10.0.0.1:40124|proto=resp
//
// dir is the driver's directory (default DefaultDir()). driver=go (the
// default) runs goblin's Go media driver inside the server, worked by the
// store loop; driver=java (driver=launch is its old spelling) starts and
// supervises the Java media driver there; driver=external uses one
// something else runs.
// profile picks the Java driver's profile (frugal, spin-shared, spin,
// spin-dedicated); group shares the driver's directory with a group;
// stream, reply-stream and term-length tune the streams. The caller sets
// Handler and Logger.
func ConfigFor(t transport.Target) (Options, error) {
	o := Options{Media: t.Address, Proto: t.Proto}
	if t.Scheme != transport.Aeron {
		return o, fmt.Errorf("%w: target scheme %q is not aeron", ErrConfig, t.Scheme)
	}
	for k, v := range t.Params {
		var err error
		switch k {
		case "driver":
			switch v {
			case "go":
			case "java", "launch":
				o.JavaDriver = true
			case "external":
				o.External = true
			default:
				err = errors.New("want go, java or external")
			}
		case "group":
			o.Group = v
		default:
			var known bool
			if known, err = (channelParams{&o.Endpoint, &o.Control, &o.Dir, &o.Profile, &o.Stream, &o.ReplyStream, &o.TermLength}).set(k, v); !known && !clientParams[k] {
				return o, fmt.Errorf("%w: unknown target parameter %q (want endpoint, control, dir, driver, profile, stream, reply-stream, term-length or group)", ErrConfig, k)
			}
		}
		if err != nil {
			return o, fmt.Errorf("%w: parameter %s=%q: %w", ErrConfig, k, v, err)
		}
	}
	o.ensureDefaults()
	if o.Media == ae.MediaUDP {
		if err := checkHostPort("endpoint", o.Endpoint); err != nil {
			return o, err
		}
		if err := checkHostPort("control", o.Control); err != nil {
			return o, err
		}
	}
	return o, checkTermLength(o.TermLength)
}

// DialOptionsFor fills DialOptions from an aeron target. A target without
// dir= uses the media driver in $AERON_DIR when that is set, as Aeron's
// tools do, and the connection's errors name the directory used and why.
// Besides the
// server's parameters a client takes wait=spin|yield|park and
// driver-timeout=DURATION. For UDP without dir, driver=go (the default)
// runs goblin's Go media driver in this process and driver=java starts a
// Java driver (driver=external is the server's and ignored here).
// profile=spin on a client means: spin while waiting (unless wait says
// otherwise) and, with driver=java, start its driver with the Spin profile.
func DialOptionsFor(t transport.Target) (DialOptions, error) {
	o := DialOptions{Media: t.Address, Proto: t.Proto, ProtoAuto: !t.ProtoSet}
	if t.Scheme != transport.Aeron {
		return o, fmt.Errorf("%w: target scheme %q is not aeron", ErrConfig, t.Scheme)
	}
	waitSet := false
	for k, v := range t.Params {
		var err error
		switch k {
		case "driver":
			switch v {
			case "go", "external":
			case "java", "launch":
				o.JavaDriver = true
			default:
				err = errors.New("want go, java or external")
			}
		case "wait":
			o.Wait, err = idle.Parse(v)
			waitSet = true
		case "driver-timeout":
			o.DriverTimeout, err = time.ParseDuration(v)
		default:
			var known bool
			if known, err = (channelParams{&o.Endpoint, &o.Control, &o.Dir, &o.Profile, &o.Stream, &o.ReplyStream, &o.TermLength}).set(k, v); !known && !serverParams[k] {
				return o, fmt.Errorf("%w: unknown target parameter %q (want endpoint, control, dir, driver, profile, stream, reply-stream, term-length, wait or driver-timeout)", ErrConfig, k)
			}
		}
		if err != nil {
			return o, fmt.Errorf("%w: parameter %s=%q: %w", ErrConfig, k, v, err)
		}
	}
	if !waitSet && o.Profile.Spins() {
		o.Wait = idle.Spin
	}
	switch _, named := t.Params["dir"]; {
	case named:
		o.dirFrom = "dir="
	case os.Getenv(AeronDirEnv) != "":
		// As Aeron's own tools: the driver the environment names.
		o.Dir, o.dirFrom = os.Getenv(AeronDirEnv), "AERON_DIR"
	}
	o.ensureDefaults()
	return o, o.validate()
}

// channelParams points at the fields of the target parameters servers and
// clients share, so that both parse them with one switch.
type channelParams struct {
	endpoint, control, dir *string
	profile                *javadriver.Profile
	stream, replyStream    *int32
	termLength             *int
}

// set stores parameter k=v if it is one of the shared ones; known says
// whether it was.
func (p channelParams) set(k, v string) (known bool, err error) {
	switch k {
	case "endpoint":
		*p.endpoint = v
	case "control":
		*p.control = v
	case "dir":
		*p.dir = v
	case "profile":
		*p.profile, err = javadriver.ParseProfile(v)
	case "stream":
		*p.stream, err = parseStream(v)
	case "reply-stream":
		*p.replyStream, err = parseStream(v)
	case "term-length":
		*p.termLength, err = strconv.Atoi(v)
	default:
		return false, nil
	}
	return true, err
}

func parseStream(v string) (int32, error) {
	n, err := strconv.ParseInt(v, 10, 32)
	if err == nil && n == 0 {
		err = errors.New("stream id 0 is reserved here")
	}
	return int32(n), err
}

// requestChannel is the channel of the server's request subscription and,
// with response-correlation-id added, of a client's request publication.
func requestChannel(media, endpoint string) *ae.ChannelBuilder {
	if media == ae.MediaIPC {
		return ae.IPC()
	}
	return ae.UDP().Endpoint(endpoint)
}

// responseChannel is the channel of a client's response subscription and,
// with response-correlation-id added, of the server's response
// publication: control-mode=response and, for UDP, control=the server's
// control address on both sides.
func responseChannel(media, control string) *ae.ChannelBuilder {
	if media == ae.MediaIPC {
		return ae.IPC().ControlMode(ae.ControlModeResponse)
	}
	return ae.UDP().Control(control).ControlMode(ae.ControlModeResponse)
}
