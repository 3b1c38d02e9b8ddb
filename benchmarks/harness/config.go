package harness

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("harness: bad configuration")

// Config holds every knob of a run. The zero value is not usable; start from
// DefaultConfig.
type Config struct {
	OutDir string // the run directory written (created if missing)

	Runs    int // complete runs of the matrix, averaged in aggregate.csv
	Warmup  int // round trips per operation before measuring
	Samples int // measured round trips per operation

	ValueSize int // bytes of every SET value (16 in the published matrix)
	Keys      int // distinct keys SET and GET cycle over (1 in the published matrix)
	Depth     int // requests in flight per round trip (1 = synchronous)

	// Filters: empty means everything a provider offers.
	Systems    []string
	Transports []string
	Protocols  []Protocol
	Ops        []Op

	Profile Profile // idle behaviour and CPU placement

	// Client is the measuring client: ClientLibrary (the goblin client
	// library, the default) or ClientRaw (the harness's own pre-encoded
	// RESP client; SBE and message transports still use the library).
	Client string

	// Timeline also writes every measured round trip's latency, in the
	// order measured, to <op>.timeline.csv in the case directory, to see
	// when slow round trips happen (a period of 64 is a page fault per
	// 4 KiB of 64-byte frames). Only a measuring client inside goblin-bench
	// writes one (not -hosts' remote probe, not the raw Aeron ping-pong).
	Timeline bool

	// Tools. Empty paths are looked up (PATH, ~/.m2) by the providers.
	GoblinServer string // goblin-server binary
	RedisServer  string // redis-server binary
	Java         string // java, for the Aeron media driver and raw ping-pong
	AeronJar     string // io.aeron:aeron-all jar

	// Network placement (the two-namespace launcher). ServerHost is the
	// address servers listen on and the client dials for TCP and Aeron UDP;
	// ClientHost is the client's own address (Aeron UDP response channels
	// learn it; it is recorded, not bound by the server). ServerWrap
	// prefixes every server-side command, e.g. ip netns exec NAME.
	ServerHost string
	ClientHost string
	ServerWrap []string

	// Two hosts (the -hosts mode). ServerSide and ClientSide are where
	// processes run; nil means this machine (the server side wrapped in
	// ServerWrap). Paths are the address pairs the network cases (tcp,
	// aeron-udp) run over, each path a case of its own; empty means one
	// unnamed path from ServerHost and ClientHost (and ControlHost).
	ServerSide, ClientSide Host
	Paths                  []NetPath
	// ControlHost is the Aeron UDP response control address of the
	// unnamed path; empty means ServerHost, which is the only right
	// answer (the server's response publications bind it).
	ControlHost string

	// Driver is the media driver every Aeron case starts on each side;
	// DriverEnv is added to its environment, for every path under the key
	// "" and for one path under its name (e.g. an LD_PRELOAD userspace-UDP
	// library for the 100 GbE path only).
	Driver    Driver
	DriverEnv map[string][]string

	// Qualify, when set, runs every case once more after the measured runs
	// with a statistics collector attached to each media driver, archived
	// under qualification/ and never part of latency.csv's runs, the
	// aggregate or the summary.
	Qualify *Qualification

	// RunID names this run's files outside the archive (ring directories,
	// runtime directories on remote hosts), so that concurrent runs, and
	// the leftover checks of their tests, never mix. Empty: one is made.
	RunID string

	// CaseTimeout bounds starting a server, and separately each
	// operation's warm-up and measured round trips together.
	CaseTimeout time.Duration
	Progress    io.Writer // progress and ETA lines (stderr); nil for none
	Command     string    // the command line, recorded in metadata.txt

	// Path and Track belong to the case being run: the runner sets them on
	// its copy of the Config for each case; they are zero outside a case.
	Path  NetPath    // the path of the case being run
	Track *CaseTrack // what the case being run started
}

// NetPath is one address pair the network cases run over. Server is an
// address of the server host: servers bind it, and Aeron UDP's request
// endpoint and response control address are on it. Client is an address of
// the client host (the raw Aeron Pong answers to it; goblin's response
// channels learn it).
type NetPath struct {
	Name    string // e.g. 10gbe; "" for the single unnamed path
	Server  string
	Client  string
	Control string // the response control host; "" = Server
}

