package engine

import (
	"math"
	"math/rand/v2"
	"strconv"
	"unsafe"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/internal/glob"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/store"
	"github.com/goblin-kv/goblin/store/collection"
)

// The sorted-set commands, in t_zset.c's order of checks. Every range
// command works through ranks: a score or lex range is the ranks between
// two bounds' counts (store.ZCount), then a rank range is walked.

const (
	txtNotFloat      = "ERR value is not a valid float"
	txtMinMaxFloat   = "ERR min or max is not a float"
	txtMinMaxLex     = "ERR min or max not valid string range item"
	txtNotInteger    = "ERR value is not an integer or out of range"
	txtMustPositive  = "ERR value is out of range, must be positive"
	txtSyntax        = "ERR syntax error"
	txtNaNResult     = "ERR resulting score is not a number (NaN)"
	txtLimitRankOnly = "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
	txtLexScores     = "ERR syntax error, WITHSCORES not supported in combination with BYLEX"
)

// strtod reads b as C's strtod does for a whole argument: leading spaces
// skipped, then a decimal or hexadecimal float, "inf", "infinity" or
// "nan" (any case, signed). ok is false unless it consumed everything (an
// empty b is 0, as strtod leaves eptr at its NUL); erange reports overflow
// or underflow to zero.
func strtod(b []byte) (f float64, ok, erange bool) {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i == len(b) {
		return 0, len(b) == 0, false
	}
	body, neg := b[i:], false
	if body[0] == '+' || body[0] == '-' {
		neg = body[0] == '-'
		body = body[1:]
	}
	switch lowerASCII(body) {
	case "inf", "infinity":
		return math.Inf(1 - 2*b2iInt(neg)), true, false
	case "nan":
		return math.NaN(), true, false
	}
	if len(body) > 4 && lowerASCII(body[:4]) == "nan(" && body[len(body)-1] == ')' {
		return math.NaN(), true, false
	}
	if !strtoldSyntax(body) {
		return 0, false, false
	}
	hex := len(body) > 2 && body[0] == '0' && body[1]|0x20 == 'x'
	var err error
	if hex && !hasExp(body) {
		s := append(append([]byte(nil), b[i:]...), "p0"...)
		f, err = strconv.ParseFloat(string(s), 64)
	} else {
		f, err = strconv.ParseFloat(unsafe.String(unsafe.SliceData(b[i:]), len(b)-i), 64)
	}
	if err != nil {
		return f, math.IsInf(f, 0), math.IsInf(f, 0)
	}
	return f, true, f == 0 && nonzeroMantissa(body, hex)
}

func b2iInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func hasExp(b []byte) bool {
	for _, c := range b {
		if c|0x20 == 'p' {
			return true
		}
	}
	return false
}

// nonzeroMantissa reports whether a float's digits before its exponent are
// not all zero (so a 0 result is an underflow).
func nonzeroMantissa(b []byte, hex bool) bool {
	if hex {
		b = b[2:]
	}
	for _, c := range b {
		switch {
		case c == '.':
		case !hex && c|0x20 == 'e', hex && c|0x20 == 'p':
			return false
		case c != '0':
			return true
		}
	}
	return false
}

// parseScore reads a score or weight as getDoubleFromObject (string2d)
// does: no leading space, everything consumed, no overflow, no underflow
// to zero, no NaN.
func parseScore(b []byte) (float64, bool) {
	if len(b) == 0 || isSpace(b[0]) {
		return 0, false
	}
	f, ok, erange := strtod(b)
	return f, ok && !erange && !math.IsNaN(f)
}

// cString is b up to its first NUL, where a C string would end.
func cString(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}

// scoreBound reads one end of a score range as zslParseRange does:
// "(" makes it exclusive; strtod must reach the end; NaN is refused. min
// says which end it is, so the bound counts the members before it.
func scoreBound(arg []byte, min bool, b *collection.ZBound) bool {
	arg = cString(arg)
	excl := len(arg) > 0 && arg[0] == '('
	if excl {
		arg = arg[1:]
	}
	f, ok, _ := strtod(arg)
	if !ok || math.IsNaN(f) {
		return false
	}
	*b = collection.ZBound{Kind: collection.ZByScore, Score: f, OrEqual: excl == min}
	return true
}

