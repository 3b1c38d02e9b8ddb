package engine

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"math"
	"runtime/metrics"
	"time"

	"github.com/goblin-kv/goblin/acl"
	"github.com/goblin-kv/goblin/cluster"
	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/internal/monotime"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/argv"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/proto/sbe"
	"github.com/goblin-kv/goblin/rdb"
	"github.com/goblin-kv/goblin/store"
	"github.com/goblin-kv/goblin/store/collection"
)

// DefaultDatabases is how many databases an engine has unless
// Options.Databases says otherwise: Redis's default.
const DefaultDatabases = 16

// DefaultVersion is the Redis version goblin reports in HELLO and INFO, so
// clients that switch features on the server's version treat goblin like
// the Redis 7.0 whose commands it answers.
const DefaultVersion = "7.0.0"

// maxKeptScratch caps the buffer the engine keeps after serving a large
// value; bigger buffers are dropped so one large GET does not pin memory.
const maxKeptScratch = 1 << 20

// maxKeptArgs caps the argument array the engine keeps after a RESP
// command with many arguments.
const maxKeptArgs = 4096

// InfoFunc appends the server's own lines to an INFO section the engine
// writes ("server", "clients"), each "key:value\r\n"; section is lower
// case. It returns dst unchanged for a section it adds nothing to.
type InfoFunc func(dst []byte, section string) []byte

// Param is a configuration parameter the server adds to CONFIG GET and
// CONFIG SET, beside the engine's own (maxmemory, requirepass...).
type Param struct {
	// Name is the parameter's lower-case name.
	Name string
	// Get returns its value as CONFIG GET shows it.
	Get func() string
	// Set applies a new value, on the loop goroutine; nil makes the
	// parameter read-only. Its error's text follows "ERR CONFIG SET failed
	// (possibly related to argument 'name') - ".
	Set func(value string) error
	// Apply, when set, runs after every pair of a CONFIG SET is set, for
	// parameters that take effect together (the TLS files: a new
	// certificate and its key are named in one CONFIG SET). An error puts
	// every value of the CONFIG SET back.
	Apply func() error
}

// Options configure an Engine. The zero value works.
type Options struct {
	// RequirePass is the default ACL user's password (Redis's
	// requirepass). When set, every command but AUTH, HELLO and QUIT
	// answer NOAUTH until the client authenticates with this password (as
	// the "default" user).
	RequirePass string
	// Clock is the time source for relative expiry (EX, PX, EXPIRE); it
	// must be the store's clock. Default store.SystemClock.
	Clock store.Clock
	// Limits bound RESP commands (bulk length, argument count, inline
	// length); the zero value means Redis's defaults.
	Limits resp.Limits
	// MaxFrame bounds an SBE frame on streams, header included; default
	// sbe.DefaultMaxFrame.
	MaxFrame int
	// Info adds the server's lines to INFO's server and clients sections
	// (optional).
	Info InfoFunc
	// Version is the Redis version reported by HELLO and INFO; default
	// DefaultVersion.
	Version string
	// Databases is how many numbered databases SELECT can choose from
	// (Redis's "databases"); default 16. Database 0 is the store given to
	// NewEngine; the others are created on first use as its siblings,
	// sharing its memory cap.
	Databases int
	// Params are the server's configuration parameters (timeout,
	// maxclients, port...), for CONFIG GET and SET. Optional.
	Params []Param
	// Rewrite, when set, writes the parameters' current values to the
	// server's configuration file (CONFIG REWRITE, on the loop); nil: the
	// server runs without one, and CONFIG REWRITE says so.
	Rewrite func() error
	// Cluster puts the engine in cluster mode when Cluster.State is set.
	Cluster ClusterOptions
	// ACLFile is Redis's aclfile: the users ACL LOAD reads and ACL SAVE
	// writes (LoadACLFile reads it at start); empty: none.
	ACLFile string
	// ACLLogMaxLen is acllog-max-len; default acl.DefaultLogMaxLen.
	ACLLogMaxLen int
	// SlowlogSlowerThan is slowlog-log-slower-than in microseconds (nil:
	// DefaultSlowlogSlowerThan; negative: no slow log; 0 logs every
	// command). SlowlogMaxLen is slowlog-max-len (0: the default, 128).
	SlowlogSlowerThan *int64
	SlowlogMaxLen     int
	// Monotonic is the clock commands are timed on (the slow log, the
	// latency histograms): monotonic nanoseconds, the clock BeginCycle's
	// now is read from. Default monotime.Now, the store loop's clock.
	Monotonic func() int64
	// Latency monitor and tracking (latency.go): LatencyMonitorThreshold
	// is latency-monitor-threshold in milliseconds (0: off, Redis's
	// default); LatencyTrackingOff is latency-tracking no;
	// LatencyPercentiles is latency-tracking-info-percentiles (nil: "50
	// 99 99.9").
	LatencyMonitorThreshold int64
	LatencyTrackingOff      bool
	LatencyPercentiles      []float64
	// Persistence configures RDB snapshots (SAVE, BGSAVE, the save
	// policy, SHUTDOWN; persist.go).
	Persistence Persistence
	// PubSubLog receives Pub/Sub's events (a subscriber cut at
	// client-output-buffer-limit; pubsub.go); default discard.
	PubSubLog *slog.Logger
	// Replication configures the primary side of replication (PSYNC, the
	// backlog, WAIT, min-replicas-to-write; cmd_repl.go).
	Replication ReplicationOptions
	// Replica configures the replica side of replication (REPLICAOF,
	// cmd_replica.go).
	Replica ReplicaOptions
	// NotifyKeyspaceEvents is notify-keyspace-events (notify.go): which
	// keyspace notifications are published; "" none. An invalid value
	// (see ValidNotifyKeyspaceEvents) is taken as "".
	NotifyKeyspaceEvents string
}

