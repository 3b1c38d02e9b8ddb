package engine

import (
	"encoding/binary"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/store"
)

// Transactions: MULTI queues a session's commands (their wire bytes,
// appended to one buffer: no allocation per command once it has grown)
// until EXEC runs them back to back. The store has one goroutine, so EXEC
// is atomic without locks; WATCH makes it conditional.
//
// A command Redis would refuse on arrival (unknown, wrong number of
// arguments, not authenticated) is refused inside MULTI too and makes EXEC
// answer EXECABORT; one whose arguments are wrong is queued, and EXEC
// returns its error in the array, as Redis does.

// txState is a session's transaction and watched keys.
type txState struct {
	on    bool   // between MULTI and EXEC/DISCARD
	abort bool   // a command was refused while queueing
	n     int    // commands queued
	buf   []byte // each: uint32 length, then the command's RESP or SBE bytes
	// pubsub: a (P|S)(UN)SUBSCRIBE is queued, so EXEC may write pushes
	// among the replies (see exec).
	pubsub bool

	watched []watchedKey
	keys    []byte // the watched keys' bytes
	dirty   bool   // a watched key changed (EXEC answers nil)
	slot    int    // index in Engine.watchers, -1 when absent
}

type watchedKey struct {
	db         int
	start, end int  // in txState.keys
	existed    bool // the key existed when WATCH was called
}

// txControl are the commands that run at once inside MULTI.
func txControl(op command.Op) bool {
	switch op {
	case command.OpExec, command.OpDiscard, command.OpMulti, command.OpWatch, command.OpQuit, command.OpReset:
		return true
	}
	return false
}

// queued decides a request received inside MULTI: it reports false for a
// control command, which the caller executes; otherwise it refuses the
// request (when rejected, unknown to the engine or not authenticated) or
// appends its wire bytes (raw, or the RESP form of args) to the queue,
// and leaves the answer in e.res.
func (e *Engine) queued(s *Session, r *command.Request, rejected bool, args [][]byte, raw []byte) bool {
	if !rejected && txControl(r.Op) {
		return false
	}
	spec := command.Lookup(r.Op)
	switch {
	case rejected:
	case spec == nil || handlers[r.Op] == nil:
		e.unknownOp(r)
	case !s.user.AllowsAll() && !e.permit(s, r): // NOAUTH or NOPERM: refused now, as Redis does
	case e.follow.on && e.replGate(s, r): // READONLY, LOADING, MASTERDOWN: refused now, as Redis does
	case e.loading != nil && e.loadGate(s, r): // LOADING at start
	default:
		t := &s.tx
		start := len(t.buf)
		t.buf = append(t.buf, 0, 0, 0, 0)
		if args != nil {
			t.buf = resp.AppendCommand(t.buf, args...)
		} else {
			t.buf = append(t.buf, raw...)
		}
		binary.LittleEndian.PutUint32(t.buf[start:], uint32(len(t.buf)-start-4))
		t.n++
		t.pubsub = t.pubsub || pubsubOp(r.Op)
		e.simple(txtQueued)
		return true
	}
	s.tx.abort = true // the refusal's error is already in e.res
	return true
}

var txtQueued = []byte("QUEUED")

// execAbort answers an EXEC refused inside MULTI (a wrong number of
// arguments) as Redis does: the transaction is discarded and the error
// says why.
func (e *Engine) execAbort(s *Session, why []byte) {
	if len(why) > 4 && string(why[:4]) == "ERR " {
		why = why[4:]
	}
	e.fail(command.ExecAbort, "EXECABORT Transaction discarded because of: ", why, "")
	e.endTx(s)
}

func (e *Engine) multi(s *Session, _ *command.Request) {
	if s.tx.on {
		e.errText(command.Err, "ERR MULTI calls can not be nested")
		return
	}
	s.tx.on, s.tx.abort, s.tx.n, s.tx.buf = true, false, 0, s.tx.buf[:0]
	s.recold()
	e.ok()
}

func (e *Engine) discard(s *Session, _ *command.Request) {
	if !s.tx.on {
		e.errText(command.Err, "ERR DISCARD without MULTI")
		return
	}
	e.endTx(s)
	e.ok()
}

// endTx forgets the queue and the watched keys.
func (e *Engine) endTx(s *Session) {
	s.tx.on, s.tx.abort, s.tx.n, s.tx.pubsub = false, false, 0, false
	s.recold()
	if cap(s.tx.buf) > maxKeptScratch {
		s.tx.buf = nil
	}
	s.tx.buf = s.tx.buf[:0]
	e.unwatchAll(s)
}

