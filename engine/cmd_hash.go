package engine

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/internal/glob"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/store"
)

// The hash commands. Every collection command's request has its key in
// Key and its other arguments, unparsed, in Args (argv's keys shape);
// the handlers read them as Redis 7.0 does, in its order of checks.

var txtWrongType = "WRONGTYPE Operation against a key holding the wrong kind of value"

// collError answers a store error of a collection command.
// collCount answers a collection command's count (HLEN, SADD, LPUSH …),
// or the store's error as collError words it.
func (e *Engine) collCount(n int, err error) {
	if err != nil {
		e.collError(err)
		return
	}
	e.integer(int64(n))
}

func (e *Engine) collError(err error) {
	if errors.Is(err, store.ErrWrongType) {
		e.errText(command.Err, txtWrongType)
		return
	}
	e.storeError(err)
}

// notString answers WRONGTYPE and reports true when key holds a
// collection: the string commands' check, one predictable branch while
// the database holds no collection.
func (e *Engine) notString(key []byte) bool {
	if e.st.Collections() == 0 || e.st.TypeOf(key) <= store.TypeString {
		return false
	}
	e.errText(command.Err, txtWrongType)
	return true
}

// hset answers HSET and HMSET key field value [field value ...].
func (e *Engine) hset(_ *Session, r *command.Request) {
	if len(r.Args)%2 != 0 {
		e.wrongArgs(r.Op)
		return
	}
	n, err := e.st.HSet(r.Key, r.Args, false)
	switch {
	case err != nil:
		e.collError(err)
	case r.Op == command.OpHMSet:
		e.ok()
	default:
		e.integer(int64(n))
	}
}

func (e *Engine) hsetnx(_ *Session, r *command.Request) {
	e.collCount(e.st.HSet(r.Key, r.Args, true))
}

func (e *Engine) hget(_ *Session, r *command.Request) {
	v, found, err := e.st.HGet(e.scratch[:0], r.Key, r.Args[0])
	e.collBulk(v, found, err)
}

func (e *Engine) hmget(_ *Session, r *command.Request) {
	if t := e.st.TypeOf(r.Key); t != store.TypeNone && t != store.TypeHash {
		e.collError(store.ErrWrongType)
		return
	}
	e.begin(command.Array)
	for _, f := range r.Args {
		start := len(e.scratch)
		var found bool
		e.scratch, found, _ = e.st.HGet(e.scratch, r.Key, f)
		if !found {
			e.add(command.Nil, 0, nil)
			continue
		}
		e.fixes = append(e.fixes, fixup{item: len(e.res.Items), start: start, end: len(e.scratch)})
		e.add(command.Bulk, 0, nil)
	}
	e.end()
}

// hgetall answers HGETALL (a map), HKEYS and HVALS (arrays).
func (e *Engine) hgetall(_ *Session, r *command.Request) {
	kind := command.Array
	if r.Op == command.OpHGetAll {
		kind = command.Map
	}
	e.begin(kind)
	_, err := e.st.HRange(r.Key, func(f, v []byte) bool {
		if r.Op != command.OpHVals {
			e.addCopy(command.Bulk, f)
		}
		if r.Op != command.OpHKeys {
			e.addCopy(command.Bulk, v)
		}
		return true
	})
	if err != nil {
		e.collError(err)
		return
	}
	e.end()
}

func (e *Engine) hdel(_ *Session, r *command.Request) {
	e.collCount(e.st.HDel(r.Key, r.Args))
}

// hexists answers HEXISTS and HSTRLEN.
func (e *Engine) hexists(_ *Session, r *command.Request) {
	v, found, err := e.st.HGet(e.scratch[:0], r.Key, r.Args[0])
	e.scratch = v[:0]
	switch {
	case err != nil:
		e.collError(err)
	case r.Op == command.OpHStrLen:
		e.integer(int64(len(v)))
	default:
		e.integer(b2i(found))
	}
}

func (e *Engine) hlen(_ *Session, r *command.Request) {
	e.collCount(e.st.HLen(r.Key))
}

func (e *Engine) hincrby(_ *Session, r *command.Request) {
	delta, ok := resp.ParseInt(r.Args[1])
	if !ok {
		e.errText(command.NotInteger, "ERR value is not an integer or out of range")
		return
	}
	n, err := e.st.HIncrBy(r.Key, r.Args[0], delta)
	switch {
	case errors.Is(err, store.ErrNotInteger):
		e.errText(command.NotInteger, "ERR hash value is not an integer")
	case err != nil:
		e.collError(err)
	default:
		e.integer(n)
	}
}

