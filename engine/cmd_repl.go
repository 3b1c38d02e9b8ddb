package engine

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"strconv"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/argv"
	"github.com/goblin-kv/goblin/replication"
	"github.com/goblin-kv/goblin/snapshot"
	"github.com/goblin-kv/goblin/store"
)

// Replication, primary side: Redis's PSYNC2 protocol, so that a
// redis-server (or a goblin replica) can follow this server. A replica is
// a client connection that sent SYNC or PSYNC; from then on its session
// receives the command stream through its Conn.Push. docs/replication.md
// has the whole story.
//
// Propagation: once a backlog exists (the first replica), execute takes its
// slow path for every command (one more test in its condition; nothing
// else on the hot path), and a write that changed the data set is turned
// into the command Redis would propagate (rewritten where Redis rewrites
// it) and appended to the execution unit; keys the store expires or evicts
// on its own become DELs. A unit of more than one command (a MULTI/EXEC, a
// write that met an expired key) goes out wrapped in MULTI … EXEC, with a
// SELECT first when the database differs from the stream's.
//
// Full resynchronisation: the RDB comes from a forkless snapshot
// (snapshot.BeginStream) that Tick advances in bounded slices; its bytes
// are handed to the replicas' connections through Push as the transport
// drains them, never more than a few MiB ahead, so the loop never stops.
// The stream of writes made meanwhile is kept per replica and follows the
// RDB: at once for the "$<len>" form, and for the diskless "$EOF:<mark>"
// form only after the replica's first REPLCONF ACK (Redis's replica finds
// the end of the RDB by the mark being the last bytes it read).

// Replica states, as INFO shows them.
const (
	replWaitBgsave = iota // waiting for the next snapshot to start
	replSendBulk          // receiving the RDB
	replOnline            // receiving the stream
)

var replStateNames = [...]string{"wait_bgsave", "send_bulk", "online"}

// Defaults of the replication parameters (Redis's).
const (
	DefaultReplPingPeriod = 10 // repl-ping-replica-period, seconds
	DefaultReplTimeout    = 60 // repl-timeout, seconds
	DefaultMinReplicasLag = 10 // min-replicas-max-lag, seconds
	// client-output-buffer-limit replica 256mb 64mb 60
	DefaultReplicaHardLimit = 256 << 20
	DefaultReplicaSoftLimit = 64 << 20
	DefaultReplicaSoftSecs  = 60
)

// replPushChunk is the most handed to a replica's transport at once, and
// replRDBAhead how far the snapshot may run ahead of what the transports
// took.
const (
	replPushChunk = 1 << 20
	replRDBAhead  = 4 << 20
)

// Stream words Redis generates with a fixed case (src/server.c shared).
var (
	replPing   = replication.AppendCommand(nil, []byte("ping"))
	replMulti  = replication.AppendCommand(nil, []byte("MULTI"))
	replExec   = replication.AppendCommand(nil, []byte("EXEC"))
	replGetAck = replication.AppendCommand(nil, []byte("REPLCONF"), []byte("GETACK"), []byte("*"))
	wSelect    = []byte("SELECT")
	wDel       = []byte("DEL")
	wUnlink    = []byte("UNLINK")
	wSet       = []byte("SET")
	wPXAT      = []byte("PXAT")
	wPExpireAt = []byte("PEXPIREAT")
	wPersist   = []byte("PERSIST")
	wKeepTTL   = []byte("KEEPTTL")
	wHSet      = []byte("HSET")
	wSRem      = []byte("SREM")
	// The non-blocking forms of the blocking pops (blocking.go).
	wLPop, wRPop, wZPopMin, wZPopMax = []byte("LPOP"), []byte("RPOP"), []byte("ZPOPMIN"), []byte("ZPOPMAX")
	wLMove, wRPopLPush               = []byte("LMOVE"), []byte("RPOPLPUSH")
	wRestore                         = []byte("RESTORE")
	wReplace                         = []byte("REPLACE")
	wIdleTime, wFreq                 = []byte("IDLETIME"), []byte("FREQ")
	wAbsTTL                          = []byte("ABSTTL")
	errNoSocket                      = "ERR replication needs a socket connection (this transport cannot send to a client out of turn)"
)

// ReplicationOptions configure the primary side; the zero value is Redis's
// defaults.
type ReplicationOptions struct {
	// BacklogSize is repl-backlog-size (0: 1 MiB).
	BacklogSize int
	// DisklessOff is repl-diskless-sync no: the RDB goes in the "$<len>"
	// form even to replicas that can read the "$EOF:" one.
	DisklessOff bool
	// PingPeriod and Timeout are repl-ping-replica-period and
	// repl-timeout in seconds (0: 10 and 60).
	PingPeriod, Timeout int64
	// MinReplicas and MinReplicasLag are min-replicas-to-write and
	// min-replicas-max-lag (0 replicas: no gating; 0 lag: 10 s).
	MinReplicas, MinReplicasLag int64
	// LazyExpire is lazyfree-lazy-expire yes (expired keys go out as
	// UNLINK, not DEL); LazyEviction likewise for evicted keys.
	LazyExpire, LazyEviction bool
	// SyncDelay is repl-diskless-sync-delay in seconds: a diskless full
	// sync waits until a replica has waited this long, so replicas that
	// arrive together share one snapshot (0, goblin's default: at once;
	// Redis's default is 5).
	SyncDelay int64
	// BacklogTTL is repl-backlog-ttl in seconds: a primary that has had
	// no replica this long frees its backlog (and takes a new replication
	// id, as Redis does); nil: Redis's 3600; 0: never.
	BacklogTTL *int64
	// TimeoutChanged, when set, is called on the loop after CONFIG SET
	// repl-timeout with the new value in seconds: the replica side's link
	// takes it (the server joins the two).
	TimeoutChanged func(seconds int64)
}