// Stats are one transport's counters. Only the loop goroutine writes them
// (plain, non-atomic increments); the server copies them and publishes the
// copies to its metrics.
type Stats struct {
	Commands       [command.NumOps]uint64 // requests executed, by Op (unknown commands at OpNone)
	Errors         uint64                 // error replies (protocol errors included)
	ProtocolErrors uint64                 // malformed requests that closed the connection
}

// Session is one client's state. Create it with NewSession when the client
// connects; the loop goroutine owns it.
type Session struct {
	// Protocol is the protocol the client speaks.
	Protocol proto.Protocol
	// Stats receives the client's counters; usually shared by every
	// session of one transport. Must not be nil.
	Stats *Stats

	// ID is the client's id, reported by HELLO; the server assigns it.
	ID uint64

	db int // the selected database
	// user is the ACL user the client authenticated as; noUser until it
	// has (or until its first command finds no password is needed).
	user   *acl.User
	authed bool
	quit   bool
	resp3  bool // HELLO 3: replies in RESP3
	name   []byte

	// authFails counts wrong passwords (AUTH, HELLO AUTH) while a password
	// is required; failedAuth ends a ServeStream call after one (and after
	// a WAIT that parks the client), so the
	// transport can delay the client's next guess (see AuthFailures).
	authFails  uint64
	failedAuth bool

	// protoErr is the protocol error that ended the stream: the last
	// reply, after which the transport closes (ProtocolError).
	protoErr error

	tx    txState // MULTI's queue and WATCH's keys (cmd_tx.go)
	index int     // in Engine.sessions, -1 when not listed

	// For CLIENT LIST and friends (cmd_client.go).
	unix             bool       // conn is a Unix socket (flag U, MONITOR's unix:path)
	conn             Conn       // the connection, when the transport told
	createdAt        int64      // unix ms of Open
	lastAt           int64      // unix ms (the engine's coarse clock) of the last batch of requests
	lastOp           command.Op // the last command
	noEvict, noTouch bool
	monitor          bool          // MONITOR: receives every command
	master           bool          // the master client of a replica: applies the primary's stream (cmd_replica.go)
	mute             int8          // CLIENT REPLY: -1 OFF; SKIP: 2 for the SKIP itself, 1 for the next command
	killed           bool          // CLIENT KILL: close at the next request
	asking           bool          // ASKING: the next command may reach an importing slot
	readOnly         bool          // READONLY: a cluster replica serves reads of its master's slots
	hold             time.Duration // CLIENT PAUSE: how long the transport should wait (Hold)
	libName, libVer  []byte        // CLIENT SETINFO

	// Pub/Sub (pubsub.go): the subscriptions, and pubsub set while there
	// are any (Redis's CLIENT_PUBSUB: RESP2 allows only a few commands).
	sub    *sessionSubs
	pubsub bool
	// cold: the session's own state keeps its requests off the hot paths
	// (hotSession): a MULTI, replies off or skipped (mute), CLIENT
	// NO-TOUCH or a Pub/Sub context. recold sets it; every change of what
	// it is made of calls it, and checkCold holds it to that in
	// invariants and race builds.
	cold bool
	// Replication (cmd_repl.go): what the client told with REPLCONF, its
	// state as a replica (nil unless it sent SYNC or PSYNC), the stream
	// offset after its last write (WAIT's), and a parked WAIT.
	rconf              replConf
	replica            *replica
	woff               int64
	waiting            bool
	waitNum, waitUntil int64
	// block is what the client waits for when a blocking pop parked it
	// (blocking.go; waiting is set too), nil otherwise.
	block *blockState

	// The partial request at the front of the stream, so a request that
	// arrives in many pieces is parsed once, not once per piece.
	parser resp.Parser
	frames sbe.FrameReader
}

// Buffered returns the bytes of memory the session holds for a partial
// request (the positions of a long RESP command's arguments).
func (s *Session) Buffered() int { return s.parser.Buffered() }

