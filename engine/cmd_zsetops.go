package engine

import (
	"bytes"
	"cmp"
	"math"
	"slices"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/store"
)

// ZUNION, ZINTER, ZDIFF, their STORE forms and ZINTERCARD, as
// zunionInterDiffGenericCommand answers them; SINTERCARD and LMPOP, the
// other keynum commands. The results are built in the engine (these are
// not hot-path commands) and sorted as a sorted set orders them.

type zsetOp uint8

const (
	zopUnion zsetOp = iota
	zopInter
	zopDiff
)

// The aggregates of ZUNION and ZINTER.
const (
	aggSum = iota
	aggMin
	aggMax
)

// zsrc is one input of a sorted-set operation: a sorted set, a set (every
// member scored 1) or a missing key (empty).
type zsrc struct {
	key    []byte
	typ    store.Type
	size   int
	weight float64
}

func (e *Engine) zsrcEach(z *zsrc, fn func(m []byte, sc float64)) {
	switch z.typ {
	case store.TypeZSet:
		_ = e.st.ZRange(z.key, 0, z.size-1, false, func(m []byte, sc float64) bool {
			fn(m, sc)
			return true
		})
	case store.TypeSet:
		_, _ = e.st.SRange(z.key, func(m []byte) bool {
			fn(m, 1)
			return true
		})
	}
}

func (e *Engine) zsrcFind(z *zsrc, m []byte) (float64, bool) {
	switch z.typ {
	case store.TypeZSet:
		sc, ok, _ := e.st.ZScore(z.key, m)
		return sc, ok
	case store.TypeSet:
		ok, _ := e.st.SIsMember(z.key, m)
		return 1, ok
	}
	return 0, false
}

func aggregate(target *float64, v float64, agg int) {
	switch agg {
	case aggSum:
		*target += v
		if math.IsNaN(*target) { // inf + -inf: Redis's convention is 0
			*target = 0
		}
	case aggMin:
		*target = min(*target, v)
	case aggMax:
		*target = max(*target, v)
	}
}

type zresult struct {
	m  string
	sc float64
}

// zsetAlgebra answers ZUNION, ZINTER, ZDIFF, ZUNIONSTORE, ZINTERSTORE,
// ZDIFFSTORE and ZINTERCARD.
func (e *Engine) zsetAlgebra(s *Session, r *command.Request) {
	var op zsetOp
	switch r.Op {
	case command.OpZInter, command.OpZInterStore, command.OpZInterCard:
		op = zopInter
	case command.OpZDiff, command.OpZDiffStore:
		op = zopDiff
	}
	nk := int(r.Amount)
	var dst []byte
	keys := append(e.keyList[:0], r.Key)
	opts := r.Args[nk-1:]
	switch r.Op {
	case command.OpZUnionStore, command.OpZInterStore, command.OpZDiffStore:
		dst, keys = r.Key, keys[:0]
		keys = append(keys, r.Args[:nk]...)
		opts = r.Args[nk:]
	default:
		keys = append(keys, r.Args[:nk-1]...)
	}
	e.keyList = keys
	cardOnly := r.Op == command.OpZInterCard
	srcs := make([]zsrc, nk)
	for i, k := range keys {
		t := e.st.TypeOf(k)
		if t != store.TypeNone && t != store.TypeZSet && t != store.TypeSet {
			e.collError(store.ErrWrongType)
			return
		}
		srcs[i] = zsrc{key: k, typ: t, weight: 1}
		switch t {
		case store.TypeZSet:
			srcs[i].size, _ = e.st.ZCard(k)
		case store.TypeSet:
			srcs[i].size, _ = e.st.SCard(k)
		}
	}
	agg, withScores, limit := aggSum, false, int64(0)
	for j := 0; j < len(opts); {
		left := len(opts) - j
		switch a := opts[j]; {
		case op != zopDiff && left >= nk+1 && command.EqualFold(a, "weights"):
			j++
			for i := range srcs {
				w, ok := parseScore(opts[j])
				if !ok {
					e.errText(command.Err, "ERR weight value is not a float")
					return
				}
				srcs[i].weight = w
				j++
			}
		case op != zopDiff && left >= 2 && command.EqualFold(a, "aggregate"):
			switch b := opts[j+1]; {
			case command.EqualFold(b, "sum"):
				agg = aggSum
			case command.EqualFold(b, "min"):
				agg = aggMin
			case command.EqualFold(b, "max"):
				agg = aggMax
			default:
				e.errText(command.Syntax, txtSyntax)
				return
			}
			j += 2
		case left >= 1 && dst == nil && !cardOnly && command.EqualFold(a, "withscores"):
			withScores = true
			j++
		case cardOnly && left >= 2 && command.EqualFold(a, "limit"):
			n, ok := resp.ParseInt(opts[j+1])
			if !ok || n < 0 {
				e.errText(command.Err, "ERR LIMIT can't be negative")
				return
			}
			limit = n
			j += 2
		default:
			e.errText(command.Syntax, txtSyntax)
			return
		}
	}
	if op != zopDiff {
		slices.SortStableFunc(srcs, func(a, b zsrc) int { return cmp.Compare(a.size, b.size) })
	}
	var res []zresult
	card := int64(0)
	switch op {
	case zopInter:
		if srcs[0].size == 0 {
			break
		}
		var first []zresult
		e.zsrcEach(&srcs[0], func(m []byte, sc float64) { first = append(first, zresult{string(m), sc}) })
		for _, f := range first {
			score := srcs[0].weight * f.sc
			if math.IsNaN(score) {
				score = 0
			}
			j := 1
			for ; j < len(srcs); j++ {
				v, ok := f.sc, string(srcs[j].key) == string(srcs[0].key)
				if !ok {
					v, ok = e.zsrcFind(&srcs[j], []byte(f.m))
				}
				if !ok {
					break
				}
				aggregate(&score, v*srcs[j].weight, agg)
			}
			if j < len(srcs) {
				continue
			}
			if cardOnly {
				card++
				if limit > 0 && card >= limit {
					break
				}
				continue
			}
			res = append(res, zresult{f.m, score})
		}
	case zopUnion:
		acc := map[string]float64{}
		for i := range srcs {
			e.zsrcEach(&srcs[i], func(m []byte, sc float64) {
				score := srcs[i].weight * sc
				if math.IsNaN(score) {
					score = 0
				}
				if cur, ok := acc[string(m)]; ok {
					aggregate(&cur, score, agg)
					acc[string(m)] = cur
				} else {
					acc[string(m)] = score
				}
			})
		}
		for m, sc := range acc {
			res = append(res, zresult{m, sc})
		}
	case zopDiff:
		if srcs[0].size == 0 {
			break
		}
		var first []zresult
		e.zsrcEach(&srcs[0], func(m []byte, sc float64) { first = append(first, zresult{string(m), sc}) })
		for _, f := range first {
			in := false
			for j := 1; j < len(srcs) && !in; j++ {
				_, in = e.zsrcFind(&srcs[j], []byte(f.m))
			}
			if !in {
				res = append(res, f)
			}
		}
	}
	if cardOnly {
		e.integer(card)
		return
	}
	slices.SortFunc(res, func(a, b zresult) int {
		if c := cmp.Compare(a.sc, b.sc); c != 0 {
			return c
		}
		return bytes.Compare([]byte(a.m), []byte(b.m))
	})
	if dst != nil {
		e.zcollectReset()
		for _, z := range res {
			e.zcollect([]byte(z.m), z.sc)
		}
		e.zstore(dst)
		return
	}
	pairs := withScores && s.resp3
	e.begin(command.Array)
	for _, z := range res {
		if pairs {
			e.push(command.Array)
		}
		e.addCopy(command.Bulk, []byte(z.m))
		if withScores {
			e.addDouble(z.sc)
		}
		if pairs {
			e.pop()
		}
	}
	e.end()
}