// DefaultBacklogTTL is repl-backlog-ttl's default, Redis's.
const DefaultBacklogTTL = 3600

// replState is the engine's replication state; loop goroutine only.
type replState struct {
	// feed is the one test execute makes for replication: a backlog
	// exists, so writes are propagated.
	feed bool
	// upstream: this node follows a primary (the replica side sets it); it
	// makes no stream of its own then, and FeedUpstream relays its
	// primary's.
	upstream bool
	linkUp   bool // the link to the primary is up (SetUpstreamLink): chained replicas may sync
	hist     *replication.State
	replicas []*replica
	selDB    int // the stream's database (Redis's slaveseldb), -1: none yet

	unit      []byte // the execution unit's commands, not yet fed
	unitOps   int
	unitFirst int // where the unit's first command starts (after a leading SELECT)
	depth     int // commands being executed (EXEC nests)

	words [][]byte
	num   []byte
	enc   argv.Encoder

	job  *snapshot.Job
	rdb  []byte   // the snapshot's bytes not yet handed to every syncing replica
	mark [40]byte // the $EOF: mark of the running sync
	eof  bool     // the running sync uses the $EOF: form
	// finishing: the snapshot is encoded and its tail queued; the replicas
	// go online once pushRDB has handed all of it over.
	finishing bool
	syncTo    []*replica // the replicas the running sync is for

	waiters  []*Session // clients parked in WAIT
	getAck   bool       // a REPLCONF GETACK is due in the stream
	lastPing int64      // unix ms of the last PING fed
	gate     bool       // min-replicas-to-write refuses writes
	good     int        // replicas with a recent ACK

	syncFull, syncPartialOK, syncPartialErr int64
	noneSince                               int64 // unix ms since when a primary with a backlog has had no replica (repl-backlog-ttl)
	// seenOff and seenAt: the stream offset ReplStreaming saw last, and
	// when (unix ms) it saw it change.
	seenOff, seenAt int64

	tap     StreamTap    // the stream's other consumer (repl_tap.go), nil: none
	tapReps []TapReplica // scratch: its replicas for INFO (repl_tap.go)
}

// replica is one replica's state on the primary.
type replica struct {
	s        *Session
	state    int
	ackOff   int64
	ackAt    int64 // unix ms of its last ACK (or of its sync)
	startOff int64 // the offset its RDB stands for
	out      []byte
	waitAck  bool  // diskless sync done: the stream starts at its next ACK
	legacy   bool  // came by SYNC: no +FULLRESYNC line
	rdbPos   int   // how much of repl.rdb its transport has taken
	softAt   int64 // when its queue went over the soft limit, 0: under it
	since    int64 // unix ms when it asked for a sync (repl-diskless-sync-delay)
}

// replConf is what a client told with REPLCONF before its PSYNC.
type replConf struct {
	port       int64
	ip         string
	eof, psync bool
}

func (e *Engine) initRepl() {
	o := &e.o.Replication
	if o.PingPeriod <= 0 {
		o.PingPeriod = DefaultReplPingPeriod
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultReplTimeout
	}
	if o.MinReplicasLag <= 0 {
		o.MinReplicasLag = DefaultMinReplicasLag
	}
	if o.BacklogTTL == nil {
		ttl := int64(DefaultBacklogTTL)
		o.BacklogTTL = &ttl
	}
	e.repl.hist = replication.NewState(o.BacklogSize)
	e.repl.hist.ID = e.runID // until a first replica starts a history of its own
	e.repl.selDB = -1
	e.repl.words = make([][]byte, 0, 8)
	e.refreshGood()
}

// Replication returns the node's replication history: its ids, offset
// and backlog. The replica side adopts its primary's id and offset in it
// after a full sync (replication.State.Adopt, then FeedUpstream for the
// stream it applies).
func (e *Engine) Replication() *replication.State { return e.repl.hist }

// SetUpstream tells the engine whether it follows a primary. While it
// does, its own writes are not propagated (they come from the primary's
// stream, which FeedUpstream relays). Turning it off (a promotion) starts
// a new history as Redis does: the old id becomes the previous one and the
// replicas chained below reconnect.
func (e *Engine) SetUpstream(on bool) {
	r := &e.repl
	if r.upstream == on {
		return
	}
	r.upstream, r.linkUp = on, false
	r.selDB = -1
	if !on {
		r.hist.Shift()
		e.DropReplicas()
		// A replica's backlog comes from its full sync (Adopt), not from
		// a replica of its own, so propagation may still be off: a
		// promoted node must propagate its writes from now on.
		if r.hist.Backlog() != nil && !r.feed {
			e.enableFeed(false)
		}
	}
	// The write gate holds only on a primary: a promoted node with too
	// few replicas refuses writes from its first request, not its next tick.
	e.refreshGood()
}

// SetUpstreamLink tells a replica's engine whether its link to the primary
// is up (after its sync, until the link drops): while it is not, a
// chained replica's PSYNC is refused with Redis's NOMASTERLINK.
func (e *Engine) SetUpstreamLink(up bool) { e.repl.linkUp = up }

// FeedUpstream relays bytes of the primary's stream that this replica has
// applied to its backlog and its own replicas, unchanged, so a chained
// replica sees the top primary's id and offsets (Redis's
// replicationFeedStreamFromMasterStream). It creates the backlog if there
// is none.
func (e *Engine) FeedUpstream(b []byte) {
	if e.repl.hist.Backlog() == nil {
		e.enableFeed(false)
	}
	e.replFeed(b)
}

