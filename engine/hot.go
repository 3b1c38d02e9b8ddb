package engine

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/proto/sbe"
	"github.com/goblin-kv/goblin/store"
)

// The hot state (hotReady, as the hot paths write it out: hotSession, then
// the user) is the common state in which r, a PING, GET or SET, needs
// none of execute's and serveSBEReply's general checks: nothing
// engine-wide in the way (hotOff, kept by rehot: no MONITOR, no slow log
// that keeps every command, no load at start, nothing hooked on commands
// (replication feed, keyspace notifications, an LFU policy), no WATCH, no
// cluster routing, not a replica, writes allowed), the session calm (hotSession), and r allowed to the user by
// permit's fast checks (a user allowed everything passes with one branch,
// a restricted one by its precomputed check, hotCheck, else by
// hotPermit's bit test and key patterns, as execute would check it:
// hotUser). Anything else (a request the fast checks do not pass
// included) goes the general way, unchanged. The sampled request (one in
// 64, timed alone) is served on the in-place SBE and direct RESP hot paths
// too (sampledInPlace, sampledRESP).

// hotUser is the hot state's check of a restricted user, out of line.
func (e *Engine) hotUser(s *Session, r *command.Request) bool {
	return hotCheck(s.user, r) || e.hotPermitSlow(s, r)
}

// hotSession is the hot state but for the user: the engine-wide flag, the
// sampling countdown, and the session's own state (no MULTI, replies on,
// no CLIENT NO-TOUCH, no Pub/Sub context: one flag, s.cold). Small enough
// to be inlined.
func (e *Engine) hotSession(s *Session) bool {
	return e.calmSession(s) && e.sampleLeft > 1
}

// calmSession is hotSession but for the sampling countdown: the in-place
// paths serve the sampled request too (sampleStart, sampleEnd).
func (e *Engine) calmSession(s *Session) bool {
	if invariants {
		e.checkHot()
		s.checkCold()
	}
	return !e.hotOff && !s.cold
}

// coldNow returns what s.cold stands for, read from the state itself.
func (s *Session) coldNow() bool { return s.tx.on || s.mute != 0 || s.noTouch || s.pubsub }

// recold sets s.cold: every change of a MULTI's state, mute, CLIENT
// NO-TOUCH or the Pub/Sub context calls it, so hotSession tests one flag
// where it tested four.
func (s *Session) recold() { s.cold = s.coldNow() }

// checkCold panics when s.cold lets a request take a hot path that the
// session's state itself does not: a change that did not call recold.
func (s *Session) checkCold() {
	if now := s.coldNow(); now && !s.cold {
		panic(fmt.Sprintf("engine: session cold flag stale: cold %v (state says %v: MULTI %v, mute %d, no-touch %v, Pub/Sub %v)", s.cold, now, s.tx.on, s.mute, s.noTouch, s.pubsub))
	}
}

// hotNow returns what hotOff and inPlaceOff stand for, read from the
// state itself.
func (e *Engine) hotNow() (hotOff, inPlaceOff bool) {
	hotOff = len(e.monitors) != 0 || e.slow.slowerThan == 0 || e.loading != nil || e.hooked ||
		len(e.watchers) != 0 || e.cl != nil || e.follow.on || e.writesDenied()
	return hotOff, hotOff || e.slow.slowerThan >= 0 && !e.cycled
}

// rehot sets hotOff and inPlaceOff: every change of what they are made of
// calls it (MONITOR, WATCH, CONFIG SET, the load at start, the hooks,
// replication's roles and min-replicas gate, a save's outcome, the first
// cycle), so the hot paths test one flag where they tested eight.
// checkHot holds it to that in invariants and race builds.
func (e *Engine) rehot() {
	e.hotOff, e.inPlaceOff = e.hotNow()
	e.hotBulk = e.o.Limits.HotBulk()
}

// checkHot panics when hotOff or inPlaceOff lets a request take a hot path
// that the state itself does not: a change that did not call rehot.
func (e *Engine) checkHot() {
	if hot, inPlace := e.hotNow(); hot && !e.hotOff || inPlace && !e.inPlaceOff {
		panic(fmt.Sprintf("engine: hot flags stale: hotOff %v (state says %v), inPlaceOff %v (state says %v)", e.hotOff, hot, e.inPlaceOff, inPlace))
	}
	if b := e.o.Limits.HotBulk(); b != e.hotBulk {
		panic(fmt.Sprintf("engine: hotBulk stale: %d, the RESP limits say %d", e.hotBulk, b))
	}
}

