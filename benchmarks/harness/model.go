// Package harness is goblin's transport-latency benchmark: it runs a matrix
// of protocol × transport × operation cases, each against a freshly started
// server (goblin-server, or a peer such as redis-server, a raw
// shared-memory ping-pong or a raw Aeron ping-pong), measures synchronous
// round trips with one measuring client, and writes an archive: latency.csv,
// aggregate.csv, metadata.txt, summary.md, SVG charts and SHA256SUMS.
//
// Every transport is a Provider. A provider whose piece of goblin is not in
// the build, or whose tools are missing on the machine, reports
// ErrUnavailable with the reason, and the archive lists that case as "not
// available in this build" instead of inventing a number.
//
// The method follows Goblin's published runs: a fresh server per case,
// warm-up round trips, then measured synchronous depth-one round trips per
// operation, several complete runs averaged, the channels and CPU placement
// of every case recorded.
//
// This package is the ground the harness's jobs share: the case model
// (systems, transports, protocols, operations, Provider), the run's Config
// and CPU profiles, the record a run fills (Report, Result, CaseRecord,
// Metadata), latency statistics, and the hosts a case's processes run on
// (the Host interface, the local host, processes and their CPU placement,
// the per-case track of what was started). The jobs are packages of their
// own, each importing this one and none importing a job above it:
//
//   - runner plans and measures the cases: it starts the servers, peers and
//     media drivers, runs the measuring clients, and hands the record to
//     report;
//   - remote reaches two hosts over ssh: it stages the build, checks its
//     hashes from both sides and runs an agent on each host, a Host for the
//     runner;
//   - report writes the archive: the per-case files, metadata.txt, the
//     hosts' facts, latency.csv, aggregate.csv, summary.md, the charts and
//     SHA256SUMS, and attributes slow round trips to a kernel trace.
//
// cmd/goblin-bench wires them together.
package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ErrUnavailable is wrapped by a provider that cannot run in this build or
// on this machine; the message says why.
var ErrUnavailable = errors.New("not available in this build")

// ErrBadReply is wrapped when a server answers a request with something
// other than the expected reply.
var ErrBadReply = errors.New("harness: unexpected reply")

// Op is one measured operation.
type Op string

// The operations of the matrix. The raw floors have no command set: their
// single round trip is reported as PING. The collection operations work on
// keys of their own (bench:hash:N, bench:list:N, bench:zset:N): HSET
// rewrites one field of a small hash and HGET reads it; LPUSH pushes the
// value and RPOP pops one (the list is preloaded so it never runs dry);
// ZADD rescores one of 1,000 members of a sorted set (a skiplist) and
// ZRANGE reads ranks 0 to 9, ten members whose scores ZADD never touches.
const (
	Ping   Op = "PING"
	Set    Op = "SET"
	Get    Op = "GET"
	HSet   Op = "HSET"
	HGet   Op = "HGET"
	LPush  Op = "LPUSH"
	RPop   Op = "RPOP"
	ZAdd   Op = "ZADD"
	ZRange Op = "ZRANGE"
)

// Indexes of the operations, for per-operation arrays on hot paths.
const (
	OpPing = iota
	OpSet
	OpGet
	OpHSet
	OpHGet
	OpLPush
	OpRPop
	OpZAdd
	OpZRange
	NumOps
)

// Index is the operation's position in AllOps.
func (o Op) Index() int {
	if i := slices.Index(AllOps, o); i >= 0 {
		return i
	}
	return OpPing
}

// AllOps is the operation order of every table: every operation the harness
// knows, indexed by the Op* constants.
var AllOps = []Op{Ping, Set, Get, HSet, HGet, LPush, RPop, ZAdd, ZRange}

// DefaultOps are what a run measures when it names no operations (OPS=):
// the published matrix.
var DefaultOps = []Op{Ping, Set, Get}

// CollectionOps are the hash, list and sorted-set operations (issue 29),
// measured when named: OPS=HSET,HGET,LPUSH,RPOP,ZADD,ZRANGE.
var CollectionOps = []Op{HSet, HGet, LPush, RPop, ZAdd, ZRange}

