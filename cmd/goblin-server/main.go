// Command goblin-server runs a goblin key/value cache server.
//
// With no flags it listens on the Unix socket goblin-client dials by
// default ($XDG_RUNTIME_DIR/goblin.sock, else /run/goblin/goblin.sock for
// root and $TMPDIR/goblin-UID/goblin.sock, a directory of the user's own,
// for other users) and on
// tcp://127.0.0.1:6380 for Redis clients, and serves Prometheus metrics on
// http://127.0.0.1:9380/metrics. Run goblin-server --help for every flag;
// docs/server.md explains them.
//
// Exit codes: 0 after a clean shutdown (SIGINT or SIGTERM), 1 when the
// server cannot start or fails while running (or a second SIGINT cuts a
// shutdown short; a repeated SIGTERM does not), 2 for bad flags or a bad
// configuration file.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/goblin-kv/goblin/engine"
	"github.com/goblin-kv/goblin/internal/buildinfo"
	"github.com/goblin-kv/goblin/internal/sdnotify"
	"github.com/goblin-kv/goblin/replica"
	"github.com/goblin-kv/goblin/server"
	"github.com/goblin-kv/goblin/snapshot"
	"github.com/goblin-kv/goblin/store"
	"github.com/goblin-kv/goblin/transport/uds"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// requirePassEnv names the environment variable --requirepass defaults to,
// so the password need not appear on the command line.
const requirePassEnv = "GOBLIN_REQUIREPASS"

// DefaultMetrics is where --metrics listens unless told otherwise.
const DefaultMetrics = "127.0.0.1:9380"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// config is what the flags and the configuration file fill.
type config struct {
	listen      listFlag
	metrics     string
	idle        string
	cpu         string
	maxmemory   string
	policy      string
	requirepass string
	protected   string
	aclFile     string
	aclLogMax   int
	slowerThan  int64
	slowMaxLen  int
	lfuFactor   int
	lfuDecay    int
	maxclients  int
	databases   int
	maxOutput   string
	stall       time.Duration
	maxInput    string
	clientMem   string
	passOutput  string
	maxBulk     string
	idleTimeout time.Duration
	socketMode  string
	checkEvery  int
	logLevel    string
	logFormat   string
	configFile  string
	ignoreUnsup bool
	version     bool

	clusterConfig, clusterNode string
	// The cluster bus (docs/cluster.md).
	clusterEnabled, clusterFile, clusterIP, clusterHost string
	clusterTimeout, clusterPort                         int
	clusterBus                                          clusterBusFlags
	aeronDir                                            string

	dir, dbfilename, save       string
	rdbcompression, rdbchecksum string
	// Replication, primary side (docs/replication.md).
	replBacklog, replDiskless   string
	replPing, replTimeout       int64
	minReplicas, minReplicasLag int64
	stopWritesOnError           string
	writerPriority              string
	loopRest                    string
	rdbSkipUnsupported          bool
	protectedConfigs            string

	// The latency monitor and tracking.
	latencyThreshold   int64
	latencyTracking    string
	latencyPercentiles string

	// TLS (docs/security.md)
	tlsPort                       int
	tls                           uds.TLSOptions
	tlsPreferServer, tlsCaching   string
	tlsCacheSize, tlsCacheTimeout int
	tlsReplication                string
	tlsCluster                    string

	// The replica side of replication (docs/replication.md).
	replicaOf, masterAuth, masterUser string
	notifyEvents                      string
	replicaReadOnly, serveStale       string
	replicaPriority, announcePort     int
	announceIP, replicaAnnounced      string
	lazyExpire, lazyEviction          string
	syncDelay, backlogTTL             int64

	// Replication over Aeron (docs/replication-aeron.md).
	aeronRepl server.AeronReplication
	aeronSID  int
}