// Examined returns the bytes the session's stream parser has examined (a
// test's measure of parsing work; see resp.Parser.Examined).
func (s *Session) Examined() uint64 { return s.parser.Examined() + s.frames.Examined() }

// NewSession returns the state of a newly connected client speaking p that
// counts into st (nil gets a private Stats).
func NewSession(p proto.Protocol, st *Stats) *Session {
	if st == nil {
		st = new(Stats)
	}
	return &Session{Protocol: p, Stats: st, tx: txState{slot: -1}, index: -1, user: noUser}
}

// newRunID returns INFO's run_id: 40 random hex digits (a variable, so
// tests can make it repeatable).
var newRunID = func() string {
	var id [20]byte
	_, _ = rand.Read(id[:])
	return hex.EncodeToString(id[:])
}

// Open returns the session of a newly connected client speaking p that
// counts into st (nil: a private Stats), with the next client id; the
// engine lists it (CLIENT LIST) until Close.
func (e *Engine) Open(p proto.Protocol, st *Stats) *Session {
	s := NewSession(p, st)
	e.nextID++
	s.ID = e.nextID
	s.createdAt, s.lastAt = e.now, e.now
	s.index = len(e.sessions)
	e.sessions = append(e.sessions, s)
	return s
}

// Close releases what the engine keeps for a session whose client has
// gone: its place in the client list and its watched keys. The transport
// calls it (through the server's session) when the connection closes.
func (e *Engine) Close(s *Session) {
	e.endTx(s)
	e.stopMonitor(s)
	e.dropSubscriptions(s)
	if s.replica != nil {
		e.dropReplica(s)
	}
	e.dropForwarded(s)
	if s.block != nil {
		e.dropBlocked(s)
	} else if s.waiting {
		e.dropWaiter(s)
	}
	if i := s.index; i >= 0 && i < len(e.sessions) && e.sessions[i] == s {
		last := len(e.sessions) - 1
		e.sessions[i] = e.sessions[last]
		e.sessions[i].index = i
		e.sessions[last] = nil
		e.sessions = e.sessions[:last]
	}
	s.index = -1
}

// Name returns the name the client gave with CLIENT SETNAME (nil if none).
// The slice is the session's; do not keep it.
func (s *Session) Name() []byte { return s.name }

// Authenticated reports whether the client has authenticated with AUTH or
// HELLO ... AUTH.
func (s *Session) Authenticated() bool { return s.authed }

// AuthFailures returns how many wrong passwords the client has sent while
// the server requires one. ServeStream returns after the request that
// failed, leaving the client's further requests unconsumed, so a transport
// that sees the count rise can hold the client back before its next guess
// (the engine itself never waits).
func (s *Session) AuthFailures() uint64 { return s.authFails }