// DropReplicas disconnects every replica (a replica's own full resync,
// a promotion).
func (e *Engine) DropReplicas() {
	for len(e.repl.replicas) > 0 {
		rp := e.repl.replicas[len(e.repl.replicas)-1]
		e.killReplica(rp)
	}
}

// enableFeed creates the backlog (a fresh id unless keepID) and starts
// propagating: every store tells its expiries and evictions.
func (e *Engine) enableFeed(fresh bool) {
	r := &e.repl
	r.hist.CreateBacklog(fresh)
	r.feed = true
	e.hooked = true
	e.rehot()
	for _, st := range e.dbs {
		e.watchRemovals(st)
	}
}

// watchRemovals makes st report the keys it expires or evicts (a new
// database, or every one when the backlog starts).
func (e *Engine) watchRemovals(st *store.Store) {
	if st == nil {
		return
	}
	if !e.repl.feed && !e.kn.on {
		st.OnRemove(nil)
		return
	}
	st.OnRemove(func(key []byte, evicted bool) { e.removedKey(st, key, evicted) })
}

// removedKey propagates a key the store expired or evicted: DEL (UNLINK
// with lazyfree), inside the command being run, or alone from Tick.
func (e *Engine) removedKey(st *store.Store, key []byte, evicted bool) {
	db := -1
	for i, d := range e.dbs {
		if d == st {
			db = i
			break
		}
	}
	if db < 0 {
		return
	}
	if e.kn.on {
		e.notifyRemoved(db, key, evicted)
	}
	if !e.repl.feed || e.repl.upstream {
		return
	}
	o := &e.o.Replication
	name := wDel
	if (!evicted && o.LazyExpire) || (evicted && o.LazyEviction) {
		name = wUnlink
	}
	e.repl.words = append(e.repl.words[:0], name, key)
	e.appendOp(db, e.repl.words)
	if e.repl.depth == 0 {
		e.flushUnit()
	}
}

// propagate adds the command just executed to the unit if it changed the
// data set (mods is e.mods() before it ran).
func (e *Engine) propagate(s *Session, r *command.Request, mods uint64) {
	spec := command.Lookup(r.Op)
	if spec == nil || e.repl.upstream {
		return
	}
	if r.Op == command.OpPublish {
		// Outside cluster mode Redis propagates every PUBLISH, so the
		// replicas' subscribers get it too (Sentinel's hellos).
		if e.cl == nil {
			if words := e.replWords(r); words != nil {
				e.appendOp(s.db, words)
			}
		}
		return
	}
	if spec.Flags&command.Write == 0 {
		return
	}
	changed := e.mods() != mods
	switch r.Op {
	case command.OpSwapDB, command.OpFlushAll, command.OpFlushDB: // dirty even when nothing was there
		changed = e.res.Kind != command.Error
	}
	if !changed {
		return
	}
	words := e.replWords(r)
	if words == nil {
		return
	}
	e.appendOp(s.db, words)
}

// replWords returns the command to propagate for r, rewritten as Redis
// rewrites it (absolute expiry times, the effect of non-deterministic
// commands), or as the client sent it.
func (e *Engine) replWords(r *command.Request) [][]byte {
	w := e.repl.words[:0]
	num := e.repl.num[:0]
	at := func() []byte {
		t := e.st.ExpireTime(r.Key)
		start := len(num)
		num = strconv.AppendInt(num, t, 10)
		return num[start:len(num):len(num)]
	}
	defer func() { e.repl.num = num[:0] }()
	switch r.Op {
	case command.OpSet, command.OpSetEX, command.OpPSetEX:
		if r.Op == command.OpSet && r.Expiry == command.ExpiryNone {
			break
		}
		if e.st.ExpireTime(r.Key) < 0 {
			w = append(w, wDel, r.Key)
		} else {
			w = append(w, wSet, r.Key, r.Value, wPXAT, at())
		}
		e.repl.words = w
		return w
	case command.OpExpire, command.OpPExpire, command.OpExpireAt, command.OpPExpireAt, command.OpGetEX:
		switch t := e.st.ExpireTime(r.Key); {
		case t == -2:
			w = append(w, wDel, r.Key)
		case t == -1:
			w = append(w, wPersist, r.Key)
		default:
			w = append(w, wPExpireAt, r.Key, at())
		}
		e.repl.words = w
		return w
	case command.OpRestore:
		// An absolute expiry, as Redis rewrites it, and IDLETIME (FREQ,
		// which goblin does not keep, is left out).
		t := e.st.ExpireTime(r.Key)
		ttl := []byte("0")
		if t >= 0 {
			ttl = at()
		}
		w = append(w, wRestore, r.Key, ttl, r.Value)
		if r.Flags&command.FlagReplace != 0 {
			w = append(w, wReplace)
		}
		if t >= 0 {
			w = append(w, wAbsTTL)
		}
		if r.Flags&command.FlagIdle != 0 {
			w = append(w, wIdleTime, strconv.AppendInt(nil, r.Amount, 10))
		}
		if r.Flags&command.FlagFreq != 0 {
			w = append(w, wFreq, strconv.AppendInt(nil, r.Amount, 10))
		}
		e.repl.words = w
		return w
	case command.OpGetDel: // Redis 7.0 propagates it as DEL (getdelCommand)
		w = append(w, wDel, r.Key)
		e.repl.words = w
		return w
	case command.OpIncrByFloat:
		if e.res.Kind == command.Bulk {
			w = append(w, wSet, r.Key, e.res.Value, wKeepTTL)
			e.repl.words = w
			return w
		}
	case command.OpHIncrByFloat:
		if e.res.Kind == command.Bulk && len(r.Args) > 0 {
			w = append(w, wHSet, r.Key, r.Args[0], e.res.Value)
			e.repl.words = w
			return w
		}
	case command.OpBLPop, command.OpBRPop, command.OpBZPopMin, command.OpBZPopMax, command.OpBLMPop, command.OpBZMPop:
		if len(e.res.Items) > 0 { // served: the key is the answer's first element
			return e.popWords(r.Op, e.res.Items[0].Value, r.Args[max(int(r.Amount)-1, 0):], &e.res)
		}
		return nil
	case command.OpBLMove, command.OpBRPopLPush:
		return e.popWords(r.Op, r.Key, r.Args, &e.res)
	case command.OpSPop:
		w = append(w, wSRem, r.Key)
		if e.res.Kind == command.Bulk {
			w = append(w, e.res.Value)
		} else {
			for i := range e.res.Items {
				w = append(w, e.res.Items[i].Value)
			}
		}
		e.repl.words = w
		return w
	}
	if e.argv != nil {
		return e.argv
	}
	words, err := e.repl.enc.Words(r)
	if err != nil {
		return nil
	}
	return words
}