// ControlAddr is the host of the Aeron UDP response control address.
func (p NetPath) ControlAddr() string {
	if p.Control != "" {
		return p.Control
	}
	return p.Server
}

// Label names the path in the archive: its name, or "default".
func (p NetPath) Label() string {
	if p.Name == "" {
		return "default"
	}
	return p.Name
}

// String is the path as PATHS spells it.
func (p NetPath) String() string {
	s := p.Server + "/" + p.Client
	if p.Control != "" {
		s += "/" + p.Control
	}
	if p.Name != "" {
		s = p.Name + "=" + s
	}
	return s
}

// ParsePaths parses NAME=SERVER/CLIENT[/CONTROL] entries separated by commas
// or spaces: each names an address pair (e.g. a 10 GbE and a 100 GbE path)
// the network cases run over. CONTROL, the response control host, defaults
// to SERVER and should be left out.
func ParsePaths(s string) ([]NetPath, error) {
	var out []NetPath
	seen := map[string]bool{}
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' }) {
		name, addrs, ok := strings.Cut(f, "=")
		parts := strings.Split(addrs, "/")
		if !ok || !validPathName(name) || len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
			return nil, fmt.Errorf("%w: path %q (want NAME=SERVER_ADDR/CLIENT_ADDR, NAME of letters, digits, - and _)", ErrConfig, f)
		}
		if seen[name] {
			return nil, fmt.Errorf("%w: path %q named twice", ErrConfig, name)
		}
		seen[name] = true
		p := NetPath{Name: name, Server: parts[0], Client: parts[1]}
		if len(parts) == 3 {
			p.Control = parts[2]
		}
		out = append(out, p)
	}
	return out, nil
}

func validPathName(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// ParseDriverEnv parses one -driver-env value, "[PATH:]K=V K2=V2": the
// assignments (separated by spaces) are added to the media drivers'
// environment, on every path or only on the named one.
func ParseDriverEnv(s string) (path string, env []string, err error) {
	s = strings.TrimSpace(s)
	if head, rest, ok := strings.Cut(s, ":"); ok && validPathName(head) && !strings.Contains(head, "=") {
		path, s = head, rest
	}
	for _, kv := range strings.Fields(s) {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return "", nil, fmt.Errorf("%w: driver environment %q: want KEY=VALUE assignments separated by spaces", ErrConfig, kv)
		}
		env = append(env, kv)
	}
	if len(env) == 0 {
		return "", nil, fmt.Errorf("%w: driver environment %q assigns nothing", ErrConfig, s)
	}
	return path, env, nil
}

// Driver is the media driver kind of the Aeron cases. Kind DriverJava is
// Aeron's Java MediaDriver from the aeron-all jar; DriverAeronmd is any
// binary with the C driver's command line (aeronmd -Dname=value …) at
// Binary: Aeron's C aeronmd, or goblin's own driver (aeron/cmd/aeronmd),
// which the archive then calls by Name. DriverInProcess runs goblin's Go
// driver inside goblin-server and inside the measuring client (goblin's
// default: no driver process at all); the raw Aeron ping-pong (aeron-raw,
// Java programs) then keeps the Java driver pair, its only driver.
type Driver struct {
	Kind   string // DriverJava (the zero value), DriverAeronmd or DriverInProcess
	Binary string // DriverAeronmd: the binary on this machine (staged to remote hosts)
	Name   string // what the archive calls it; default the kind
}

// The driver kinds.
const (
	DriverJava    = "java"
	DriverAeronmd = "aeronmd"
	// DriverInProcess is goblin's Go driver in goblin's own processes.
	DriverInProcess = "inproc"
)

// ParseDriver parses -driver: java, aeronmd or goblin (goblin's own driver,
// an aeronmd-compatible binary), with the binary for the last two, or
// inproc.
func ParseDriver(kind, binary string) (Driver, error) {
	switch kind {
	case "", DriverJava:
		return Driver{Kind: DriverJava, Name: DriverJava}, nil
	case DriverInProcess:
		return Driver{Kind: DriverInProcess, Name: DriverInProcess}, nil
	case DriverAeronmd, "goblin":
		if binary == "" {
			return Driver{}, fmt.Errorf("%w: -driver %s needs -aeronmd PATH (benchmarks/aeron_network_latency.sh builds goblin's from aeron/cmd/aeronmd)", ErrConfig, kind)
		}
		return Driver{Kind: DriverAeronmd, Binary: binary, Name: kind}, nil
	}
	return Driver{}, fmt.Errorf("%w: driver %q (want java, aeronmd, goblin or inproc)", ErrConfig, kind)
}