// Engine decodes, executes and encodes requests against one store. It is
// used from the loop goroutine only.
type Engine struct {
	st    *store.Store   // the database of the request being served
	cl    *clusterMode   // nil unless in cluster mode (cmd_cluster.go): beside st, read by every request
	dbs   []*store.Store // the numbered databases; nil until first used
	o     Options
	clock store.Clock
	codec sbe.Codec

	// Scratch state reused by every request (single goroutine).
	args     [][]byte        // RESP arguments, slices into the input
	dec      argv.Decoder    // RESP command syntax
	req      command.Request // the request being served
	res      command.Reply   // the reply before encoding
	sbeArgs  [][]byte        // backing array for SBE requests' Args
	scratch  []byte          // values read from the store
	errBuf   []byte          // error texts
	ints     []int           // key positions (COMMAND GETKEYS)
	sorter   sorter          // SORT's vector and buffers (cmd_sort.go)
	stack    []openAgg       // aggregates being built (build.go)
	fixes    []fixup         // values in scratch to point at (build.go)
	version  []byte          // Options.Version, for HELLO
	stats    store.Stats
	tickNext int       // the database Tick starts with
	num      []byte    // numbers formatted for a reply, LCS's subsequence
	pair     [2][]byte // one field and value for the store (HINCRBYFLOAT)
	keyList  [][]byte  // the keys of a multi-key collection command
	// The clients blocked on keys, in the order they blocked, the data
	// set's modification count when they were last looked at, and the
	// scratch of a blocked pop's answer and non-blocking form (blocking.go).
	blocked   []*Session
	blockMods uint64
	blockOut  []byte
	blockReq  command.Request
	blockNum  []byte
	// Sorted sets: the two bounds of a score or lex range, and the members
	// and scores a store command (ZRANGESTORE, ZUNIONSTORE...) gathers.
	zlo, zhi collection.ZBound
	zmem     []byte
	zends    []int
	zscores  []float64
	intList  []int      // LREM's positions
	watchers []*Session // sessions with watched keys
	sessions []*Session // every open session (Open, Close)
	nextID   uint64     // the last client id given

	// INFO, CONFIG, CLIENT and MONITOR state.
	paramList   []Param
	configPairs [][]byte
	configShown [][]byte
	ran         bool // the request being counted was executed (not refused)
	sampleLeft  int  // commands until the next timed one
	cmd         [command.NumOps]cmdStat
	errors      []errCount
	monitors    []*Session
	monEnc      argv.Encoder
	monBuf      []byte
	pauseUntil  int64 // something pauses clients (CLIENT PAUSE, FAILOVER): the one test the request path makes; 0 when nothing does
	clientUntil int64 // CLIENT PAUSE: unix ms; 0 when not paused
	pauseWrites bool
	mfUntil     int64 // the cluster bus's pause of writes while a replica fails over manually (ClusterPause): unix ms; 0 when not paused
	expiryHeld  bool  // a pause holds key expiry back (pauseexpiry.go)
	now         int64 // unix ms, refreshed by Tick (age and idle in CLIENT LIST)
	lruSec      int64 // the second the stores' LRU clocks were last set to (Tick)
	started     time.Time
	runID       string
	peakUsed    int64 // the stores' highest UsedMemory seen (goblin_store_peak_bytes)
	peakProcess int64 // the highest used_memory seen
	startupUsed int64 // used_memory at the first measurement (used_memory_startup)
	memSamples  []metrics.Sample
	opsAt       [16]opsSample // instantaneous_ops_per_sec
	opsNext     int
	txReq       command.Request // a queued command being run by EXEC
	txArgs      [][]byte
	txItems     []command.Item // EXEC's reply being built
	txVals      []byte
	txRaw       []byte   // EXEC's replies encoded, for a transaction that subscribed (cmd_tx.go)
	lcsTable    []uint32 // LCS's dynamic programme
	ld          longDouble

	slow slowlog // SLOWLOG (slowlog.go)
	// Command timing (exec.go's since and timed): mono is
	// Options.Monotonic; mark its latest reading, the duty cycle's start
	// or the last timed command's end; cycled once BeginCycle was called.
	mono   func() int64
	mark   int64
	cycled bool
	batch  hotBatch     // hot requests served since mark, not yet timed (batchtime.go)
	lat    latencyState // LATENCY and latency-tracking (latency.go)
	// caller is the session running CLIENT LIST or INFO while it does
	// (its argv-mem is the words of that command).
	caller *Session

	// ACL (acl.go).
	users   *acl.Users
	defUser *acl.User // users' "default", kept in place by SetUser and Load
	aclLog  *acl.Log
	aclKeys []acl.Key  // the keys of the request being checked
	argv    [][]byte   // the RESP words of the request being served; nil for SBE
	inExec  bool       // EXEC is running queued commands
	curOp   command.Op // the command being checked (CLIENT INFO's cmd= in an ACL LOG entry)
	cur     *Session   // the session running ACL DELUSER or LOAD (disconnectUsers)

	migrator *cluster.Migrator // MIGRATE's connections outside cluster mode

	// DUMP and RESTORE's payload codec, made on first use and reused so a
	// DUMP does not allocate the LZF table each time (cmd_dump.go).
	dumpEnc *rdb.Encoder
	dumpDec *rdb.Decoder
	dumpVal rdb.Value
	// dumpLimits are the thresholds dumpEnc was made with.
	dumpLimits store.Limits
	dumpBuf    []byte // DUMP's reply

	snap    persistState // snapshots (persist.go)
	loading *startLoad   // the load of the snapshot file at start, nil when none runs (loadstart.go)

	// Pub/Sub (pubsub.go).
	ps       pubsubState
	aclChans []acl.Channel // the channels of the request being checked
	repl     replState     // replication, primary side (cmd_repl.go)
	follow   followState   // the replica side of replication (cmd_replica.go)
	fo       failoverState // FAILOVER (cmd_failover.go)
	fwd      forwardState  // writes a replica forwards to its primary (forward.go)
	kn       notifyState   // keyspace notifications (notify.go)
	// hooked sends every command through executeSlow: replication
	// propagates, keyspace notifications are on, or an LFU policy counts
	// accesses (rehook).
	hooked bool
	// lfu: the eviction policy is an LFU one, so executeSlow brackets each
	// command for the store (one access per key and command).
	lfu bool
	// hotOff: something engine-wide keeps every request off the hot paths
	// (hot.go's hotReady); inPlaceOff: off them, or the slow log times
	// each request on its own (serveSBEInPlace, serveRESPHotDirect).
	// rehot sets both; every change of what they are made of calls it.
	hotOff, inPlaceOff bool
	// hotBulk is o.Limits.HotBulk(), for resp.Parser.PeekHotBulk: the
	// limits' three checks made once (rehot) instead of per command.
	// o.Limits does not change after NewEngine; checkHot holds hotBulk to it.
	hotBulk int
	// sampling: the sampled request is being served on a hot path, between
	// sampleStart and sampleEnd (sampledInPlace, sampledRESP).
	sampling bool
}