// appendOp adds one command for database db to the unit.
func (e *Engine) appendOp(db int, words [][]byte) {
	r := &e.repl
	if db != r.selDB {
		var n [20]byte
		r.unit = replication.AppendCommand(r.unit, wSelect, strconv.AppendInt(n[:0], int64(db), 10))
		r.selDB = db
	}
	if r.unitOps == 0 { // a leading SELECT goes before the MULTI
		r.unitFirst = len(r.unit)
	}
	r.unit = replication.AppendCommand(r.unit, words...)
	r.unitOps++
}

// flushUnit feeds the unit: alone, or wrapped in MULTI … EXEC when it
// holds more than one command.
func (e *Engine) flushUnit() {
	r := &e.repl
	if len(r.unit) == 0 {
		return
	}
	if r.unitOps > 1 {
		e.replFeed(r.unit[:r.unitFirst])
		e.replFeed(replMulti)
		e.replFeed(r.unit[r.unitFirst:])
		e.replFeed(replExec)
	} else {
		e.replFeed(r.unit)
	}
	r.unit, r.unitOps, r.unitFirst = r.unit[:0], 0, 0
	if cap(r.unit) > maxKeptScratch {
		r.unit = nil
	}
}

// replFeed appends stream bytes to the backlog and to every replica's
// queue (sent by replFlush).
func (e *Engine) replFeed(b []byte) {
	if len(b) == 0 {
		return
	}
	if e.repl.tap != nil {
		e.repl.tap.StreamFeed(e.repl.hist.ID, e.repl.hist.Offset, b)
	}
	e.repl.hist.Feed(b)
	for _, rp := range e.repl.replicas {
		if rp.state != replWaitBgsave {
			rp.out = append(rp.out, b...)
		}
	}
}

// replPaused reports whether the stream must not move on its own (no PING,
// no GETACK): FAILOVER waits for a replica to reach the offset, or the
// cluster bus paused writes for a replica's manual failover, which needs
// the offset it was told to stay put.
func (e *Engine) replPaused() bool {
	return e.fo.state != foNone || e.clock.NowMillis() < e.mfUntil
}

// replFlush hands each replica's queued stream and RDB bytes to its
// transport, and disconnects a replica over its output limits. It runs
// from Tick, which the server's loop calls on every cycle that served
// requests (server.LoopConfig.TickEvery); it reports whether bytes are
// still waiting.
func (e *Engine) replFlush() bool {
	r := &e.repl
	if r.getAck && len(r.replicas) > 0 && !e.replPaused() { // nor GETACK (FAILOVER, a cluster manual failover)
		r.getAck = false
		e.replFeed(replGetAck)
	}
	waiting := false
	if len(r.rdb) > 0 && (r.eof || r.finishing) { // the "$<len>" form waits for its length
		waiting = e.pushRDB()
	}
	if r.finishing && len(r.rdb) == 0 {
		e.syncSent()
	}
	for i := len(r.replicas) - 1; i >= 0; i-- {
		rp := r.replicas[i]
		if len(rp.out) == 0 || rp.state != replOnline || rp.waitAck {
			if e.replicaOverLimit(rp) {
				e.killReplica(rp)
			}
			continue
		}
		sent := 0
		for sent < len(rp.out) {
			n := min(len(rp.out)-sent, replPushChunk)
			if !rp.s.conn.Push(rp.out[sent : sent+n]) {
				break
			}
			sent += n
		}
		// Push copied what it took: keep the rest at the front, reuse the buffer.
		rp.out = rp.out[:copy(rp.out, rp.out[sent:])]
		if len(rp.out) == 0 {
			rp.softAt = 0
		} else {
			waiting = true
		}
		if e.replicaOverLimit(rp) {
			e.killReplica(rp)
		}
	}
	return waiting
}

// replicaOverLimit applies client-output-buffer-limit replica (its
// replica class, CONFIG SET with Pub/Sub's; 0 turns a limit off, as in
// Redis): over the hard limit at once, over the soft one for its seconds.
func (e *Engine) replicaOverLimit(rp *replica) bool {
	n := int64(len(rp.out))
	hard, soft, secs := e.ps.replica[0], e.ps.replica[1], e.ps.replica[2]
	if hard > 0 && n > hard {
		return true
	}
	if soft == 0 || n <= soft {
		rp.softAt = 0
		return false
	}
	if rp.softAt == 0 {
		rp.softAt = e.now
	}
	return e.now-rp.softAt > secs*1000
}

