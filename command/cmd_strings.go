package command

import (
	"math"

	"github.com/goblin-kv/goblin/reply"
	"github.com/goblin-kv/goblin/request"
	"github.com/goblin-kv/goblin/store"
)

func (e *Engine) get(_ *Session, r *request.Request) {
	val, found := e.st.Get(e.scratch[:0], r.Key)
	e.scratch = val[:0]
	if found {
		e.bulk(val)
	} else {
		e.null()
	}
}

func (e *Engine) set(_ *Session, r *request.Request) {
	const nxxx = request.FlagNX | request.FlagXX
	if r.Flags&nxxx == nxxx || (r.Flags&request.FlagKeepTTL != 0 && r.Expiry != request.ExpiryNone) {
		e.errText(reply.Syntax, "ERR syntax error")
		return
	}
	so := store.SetOptions{
		NX: r.Flags&request.FlagNX != 0, XX: r.Flags&request.FlagXX != 0,
		KeepTTL: r.Flags&request.FlagKeepTTL != 0, Get: r.Flags&request.FlagGet != 0,
	}
	if r.Expiry != request.ExpiryNone {
		at, ok := e.absExpire(r.Expiry, r.Expire)
		if !ok {
			e.errText(reply.InvalidExpire, "ERR invalid expire time in 'set' command")
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

// incr answers INCR, DECR, INCRBY and DECRBY.
func (e *Engine) incr(_ *Session, r *request.Request) {
	delta := int64(1)
	switch r.Op {
	case request.OpDecr:
		delta = -1
	case request.OpIncrBy:
		delta = r.Amount
	case request.OpDecrBy:
		if r.Amount == math.MinInt64 {
			e.errText(reply.Overflow, "ERR decrement would overflow")
			return
		}
		delta = -r.Amount
	}
	n, err := e.st.IncrBy(r.Key, delta)
	if err != nil {
		e.storeError(err)
		return
	}
	e.integer(n)
}

func (e *Engine) mget(_ *Session, r *request.Request) {
	e.begin(reply.Array)
	e.getInto(r.Key)
	for _, k := range r.Args {
		e.getInto(k)
	}
	e.end()
}

// getInto adds key's value (or nil) to the reply being built.
func (e *Engine) getInto(key []byte) {
	start := len(e.scratch)
	var found bool
	e.scratch, found = e.st.Get(e.scratch, key)
	if !found {
		e.add(reply.Nil, 0, nil)
		return
	}
	e.fixes = append(e.fixes, fixup{item: len(e.res.Items), start: start, end: len(e.scratch)})
	e.add(reply.Bulk, 0, nil)
}

func (e *Engine) mset(_ *Session, r *request.Request) {
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
}

func (e *Engine) setPair(k, v []byte) bool {
	if _, _, _, err := e.st.Set(e.scratch[:0], k, v, store.SetOptions{}); err != nil {
		e.storeError(err)
		return false
	}
	return true
}