// rehook sets hooked from what needs executeSlow.
func (e *Engine) rehook() {
	e.hooked = e.repl.feed || e.kn.on || e.lfu
	e.rehot()
}

// NewEngine returns an engine executing against st.
func NewEngine(st *store.Store, o Options) *Engine {
	if o.Clock == nil {
		o.Clock = store.SystemClock{}
	}
	if o.Monotonic == nil {
		o.Monotonic = monotime.Now
	}
	if o.Version == "" {
		o.Version = DefaultVersion
	}
	if o.MaxFrame <= 0 {
		o.MaxFrame = sbe.DefaultMaxFrame
	}
	if o.Databases <= 0 {
		o.Databases = DefaultDatabases
	}
	e := &Engine{
		started: wallClock(), runID: newRunID(), now: o.Clock.NowMillis(),
		st: st, dbs: append(make([]*store.Store, 0, o.Databases), st), o: o, clock: o.Clock, mono: o.Monotonic,
		args:    make([][]byte, 0, 16),
		scratch: make([]byte, 0, 4096),
		errBuf:  make([]byte, 0, 256),
		dec:     argv.Decoder{Text: make([]byte, 0, 256)},
		sbeArgs: make([][]byte, 0, 16),
		res:     command.Reply{Items: make([]command.Item, 0, 16)},
	}
	if o.Cluster.State != nil {
		e.cl = newClusterMode(o.Cluster)
	}
	e.initACL()
	e.slow = slowlog{slowerThan: DefaultSlowlogSlowerThan, maxLen: DefaultSlowlogMaxLen}
	if o.SlowlogSlowerThan != nil {
		e.slow.slowerThan = *o.SlowlogSlowerThan
	}
	if o.SlowlogMaxLen > 0 {
		e.slow.maxLen = o.SlowlogMaxLen
	}
	// Latency monitor and tracking.
	e.lat.init()
	e.lat.threshold, e.lat.tracking = o.LatencyMonitorThreshold, !o.LatencyTrackingOff
	if o.LatencyPercentiles != nil {
		e.lat.percentiles = o.LatencyPercentiles
	}
	e.initPersist()
	e.ps.init()
	e.initRepl()
	if f, ok := parseNotifyFlags(o.NotifyKeyspaceEvents); ok && f != 0 {
		e.setNotifyFlags(f)
	}
	e.lfu = st.Options().Eviction.LFU()
	e.rehook()
	e.rehot()
	return e
}

// BeginCycle tells the engine that a duty cycle of its caller starts at
// now, read from Options.Monotonic's clock before any transport is
// polled. A timed command is then timed with one clock read, at its end:
// from the later of the cycle's start and the previous timed command's end
// (so its time includes the reading and parsing of its request). Until
// BeginCycle is first called each timed command also reads the clock at
// its start. Loop goroutine only.
func (e *Engine) BeginCycle(now int64) {
	if e.batch.n != 0 { // the hot requests of the previous cycle (batchtime.go)
		e.closeBatch(now)
	}
	e.mark = now
	// The scratch buffer a large reply grew is given back here, once a
	// cycle, off the request path (the serving calls do not trim it).
	e.trimScratch()
	if !e.cycled {
		e.cycled = true
		e.rehot()
	}
}

// ProtocolError returns the protocol error a ServeStream or ServeMessage
// answered last before asking for the connection to close, or nil when
// it asked for another reason (QUIT); the transport logs it.
func (s *Session) ProtocolError() error { return s.protoErr }

// ServeStream executes every complete request at the start of in, in
// order, and appends each reply to out (RESP, or SOFH-framed SBE, per the
// session's protocol). consumed is how many bytes of in were used; the rest
// is a partial request to offer again, from its first byte, with more
// bytes: the session remembers how far it parsed it and resumes there (see
// resp.Parser). closeConn asks the
// transport to send the replies and close: after QUIT, or after a
// malformed request, whose protocol error is the last reply and of which
// nothing was executed.
func (e *Engine) ServeStream(s *Session, in, out []byte) (consumed int, replies []byte, closeConn bool) {
	return e.ServeStreamLimit(s, in, out, 0)
}

