package command

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"math"
	"path"
	"strconv"
	"strings"

	"github.com/goblin-kv/goblin/command/parse"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/proto/sbe"
	"github.com/goblin-kv/goblin/store"
)

// resetResult clears e.res, the reply before encoding. e.res is an
// sbe.Reply, the schema's protocol-neutral answer: the same value feeds the
// RESP and the SBE encoder, which is what keeps the protocols from
// drifting.
func (e *Engine) resetResult() {
	r := &e.res
	r.Kind, r.Status, r.Integer, r.Value = sbe.KindSimple, sbe.StatusOK, 0, nil
	r.Items = r.Items[:0]
}

func (e *Engine) setError(st sbe.Status, text []byte) {
	r := &e.res
	r.Kind, r.Status, r.Value = sbe.KindError, st, text
	r.Items = r.Items[:0]
}

// Reply texts shared by every request, so replies need no allocation.
var (
	txtOK     = []byte("OK")
	txtPONG   = []byte("PONG")
	txtString = []byte("string")
	txtNone   = []byte("none")
)

func (e *Engine) ok()             { e.res.Kind, e.res.Value = sbe.KindSimple, txtOK }
func (e *Engine) simple(v []byte) { e.res.Kind, e.res.Value = sbe.KindSimple, v }
func (e *Engine) bulk(v []byte)   { e.res.Kind, e.res.Value = sbe.KindBulk, v }
func (e *Engine) null()           { e.res.Kind = sbe.KindNil }
func (e *Engine) integer(n int64) { e.res.Kind, e.res.Integer = sbe.KindInteger, n }
func (e *Engine) errText(st sbe.Status, text string) {
	e.fail(st, text, nil, "")
}

// serveSBE executes the SBE request decoded into e.req and appends its
// reply, SOFH-framed or bare.
func (e *Engine) serveSBE(s *Session, out []byte, framed bool) []byte {
	r := &e.req
	e.resetResult()
	if r.Op == OpNone || parse.RESPOnly(r.Op) || OpName(r.Op) == "" {
		e.errBuf = append(e.errBuf[:0], "ERR unknown command op "...)
		e.errBuf = strconv.AppendUint(e.errBuf, uint64(r.Op), 10)
		e.setError(sbe.StatusUnknownCommand, e.errBuf)
		r.Op = OpNone
	} else {
		e.execute(s, r)
	}
	e.count(s, r.Op)
	e.res.CorrelationID = r.CorrelationID
	// A Ping is answered with a Pong; the codec falls back to a Reply when
	// the answer is not PONG (a refusal before AUTH, say).
	e.res.Compact = r.Compact
	if framed {
		return e.codec.AppendFramedReply(out, &e.res)
	}
	return e.codec.AppendReply(out, &e.res)
}

func (e *Engine) count(s *Session, op Op) {
	s.Stats.Commands[op]++
	e.total++
	if e.res.Kind == sbe.KindError {
		s.Stats.Errors++
	}
	if cap(e.scratch) > maxKeptScratch {
		e.scratch = make([]byte, 0, 4096)
	}
}