func flags(c *config, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("goblin-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&c.version, "version", false, "print the version, the VCS revision and the Go version, and exit")
	fs.Var(&c.listen, "listen", "`targets` to serve, comma separated or repeated: uds:///path.sock, tcp://HOST:PORT (ring:// and aeron: too, see docs/transports.md), each with ?proto=resp|sbe (default: "+strings.Join(server.DefaultListen(), ",")+")")
	fs.StringVar(&c.metrics, "metrics", DefaultMetrics, "`address` of the Prometheus metrics HTTP listener (/metrics); \"off\" disables it")
	fs.StringVar(&c.idle, "idle", server.DefaultIdle, "loop idle `strategy`: spin (lowest latency, burns a core), yield, backoff (spin ~10µs, yield, then park up to "+server.DefaultBackoff.MaxPark.String()+"; wakes at once for socket requests), doze (backoff whose parks, in a server of sockets alone, grow to "+server.DefaultDoze.String()+" at rest, ending at the next timer)")
	fs.StringVar(&c.cpu, "cpu", "", "pin the store loop thread to these `CPUs` (e.g. 3 or 2,3); empty leaves it to the kernel")
	fs.StringVar(&c.maxmemory, "maxmemory", "0", "memory cap of the store in `bytes` (suffixes kb, mb, gb); 0 means none")
	fs.StringVar(&c.policy, "maxmemory-policy", store.NoEviction.String(), "what a write does at --maxmemory: noeviction, allkeys-lru, volatile-lru, allkeys-lfu, volatile-lfu, allkeys-random, volatile-random or volatile-ttl")
	fs.IntVar(&c.lfuFactor, "lfu-log-factor", store.DefaultLFULogFactor, "under allkeys-lfu or volatile-lfu: how slowly a key's 8-bit access counter grows (an access adds one with probability 1/((counter-5)*factor+1)); 0 counts every access")
	fs.IntVar(&c.lfuDecay, "lfu-decay-time", store.DefaultLFUDecayTime, "under allkeys-lfu or volatile-lfu: the `minutes` after which an untouched key's access counter loses one; 0 never decays")
	fs.StringVar(&c.requirepass, "requirepass", "", "`password` clients must AUTH with before other commands; empty disables AUTH. The command line is visible to every local user (ps, /proc): prefer the "+requirePassEnv+" environment variable or a configuration file readable by the server only")
	fs.StringVar(&c.protected, "protected-mode", "yes", "Redis's protected mode, yes or no: while yes and the default user has no password, TCP clients from beyond the loopback interface are refused with Redis's DENIED error")
	fs.StringVar(&c.aclFile, "aclfile", "", "ACL users `file` (Redis's aclfile format: one \"user NAME rules...\" per line), read at start (errors refuse the start) and by ACL LOAD, written by ACL SAVE (docs/acl.md)")
	fs.IntVar(&c.aclLogMax, "acllog-max-len", 128, "entries the ACL LOG keeps")
	fs.Int64Var(&c.slowerThan, "slowlog-log-slower-than", 10000, "SLOWLOG keeps the commands that ran at least this many `microseconds`; 0 keeps every command, a negative value turns the slow log off (no command is timed)")
	fs.IntVar(&c.slowMaxLen, "slowlog-max-len", 128, "entries SLOWLOG keeps")
	fs.IntVar(&c.maxclients, "maxclients", uds.DefaultMaxClients, "maximum connected clients per socket listener")
	fs.IntVar(&c.databases, "databases", server.DefaultDatabases, "how many numbered databases SELECT chooses from (0 to N-1), as Redis's databases")
	fs.StringVar(&c.maxOutput, "client-output-limit", sizeText(uds.DefaultMaxOutput), "reply `bytes` queued for one client before it is disconnected as a slow consumer")
	fs.DurationVar(&c.stall, "client-stall-timeout", uds.DefaultStallTimeout, "disconnect a client that leaves --client-output-limit bytes of replies unread this long")
	fs.StringVar(&c.maxInput, "client-input-limit", "", "`bytes` of one incomplete request held for a client before it is disconnected (default "+sizeText(uds.DefaultMaxInput)+", or --proto-max-bulk-len plus "+sizeText(server.RequestSlack)+" when that is more)")
	fs.StringVar(&c.clientMem, "maxmemory-clients", sizeText(server.DefaultMaxClientMemory), "`bytes` all socket clients together may hold in buffers (unexecuted requests, unread replies); past it the clients holding the most are disconnected; 0 means no limit")
	fs.StringVar(&c.passOutput, "client-output-per-pass", sizeText(uds.DefaultPassOutput), "reply `bytes` one client's requests may produce per loop pass before its further requests wait for the next pass, so one client asking for large replies cannot stall the others")
	fs.StringVar(&c.maxBulk, "proto-max-bulk-len", sizeText(store.DefaultMaxValueLen), "longest value and longest key the store accepts, and longest bulk string (RESP) or frame (SBE) a request may carry, in `bytes`; at most 512mb")
	fs.DurationVar(&c.idleTimeout, "timeout", 0, "disconnect socket clients idle for this `duration` (e.g. 5m); 0 never does")
	fs.StringVar(&c.socketMode, "socket-mode", fmt.Sprintf("%#o", uint32(uds.DefaultSocketMode)), "permission `bits` (octal) of Unix socket files")
	fs.IntVar(&c.checkEvery, "socket-check-every", uds.DefaultCheckEvery, "quiet loop `cycles` between two epoll checks of a socket listener (1: every cycle)")
	fs.StringVar(&c.logLevel, "log-level", "info", "log `level`: debug, info, warn or error")
	fs.StringVar(&c.logFormat, "log-format", "text", "log `format`: text or json")
	fs.StringVar(&c.aeronDir, "aeron-dir", "", "Aeron `directory` of a media driver something else runs, used by every aeron: listener (adds dir=…|driver=external); empty: every aeron: listener, IPC or UDP, runs goblin's Go media driver inside goblin-server (driver=java: starts and supervises the Java driver instead) (docs/transports.md)")
	fs.StringVar(&c.clusterConfig, "cluster-config", "", "cluster configuration `file`: serve as a Redis Cluster node owning the slots the file gives it (docs/cluster.md); SIGHUP or CLUSTER RELOAD reads it again")
	fs.StringVar(&c.clusterNode, "cluster-node", "", "this node's `id` in --cluster-config (40 hex digits), for a file shared by every node; default: the file's \"myself\" line")
	fs.StringVar(&c.clusterEnabled, "cluster-enabled", "no", "yes: be a Redis Cluster node speaking Redis 7.0's cluster bus, which redis-cli --cluster and redis-server 7.0 nodes work with (docs/cluster.md); excludes --cluster-config")
	fs.StringVar(&c.clusterFile, "cluster-config-file", "nodes.conf", "the cluster bus's state `file` in Redis's nodes.conf format (relative to --dir), written on every change and read at start")
	fs.IntVar(&c.clusterTimeout, "cluster-node-timeout", 15000, "`milliseconds` a node may not answer before it is suspected (PFAIL), then failed over by a majority")
	fs.IntVar(&c.clusterPort, "cluster-port", 0, "cluster bus `port`; 0 means the RESP TCP port + 10000")
	fs.StringVar(&c.clusterIP, "cluster-announce-ip", "", "IP `address` the cluster bus announces to peers (default: the address they reached this node on)")
	c.clusterBus.register(fs)
	fs.StringVar(&c.clusterHost, "cluster-announce-hostname", "", "`hostname` the cluster bus announces (the 7.0 hostname ping extension; CLUSTER NODES shows it)")
	fs.StringVar(&c.configFile, "config", "", "configuration `file` in redis.conf's syntax (also the first argument, as redis-server takes it): Redis's directive names for the settings goblin shares with Redis, these flags' names for the rest; flags on the command line win (docs/config.md)")
	fs.BoolVar(&c.ignoreUnsup, "ignore-unsupported", false, "start even when the configuration file has Redis directives goblin does not support, logging a warning for each (without it they are refused, all listed)")
	fs.StringVar(&c.dir, "dir", "", "`directory` of the RDB snapshot loaded at start and written by SAVE, BGSAVE, the save policy and SHUTDOWN (default $XDG_STATE_HOME/goblin, else /var/lib/goblin for root, ~/.local/state/goblin for others; never the working directory)")
	fs.StringVar(&c.dbfilename, "dbfilename", server.DefaultDBFilename, "`name` of the RDB snapshot file in --dir")
	fs.StringVar(&c.save, "save", "", "save `policy`: pairs of seconds and changes, e.g. \"3600 1 300 100 60 10000\" (save when that many changes happened in that many seconds; SIGTERM then saves too); empty saves only on SAVE, BGSAVE and SHUTDOWN SAVE")
	fs.StringVar(&c.rdbcompression, "rdbcompression", "yes", "LZF-compress long strings in snapshots: yes or no")
	fs.StringVar(&c.rdbchecksum, "rdbchecksum", "yes", "end snapshots with a CRC64: yes or no")
	fs.StringVar(&c.stopWritesOnError, "stop-writes-on-bgsave-error", "yes", "with a save policy, refuse writes (MISCONF) after a background save failed, until one succeeds: yes or no")
	fs.StringVar(&c.loopRest, "bgsave-loop-rest", "always", "when the loop rests (parks for a save slice's length, woken early by a socket's or ring client's request; never beside Aeron IPC or an external driver, nor on kernels without epoll_pwait2) between a BGSAVE's slices: always (after every slice: a save ~20 % longer, clients' tails during it halved), requests (after serving requests, and while the writer is behind), no; docs/persistence.md")
	fs.StringVar(&c.writerPriority, "bgsave-writer-priority", "idle", "kernel priority of a BGSAVE's writer thread: idle (SCHED_IDLE: it runs on CPU time the loop, the clients and other work leave, and a writer at the process's priority takes over if it gets too little) or normal (the process's); docs/persistence.md")
	fs.BoolVar(&c.rdbSkipUnsupported, "rdb-skip-unsupported", false, "load a snapshot holding types goblin does not store (streams, module values, functions) by skipping those keys, logging the count; without it such a file is refused")
	fs.StringVar(&c.replBacklog, "repl-backlog-size", "1mb", "`bytes` of replication stream kept so a replica that lost its link briefly continues (+CONTINUE) instead of a full sync; at least 16kb (docs/replication.md)")
	fs.StringVar(&c.replDiskless, "repl-diskless-sync", "yes", "send a full sync's snapshot in the $EOF: form to replicas that can read it: yes or no (the $<length> form)")
	fs.Int64Var(&c.replPing, "repl-ping-replica-period", engine.DefaultReplPingPeriod, "`seconds` between the PINGs in the replication stream")
	fs.Int64Var(&c.replTimeout, "repl-timeout", engine.DefaultReplTimeout, "`seconds` of silence after which a primary drops a replica (no ACK) and a replica drops its link to the primary and reconnects")
	fs.Int64Var(&c.minReplicas, "min-replicas-to-write", 0, "refuse writes (NOREPLICAS) while fewer than this many replicas ACKed within --min-replicas-max-lag; 0: never")
	fs.Int64Var(&c.minReplicasLag, "min-replicas-max-lag", engine.DefaultMinReplicasLag, "`seconds` since its last ACK within which a replica counts for --min-replicas-to-write")
	fs.StringVar(&c.protectedConfigs, "enable-protected-configs", "no", "let CONFIG SET change dir and dbfilename: yes or no (a client that can point the snapshot anywhere can write files anywhere the server may)")
	// The latency monitor and tracking (LATENCY, docs/commands.md).
	fs.Int64Var(&c.latencyThreshold, "latency-monitor-threshold", 0, "LATENCY records the commands and loop steps that took at least this many `milliseconds`; 0 turns the monitor off")
	fs.StringVar(&c.latencyTracking, "latency-tracking", "yes", "per-command latency histograms (LATENCY HISTOGRAM, INFO latencystats): yes or no")
	fs.StringVar(&c.latencyPercentiles, "latency-tracking-info-percentiles", "50 99 99.9", "the `percentiles` INFO latencystats gives, space separated")
	// TLS, as Redis's tls-* settings (docs/security.md).
	fs.IntVar(&c.tlsPort, "tls-port", 0, "serve TLS on this TCP `port`, on each host a tcp:// listener binds (127.0.0.1 without one); 0: no TLS listener. --listen tls://HOST:PORT names one directly")
	fs.StringVar(&c.tls.CertFile, "tls-cert-file", "", "the TLS listeners' certificate `file` (PEM, may hold the chain)")
	fs.StringVar(&c.tls.KeyFile, "tls-key-file", "", "the private key `file` of --tls-cert-file (PEM; encrypted in the legacy PEM format with --tls-key-file-pass)")
	fs.StringVar(&c.tls.KeyFilePass, "tls-key-file-pass", "", "`password` of an encrypted --tls-key-file")
	fs.StringVar(&c.tls.CACertFile, "tls-ca-cert-file", "", "CA certificates `file` (PEM) client certificates are checked against")
	fs.StringVar(&c.tls.CACertDir, "tls-ca-cert-dir", "", "`directory` of CA certificate files (PEM) client certificates are checked against")
	fs.StringVar(&c.tls.AuthClients, "tls-auth-clients", "yes", "client certificates: yes (required, checked against the CA), optional (checked when given) or no")
	fs.StringVar(&c.tls.Protocols, "tls-protocols", "", "TLS versions served, space separated: TLSv1, TLSv1.1, TLSv1.2, TLSv1.3 (default \"TLSv1.2 TLSv1.3\")")
	fs.StringVar(&c.tls.Ciphers, "tls-ciphers", "", "TLS 1.2 cipher `suites`, colon separated (OpenSSL or IANA names of suites Go implements); empty: Go's defaults")
	fs.StringVar(&c.tls.Ciphersuites, "tls-ciphersuites", "", "TLS 1.3 suites: Go always offers all three, so only empty or all three is accepted")
	fs.StringVar(&c.tlsPreferServer, "tls-prefer-server-ciphers", "no", "yes or no; Go's crypto/tls always chooses by the server's order, so both behave as yes")
	fs.StringVar(&c.tlsCaching, "tls-session-caching", "yes", "TLS session resumption (session tickets): yes or no")
	fs.IntVar(&c.tlsCacheSize, "tls-session-cache-size", uds.DefaultSessionCacheSize, "how many TLS sessions the server keeps for resumption; 0: no bound")
	fs.IntVar(&c.tlsCacheTimeout, "tls-session-cache-timeout", uds.DefaultSessionCacheTimeout, "`seconds` a TLS session may be resumed for")
	fs.StringVar(&c.tlsCluster, "tls-cluster", "no", "yes: the cluster bus (--cluster-enabled) runs over TLS between nodes, with the TLS certificates, CA and tls-auth-clients")
	fs.StringVar(&c.tlsReplication, "tls-replication", "no", "yes: connect to the primary (--replicaof, REPLICAOF) over TLS, checking its certificate against --tls-ca-cert-file")
	fs.StringVar(&c.tls.ClientCertFile, "tls-client-cert-file", "", "certificate `file` presented when connecting out over TLS (to the primary); default --tls-cert-file")
	fs.StringVar(&c.tls.ClientKeyFile, "tls-client-key-file", "", "private key `file` of --tls-client-cert-file; default --tls-key-file")
	fs.StringVar(&c.tls.ClientKeyFilePass, "tls-client-key-file-pass", "", "`password` of an encrypted --tls-client-key-file")
	// The replica side of replication (docs/replication.md).
	fs.StringVar(&c.replicaOf, "replicaof", "", "follow the primary at `\"host port\"` (a redis-server or a goblin) as a read-only replica from the start; REPLICAOF changes it at run time (docs/replication.md)")
	fs.StringVar(&c.masterAuth, "masterauth", "", "`password` to AUTH with to the primary (--replicaof)")
	fs.StringVar(&c.masterUser, "masteruser", "", "ACL `user` to AUTH as to the primary (with --masterauth)")
	fs.StringVar(&c.notifyEvents, "notify-keyspace-events", "", "keyspace notifications to publish, Redis's `classes` (K keyspace, E keyevent, g $ l s h z x e t m d n, A all but m and n); empty: none")
	fs.StringVar(&c.replicaReadOnly, "replica-read-only", "yes", "refuse writes from clients while following a primary (READONLY): yes or no")
	fs.StringVar(&c.serveStale, "replica-serve-stale-data", "yes", "serve reads while the link to the primary is down: yes, or no to answer MASTERDOWN")
	fs.IntVar(&c.replicaPriority, "replica-priority", replica.DefaultPriority, "this replica's `priority` for Sentinel (INFO slave_priority): the lowest is promoted first; 0: never promoted")
	fs.StringVar(&c.announceIP, "replica-announce-ip", "", "`address` the primary (and so Sentinel) lists this replica by, sent in REPLCONF ip-address, instead of the connection's (a replica behind NAT)")
	fs.IntVar(&c.announcePort, "replica-announce-port", 0, "`port` the primary lists this replica by, sent in REPLCONF listening-port, instead of the TCP listener's; 0: that one")
	fs.StringVar(&c.replicaAnnounced, "replica-announced", "yes", "no: INFO says replica_announced:0 and Sentinel leaves this replica out of what it tells clients")
	fs.Int64Var(&c.syncDelay, "repl-diskless-sync-delay", 0, "`seconds` a diskless full sync waits after a replica asks, so replicas that arrive together share one snapshot (Redis's default is 5)")
	fs.Int64Var(&c.backlogTTL, "repl-backlog-ttl", engine.DefaultBacklogTTL, "`seconds` without a replica after which a primary frees its backlog (and takes a new replication id); 0: never")
	fs.StringVar(&c.lazyExpire, "lazyfree-lazy-expire", "no", "yes: keys that expire go into the replication stream as UNLINK instead of DEL")
	fs.StringVar(&c.lazyEviction, "lazyfree-lazy-eviction", "no", "yes: evicted keys go into the replication stream as UNLINK instead of DEL")
	// Replication over Aeron (docs/replication-aeron.md).
	fs.StringVar(&c.aeronRepl.Channel, "repl-aeron-channel", "", "publish the replication stream once on this Aeron `channel` (multicast aeron:udp?endpoint=239.1.2.3:40456|interface=10.0.0.1, or MDC aeron:udp?control-mode=dynamic|control=10.0.0.1:40457|fc=max); docs/replication-aeron.md")
	fs.StringVar(&c.aeronRepl.StatusChannel, "repl-aeron-status-channel", "", "on a primary, read the Aeron replicas' positions from this `channel` (aeron:udp?endpoint=10.0.0.1:40458) for INFO replication")
	fs.StringVar(&c.aeronRepl.ReplicaChannel, "replica-aeron-channel", "", "on a replica of a goblin primary with --repl-aeron-channel, receive its stream on this Aeron `channel` (multicast: the same endpoint with this host's interface; MDC: aeron:udp?endpoint=<this host>:<port>|control=<primary>:<port>|control-mode=dynamic); the TCP link (--replicaof, REPLICAOF) still does the full sync and any catch-up")
	fs.StringVar(&c.aeronRepl.ReplicaStatusChannel, "replica-aeron-status-channel", "", "on an Aeron replica, send its position to the primary on this `channel` (the primary's --repl-aeron-status-channel endpoint)")
	fs.StringVar(&c.aeronRepl.ReplicaName, "replica-aeron-name", "", "this replica's `name` in the primary's INFO replication (default host name:TCP port)")
	fs.BoolVar(&c.aeronRepl.ForwardWrites, "replica-forward-writes", false, "on a replica, forward a client's write to the primary (over Aeron with --replica-aeron-status-channel, else TCP) and answer it once this replica has applied it (read-your-writes for that client) instead of refusing it with READONLY; RESP clients of the socket transports only, outside MULTI (docs/replication-aeron.md)")
	fs.IntVar(&c.aeronSID, "repl-aeron-stream-id", 1035, "Aeron `stream id` of the replication stream, the same on the primary and its replicas (the status stream is the next id)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: goblin-server [/path/to/goblin.conf] [flags]\n\ngoblin-server serves a goblin key/value cache over Unix sockets, TCP, goblin's\nshared-memory ring and Aeron (IPC and UDP), each in RESP (for Redis clients) or\nSBE, with Prometheus metrics. See docs/server.md and docs/transports.md.\n\nFlags:\n")
		fs.PrintDefaults()
		fmt.Fprintf(stderr, "\nSignals: SIGTERM or SIGINT shuts down gracefully (answers what clients sent, then exits);\nwith a --save policy it first saves a snapshot; further SIGTERMs are ignored; a second SIGINT (Ctrl-C again) exits at once. SIGHUP reloads\n--cluster-config (and is ignored without it).\n")
		fmt.Fprintf(stderr, "\nExit codes: 0 clean shutdown (SIGINT/SIGTERM), 1 start or run failure or a forced exit, 2 bad flags or config.\n")
	}
	return fs
}