// serveSBEHot serves r, a decoded SBE message (framed: its reply is
// SOFH-framed, for a stream transport), when it is a PING without a
// message, a GET or a plain SET (no options) in the hot state (hotReady)
// of a database with no collections (so no WRONGTYPE to find), and
// reports whether it did. It does what execute, the handler, count and the
// encoder do for such a request, directly: the calls, the slow log's
// timing, the session's counters, and the reply; a GET's value is
// appended by the store straight into out after the reply's header, with
// no copy through a Reply. TestHotPathMatchesGeneral holds it to the
// general path's bytes, counters and store.
func (e *Engine) serveSBEHot(s *Session, r *command.Request, out []byte, framed bool) ([]byte, bool) {
	if r.Version < 2 || len(r.Args) != 0 {
		return out, false
	}
	switch r.Op {
	case command.OpGet, command.OpPing:
	case command.OpSet:
		if r.Flags != 0 || r.Expiry != command.ExpiryNone {
			return out, false
		}
	default:
		return out, false
	}
	st := e.dbs[s.db]
	if st.Collections() != 0 || !e.hotSession(s) || !s.user.AllowsAll() && !e.hotUser(s, r) { // hotReady, inlined
		return out, false
	}
	e.beginHot(st, r.Op)
	var start int64
	timing := e.slow.slowerThan >= 0 // the slow log's timing, batched (batchtime.go) or as execute's
	if timing && !e.cycled {
		start = e.since()
	}
	frameAt := len(out)
	if framed { // a stream transport's SOFH, its length set at the end
		out = sbe.AppendFrameStart(out)
	}
	switch r.Op {
	case command.OpPing: // a compact one is answered with a Pong, as the encoder does
		e.simple(txtPONG)
		if r.Compact {
			out = sbe.AppendPong(out, r.CorrelationID)
		} else {
			out = append(sbe.AppendReplyHeader(out, r.CorrelationID, command.OK, command.Simple, len(txtPONG)), txtPONG...)
		}
	case command.OpGet:
		at := len(out)
		out = sbe.AppendReplyHeader(out, r.CorrelationID, command.OK, command.Bulk, 0)
		var found bool
		if out, found = st.Get(out, r.Key); found {
			sbe.FinishReplyValue(out[at:])
			e.res.Kind = command.Bulk
		} else {
			out = sbe.AppendReplyHeader(out[:at], r.CorrelationID, command.OK, command.Nil, 0)
			e.res.Kind = command.Nil
		}
	default: // SET key value
		if err := st.Put(r.Key, r.Value); err != nil {
			e.res.Reset() // beginHot leaves the last reply's fields; an error's encoding reads them all
			e.storeError(err)
			e.res.CorrelationID = r.CorrelationID
			out = e.codec.AppendReply(out, &e.res)
		} else {
			e.ok()
			out = append(sbe.AppendReplyHeader(out, r.CorrelationID, command.OK, command.Simple, len(txtOK)), txtOK...)
		}
	}
	if framed {
		sbe.FinishFrame(out[frameAt:])
	}
	if timing {
		if e.cycled {
			e.untimed(s, r.Op, r.Key, r.Value, hotIndex(r.Op))
		} else {
			e.timed(s, r, start)
		}
	}
	e.count(s, r.Op)
	if len(e.blocked) != 0 {
		e.serveBlocked()
	}
	return out, true
}

