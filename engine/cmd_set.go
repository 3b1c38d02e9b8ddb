package engine

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/store"
	"github.com/goblin-kv/goblin/store/collection"
)

// The set commands.

func (e *Engine) sadd(_ *Session, r *command.Request) {
	e.collCount(e.st.SAdd(r.Key, r.Args))
}

func (e *Engine) srem(_ *Session, r *command.Request) {
	e.collCount(e.st.SRem(r.Key, r.Args))
}

func (e *Engine) scard(_ *Session, r *command.Request) {
	e.collCount(e.st.SCard(r.Key))
}

func (e *Engine) sismember(_ *Session, r *command.Request) {
	ok, err := e.st.SIsMember(r.Key, r.Args[0])
	if err != nil {
		e.collError(err)
		return
	}
	e.integer(b2i(ok))
}

func (e *Engine) smismember(_ *Session, r *command.Request) {
	if t := e.st.TypeOf(r.Key); t != store.TypeNone && t != store.TypeSet {
		e.collError(store.ErrWrongType)
		return
	}
	e.begin(command.Array)
	for _, m := range r.Args {
		ok, _ := e.st.SIsMember(r.Key, m)
		e.addInt(b2i(ok))
	}
	e.end()
}

func (e *Engine) smembers(_ *Session, r *command.Request) {
	e.begin(command.Set)
	if _, err := e.st.SRange(r.Key, func(m []byte) bool {
		e.addCopy(command.Bulk, m)
		return true
	}); err != nil {
		e.collError(err)
		return
	}
	e.end()
}