// execute runs r against the store and leaves the reply in e.res. This is
// the only place commands have meaning.
func (e *Engine) execute(s *Session, r *Request) {
	if e.o.RequirePass != "" && !s.authed && r.Op != OpAuth && r.Op != OpHello && r.Op != OpQuit {
		e.errText(sbe.StatusNoAuth, "NOAUTH Authentication required.")
		return
	}
	switch r.Op {
	case OpPing:
		switch len(r.Args) {
		case 0:
			e.simple(txtPONG)
		case 1:
			e.bulk(r.Args[0])
		default:
			e.wrongArgs(r.Op)
		}
	case OpEcho:
		e.bulk(r.Value)
	case OpGet:
		val, found := e.st.Get(e.scratch[:0], r.Key)
		e.scratch = val[:0]
		if found {
			e.bulk(val)
		} else {
			e.null()
		}
	case OpSet:
		e.set(r)
	case OpDel, OpExists:
		n := e.keyOp(r.Op, r.Key)
		for _, k := range r.Args {
			n += e.keyOp(r.Op, k)
		}
		e.integer(n)
	case OpExpire, OpPExpire:
		e.expire(r)
	case OpTTL, OpPTTL:
		ms := e.st.PTTL(r.Key)
		if ms >= 0 && r.Op == OpTTL {
			ms = (ms + 500) / 1000
		}
		e.integer(ms)
	case OpPersist:
		e.integer(b2i(e.st.Persist(r.Key)))
	case OpIncr:
		e.incr(r.Key, 1)
	case OpDecr:
		e.incr(r.Key, -1)
	case OpIncrBy:
		e.incr(r.Key, r.Amount)
	case OpDecrBy:
		if r.Amount == math.MinInt64 {
			e.errText(sbe.StatusOverflow, "ERR decrement would overflow")
			return
		}
		e.incr(r.Key, -r.Amount)
	case OpMGet:
		e.mget(r)
	case OpMSet:
		if len(r.Args)%2 != 0 {
			e.wrongArgs(r.Op)
			return
		}
		if !e.setPair(r.Key, r.Value) {
			return
		}
		for i := 0; i < len(r.Args); i += 2 {
			if !e.setPair(r.Args[i], r.Args[i+1]) {
				return
			}
		}
		e.ok()
	case OpType:
		if e.st.Exists(r.Key) {
			e.simple(txtString)
		} else {
			e.simple(txtNone)
		}
	case OpDBSize:
		e.integer(int64(e.st.Len()))
	case OpFlushAll, OpFlushDB:
		e.st.Flush()
		e.ok()
	case OpInfo:
		e.info(r.Args)
	case OpAuth:
		if e.auth(s, r.Key, r.Value, true) {
			e.ok()
		}
	case OpSelect:
		if r.Amount != 0 {
			e.errText(sbe.StatusErr, "ERR DB index is out of range")
			return
		}
		e.ok()
	case OpQuit:
		s.quit = true
		e.ok()
	case OpConfigGet:
		e.configGet(r)
	case OpClientSetName:
		if e.setName(s, r.Value) {
			e.ok()
		}
	case OpClientGetName:
		if len(s.name) == 0 {
			e.null()
		} else {
			e.bulk(s.name)
		}
	case OpClientSetInfo:
		if !equalFold(r.Key, "lib-name") && !equalFold(r.Key, "lib-ver") {
			e.fail(sbe.StatusSyntax, "ERR Unrecognized option '", r.Key, "'")
			return
		}
		e.ok()
	case OpCommand, OpCommandDocs:
		e.res.Kind = sbe.KindArray
	case OpCommandCount:
		e.integer(int64(len(commandNames)))
	case OpHello:
		e.hello(s, r)
	default:
		e.errText(sbe.StatusUnknownCommand, "ERR unknown command")
	}
}