// lexBound reads one end of a lex range as zslParseLexRangeItem does: "-",
// "+", or "[" or "(" before a member.
func lexBound(arg []byte, min bool, b *collection.ZBound) bool {
	if len(arg) == 0 {
		return false
	}
	*b = collection.ZBound{Kind: collection.ZByLex}
	switch arg[0] {
	case '+', '-':
		if len(arg) != 1 {
			return false
		}
		b.Inf = 1
		if arg[0] == '-' {
			b.Inf = -1
		}
	case '(':
		b.Member, b.OrEqual = arg[1:], min
	case '[':
		b.Member, b.OrEqual = arg[1:], !min
	default:
		return false
	}
	return true
}

// addDouble appends score as a double (a bulk string in RESP2).
func (e *Engine) addDouble(score float64) {
	start := len(e.scratch)
	e.scratch = collection.AppendDouble(e.scratch, score)
	e.fixes = append(e.fixes, fixup{item: len(e.res.Items), start: start, end: len(e.scratch)})
	e.add(command.Double, 0, nil)
}

// double answers one double.
func (e *Engine) double(score float64) {
	e.num = collection.AppendDouble(e.num[:0], score)
	e.res.Kind, e.res.Value = command.Double, e.num
}

// zsetType answers WRONGTYPE and reports false when key holds another type;
// exists reports whether it holds a sorted set.
func (e *Engine) zsetType(key []byte) (exists, ok bool) {
	switch e.st.TypeOf(key) {
	case store.TypeNone:
		return false, true
	case store.TypeZSet:
		return true, true
	}
	e.collError(store.ErrWrongType)
	return false, false
}

// zadd answers ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member ... and
// ZINCRBY key increment member.
func (e *Engine) zadd(_ *Session, r *command.Request) {
	args := r.Args
	var flags uint8
	ch := false
	if r.Op == command.OpZIncrBy {
		flags = store.ZAddIncr
	} else {
		for len(args) > 0 {
			switch {
			case command.EqualFold(args[0], "nx"):
				flags |= store.ZAddNX
			case command.EqualFold(args[0], "xx"):
				flags |= store.ZAddXX
			case command.EqualFold(args[0], "ch"):
				ch = true
			case command.EqualFold(args[0], "incr"):
				flags |= store.ZAddIncr
			case command.EqualFold(args[0], "gt"):
				flags |= store.ZAddGT
			case command.EqualFold(args[0], "lt"):
				flags |= store.ZAddLT
			default:
				goto parsed
			}
			args = args[1:]
		}
	}
parsed:
	incr := flags&store.ZAddIncr != 0
	nx, xx, gt, lt := flags&store.ZAddNX != 0, flags&store.ZAddXX != 0, flags&store.ZAddGT != 0, flags&store.ZAddLT != 0
	switch {
	case len(args)%2 != 0 || len(args) == 0:
		e.errText(command.Syntax, txtSyntax)
		return
	case nx && xx:
		e.errText(command.Err, "ERR XX and NX options at the same time are not compatible")
		return
	case (gt && nx) || (lt && nx) || (gt && lt):
		e.errText(command.Err, "ERR GT, LT, and/or NX options at the same time are not compatible")
		return
	case incr && len(args) > 2:
		e.errText(command.Err, "ERR INCR option supports a single increment-element pair")
		return
	}
	for i := 0; i < len(args); i += 2 {
		if _, ok := parseScore(args[i]); !ok {
			e.errText(command.NotFloat, txtNotFloat)
			return
		}
	}
	added, updated, processed := 0, 0, 0
	var score float64
	for i := 0; i < len(args); i += 2 {
		sc, _ := parseScore(args[i])
		out, ns, err := e.st.ZAdd(r.Key, sc, args[i+1], flags)
		switch {
		case err == store.ErrNaNScore:
			e.errText(command.Err, txtNaNResult)
			return
		case err != nil:
			e.collError(err)
			return
		}
		switch out {
		case store.ZAddAdded:
			added++
		case store.ZAddUpdated:
			updated++
		}
		if out != store.ZAddNop {
			processed++
		}
		score = ns
	}
	switch {
	case incr && processed > 0:
		e.double(score)
	case incr:
		e.null()
	case ch:
		e.integer(int64(added + updated))
	default:
		e.integer(int64(added))
	}
}

