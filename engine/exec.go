package engine

import (
	"errors"
	"math"
	"math/bits"
	"strconv"
	"time"
	"unsafe"

	"github.com/goblin-kv/goblin/reply"
	"github.com/goblin-kv/goblin/request"
	"github.com/goblin-kv/goblin/store"
)

// handler executes one decoded request and leaves its answer in e.res.
type handler func(e *Engine, s *Session, r *request.Request)

// handlers holds every command's implementation, indexed by Op: every
// command in request's table has one except the Dispatch containers (CLIENT
// alone...), which unknownOp answers, and no Op outside the table has one
// (TestEveryCommandHasAHandler, in handlers_test.go, keeps the two in
// step). Filled by init to break the cycle through EXEC, which executes
// other handlers.
var handlers [request.NumOps]handler

func init() {
	for op, h := range map[request.Op]handler{
		request.OpPing: (*Engine).ping, request.OpEcho: (*Engine).echo, request.OpGet: (*Engine).get,
		request.OpSet: (*Engine).set, request.OpDel: (*Engine).del, request.OpExists: (*Engine).exists,
		request.OpExpire: (*Engine).expire, request.OpPExpire: (*Engine).expire,
		request.OpTTL: (*Engine).ttl, request.OpPTTL: (*Engine).ttl, request.OpPersist: (*Engine).persist,
		request.OpIncr: (*Engine).incr, request.OpIncrBy: (*Engine).incr, request.OpDecr: (*Engine).incr,
		request.OpDecrBy: (*Engine).incr, request.OpMGet: (*Engine).mget, request.OpMSet: (*Engine).mset,
		request.OpType: (*Engine).keyType, request.OpDBSize: (*Engine).dbsize,
		request.OpFlushAll: (*Engine).flush, request.OpFlushDB: (*Engine).flush, request.OpInfo: (*Engine).info,
		request.OpAuth: (*Engine).authCmd, request.OpSelect: (*Engine).selectDB, request.OpQuit: (*Engine).quit,
		request.OpConfigGet: (*Engine).configGet, request.OpClientSetName: (*Engine).clientSetName,
		request.OpClientGetName: (*Engine).clientGetName, request.OpClientSetInfo: (*Engine).clientSetInfo,
		request.OpCommand: (*Engine).commandInfo, request.OpCommandInfo: (*Engine).commandInfo,
		request.OpCommandCount: (*Engine).commandCount, request.OpCommandDocs: (*Engine).commandDocs,
		request.OpCommandList: (*Engine).commandList, request.OpCommandGetKeys: (*Engine).commandGetKeys,
		request.OpCommandGetKeysAndFlags: (*Engine).commandGetKeys, request.OpCommandHelp: (*Engine).help,
		request.OpHello: (*Engine).hello,
		request.OpSetNX: (*Engine).setNX, request.OpSetEX: (*Engine).setEx, request.OpPSetEX: (*Engine).setEx,
		request.OpGetSet: (*Engine).getSet, request.OpGetDel: (*Engine).getDel, request.OpGetEX: (*Engine).getEx,
		request.OpAppend: (*Engine).appendCmd, request.OpStrLen: (*Engine).strLen,
		request.OpGetRange: (*Engine).getRange, request.OpSubstr: (*Engine).getRange,
		request.OpSetRange: (*Engine).setRange, request.OpIncrByFloat: (*Engine).incrByFloat,
		request.OpMSetNX: (*Engine).msetNX, request.OpUnlink: (*Engine).del, request.OpTouch: (*Engine).touch,
		request.OpRename: (*Engine).rename, request.OpRenameNX: (*Engine).rename, request.OpCopy: (*Engine).copyKey,
		request.OpRandomKey: (*Engine).randomKey, request.OpExpireAt: (*Engine).expire,
		request.OpPExpireAt: (*Engine).expire, request.OpExpireTime: (*Engine).expireTime,
		request.OpPExpireTime: (*Engine).expireTime, request.OpKeys: (*Engine).keys, request.OpScan: (*Engine).scan,
		request.OpObjectEncoding: (*Engine).objectEncoding, request.OpObjectFreq: (*Engine).objectFreq,
		request.OpObjectIdleTime: (*Engine).objectIdleTime, request.OpObjectRefCount: (*Engine).objectRefCount,
		request.OpObjectHelp: (*Engine).help, request.OpMemoryUsage: (*Engine).memoryUsage,
		request.OpMemoryHelp: (*Engine).help, request.OpMemoryDoctor: (*Engine).memoryDoctor,
		request.OpMemoryStats: (*Engine).memoryStats, request.OpMemoryMallocStats: (*Engine).memoryMallocStats,
		request.OpMemoryPurge: (*Engine).memoryPurge, request.OpDump: (*Engine).dump,
		request.OpRestore: (*Engine).restore, request.OpSwapDB: (*Engine).swapDB, request.OpMove: (*Engine).move,
		request.OpSetBit: (*Engine).setBit, request.OpGetBit: (*Engine).getBit, request.OpBitCount: (*Engine).bitCount,
		request.OpBitPos: (*Engine).bitPos, request.OpBitOp: (*Engine).bitOp, request.OpBitField: (*Engine).bitField,
		request.OpBitFieldRO: (*Engine).bitField, request.OpLCS: (*Engine).lcs,
		request.OpMulti: (*Engine).multi, request.OpExec: (*Engine).exec, request.OpDiscard: (*Engine).discard,
		request.OpWatch: (*Engine).watch, request.OpUnwatch: (*Engine).unwatch,
		request.OpReset: (*Engine).reset, request.OpClientID: (*Engine).clientID, request.OpClientInfo: (*Engine).clientInfo,
		request.OpClientList: (*Engine).clientList, request.OpClientKill: (*Engine).clientKill,
		request.OpClientNoEvict: (*Engine).clientNoEvict, request.OpClientNoTouch: (*Engine).clientNoTouch,
		request.OpClientPause: (*Engine).clientPause, request.OpClientUnpause: (*Engine).clientUnpause,
		request.OpClientReply: (*Engine).clientReply, request.OpClientHelp: (*Engine).help,
		request.OpClientGetRedir: (*Engine).clientGetRedir, request.OpClientTrackingInfo: (*Engine).clientTrackingInfo,
		request.OpClientTracking: (*Engine).clientTracking, request.OpClientCaching: (*Engine).clientCaching,
		request.OpClientUnblock: (*Engine).clientUnblock, request.OpTime: (*Engine).time,
		request.OpLastSave: (*Engine).lastSave, request.OpWait: (*Engine).wait,
		request.OpConfigSet: (*Engine).configSet, request.OpConfigResetStat: (*Engine).configResetStat,
		request.OpConfigRewrite: (*Engine).configRewrite, request.OpConfigHelp: (*Engine).help,
		request.OpFunctionFlush: (*Engine).functionFlush, request.OpFunctionList: (*Engine).functionList,
		request.OpFunctionHelp: (*Engine).help, request.OpMonitor: (*Engine).monitor,
		request.OpClusterHelp: (*Engine).help, request.OpAsking: (*Engine).asking,
		request.OpReadOnly: (*Engine).readOnly, request.OpReadWrite: (*Engine).readOnly, request.OpMigrate: (*Engine).migrate,
		request.OpRestoreAsking: (*Engine).restore,
	} {
		handlers[op] = h
	}
	for _, op := range request.Subcommands(request.OpCluster) {
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

func (e *Engine) setError(st reply.Status, text []byte) {
	r := &e.res
	r.Kind, r.Status, r.Value = reply.Error, st, text
	r.Items = r.Items[:0]
}

// Reply texts shared by every request, so replies need no allocation.
var (
	txtOK     = []byte("OK")
	txtPONG   = []byte("PONG")
	txtString = []byte("string")
	txtNone   = []byte("none")
)

func (e *Engine) ok()             { e.res.Kind, e.res.Value = reply.Simple, txtOK }
func (e *Engine) simple(v []byte) { e.res.Kind, e.res.Value = reply.Simple, v }
func (e *Engine) bulk(v []byte)   { e.res.Kind, e.res.Value = reply.Bulk, v }
func (e *Engine) null()           { e.res.Kind = reply.Nil }
func (e *Engine) integer(n int64) { e.res.Kind, e.res.Integer = reply.Integer, n }
func (e *Engine) errText(st reply.Status, text string) {
	e.fail(st, text, nil, "")
}

// fail records an error reply whose text is prefix + arg + suffix.
func (e *Engine) fail(st reply.Status, prefix string, arg []byte, suffix string) {
	e.errBuf = append(e.errBuf[:0], prefix...)
	e.errBuf = reply.AppendSanitized(e.errBuf, arg, 128)
	e.errBuf = append(e.errBuf, suffix...)
	e.setError(st, e.errBuf)
}

func (e *Engine) wrongArgs(op request.Op) {
	e.errBuf = reply.AppendWrongArgs(e.errBuf[:0], request.Name(op))
	e.setError(reply.WrongArgs, e.errBuf)
}

// bs views a constant string as bytes for a reply, which encoders only
// read; it saves converting table text on every request.
func bs(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// count records a served request: the transport's counters, INFO's
// commandstats and errorstats, and the session's last command (the calls
// were counted by execute). It is small enough to be inlined.
func (e *Engine) count(s *Session, op request.Op) {
	s.Stats.Commands[op]++
	s.lastOp = op
	if e.res.Kind == reply.Error {
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
// past maxKeptScratch; it runs once per batch of requests.
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
func (e *Engine) CommandTimed(op request.Op) uint64 { return e.cmd[op].sampled }

// CommandLatency copies op's latency histogram (per-bucket counts of the
// timed calls, see LatencyBounds) into dst and returns the timed calls'
// total in nanoseconds. Call it from the loop goroutine, as every Engine
// method.
func (e *Engine) CommandLatency(op request.Op, dst *[LatencyBuckets]uint64) (sumNanos uint64) {
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
func (e *Engine) execute(s *Session, r *request.Request) {
	h := handlers[r.Op] // set for the table's commands only
	if h == nil {
		e.unknownOp(r)
		return
	}
	if e.o.RequirePass != "" && !s.authed && request.Lookup(r.Op).Flags&request.NoAuth == 0 {
		e.errText(reply.NoAuth, "NOAUTH Authentication required.")
		return
	}
	e.st = e.dbs[s.db]
	if e.cl != nil && e.route(s, r) {
		return
	}
	e.ran = true
	e.cmd[r.Op].calls++
	if e.sampleLeft--; e.sampleLeft <= 0 || s.noTouch || len(e.watchers) > 0 {
		e.executeSlow(s, r, h)
		return
	}
	if r.Op == request.OpPing { // inlined: cheaper than the table's call
		e.ping(s, r)
		return
	}
	h(e, s, r)
}

// executeSlow runs what execute leaves out of its common path: timing one
// call in sampleEvery, CLIENT NO-TOUCH, and WATCH's touches.
func (e *Engine) executeSlow(s *Session, r *request.Request, h handler) {
	var start time.Time
	if e.sampleLeft <= 0 {
		e.sampleLeft = sampleEvery
		start = time.Now()
	}
	if s.noTouch && r.Op != request.OpTouch {
		e.st.SetNoTouch(true)
		defer e.st.SetNoTouch(false)
	}
	before := e.st.Mods()
	h(e, s, r)
	// A write that changed the store touches its keys' watchers (one that
	// changed nothing, such as SET NX on an existing key, touches none, as
	// in Redis).
	if len(e.watchers) > 0 && request.Lookup(r.Op).Flags&request.Write != 0 && e.dbs[s.db].Mods() != before {
		e.touchKeys(s.db, r)
	}
	if !start.IsZero() {
		e.cmd[r.Op].observe(uint64(time.Since(start)))
	}
}

// unknownOp answers a request whose Op goblin does not execute: an SBE
// request of a newer schema, or a container without its subcommand.
func (e *Engine) unknownOp(r *request.Request) {
	if s := request.Lookup(r.Op); s != nil && s.Dispatch {
		e.wrongArgs(r.Op)
		return
	}
	e.errBuf = append(e.errBuf[:0], "ERR unknown command op "...)
	e.errBuf = strconv.AppendUint(e.errBuf, uint64(r.Op), 10)
	e.setError(reply.UnknownCommand, e.errBuf)
	r.Op = request.OpNone
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
		e.errText(reply.OOM, "OOM command not allowed when used memory > 'maxmemory'.")
	case errors.Is(err, store.ErrKeyTooLong):
		e.errText(reply.KeyTooLong, "ERR key too long")
	case errors.Is(err, store.ErrValueTooLong):
		e.errText(reply.ValueTooLong, "ERR value too long")
	case errors.Is(err, store.ErrNotInteger):
		e.errText(reply.NotInteger, "ERR value is not an integer or out of range")
	case errors.Is(err, store.ErrOverflow):
		e.errText(reply.Overflow, "ERR increment or decrement would overflow")
	default:
		e.errText(reply.Err, "ERR "+err.Error())
	}
}

// absExpire turns a relative or absolute expiry into unix milliseconds as
// Redis does: non-positive times and overflow are invalid.
func (e *Engine) absExpire(kind request.Expiry, v int64) (int64, bool) {
	if v <= 0 {
		return 0, false
	}
	ms := v
	switch kind {
	case request.ExpiryEX, request.ExpiryEXAT:
		if v > math.MaxInt64/1000 {
			return 0, false
		}
		ms = v * 1000
	case request.ExpiryPX, request.ExpiryPXAT:
	default:
		return 0, false
	}
	if kind == request.ExpiryEX || kind == request.ExpiryPX {
		now := e.clock.NowMillis()
		if ms > math.MaxInt64-now {
			return 0, false
		}
		ms += now
	}
	return ms, true
}