// serveSBEInPlace is serveSBEHot for a GET or plain SET message (framed:
// its reply SOFH-framed, for a stream transport), read in place (sbe.PeekKeyed) instead of decoded
// into e.req, for a user allowed everything, with the slow log's timing
// batched (or off): the same checks, bookkeeping and reply, with no
// Request filled. A bare message it does not serve in place it serves the
// general way (notInPlace: decodeSBE, serveSBEHot, which also serves a
// restricted user's hot requests, and serveSBE), with closeConn as
// ServeMessage's; a framed one it reports not served (served false) to
// serveSBEStream.
func (e *Engine) serveSBEInPlace(s *Session, msg, out []byte, framed bool) (replies []byte, served, closeConn bool) {
	op, corr, key, value, ok := sbe.PeekKeyed(msg)
	if !ok || e.inPlaceOff || !s.user.AllowsAll() || !e.calmSession(s) {
		return e.notInPlace(s, msg, out, framed)
	}
	st := e.dbs[s.db]
	if st.Collections() != 0 {
		return e.notInPlace(s, msg, out, framed)
	}
	if e.sampleLeft <= 1 && !e.sampling { // the one in sampleEvery timed alone, here as on the general path
		return e.sampledInPlace(s, msg, out, framed)
	}
	if cap(out)-len(out) < inPlaceRoom { // rare: out grown, and msg served again, out of line
		return e.serveSBEInPlace(s, msg, slices.Grow(out, inPlaceRoom), framed)
	}
	e.beginHot(st, op)
	if e.slow.slowerThan >= 0 || e.sampling { // untimed, inlined; before the store's call, so key and value need not outlive it
		i := hotSet
		if op == command.OpGet {
			i = hotGet
		}
		if l := e.batch.add(s, op, i, len(key), len(value)); !keepShort(&l.key, key) || !keepShort(&l.val, value) {
			l.keepLong(key, value)
		}
	}
	// Room for the SOFH, the reply's header and SET's "OK" made before
	// (inPlaceRoom): the header is written in place (PutReplyHeader, inlined).
	frameAt := len(out)
	if framed {
		out = sbe.AppendFrameStart(out)
	}
	at := len(out)
	if op == command.OpGet {
		out = out[:at+sbe.ReplyHeaderLen]
		sbe.PutReplyHeader(out[at:], corr, command.OK, command.Bulk, 0)
		var found bool
		if out, found = st.Get(out, key); found {
			sbe.FinishReplyValue(out[at:])
			e.res.Kind = command.Bulk
		} else {
			out = out[:at+sbe.ReplyHeaderLen]
			sbe.PutReplyHeader(out[at:], corr, command.OK, command.Nil, 0)
			e.res.Kind = command.Nil
		}
	} else if err := st.Put(key, value); err != nil {
		e.res.Reset() // beginHot leaves the last reply's fields; an error's encoding reads them all
		e.storeError(err)
		e.res.CorrelationID = corr
		out = e.codec.AppendReply(out, &e.res)
	} else {
		e.res.Kind = command.Simple // all count reads of a hot reply (see beginHot)
		out = out[:at+sbe.ReplyHeaderLen+len("OK")]
		sbe.PutSimpleOK(out[at:], corr)
	}
	if framed {
		sbe.FinishFrame(out[frameAt:])
	}
	e.count(s, op)
	if len(e.blocked) != 0 {
		e.serveBlocked()
	}
	return out, true, false
}

// inPlaceRoom is the room serveSBEInPlace writes into without a growth
// check: the SOFH, the reply's header and SET's "OK".
const inPlaceRoom = sbe.SOFHLen + sbe.ReplyHeaderLen + len("OK")

// sampledInPlace is serveSBEInPlace for the sampled request: the same,
// timed alone between sampleStart and sampleEnd. Out of line, so that the
// common path keeps nothing live across a call for it.
func (e *Engine) sampledInPlace(s *Session, msg, out []byte, framed bool) (replies []byte, served, closeConn bool) {
	e.sampleStart()
	e.sampling = true
	out, served, closeConn = e.serveSBEInPlace(s, msg, out, framed) // served: the same checks passed
	e.sampling = false
	e.sampleEnd()
	return out, served, closeConn
}

// notInPlace is serveSBEInPlace's answer for msg, which it does not serve:
// a bare message is served the general way here (serveSBEMessage), so
// that ServeMessage keeps nothing live across its call; a framed one is
// left to serveSBEStream (served false).
func (e *Engine) notInPlace(s *Session, msg, out []byte, framed bool) (replies []byte, served, closeConn bool) {
	if framed {
		return out, false, false
	}
	out, closeConn = e.serveSBEMessage(s, msg, out)
	return out, true, closeConn
}