func run(args []string, stdout, stderr io.Writer) int {
	var c config
	fs := flags(&c, stderr)
	// As redis-server: the configuration file may be the first argument.
	positional := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		positional, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if c.version {
		// To stdout, as redis-server --version does, so scripts can read it.
		fmt.Fprintln(stdout, versionLine(buildinfo.Read()))
		return exitOK
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "goblin-server: unexpected arguments %q (a configuration file comes first, before the flags)\n", fs.Args())
		return exitUsage
	}
	if positional != "" {
		if c.configFile != "" && c.configFile != positional {
			fmt.Fprintf(stderr, "goblin-server: two configuration files, %q and --config %q: give one\n", positional, c.configFile)
			return exitUsage
		}
		c.configFile = positional
	}
	var fc *fileConfig
	if c.configFile != "" {
		if abs, err := filepath.Abs(c.configFile); err == nil {
			c.configFile = abs // CONFIG REWRITE writes here whatever the working directory
		}
		var err error
		if fc, err = applyConfigFile(fs, c.configFile, c.ignoreUnsup); err != nil {
			fmt.Fprintf(stderr, "goblin-server: %v\n", err)
			return exitUsage
		}
	}
	log, err := newLogger(c.logLevel, c.logFormat, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "goblin-server: %v\n", err)
		return exitUsage
	}
	if fc != nil {
		log.Info("configuration file read", "file", c.configFile)
		for _, n := range fc.notes {
			log.Warn(n)
		}
	}
	opts, err := options(&c)
	if err != nil {
		fmt.Fprintf(stderr, "goblin-server: %v\n", err)
		return exitUsage
	}
	opts.Logger = log
	logStart(log, opts)
	// Catch the signals before anything is announced, so a SIGTERM sent
	// right after "ready" takes the graceful path.
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	notifier, err := sdnotify.FromEnv()
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitUsage
	}
	srv, err := server.New(opts)
	if err != nil {
		log.Error("cannot start", "err", err)
		if errors.Is(err, server.ErrOptions) {
			return exitUsage
		}
		return exitFailure
	}
	go func() {
		for range hup {
			if c.clusterConfig == "" {
				log.Warn("SIGHUP ignored: there is no --cluster-config to reload")
				continue
			}
			srv.ReloadCluster()
		}
	}()

	var metricsSrv *http.Server
	if c.metrics != "" && c.metrics != "off" {
		ln, err := net.Listen("tcp", loopbackDefault(c.metrics))
		if err != nil {
			log.Error("cannot start the metrics listener", "addr", c.metrics, "err", err)
			srv.Shutdown(context.Background())
			return exitFailure
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", srv.MetricsHandler())
		mux.Handle("/healthz", srv.HealthHandler())
		mux.Handle("/readyz", srv.ReadyHandler())
		metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go metricsSrv.Serve(ln)
		log.Info("metrics listening", "url", "http://"+ln.Addr().String()+"/metrics")
	}

	// Whether the load at start goes on in the loop (the first step in
	// New did not finish the file): read before the loop runs, which may
	// finish it at once.
	loading := false
	select {
	case <-srv.LoadDone():
	default:
		loading = true
	}
	runErr := make(chan error, 1)
	go func() { runErr <- srv.Run() }() // the loop locks this goroutine's thread
	for _, t := range srv.Targets() {
		log.Info("listening", "target", t.String())
	}
	go func() {
		// Ready once the snapshot file is loaded (until then clients get
		// LOADING), as Redis logs "Ready to accept connections" and
		// tells systemd after its load; a load that fails never is.
		<-srv.LoadDone()
		log.Info("ready", "idle", opts.Idle, "pid", os.Getpid())
	}()
	stopWatchdog := notifyReady(notifier, srv, loading, log)
	defer stopWatchdog()

	code := exitOK
	select {
	case s := <-sig:
		log.Info("shutting down", "signal", s.String())
		if err := notifier.Stopping("shutting down on " + s.String()); err != nil {
			log.Warn("cannot tell the service manager", "err", err)
		}
		go watchSignals(sig, time.Now(), log)
		ctx, cancel := context.WithTimeout(context.Background(), opts.ShutdownTimeout)
		if len(opts.Save) > 0 {
			// The final save takes what it takes: cutting it short would
			// lose the changes since the last one.
			cancel()
			ctx, cancel = context.WithCancel(context.Background())
		}
		if err := srv.Shutdown(ctx); err != nil {
			log.Error("shutdown", "err", err)
			code = exitFailure
		} else if err := <-runErr; err != nil {
			log.Error("shutdown", "err", err)
			code = exitFailure
		}
		cancel()
	case err := <-runErr:
		switch {
		case err == nil && srv.StoppedByCommand():
			log.Info("shut down by SHUTDOWN")
		default:
			log.Error("loop stopped", "err", err)
			code = exitFailure
		}
	}
	if metricsSrv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		metricsSrv.Shutdown(ctx)
		cancel()
	}
	log.Info("stopped", "exit_code", code)
	return code
}

