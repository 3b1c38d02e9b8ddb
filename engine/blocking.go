package engine

import (
	"strconv"
	"time"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/store"
)

// The blocking pops: BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN,
// BZPOPMAX and BZMPOP. One that finds data answers at once, as its
// non-blocking form would (and is propagated as that form). One that finds
// none parks its client as WAIT does (cmd_repl.go): the reply is muted, the
// session is marked waiting so its further requests wait their turn, and
// the answer goes out later: through Conn.Push on a stream transport
// (sockets, RESP or framed SBE), through Conn.Answer on a message
// transport that can answer later (the ring and Aeron, see
// Session.AttachLater), whose Conn.Park is told the request waits. After
// every request (and so after every EXEC, never inside one) serveBlocked
// serves the parked clients whose keys now hold data, first blocked first
// served whatever their transport, each pop propagated as its non-blocking
// form; Tick answers the timed-out ones with the null array. Inside
// MULTI/EXEC, and on transports that cannot answer later, they never
// block: an empty answer comes at once. An SBE answer carries the blocked
// request's correlation id. As in Redis 7.0, a client is served only from a key
// of the type it waits for: a key deleted or turned into another type
// leaves it blocked.

// blockState is what a blocked client waits for: its command, database,
// keys (copies, in the command's order), the non-blocking form's further
// arguments (BLMOVE's destination and ends, B*MPOP's end and COUNT) and
// its deadline on the engine's clock (unix ms; 0 for ever); for SBE, what
// the later answer must echo: the request's correlation id and schema
// version.
type blockState struct {
	op       command.Op
	db       int
	keys     [][]byte
	rest     [][]byte
	deadline int64
	corr     uint64
	version  uint16
}

// Redis's texts for a blocking command's timeout and CLIENT UNBLOCK ERROR.
const (
	txtTimeoutNotFloat = "ERR timeout is not a float or out of range"
	txtTimeoutNegative = "ERR timeout is negative"
	txtUnblocked       = "UNBLOCKED client unblocked via CLIENT UNBLOCK"
)

// blockTimeout reads a timeout in seconds as Redis 7.0's
// getTimeoutFromObjectOrReply does (a long double, its milliseconds
// truncated; 0: for ever); false when it has answered the error.
func (e *Engine) blockTimeout(b []byte) (int64, bool) {
	f, ok, erange := strtod(b)
	if !ok || erange || f != f || len(b) > 5*1024 || (len(b) > 0 && isSpace(b[0])) {
		e.errText(command.Err, txtTimeoutNotFloat)
		return 0, false
	}
	ms := int64(f * 1000)
	if ms < 0 {
		e.errText(command.Err, txtTimeoutNegative)
		return 0, false
	}
	return ms, true
}

// blpop answers BLPOP and BRPOP key... timeout.
func (e *Engine) blpop(s *Session, r *command.Request) {
	last := len(r.Args) - 1
	timeout, ok := e.blockTimeout(r.Args[last])
	if !ok {
		return
	}
	front := r.Op == command.OpBLPop
	for i := -1; i < last; i++ {
		k := r.Key
		if i >= 0 {
			k = r.Args[i]
		}
		n, err := e.st.LLen(k)
		if err != nil {
			e.collError(err)
			return
		}
		if n > 0 {
			e.popKeyed(k, front)
			return
		}
	}
	e.block(s, r, timeout, nil)
}

// popKeyed answers [key, element] with the element popped from key's
// front (or back).
func (e *Engine) popKeyed(k []byte, front bool) {
	e.begin(command.Array)
	e.addCopy(command.Bulk, k)
	start := len(e.scratch)
	e.scratch, _, _ = e.st.Pop(e.scratch, k, front)
	e.fixes = append(e.fixes, fixup{item: len(e.res.Items), start: start, end: len(e.scratch)})
	e.add(command.Bulk, 0, nil)
	e.end()
}