func (e *Engine) zcard(_ *Session, r *command.Request) {
	e.collCount(e.st.ZCard(r.Key))
}

func (e *Engine) zscore(_ *Session, r *command.Request) {
	sc, ok, err := e.st.ZScore(r.Key, r.Args[0])
	switch {
	case err != nil:
		e.collError(err)
	case ok:
		e.double(sc)
	default:
		e.null()
	}
}

func (e *Engine) zmscore(_ *Session, r *command.Request) {
	if _, ok := e.zsetType(r.Key); !ok {
		return
	}
	e.begin(command.Array)
	for _, m := range r.Args {
		if sc, ok, _ := e.st.ZScore(r.Key, m); ok {
			e.addDouble(sc)
		} else {
			e.add(command.Nil, 0, nil)
		}
	}
	e.end()
}

// zrank answers ZRANK and ZREVRANK key member.
func (e *Engine) zrank(_ *Session, r *command.Request) {
	rank, _, ok, err := e.st.ZRank(r.Key, r.Args[0])
	switch {
	case err != nil:
		e.collError(err)
	case !ok:
		e.null()
	case r.Op == command.OpZRevRank:
		n, _ := e.st.ZCard(r.Key)
		e.integer(int64(n - 1 - rank))
	default:
		e.integer(int64(rank))
	}
}

// zrangeBounds reads a score (lex) range's min and max into e.zlo, e.zhi,
// answering Redis's error when they do not parse.
func (e *Engine) zrangeBounds(min, max []byte, lex bool) bool {
	if lex {
		if !lexBound(min, true, &e.zlo) || !lexBound(max, false, &e.zhi) {
			e.errText(command.Err, txtMinMaxLex)
			return false
		}
		return true
	}
	if !scoreBound(min, true, &e.zlo) || !scoreBound(max, false, &e.zhi) {
		e.errText(command.Err, txtMinMaxFloat)
		return false
	}
	return true
}

// zrankRange returns the ranks lo..hi-1 of the members between e.zlo and
// e.zhi in the sorted set at key.
func (e *Engine) zrankRange(key []byte) (lo, hi int) {
	lo, _ = e.st.ZCount(key, &e.zlo)
	hi, _ = e.st.ZCount(key, &e.zhi)
	return lo, max(hi, lo)
}

// zcount answers ZCOUNT and ZLEXCOUNT key min max.
func (e *Engine) zcount(_ *Session, r *command.Request) {
	if !e.zrangeBounds(r.Args[0], r.Args[1], r.Op == command.OpZLexCount) {
		return
	}
	exists, ok := e.zsetType(r.Key)
	if !ok {
		return
	}
	if !exists {
		e.integer(0)
		return
	}
	lo, hi := e.zrankRange(r.Key)
	e.integer(int64(hi - lo))
}

// zrem answers ZREM key member ....
func (e *Engine) zrem(_ *Session, r *command.Request) {
	e.collCount(e.st.ZRem(r.Key, r.Args))
}

// normRanks turns Redis's start and end ranks (negative from the end) into
// 0..n-1, reporting false for an empty range.
func normRanks(start, end int64, n int) (int, int, bool) {
	ln := int64(n)
	if start < 0 {
		start += ln
	}
	if end < 0 {
		end += ln
	}
	start = max(start, 0)
	if start > end || start >= ln {
		return 0, 0, false
	}
	return int(start), int(min(end, ln-1)), true
}

// zremrange answers ZREMRANGEBYRANK, ZREMRANGEBYSCORE and ZREMRANGEBYLEX key min max.
func (e *Engine) zremrange(_ *Session, r *command.Request) {
	var start, end int64
	if r.Op == command.OpZRemRangeByRank {
		var ok1, ok2 bool
		start, ok1 = resp.ParseInt(r.Args[0])
		end, ok2 = resp.ParseInt(r.Args[1])
		if !ok1 || !ok2 {
			e.errText(command.NotInteger, txtNotInteger)
			return
		}
	} else if !e.zrangeBounds(r.Args[0], r.Args[1], r.Op == command.OpZRemRangeByLex) {
		return
	}
	exists, ok := e.zsetType(r.Key)
	if !ok {
		return
	}
	if !exists {
		e.integer(0)
		return
	}
	var lo, hi int
	if r.Op == command.OpZRemRangeByRank {
		n, _ := e.st.ZCard(r.Key)
		s, t, ok := normRanks(start, end, n)
		if !ok {
			e.integer(0)
			return
		}
		lo, hi = s, t+1
	} else {
		lo, hi = e.zrankRange(r.Key)
	}
	if hi <= lo {
		e.integer(0)
		return
	}
	e.collCount(e.st.ZRemRange(r.Key, lo, hi-1))
}

