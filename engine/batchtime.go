package engine

import (
	"strconv"

	"github.com/goblin-kv/goblin/command"
)

// Batch timing: once the store loop drives the engine's cycles
// (BeginCycle), a request served on a hot path (serveSBEHot,
// serveRESPHotDirect: a PING, GET or plain SET in the calm state) reads
// no clock. It joins the batch of such requests served since the
// engine's latest clock reading (e.mark); the next reading, the loop's
// next cycle or a timed command's end, closes the batch and times it as a
// whole (closeBatch): the span is shared equally among the batch's
// requests in the latency-tracking histograms, and a batch whose span
// reached slowlog-log-slower-than is logged as its last request, with the
// span as its time. A request's time so counted is at least its own
// share (as a timed command's includes what ran since the previous
// reading), and no batch that took the threshold goes unlogged: a ring or
// Aeron ping-pong (one request a cycle) pays the loop's one reading per
// cycle and no other, where each request read the clock once more.

// hotBatch is the batch of untimed hot requests since e.mark.
type hotBatch struct {
	n    int            // requests in the batch
	ops  [3]uint32      // of them, PINGs, GETs and SETs (hotPing, hotGet, hotSet)
	last batchedRequest // the batch's last request, for the slow log
}

// The indexes of hotBatch.ops.
const (
	hotPing = iota
	hotGet
	hotSet
)

// batchedOps are the commands of hotBatch.ops, by index.
var batchedOps = [3]command.Op{command.OpPing, command.OpGet, command.OpSet}

// batchedRequest is a copy of what the slow log keeps of a hot request, made
// when it is served: its session, command, and key and value (at most the
// slow log's 128 bytes of each, and their lengths). The request's own
// bytes belong to the transport and are gone by the time its batch closes.
type batchedRequest struct {
	s          *Session
	op         command.Op
	keyN, valN int
	key, val   [slowlogMaxString]byte
}

// untimed adds a request of session s, served on a hot path without
// reading the clock (the loop's cycles close batches, and the slow log is
// on), to the batch: op (whose index in hotBatch.ops is i) with key and
// value (empty when op has none). The in-place paths write it out as
// add and keepShort, which the compiler inlines.
func (e *Engine) untimed(s *Session, op command.Op, key, value []byte, i int) {
	l := e.batch.add(s, op, i, len(key), len(value))
	if !keepShort(&l.key, key) || !keepShort(&l.val, value) {
		l.keepLong(key, value)
	}
}

// add counts a request of session s for op (whose index in ops is i),
// with a key of kn bytes and a value of vn, in the batch, and returns its
// record as the batch's last, for the caller to copy the key and value
// into (keepShort, keepLong).
func (b *hotBatch) add(s *Session, op command.Op, i, kn, vn int) *batchedRequest {
	b.n++
	b.ops[i]++
	l := &b.last
	if l.s != s { // usually the same session: no pointer store (and its write barrier's test)
		l.s = s
	}
	l.op, l.keyN, l.valN = op, kn, vn
	return l
}

// keepShort copies w into dst and reports true when w is empty or of 8
// to 16 bytes (the common key and value), with two 8-byte moves (the
// second overlapping the first) instead of a call to memmove; for any
// other length it copies nothing and reports false (keepLong's case).
func keepShort(dst *[slowlogMaxString]byte, w []byte) bool {
	n := len(w)
	if n < 8 || n > 16 {
		return n == 0
	}
	*(*[8]byte)(dst[:8]) = [8]byte(w)
	*(*[8]byte)(dst[n-8 : n]) = [8]byte(w[n-8:])
	return true
}

// keepLong copies the first bytes of key and value (at most
// slowlogMaxString of each) into l: what keepShort does not take.
func (l *batchedRequest) keepLong(key, value []byte) {
	copy(l.key[:], key)
	copy(l.val[:], value)
}