// blmove answers BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout
// and BRPOPLPUSH source destination timeout.
func (e *Engine) blmove(s *Session, r *command.Request) {
	last := len(r.Args) - 1
	if r.Op == command.OpBLMove {
		if _, ok := leftRight(r.Args[1]); !ok {
			e.errText(command.Syntax, txtSyntax)
			return
		}
		if _, ok := leftRight(r.Args[2]); !ok {
			e.errText(command.Syntax, txtSyntax)
			return
		}
	}
	timeout, ok := e.blockTimeout(r.Args[last])
	if !ok {
		return
	}
	n, err := e.st.LLen(r.Key)
	if err != nil {
		e.collError(err)
		return
	}
	if n > 0 {
		e.lmove(s, e.moveRequest(r.Key, r.Op, r.Args[:last]))
		return
	}
	e.block(s, r, timeout, r.Args[:last])
}

// moveRequest is the LMOVE a BLMOVE or BRPOPLPUSH of src performs (rest:
// destination, and BLMOVE's two ends).
func (e *Engine) moveRequest(src []byte, op command.Op, rest [][]byte) *command.Request {
	nr := &e.blockReq
	*nr = command.Request{Op: command.OpLMove, Key: src, Args: rest}
	if op == command.OpBRPopLPush {
		nr.Op = command.OpRPopLPush
	}
	return nr
}

// bmpop answers BLMPOP and BZMPOP timeout numkeys key... where [COUNT n]:
// LMPOP's or ZMPOP's answer when a key has data (their checks first, as
// Redis parses the options before the timeout), else it blocks.
func (e *Engine) bmpop(s *Session, r *command.Request) {
	nr := &e.blockReq
	*nr = *r
	nr.Op, nr.Value = command.OpLMPop, nil
	if r.Op == command.OpBZMPop {
		nr.Op = command.OpZMPop
	}
	// A dry run of the options: LMPOP/ZMPOP with no key answers their
	// errors or the null array without touching the store.
	nk := int(r.Amount)
	if !e.mpopOptionsOK(nr.Op, r.Args[nk-1:]) {
		return
	}
	timeout, ok := e.blockTimeout(r.Value)
	if !ok {
		return
	}
	if nr.Op == command.OpLMPop {
		e.lmpop(s, nr)
	} else {
		e.zmpop(s, nr)
	}
	if e.res.Kind == command.NilArray {
		e.block(s, r, timeout, r.Args[nk-1:])
	}
}

// mpopOptionsOK checks LMPOP's or ZMPOP's where and COUNT (opts) as their
// handlers do, answering the error when they are wrong.
func (e *Engine) mpopOptionsOK(op command.Op, opts [][]byte) bool {
	where := opts[0]
	switch {
	case op == command.OpLMPop && (command.EqualFold(where, "left") || command.EqualFold(where, "right")):
	case op == command.OpZMPop && (command.EqualFold(where, "min") || command.EqualFold(where, "max")):
	default:
		e.errText(command.Syntax, txtSyntax)
		return false
	}
	_, ok := e.mpopCount(opts[1:])
	return ok
}

// mpopCount reads LMPOP's and ZMPOP's options after LEFT|RIGHT or MIN|MAX
// (one COUNT n, n > 0; default 1), answering Redis's error when they are
// wrong.
func (e *Engine) mpopCount(opts [][]byte) (count int64, ok bool) {
	count = -1
	for j := 0; j < len(opts); j++ {
		if count == -1 && command.EqualFold(opts[j], "count") && j+1 < len(opts) {
			j++
			n, ok := resp.ParseInt(opts[j])
			if !ok || n < 1 {
				e.errText(command.Err, "ERR count should be greater than 0")
				return 0, false
			}
			count = n
			continue
		}
		e.errText(command.Syntax, txtSyntax)
		return 0, false
	}
	return max(count, 1), true
}