// ServeStreamLimit is ServeStream that stops early, leaving the requests
// after it unconsumed, once the replies it appended to out reach limit
// bytes (0: no limit). It always executes at least one request, however
// large its reply; a transport uses it to bound what one client's
// requests make the loop produce at once.
func (e *Engine) ServeStreamLimit(s *Session, in, out []byte, limit int) (consumed int, replies []byte, closeConn bool) {
	if s.waiting { // a parked WAIT: its further requests wait; the push of its answer offers them again
		return 0, out, false
	}
	s.failedAuth = false
	s.lastAt = e.now // CLIENT LIST's idle
	if limit > 0 {
		limit += len(out) // stop once out reaches this length
	} else {
		limit = int(^uint(0) >> 1)
	}
	if s.Protocol == proto.SBE {
		return e.serveSBEStream(s, in, out, limit)
	}
	// The first command, when it is one of PeekHot's shapes that
	// serveRESPHotDirect serves (the loop's first turn, below, without
	// its checks): a ping-pong's one command is served and returned
	// before the loop. noHot is where in is known not to start with one
	// of the shapes (-1: nowhere), so the loop does not read it again.
	noHot := -1
	if !e.inPlaceOff && e.pauseUntil == 0 && !s.quit && s.user.AllowsAll() {
		hot, key, value, n := s.parser.PeekHotBulk(in, e.hotBulk)
		if hot == resp.HotNone {
			noHot = 0
		} else if served, ok := e.serveRESPHotDirect(s, nil, hotOps[hot&3], key, value, out); ok { // &3: hot is below 4, no bounds check
			s.parser.Skip(n)
			out = served
			if len(e.blocked) != 0 {
				e.serveBlocked()
			}
			if n == len(in) {
				return n, out, s.quit
			}
			consumed = n
		}
	}
	for consumed < len(in) && !s.quit && !s.failedAuth && len(out) < limit {
		// PING, GET and SET as clients send them: read in a few loads and
		// decoded without the name's lookup (resp.Parser.ReadHot).
		// For a user allowed everything with the slow log's timing
		// batched (or off), served from what PeekHot read, with no
		// arguments or Request made (serveRESPHotDirect).
		hot, key, value, n := resp.HotNone, []byte(nil), []byte(nil), 0
		if consumed != noHot {
			hot, key, value, n = s.parser.PeekHotBulk(in[consumed:], e.hotBulk)
		}
		if hot != resp.HotNone {
			if e.pauseUntil != 0 && e.held(s, hotOps[hot]) {
				break
			}
			s.parser.Skip(n)
			at := consumed
			consumed += n
			if !e.inPlaceOff && s.user.AllowsAll() {
				if served, ok := e.serveRESPHotDirect(s, nil, hotOps[hot], key, value, out); ok {
					out = served
					if len(e.blocked) != 0 {
						e.serveBlocked()
					}
					continue
				}
			}
			args := resp.HotArgs(in[at:], hot, key, value, e.args)
			e.args = args[:0]
			out = e.serveRESPHot(s, hot, args, out)
			continue
		}
		args, n, err := s.parser.ReadCommand(in[consumed:], e.args, &e.o.Limits)
		e.args = args[:0]
		if cap(args) > maxKeptArgs {
			e.args = nil // one huge command must not pin its argument array
		}
		if err != nil {
			return consumed, e.respProtocolError(s, out, err), true
		}
		if n == 0 {
			break
		}
		if e.pauseUntil != 0 && len(args) > 0 && e.held(s, pausedOp(args)) {
			break // the transport offers it again when the hold ends
		}
		consumed += n
		if len(args) == 0 {
			continue
		}
		out = e.serveRESP(s, args, out)
	}
	return consumed, out, s.quit
}

// ServeMessage executes the one request in msg (a RESP command, or a bare
// SBE message without SOFH) and appends its reply to out. closeConn as for
// ServeStream.
func (e *Engine) ServeMessage(s *Session, msg, out []byte) (replies []byte, closeConn bool) {
	s.lastAt = e.now // CLIENT LIST's idle
	if s.killed {
		return out, true
	}
	if s.Protocol == proto.SBE {
		if corr, ok := sbe.AsPing(msg); ok && e.plain(s) {
			return e.pong(s, corr, out), false
		}
		// GET and SET read in place (hot.go), anything else served by
		// serveSBEMessage from there: nothing of this call is needed after
		// it, so nothing is kept (spilled) for it.
		out, _, closeConn = e.serveSBEInPlace(s, msg, out, false)
		return out, closeConn
	}
	args, n, err := resp.ReadCommand(msg, e.args, &e.o.Limits)
	e.args = args[:0]
	switch {
	case err != nil:
		return e.respProtocolError(s, out, err), true
	case n == 0:
		return e.respProtocolError(s, out, errIncompleteMessage), true
	case n != len(msg):
		return e.respProtocolError(s, out, errTrailingBytes), true
	case len(args) == 0:
		return e.respProtocolError(s, out, errEmptyMessage), true
	}
	return e.serveRESP(s, args, out), s.quit
}

// serveSBEMessage serves msg, an SBE message that serveSBEInPlace did not
// serve in place, as ServeMessage: decoded, then served by serveSBEHot or
// the general path.
func (e *Engine) serveSBEMessage(s *Session, msg, out []byte) (replies []byte, closeConn bool) {
	if err := e.decodeSBE(msg); err != nil {
		return e.sbeProtocolError(s, out, err, false), true
	}
	if hot, ok := e.serveSBEHot(s, &e.req, out, false); ok { // GET and SET in the common state (hot.go)
		return hot, false
	}
	return e.serveSBE(s, msg, out, false), s.quit
}

