package engine

import (
	"errors"
	"math"
	"math/bits"
	"strconv"
	"unsafe"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/sbe"
	"github.com/goblin-kv/goblin/store"
)

// handler executes one decoded request and leaves its answer in e.res.
type handler func(e *Engine, s *Session, r *command.Request)

// handlers holds every command's implementation, indexed by Op: every
// command in request's table has one except the Dispatch containers (CLIENT
// alone...), which unknownOp answers, and no Op outside the table has one
// (TestEveryCommandHasAHandler, in handlers_test.go, keeps the two in
// step). Filled by init to break the cycle through EXEC, which executes
// other handlers.
var handlers [command.NumOps]handler

func init() {
	for op, h := range map[command.Op]handler{
		command.OpPing: (*Engine).ping, command.OpEcho: (*Engine).echo, command.OpGet: (*Engine).get,
		command.OpSet: (*Engine).set, command.OpDel: (*Engine).del, command.OpExists: (*Engine).exists,
		command.OpExpire: (*Engine).expire, command.OpPExpire: (*Engine).expire,
		command.OpTTL: (*Engine).ttl, command.OpPTTL: (*Engine).ttl, command.OpPersist: (*Engine).persist,
		command.OpIncr: (*Engine).incr, command.OpIncrBy: (*Engine).incr, command.OpDecr: (*Engine).incr,
		command.OpDecrBy: (*Engine).incr, command.OpMGet: (*Engine).mget, command.OpMSet: (*Engine).mset,
		command.OpType: (*Engine).keyType, command.OpDBSize: (*Engine).dbsize,
		command.OpFlushAll: (*Engine).flush, command.OpFlushDB: (*Engine).flush, command.OpInfo: (*Engine).info,
		command.OpAuth: (*Engine).authCmd, command.OpSelect: (*Engine).selectDB, command.OpQuit: (*Engine).quit,
		command.OpConfigGet: (*Engine).configGet, command.OpClientSetName: (*Engine).clientSetName,
		command.OpClientGetName: (*Engine).clientGetName, command.OpClientSetInfo: (*Engine).clientSetInfo,
		command.OpCommand: (*Engine).commandInfo, command.OpCommandInfo: (*Engine).commandInfo,
		command.OpCommandCount: (*Engine).commandCount, command.OpCommandDocs: (*Engine).commandDocs,
		command.OpCommandList: (*Engine).commandList, command.OpCommandGetKeys: (*Engine).commandGetKeys,
		command.OpCommandGetKeysAndFlags: (*Engine).commandGetKeys, command.OpCommandHelp: (*Engine).help,
		command.OpHello: (*Engine).hello,
		command.OpSetNX: (*Engine).setNX, command.OpSetEX: (*Engine).setEx, command.OpPSetEX: (*Engine).setEx,
		command.OpGetSet: (*Engine).getSet, command.OpGetDel: (*Engine).getDel, command.OpGetEX: (*Engine).getEx,
		command.OpAppend: (*Engine).appendCmd, command.OpStrLen: (*Engine).strLen,
		command.OpGetRange: (*Engine).getRange, command.OpSubstr: (*Engine).getRange,
		command.OpSetRange: (*Engine).setRange, command.OpIncrByFloat: (*Engine).incrByFloat,
		command.OpMSetNX: (*Engine).msetNX, command.OpUnlink: (*Engine).del, command.OpTouch: (*Engine).touch,
		command.OpRename: (*Engine).rename, command.OpRenameNX: (*Engine).rename, command.OpCopy: (*Engine).copyKey,
		command.OpRandomKey: (*Engine).randomKey, command.OpExpireAt: (*Engine).expire,
		command.OpPExpireAt: (*Engine).expire, command.OpExpireTime: (*Engine).expireTime,
		command.OpPExpireTime: (*Engine).expireTime, command.OpKeys: (*Engine).keys, command.OpScan: (*Engine).scan,
		command.OpObjectEncoding: (*Engine).objectEncoding, command.OpObjectFreq: (*Engine).objectFreq,
		command.OpObjectIdleTime: (*Engine).objectIdleTime, command.OpObjectRefCount: (*Engine).objectRefCount,
		command.OpObjectHelp: (*Engine).help, command.OpMemoryUsage: (*Engine).memoryUsage,
		command.OpMemoryHelp: (*Engine).help, command.OpMemoryDoctor: (*Engine).memoryDoctor,
		command.OpMemoryStats: (*Engine).memoryStats, command.OpMemoryMallocStats: (*Engine).memoryMallocStats,
		command.OpMemoryPurge: (*Engine).memoryPurge, command.OpDump: (*Engine).dump,
		command.OpRestore: (*Engine).restore, command.OpSwapDB: (*Engine).swapDB, command.OpMove: (*Engine).move,
		command.OpSetBit: (*Engine).setBit, command.OpGetBit: (*Engine).getBit, command.OpBitCount: (*Engine).bitCount,
		command.OpBitPos: (*Engine).bitPos, command.OpBitOp: (*Engine).bitOp, command.OpBitField: (*Engine).bitField,
		command.OpBitFieldRO: (*Engine).bitField, command.OpLCS: (*Engine).lcs,
		command.OpMulti: (*Engine).multi, command.OpExec: (*Engine).exec, command.OpDiscard: (*Engine).discard,
		command.OpWatch: (*Engine).watch, command.OpUnwatch: (*Engine).unwatch,
		command.OpReset: (*Engine).reset, command.OpClientID: (*Engine).clientID, command.OpClientInfo: (*Engine).clientInfo,
		command.OpClientList: (*Engine).clientList, command.OpClientKill: (*Engine).clientKill,
		command.OpClientNoEvict: (*Engine).clientNoEvict, command.OpClientNoTouch: (*Engine).clientNoTouch,
		command.OpClientPause: (*Engine).clientPause, command.OpClientUnpause: (*Engine).clientUnpause,
		command.OpClientReply: (*Engine).clientReply, command.OpClientHelp: (*Engine).help,
		command.OpClientGetRedir: (*Engine).clientGetRedir, command.OpClientTrackingInfo: (*Engine).clientTrackingInfo,
		command.OpClientTracking: (*Engine).clientTracking, command.OpClientCaching: (*Engine).clientCaching,
		command.OpClientUnblock: (*Engine).clientUnblock, command.OpTime: (*Engine).time,
		command.OpLastSave: (*Engine).lastSave, command.OpWait: (*Engine).wait,
		command.OpConfigSet: (*Engine).configSet, command.OpConfigResetStat: (*Engine).configResetStat,
		command.OpConfigRewrite: (*Engine).configRewrite, command.OpConfigHelp: (*Engine).help,
		command.OpFunctionFlush: (*Engine).functionFlush, command.OpFunctionList: (*Engine).functionList,
		command.OpFunctionHelp: (*Engine).help, command.OpMonitor: (*Engine).monitor,
		command.OpClusterHelp: (*Engine).help, command.OpAsking: (*Engine).asking,
		command.OpReadOnly: (*Engine).readOnly, command.OpReadWrite: (*Engine).readOnly, command.OpMigrate: (*Engine).migrate,
		command.OpRestoreAsking: (*Engine).restore,
		command.OpACLCat:        (*Engine).aclCat, command.OpACLDelUser: (*Engine).aclDelUser,
		command.OpACLDryRun: (*Engine).aclDryRun, command.OpACLGenPass: (*Engine).aclGenPass,
		command.OpACLGetUser: (*Engine).aclGetUser, command.OpACLList: (*Engine).aclList,
		command.OpACLLoad: (*Engine).aclLoad, command.OpACLLog: (*Engine).aclLogCmd,
		command.OpACLSave: (*Engine).aclSave, command.OpACLSetUser: (*Engine).aclSetUser,
		command.OpACLUsers: (*Engine).aclUsers, command.OpACLWhoAmI: (*Engine).aclWhoAmI,
		command.OpACLHelp:    (*Engine).help,
		command.OpSlowLogGet: (*Engine).slowlogGet, command.OpSlowLogLen: (*Engine).slowlogLen,
		command.OpSlowLogReset: (*Engine).slowlogReset, command.OpSlowLogHelp: (*Engine).help,
		// LATENCY (latency.go).
		command.OpLatencyDoctor: (*Engine).latencyDoctor, command.OpLatencyGraph: (*Engine).latencyGraph,
		command.OpLatencyHistogram: (*Engine).latencyHistogram, command.OpLatencyHistory: (*Engine).latencyHistory,
		command.OpLatencyLatest: (*Engine).latencyLatest, command.OpLatencyReset: (*Engine).latencyReset,
		command.OpLatencyHelp: (*Engine).help,
		command.OpHSet:        (*Engine).hset, command.OpHMSet: (*Engine).hset, command.OpHSetNX: (*Engine).hsetnx,
		command.OpHGet: (*Engine).hget, command.OpHMGet: (*Engine).hmget, command.OpHGetAll: (*Engine).hgetall,
		command.OpHKeys: (*Engine).hgetall, command.OpHVals: (*Engine).hgetall, command.OpHDel: (*Engine).hdel,
		command.OpHExists: (*Engine).hexists, command.OpHStrLen: (*Engine).hexists, command.OpHLen: (*Engine).hlen,
		command.OpHIncrBy: (*Engine).hincrby, command.OpHIncrByFloat: (*Engine).hincrbyfloat,
		command.OpHRandField: (*Engine).hrandfield, command.OpHScan: (*Engine).hscan,
		command.OpSAdd: (*Engine).sadd, command.OpSRem: (*Engine).srem, command.OpSCard: (*Engine).scard,
		command.OpSIsMember: (*Engine).sismember, command.OpSMIsMember: (*Engine).smismember,
		command.OpSMembers: (*Engine).smembers, command.OpSRandMember: (*Engine).srandmember,
		command.OpSPop: (*Engine).spop, command.OpSMove: (*Engine).smove, command.OpSInter: (*Engine).setAlgebra,
		command.OpSInterStore: (*Engine).setAlgebra, command.OpSUnion: (*Engine).setAlgebra,
		command.OpSUnionStore: (*Engine).setAlgebra, command.OpSDiff: (*Engine).setAlgebra,
		command.OpSDiffStore: (*Engine).setAlgebra, command.OpSScan: (*Engine).hscan,
		command.OpLPush: (*Engine).lpush, command.OpRPush: (*Engine).lpush, command.OpLPushX: (*Engine).lpush,
		command.OpRPushX: (*Engine).lpush, command.OpLPop: (*Engine).lpop, command.OpRPop: (*Engine).lpop,
		command.OpLLen: (*Engine).llen, command.OpLIndex: (*Engine).lindex, command.OpLSet: (*Engine).lset,
		command.OpLRange: (*Engine).lrange, command.OpLTrim: (*Engine).ltrim, command.OpLRem: (*Engine).lrem,
		command.OpLInsert: (*Engine).linsert, command.OpLPos: (*Engine).lpos, command.OpLMove: (*Engine).lmove,
		command.OpRPopLPush: (*Engine).lmove,
		command.OpSave:      (*Engine).save, command.OpBgSave: (*Engine).bgsave,
		command.OpShutdown: (*Engine).shutdown,
		// Pub/Sub (pubsub.go).
		command.OpSubscribe: (*Engine).subscribe, command.OpUnsubscribe: (*Engine).unsubscribe,
		command.OpPSubscribe: (*Engine).psubscribe, command.OpPUnsubscribe: (*Engine).punsubscribe,
		command.OpSSubscribe: (*Engine).ssubscribe, command.OpSUnsubscribe: (*Engine).sunsubscribe,
		command.OpPublish: (*Engine).publish, command.OpSPublish: (*Engine).spublish,
		command.OpPubSubChannels: (*Engine).pubsubChannels, command.OpPubSubShardChannels: (*Engine).pubsubChannels,
		command.OpPubSubNumSub: (*Engine).pubsubNumSub, command.OpPubSubShardNumSub: (*Engine).pubsubNumSub,
		command.OpPubSubNumPat: (*Engine).pubsubNumPat, command.OpPubSubHelp: (*Engine).help,
		// Replication, primary side.
		command.OpSync: (*Engine).sync, command.OpPSync: (*Engine).psync,
		command.OpReplConf: (*Engine).replConf, command.OpRole: (*Engine).role,
		// Replica side of replication (cmd_replica.go).
		command.OpReplicaOf: (*Engine).replicaOf, command.OpSlaveOf: (*Engine).replicaOf,
		// Sentinel compatibility.
		command.OpScriptKill: (*Engine).scriptKill, command.OpScriptHelp: (*Engine).help,
		// Sorted sets, and the keynum commands of sets and lists.
		command.OpZAdd: (*Engine).zadd, command.OpZIncrBy: (*Engine).zadd, command.OpZCard: (*Engine).zcard,
		command.OpZCount: (*Engine).zcount, command.OpZLexCount: (*Engine).zcount,
		command.OpZScore: (*Engine).zscore, command.OpZMScore: (*Engine).zmscore,
		command.OpZRank: (*Engine).zrank, command.OpZRevRank: (*Engine).zrank,
		command.OpZRange: (*Engine).zrange, command.OpZRangeByScore: (*Engine).zrange,
		command.OpZRevRangeByScore: (*Engine).zrange, command.OpZRangeByLex: (*Engine).zrange,
		command.OpZRevRangeByLex: (*Engine).zrange, command.OpZRevRange: (*Engine).zrange,
		command.OpZRangeStore: (*Engine).zrange, command.OpZRem: (*Engine).zrem,
		command.OpZRemRangeByRank: (*Engine).zremrange, command.OpZRemRangeByScore: (*Engine).zremrange,
		command.OpZRemRangeByLex: (*Engine).zremrange, command.OpZPopMin: (*Engine).zpop,
		command.OpZPopMax: (*Engine).zpop, command.OpZRandMember: (*Engine).zrandmember,
		command.OpZScan: (*Engine).zscan, command.OpZUnion: (*Engine).zsetAlgebra,
		command.OpZInter: (*Engine).zsetAlgebra, command.OpZDiff: (*Engine).zsetAlgebra,
		command.OpZUnionStore: (*Engine).zsetAlgebra, command.OpZInterStore: (*Engine).zsetAlgebra,
		command.OpZDiffStore: (*Engine).zsetAlgebra, command.OpZInterCard: (*Engine).zsetAlgebra,
		command.OpZMPop: (*Engine).zmpop, command.OpSInterCard: (*Engine).sintercard,
		command.OpLMPop: (*Engine).lmpop,
		// The blocking pops (blocking.go).
		command.OpBLPop: (*Engine).blpop, command.OpBRPop: (*Engine).blpop, command.OpBLMove: (*Engine).blmove,
		command.OpBRPopLPush: (*Engine).blmove, command.OpBLMPop: (*Engine).bmpop, command.OpBZMPop: (*Engine).bmpop,
		command.OpBZPopMin: (*Engine).bzpop, command.OpBZPopMax: (*Engine).bzpop,
	} {
		handlers[op] = h
	}
	for _, op := range command.Subcommands(command.OpCluster) {
		if handlers[op] == nil {
			handlers[op] = (*Engine).clusterCmd
		}
	}
}