// pushRDB hands the snapshot bytes made so far to every replica of the
// running sync; it reports whether some are still waiting.
func (e *Engine) pushRDB() bool {
	r := &e.repl
	done := len(r.rdb)
	for _, rp := range r.syncTo {
		for rp.rdbPos < len(r.rdb) {
			n := min(len(r.rdb)-rp.rdbPos, replPushChunk)
			if !rp.s.conn.Push(r.rdb[rp.rdbPos : rp.rdbPos+n]) {
				break // its transport is full: go on at the next Tick
			}
			rp.rdbPos += n
		}
		done = min(done, rp.rdbPos)
	}
	// Drop what every replica has; keep the rest at the front.
	r.rdb = r.rdb[:copy(r.rdb, r.rdb[done:])]
	for _, rp := range r.syncTo {
		rp.rdbPos -= done
	}
	return len(r.rdb) > 0
}

// rdbSink collects the snapshot's bytes for pushRDB.
type rdbSink struct{ e *Engine }

func (w rdbSink) Write(b []byte) (int, error) {
	w.e.repl.rdb = append(w.e.repl.rdb, b...)
	return len(b), nil
}

// killReplica disconnects a replica.
func (e *Engine) killReplica(rp *replica) {
	s := rp.s
	s.killed, s.quit = true, true
	if s.conn.Kill != nil {
		s.conn.Kill()
	}
	e.Close(s)
}

// dropReplica forgets a replica whose session closes (Close).
func (e *Engine) dropReplica(s *Session) {
	r := &e.repl
	rp := s.replica
	s.replica = nil
	for i, x := range r.replicas {
		if x == rp {
			r.replicas = append(r.replicas[:i], r.replicas[i+1:]...)
			break
		}
	}
	for i, x := range r.syncTo {
		if x == rp {
			r.syncTo = append(r.syncTo[:i], r.syncTo[i+1:]...)
			break
		}
	}
	if len(r.syncTo) == 0 && (r.job != nil || r.finishing) {
		if r.job != nil {
			r.job.Abort()
			r.job.Finished()
		}
		r.job, r.rdb, r.finishing = nil, r.rdb[:0], false
	}
	e.refreshGood()
	e.o.Persistence.Log.Info("replica disconnected", "addr", s.conn.Addr)
}

// sync answers SYNC: the old protocol, a full resynchronisation without
// the +FULLRESYNC line.
func (e *Engine) sync(s *Session, r *command.Request) {
	e.psyncFrom(s, nil, -1, true)
}

// psync answers PSYNC replid offset.
func (e *Engine) psync(s *Session, r *command.Request) {
	off, err := strconv.ParseInt(string(r.Args[1]), 10, 64)
	if err != nil {
		e.errText(command.NotInteger, "ERR value is not an integer or out of range")
		return
	}
	if len(r.Args) > 2 && command.EqualFold(r.Args[2], "failover") && !e.psyncFailover(s, r.Args[0]) {
		return
	}
	e.psyncFrom(s, r.Args[0], off, false)
}

func (e *Engine) psyncFrom(s *Session, id []byte, off int64, legacy bool) {
	if s.conn.Push == nil {
		e.errText(command.Err, errNoSocket)
		return
	}
	if s.replica != nil {
		e.muteReply(s) // Redis ignores SYNC from a replica
		return
	}
	r := &e.repl
	if e.fo.state != foNone {
		e.errText(command.Err, "NOMASTERLINK Can't SYNC while failing over")
		return
	}
	if r.upstream && !r.linkUp {
		e.errText(command.Err, "NOMASTERLINK Can't SYNC while not connected with my master")
		return
	}
	rp := &replica{s: s, ackAt: e.now, since: e.now}
	s.replica = rp
	e.muteReply(s)
	if !legacy && r.hist.Continue(string(id), off) {
		msg := append(e.scratch[:0], "+CONTINUE"...)
		if s.rconf.psync {
			msg = append(append(msg, ' '), r.hist.ID...)
		}
		msg = append(msg, '\r', '\n')
		msg, _ = r.hist.Backlog().From(msg, off)
		e.scratch = msg[:0]
		rp.state, rp.ackOff = replOnline, off-1
		r.replicas = append(r.replicas, rp)
		r.syncPartialOK++
		e.refreshGood()
		if !s.conn.Push(msg) {
			e.killReplica(rp)
			return
		}
		e.o.Persistence.Log.Info("partial resynchronization accepted", "addr", s.conn.Addr, "offset", off)
		return
	}
	if !legacy && string(id) != "?" {
		r.syncPartialErr++
	}
	r.syncFull++
	if !r.feed || r.hist.Backlog() == nil { // none yet, or freed by repl-backlog-ttl
		e.enableFeed(true)
	}
	rp.state = replWaitBgsave
	rp.legacy = legacy
	r.replicas = append(r.replicas, rp)
	e.o.Persistence.Log.Info("full resynchronization requested", "addr", s.conn.Addr, "replid", string(id), "offset", off)
	e.startSync()
}