// groupEcho is how soon after the signal that began a shutdown a SIGINT is
// taken for a copy of it rather than a second Ctrl-C: GNU timeout, shells
// and process managers send a signal to the process and to its process
// group, so the process gets it twice within microseconds.
const groupEcho = 200 * time.Millisecond

// watchSignals handles the signals that arrive during a graceful shutdown
// that began at began. SIGTERM never cuts it short (supervisors repeat it
// and signal the whole group); a SIGINT more than groupEcho after the start
// (a second Ctrl-C) exits at once, without draining.
func watchSignals(sig <-chan os.Signal, began time.Time, log *slog.Logger) {
	for s := range sig {
		if time.Since(began) <= groupEcho {
			// Not a second request: the copy a process-group signal
			// (timeout, a shell, a process manager) also delivers.
			log.Debug("signal ignored: a copy of the one that began the shutdown, sent to the process group", "signal", s.String())
			continue
		}
		if s == syscall.SIGINT {
			log.Error("second interrupt: exiting without finishing the shutdown", "signal", s.String())
			os.Exit(exitFailure)
		}
		log.Warn("already shutting down: answering what clients sent; interrupt again (Ctrl-C) to exit at once", "signal", s.String())
	}
}

// options turns the flags into server options.
func options(c *config) (server.Options, error) {
	pass := c.requirepass
	if pass == "" {
		pass = os.Getenv(requirePassEnv)
	}
	o := server.Options{
		Listen:           withAeronDir(c.listen, c.aeronDir),
		Idle:             c.idle,
		RequirePass:      pass,
		MaxClients:       c.maxclients,
		Databases:        c.databases,
		IdleTimeout:      c.idleTimeout,
		StallTimeout:     c.stall,
		SocketCheckEvery: c.checkEvery,
		ClusterConfig:    c.clusterConfig,
		ClusterNode:      c.clusterNode,
		ConfigFile:       c.configFile,
		ACLFile:          c.aclFile,
		ACLLogMaxLen:     c.aclLogMax,
		SlowlogMaxLen:    c.slowMaxLen,
	}
	o.SlowlogSlowerThan = &c.slowerThan
	o.LFULogFactor, o.LFUDecayTime = &c.lfuFactor, &c.lfuDecay
	switch strings.ToLower(c.protected) {
	case "yes":
	case "no":
		o.ProtectedModeOff = true
	default:
		return o, fmt.Errorf("--protected-mode %q: want yes or no", c.protected)
	}
	var err error
	if o.CPUs, err = parseCPUs(c.cpu); err != nil {
		return o, err
	}
	if o.MaxMemory, err = parseBytes("maxmemory", c.maxmemory); err != nil {
		return o, err
	}
	if o.MaxMemoryPolicy, err = store.ParseEvictionPolicy(c.policy); err != nil {
		return o, fmt.Errorf("--maxmemory-policy: %w", err)
	}
	n, err := parseBytes("client-output-limit", c.maxOutput)
	if err != nil {
		return o, err
	}
	o.MaxOutput = int(n)
	if c.maxInput != "" {
		if n, err = positiveBytes("client-input-limit", c.maxInput); err != nil {
			return o, err
		}
		o.MaxInput = int(n)
	}
	if n, err = parseBytes("maxmemory-clients", c.clientMem); err != nil {
		return o, err
	}
	o.MaxClientMemory = n
	if n == 0 {
		o.MaxClientMemory = -1 // no limit
	}
	if n, err = positiveBytes("client-output-per-pass", c.passOutput); err != nil {
		return o, err
	}
	o.PassOutput = int(n)
	if n, err = positiveBytes("proto-max-bulk-len", c.maxBulk); err != nil {
		return o, err
	}
	switch {
	case n == 512<<20:
		n = server.MaxMaxValueLen // "512mb", Redis's ceiling, less what the store reserves
	case n > server.MaxMaxValueLen:
		return o, fmt.Errorf("--proto-max-bulk-len %s: at most 512mb", c.maxBulk)
	}
	o.MaxValueLen = int(n)
	mode, err := strconv.ParseUint(c.socketMode, 8, 32)
	if err != nil || mode > 0o777 {
		return o, fmt.Errorf("--socket-mode %q: want octal permission bits such as 0660", c.socketMode)
	}
	o.SocketMode = os.FileMode(mode)
	if c.stall <= 0 {
		return o, errors.New("--client-stall-timeout must be positive")
	}
	if c.maxclients <= 0 || c.checkEvery <= 0 {
		return o, errors.New("--maxclients and --socket-check-every must be positive")
	}
	if c.databases <= 0 || c.databases > server.MaxDatabases {
		return o, fmt.Errorf("--databases %d: want 1 to %d", c.databases, server.MaxDatabases)
	}
	o.Dir, o.DBFilename, o.SkipUnsupported = c.dir, c.dbfilename, c.rdbSkipUnsupported
	if o.Save, err = engine.ParseSavePolicy(c.save); err != nil {
		return o, fmt.Errorf("--save %q: want pairs of seconds and changes, such as \"3600 1 300 100\", or \"\"", c.save)
	}
	for _, yn := range []struct {
		name, v string
		no      *bool
	}{{"rdbcompression", c.rdbcompression, &o.NoCompression}, {"rdbchecksum", c.rdbchecksum, &o.NoChecksum},
		{"stop-writes-on-bgsave-error", c.stopWritesOnError, &o.KeepWritingOnSaveError}} {
		switch strings.ToLower(yn.v) {
		case "yes":
		case "no":
			*yn.no = true
		default:
			return o, fmt.Errorf("--%s %q: want yes or no", yn.name, yn.v)
		}
	}
	if o.SaveLoopRest, err = engine.ParseLoopRest(c.loopRest); err != nil {
		return o, fmt.Errorf("--bgsave-loop-rest %q: want requests, always or no", c.loopRest)
	}
	if o.SaveWriterPriority, err = snapshot.ParseWriterPriority(c.writerPriority); err != nil {
		return o, fmt.Errorf("--bgsave-writer-priority %q: want idle or normal", c.writerPriority)
	}
	backlog, err := parseBytes("repl-backlog-size", c.replBacklog)
	if err != nil {
		return o, err
	}
	o.Replication.BacklogSize = int(max(backlog, 16<<10))
	switch strings.ToLower(c.replDiskless) {
	case "yes":
	case "no":
		o.Replication.DisklessOff = true
	default:
		return o, fmt.Errorf("--repl-diskless-sync %q: want yes or no", c.replDiskless)
	}
	for _, p := range []struct {
		name string
		v    int64
		min  int64
	}{{"repl-ping-replica-period", c.replPing, 1}, {"repl-timeout", c.replTimeout, 1},
		{"min-replicas-to-write", c.minReplicas, 0}, {"min-replicas-max-lag", c.minReplicasLag, 0}} {
		if p.v < p.min {
			return o, fmt.Errorf("--%s %d: want %d or more", p.name, p.v, p.min)
		}
	}
	if err := engine.ValidNotifyKeyspaceEvents(c.notifyEvents); err != nil {
		return o, fmt.Errorf("--notify-keyspace-events %q: %w", c.notifyEvents, err)
	}
	o.NotifyKeyspaceEvents = c.notifyEvents
	o.Replication.PingPeriod, o.Replication.Timeout = c.replPing, c.replTimeout
	o.Replication.MinReplicas, o.Replication.MinReplicasLag = c.minReplicas, c.minReplicasLag
	switch strings.ToLower(c.protectedConfigs) {
	case "yes":
		o.ProtectedConfig = true
	case "no":
	default:
		return o, fmt.Errorf("--enable-protected-configs %q: want yes or no", c.protectedConfigs)
	}
	if c.latencyThreshold < 0 {
		return o, fmt.Errorf("--latency-monitor-threshold %d: want 0 (off) or more milliseconds", c.latencyThreshold)
	}
	o.LatencyMonitorThreshold = c.latencyThreshold
	switch strings.ToLower(c.latencyTracking) {
	case "yes":
	case "no":
		o.LatencyTrackingOff = true
	default:
		return o, fmt.Errorf("--latency-tracking %q: want yes or no", c.latencyTracking)
	}
	if o.LatencyPercentiles, err = engine.ParsePercentiles(c.latencyPercentiles); err != nil {
		return o, fmt.Errorf("--latency-tracking-info-percentiles %q: %w", c.latencyPercentiles, err)
	}
	if err := tlsOptions(c, &o); err != nil {
		return o, err
	}
	switch strings.ToLower(c.clusterEnabled) {
	case "yes":
		o.ClusterEnabled = true
	case "no":
	default:
		return o, fmt.Errorf("--cluster-enabled %q: want yes or no", c.clusterEnabled)
	}
	if c.clusterTimeout <= 0 || c.clusterPort < 0 || c.clusterPort > 65535 {
		return o, fmt.Errorf("--cluster-node-timeout %d must be positive and --cluster-port %d 0 to 65535", c.clusterTimeout, c.clusterPort)
	}
	o.ClusterConfigFile, o.ClusterPort = c.clusterFile, c.clusterPort
	o.ClusterNodeTimeout = time.Duration(c.clusterTimeout) * time.Millisecond
	o.ClusterAnnounceIP, o.ClusterAnnounceHostname = c.clusterIP, c.clusterHost
	if err := c.clusterBus.apply(&o); err != nil {
		return o, err
	}
	o.ReplicaOf, o.MasterAuth, o.MasterUser = c.replicaOf, c.masterAuth, c.masterUser
	if c.aeronSID <= 0 || c.aeronSID > math.MaxInt32-1 {
		return o, fmt.Errorf("--repl-aeron-stream-id %d: want 1 to %d", c.aeronSID, math.MaxInt32-1)
	}
	o.AeronReplication = c.aeronRepl
	o.AeronReplication.StreamID = int32(c.aeronSID)
	o.ReplTimeout = time.Duration(c.replTimeout) * time.Second // checked above with the primary side's settings
	if c.replicaPriority < 0 || c.replicaPriority > math.MaxInt32 {
		return o, fmt.Errorf("--replica-priority %d: want 0 to %d", c.replicaPriority, math.MaxInt32)
	}
	o.ReplicaPriority, o.NeverPromote = c.replicaPriority, c.replicaPriority == 0
	if c.announcePort < 0 || c.announcePort > 65535 {
		return o, fmt.Errorf("--replica-announce-port %d: want 0 to 65535", c.announcePort)
	}
	o.AnnounceIP, o.AnnouncePort = c.announceIP, c.announcePort
	if c.syncDelay < 0 || c.backlogTTL < 0 {
		return o, fmt.Errorf("--repl-diskless-sync-delay %d and --repl-backlog-ttl %d: want 0 or more seconds", c.syncDelay, c.backlogTTL)
	}
	o.Replication.SyncDelay = c.syncDelay
	ttl := c.backlogTTL
	o.Replication.BacklogTTL = &ttl
	for _, yn := range []struct {
		name, v string
		yes     *bool
	}{{"lazyfree-lazy-expire", c.lazyExpire, &o.Replication.LazyExpire}, {"lazyfree-lazy-eviction", c.lazyEviction, &o.Replication.LazyEviction}} {
		switch strings.ToLower(yn.v) {
		case "yes":
			*yn.yes = true
		case "no":
		default:
			return o, fmt.Errorf("--%s %q: want yes or no", yn.name, yn.v)
		}
	}
	for _, yn := range []struct {
		name, v string
		no      *bool
	}{{"replica-read-only", c.replicaReadOnly, &o.WritableReplica}, {"replica-serve-stale-data", c.serveStale, &o.NoStaleData},
		{"replica-announced", c.replicaAnnounced, &o.ReplicaHidden}} {
		switch strings.ToLower(yn.v) {
		case "yes":
		case "no":
			*yn.no = true
		default:
			return o, fmt.Errorf("--%s %q: want yes or no", yn.name, yn.v)
		}
	}
	o.EnsureDefaults()
	return o, o.Validate()
}