// exec answers EXEC: EXECABORT after a refused command, nil when a watched
// key changed (or, existing at WATCH, is gone: expired or evicted), else
// the array of the queued commands' replies.
func (e *Engine) exec(s *Session, _ *command.Request) {
	t := &s.tx
	if !t.on {
		e.errText(command.Err, "ERR EXEC without MULTI")
		return
	}
	for _, w := range t.watched {
		if db := e.dbs[w.db]; db != nil && db.Exists(t.keys[w.start:w.end]) != w.existed {
			t.dirty = true
		}
	}
	switch {
	case t.abort:
		e.errText(command.ExecAbort, "EXECABORT Transaction discarded because of previous errors.")
		e.endTx(s)
		return
	case t.dirty:
		e.endTx(s)
		e.res.Kind = command.NilArray
		return
	}
	e.unwatchAll(s)
	t.on = false // the queued commands run now, not into the queue
	s.recold()
	e.inExec = true
	defer func() { e.inExec = false }()
	items, vals := e.txItems[:0], e.txVals[:0]
	// A RESP client's transaction may subscribe, or receive its own
	// messages: Redis writes those bytes where the command ran, inside
	// EXEC's array (whose length counts commands, not replies). Only a
	// client already subscribed, or whose transaction subscribes, can get
	// a push; for those each reply is also kept encoded, in case one comes.
	raw, pushed := s.Protocol == proto.RESP && (s.pubsub || t.pubsub), false
	e.txRaw = e.txRaw[:0]
	for q := t.buf; len(q) >= 4; {
		n := binary.LittleEndian.Uint32(q)
		start := len(e.ps.out)
		e.runQueued(s, q[4:4+n])
		if raw {
			msgs, post := e.ps.out[start:], []byte(nil)
			if e.ps.after > 0 { // notifications Redis sends after the reply (notify.go)
				msgs, post = e.ps.out[start:e.ps.after-1], e.ps.out[e.ps.after-1:]
			}
			pushed = pushed || len(e.ps.out) > start
			e.txRaw = append(e.txRaw, msgs...)
			if !e.ps.only {
				e.txRaw = e.encodeRESP(e.txRaw, s.resp3)
			}
			e.txRaw = append(e.txRaw, post...)
			e.ps.out, e.ps.only, e.ps.after = e.ps.out[:start], false, 0
		}
		items, vals = appendReply(items, vals, &e.res)
		q = q[4+n:]
	}
	fixValues(items, vals)
	e.txItems, e.txVals = items, vals
	e.res.Reset()
	e.res.Kind, e.res.Integer, e.res.Items = command.Array, int64(t.n), items
	if pushed {
		e.ps.out = resp.AppendArray(e.ps.out, t.n)
		e.ps.out = append(e.ps.out, e.txRaw...)
		e.ps.only = true
	}
	if cap(e.txRaw) > maxKeptScratch {
		e.txRaw = nil
	}
	t.n, t.buf, t.pubsub = 0, t.buf[:0], false
	if cap(t.buf) > maxKeptScratch {
		t.buf = nil
	}
}

// runQueued decodes and executes one queued command, leaving its answer
// in e.res (a decoding error is its answer, as Redis would give it).
func (e *Engine) runQueued(s *Session, b []byte) {
	e.startRequest()
	if s.Protocol == proto.SBE {
		req := &e.txReq
		req.Args = req.Args[:0]
		if err := e.codec.DecodeRequest(b, req); err != nil {
			e.errText(command.Protocol, "ERR Protocol error: "+err.Error())
			return
		}
		e.argv = nil
		e.execute(s, req)
		e.count(s, req.Op)
		return
	}
	args, _, err := resp.ReadCommand(b, e.txArgs[:0], &e.o.Limits)
	e.txArgs = args[:0]
	if err != nil {
		e.errText(command.Protocol, "ERR "+err.Error())
		return
	}
	if e.dec.Decode(&e.txReq, args) {
		e.argv = args
		e.execute(s, &e.txReq)
		if len(e.monitors) > 0 {
			e.feedMonitors(s, &e.txReq, args)
		}
	} else {
		e.setError(e.dec.Status, e.dec.Text)
	}
	e.count(s, e.txReq.Op)
}

