package server

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/goblin-kv/goblin/engine"
	"github.com/goblin-kv/goblin/idle"
	"github.com/goblin-kv/goblin/snapshot"
	"github.com/goblin-kv/goblin/store"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/uds"
)

// RequestSlack is what a request may hold besides its value: the key (at
// most 64 KiB in the store) and the command's other arguments and headers.
// The default MaxInput leaves at least this much room past MaxValueLen.
const RequestSlack = 128 << 10

// ErrOptions is wrapped by every Validate error.
var ErrOptions = errors.New("server: bad options")

// Defaults for the zero values of Options.
const (
	DefaultTCPListen       = "tcp://127.0.0.1:" + transport.DefaultTCPPort
	DefaultMetricsInterval = 100 * time.Millisecond
	DefaultTickBudget      = 32
	DefaultShutdownTimeout = 5 * time.Second
	// DefaultMaxClientMemory is the total the socket clients' buffers
	// may hold when Options.MaxClientMemory is 0.
	DefaultMaxClientMemory = 1 << 30
	// MaxMaxValueLen is the largest Options.MaxValueLen: Redis's
	// proto-max-bulk-len ceiling of 512 MiB, less what the store's slot
	// layout reserves (store.HardMaxValueLen).
	MaxMaxValueLen = store.HardMaxValueLen
)

// DefaultListen returns the targets a zero Options listens on: the Unix
// socket goblin-client dials by default, and TCP on 127.0.0.1:6380.
func DefaultListen() []string {
	return []string{transport.DefaultTarget().String(), DefaultTCPListen}
}

// DefaultDatabases is Options.Databases' default, Redis's; MaxDatabases
// bounds it (each database used is a store of its own).
const (
	DefaultDatabases = engine.DefaultDatabases
	MaxDatabases     = 1024
)