// Protocol is the wire protocol a case speaks; the raw floors speak none.
type Protocol string

// The protocols.
const (
	RESP Protocol = "RESP"
	SBE  Protocol = "SBE"
	Raw  Protocol = "raw"
)

// Transport names, in the order of every table (fastest expected first).
const (
	TRing     = "ring"
	TAeronIPC = "aeron-ipc"
	TUDS      = "uds"
	TTCP      = "tcp"
	TAeronUDP = "aeron-udp"
)

// AllTransports is the transport order of every table.
var AllTransports = []string{TRing, TAeronIPC, TUDS, TTCP, TAeronUDP}

// Systems: what answers the requests.
const (
	SysGoblin   = "goblin"
	SysRedis    = "redis"
	SysShmFloor = "shm-floor"
	SysAeronRaw = "aeron-raw"
	// The aeron-udp transport's floors beside the Java pair's aeron-raw:
	// a raw UDP socket ping-pong, and the raw Aeron ping-pong over
	// goblin's Go media driver inside each process.
	SysUDPFloor = "udp-floor"
	SysAeronGo  = "aeron-go"
)

// Case is one server configuration measured for one or more operations.
type Case struct {
	System    string
	Transport string
	Protocol  Protocol
	Ops       []Op
	Path      string // the named network path (PATHS) of a network case; "" for none
}

// ID names the case in file names and tables, e.g. "goblin-uds-resp" or,
// on a named path, "goblin-aeron-udp-sbe-10gbe".
func (c Case) ID() string {
	id := strings.ToLower(fmt.Sprintf("%s-%s-%s", c.System, c.Transport, c.Protocol))
	if c.Path != "" {
		id += "-" + c.Path
	}
	return id
}

// Label is the case's human-readable name, e.g. "goblin uds RESP" or
// "goblin aeron-udp SBE [10gbe]".
func (c Case) Label() string {
	l := fmt.Sprintf("%s %s %s", c.System, c.Transport, c.Protocol)
	if c.Protocol == Raw {
		l = fmt.Sprintf("%s %s", c.System, c.Transport)
	}
	if c.Path != "" {
		l += " [" + c.Path + "]"
	}
	return l
}

// Provider contributes the cases of one system on one transport.
type Provider interface {
	// System and Transport identify the provider's cases.
	System() string
	Transport() string
	// Protocols lists the protocols it can measure (Raw for the floors).
	Protocols() []Protocol
	// Ops lists the operations it measures.
	Ops() []Op
	// Check returns nil when the provider can measure protocol p here, or an error wrapping
	// ErrUnavailable that says what is missing.
	Check(cfg *Config, p Protocol) error
	// Start launches a fresh server for one case. dir is a private scratch
	// directory for sockets, logs and driver files; everything started must
	// be stopped by Instance.Close.
	Start(ctx context.Context, cfg *Config, p Protocol, dir string) (Instance, error)
}

// Instance is one running server (or peer) of a case.
type Instance interface {
	// Dial connects the measuring client.
	Dial(ctx context.Context) (Prober, error)
	// Info describes the instance for the archive: channels or addresses,
	// affinities, idle profile, command lines. Keys are sorted on output.
	Info() map[string]string
	// Close stops the server and everything it started, and waits for it.
	Close() error
}

// Bounded is implemented by probers that take a deadline for the next
// operation's round trips (set once per operation, not per round trip).
type Bounded interface {
	Bound(deadline time.Time)
}

// Prober is the measuring client's connection. Do performs one complete
// synchronous round trip of op (depth requests when pipelining) and checks
// the reply. Do is called from one goroutine locked to its OS thread and
// must not allocate in steady state.
type Prober interface {
	Do(op Op) error
	// Describe says which client implementation measures, e.g.
	// "goblin client library" or "raw RESP over a socket".
	Describe() string
	Close() error
}

// Measurer is implemented by instances whose own client measures (the raw
// Aeron ping-pong); the runner calls it instead of driving a Prober.
type Measurer interface {
	Measure(ctx context.Context, op Op, warmup, samples int) (Summary, []int64, string, error)
	Describe() string
}