// Errors for RESP on message transports, where one message must hold
// exactly one command.
var (
	errIncompleteMessage = &resp.ProtocolError{Text: "Protocol error: incomplete command in message"}
	errTrailingBytes     = &resp.ProtocolError{Text: "Protocol error: bytes after the command in message"}
	errEmptyMessage      = &resp.ProtocolError{Text: "Protocol error: empty message"}
)

// serveRESP executes one RESP command and appends its reply, then serves
// the clients blocked on keys it filled.
func (e *Engine) serveRESP(s *Session, args [][]byte, out []byte) []byte {
	out = e.serveRESPReply(s, args, out)
	if len(e.blocked) != 0 {
		e.serveBlocked()
	}
	return out
}

func (e *Engine) serveRESPReply(s *Session, args [][]byte, out []byte) []byte {
	e.startRequest()
	e.argv = args
	if ok := e.dec.Decode(&e.req, args); ok && !s.tx.on {
		e.execute(s, &e.req)
	} else {
		e.serveRESPRare(s, args, ok)
	}
	return e.endRESP(s, args, out)
}

// hotOps are the Ops of resp.ReadHot's shapes.
var hotOps = [...]command.Op{resp.HotPing: command.OpPing, resp.HotGet: command.OpGet, resp.HotSet: command.OpSet}

// serveRESPHot is serveRESP for a command resp.ReadHot read: the Request
// the argv decoder would make of its arguments, made directly.
func (e *Engine) serveRESPHot(s *Session, hot resp.Hot, args [][]byte, out []byte) []byte {
	e.startRequest()
	e.argv = args
	r := &e.req
	r.Reset()
	r.Op = hotOps[hot]
	switch hot {
	case resp.HotGet:
		r.Key = args[1]
	case resp.HotSet:
		r.Key, r.Value = args[1], args[2]
	}
	if s.tx.on {
		e.serveRESPRare(s, args, true)
	} else if hot, ok := e.serveRESPHotDirect(s, r, r.Op, r.Key, r.Value, out); ok { // the common state (hot.go)
		out = hot
		if len(e.blocked) != 0 {
			e.serveBlocked()
		}
		return out
	} else {
		e.execute(s, r)
	}
	out = e.endRESP(s, args, out)
	if len(e.blocked) != 0 {
		e.serveBlocked()
	}
	return out
}

// endRESP is what follows a RESP command's execution: MONITOR, the
// counters, and the reply.
func (e *Engine) endRESP(s *Session, args [][]byte, out []byte) []byte {
	if len(e.monitors) > 0 && e.ran {
		e.feedMonitors(s, &e.req, args)
	}
	e.count(s, e.req.Op)
	if len(e.ps.out) > 0 { // the SUBSCRIBE family's answer, or messages to itself
		return e.pubsubReply(s, out)
	}
	if s.mute != 0 { // CLIENT REPLY OFF or SKIP
		return e.muted(s, out)
	}
	return e.encodeRESP(out, s.resp3)
}

// pubsubReply appends what Pub/Sub left for the session being served
// (pubsubState.out), then its reply unless out was the whole answer.
func (e *Engine) pubsubReply(s *Session, out []byte) []byte {
	only := e.ps.only
	msgs, after := e.ps.out, []byte(nil)
	if e.ps.after > 0 { // keyspace notifications Redis sends after the reply (notify.go)
		msgs, after = msgs[:e.ps.after-1], msgs[e.ps.after-1:]
	}
	switch {
	case s.mute != 0:
		out = e.muted(s, out)
	case only:
		out = append(append(out, msgs...), after...)
	default:
		out = append(e.encodeRESP(append(out, msgs...), s.resp3), after...)
	}
	e.ps.out, e.ps.only, e.ps.after = e.ps.out[:0], false, 0
	if cap(e.ps.out) > maxKeptScratch {
		e.ps.out = nil
	}
	return out
}

// serveRESPRare handles a request that failed to decode or arrived inside
// MULTI.
func (e *Engine) serveRESPRare(s *Session, args [][]byte, ok bool) {
	switch {
	case !ok && !e.dec.Rejected && s.tx.on:
		e.queued(s, &e.req, false, args, nil) // queued: EXEC answers its error
	case !ok && s.tx.on && e.req.Op == command.OpExec:
		e.execAbort(s, e.dec.Text) // EXEC refused inside MULTI ends the transaction
	case !ok:
		e.setError(e.dec.Status, e.dec.Text)
		if !e.dec.Rejected { // bad arguments fail the call; unknown or wrong arity reject it
			e.ran = true
			e.cmd[e.req.Op].calls++
		}
		if s.tx.on {
			s.tx.abort = true
		}
	case e.queued(s, &e.req, false, args, nil):
	default:
		e.execute(s, &e.req)
	}
}