// String names the driver kind for the archive.
func (d Driver) String() string {
	name := d.Name
	if name == "" {
		name = d.Kind
	}
	if name == "" {
		name = DriverJava
	}
	if d.Binary != "" {
		return name + " (" + d.Binary + ")"
	}
	return name
}

// Qualification attaches a statistics collector to every media driver in
// one extra pass of the matrix. Collector is run by sh -c on each driver's
// host with {pid} and {dir} replaced by the driver's process id and Aeron
// directory (e.g. "xlio_stats -p {pid} -i 1"); empty means goblin-bench's
// own counter reader, printing the driver's counters every second.
type Qualification struct {
	Collector string
}

// Profile is the idle behaviour and CPU placement of every thread involved.
type Profile struct {
	Name       string
	ServerIdle string // goblin-server --idle: spin, yield, backoff or doze (goblin-server's default)
	ClientWait string // how the measuring client waits for a reply: spin or block
	DriverIdle string // Aeron media driver agents: spin (busy) or backoff
	// CPU lists ("0", "1", "2-3", "" for no pinning).
	ServerCPU string
	ClientCPU string
	DriverCPU string
	// ServerAgents and ClientAgents pin the media-driver agents of the
	// server's and the client's driver one by one, e.g.
	// "conductor=2,sender=3,receiver=4" (dedicated threading); "" = the
	// driver's threads all follow DriverCPU.
	ServerAgents string
	ClientAgents string
	// HousekeepingCPU, when set, is where the threads no other entry
	// names run (Go's runtime and goblin's Aeron client conductor in
	// goblin-server and the measuring client, the OS): goblin-server then
	// runs there with only its store loop moved to ServerCPU, and the
	// measuring client's process there with only its measuring thread on
	// ClientCPU. "" keeps each process on its own CPUs.
	HousekeepingCPU string
	// UDP overrides the profile for the Aeron UDP cases (whose driver agents
	// carry the data path and need a core of their own); nil means none.
	UDP *Profile
}

// String is the one-line record of the profile written beside every figure.
func (p Profile) String() string {
	s := fmt.Sprintf("%s: server idle=%s cpu=%s; client wait=%s cpu=%s; driver idle=%s cpu=%s",
		p.Name, p.ServerIdle, OrAny(p.ServerCPU), p.ClientWait, OrAny(p.ClientCPU), p.DriverIdle, OrAny(p.DriverCPU))
	if p.ServerAgents != "" {
		s += "; server driver agents " + p.ServerAgents
	}
	if p.ClientAgents != "" {
		s += "; client driver agents " + p.ClientAgents
	}
	if p.HousekeepingCPU != "" {
		s += "; housekeeping cpu=" + p.HousekeepingCPU
	}
	return s
}

// ForTransport returns the profile a case on transport t runs with.
func (p Profile) ForTransport(t string) Profile {
	if t == TAeronUDP && p.UDP != nil {
		return *p.UDP
	}
	return p
}

// ForCase returns the profile case c runs with: ForTransport, except that
// the UDP override, which exists for media driver processes on the data
// path, does not apply where no such process runs: the raw UDP floor, the
// Go-driver ping-pong, and goblin with in-process drivers (-driver inproc),
// whose loop and client do the drivers' work themselves.
func (c *Config) ForCase(system, transport string) Profile {
	switch {
	case transport != TAeronUDP:
	case system == SysUDPFloor, system == SysAeronGo, system == SysGoblin && c.Driver.Kind == DriverInProcess:
		return c.Profile
	}
	return c.Profile.ForTransport(transport)
}

func OrAny(cpu string) string {
	if cpu == "" {
		return "any"
	}
	return cpu
}