// bzpop answers BZPOPMIN and BZPOPMAX key... timeout.
func (e *Engine) bzpop(s *Session, r *command.Request) {
	last := len(r.Args) - 1
	timeout, ok := e.blockTimeout(r.Args[last])
	if !ok {
		return
	}
	for i := -1; i < last; i++ {
		k := r.Key
		if i >= 0 {
			k = r.Args[i]
		}
		exists, ok := e.zsetType(k)
		if !ok {
			return
		}
		if exists {
			e.zpopKeyed(k, r.Op == command.OpBZPopMax)
			return
		}
	}
	e.block(s, r, timeout, nil)
}

// zpopKeyed answers [key, member, score] with the member popped from
// key's low (high when top) end.
func (e *Engine) zpopKeyed(k []byte, top bool) {
	e.begin(command.Array)
	e.addCopy(command.Bulk, k)
	e.zpopInto(k, top, 1, false)
	e.end()
}

// canBlock reports whether s may block: not inside EXEC, and on a
// transport that can answer later (Push on a stream, Answer on a message
// transport).
func (e *Engine) canBlock(s *Session) bool {
	return !e.inExec && (s.conn.Push != nil || s.conn.Answer != nil)
}

// later sends b to s as the answer of its blocked request: through Answer
// on a message transport, Push on a stream.
func later(s *Session, b []byte) {
	if s.conn.Answer != nil {
		s.conn.Answer(b)
		return
	}
	s.conn.Push(b)
}

// appendSBELater appends rep as the SBE answer of s's blocked request b:
// with its correlation id, fitted to its schema version, framed on a
// stream transport.
func (e *Engine) appendSBELater(out []byte, s *Session, b *blockState, rep *command.Reply) []byte {
	rep.CorrelationID = b.corr
	if b.version < 2 {
		rep.Downgrade()
		if rep.Status > command.UnsupportedVersion {
			rep.Status = command.Err
		}
	}
	if s.conn.Answer != nil {
		return e.codec.AppendReply(out, rep)
	}
	return e.codec.AppendFramedReply(out, rep)
}

// block parks s on r's keys until timeout ms pass (0: for ever), or, when
// it may not block, answers the empty reply at once: the null array (the
// null for BLMOVE and BRPOPLPUSH).
func (e *Engine) block(s *Session, r *command.Request, timeout int64, rest [][]byte) {
	if !e.canBlock(s) {
		if r.Op == command.OpBLMove || r.Op == command.OpBRPopLPush {
			e.null()
		} else {
			e.res.Kind = command.NilArray
		}
		return
	}
	b := &blockState{op: r.Op, db: s.db}
	if timeout > 0 {
		b.deadline = e.clock.NowMillis() + timeout
	}
	if s.Protocol == proto.SBE {
		b.corr, b.version = r.CorrelationID, r.Version
	}
	r.EachKey(func(k []byte) { b.keys = append(b.keys, append([]byte(nil), k...)) })
	for _, a := range rest {
		b.rest = append(b.rest, append([]byte(nil), a...))
	}
	s.block = b
	s.waiting, s.failedAuth = true, true // failedAuth: end this batch of requests here
	s.hold = time.Millisecond            // the transport offers the rest again once served
	e.blocked = append(e.blocked, s)
	e.muteReply(s)
	if s.conn.Park != nil {
		s.conn.Park() // a message transport holds the reply slot
	}
}

// serveBlocked serves the blocked clients whose keys hold data since the
// last look, in the order they blocked, and again while a pass serves one
// (a BLMOVE's push may serve another). Called after each request, once
// its reply is encoded.
func (e *Engine) serveBlocked() {
	if e.mods() == e.blockMods {
		return
	}
	for served := true; served; {
		served = false
		for i := 0; i < len(e.blocked); i++ {
			if e.serveOne(i) {
				i--
				served = true
			}
		}
	}
	e.blockMods = e.mods()
}