// Options configure a Server. The zero value works: call EnsureDefaults
// (New does) and Validate.
type Options struct {
	// Listen lists the targets to serve, e.g. "uds:///run/goblin.sock",
	// "tcp://127.0.0.1:6380?proto=sbe". Default DefaultListen().
	Listen []string

	// Idle is the loop's idle strategy: "spin", "yield", "backoff" or
	// "doze" (default: backoff that dozes at rest). See docs/server.md for
	// the latency each costs.
	Idle string
	// Backoff tunes backoff: idle cycles spinning, then yielding, then
	// parks (zero fields: DefaultBackoff, which says why it differs from
	// idle.DefaultParams).
	Backoff idle.Params
	// CPUs pins the loop thread to these CPUs; empty leaves it to the
	// kernel.
	CPUs []int

	// MaxMemory caps the store's bytes (0: no cap); MaxMemoryPolicy says
	// what happens at the cap.
	MaxMemory       int64
	MaxMemoryPolicy store.EvictionPolicy
	// RequirePass is the default ACL user's password (requirepass): when
	// set, clients AUTH before anything else.
	RequirePass string
	// ProtectedModeOff turns Redis's protected mode off (protected-mode
	// no). With it on (the zero value, as Redis's default), while the
	// default user has no password, TCP clients from beyond the loopback
	// interface are refused with Redis's DENIED error.
	ProtectedModeOff bool
	// ACLFile is Redis's aclfile: ACL users read at start (a bad file
	// refuses the start), by ACL LOAD, and written by ACL SAVE.
	ACLFile string
	// ACLLogMaxLen is acllog-max-len (default 128).
	ACLLogMaxLen int
	// SlowlogSlowerThan is slowlog-log-slower-than in microseconds (nil:
	// 10000; negative: no slow log); SlowlogMaxLen is slowlog-max-len (0:
	// 128).
	SlowlogSlowerThan *int64
	SlowlogMaxLen     int
	// LFULogFactor and LFUDecayTime are lfu-log-factor and lfu-decay-time
	// (minutes) of the LFU policies (nil: Redis's 10 and 1).
	LFULogFactor, LFUDecayTime *int
	// The latency monitor and tracking (docs/commands.md, LATENCY):
	// latency-monitor-threshold in ms (0: off), latency-tracking no,
	// latency-tracking-info-percentiles (nil: 50 99 99.9).
	LatencyMonitorThreshold int64
	LatencyTrackingOff      bool
	LatencyPercentiles      []float64
	// Databases is how many numbered databases SELECT chooses from
	// (Redis's "databases"); 0 means DefaultDatabases (16).
	Databases int

	// ClusterConfig, when set, is the cluster configuration file that puts
	// the server in cluster mode (docs/cluster.md); ClusterNode, when set,
	// names this node in it (else the file's "myself" line does).
	ClusterConfig string
	ClusterNode   string

	// ClusterEnabled makes the server a Redis Cluster member speaking the
	// cluster bus (cluster-enabled yes; docs/cluster.md): membership in
	// ClusterConfigFile (nodes.conf, relative to Dir), the bus on
	// ClusterPort (0: the RESP TCP port + 10000), failure detection after
	// ClusterNodeTimeout (0: 15 s). It excludes ClusterConfig.
	ClusterEnabled          bool
	ClusterConfigFile       string
	ClusterNodeTimeout      time.Duration
	ClusterPort             int
	ClusterAnnounceIP       string
	ClusterAnnounceHostname string
	// ClusterAllowReadsWhenDown is cluster-allow-reads-when-down yes;
	// ClusterPartialCoverage is cluster-require-full-coverage no.
	ClusterAllowReadsWhenDown bool
	ClusterPartialCoverage    bool
	// ClusterValidityFactor is cluster-replica-validity-factor (0: any
	// data age may stand in an election; goblin-server's flag defaults to
	// Redis's 10); ClusterMigrationBarrier is cluster-migration-barrier;
	// ClusterNoReplicaMigration is cluster-allow-replica-migration no.
	ClusterValidityFactor     int
	ClusterMigrationBarrier   int
	ClusterNoReplicaMigration bool
	// ClusterReplicaNoFailover is cluster-replica-no-failover yes;
	// ClusterNoPubsubShardWhenDown is cluster-allow-pubsubshard-when-down
	// no; ClusterAnnouncePort, ClusterAnnounceBusPort and
	// ClusterAnnounceTLSPort are cluster-announce-port, -bus-port and
	// -tls-port (0: the real ones); ClusterLinkSendbufLimit is
	// cluster-link-sendbuf-limit and ClusterPreferredEndpointType
	// cluster-preferred-endpoint-type ("": ip), both kept for CONFIG GET
	// (server/clusterparams.go).
	ClusterReplicaNoFailover                                            bool
	ClusterNoPubsubShardWhenDown                                        bool
	ClusterAnnouncePort, ClusterAnnounceBusPort, ClusterAnnounceTLSPort int
	ClusterLinkSendbufLimit                                             int64
	ClusterPreferredEndpointType                                        string

	// ConfigFile, when set, is the configuration file the server was
	// started with: CONFIG REWRITE writes the parameters CONFIG SET
	// changed into it (redis.conf syntax, docs/config.md).
	ConfigFile string

	// MaxClients caps the clients of each socket listener (default
	// uds.DefaultMaxClients).
	MaxClients int
	// MaxOutput caps the reply bytes queued for one socket client before
	// it is disconnected as a slow consumer (default uds.DefaultMaxOutput).
	MaxOutput int
	// StallTimeout is how long a socket client may leave MaxOutput bytes
	// of replies unread before it is disconnected (default
	// uds.DefaultStallTimeout).
	StallTimeout time.Duration
	// MaxInput caps one incomplete request held for a socket client
	// (default uds.DefaultMaxInput, or MaxValueLen plus RequestSlack when
	// that is more).
	MaxInput int
	// MaxClientMemory caps the bytes all socket clients together may hold
	// in buffers (unexecuted requests, unread replies, partial-request
	// state), Redis's maxmemory-clients: past it the clients holding the
	// most are disconnected. 0 means DefaultMaxClientMemory; negative
	// means no limit.
	MaxClientMemory int64
	// PassOutput caps the reply bytes one socket client's requests may
	// produce per loop pass; its further requests wait for the next pass
	// (default uds.DefaultPassOutput).
	PassOutput int
	// MaxValueLen is the longest value the store accepts and the longest
	// RESP bulk string (Redis's proto-max-bulk-len) or SBE frame (plus
	// 64 KiB) a request may carry; default store.DefaultMaxValueLen, at
	// most MaxMaxValueLen.
	MaxValueLen int
	// IdleTimeout disconnects socket clients silent that long (0: never).
	IdleTimeout time.Duration
	// SocketMode is the Unix socket files' permission bits (default
	// uds.DefaultSocketMode).
	SocketMode os.FileMode
	// SocketCheckEvery is how many quiet duty cycles pass between two
	// epoll checks of a socket listener (default uds.DefaultCheckEvery).
	SocketCheckEvery int

	// MetricsInterval is how often the loop publishes its counters for
	// the metrics collector (default DefaultMetricsInterval).
	MetricsInterval time.Duration
	// TickBudget bounds the store maintenance done per duty cycle.
	TickBudget int
	// ShutdownTimeout bounds a graceful shutdown.
	ShutdownTimeout time.Duration

	// Persistence (docs/persistence.md). Dir and DBFilename name the RDB
	// file loaded at start and written by SAVE, BGSAVE and the save policy
	// (defaults DefaultDir() and "dump.rdb"); Save is the policy (nil:
	// save only when asked). NoCompression and NoChecksum are Redis's
	// rdbcompression no and rdbchecksum no; KeepWritingOnSaveError is
	// stop-writes-on-bgsave-error no; SkipUnsupported loads a file
	// holding types goblin does not store by skipping those keys.
	Dir, DBFilename                                   string
	Save                                              []engine.SavePoint
	NoCompression, NoChecksum, KeepWritingOnSaveError bool
	SkipUnsupported                                   bool
	// ProtectedConfig lets CONFIG SET change dir and dbfilename (Redis's
	// enable-protected-configs yes).
	ProtectedConfig bool
	// Replication configures the primary side of replication
	// (docs/replication.md); the zero value is Redis's defaults.
	Replication engine.ReplicationOptions
	// NotifyKeyspaceEvents is notify-keyspace-events (docs/pubsub.md).
	NotifyKeyspaceEvents string
	// SaveSlice bounds the time a background save works per loop cycle
	// (default engine.DefaultSaveSlice).
	SaveSlice time.Duration
	// SaveWriterPriority is the kernel priority of a background save's
	// writer thread (--bgsave-writer-priority; default idle, with a rescuer).
	SaveWriterPriority snapshot.WriterPriority
	// SaveLoopRest is when the loop rests between a background save's
	// slices (--bgsave-loop-rest; default engine.RestAlways).
	SaveLoopRest engine.LoopRest

	// TLS holds Redis's tls-* settings for the tls:// listeners
	// (docs/security.md); CONFIG SET changes them and reloads the files.
	TLS uds.TLSOptions
	// TLSReplication is tls-replication: connect to the primary over TLS
	// with TLS.OutgoingConfig.
	TLSReplication bool
	// TLSCluster is tls-cluster: the cluster bus's links run over TLS
	// (tlscluster.go).
	TLSCluster bool
	// Replica side of replication (docs/replication.md). ReplicaOf is
	// replicaof, "host port": follow that primary from the start (empty:
	// serve as a primary until REPLICAOF). MasterAuth and MasterUser
	// authenticate to it; ReplTimeout is repl-timeout (default 60 s);
	// WritableReplica is replica-read-only no; NoStaleData is
	// replica-serve-stale-data no.
	ReplicaOf              string
	MasterAuth, MasterUser string
	ReplTimeout            time.Duration
	WritableReplica        bool
	NoStaleData            bool
	// ReplicaPriority is replica-priority (0: replica.DefaultPriority,
	// 100), which Sentinel reads in INFO: it promotes the lowest;
	// NeverPromote is replica-priority 0 (Sentinel never promotes this
	// replica). AnnounceIP and AnnouncePort are replica-announce-ip and
	// replica-announce-port (sent in the handshake's REPLCONF instead of
	// the connection's address and the TCP port); ReplicaHidden is
	// replica-announced no.
	ReplicaPriority int
	NeverPromote    bool
	AnnounceIP      string
	AnnouncePort    int
	ReplicaHidden   bool
	// AeronReplication is replication over one Aeron stream
	// (docs/replication-aeron.md): the primary's publication, the
	// replica's subscription.
	AeronReplication AeronReplication

	// Logger receives the server's structured logs (default: discard).
	Logger *slog.Logger
}