// The kinds of range of zrangeGeneric, and its directions.
const (
	zrAuto = iota
	zrRank
	zrScore
	zrLex
)

// zrange answers ZRANGE, ZREVRANGE, ZRANGEBYSCORE, ZREVRANGEBYSCORE,
// ZRANGEBYLEX, ZREVRANGEBYLEX and ZRANGESTORE, as zrangeGenericCommand.
func (e *Engine) zrange(s *Session, r *command.Request) {
	kind, dir := zrAuto, 0 // dir: 0 auto, 1 forward, -1 reverse
	switch r.Op {
	case command.OpZRevRange:
		kind, dir = zrRank, -1
	case command.OpZRangeByScore:
		kind, dir = zrScore, 1
	case command.OpZRevRangeByScore:
		kind, dir = zrScore, -1
	case command.OpZRangeByLex:
		kind, dir = zrLex, 1
	case command.OpZRevRangeByLex:
		kind, dir = zrLex, -1
	}
	store := r.Op == command.OpZRangeStore
	src, args := r.Key, r.Args
	if store {
		src, args = r.Args[0], r.Args[1:]
	}
	withScores := false
	offset, limit := int64(0), int64(-1)
	for j := 2; j < len(args); j++ {
		left := len(args) - j - 1
		switch a := args[j]; {
		case !store && command.EqualFold(a, "withscores"):
			withScores = true
		case command.EqualFold(a, "limit") && left >= 2:
			var ok1, ok2 bool
			offset, ok1 = resp.ParseInt(args[j+1])
			if ok1 {
				limit, ok2 = resp.ParseInt(args[j+2])
			}
			if !ok1 || !ok2 {
				e.errText(command.NotInteger, txtNotInteger)
				return
			}
			j += 2
		case dir == 0 && command.EqualFold(a, "rev"):
			dir = -1
		case kind == zrAuto && command.EqualFold(a, "bylex"):
			kind = zrLex
		case kind == zrAuto && command.EqualFold(a, "byscore"):
			kind = zrScore
		default:
			e.errText(command.Syntax, txtSyntax)
			return
		}
	}
	if kind == zrAuto {
		kind = zrRank
	}
	rev := dir < 0
	switch {
	case limit != -1 && kind == zrRank:
		e.errText(command.Syntax, txtLimitRankOnly)
		return
	case withScores && kind == zrLex:
		e.errText(command.Syntax, txtLexScores)
		return
	}
	minArg, maxArg := args[0], args[1]
	if rev && kind != zrRank {
		minArg, maxArg = maxArg, minArg
	}
	var start, end int64
	if kind == zrRank {
		var ok1, ok2 bool
		start, ok1 = resp.ParseInt(minArg)
		if ok1 {
			end, ok2 = resp.ParseInt(maxArg)
		}
		if !ok1 || !ok2 {
			e.errText(command.NotInteger, txtNotInteger)
			return
		}
	} else if !e.zrangeBounds(minArg, maxArg, kind == zrLex) {
		return
	}
	exists, ok := e.zsetType(src)
	if !ok {
		return
	}
	// first and last are the ranks to emit, first first; none when empty.
	first, last, any := 0, 0, false
	if exists {
		n, _ := e.st.ZCard(src)
		if kind == zrRank {
			if s, t, ok := normRanks(start, end, n); ok {
				first, last, any = s, t, true
				if rev {
					first, last = n-1-s, n-1-t
				}
			}
		} else if offset >= 0 && !(offset > 0 && offset >= int64(n)) {
			lo, hi := e.zrankRange(src)
			if rev {
				first, last = hi-1-int(offset), lo
				if limit >= 0 {
					last = max(lo, first-int(min(limit, int64(n)))+1)
				}
				any = first >= last && limit != 0
			} else {
				first, last = lo+int(offset), hi-1
				if limit >= 0 {
					last = min(hi-1, first+int(min(limit, int64(n)))-1)
				}
				any = first <= last && limit != 0
			}
		}
	}
	if store {
		e.zrangeStore(r.Key, src, first, last, rev, any)
		return
	}
	pairs := withScores && s.resp3
	e.begin(command.Array)
	if any {
		lo, hi := first, last
		if rev {
			lo, hi = last, first
		}
		_ = e.st.ZRange(src, lo, hi, rev, func(m []byte, sc float64) bool {
			if pairs {
				e.push(command.Array)
			}
			e.addCopy(command.Bulk, m)
			if withScores {
				e.addDouble(sc)
			}
			if pairs {
				e.pop()
			}
			return true
		})
	}
	e.end()
}