// serveOne pops for the blocked client at e.blocked[i] from the first of
// its keys that holds the type it waits for, unblocks it, sends the answer
// and propagates the non-blocking form; false when none does.
func (e *Engine) serveOne(i int) bool {
	s := e.blocked[i]
	b := s.block
	st := e.dbs[b.db]
	if st == nil {
		return false
	}
	want := store.TypeList
	switch b.op {
	case command.OpBZPopMin, command.OpBZPopMax, command.OpBZMPop:
		want = store.TypeZSet
	}
	for _, k := range b.keys {
		if st.TypeOf(k) != want {
			continue
		}
		e.st = st
		e.startRequest()
		nr := &e.blockReq
		switch b.op {
		case command.OpBLPop, command.OpBRPop:
			e.popKeyed(k, b.op == command.OpBLPop)
			*nr = command.Request{Op: command.OpLPop, Key: k}
			if e.kn.on {
				e.knServed(b.db, b.op, k)
			}
		case command.OpBZPopMin, command.OpBZPopMax:
			e.zpopKeyed(k, b.op == command.OpBZPopMax)
			*nr = command.Request{Op: command.OpZPopMin, Key: k}
			if e.kn.on {
				e.knServed(b.db, b.op, k)
			}
		case command.OpBLMove, command.OpBRPopLPush:
			e.servedWith(s, b.db, e.moveRequest(k, b.op, b.rest), (*Engine).lmove)
		case command.OpBLMPop:
			*nr = command.Request{Op: command.OpLMPop, Key: k, Args: b.rest, Amount: 1}
			e.servedWith(s, b.db, nr, (*Engine).lmpop)
		case command.OpBZMPop:
			*nr = command.Request{Op: command.OpZMPop, Key: k, Args: b.rest, Amount: 1}
			e.servedWith(s, b.db, nr, (*Engine).zmpop)
		}
		var out []byte
		if s.Protocol == proto.SBE {
			if len(e.res.Items) > maxSBEItems {
				e.errText(command.Err, "ERR reply too large for SBE: more than 65534 elements")
			}
			out = e.appendSBELater(e.blockOut[:0], s, b, &e.res)
		} else {
			out = e.encodeRESP(e.blockOut[:0], s.resp3)
		}
		// Unblocked before the answer goes: a transport that fails to send
		// it may close the session (Close), which must not find it listed.
		e.unblockAt(i)
		later(s, out)
		e.blockOut = out[:0]
		if e.res.Kind != command.Error {
			if len(e.watchers) > 0 {
				e.touchKeys(b.db, nr)
			}
			if e.repl.feed && !e.repl.upstream {
				e.appendOp(b.db, e.popWords(b.op, k, b.rest, &e.res))
				e.flushUnit()
			}
		}
		return true
	}
	return false
}

// servedWith runs h for blocked s's pop r, with its keyspace
// notifications when they are on.
func (e *Engine) servedWith(s *Session, db int, r *command.Request, h handler) {
	if !e.kn.on {
		h(e, s, r)
		return
	}
	e.knBefore(nil, db, r)
	h(e, s, r)
	e.knAfter(db, r)
	e.cutSlow()
}

// unblockAt forgets the blocked client at e.blocked[i], keeping the
// others' order.
func (e *Engine) unblockAt(i int) {
	s := e.blocked[i]
	copy(e.blocked[i:], e.blocked[i+1:])
	e.blocked[len(e.blocked)-1] = nil
	e.blocked = e.blocked[:len(e.blocked)-1]
	s.block, s.waiting = nil, false
}

// dropBlocked forgets a blocked client whose connection closes.
func (e *Engine) dropBlocked(s *Session) {
	for i, w := range e.blocked {
		if w == s {
			e.unblockAt(i)
			return
		}
	}
}