// sintercard answers SINTERCARD numkeys key ... [LIMIT limit].
func (e *Engine) sintercard(_ *Session, r *command.Request) {
	nk := int(r.Amount)
	opts := r.Args[nk-1:]
	limit := int64(0)
	for j := 0; j < len(opts); j++ {
		if command.EqualFold(opts[j], "limit") && j+1 < len(opts) {
			j++
			n, ok := resp.ParseInt(opts[j])
			if !ok || n < 0 {
				e.errText(command.Err, "ERR LIMIT can't be negative")
				return
			}
			limit = n
			continue
		}
		e.errText(command.Syntax, txtSyntax)
		return
	}
	keys := append(append(e.keyList[:0], r.Key), r.Args[:nk-1]...)
	e.keyList = keys
	small, size, empty := keys[0], -1, false
	for _, k := range keys {
		t := e.st.TypeOf(k)
		if t != store.TypeNone && t != store.TypeSet {
			e.collError(store.ErrWrongType)
			return
		}
		n, _ := e.st.SCard(k)
		empty = empty || n == 0
		if size < 0 || n < size {
			small, size = k, n
		}
	}
	card := int64(0)
	if !empty {
		_, _ = e.st.SRange(small, func(m []byte) bool {
			for _, k := range keys {
				if ok, _ := e.st.SIsMember(k, m); !ok {
					return true
				}
			}
			card++
			return limit == 0 || card < limit
		})
	}
	e.integer(card)
}

// lmpop answers LMPOP numkeys key ... LEFT|RIGHT [COUNT count].
func (e *Engine) lmpop(_ *Session, r *command.Request) {
	nk := int(r.Amount)
	var front bool
	switch where := r.Args[nk-1]; {
	case command.EqualFold(where, "left"):
		front = true
	case command.EqualFold(where, "right"):
	default:
		e.errText(command.Syntax, txtSyntax)
		return
	}
	count, ok := e.mpopCount(r.Args[nk:])
	if !ok {
		return
	}
	for i := 0; i < nk; i++ {
		k := r.Key
		if i > 0 {
			k = r.Args[i-1]
		}
		n, err := e.st.LLen(k)
		if err != nil {
			e.collError(err)
			return
		}
		if n == 0 {
			continue
		}
		e.begin(command.Array)
		e.addCopy(command.Bulk, k)
		e.push(command.Array)
		for c := int64(0); c < min(count, int64(n)); c++ {
			start := len(e.scratch)
			e.scratch, _, _ = e.st.Pop(e.scratch, k, front)
			e.fixes = append(e.fixes, fixup{item: len(e.res.Items), start: start, end: len(e.scratch)})
			e.add(command.Bulk, 0, nil)
		}
		e.pop()
		e.end()
		return
	}
	e.res.Kind = command.NilArray
}
