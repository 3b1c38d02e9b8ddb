package engine

import (
	"errors"
	"math"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/store"
)

func (e *Engine) get(_ *Session, r *command.Request) {
	val, found := e.st.Get(e.scratch[:0], r.Key)
	e.scratch = val[:0]
	if found {
		e.bulk(val)
	} else if !e.notString(r.Key) {
		e.null()
	}
}

func (e *Engine) set(_ *Session, r *command.Request) {
	const nxxx = command.FlagNX | command.FlagXX
	if r.Flags&nxxx == nxxx || (r.Flags&command.FlagKeepTTL != 0 && r.Expiry != command.ExpiryNone) {
		e.errText(command.Syntax, "ERR syntax error")
		return
	}
	so := store.SetOptions{
		NX: r.Flags&command.FlagNX != 0, XX: r.Flags&command.FlagXX != 0,
		KeepTTL: r.Flags&command.FlagKeepTTL != 0, Get: r.Flags&command.FlagGet != 0,
	}
	if r.Expiry != command.ExpiryNone {
		at, ok := e.absExpire(r.Expiry, r.Expire)
		if !ok {
			e.errText(command.InvalidExpire, "ERR invalid expire time in 'set' command")
			return
		}
		so.ExpireAt = at
	}
	if so.Get && e.notString(r.Key) {
		return
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
func (e *Engine) incr(_ *Session, r *command.Request) {
	delta := int64(1)
	switch r.Op {
	case command.OpDecr:
		delta = -1
	case command.OpIncrBy:
		delta = r.Amount
	case command.OpDecrBy:
		if r.Amount == math.MinInt64 {
			e.errText(command.Overflow, "ERR decrement would overflow")
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

func (e *Engine) mget(_ *Session, r *command.Request) {
	e.begin(command.Array)
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
		e.add(command.Nil, 0, nil)
		return
	}
	e.fixes = append(e.fixes, fixup{item: len(e.res.Items), start: start, end: len(e.scratch)})
	e.add(command.Bulk, 0, nil)
}

func (e *Engine) mset(_ *Session, r *command.Request) {
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

func (e *Engine) setNX(_ *Session, r *command.Request) {
	_, _, applied, err := e.st.Set(nil, r.Key, r.Value, store.SetOptions{NX: true})
	if err != nil {
		e.storeError(err)
		return
	}
	e.integer(b2i(applied))
}

// setEx answers SETEX and PSETEX key time value.
func (e *Engine) setEx(_ *Session, r *command.Request) {
	at, ok := e.absExpire(r.Expiry, r.Expire)
	if !ok {
		e.fail(command.InvalidExpire, "ERR invalid expire time in '", bs(command.Name(r.Op)), "' command")
		return
	}
	if _, _, _, err := e.st.Set(nil, r.Key, r.Value, store.SetOptions{ExpireAt: at}); err != nil {
		e.storeError(err)
		return
	}
	e.ok()
}

func (e *Engine) getSet(_ *Session, r *command.Request) {
	if e.notString(r.Key) {
		return
	}
	old, hadOld, _, err := e.st.Set(e.scratch[:0], r.Key, r.Value, store.SetOptions{Get: true})
	e.scratch = old[:0]
	switch {
	case err != nil:
		e.storeError(err)
	case hadOld:
		e.bulk(old)
	default:
		e.null()
	}
}

func (e *Engine) getDel(_ *Session, r *command.Request) {
	if e.notString(r.Key) {
		return
	}
	val, found := e.st.GetDel(e.scratch[:0], r.Key)
	e.scratch = val[:0]
	if found {
		e.bulk(val)
	} else {
		e.null()
	}
}

// getEx answers GETEX key [EX|PX|EXAT|PXAT time|PERSIST] in Redis's order:
// a missing key is nil whatever the time, then the time is checked, then
// the value is answered and the expiry changed.
func (e *Engine) getEx(_ *Session, r *command.Request) {
	if e.notString(r.Key) {
		return
	}
	val, found := e.st.Get(e.scratch[:0], r.Key)
	e.scratch = val[:0]
	if !found {
		e.null()
		return
	}
	var at int64
	switch r.Expiry {
	case command.ExpiryNone:
	case command.ExpiryPersist:
		e.st.Persist(r.Key)
	default:
		if r.Flags&command.FlagBadTime != 0 {
			e.errText(command.NotInteger, "ERR value is not an integer or out of range")
			return
		}
		var ok bool
		if at, ok = e.absExpire(r.Expiry, r.Expire); !ok {
			e.errText(command.InvalidExpire, "ERR invalid expire time in 'getex' command")
			return
		}
		e.st.ExpireAt(r.Key, at) // a time already past deletes the key
	}
	e.bulk(val)
}

// Redis's text for a value past its size limit (proto-max-bulk-len there,
// the store's MaxValueLen here).
const errTooLarge = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"

func (e *Engine) appendCmd(_ *Session, r *command.Request) {
	if e.notString(r.Key) {
		return
	}
	n, err := e.st.Append(r.Key, r.Value)
	if err != nil {
		e.sizeError(err)
		return
	}
	e.integer(int64(n))
}

// sizeError answers a store error of a command that builds a string,
// where Redis says the string would be too large.
func (e *Engine) sizeError(err error) {
	if errors.Is(err, store.ErrValueTooLong) {
		e.errText(command.ValueTooLong, errTooLarge)
		return
	}
	e.storeError(err)
}

func (e *Engine) strLen(_ *Session, r *command.Request) {
	if e.notString(r.Key) {
		return
	}
	e.integer(int64(e.st.StrLen(r.Key)))
}

// getRange answers GETRANGE and SUBSTR: an empty string for a missing key
// or an empty range.
func (e *Engine) getRange(_ *Session, r *command.Request) {
	if e.notString(r.Key) {
		return
	}
	val := e.st.GetRange(e.scratch[:0], r.Key, r.Amount, r.Amount2)
	e.scratch = val[:0]
	e.bulk(val)
}

func (e *Engine) setRange(_ *Session, r *command.Request) {
	if e.notString(r.Key) {
		return
	}
	if r.Amount < 0 {
		e.errText(command.OutOfRange, "ERR offset is out of range")
		return
	}
	if r.Amount > math.MaxInt32*256 { // past any value size: refuse before converting
		e.errText(command.ValueTooLong, errTooLarge)
		return
	}
	n, err := e.st.SetRange(r.Key, int(r.Amount), r.Value)
	if err != nil {
		e.sizeError(err)
		return
	}
	e.integer(int64(n))
}

var txtZero = []byte("0")

// incrByFloat answers INCRBYFLOAT key increment in Redis's long double
// arithmetic (longdouble.go). The result is kept as a string, as Redis
// keeps it, even when it spells an integer.
func (e *Engine) incrByFloat(_ *Session, r *command.Request) {
	if e.notString(r.Key) {
		return
	}
	cur, found := e.st.Read(e.scratch[:0], r.Key)
	if !found {
		cur = append(cur[:0], txtZero...)
	}
	e.scratch = cur[:0]
	sum, notFloat, overflow := e.ld.add(e.num[:0], cur, r.Value)
	e.num = sum[:0]
	switch {
	case notFloat:
		e.errText(command.NotFloat, "ERR value is not a valid float")
		return
	case overflow:
		e.errText(command.Overflow, "ERR increment would produce NaN or Infinity")
		return
	}
	if _, _, _, err := e.st.Set(nil, r.Key, sum, store.SetOptions{KeepTTL: true, Kind: store.AsString}); err != nil {
		e.storeError(err)
		return
	}
	e.bulk(sum)
}

// msetNX answers MSETNX: every pair, or none when any key exists.
func (e *Engine) msetNX(_ *Session, r *command.Request) {
	if len(r.Args)%2 != 0 {
		e.wrongArgs(r.Op)
		return
	}
	any := e.st.Exists(r.Key)
	for i := 0; i < len(r.Args) && !any; i += 2 {
		any = e.st.Exists(r.Args[i])
	}
	if any {
		e.integer(0)
		return
	}
	e.mset(nil, r)
	if e.res.Kind != command.Error {
		e.integer(1)
	}
}