// resetResult clears e.res, the reply before encoding. e.res is the
// protocol-neutral answer: the same value feeds the RESP and the SBE
// encoder, which is what keeps the protocols from drifting.
func (e *Engine) resetResult() {
	e.res.Reset()
}

// startRequest readies the engine for the next request: an empty reply,
// and not yet executed.
func (e *Engine) startRequest() {
	e.res.Reset()
	e.ran = false
}

func (e *Engine) setError(st command.Status, text []byte) {
	r := &e.res
	r.Kind, r.Status, r.Value = command.Error, st, text
	r.Items = r.Items[:0]
}

// Reply texts shared by every request, so replies need no allocation.
var (
	txtOK   = []byte("OK")
	txtPONG = []byte("PONG")
)

func (e *Engine) ok()             { e.res.Kind, e.res.Value = command.Simple, txtOK }
func (e *Engine) simple(v []byte) { e.res.Kind, e.res.Value = command.Simple, v }
func (e *Engine) bulk(v []byte)   { e.res.Kind, e.res.Value = command.Bulk, v }
func (e *Engine) null()           { e.res.Kind = command.Nil }
func (e *Engine) integer(n int64) { e.res.Kind, e.res.Integer = command.Integer, n }
func (e *Engine) errText(st command.Status, text string) {
	e.fail(st, text, nil, "")
}