// answerEmpty answers s's blocking command b with the null array (a
// timeout, CLIENT UNBLOCK … TIMEOUT), or with CLIENT UNBLOCK's error.
func (e *Engine) answerEmpty(s *Session, b *blockState, withError bool) {
	switch {
	case s.Protocol == proto.SBE:
		rep := command.Reply{Kind: command.NilArray}
		if withError {
			rep = command.Reply{Status: command.Err, Kind: command.Error, Value: []byte(txtUnblocked)}
		}
		out := e.appendSBELater(e.blockOut[:0], s, b, &rep)
		later(s, out)
		e.blockOut = out[:0]
	case withError:
		later(s, []byte("-"+txtUnblocked+"\r\n"))
	case s.resp3:
		later(s, []byte("_\r\n"))
	default:
		later(s, []byte("*-1\r\n"))
	}
}

// tickBlocked answers the blocked clients whose timeout has passed.
//
// It returns how many it answered: work for the loop, which then polls the
// transports again at once rather than parking, so a request the client
// pipelined behind the blocked one is served without waiting out a park.
func (e *Engine) tickBlocked() int {
	now := e.clock.NowMillis()
	n := 0
	for i := 0; i < len(e.blocked); i++ {
		s := e.blocked[i]
		if b := s.block; b.deadline != 0 && now >= b.deadline {
			e.unblockAt(i)
			e.answerEmpty(s, b, false)
			i--
			n++
		}
	}
	return n
}

// unblockClient is CLIENT UNBLOCK's work on target: a client blocked on
// keys, or in WAIT, is answered as by a timeout (or with the UNBLOCKED
// error) and released; false when it is not blocked.
func (e *Engine) unblockClient(target *Session, withError bool) bool {
	if !target.waiting || e.forwarding(target) { // a forwarded write's answer is the primary's (forward.go)
		return false
	}
	if b := target.block; b != nil {
		e.dropBlocked(target)
		e.answerEmpty(target, b, withError)
		return true
	}
	if withError {
		target.conn.Push([]byte("-" + txtUnblocked + "\r\n"))
		e.dropWaiter(target)
		return true
	}
	target.waitUntil = 1 // long past: wakeWaiters answers it now
	e.wakeWaiters()
	return true
}

// blockedClients counts the clients blocked on keys or in WAIT (INFO's
// blocked_clients).
func (e *Engine) blockedClients() int64 { return int64(len(e.blocked) + len(e.repl.waiters)) }

// popWords returns the non-blocking command a blocking pop of op served
// from key is propagated as (Redis's rewrite): LPOP/RPOP key, ZPOPMIN/
// ZPOPMAX key, LMOVE or RPOPLPUSH, and for B*MPOP the POP form with the
// count popped; rest is as in blockState, res the answer given.
func (e *Engine) popWords(op command.Op, key []byte, rest [][]byte, res *command.Reply) [][]byte {
	w := e.repl.words[:0]
	switch op {
	case command.OpBLPop:
		w = append(w, wLPop, key)
	case command.OpBRPop:
		w = append(w, wRPop, key)
	case command.OpBZPopMin:
		w = append(w, wZPopMin, key)
	case command.OpBZPopMax:
		w = append(w, wZPopMax, key)
	case command.OpBLMove:
		w = append(w, wLMove, key, rest[0], rest[1], rest[2])
	case command.OpBRPopLPush:
		w = append(w, wRPopLPush, key, rest[0])
	case command.OpBLMPop, command.OpBZMPop:
		name := wRPop
		switch {
		case op == command.OpBLMPop && command.EqualFold(rest[0], "left"):
			name = wLPop
		case op == command.OpBZMPop && command.EqualFold(rest[0], "min"):
			name = wZPopMin
		case op == command.OpBZMPop:
			name = wZPopMax
		}
		var n int64
		if len(res.Items) > 1 {
			n = res.Items[1].Integer
		}
		e.blockNum = strconv.AppendInt(e.blockNum[:0], n, 10)
		w = append(w, name, key, e.blockNum)
	}
	e.repl.words = w
	return w
}