// Profiles returns the named profiles for a machine with ncpu CPUs.
//
//   - fit2: fits two cores. The server loop spins on CPU 0 and the measuring
//     client spins on CPU 1; Aeron driver agents back off and share the
//     cores. Aeron UDP, whose driver agents sit on the data path, runs with
//     everything backing off instead, because three spinning parties on two
//     cores starve each other (milliseconds per round trip).
//   - spin: everything polls continuously on its own CPUs (server 0,
//     client 1, driver 2-…): Goblin's published latency profile, for
//     machines with at least four CPUs.
//   - backoff: the server backs off, the client blocks in the kernel and
//     driver agents back off; nothing is pinned. What an idle-friendly
//     deployment pays.
func Profiles(ncpu int) map[string]Profile {
	backoff := Profile{Name: "backoff", ServerIdle: "backoff", ClientWait: "block", DriverIdle: "backoff"}
	fitUDP := backoff
	fitUDP.Name = "fit2/udp-backoff"
	fit2 := Profile{Name: "fit2", ServerIdle: "spin", ClientWait: "spin", DriverIdle: "backoff",
		ServerCPU: "0", ClientCPU: "1", UDP: &fitUDP}
	spin := Profile{Name: "spin", ServerIdle: "spin", ClientWait: "spin", DriverIdle: "spin",
		ServerCPU: "0", ClientCPU: "1"}
	if ncpu >= 3 {
		spin.DriverCPU = fmt.Sprintf("2-%d", ncpu-1)
	}
	if ncpu < 2 {
		fit2.ServerCPU, fit2.ClientCPU, spin.ServerCPU, spin.ClientCPU = "", "", "", ""
	}
	return map[string]Profile{"fit2": fit2, "spin": spin, "backoff": backoff}
}

// HostsProfiles returns the named profiles for two hosts, the smaller of
// which has ncpu CPUs. Each host runs one application thread (the server
// loop or the measuring client) and one media driver, so the same CPU
// numbers serve both. With five CPUs or more, spin is the continuously
// polled profile of Goblin's published network runs: the application
// thread (the store loop, the measuring thread) on CPU 1, the driver's
// conductor, sender and receiver on CPUs 2, 3 and 4, each alone, and CPU 0
// left to housekeeping: the operating system, ssh, the harness's agent,
// the JVM's own threads, and Go's runtime threads and goblin's Aeron client
// conductor in goblin-server and the measuring client. fit2 and backoff
// are as on one host.
func HostsProfiles(ncpu int) map[string]Profile {
	m := Profiles(ncpu)
	if ncpu >= 5 {
		m["spin"] = Profile{Name: "spin", ServerIdle: "spin", ClientWait: "spin", DriverIdle: "spin",
			ServerCPU: "1", ClientCPU: "1", DriverCPU: "0", HousekeepingCPU: "0",
			ServerAgents: "conductor=2,sender=3,receiver=4", ClientAgents: "conductor=2,sender=3,receiver=4"}
	}
	return m
}

// DefaultHostsProfile picks spin when both hosts have five CPUs or more,
// else fit2.
func DefaultHostsProfile(ncpu int) Profile {
	if ncpu >= 5 {
		return HostsProfiles(ncpu)["spin"]
	}
	return HostsProfiles(ncpu)["fit2"]
}

// ParseAgentPins parses "conductor=2,sender=3,receiver=4": a CPU list per
// media-driver agent ("" = none pinned). A list with several CPUs is
// written with ranges only ("sender=3-4").
func ParseAgentPins(s string) ([]AgentPin, error) {
	if s == "" {
		return nil, nil
	}
	var out []AgentPin
	for _, f := range strings.Split(s, ",") {
		agent, cpus, ok := strings.Cut(strings.TrimSpace(f), "=")
		if !ok || !slices.Contains(driverAgents, agent) {
			return nil, fmt.Errorf("%w: agent CPUs %q (want conductor=CPUS,sender=CPUS,receiver=CPUS)", ErrConfig, f)
		}
		if list, err := ParseCPUList(cpus); err != nil || len(list) == 0 {
			return nil, fmt.Errorf("%w: agent CPUs %q: bad CPU list", ErrConfig, f)
		}
		out = append(out, AgentPin{Agent: agent, CPUs: cpus})
	}
	return out, nil
}

// DefaultProfile picks fit2 on machines with fewer than four CPUs and spin
// otherwise.
func DefaultProfile() Profile {
	n := runtime.NumCPU()
	if n < 4 {
		return Profiles(n)["fit2"]
	}
	return Profiles(n)["spin"]
}