func (e *Engine) hincrbyfloat(_ *Session, r *command.Request) {
	field, incr := r.Args[0], r.Args[1]
	if _, notFloat, overflow := e.ld.add(e.num[:0], txtZero, incr); notFloat {
		e.errText(command.NotFloat, "ERR value is not a valid float")
		return
	} else if overflow {
		e.errText(command.Err, "ERR value is NaN or Infinity")
		return
	}
	cur, found, err := e.st.HGet(e.scratch[:0], r.Key, field)
	e.scratch = cur[:0]
	if err != nil {
		e.collError(err)
		return
	}
	if !found {
		cur = append(cur[:0], txtZero...)
	}
	sum, notFloat, overflow := e.ld.add(e.num[:0], cur, incr)
	e.num = sum[:0]
	switch {
	case notFloat:
		e.errText(command.NotFloat, "ERR hash value is not a float")
		return
	case overflow:
		e.errText(command.Overflow, "ERR increment would produce NaN or Infinity")
		return
	}
	e.pair[0], e.pair[1] = field, sum
	_, err = e.st.HSet(r.Key, e.pair[:], false)
	e.pair[0], e.pair[1] = nil, nil
	if err != nil {
		e.collError(err)
		return
	}
	e.bulk(sum)
}

// hrandfield answers HRANDFIELD key [count [WITHVALUES]].
func (e *Engine) hrandfield(s *Session, r *command.Request) {
	if len(r.Args) == 0 {
		found, err := e.st.HRandom(r.Key, rand.Uint64(), func(f, _ []byte) {
			e.scratch = append(e.scratch[:0], f...)
		})
		switch {
		case err != nil:
			e.collError(err)
		case found:
			e.bulk(e.scratch)
		default:
			e.null()
		}
		return
	}
	withValues := len(r.Args) == 2 && command.EqualFold(r.Args[1], "withvalues")
	if len(r.Args) > 2 || (len(r.Args) == 2 && !withValues) {
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
	if withValues && (l < -math.MaxInt64/2 || l > math.MaxInt64/2) {
		e.errText(command.OutOfRange, "ERR value is out of range")
		return
	}
	e.randomFields(s, r.Key, l, withValues, true)
}

// maxRandomRepeats bounds the reply of HRANDFIELD and SRANDMEMBER with a
// negative count, which Redis answers however large: the reply is built
// whole before it is sent, so -1000000000 would take the loop's memory and
// time (docs/commands.md).
const maxRandomRepeats = 1 << 22

// randomFields answers HRANDFIELD (hash) or SRANDMEMBER (set, !hash) with a
// count: count > 0 distinct elements (the whole collection when it has no
// more), count < 0 that many with repetition.
func (e *Engine) randomFields(s *Session, key []byte, count int64, withValues, hash bool) {
	size, err := e.collSize(key, hash)
	if err != nil {
		e.collError(err)
		return
	}
	if count < -maxRandomRepeats && size > 0 {
		e.errText(command.OutOfRange, "ERR count is too large: goblin returns at most 4194304 elements with repetitions per call")
		return
	}
	pairs := withValues && s.resp3
	e.begin(command.Array)
	if size == 0 || count == 0 {
		e.end()
		return
	}
	add := func(f, v []byte) {
		if pairs {
			e.push(command.Array)
		}
		e.addCopy(command.Bulk, f)
		if withValues {
			e.addCopy(command.Bulk, v)
		}
		if pairs {
			e.pop()
		}
	}
	switch {
	case count < 0 || count == 1:
		n := count
		if n < 0 {
			n = -n
		}
		for i := int64(0); i < n; i++ {
			if hash {
				_, _ = e.st.HRandom(key, rand.Uint64(), add)
			} else {
				v, _, _ := e.st.SRandom(e.num[:0], key, rand.Uint64())
				e.num = v[:0]
				add(v, nil)
			}
		}
	case count >= int64(size):
		if hash {
			_, _ = e.st.HRange(key, func(f, v []byte) bool { add(f, v); return true })
		} else {
			_, _ = e.st.SRange(key, func(m []byte) bool { add(m, nil); return true })
		}
	default:
		// count distinct of more: pick by reservoir sampling over one walk.
		e.pickDistinct(key, int(count), size, hash, add)
	}
	e.end()
}

// pickDistinct adds count distinct elements of key's hash or set, chosen at
// random (selection sampling: each kept with probability left/remaining).
func (e *Engine) pickDistinct(key []byte, count, size int, hash bool, add func(f, v []byte)) {
	left, remaining := count, size
	take := func() bool {
		keep := left > 0 && rand.IntN(remaining) < left
		remaining--
		if keep {
			left--
		}
		return keep
	}
	if hash {
		_, _ = e.st.HRange(key, func(f, v []byte) bool {
			if take() {
				add(f, v)
			}
			return left > 0
		})
		return
	}
	_, _ = e.st.SRange(key, func(m []byte) bool {
		if take() {
			add(m, nil)
		}
		return left > 0
	})
}

func (e *Engine) collSize(key []byte, hash bool) (int, error) {
	if hash {
		return e.st.HLen(key)
	}
	return e.st.SCard(key)
}

// scanArgs reads HSCAN's and SSCAN's cursor [MATCH pattern] [COUNT count]
// from args; ok is false when it has answered an error.
func (e *Engine) scanCursor(arg []byte) (uint64, bool) {
	c, err := strconv.ParseUint(string(arg), 10, 64)
	if err != nil {
		e.errText(command.Err, "ERR invalid cursor")
		return 0, false
	}
	return c, true
}

func (e *Engine) scanOptions(args [][]byte) (match []byte, count int, ok bool) {
	count = 10
	for i := 0; i < len(args); i += 2 {
		switch {
		case i+1 >= len(args):
			e.errText(command.Syntax, "ERR syntax error")
			return nil, 0, false
		case command.EqualFold(args[i], "count"):
			n, ok := resp.ParseInt(args[i+1])
			if !ok {
				e.errText(command.NotInteger, "ERR value is not an integer or out of range")
				return nil, 0, false
			}
			if n < 1 {
				e.errText(command.Syntax, "ERR syntax error")
				return nil, 0, false
			}
			count = int(min(n, 1<<30))
		case command.EqualFold(args[i], "match"):
			match = args[i+1]
			if len(match) == 1 && match[0] == '*' {
				match = nil
			}
		default:
			e.errText(command.Syntax, "ERR syntax error")
			return nil, 0, false
		}
	}
	return match, count, true
}

// hscan answers HSCAN and SSCAN key cursor [MATCH pattern] [COUNT count].
func (e *Engine) hscan(_ *Session, r *command.Request) {
	cursor, ok := e.scanCursor(r.Args[0])
	if !ok {
		return
	}
	hash := r.Op == command.OpHScan
	want := store.TypeSet
	if hash {
		want = store.TypeHash
	}
	t := e.st.TypeOf(r.Key)
	if t != store.TypeNone && t != want {
		e.collError(store.ErrWrongType)
		return
	}
	e.begin(command.Array)
	e.add(command.Bulk, 0, nil) // the cursor, set below
	e.push(command.Array)
	var next uint64
	if t != store.TypeNone {
		match, count, ok := e.scanOptions(r.Args[1:])
		if !ok {
			return
		}
		fn := func(f, v []byte) {
			if match != nil && !glob.Match(match, f) {
				return
			}
			e.addCopy(command.Bulk, f)
			if hash {
				e.addCopy(command.Bulk, v)
			}
		}
		if hash {
			next, _ = e.st.HScan(r.Key, cursor, count, fn)
		} else {
			next, _ = e.st.SScan(r.Key, cursor, count, func(m []byte) { fn(m, nil) })
		}
	}
	e.pop()
	start := len(e.scratch)
	e.scratch = strconv.AppendUint(e.scratch, next, 10)
	e.fixes = append(e.fixes, fixup{item: 0, start: start, end: len(e.scratch)})
	e.end()
}

// collBulk answers a collection read that appended its value into
// e.scratch: the store's error (WRONGTYPE...), the value as a bulk string,
// or the null bulk string when there is none. It hands e.scratch's
// capacity back for the next request.
func (e *Engine) collBulk(v []byte, found bool, err error) {
	e.scratch = v[:0]
	switch {
	case err != nil:
		e.collError(err)
	case found:
		e.bulk(v)
	default:
		e.null()
	}
}