// tlsOptions checks the TLS flags and adds the --tls-port listeners.
func tlsOptions(c *config, o *server.Options) error {
	o.TLS = c.tls
	var err error
	if o.TLS.AuthClients, err = uds.AuthClientsMode(c.tls.AuthClients); err != nil {
		return fmt.Errorf("--tls-auth-clients %q: want yes, no or optional", c.tls.AuthClients)
	}
	for _, yn := range []struct {
		name, v string
		set     func(bool)
	}{{"tls-prefer-server-ciphers", c.tlsPreferServer, func(b bool) { o.TLS.PreferServerCiphers = b }},
		{"tls-session-caching", c.tlsCaching, func(b bool) { o.TLS.SessionCachingOff = !b }},
		{"tls-replication", c.tlsReplication, func(b bool) { o.TLSReplication = b }},
		{"tls-cluster", c.tlsCluster, func(b bool) { o.TLSCluster = b }}} {
		switch strings.ToLower(yn.v) {
		case "yes":
			yn.set(true)
		case "no":
			yn.set(false)
		default:
			return fmt.Errorf("--%s %q: want yes or no", yn.name, yn.v)
		}
	}
	for _, n := range []struct {
		name string
		v    int
		set  func(int)
	}{{"tls-session-cache-size", c.tlsCacheSize, func(n int) { o.TLS.SessionCacheSize = n }},
		{"tls-session-cache-timeout", c.tlsCacheTimeout, func(n int) { o.TLS.SessionCacheTimeout = time.Duration(n) * time.Second }}} {
		if n.v < 0 || n.v > math.MaxInt32 {
			return fmt.Errorf("--%s %d: want 0 to %d", n.name, n.v, math.MaxInt32)
		}
		if n.v == 0 {
			n.v = -1 // Redis's 0 (uds.TLSOptions)
		}
		n.set(n.v)
	}
	if c.tlsPort < 0 || c.tlsPort > 65535 {
		return fmt.Errorf("--tls-port %d: want 0 to 65535", c.tlsPort)
	}
	if c.tlsPort == 0 {
		return nil
	}
	listen := o.Listen
	if len(listen) == 0 {
		listen = server.DefaultListen()
	}
	listen = append(listen, server.TLSPortTargets(listen, c.tlsPort)...)
	o.Listen = listen
	return nil
}