// DefaultConfig is the published method: 2 runs, 10,000 warm-up and 100,000
// measured depth-one round trips per operation, one key, 16-byte values.
func DefaultConfig() Config {
	return Config{
		OutDir:      "bench-results",
		Runs:        2,
		Warmup:      10000,
		Samples:     100000,
		ValueSize:   16,
		Keys:        1,
		Depth:       1,
		Profile:     DefaultProfile(),
		Client:      ClientLibrary,
		ServerHost:  "127.0.0.1",
		CaseTimeout: 15 * time.Minute,
	}
}

// Validate checks the knobs.
func (c *Config) Validate() error {
	switch {
	case c.OutDir == "":
		return fmt.Errorf("%w: no output directory", ErrConfig)
	case c.Runs < 1:
		return fmt.Errorf("%w: runs must be at least 1 (got %d)", ErrConfig, c.Runs)
	case c.Warmup < 0:
		return fmt.Errorf("%w: warm-up must not be negative (got %d)", ErrConfig, c.Warmup)
	case c.Samples < 1:
		return fmt.Errorf("%w: samples must be at least 1 (got %d)", ErrConfig, c.Samples)
	case c.ValueSize < 1:
		return fmt.Errorf("%w: value size must be at least 1 byte (got %d)", ErrConfig, c.ValueSize)
	case c.Keys < 1:
		return fmt.Errorf("%w: keys must be at least 1 (got %d)", ErrConfig, c.Keys)
	case c.Depth < 1:
		return fmt.Errorf("%w: depth must be at least 1 (got %d)", ErrConfig, c.Depth)
	case c.CaseTimeout <= 0:
		return fmt.Errorf("%w: case timeout must be positive", ErrConfig)
	case c.Client != ClientLibrary && c.Client != ClientRaw:
		return fmt.Errorf("%w: client %q (want library or raw)", ErrConfig, c.Client)
	}
	for _, t := range c.Transports {
		if !slices.Contains(AllTransports, t) {
			return fmt.Errorf("%w: unknown transport %q (want %s)", ErrConfig, t, strings.Join(AllTransports, ", "))
		}
	}
	for _, o := range c.Ops {
		if !slices.Contains(AllOps, o) {
			return fmt.Errorf("%w: unknown operation %q (want PING, SET, GET, HSET, HGET, LPUSH, RPOP, ZADD, ZRANGE)", ErrConfig, o)
		}
	}
	for _, p := range c.Protocols {
		if p != RESP && p != SBE {
			return fmt.Errorf("%w: unknown protocol %q (want RESP, SBE)", ErrConfig, p)
		}
	}
	// goblin-server's own default, doze, is a server idle strategy only
	// (the raw peers wait as backoff under it).
	if s := c.Profile.ServerIdle; s != "spin" && s != "yield" && s != "backoff" && s != "doze" {
		return fmt.Errorf("%w: server idle strategy %q (want spin, yield, backoff or doze)", ErrConfig, s)
	}
	if s := c.Profile.DriverIdle; s != "spin" && s != "yield" && s != "backoff" {
		return fmt.Errorf("%w: idle strategy %q (want spin, yield or backoff)", ErrConfig, s)
	}
	if c.Profile.ClientWait != "spin" && c.Profile.ClientWait != "block" {
		return fmt.Errorf("%w: client wait %q (want spin or block)", ErrConfig, c.Profile.ClientWait)
	}
	for _, p := range []*Profile{&c.Profile, c.Profile.UDP} {
		if p == nil {
			continue
		}
		for _, cpus := range []string{p.ServerCPU, p.ClientCPU, p.DriverCPU, p.HousekeepingCPU} {
			if _, err := ParseCPUList(cpus); err != nil {
				return err
			}
		}
		for _, a := range []string{p.ServerAgents, p.ClientAgents} {
			if _, err := ParseAgentPins(a); err != nil {
				return err
			}
		}
	}
	switch c.Driver.Kind {
	case "", DriverJava, DriverInProcess:
	case DriverAeronmd:
		if c.Driver.Binary == "" {
			return fmt.Errorf("%w: the aeronmd driver kind needs its binary", ErrConfig)
		}
	default:
		return fmt.Errorf("%w: driver kind %q (want java, aeronmd or inproc)", ErrConfig, c.Driver.Kind)
	}
	for name := range c.DriverEnv {
		if name != "" && !slices.ContainsFunc(c.Paths, func(p NetPath) bool { return p.Name == name }) {
			return fmt.Errorf("%w: driver environment for path %q, which PATHS does not name", ErrConfig, name)
		}
	}
	if (c.ServerSide == nil) != (c.ClientSide == nil) {
		return fmt.Errorf("%w: a server host without a client host, or the other way round", ErrConfig)
	}
	if c.ServerSide != nil && c.ServerSide.Remote() && len(c.ServerWrap) > 0 {
		return fmt.Errorf("%w: -server-netns and -hosts are separate modes", ErrConfig)
	}
	return nil
}