// startSync begins a snapshot for every replica waiting for one, unless
// one is running or a BGSAVE holds the stores' cut (then Tick retries).
func (e *Engine) startSync() {
	r := &e.repl
	if r.job != nil || r.finishing {
		return
	}
	var waiting []*replica
	eof := !e.o.Replication.DisklessOff
	longest := int64(-1)
	for _, rp := range r.replicas {
		if rp.state == replWaitBgsave {
			waiting = append(waiting, rp)
			eof = eof && rp.s.rconf.eof
			longest = max(longest, e.now-rp.since)
		}
	}
	if len(waiting) == 0 || e.snap.job != nil {
		return
	}
	if d := e.o.Replication.SyncDelay; eof && d > 0 && longest < d*1000 {
		return // repl-diskless-sync-delay: Tick starts it once a replica has waited that long
	}
	o := e.saveOptions()
	o.Path = ""
	o.MaxBacklog = replRDBAhead
	o.Aux = [][2]string{{"repl-stream-db", "0"}, {"repl-id", r.hist.ID},
		{"repl-offset", strconv.FormatInt(r.hist.Offset, 10)}, {"aof-preamble", "0"}}
	r.rdb = r.rdb[:0]
	queued := func() int64 { return int64(len(r.rdb)) }
	if !eof {
		queued = func() int64 { return 0 } // the whole RDB is needed for its length
	}
	job, err := snapshot.BeginStream(e.saveDBs(), o, rdbSink{e}, queued)
	if err != nil {
		e.o.Persistence.Log.Warn("full resynchronization could not start; retrying", "err", err)
		return
	}
	r.job, r.eof, r.syncTo = job, eof, waiting
	r.selDB = -1 // the stream after the RDB starts with a SELECT
	head := append(e.scratch[:0], "+FULLRESYNC "...)
	head = append(head, r.hist.ID...)
	head = append(head, ' ')
	head = strconv.AppendInt(head, r.hist.Offset, 10)
	head = append(head, '\r', '\n')
	headLen := len(head)
	if eof {
		var m [20]byte
		_, _ = rand.Read(m[:])
		hex.Encode(r.mark[:], m[:])
		head = append(head, "$EOF:"...)
		head = append(head, r.mark[:]...)
		head = append(head, '\r', '\n')
	}
	e.scratch = head[:0]
	for _, rp := range waiting {
		rp.state, rp.startOff, rp.out, rp.ackAt, rp.rdbPos = replSendBulk, r.hist.Offset, rp.out[:0], e.now, 0
		msg := head
		if rp.legacy {
			msg = head[headLen:]
		}
		if !rp.s.conn.Push(msg) {
			e.killReplica(rp)
		}
	}
	e.o.Persistence.Log.Info("starting full resynchronization", "replicas", len(waiting), "offset", r.hist.Offset,
		"diskless", eof)
}

// tickRepl advances a full sync, sends PINGs, times replicas and WAITs
// out, and flushes queued stream bytes. It returns work done.
func (e *Engine) tickRepl() int {
	r := &e.repl
	work := 0
	e.updateFailover()
	if r.job != nil {
		if !r.job.StepFor(e.o.Persistence.SaveSlice) {
			work = 1
		}
		if done, err := r.job.Finished(); done {
			e.syncDone(err)
			work = 1
		}
	} else if len(r.replicas) > 0 {
		e.startSync()
	}
	// No PING while FAILOVER waits or while paused for a cluster manual
	// failover: the replica must reach the offset it was told (as Redis's
	// replicationCron).
	if len(r.replicas) > 0 && !r.upstream && !e.replPaused() && e.now-r.lastPing >= e.o.Replication.PingPeriod*1000 {
		r.lastPing = e.now
		e.replFeed(replPing)
	}
	timeout := e.o.Replication.Timeout * 1000
	for i := len(r.replicas) - 1; i >= 0; i-- {
		rp := r.replicas[i]
		if rp.state == replOnline && !rp.waitAck && e.now-rp.ackAt > timeout {
			e.o.Persistence.Log.Warn("disconnecting timedout replica", "addr", rp.s.conn.Addr)
			e.killReplica(rp)
		}
	}
	e.refreshGood()
	if e.replFlush() {
		work = 1
	}
	work += e.wakeWaiters() // answers pushed: poll again before parking (see tickBlocked)
	e.backlogTTL()
	return work
}

// backlogTTL frees the backlog of a primary that has had no replica for
// repl-backlog-ttl seconds, as Redis's replicationCron does: propagation
// stops, and the next replica gets a full sync under a new id.
func (e *Engine) backlogTTL() {
	r := &e.repl
	if len(r.replicas) > 0 || r.upstream || r.hist.Backlog() == nil {
		r.noneSince = 0
		return
	}
	if r.noneSince == 0 {
		r.noneSince = e.now
	}
	if ttl := *e.o.Replication.BacklogTTL; ttl > 0 && e.now-r.noneSince > ttl*1000 {
		r.hist.FreeBacklog()
		r.feed, r.noneSince = false, 0
		e.rehook()
		e.o.Persistence.Log.Info("replication backlog freed: no replica for repl-backlog-ttl", "seconds", ttl)
	}
}

// syncDone ends a full sync: the RDB's end (the mark, or the "$<len>"
// header and the whole RDB), then the stream.
func (e *Engine) syncDone(err error) {
	r := &e.repl
	r.job = nil
	to := r.syncTo
	r.syncTo = nil
	if err != nil {
		e.o.Persistence.Log.Error("full resynchronization failed", "err", err)
		r.rdb = r.rdb[:0]
		for _, rp := range to {
			e.killReplica(rp)
		}
		return
	}
	if !r.eof {
		head := append(e.scratch[:0], '$')
		head = strconv.AppendInt(head, int64(len(r.rdb)), 10)
		head = append(head, '\r', '\n')
		e.scratch = head[:0]
		for _, rp := range to {
			if !rp.s.conn.Push(head) {
				e.killReplica(rp)
			}
		}
	} else {
		r.rdb = append(r.rdb, r.mark[:]...)
	}
	r.syncTo, r.finishing = to, true
	if !e.pushRDB() { // else the rest goes out from Tick
		e.syncSent()
	}
}

// syncSent puts the replicas of a full sync whose RDB is all handed over
// online: their stream follows at once, or (the $EOF: form) at their
// first ACK.
func (e *Engine) syncSent() {
	r := &e.repl
	for _, rp := range r.syncTo {
		rp.state = replOnline
		rp.waitAck = r.eof
		rp.ackAt = e.now
	}
	e.o.Persistence.Log.Info("synchronization with replica succeeded", "replicas", len(r.syncTo))
	r.syncTo, r.finishing = nil, false
	r.rdb = r.rdb[:0]
	if cap(r.rdb) > maxKeptScratch {
		r.rdb = nil
	}
}