// zrangeStore writes ranks first..last of src (reversed when rev; nothing
// unless any) as the sorted set dst, replacing it, and answers its size.
func (e *Engine) zrangeStore(dst, src []byte, first, last int, rev, any bool) {
	e.zcollectReset()
	if any {
		lo, hi := first, last
		if rev {
			lo, hi = last, first
		}
		_ = e.st.ZRange(src, lo, hi, rev, func(m []byte, sc float64) bool {
			e.zcollect(m, sc)
			return true
		})
	}
	e.zstore(dst)
}

// zcollectReset empties the members and scores a store command gathers.
func (e *Engine) zcollectReset() {
	e.zmem, e.zends, e.zscores = e.zmem[:0], e.zends[:0], e.zscores[:0]
}

// zcollect gathers one member and its score.
func (e *Engine) zcollect(m []byte, sc float64) {
	e.zmem = append(e.zmem, m...)
	e.zends = append(e.zends, len(e.zmem))
	e.zscores = append(e.zscores, sc)
}

// zmember returns gathered member i.
func (e *Engine) zmember(i int) []byte {
	start := 0
	if i > 0 {
		start = e.zends[i-1]
	}
	return e.zmem[start:e.zends[i]]
}

// zstore replaces dst with the gathered members (deleting it when there
// are none) and answers how many there are.
func (e *Engine) zstore(dst []byte) {
	e.st.Del(dst)
	for i := range e.zscores {
		if _, _, err := e.st.ZAdd(dst, e.zscores[i], e.zmember(i), 0); err != nil {
			e.collError(err)
			return
		}
	}
	e.integer(int64(len(e.zscores)))
}

// zpop answers ZPOPMIN and ZPOPMAX key [count].
func (e *Engine) zpop(s *Session, r *command.Request) {
	if len(r.Args) > 1 {
		e.errText(command.Syntax, txtSyntax)
		return
	}
	count := int64(-1)
	if len(r.Args) == 1 {
		n, ok := resp.ParseInt(r.Args[0])
		if !ok || n < 0 {
			e.errText(command.OutOfRange, txtMustPositive)
			return
		}
		count = n
	}
	exists, ok := e.zsetType(r.Key)
	if !ok {
		return
	}
	e.begin(command.Array)
	if exists && count != 0 {
		e.zpopInto(r.Key, r.Op == command.OpZPopMax, max(count, 1), s.resp3 && count != -1)
	}
	e.end()
}

// zpopInto pops up to count members of key from its low (high when top)
// end into the open reply, as pairs when nested.
func (e *Engine) zpopInto(key []byte, top bool, count int64, nested bool) {
	n, _ := e.st.ZCard(key)
	k := int(min(count, int64(n)))
	lo, hi := 0, k-1
	if top {
		lo, hi = n-k, n-1
	}
	_ = e.st.ZRange(key, lo, hi, top, func(m []byte, sc float64) bool {
		if nested {
			e.push(command.Array)
		}
		e.addCopy(command.Bulk, m)
		e.addDouble(sc)
		if nested {
			e.pop()
		}
		return true
	})
	_, _ = e.st.ZRemRange(key, lo, hi)
}