// paths are the address pairs of the network cases: Paths, or the one
// unnamed path of ServerHost, ClientHost and ControlHost.
func (c *Config) NetPaths() []NetPath {
	if len(c.Paths) > 0 {
		return c.Paths
	}
	client := c.ClientHost
	if client == "" {
		client = c.ServerHost
	}
	return []NetPath{{Server: c.ServerHost, Client: client, Control: c.ControlHost}}
}

// CaseDriverEnv is the media drivers' environment on the case's path.
func (c *Config) CaseDriverEnv() []string {
	env := append([]string(nil), c.DriverEnv[""]...)
	if c.Path.Name != "" {
		env = append(env, c.DriverEnv[c.Path.Name]...)
	}
	return env
}

// ServerSideHost and ClientSideHost are the hosts of the two sides: the configured
// ones, else this machine.
func (c *Config) ServerSideHost() Host {
	if c.ServerSide != nil {
		return c.ServerSide
	}
	return NewLocalHost("server", c.ServerWrap, c.OutDir)
}

func (c *Config) ClientSideHost() Host {
	if c.ClientSide != nil {
		return c.ClientSide
	}
	return NewLocalHost("client", nil, c.OutDir)
}

// TwoHosts reports whether the run drives two remote hosts.
func (c *Config) TwoHosts() bool { return c.ServerSide != nil && c.ServerSide.Remote() }

// NetworkTransport reports whether a transport crosses the network path
// (and so runs once per path).
func NetworkTransport(t string) bool { return t == TTCP || t == TAeronUDP }

// Wants reports whether the filters select the case.
func (c *Config) Wants(system, transport string, p Protocol) bool {
	if len(c.Systems) > 0 && !slices.Contains(c.Systems, system) {
		return false
	}
	if len(c.Transports) > 0 && !slices.Contains(c.Transports, transport) {
		return false
	}
	if p != Raw && len(c.Protocols) > 0 && !slices.Contains(c.Protocols, p) {
		return false
	}
	return true
}

// WantedOps filters a provider's operations: those the run names, or
// DefaultOps when it names none.
func (c *Config) WantedOps(offered []Op) []Op {
	want := c.Ops
	if len(want) == 0 {
		want = DefaultOps
	}
	var out []Op
	for _, o := range offered {
		if slices.Contains(want, o) {
			out = append(out, o)
		}
	}
	return out
}

// ParseCPUList parses a Linux CPU list such as "0", "1,3" or "2-5"; the
// empty string is no pinning.
func ParseCPUList(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil || a < 0 {
			return nil, fmt.Errorf("%w: CPU list %q", ErrConfig, s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil || b < a {
				return nil, fmt.Errorf("%w: CPU list %q", ErrConfig, s)
			}
		}
		for i := a; i <= b; i++ {
			cpus = append(cpus, i)
		}
	}
	return cpus, nil
}

// OneHostOnly reports a transport that needs both sides on one machine
// (shared memory, a Unix socket) as unavailable in a two-host run.
func (c *Config) OneHostOnly(transport string) error {
	if c.TwoHosts() && !NetworkTransport(transport) {
		return fmt.Errorf("%w: %s needs the server and the client on one machine; the two-host matrix measures tcp and aeron-udp", ErrUnavailable, transport)
	}
	return nil
}

// Measuring clients (Config.Client).
const (
	ClientLibrary = "library" // the goblin client library (package client)
	ClientRaw     = "raw"     // the harness's pre-encoded RESP over write(2)/read(2)
	// The floors' own clients (ProbeSpec.Client only): udp-floor's
	// busy-polled socket, aeron-go's Go ping with its in-process driver.
	ClientUDPFloor = "udp-floor"
	ClientAeronGo  = "aeron-go"
)