// replConf answers REPLCONF option value ...
func (e *Engine) replConf(s *Session, r *command.Request) {
	a := r.Args
	if len(a)%2 != 0 {
		e.errText(command.Syntax, "ERR syntax error")
		return
	}
	for i := 0; i < len(a); i += 2 {
		opt, v := a[i], a[i+1]
		switch {
		case command.EqualFold(opt, "listening-port"):
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				e.errText(command.NotInteger, "ERR value is not an integer or out of range")
				return
			}
			s.rconf.port = n
		case command.EqualFold(opt, "ip-address"):
			s.rconf.ip = string(v)
		case command.EqualFold(opt, "capa"):
			switch {
			case command.EqualFold(v, "eof"):
				s.rconf.eof = true
			case command.EqualFold(v, "psync2"):
				s.rconf.psync = true
			}
		case command.EqualFold(opt, "ack"):
			// Never answered: the replica reads every byte as stream.
			e.muteReply(s)
			if rp := s.replica; rp != nil {
				if n, err := strconv.ParseInt(string(v), 10, 64); err == nil && n > rp.ackOff {
					rp.ackOff = n
				}
				rp.ackAt = e.now
				if rp.waitAck {
					rp.waitAck = false // the RDB is loaded: the stream may follow
				}
				e.refreshGood()
				e.wakeWaiters()
			}
			return
		case command.EqualFold(opt, "getack"):
			e.muteReply(s) // a primary has no primary to ask
			return
		case command.EqualFold(opt, "rdb-only"), command.EqualFold(opt, "rdb-filter-only"):
		default:
			e.fail(command.Err, "ERR Unrecognized REPLCONF option: ", opt, "")
			return
		}
	}
	e.ok()
}

// muteReply leaves the current command's reply out (REPLCONF ACK, PSYNC,
// whose answers go through Push, and a parked WAIT).
func (e *Engine) muteReply(s *Session) {
	if s.mute == 0 {
		s.mute = 1
		s.recold()
	}
}

// role answers ROLE: for a primary, master, its offset, and its online
// replicas' address, port and acknowledged offset; a replica's form is
// roleReplica's (cmd_replica.go).
func (e *Engine) role(s *Session, _ *command.Request) {
	if e.roleReplica() {
		return
	}
	e.begin(command.Array)
	e.addBulkStr("master")
	e.addInt(e.repl.hist.Offset)
	e.push(command.Array)
	for _, rp := range e.repl.replicas {
		if rp.state != replOnline {
			continue
		}
		e.push(command.Array)
		e.addCopy(command.Bulk, []byte(replicaIP(rp.s)))
		e.addBulkInt(rp.s.rconf.port)
		e.addBulkInt(rp.ackOff)
		e.pop()
	}
	e.pop()
	e.end()
}

// replicaIP is the address a replica is known by: REPLCONF ip-address, or
// its connection's.
func replicaIP(s *Session) string {
	if s.rconf.ip != "" {
		return s.rconf.ip
	}
	host, _, err := net.SplitHostPort(s.conn.Addr)
	if err != nil {
		return s.conn.Addr
	}
	return host
}

// wait answers WAIT numreplicas timeout: the replicas that acknowledged
// the client's last write, at once when enough did (or inside MULTI, or
// on a transport that cannot answer later); else the client is parked
// (its further requests wait) and answered by wakeWaiters.
func (e *Engine) wait(s *Session, r *command.Request) {
	if e.repl.upstream {
		e.errText(command.Err, "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.")
		return
	}
	n := e.acked(s.woff)
	if n >= r.Amount || e.inExec || s.conn.Push == nil || s.Protocol == proto.SBE {
		e.integer(int64(n))
		return
	}
	s.waitNum, s.waitUntil = r.Amount, 0
	if r.Amount2 > 0 {
		s.waitUntil = e.clock.NowMillis() + r.Amount2
	}
	s.waiting, s.failedAuth = true, true // failedAuth: end this batch of requests here; the transport offers the rest again once WAIT's answer is pushed
	e.repl.waiters = append(e.repl.waiters, s)
	e.repl.getAck = true
	e.muteReply(s)
}

// acked counts the online replicas that acknowledged offset off.
func (e *Engine) acked(off int64) int64 {
	var n int64
	for _, rp := range e.repl.replicas {
		if rp.state == replOnline && rp.ackOff >= off {
			n++
		}
	}
	return n
}

// wakeWaiters answers the parked WAITs that have enough ACKs or have
// timed out, and returns how many.
func (e *Engine) wakeWaiters() int {
	r := &e.repl
	now := e.clock.NowMillis()
	answered := 0
	for i := 0; i < len(r.waiters); i++ {
		s := r.waiters[i]
		n := e.acked(s.woff)
		if n < s.waitNum && (s.waitUntil == 0 || now < s.waitUntil) {
			continue
		}
		var b [24]byte
		msg := append(b[:0], ':')
		msg = strconv.AppendInt(msg, n, 10)
		msg = append(msg, '\r', '\n')
		s.conn.Push(msg)
		s.waiting = false
		r.waiters = append(r.waiters[:i], r.waiters[i+1:]...)
		i--
		answered++
	}
	return answered
}

// dropWaiter forgets a parked WAIT whose client closes.
func (e *Engine) dropWaiter(s *Session) {
	r := &e.repl
	for i, w := range r.waiters {
		if w == s {
			r.waiters = append(r.waiters[:i], r.waiters[i+1:]...)
			break
		}
	}
	s.waiting = false
}