// commandNames are the top-level commands goblin answers (COMMAND COUNT).
var commandNames = []string{
	"ping", "echo", "get", "set", "del", "exists", "expire", "pexpire", "ttl", "pttl", "persist",
	"incr", "incrby", "decr", "decrby", "mget", "mset", "type", "dbsize", "flushall", "flushdb",
	"info", "auth", "select", "quit", "config", "client", "command", "hello",
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (e *Engine) keyOp(op Op, key []byte) int64 {
	if op == OpDel {
		return b2i(e.st.Del(key))
	}
	return b2i(e.st.Exists(key))
}

// absExpire turns SET's expiry into unix milliseconds as Redis does:
// non-positive times and overflow are invalid.
func (e *Engine) absExpire(kind sbe.Expiry, v int64) (int64, bool) {
	if v <= 0 {
		return 0, false
	}
	ms := v
	switch kind {
	case sbe.ExpiryEX, sbe.ExpiryEXAT:
		if v > math.MaxInt64/1000 {
			return 0, false
		}
		ms = v * 1000
	case sbe.ExpiryPX, sbe.ExpiryPXAT:
	default:
		return 0, false
	}
	if kind == sbe.ExpiryEX || kind == sbe.ExpiryPX {
		now := e.clock.NowMillis()
		if ms > math.MaxInt64-now {
			return 0, false
		}
		ms += now
	}
	return ms, true
}

func (e *Engine) set(r *Request) {
	const nxxx = sbe.FlagNX | sbe.FlagXX
	if r.Flags&nxxx == nxxx || (r.Flags&sbe.FlagKeepTTL != 0 && r.Expiry != sbe.ExpiryNone) {
		e.errText(sbe.StatusSyntax, "ERR syntax error")
		return
	}
	so := store.SetOptions{
		NX: r.Flags&sbe.FlagNX != 0, XX: r.Flags&sbe.FlagXX != 0,
		KeepTTL: r.Flags&sbe.FlagKeepTTL != 0, Get: r.Flags&sbe.FlagGet != 0,
	}
	if r.Expiry != sbe.ExpiryNone {
		at, ok := e.absExpire(r.Expiry, r.Expire)
		if !ok {
			e.errText(sbe.StatusInvalidExpire, "ERR invalid expire time in 'set' command")
			return
		}
		so.ExpireAt = at
	}
	old, hadOld, applied, err := e.st.Set(e.scratch[:0], r.Key, r.Value, so)
	e.scratch = old[:0]
	switch {
	case err != nil:
		e.storeError(err)
	case so.Get && hadOld:
		e.bulk(old)
	case so.Get, !applied:
		e.null()
	default:
		e.ok()
	}
}

func (e *Engine) setPair(k, v []byte) bool {
	if _, _, _, err := e.st.Set(e.scratch[:0], k, v, store.SetOptions{}); err != nil {
		e.storeError(err)
		return false
	}
	return true
}

// expireFlagsOK rejects the option combinations Redis 7 rejects.
func (e *Engine) expireFlagsOK(f sbe.Flags) bool {
	if text := parse.ExpireFlagsError(f); text != "" {
		e.errText(sbe.StatusSyntax, text)
		return false
	}
	return true
}

// expire answers EXPIRE/PEXPIRE key time [NX|XX|GT|LT] as Redis 7 does.
func (e *Engine) expire(r *Request) {
	if r.Flags&^(sbe.FlagNX|sbe.FlagXX|sbe.FlagGT|sbe.FlagLT) != 0 {
		e.errText(sbe.StatusSyntax, "ERR syntax error")
		return
	}
	if !e.expireFlagsOK(r.Flags) {
		return
	}
	when := r.Amount
	now := e.clock.NowMillis()
	if (r.Op == OpExpire && (when > math.MaxInt64/1000 || when < math.MinInt64/1000)) ||
		(r.Op == OpExpire && when*1000 > math.MaxInt64-now) || (r.Op == OpPExpire && when > math.MaxInt64-now) {
		if r.Op == OpExpire {
			e.errText(sbe.StatusInvalidExpire, "ERR invalid expire time in 'expire' command")
		} else {
			e.errText(sbe.StatusInvalidExpire, "ERR invalid expire time in 'pexpire' command")
		}
		return
	}
	if r.Op == OpExpire {
		when *= 1000
	}
	when += now
	if r.Flags != 0 {
		left := e.st.PTTL(r.Key)
		if left == -2 {
			e.integer(0)
			return
		}
		current := int64(-1) // no expiry
		if left >= 0 {
			current = now + left
		}
		if (r.Flags&sbe.FlagNX != 0 && current != -1) ||
			(r.Flags&sbe.FlagXX != 0 && current == -1) ||
			(r.Flags&sbe.FlagGT != 0 && (current == -1 || when <= current)) ||
			(r.Flags&sbe.FlagLT != 0 && current != -1 && when >= current) {
			e.integer(0)
			return
		}
	}
	e.integer(b2i(e.st.ExpireAt(r.Key, when)))
}

func (e *Engine) incr(key []byte, delta int64) {
	n, err := e.st.IncrBy(key, delta)
	if err != nil {
		e.storeError(err)
		return
	}
	e.integer(n)
}

func (e *Engine) storeError(err error) {
	switch {
	case errors.Is(err, store.ErrOOM):
		e.errText(sbe.StatusOOM, "OOM command not allowed when used memory > 'maxmemory'.")
	case errors.Is(err, store.ErrKeyTooLong):
		e.errText(sbe.StatusKeyTooLong, "ERR key too long")
	case errors.Is(err, store.ErrValueTooLong):
		e.errText(sbe.StatusValueTooLong, "ERR value too long")
	case errors.Is(err, store.ErrNotInteger):
		e.errText(sbe.StatusNotInteger, "ERR value is not an integer or out of range")
	case errors.Is(err, store.ErrOverflow):
		e.errText(sbe.StatusOverflow, "ERR increment or decrement would overflow")
	default:
		e.errText(sbe.StatusErr, "ERR "+err.Error())
	}
}

func (e *Engine) mget(r *Request) {
	buf := e.scratch[:0]
	e.offs = e.offs[:0]
	get := func(k []byte) {
		start := len(buf)
		var found bool
		buf, found = e.st.Get(buf, k)
		if found {
			e.offs = append(e.offs, start, len(buf))
		} else {
			e.offs = append(e.offs, -1, -1)
		}
	}
	get(r.Key)
	for _, k := range r.Args {
		get(k)
	}
	e.scratch = buf[:0]
	if len(e.offs)/2 > 65534 {
		e.errText(sbe.StatusErr, "ERR too many keys")
		return
	}
	items := e.res.Items[:0]
	for i := 0; i < len(e.offs); i += 2 {
		if e.offs[i] < 0 {
			items = append(items, sbe.Item{Kind: sbe.KindNil})
		} else {
			items = append(items, sbe.Item{Kind: sbe.KindBulk, Value: buf[e.offs[i]:e.offs[i+1]]})
		}
	}
	e.res.Items = items
	e.res.Kind = sbe.KindArray
}

// auth checks a password (and user, if given: an empty user means none) and marks the session
// authenticated; on failure it records the error reply.
func (e *Engine) auth(s *Session, user, pass []byte, plainAuth bool) bool {
	if e.o.RequirePass == "" {
		if len(user) == 0 && plainAuth {
			e.errText(sbe.StatusErr, "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
			return false
		}
		if len(user) > 0 && !equalFold(user, "default") {
			e.errText(sbe.StatusWrongPass, "WRONGPASS invalid username-password pair or user is disabled.")
			return false
		}
		s.authed = true
		return true
	}
	if (len(user) > 0 && !bytes.Equal(user, []byte("default"))) ||
		subtle.ConstantTimeCompare(pass, e.pass()) != 1 {
		e.errText(sbe.StatusWrongPass, "WRONGPASS invalid username-password pair or user is disabled.")
		return false
	}
	s.authed = true
	return true
}

func (e *Engine) pass() []byte {
	if e.passBytes == nil {
		e.passBytes = []byte(e.o.RequirePass)
	}
	return e.passBytes
}

func (e *Engine) setName(s *Session, name []byte) bool {
	for _, c := range name {
		if c < '!' || c > '~' {
			e.errText(sbe.StatusErr, "ERR Client names cannot contain spaces, newlines or special characters.")
			return false
		}
	}
	s.name = append(s.name[:0], name...)
	return true
}

var (
	txtServer  = []byte("server")
	txtGoblin  = []byte("goblin")
	txtVersion = []byte("version")
	txtProto   = []byte("proto")
	txtID      = []byte("id")
	txtMode    = []byte("mode")
	txtStand   = []byte("standalone")
	txtRole    = []byte("role")
	txtMaster  = []byte("master")
	txtModules = []byte("modules")
)

// hello answers HELLO [protover [AUTH user pass] [SETNAME name]]: goblin
// speaks RESP2 only, so HELLO 3 gets NOPROTO and a client falls back.
func (e *Engine) hello(s *Session, r *Request) {
	if r.Amount != 0 && r.Amount != 2 {
		e.errText(sbe.StatusErr, "NOPROTO unsupported protocol version")
		return
	}
	if r.Value != nil {
		if !e.auth(s, r.Key, r.Value, false) {
			return
		}
	}
	if e.o.RequirePass != "" && !s.authed {
		e.errText(sbe.StatusNoAuth, "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return
	}
	if len(r.Args) == 1 && !e.setName(s, r.Args[0]) {
		return
	}
	if e.version == nil {
		e.version = []byte(e.o.Version)
	}
	bulk := func(v []byte) sbe.Item { return sbe.Item{Kind: sbe.KindBulk, Value: v} }
	e.res.Items = append(e.res.Items[:0],
		bulk(txtServer), bulk(txtGoblin), bulk(txtVersion), bulk(e.version),
		bulk(txtProto), sbe.Item{Kind: sbe.KindInteger, Integer: 2},
		bulk(txtID), sbe.Item{Kind: sbe.KindInteger, Integer: int64(s.ID)},
		bulk(txtMode), bulk(txtStand), bulk(txtRole), bulk(txtMaster),
		bulk(txtModules), sbe.Item{Kind: sbe.KindArray})
	e.res.Kind = sbe.KindArray
}

// configGet answers CONFIG GET pattern [pattern ...] with name/value
// pairs for the parameters Redis clients and redis-benchmark ask about.
func (e *Engine) configGet(r *Request) {
	e.st.Stats(&e.stats)
	pairs := [][2]string{
		{"save", ""}, {"appendonly", "no"}, {"databases", "1"},
		{"maxmemory", strconv.FormatInt(e.stats.MaxMemory, 10)},
	}
	match := func(p []byte) {
		pat := strings.ToLower(string(p))
		for _, kv := range pairs {
			if ok, _ := path.Match(pat, kv[0]); ok {
				e.offs = append(e.offs, len(e.scratch))
				e.scratch = append(e.scratch, kv[0]...)
				e.offs = append(e.offs, len(e.scratch))
				e.scratch = append(e.scratch, kv[1]...)
			}
		}
		if e.o.Config != nil {
			for _, kv := range e.o.Config(nil, pat) {
				e.offs = append(e.offs, len(e.scratch))
				e.scratch = append(e.scratch, kv[0]...)
				e.offs = append(e.offs, len(e.scratch))
				e.scratch = append(e.scratch, kv[1]...)
			}
		}
	}
	e.scratch, e.offs = e.scratch[:0], e.offs[:0]
	match(r.Key)
	for _, p := range r.Args {
		match(p)
	}
	items := e.res.Items[:0]
	for i, start := range e.offs {
		end := len(e.scratch)
		if i+1 < len(e.offs) {
			end = e.offs[i+1]
		}
		items = append(items, sbe.Item{Kind: sbe.KindBulk, Value: e.scratch[start:end:end]})
	}
	e.res.Items = items
	e.res.Kind = sbe.KindArray
}

// info answers INFO [section ...] with the server and clients sections from
// Options.Info and memory, stats and keyspace from the store.
func (e *Engine) info(sections [][]byte) {
	want := func(name string) bool {
		if len(sections) == 0 {
			return true
		}
		for _, s := range sections {
			if equalFold(s, name) || equalFold(s, "all") || equalFold(s, "default") || equalFold(s, "everything") {
				return true
			}
		}
		return false
	}
	e.st.Stats(&e.stats)
	b := e.scratch[:0]
	sep := func() {
		if len(b) > 0 {
			b = append(b, "\r\n"...)
		}
	}
	line := func(k string, v int64) {
		b = append(b, k...)
		b = append(b, ':')
		b = strconv.AppendInt(b, v, 10)
		b = append(b, "\r\n"...)
	}
	if want("server") {
		sep()
		if e.o.Info != nil {
			b = e.o.Info(b, "server")
		} else {
			b = append(b, "# Server\r\nredis_version:"...)
			b = append(b, e.o.Version...)
			b = append(b, "\r\nredis_mode:standalone\r\nserver_name:goblin\r\n"...)
		}
	}
	if want("clients") && e.o.Info != nil {
		sep()
		b = e.o.Info(b, "clients")
	}
	st := &e.stats
	if want("memory") {
		sep()
		b = append(b, "# Memory\r\n"...)
		line("used_memory", st.UsedMemory)
		line("maxmemory", st.MaxMemory)
		line("goblin_arena_size", st.ArenaSize)
		line("goblin_arena_live", st.ArenaLive)
		line("goblin_arena_dead", st.ArenaDead)
		line("goblin_index_buckets", st.IndexBuckets)
	}
	if want("stats") {
		sep()
		b = append(b, "# Stats\r\n"...)
		line("total_commands_processed", int64(e.total))
		line("keyspace_hits", st.Hits)
		line("keyspace_misses", st.Misses)
		line("expired_keys", st.Expired)
		line("evicted_keys", st.Evicted)
		line("rejected_oom", st.OOMRejects)
	}
	if want("keyspace") {
		sep()
		b = append(b, "# Keyspace\r\n"...)
		if st.Keys > 0 {
			b = append(b, "db0:keys="...)
			b = strconv.AppendInt(b, st.Keys, 10)
			b = append(b, ",expires="...)
			b = strconv.AppendInt(b, st.KeysWithTTL, 10)
			b = append(b, ",avg_ttl=0\r\n"...)
		}
	}
	e.scratch = b[:0]
	e.bulk(b)
}

// encodeRESP appends e.res as RESP2.
func (e *Engine) encodeRESP(out []byte) []byte {
	r := &e.res
	switch r.Kind {
	case sbe.KindSimple:
		out = append(out, '+')
		out = append(out, r.Value...)
		return append(out, '\r', '\n')
	case sbe.KindBulk:
		return resp.AppendBulk(out, r.Value)
	case sbe.KindNil:
		return resp.AppendNull(out)
	case sbe.KindInteger:
		return resp.AppendInt(out, r.Integer)
	case sbe.KindArray:
		out = resp.AppendArray(out, len(r.Items))
		for i := range r.Items {
			it := &r.Items[i]
			switch it.Kind {
			case sbe.KindBulk:
				out = resp.AppendBulk(out, it.Value)
			case sbe.KindInteger:
				out = resp.AppendInt(out, it.Integer)
			case sbe.KindArray:
				out = resp.AppendArray(out, int(it.Integer))
			default:
				out = resp.AppendNull(out)
			}
		}
		return out
	}
	out = append(out, '-')
	out = append(out, r.Value...)
	return append(out, '\r', '\n')
}

func (e *Engine) respProtocolError(s *Session, out []byte, err error) []byte {
	s.Stats.ProtocolErrors++
	s.Stats.Errors++
	out = append(out, "-ERR "...)
	out = append(out, err.Error()...)
	return append(out, '\r', '\n')
}

// sbeProtocolError answers a malformed SBE request with a Reply of status
// protocol (correlation id 0: the request's could not be trusted).
func (e *Engine) sbeProtocolError(s *Session, out []byte, err error, framed bool) []byte {
	s.Stats.ProtocolErrors++
	s.Stats.Errors++
	e.errBuf = append(e.errBuf[:0], "ERR Protocol error: "...)
	e.errBuf = append(e.errBuf, err.Error()...)
	rep := sbe.Reply{Status: sbe.StatusProtocol, Kind: sbe.KindError, Value: e.errBuf}
	if !framed {
		return e.codec.AppendReply(out, &rep)
	}
	return e.codec.AppendFramedReply(out, &rep)
}