// muted leaves out the reply of a session whose replies are off (CLIENT
// REPLY OFF, mute < 0) or skipped (SKIP, mute counting down).
func (e *Engine) muted(s *Session, out []byte) []byte {
	if s.mute > 0 {
		s.mute--
		s.recold()
	}
	return out
}

// held reports whether a request for op waits out a pause (CLIENT PAUSE,
// FAILOVER, a cluster manual failover), and if so sets how long the
// session's transport should hold it back.
func (e *Engine) held(s *Session, op command.Op) bool {
	now := e.clock.NowMillis()
	if (e.clientUntil != 0 && now >= e.clientUntil) || (e.mfUntil != 0 && now >= e.mfUntil) {
		e.endPauses(now)
	}
	spec := command.Lookup(op)
	write := spec != nil && spec.Flags&command.Write != 0
	if write && e.fo.pausesWrites() {
		s.hold = failoverHold // FAILOVER: writes wait until it ends (cmd_failover.go)
		return true
	}
	if write && e.mfUntil != 0 {
		// A manual failover ends the pause early (ClusterPause(0)): look again soon.
		s.hold = min(time.Duration(e.mfUntil-now)*time.Millisecond, 50*time.Millisecond)
		return true
	}
	if e.clientUntil == 0 || (e.pauseWrites && !write) {
		return false
	}
	s.hold = time.Duration(e.clientUntil-now) * time.Millisecond
	return true
}

// refreshPause sets pauseUntil, the request path's one test, from what
// pauses clients: the later of CLIENT PAUSE's end and the cluster manual
// failover's, or for ever while FAILOVER pauses writes.
func (e *Engine) refreshPause() {
	e.pauseUntil = max(e.clientUntil, e.mfUntil)
	if e.pauseUntil == 0 && e.fo.pausesWrites() {
		e.pauseUntil = math.MaxInt64
	}
	e.syncPauseExpiry() // pauseexpiry.go
}

// pausedOp returns the Op a RESP command names, for CLIENT PAUSE's check.
func pausedOp(args [][]byte) command.Op {
	op := command.ByName(args[0])
	if len(args) > 1 && len(command.Subcommands(op)) > 0 {
		op = command.Subcommand(op, args[1])
	}
	return op
}

// Hold returns how long the session's transport should hold the client's
// further requests back (CLIENT PAUSE), 0 for not at all; reading it
// clears it. Stream transports ask after every ServeStream.
func (s *Session) Hold() time.Duration {
	d := s.hold
	s.hold = 0
	return d
}

func (e *Engine) serveSBEStream(s *Session, in, out []byte, limit int) (int, []byte, bool) {
	consumed := 0
	for consumed < len(in) && !s.quit && !s.failedAuth && len(out) < limit {
		msg, n := s.frames.Whole(in[consumed:], e.o.MaxFrame) // inlined: the usual case
		if n == 0 {
			var err error
			if msg, n, err = s.frames.ReadFrame(in[consumed:], e.o.MaxFrame); err != nil {
				return consumed, e.sbeProtocolError(s, out, err, true), true
			}
			if n == 0 {
				break
			}
		}
		if corr, ok := sbe.AsPing(msg); ok && e.pauseUntil == 0 && e.plain(s) {
			// A compact PING, answered as ServeMessage answers it (pong),
			// in a frame: no Request decoded, no Reply built.
			consumed += n
			at := len(out)
			out = e.pong(s, corr, sbe.AppendFrameStart(out))
			sbe.FinishFrame(out[at:])
			continue
		}
		if e.pauseUntil == 0 { // GET and SET read in place, as on a message transport (hot.go)
			if hot, ok, _ := e.serveSBEInPlace(s, msg, out, true); ok {
				consumed += n
				out = hot
				continue
			}
		}
		if err := e.decodeSBE(msg); err != nil {
			return consumed, e.sbeProtocolError(s, out, err, true), true
		}
		if e.pauseUntil != 0 && e.held(s, e.req.Op) {
			break
		}
		consumed += n
		if hot, ok := e.serveSBEHot(s, &e.req, out, true); ok { // GET and SET in the common state (hot.go)
			out = hot
			continue
		}
		out = e.serveSBE(s, msg, out, true)
	}
	return consumed, out, s.quit
}

// decodeSBE decodes msg into e.req. RESP decoding may have pointed
// e.req.Args into its own argument slice; SBE decoding gets a backing array
// of its own so the two never share one.
func (e *Engine) decodeSBE(msg []byte) error {
	e.argv = nil
	e.req.Args = e.sbeArgs[:0]
	if sbe.AsRequest(msg, &e.req) { // a single-key Request: the header's checks in one compare
		return nil
	}
	err := e.codec.DecodeRequest(msg, &e.req)
	e.sbeArgs = e.req.Args[:0]
	return err
}