// refreshGood counts the replicas whose last ACK is recent enough for
// min-replicas-max-lag, and sets the write gate.
func (e *Engine) refreshGood() {
	r := &e.repl
	o := &e.o.Replication
	good := 0
	for _, rp := range r.replicas {
		if rp.state == replOnline && e.now-rp.ackAt <= o.MinReplicasLag*1000 {
			good++
		}
	}
	r.good = good
	r.gate = o.MinReplicas > 0 && int64(good) < o.MinReplicas && !r.upstream
	e.rehot()
}

// noReplicas answers a write refused by min-replicas-to-write.
func (e *Engine) noReplicas(r *command.Request) bool {
	if !e.repl.gate || command.Lookup(r.Op).Flags&command.Write == 0 {
		return false
	}
	e.errText(command.Err, "NOREPLICAS Not enough good replicas to write.")
	return true
}

// infoReplication writes INFO's replication section as Redis lays it out
// for a primary.
func (e *Engine) infoReplication(w *infoWriter) {
	r := &e.repl
	w.str("role", "master")
	e.infoReplicas(w)
	w.str("master_failover_state", e.failoverInfo())
	w.b = r.hist.AppendInfo(w.b)
	e.appendTapInfo(w)
}

// infoReplicas writes connected_slaves and a line per replica (a
// replica's INFO has them too, for its chained replicas).
func (e *Engine) infoReplicas(w *infoWriter) {
	r := &e.repl
	taps := e.tapReplicaList() // repl_tap.go: Aeron replicas
	w.int("connected_slaves", int64(len(r.replicas)+len(taps)))
	if e.o.Replication.MinReplicas > 0 {
		w.int("min_slaves_good_slaves", int64(r.good))
	}
	for i, rp := range r.replicas {
		b := append(w.b, "slave"...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, ":ip="...)
		b = append(b, replicaIP(rp.s)...)
		b = append(b, ",port="...)
		b = strconv.AppendInt(b, rp.s.rconf.port, 10)
		b = append(b, ",state="...)
		b = append(b, replStateNames[rp.state]...)
		b = append(b, ",offset="...)
		b = strconv.AppendInt(b, rp.ackOff, 10)
		b = append(b, ",lag="...)
		b = strconv.AppendInt(b, max(e.now-rp.ackAt, 0)/1000, 10)
		w.b = append(b, '\r', '\n')
	}
	w.b = appendTapReplicas(w.b, len(r.replicas), taps)
}

// ReplicationStats are the primary's replication figures for metrics.
type ReplicationStats struct {
	ConnectedReplicas                       int   // connected_slaves
	OnlineReplicas                          int   // of which online
	Offset                                  int64 // master_repl_offset
	MaxLagBytes                             int64 // the largest master_repl_offset - ack offset among online replicas
	MaxLagSeconds                           int64 // the oldest ACK among online replicas, in seconds
	SyncFull, SyncPartialOK, SyncPartialErr int64
}

// ReplicationStats fills st (loop goroutine only).
func (e *Engine) ReplicationStats(st *ReplicationStats) {
	r := &e.repl
	*st = ReplicationStats{ConnectedReplicas: len(r.replicas), Offset: r.hist.Offset,
		SyncFull: r.syncFull, SyncPartialOK: r.syncPartialOK, SyncPartialErr: r.syncPartialErr}
	for _, rp := range r.replicas {
		if rp.state != replOnline {
			continue
		}
		st.OnlineReplicas++
		st.MaxLagBytes = max(st.MaxLagBytes, r.hist.Offset-rp.ackOff)
		st.MaxLagSeconds = max(st.MaxLagSeconds, (e.now-rp.ackAt)/1000)
	}
}

// replTimeoutParam makes CONFIG SET repl-timeout reach the replica
// side's link too (ReplicationOptions.TimeoutChanged).
func (e *Engine) replTimeoutParam(p Param) Param {
	set := p.Set
	p.Set = func(v string) error {
		if err := set(v); err != nil {
			return err
		}
		if f := e.o.Replication.TimeoutChanged; f != nil {
			f(e.o.Replication.Timeout)
		}
		return nil
	}
	return p
}

// replParams are the replication parameters of CONFIG GET and SET.
func (e *Engine) replParams() []Param {
	o := &e.o.Replication
	intParam := func(name string, p *int64, minV int64) Param {
		return Param{Name: name, Get: func() string { return strconv.FormatInt(*p, 10) }, Set: func(v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < minV {
				return errors.New("argument couldn't be parsed into an integer")
			}
			*p = n
			e.refreshGood()
			return nil
		}}
	}
	yesNoParam := func(name string, p *bool, inverted bool) Param {
		return YesNoParam(name, func() bool { return *p != inverted }, func(b bool) { *p = b != inverted })
	}
	return []Param{
		{Name: "repl-backlog-size", Get: func() string { return strconv.Itoa(e.repl.hist.BacklogSize()) },
			Set: func(v string) error {
				n, ok := ParseMemory(v)
				if !ok || n < 1 {
					return errors.New("argument must be a memory value")
				}
				e.repl.hist.SetBacklogSize(int(n))
				return nil
			}},
		yesNoParam("repl-diskless-sync", &o.DisklessOff, true),
		intParam("repl-ping-replica-period", &o.PingPeriod, 1),
		e.replTimeoutParam(intParam("repl-timeout", &o.Timeout, 1)),
		intParam("min-replicas-to-write", &o.MinReplicas, 0),
		intParam("min-replicas-max-lag", &o.MinReplicasLag, 0),
		yesNoParam("lazyfree-lazy-expire", &o.LazyExpire, false),
		yesNoParam("lazyfree-lazy-eviction", &o.LazyEviction, false),
		intParam("repl-diskless-sync-delay", &o.SyncDelay, 0),
		intParam("repl-backlog-ttl", o.BacklogTTL, 0),
	}
}