// DefaultDBFilename is the RDB file's default name, Redis's.
const DefaultDBFilename = "dump.rdb"

// DefaultDir returns the directory snapshots go to unless Options.Dir says
// otherwise: $XDG_STATE_HOME/goblin, else /var/lib/goblin for root and
// ~/.local/state/goblin for other users. Never the working directory, so
// running the server from a source tree leaves no file in it.
func DefaultDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "goblin")
	}
	if os.Geteuid() == 0 {
		return "/var/lib/goblin"
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "goblin")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("goblin-%d", os.Getuid()), "state")
}

// EnsureDefaults fills the zero fields with defaults.
func (o *Options) EnsureDefaults() {
	if len(o.Listen) == 0 {
		o.Listen = DefaultListen()
	}
	if o.Idle == "" {
		o.Idle = DefaultIdle
	}
	o.Backoff = o.Backoff.WithDefaults(DefaultBackoff)
	if o.MaxClients == 0 {
		o.MaxClients = uds.DefaultMaxClients
	}
	if o.MaxOutput == 0 {
		o.MaxOutput = uds.DefaultMaxOutput
	}
	if o.StallTimeout == 0 {
		o.StallTimeout = uds.DefaultStallTimeout
	}
	if o.MaxValueLen == 0 {
		o.MaxValueLen = store.DefaultMaxValueLen
	}
	if o.MaxInput == 0 {
		// Room for the largest value and the rest of its command.
		o.MaxInput = max(uds.DefaultMaxInput, o.MaxValueLen+RequestSlack)
	}
	if o.MaxClientMemory == 0 {
		o.MaxClientMemory = DefaultMaxClientMemory
	}
	if o.PassOutput == 0 {
		o.PassOutput = uds.DefaultPassOutput
	}
	if o.SocketMode == 0 {
		o.SocketMode = uds.DefaultSocketMode
	}
	if o.SocketCheckEvery == 0 {
		o.SocketCheckEvery = uds.DefaultCheckEvery
	}
	if o.MetricsInterval == 0 {
		o.MetricsInterval = DefaultMetricsInterval
	}
	if o.TickBudget == 0 {
		o.TickBudget = DefaultTickBudget
	}
	if o.ShutdownTimeout == 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.DBFilename == "" {
		o.DBFilename = DefaultDBFilename
	}
}