// fail records an error reply whose text is prefix + arg + suffix.
func (e *Engine) fail(st command.Status, prefix string, arg []byte, suffix string) {
	e.errBuf = append(e.errBuf[:0], prefix...)
	e.errBuf = command.AppendSanitized(e.errBuf, arg, 128)
	e.errBuf = append(e.errBuf, suffix...)
	e.setError(st, e.errBuf)
}

func (e *Engine) wrongArgs(op command.Op) {
	e.errBuf = command.AppendWrongArgs(e.errBuf[:0], command.Name(op))
	e.setError(command.WrongArgs, e.errBuf)
}

// bs views a constant string as bytes for a reply, which encoders only
// read; it saves converting table text on every request.
func bs(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// count records a served request: the transport's counters, INFO's
// commandstats and errorstats, and the session's last command (the calls
// were counted by execute). It is small enough to be inlined.
func (e *Engine) count(s *Session, op command.Op) {
	s.Stats.Commands[op]++
	s.lastOp = op
	if e.res.Kind == command.Error {
		e.countError(s)
	}
}

// countError adds an error reply to the session's and INFO's counters
// (count has just set s.lastOp).
func (e *Engine) countError(s *Session) {
	op := s.lastOp
	s.Stats.Errors++
	if e.ran {
		e.cmd[op].failed++
	} else {
		e.cmd[op].rejected++
	}
	e.countErrorCode(e.res.Value)
}

// trimScratch drops the scratch buffer once a large reply has grown it
// past maxKeptScratch; it runs once a loop cycle (BeginCycle) and after
// a replica's batch.
func (e *Engine) trimScratch() {
	if cap(e.scratch) > maxKeptScratch {
		e.scratch = make([]byte, 0, 4096)
	}
}

// processed returns how many commands were executed (INFO's
// total_commands_processed; refused ones are not counted, as in Redis).
func (e *Engine) processed() uint64 {
	var n uint64
	for i := range e.cmd {
		n += e.cmd[i].calls
	}
	return n
}

// cmdStat is one command's line of INFO commandstats and its latency
// histogram. Time is measured on one call in sampleEvery (two clock reads
// cost more than a GET) and scaled to all calls when reported; the
// histogram counts the timed calls.
type cmdStat struct {
	calls, failed, rejected uint64
	sampled, sampledNanos   uint64
	latency                 [LatencyBuckets]uint64
}

const sampleEvery = 64

// LatencySampling is how many calls there are for each one timed: the
// latency histograms count one call in LatencySampling.
const LatencySampling = sampleEvery

// LatencyBuckets is the number of buckets of a command's latency
// histogram; see LatencyBounds.
const LatencyBuckets = 20

// latencyShift puts the first bucket's bound at 2^latencyShift ns.
const latencyShift = 7

// LatencyBounds returns the histogram's upper bounds in seconds, one per
// bucket but the last (+Inf): 128 ns, 256 ns, ... doubling up to 2^25 ns
// (about 34 ms).
func LatencyBounds() []float64 {
	b := make([]float64, LatencyBuckets-1)
	for i := range b {
		b[i] = float64(uint64(1)<<(latencyShift+i)) * 1e-9
	}
	return b
}

// observe counts one timed call of c that took nanos: its bucket is the
// first whose bound, a power of two, exceeds nanos. A shift, a count of
// leading zeros and an increment, in the loop's own array.
func (c *cmdStat) observe(nanos uint64) {
	c.sampled++
	c.sampledNanos += nanos
	b := bits.Len64(nanos >> latencyShift)
	if b >= LatencyBuckets {
		b = LatencyBuckets - 1
	}
	c.latency[b]++
}

// CommandTimed returns how many calls of op were timed so far: a publisher
// reads the histogram again only when it moved. Loop goroutine only.
func (e *Engine) CommandTimed(op command.Op) uint64 { return e.cmd[op].sampled }

// CommandLatency copies op's latency histogram (per-bucket counts of the
// timed calls, see LatencyBounds) into dst and returns the timed calls'
// total in nanoseconds. Call it from the loop goroutine, as every Engine
// method.
func (e *Engine) CommandLatency(op command.Op, dst *[LatencyBuckets]uint64) (sumNanos uint64) {
	c := &e.cmd[op]
	*dst = c.latency
	return c.sampledNanos
}

// usec estimates the microseconds all calls took.
func (c *cmdStat) usec() uint64 {
	if c.sampled == 0 {
		return 0
	}
	return uint64(float64(c.sampledNanos) / float64(c.sampled) * float64(c.calls) / 1000)
}

// errCount is one line of INFO errorstats: replies whose error code (the
// first word of the text) is code.
type errCount struct {
	code string
	n    uint64
}

// countErrorCode adds an error reply to errorstats.
func (e *Engine) countErrorCode(text []byte) {
	code := text
	for i, c := range text {
		if c == ' ' {
			code = text[:i]
			break
		}
	}
	for i := range e.errors {
		if e.errors[i].code == string(code) {
			e.errors[i].n++
			return
		}
	}
	if len(e.errors) < 64 { // codes come from goblin's own texts; bound them anyway
		e.errors = append(e.errors, errCount{code: string(code), n: 1})
	}
}

// execute runs r and leaves the reply in e.res. This is the only place
// commands have meaning: every protocol's request arrives here.
func (e *Engine) execute(s *Session, r *command.Request) {
	h := handlers[r.Op] // set for the table's commands only
	if h == nil {
		e.unknownOp(r)
		return
	}
	// The ACL check: for a user allowed everything (the default user
	// without rules) one load and one predictable branch; permit does
	// the rest (acl.go).
	if !s.user.AllowsAll() && !e.permit(s, r) {
		return
	}
	e.st = e.dbs[s.db]
	if e.cl != nil && !e.follow.applying && e.route(s, r) { // the master client's stream is never redirected
		return
	}
	if e.follow.on && e.replGate(s, r) {
		return
	}
	if e.writesDenied() && e.misconf(r) {
		return
	}
	if s.pubsub && !s.resp3 && e.subscribedOnly(s, r) { // RESP2 with subscriptions (pubsub.go)
		return
	}
	if e.loading != nil && e.loadGate(s, r) { // the load at start (loadstart.go)
		return
	}
	e.ran = true
	e.cmd[r.Op].calls++
	// CONFIG SET is timed even while the slow log is off: it may turn it
	// on, and Redis logs it then.
	if e.sampleLeft--; e.sampleLeft <= 0 || s.noTouch || len(e.watchers) > 0 || r.Op == command.OpConfigSet || e.hooked {
		e.executeSlow(s, r, h)
		return
	}
	if e.slow.slowerThan >= 0 { // the slow log's timing: one read of the monotonic clock
		start := e.since()
		h(e, s, r)
		e.timed(s, r, start)
		return
	}
	if r.Op == command.OpPing { // inlined: cheaper than the table's call
		e.ping(s, r)
		return
	}
	h(e, s, r)
}

// plain reports whether s is in the state most requests find it in, where
// a keyless request that changes nothing (a bare PING) needs none of
// execute's and serveSBE's checks: no MULTI to queue into, replies on, no
// MONITOR to feed, a user allowed PING (authenticated), no slow log
// that keeps every command, and this request not the one in sampleEvery
// that is timed. It is the one predictable branch in
// front of the fast paths; anything it does not cover goes the general way.
func (e *Engine) plain(s *Session) bool {
	return e.calm(s) && (s.user.AllowsAll() || pingCheck(s.user))
}

// calm is plain but for the user: the hot path asks the user about the
// very command it serves (hotReady, permitFast).
func (e *Engine) calm(s *Session) bool {
	return !s.tx.on && s.mute == 0 && len(e.monitors) == 0 && e.sampleLeft > 1 && e.slow.slowerThan != 0 && e.loading == nil
}

// pong answers a compact SBE PING in a plain session (see plain): the
// bookkeeping execute, count and serveSBE would do for it, and the 16-byte
// Pong, with no Request decoded and no Reply built.
func (e *Engine) pong(s *Session, correlationID uint64, out []byte) []byte {
	e.sampleLeft--
	e.ran = true
	e.cmd[command.OpPing].calls++
	s.Stats.Commands[command.OpPing]++
	s.lastOp = command.OpPing
	return sbe.AppendPong(out, correlationID)
}

// executeSlow runs what execute leaves out of its common path: timing one
// call in sampleEvery for the latency histograms, every call for the slow
// log while it is on, CLIENT NO-TOUCH, and WATCH's touches.
func (e *Engine) executeSlow(s *Session, r *command.Request, h handler) {
	sampled := e.sampleLeft <= 0
	if sampled {
		e.sampleLeft = sampleEvery
	}
	timed := sampled || e.slow.slowerThan >= 0 || r.Op == command.OpConfigSet
	var start int64
	switch {
	case sampled: // the histograms time the command alone: a read at its start too
		start = e.mono()
		if e.batch.n != 0 {
			e.closeBatch(start)
			e.mark = start
		}
	case timed:
		start = e.since()
	}
	if s.noTouch && r.Op != command.OpTouch {
		e.st.SetNoTouch(true)
		defer e.st.SetNoTouch(false)
	}
	if e.lfu { // one access per key and command (store/lfu.go)
		st := e.st
		st.BeginCommand()
		defer st.EndCommand()
	}
	before := e.st.Mods()
	feeding := e.repl.feed
	var mods uint64
	if feeding {
		mods = e.mods()
		e.repl.depth++
	}
	if e.kn.on && (len(e.ps.channels) > 0 || len(e.ps.patterns) > 0) { // nobody listens: no event to find
		e.knBefore(s, s.db, r)
		h(e, s, r)
		e.knAfter(s.db, r)
		if len(e.ps.out) == 0 {
			e.ps.after = 0 // nothing was published to s: no mark to keep
		}
		e.kn.from = nil
		e.cutSlow()
	} else {
		h(e, s, r)
	}
	if feeding {
		e.repl.depth--
		e.propagate(s, r, mods)
		if e.repl.depth == 0 {
			e.flushUnit()
			s.woff = e.repl.hist.Offset
		}
	}
	// A write that changed the store touches its keys' watchers (one that
	// changed nothing, such as SET NX on an existing key, touches none, as
	// in Redis).
	if len(e.watchers) > 0 && command.Lookup(r.Op).Flags&command.Write != 0 && e.dbs[s.db].Mods() != before {
		e.touchKeys(s.db, r)
	}
	if timed {
		end := e.mono()
		if e.batch.n != 0 {
			e.closeBatch(end)
		}
		e.mark = end
		d := end - start
		if sampled {
			e.cmd[r.Op].observe(uint64(d))
		}
		e.commandTimed(s, r, d) // the slow log, latency tracking and monitor
	}
}

// since returns the time a command about to run is timed from: the
// engine's latest clock reading (the duty cycle's start, or the end of the
// previous timed command in the cycle), so timing it costs one read, at
// its end. Before the first BeginCycle the engine's latest reading may be
// from long ago (an idle spell, not the command's), so it reads the clock.
func (e *Engine) since() int64 {
	if !e.cycled {
		return e.mono()
	}
	if e.batch.n != 0 {
		// Hot requests ran since e.mark, untimed (batchtime.go): their
		// batch ends here, so this command is not charged for them nor
		// they for it. One clock reading, only for the first timed
		// command after a batch.
		e.settleBatch()
	}
	return e.mark
}

// timed ends the timing of r, which started at start: one read of the
// clock, which the next timed command starts from, and the slow log's
// threshold and latency tracking (commandTimed). The time counted is at least the command's own, so no command
// that took slowlog-log-slower-than is missed; it adds what ran between
// the previous reading and the command (parsing the request, on sockets
// the reads and writes in between).
func (e *Engine) timed(s *Session, r *command.Request, start int64) {
	end := e.mono()
	if e.batch.n != 0 {
		e.closeBatch(end)
	}
	e.mark = end
	e.commandTimed(s, r, end-start) // the slow log, latency tracking and monitor
}

// unknownOp answers a request whose Op goblin does not execute: an SBE
// request of a newer schema, or a container without its subcommand.
func (e *Engine) unknownOp(r *command.Request) {
	if s := command.Lookup(r.Op); s != nil && s.Dispatch {
		e.wrongArgs(r.Op)
		return
	}
	e.errBuf = append(e.errBuf[:0], "ERR unknown command op "...)
	e.errBuf = strconv.AppendUint(e.errBuf, uint64(r.Op), 10)
	e.setError(command.UnknownCommand, e.errBuf)
	r.Op = command.OpNone
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (e *Engine) storeError(err error) {
	switch {
	case errors.Is(err, store.ErrOOM):
		e.errText(command.OOM, "OOM command not allowed when used memory > 'maxmemory'.")
	case errors.Is(err, store.ErrKeyTooLong):
		e.errText(command.KeyTooLong, "ERR key too long")
	case errors.Is(err, store.ErrValueTooLong):
		e.errText(command.ValueTooLong, "ERR value too long")
	case errors.Is(err, store.ErrNotInteger):
		e.errText(command.NotInteger, "ERR value is not an integer or out of range")
	case errors.Is(err, store.ErrWrongType):
		e.errText(command.Err, txtWrongType)
	case errors.Is(err, store.ErrOverflow):
		e.errText(command.Overflow, "ERR increment or decrement would overflow")
	default:
		e.errText(command.Err, "ERR "+err.Error())
	}
}

// absExpire turns a relative or absolute expiry into unix milliseconds as
// Redis does: non-positive times and overflow are invalid.
func (e *Engine) absExpire(kind command.Expiry, v int64) (int64, bool) {
	if v <= 0 {
		return 0, false
	}
	ms := v
	switch kind {
	case command.ExpiryEX, command.ExpiryEXAT:
		if v > math.MaxInt64/1000 {
			return 0, false
		}
		ms = v * 1000
	case command.ExpiryPX, command.ExpiryPXAT:
	default:
		return 0, false
	}
	if kind == command.ExpiryEX || kind == command.ExpiryPX {
		now := e.clock.NowMillis()
		if ms > math.MaxInt64-now {
			return 0, false
		}
		ms += now
	}
	return ms, true
}