// serveRESPHotDirect is serveSBEHot for a RESP PING, GET or SET that
// resp.Parser.PeekHot read (SET with no options: it takes only three
// words), op with key and value, in the hot state with nothing of
// Pub/Sub's waiting to be sent: the same bookkeeping, and the reply
// appended directly. r is the Request serveRESPHot made of the words, for
// a restricted user's permission check and for timing a request on its
// own (the slow log reads it and e.argv); ServeStreamLimit passes nil,
// reading PeekHot's answer in place, when neither applies (a user
// allowed everything, the timing batched or off).
// The bookkeeping around the switch is serveSBEHot's, written out again
// on purpose: shared as helpers the compiler does not inline, it cost 23
// to 43 more instructions a request (callgrind, BenchmarkServe GET/SET).
func (e *Engine) serveRESPHotDirect(s *Session, r *command.Request, op command.Op, key, value []byte, out []byte) ([]byte, bool) {
	st := e.dbs[s.db]
	if st.Collections() != 0 || len(e.ps.out) != 0 || !e.calmSession(s) || !s.user.AllowsAll() && !e.hotUser(s, r) { // hotReady, inlined
		return out, false
	}
	if e.sampleLeft <= 1 && !e.sampling { // the one in sampleEvery timed alone
		if r != nil { // a request timed on its own (or a restricted user's) goes the general way
			return out, false
		}
		return e.sampledRESP(s, op, key, value, out)
	}
	e.beginHot(st, op)
	var start int64
	timing := e.slow.slowerThan >= 0      // batched (batchtime.go), or as execute's
	if e.sampling || timing && e.cycled { // untimed, inlined; before the store's call, so key and value need not outlive it
		if l := e.batch.add(s, op, hotIndex(op), len(key), len(value)); !keepShort(&l.key, key) || !keepShort(&l.val, value) {
			l.keepLong(key, value)
		}
	} else if timing {
		start = e.since()
	}
	switch op {
	case command.OpPing:
		e.res.Kind = command.Simple
		out = append(out, "+PONG\r\n"...)
	case command.OpGet:
		// The value goes straight into out, after a bulk header that
		// guesses two digits (a 10- to 99-byte value), put right after.
		at := len(out)
		out = append(out, bulkGuess...)
		var found bool
		out, found = st.Get(out, key)
		switch {
		case found:
			if n := len(out) - at - len(bulkGuess); n >= 10 && n <= 99 { // fixBulkHeader's usual case, inlined
				binary.LittleEndian.PutUint16(out[at+1:], digitPairs[n]) // n's two digits, no divisions
			} else {
				out, _ = fixBulkHeader(out, at)
			}
			e.res.Kind = command.Bulk
			out = append(out, '\r', '\n')
		case s.resp3:
			out = out[:at]
			e.res.Kind = command.Nil
			out = resp.AppendNull3(out)
		default:
			out = out[:at]
			e.res.Kind = command.Nil
			out = resp.AppendNull(out)
		}
	default: // SET key value
		if err := st.Put(key, value); err != nil {
			e.res.Reset() // beginHot leaves the last reply's fields; an error's encoding reads them all
			e.storeError(err)
			out = e.encodeRESP(out, s.resp3)
		} else {
			e.res.Kind = command.Simple
			out = resp.AppendOK(out)
		}
	}
	if timing && !e.cycled && !e.sampling {
		e.timed(s, r, start)
	}
	e.count(s, op)
	return out, true
}

// sampledRESP is serveRESPHotDirect for the sampled request (r nil): the
// same, timed alone between sampleStart and sampleEnd, out of line as
// sampledInPlace.
func (e *Engine) sampledRESP(s *Session, op command.Op, key, value []byte, out []byte) ([]byte, bool) {
	e.sampleStart()
	e.sampling = true
	out, served := e.serveRESPHotDirect(s, nil, op, key, value, out) // served: the same checks passed
	e.sampling = false
	e.sampleEnd()
	return out, served
}

// digitPairs holds the two decimal digits of 0 to 99 as a little-endian
// uint16 each ("42" at 42): a bulk header's length written with one store.
var digitPairs = func() (t [100]uint16) {
	for i := range t {
		t[i] = uint16('0'+i/10) | uint16('0'+i%10)<<8
	}
	return t
}()

// bulkGuess is the RESP bulk header serveRESPHotDirect writes before a
// GET's value: the length's two digits are filled in by fixBulkHeader.
const bulkGuess = "$00\r\n"

// fixBulkHeader completes the bulk header at out[at:] (bulkGuess) for the
// value after it, to the end of out, and returns out and where the value
// now starts: the digits put in place for a 10- to 99-byte value, or the
// header rewritten and the value moved for any other length.
func fixBulkHeader(out []byte, at int) ([]byte, int) {
	v := at + len(bulkGuess)
	n := len(out) - v
	if n >= 10 && n <= 99 {
		out[at+1], out[at+2] = byte('0'+n/10), byte('0'+n%10)
		return out, v
	}
	var b [24]byte
	h := append(strconv.AppendInt(append(b[:0], '$'), int64(n), 10), '\r', '\n')
	if d := len(h) - len(bulkGuess); d > 0 {
		out = append(out, h[:d]...) // room; the bytes are overwritten below
	}
	copy(out[at+len(h):], out[v:v+n])
	copy(out[at:], h)
	return out[:at+len(h)+n], at + len(h)
}

// hotIndex is op's index in hotBatch.ops: op is a PING, GET or SET.
func hotIndex(op command.Op) int {
	switch op {
	case command.OpGet:
		return hotGet
	case command.OpSet:
		return hotSet
	}
	return hotPing
}

// beginHot is what every hot path does first, as execute would: st is the
// session's database, op is counted as a call and against the sampling
// countdown, and the "ran" state is that of a new request. The reply is
// not reset (80 bytes cleared, and write barriers, each request): every
// hot path sets its Kind, which is all count reads of it (the in-place
// paths set nothing else: their reply is written straight into out), and
// resets it before an error, whose encoding reads every field.
func (e *Engine) beginHot(st *store.Store, op command.Op) {
	if e.st != st { // usually the same database: no pointer store (and its write barrier's test)
		e.st = st
	}
	e.ran = true
	e.cmd[op].calls++
	e.sampleLeft--
}