// Validate reports the first inconsistent option, wrapping ErrOptions.
func (o *Options) Validate() error {
	if o.ReplicaOf != "" {
		if _, _, err := ParseReplicaOf(o.ReplicaOf); err != nil {
			return err
		}
	}
	if _, err := NewIdleStrategy(o.Idle, o, nil); err != nil {
		return err
	}
	for _, l := range o.Listen {
		t, err := transport.ParseTarget(l)
		if err != nil {
			return fmt.Errorf("%w: listen: %w", ErrOptions, err)
		}
		if _, ok := builders[t.Scheme]; !ok {
			return fmt.Errorf("%w: listen %q: no %s transport in this build", ErrOptions, l, t.Scheme)
		}
	}
	for _, c := range o.CPUs {
		if c < 0 || c >= 1024 {
			return fmt.Errorf("%w: cpu %d out of range", ErrOptions, c)
		}
	}
	switch {
	case o.MaxMemory < 0:
		return fmt.Errorf("%w: maxmemory %d is negative", ErrOptions, o.MaxMemory)
	case o.Databases < 0 || o.Databases > MaxDatabases:
		return fmt.Errorf("%w: databases %d: want 1 to %d", ErrOptions, o.Databases, MaxDatabases)
	case o.MaxClients < 0, o.MaxOutput < 0, o.MaxInput < 0, o.SocketCheckEvery < 0, o.TickBudget < 0, o.PassOutput < 0:
		return fmt.Errorf("%w: limits must not be negative", ErrOptions)
	case o.MaxValueLen < 0 || o.MaxValueLen > MaxMaxValueLen:
		return fmt.Errorf("%w: max value length %d: want 1 to %d bytes (512 MiB less 2)", ErrOptions, o.MaxValueLen, MaxMaxValueLen)
	case o.MaxInput < o.MaxValueLen+RequestSlack:
		return fmt.Errorf("%w: the client input limit (%d bytes) must exceed the max value length (%d) by %d bytes, so a SET of the largest value fits: raise the input limit or lower the value length",
			ErrOptions, o.MaxInput, o.MaxValueLen, RequestSlack)
	case o.IdleTimeout < 0, o.StallTimeout < 0:
		return fmt.Errorf("%w: timeouts must not be negative", ErrOptions)
	case o.SocketMode&^0o777 != 0:
		return fmt.Errorf("%w: socket mode %o has bits beyond 0777", ErrOptions, o.SocketMode)
	}
	if strings.ContainsRune(o.DBFilename, '/') {
		return fmt.Errorf("%w: dbfilename %q can't be a path, just a filename (the directory is --dir)", ErrOptions, o.DBFilename)
	}
	if err := o.Backoff.WithDefaults(DefaultBackoff).Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrOptions, err)
	}
	return nil
}