// withAeronDir points the aeron: listeners at the driver in dir (none
// when dir is empty).
func withAeronDir(listen []string, dir string) []string {
	if dir == "" {
		return listen
	}
	out := make([]string, len(listen))
	for i, l := range listen {
		out[i] = l
		if strings.HasPrefix(l, "aeron:") {
			sep := "|"
			if !strings.Contains(l, "?") {
				sep = "?"
			}
			out[i] = l + sep + "dir=" + dir + "|driver=external"
		}
	}
	return out
}

func parseCPUs(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var cpus []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("--cpu %q: want CPU numbers such as 3 or 2,3", s)
		}
		cpus = append(cpus, n)
	}
	return cpus, nil
}

// parseBytes reads 100, 100b, 64kb, 512mb, 2gb (also k, m, g; powers of 1024).
func parseBytes(name, s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}, {"g", 1 << 30}, {"m", 1 << 20}, {"k", 1 << 10}, {"b", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSuffix(t, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("--%s %q: want a size such as 0, 1048576, 64kb, 512mb or 2gb", name, s)
	}
	return n * mult, nil
}

// sizeText spells n bytes as a size flag's default, in the largest of gb,
// mb and kb that divides it (parseBytes reads it back), so the defaults
// come from the packages' constants and read as an operator types them.
func sizeText(n int64) string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}} {
		if n != 0 && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// positiveBytes is parseBytes for a size that must not be 0.
func positiveBytes(name, s string) (int64, error) {
	n, err := parseBytes(name, s)
	if err == nil && n == 0 {
		err = fmt.Errorf("--%s must be positive", name)
	}
	return n, err
}

// loopbackDefault makes ":9380" mean 127.0.0.1:9380.
func loopbackDefault(addr string) string {
	if strings.HasPrefix(addr, ":") {
		return "127.0.0.1" + addr
	}
	return addr
}

func newLogger(level, format string, w io.Writer) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	o := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, o)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, o)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}

// listFlag collects targets given comma separated or repeated.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			*l = append(*l, t)
		}
	}
	return nil
}