// zmpop answers ZMPOP numkeys key ... MIN|MAX [COUNT count].
func (e *Engine) zmpop(_ *Session, r *command.Request) {
	nk := int(r.Amount)
	where := r.Args[nk-1]
	var top bool
	switch {
	case command.EqualFold(where, "min"):
	case command.EqualFold(where, "max"):
		top = true
	default:
		e.errText(command.Syntax, txtSyntax)
		return
	}
	count, ok := e.mpopCount(r.Args[nk:])
	if !ok {
		return
	}
	var key []byte
	for i := 0; i < nk; i++ {
		k := r.Key
		if i > 0 {
			k = r.Args[i-1]
		}
		if exists, ok := e.zsetType(k); !ok {
			return
		} else if exists {
			key = k
			break
		}
	}
	if key == nil {
		e.res.Kind = command.NilArray
		return
	}
	e.begin(command.Array)
	e.addCopy(command.Bulk, key)
	e.push(command.Array)
	e.zpopInto(key, top, count, true)
	e.pop()
	e.end()
}

// zrandmember answers ZRANDMEMBER key [count [WITHSCORES]].
func (e *Engine) zrandmember(s *Session, r *command.Request) {
	if len(r.Args) == 0 {
		exists, ok := e.zsetType(r.Key)
		if !ok {
			return
		}
		if !exists {
			e.null()
			return
		}
		_, _ = e.st.ZRandom(r.Key, rand.Uint64(), func(m []byte, _ float64) {
			e.scratch = append(e.scratch[:0], m...)
		})
		e.bulk(e.scratch)
		return
	}
	l, ok := resp.ParseInt(r.Args[0])
	if !ok {
		e.errText(command.NotInteger, txtNotInteger)
		return
	}
	if l == math.MinInt64 {
		e.errText(command.OutOfRange, "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
		return
	}
	withScores := false
	switch {
	case len(r.Args) > 2 || (len(r.Args) == 2 && !command.EqualFold(r.Args[1], "withscores")):
		e.errText(command.Syntax, txtSyntax)
		return
	case len(r.Args) == 2:
		withScores = true
		if l < -math.MaxInt64/2 || l > math.MaxInt64/2 {
			e.errText(command.OutOfRange, "ERR value is out of range")
			return
		}
	}
	exists, ok := e.zsetType(r.Key)
	if !ok {
		return
	}
	n := 0
	if exists {
		n, _ = e.st.ZCard(r.Key)
	}
	if l < -maxRandomRepeats && n > 0 {
		e.errText(command.OutOfRange, "ERR count is too large: goblin returns at most 4194304 elements with repetitions per call")
		return
	}
	pairs := withScores && s.resp3
	e.begin(command.Array)
	add := func(m []byte, sc float64) bool {
		if pairs {
			e.push(command.Array)
		}
		e.addCopy(command.Bulk, m)
		if withScores {
			e.addDouble(sc)
		}
		if pairs {
			e.pop()
		}
		return true
	}
	switch {
	case n == 0 || l == 0:
	case l < 0:
		for k := int64(0); k < -l; k++ {
			_, _ = e.st.ZRandom(r.Key, rand.Uint64(), func(m []byte, sc float64) { add(m, sc) })
		}
	case l >= int64(n): // the whole set, highest first, as zuiNext walks it
		_ = e.st.ZRange(r.Key, 0, n-1, true, add)
	default:
		left, remaining := int(l), n
		_ = e.st.ZRange(r.Key, 0, n-1, false, func(m []byte, sc float64) bool {
			if rand.IntN(remaining) < left {
				left--
				add(m, sc)
			}
			remaining--
			return left > 0
		})
	}
	e.end()
}

// zscan answers ZSCAN key cursor [MATCH pattern] [COUNT count].
func (e *Engine) zscan(_ *Session, r *command.Request) {
	cursor, ok := e.scanCursor(r.Args[0])
	if !ok {
		return
	}
	exists, ok := e.zsetType(r.Key)
	if !ok {
		return
	}
	e.begin(command.Array)
	e.add(command.Bulk, 0, nil) // the cursor, set below
	e.push(command.Array)
	var next uint64
	if exists {
		match, count, ok := e.scanOptions(r.Args[1:])
		if !ok {
			return
		}
		next, _ = e.st.ZScan(r.Key, cursor, count, func(m, sc []byte) {
			if match != nil && !glob.Match(match, m) {
				return
			}
			e.addCopy(command.Bulk, m)
			e.addCopy(command.Bulk, sc)
		})
	}
	e.pop()
	start := len(e.scratch)
	e.scratch = strconv.AppendUint(e.scratch, next, 10)
	e.fixes = append(e.fixes, fixup{item: 0, start: start, end: len(e.scratch)})
	e.end()
}