// appendReply adds rep as one element of an aggregate: its root as an
// item, then its items. Values are copied into vals, which may move as it
// grows, so each item's Value is left empty with the copy's length as its
// capacity, and fixValues points them into vals at the end.
func appendReply(items []command.Item, vals []byte, rep *command.Reply) ([]command.Item, []byte) {
	add := func(k command.Kind, n int64, v []byte) {
		vals = append(vals, v...)
		items = append(items, command.Item{Kind: k, Integer: n, Value: v[:0:len(v)]})
	}
	add(rep.Kind, rep.Integer, rep.Value)
	for i := range rep.Items {
		it := &rep.Items[i]
		add(it.Kind, it.Integer, it.Value)
	}
	return items, vals
}

// fixValues points each item's value at its copy in vals: appendReply
// left each Value empty with the copy's length as its capacity.
func fixValues(items []command.Item, vals []byte) {
	off := 0
	for i := range items {
		n := cap(items[i].Value)
		items[i].Value = vals[off : off+n : off+n]
		off += n
	}
}

// watch answers WATCH key [key ...].
func (e *Engine) watch(s *Session, r *command.Request) {
	if s.tx.on {
		e.errText(command.Err, "ERR WATCH inside MULTI is not allowed")
		return
	}
	e.watchKey(s, r.Key)
	for _, k := range r.Args {
		e.watchKey(s, k)
	}
	e.ok()
}

func (e *Engine) watchKey(s *Session, key []byte) {
	t := &s.tx
	for _, w := range t.watched {
		if w.db == s.db && string(t.keys[w.start:w.end]) == string(key) {
			return
		}
	}
	start := len(t.keys)
	t.keys = append(t.keys, key...)
	t.watched = append(t.watched, watchedKey{db: s.db, start: start, end: len(t.keys), existed: e.st.Exists(key)})
	if len(t.watched) == 1 && !t.dirty {
		t.slot = len(e.watchers)
		e.watchers = append(e.watchers, s)
		e.rehot()
	}
}

func (e *Engine) unwatch(s *Session, _ *command.Request) {
	e.unwatchAll(s)
	e.ok()
}

// unwatchAll forgets s's watched keys (and that one changed).
func (e *Engine) unwatchAll(s *Session) {
	t := &s.tx
	t.dirty = false
	t.watched, t.keys = t.watched[:0], t.keys[:0]
	e.dropWatcher(s)
}

// dropWatcher takes s off the list of sessions with watched keys.
func (e *Engine) dropWatcher(s *Session) {
	i := s.tx.slot
	if i < 0 || i >= len(e.watchers) || e.watchers[i] != s {
		return
	}
	last := len(e.watchers) - 1
	e.watchers[i] = e.watchers[last]
	e.watchers[i].tx.slot = i
	e.watchers[last] = nil
	e.watchers = e.watchers[:last]
	s.tx.slot = -1
	e.rehot()
}

// touchKey marks every session watching key in database db as dirty. The
// watcher stops being checked (its next EXEC fails whatever else happens).
func (e *Engine) touchKey(db int, key []byte) {
	for i := 0; i < len(e.watchers); i++ {
		w := e.watchers[i]
		t := &w.tx
		for _, k := range t.watched {
			if k.db == db && string(t.keys[k.start:k.end]) == string(key) {
				t.dirty = true
				e.dropWatcher(w)
				i--
				break
			}
		}
	}
}

// touchExisting marks the watchers of every watched key that exists in st
// (database db) as dirty: FLUSHDB, FLUSHALL and SWAPDB change them all.
func (e *Engine) touchExisting(db int, st *store.Store) {
	if st == nil {
		return
	}
	for i := 0; i < len(e.watchers); i++ {
		w := e.watchers[i]
		t := &w.tx
		for _, k := range t.watched {
			if k.db == db && st.Exists(t.keys[k.start:k.end]) {
				t.dirty = true
				e.dropWatcher(w)
				i--
				break
			}
		}
	}
}

// touchKeys marks the watchers of r's keys in the session's database as
// dirty, after a write that changed the store.
func (e *Engine) touchKeys(db int, r *command.Request) {
	if r.Op == command.OpSort { // SORT writes only its STORE destination
		if r.Amount > 0 {
			e.touchKey(db, r.Args[r.Amount-1])
		}
		return
	}
	r.EachKey(func(k []byte) { e.touchKey(db, k) })
}

// pubsubOp reports whether op changes a client's subscriptions.
func pubsubOp(op command.Op) bool {
	switch op {
	case command.OpSubscribe, command.OpPSubscribe, command.OpSSubscribe,
		command.OpUnsubscribe, command.OpPUnsubscribe, command.OpSUnsubscribe:
		return true
	}
	return false
}
