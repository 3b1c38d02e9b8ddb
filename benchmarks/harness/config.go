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

	// CaseTimeout bounds starting a server, and separately each
	// operation's warm-up and measured round trips together.
	CaseTimeout time.Duration
	Progress    io.Writer // progress and ETA lines (stderr); nil for none
	Command     string    // the command line, recorded in metadata.txt
}

// Profile is the idle behaviour and CPU placement of every thread involved.
type Profile struct {
	Name       string
	ServerIdle string // goblin-server --idle: spin, yield or backoff
	ClientWait string // how the measuring client waits for a reply: spin or block
	DriverIdle string // Aeron media driver agents: spin (busy) or backoff
	// CPU lists ("0", "1", "2-3", "" for no pinning).
	ServerCPU string
	ClientCPU string
	DriverCPU string
	// UDP overrides the profile for the Aeron UDP cases (whose driver agents
	// carry the data path and need a core of their own); nil means none.
	UDP *Profile
}

// String is the one-line record of the profile written beside every figure.
func (p Profile) String() string {
	s := fmt.Sprintf("%s: server idle=%s cpu=%s; client wait=%s cpu=%s; driver idle=%s cpu=%s",
		p.Name, p.ServerIdle, orAny(p.ServerCPU), p.ClientWait, orAny(p.ClientCPU), p.DriverIdle, orAny(p.DriverCPU))
	return s
}

// ForTransport returns the profile a case on transport t runs with.
func (p Profile) ForTransport(t string) Profile {
	if t == TAeronUDP && p.UDP != nil {
		return *p.UDP
	}
	return p
}

func orAny(cpu string) string {
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
			return fmt.Errorf("%w: unknown operation %q (want PING, SET, GET)", ErrConfig, o)
		}
	}
	for _, p := range c.Protocols {
		if p != RESP && p != SBE {
			return fmt.Errorf("%w: unknown protocol %q (want RESP, SBE)", ErrConfig, p)
		}
	}
	for _, s := range []string{c.Profile.ServerIdle, c.Profile.DriverIdle} {
		if s != "spin" && s != "yield" && s != "backoff" {
			return fmt.Errorf("%w: idle strategy %q (want spin, yield or backoff)", ErrConfig, s)
		}
	}
	if c.Profile.ClientWait != "spin" && c.Profile.ClientWait != "block" {
		return fmt.Errorf("%w: client wait %q (want spin or block)", ErrConfig, c.Profile.ClientWait)
	}
	for _, cpus := range []string{c.Profile.ServerCPU, c.Profile.ClientCPU, c.Profile.DriverCPU} {
		if _, err := ParseCPUList(cpus); err != nil {
			return err
		}
	}
	return nil
}

// wants reports whether the filters select the case.
func (c *Config) wants(system, transport string, p Protocol) bool {
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

// ops filters a provider's operations.
func (c *Config) ops(offered []Op) []Op {
	if len(c.Ops) == 0 {
		return offered
	}
	var out []Op
	for _, o := range offered {
		if slices.Contains(c.Ops, o) {
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