// srandmember answers SRANDMEMBER key [count].
func (e *Engine) srandmember(s *Session, r *command.Request) {
	if len(r.Args) == 0 {
		v, found, err := e.st.SRandom(e.scratch[:0], r.Key, rand.Uint64())
		e.collBulk(v, found, err)
		return
	}
	if len(r.Args) > 1 {
		e.errText(command.Syntax, "ERR syntax error")
		return
	}
	l, ok := resp.ParseInt(r.Args[0])
	if !ok {
		e.errText(command.NotInteger, "ERR value is not an integer or out of range")
		return
	}
	if l == math.MinInt64 {
		e.errText(command.OutOfRange, "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
		return
	}
	e.randomFields(s, r.Key, l, false, false)
}

// spop answers SPOP key [count].
func (e *Engine) spop(_ *Session, r *command.Request) {
	if len(r.Args) == 0 {
		v, found, err := e.st.SPop(e.scratch[:0], r.Key, rand.Uint64())
		e.collBulk(v, found, err)
		return
	}
	if len(r.Args) > 1 {
		e.errText(command.Syntax, "ERR syntax error")
		return
	}
	n, ok := resp.ParseInt(r.Args[0])
	if !ok || n < 0 {
		e.errText(command.OutOfRange, "ERR value is out of range, must be positive")
		return
	}
	size, err := e.st.SCard(r.Key)
	if err != nil {
		e.collError(err)
		return
	}
	e.begin(command.Set)
	if int64(size) <= n { // the whole set, in its order, and the key goes
		_, _ = e.st.SRange(r.Key, func(m []byte) bool {
			e.addCopy(command.Bulk, m)
			return true
		})
		if size > 0 {
			e.st.Del(r.Key)
		}
		e.end()
		return
	}
	for i := int64(0); i < n; i++ {
		start := len(e.scratch)
		e.scratch, _, _ = e.st.SPop(e.scratch, r.Key, rand.Uint64())
		e.fixes = append(e.fixes, fixup{item: len(e.res.Items), start: start, end: len(e.scratch)})
		e.add(command.Bulk, 0, nil)
	}
	e.end()
}

// smove answers SMOVE source destination member.
func (e *Engine) smove(_ *Session, r *command.Request) {
	src, dst, m := r.Key, r.Args[0], r.Args[1]
	for _, k := range [2][]byte{src, dst} {
		if t := e.st.TypeOf(k); t != store.TypeNone && t != store.TypeSet {
			e.collError(store.ErrWrongType)
			return
		}
	}
	in, _ := e.st.SIsMember(src, m)
	if !in {
		e.integer(0)
		return
	}
	if string(src) == string(dst) {
		e.integer(1)
		return
	}
	e.pair[0] = m
	_, _ = e.st.SRem(src, e.pair[:1])
	_, err := e.st.SAdd(dst, e.pair[:1])
	e.pair[0] = nil
	if err != nil {
		e.collError(err)
		return
	}
	e.integer(1)
}

// setOp is SINTER, SUNION or SDIFF.
type setOp uint8

const (
	opInter setOp = iota
	opUnion
	opDiff
)

// setAlgebra answers SINTER, SUNION, SDIFF and their STORE forms. The
// result is built in the engine (not the hot path) and ordered as Redis
// orders it for sets of integers: ascending, as its intset keeps them.
func (e *Engine) setAlgebra(_ *Session, r *command.Request) {
	var op setOp
	keys := append(e.keyList[:0], r.Key)
	keys = append(keys, r.Args...)
	e.keyList = keys
	var dst []byte
	switch r.Op {
	case command.OpSInterStore, command.OpSUnionStore, command.OpSDiffStore:
		dst, keys = keys[0], keys[1:]
	}
	switch r.Op {
	case command.OpSUnion, command.OpSUnionStore:
		op = opUnion
	case command.OpSDiff, command.OpSDiffStore:
		op = opDiff
	}
	for _, k := range keys {
		if t := e.st.TypeOf(k); t != store.TypeNone && t != store.TypeSet {
			e.collError(store.ErrWrongType)
			return
		}
	}
	var members [][]byte
	seen := map[string]bool{}
	addAll := func(k []byte) {
		_, _ = e.st.SRange(k, func(m []byte) bool {
			if !seen[string(m)] {
				seen[string(m)] = true
				members = append(members, bytes.Clone(m))
			}
			return true
		})
	}
	switch op {
	case opUnion:
		for _, k := range keys {
			addAll(k)
		}
	case opDiff:
		addAll(keys[0])
		kept := members[:0]
		for _, m := range members {
			in := false
			for _, k := range keys[1:] {
				if ok, _ := e.st.SIsMember(k, m); ok {
					in = true
					break
				}
			}
			if !in {
				kept = append(kept, m)
			}
		}
		members = kept
	default:
		small, size := keys[0], -1
		for _, k := range keys {
			n, _ := e.st.SCard(k)
			if size < 0 || n < size {
				small, size = k, n
			}
		}
		if size > 0 {
			_, _ = e.st.SRange(small, func(m []byte) bool {
				for _, k := range keys {
					if ok, _ := e.st.SIsMember(k, m); !ok {
						return true
					}
				}
				members = append(members, bytes.Clone(m))
				return true
			})
		}
	}
	if op != opInter || len(keys) > 1 {
		sortIntset(members, e.st.Options().Limits.SetMaxIntsetEntries)
	}
	if dst != nil {
		e.st.Del(dst)
		if len(members) > 0 {
			if _, err := e.st.SAdd(dst, members); err != nil {
				e.collError(err)
				return
			}
		}
		e.integer(int64(len(members)))
		return
	}
	e.begin(command.Set)
	for _, m := range members {
		e.addCopy(command.Bulk, m)
	}
	e.end()
}

// sortIntset sorts members ascending when they would make an intset (all
// integers, at most limit of them), the order Redis replies in.
func sortIntset(members [][]byte, limit int) {
	if len(members) > limit {
		return
	}
	for _, m := range members {
		if _, ok := collection.ParseInt(m); !ok {
			return
		}
	}
	slices.SortFunc(members, func(a, b []byte) int {
		x, _ := strconv.ParseInt(string(a), 10, 64)
		y, _ := strconv.ParseInt(string(b), 10, 64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
}