// closeBatch times the batch of untimed hot requests with now, a clock
// reading just taken, before it becomes e.mark: the span since e.mark is
// shared among them (see the top of this file). Callers test e.batch.n
// first, so an empty batch costs one branch.
func (e *Engine) closeBatch(now int64) {
	b := &e.batch
	d := now - e.mark
	if b.n == 1 { // a ping-pong's batch: its one request's op is the last's
		if h := e.lat.hist[b.last.op]; h != nil && e.lat.tracking && e.lat.threshold <= 0 {
			h.recordN(d, 1) // batchTimed's common case, inlined
		} else {
			e.batchTimed(b.last.op, d, 1)
		}
	} else {
		per := d / int64(b.n)
		for i, n := range b.ops {
			if n != 0 {
				e.batchTimed(batchedOps[i], per, uint64(n))
			}
		}
	}
	if e.slow.slowerThan >= 0 && d/1000 >= e.slow.slowerThan {
		e.slowlogBatch(d)
	}
	b.n, b.ops = 0, [3]uint32{}
}

// batchTimed counts n calls of op that took nanos each in the latency
// tracking histograms and the latency monitor, as commandTimedRest would
// count them one by one (the slow log is closeBatch's).
func (e *Engine) batchTimed(op command.Op, nanos int64, n uint64) {
	if e.lat.tracking {
		h := e.lat.hist[op]
		if h == nil {
			h = new(cmdHist) // once per command, on its first call
			e.lat.hist[op] = h
		}
		h.recordN(nanos, n)
	}
	if e.lat.threshold > 0 && nanos/1e6 >= e.lat.threshold {
		e.latencyAdd(EventFastCommand, nanos/1e6)
	}
}

// settleBatch closes the batch now, with a clock reading of its own: a
// command that reads or resets the slow log, the latency histograms or
// the latency monitor calls it first, so it sees (or clears) the hot
// requests served before it in its cycle, as it would have had they been
// timed one by one.
func (e *Engine) settleBatch() {
	if e.batch.n != 0 {
		now := e.mono()
		e.closeBatch(now)
		e.mark = now
	}
}

// slowlogBatch logs the batch's last request as taking nanos, the
// batch's span, with its words as slowlogArgv keeps them.
func (e *Engine) slowlogBatch(nanos int64) {
	l := &e.batch.last
	argv := make([][]byte, 1, 3)
	if w, err := e.monEnc.Words(&command.Request{Op: l.op}); err == nil { // the name as an SBE request's entry has it
		argv[0] = append([]byte(nil), w[0]...)
	} else {
		argv[0] = []byte(command.Name(l.op))
	}
	if l.op != command.OpPing {
		argv = append(argv, batchedWord(l.key[:], l.keyN))
	}
	if l.op == command.OpSet {
		argv = append(argv, batchedWord(l.val[:], l.valN))
	}
	e.slowlogAdd(l.s, argv, nanos)
}

// batchedWord copies a word of n bytes whose first ones (at most
// slowlogMaxString) are in b as slowlogArgv would the original: the
// bytes, and for a longer one how many more there were.
func batchedWord(b []byte, n int) []byte {
	if n <= slowlogMaxString {
		return append([]byte(nil), b[:n]...)
	}
	w := append([]byte(nil), b...)
	return append(w, "... ("+strconv.Itoa(n-slowlogMaxString)+" more bytes)"...)
}

// sampleStart begins the sampled request (the one in sampleEvery timed
// alone for commandstats and the latency histograms) on an in-place hot
// path, as executeSlow begins it on the general path: a clock reading
// that closes the batch before it and that it is timed from. The hot path
// then adds the request to the (now empty) batch before the store's call,
// as an untimed one, so that sampleEnd finds its words there.
func (e *Engine) sampleStart() {
	now := e.mono()
	if e.batch.n != 0 {
		e.closeBatch(now)
	}
	e.mark = now
}

// sampleEnd ends the sampled request sampleStart began, the batch's one
// request: a clock reading, the request's own time counted as
// executeSlow and commandTimed count a sampled one (commandstats, the
// latency histogram, the slow log with the words the batch kept, the
// latency monitor), and the countdown to the next.
func (e *Engine) sampleEnd() {
	end := e.mono()
	b := &e.batch
	op, d := b.last.op, end-e.mark
	e.cmd[op].observe(uint64(d))
	if e.slow.slowerThan >= 0 && d/1000 >= e.slow.slowerThan {
		e.slowlogBatch(d)
	}
	e.timedStats(op, d)
	b.n, b.ops = 0, [3]uint32{}
	e.mark = end
	e.sampleLeft = sampleEvery
}
