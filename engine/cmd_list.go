package engine

import (
	"math"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/store"
)

// The list commands (the non-blocking ones).

// lpush answers LPUSH, RPUSH, LPUSHX and RPUSHX.
func (e *Engine) lpush(_ *Session, r *command.Request) {
	front := r.Op == command.OpLPush || r.Op == command.OpLPushX
	create := r.Op == command.OpLPush || r.Op == command.OpRPush
	e.collCount(e.st.Push(r.Key, r.Args, front, create))
}

// listInt reads an index argument; false when it has answered the error.
func (e *Engine) listInt(b []byte) (int, bool) {
	n, ok := resp.ParseInt(b)
	if !ok {
		e.errText(command.NotInteger, "ERR value is not an integer or out of range")
		return 0, false
	}
	return int(n), true
}

// lpop answers LPOP and RPOP key [count].
func (e *Engine) lpop(_ *Session, r *command.Request) {
	front := r.Op == command.OpLPop
	if len(r.Args) == 0 {
		v, found, err := e.st.Pop(e.scratch[:0], r.Key, front)
		e.collBulk(v, found, err)
		return
	}
	if len(r.Args) > 1 {
		e.wrongArgs(r.Op)
		return
	}
	count, ok := resp.ParseInt(r.Args[0])
	if !ok || count < 0 {
		e.errText(command.OutOfRange, "ERR value is out of range, must be positive")
		return
	}
	n, err := e.st.LLen(r.Key)
	switch {
	case err != nil:
		e.collError(err)
		return
	case n == 0:
		e.res.Kind = command.NilArray
		return
	}
	e.begin(command.Array)
	for i := int64(0); i < count; i++ {
		start := len(e.scratch)
		var found bool
		if e.scratch, found, _ = e.st.Pop(e.scratch, r.Key, front); !found {
			break
		}
		e.fixes = append(e.fixes, fixup{item: len(e.res.Items), start: start, end: len(e.scratch)})
		e.add(command.Bulk, 0, nil)
	}
	e.end()
}

func (e *Engine) llen(_ *Session, r *command.Request) {
	e.collCount(e.st.LLen(r.Key))
}

func (e *Engine) lindex(_ *Session, r *command.Request) {
	i, ok := e.listInt(r.Args[0])
	if !ok {
		return
	}
	v, found, err := e.st.LIndex(e.scratch[:0], r.Key, i)
	e.collBulk(v, found, err)
}

func (e *Engine) lset(_ *Session, r *command.Request) {
	i, ok := e.listInt(r.Args[0])
	if !ok {
		return
	}
	switch err := e.st.LSet(r.Key, i, r.Args[1]); err {
	case nil:
		e.ok()
	case store.ErrNoSuchKey:
		e.errText(command.NoSuchKey, "ERR no such key")
	case store.ErrIndexRange:
		e.errText(command.OutOfRange, "ERR index out of range")
	default:
		e.collError(err)
	}
}

func (e *Engine) lrange(_ *Session, r *command.Request) {
	start, ok := e.listInt(r.Args[0])
	if !ok {
		return
	}
	stop, ok := e.listInt(r.Args[1])
	if !ok {
		return
	}
	e.begin(command.Array)
	if _, err := e.st.LRange(r.Key, start, stop, func(v []byte) bool {
		e.addCopy(command.Bulk, v)
		return true
	}); err != nil {
		e.collError(err)
		return
	}
	e.end()
}

func (e *Engine) ltrim(_ *Session, r *command.Request) {
	start, ok := e.listInt(r.Args[0])
	if !ok {
		return
	}
	stop, ok := e.listInt(r.Args[1])
	if !ok {
		return
	}
	if err := e.st.LTrim(r.Key, start, stop); err != nil {
		e.collError(err)
		return
	}
	e.ok()
}

// lrem answers LREM key count element: the first count matches from the
// head (count > 0), from the tail (count < 0), or all (0).
func (e *Engine) lrem(_ *Session, r *command.Request) {
	count, ok := e.listInt(r.Args[0])
	if !ok {
		return
	}
	idx := e.intList[:0]
	pos := 0
	_, err := e.st.LRange(r.Key, 0, -1, func(v []byte) bool {
		if string(v) == string(r.Args[1]) {
			idx = append(idx, pos)
		}
		pos++
		return true
	})
	if err != nil {
		e.collError(err)
		return
	}
	switch {
	case count > 0 && count < len(idx):
		idx = idx[:count]
	case count < 0 && -count < len(idx):
		idx = idx[len(idx)+count:]
	}
	for k := len(idx) - 1; k >= 0; k-- {
		_ = e.st.LDelete(r.Key, idx[k])
	}
	e.intList = idx[:0]
	e.integer(int64(len(idx)))
}

// linsert answers LINSERT key BEFORE|AFTER pivot element.
func (e *Engine) linsert(_ *Session, r *command.Request) {
	after := false
	switch {
	case command.EqualFold(r.Args[0], "after"):
		after = true
	case !command.EqualFold(r.Args[0], "before"):
		e.errText(command.Syntax, "ERR syntax error")
		return
	}
	at, pos := -1, 0
	found, err := e.st.LRange(r.Key, 0, -1, func(v []byte) bool {
		if string(v) == string(r.Args[1]) {
			at = pos
			return false
		}
		pos++
		return true
	})
	switch {
	case err != nil:
		e.collError(err)
		return
	case !found:
		e.integer(0)
		return
	case at < 0:
		e.integer(-1)
		return
	}
	if after {
		at++
	}
	if err := e.st.LInsert(r.Key, at, r.Args[2]); err != nil {
		e.collError(err)
		return
	}
	n, _ := e.st.LLen(r.Key)
	e.integer(int64(n))
}

// lpos answers LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len].
func (e *Engine) lpos(_ *Session, r *command.Request) {
	rank, count, maxlen := int64(1), int64(-1), int64(0)
	for i := 1; i < len(r.Args); i += 2 {
		if i+1 >= len(r.Args) {
			e.errText(command.Syntax, "ERR syntax error")
			return
		}
		v, ok := resp.ParseInt(r.Args[i+1])
		if !ok {
			e.errText(command.NotInteger, "ERR value is not an integer or out of range")
			return
		}
		switch {
		case command.EqualFold(r.Args[i], "rank"):
			if v == math.MinInt64 { // Redis 7.0 negates it to itself: the first match from the tail
				v = -1
			}
			if v == 0 {
				e.errText(command.Err, "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list")
				return
			}
			rank = v
		case command.EqualFold(r.Args[i], "count"):
			if v < 0 {
				e.errText(command.Err, "ERR COUNT can't be negative")
				return
			}
			count = v
		case command.EqualFold(r.Args[i], "maxlen"):
			if v < 0 {
				e.errText(command.Err, "ERR MAXLEN can't be negative")
				return
			}
			maxlen = v
		default:
			e.errText(command.Syntax, "ERR syntax error")
			return
		}
	}
	n, err := e.st.LLen(r.Key)
	if err != nil {
		e.collError(err)
		return
	}
	if count >= 0 {
		e.begin(command.Array)
	}
	matches := int64(0)
	want := count
	if count == 0 {
		want = math.MaxInt64
	} else if count < 0 {
		want = 1
	}
	skip := rank - 1
	if rank < 0 {
		skip = -rank - 1
	}
	first := int64(-1)
	visit := func(i int64, v []byte) bool {
		if string(v) == string(r.Args[0]) {
			if skip > 0 {
				skip--
				return true
			}
			matches++
			if count >= 0 {
				e.addInt(i)
			} else if first < 0 {
				first = i
			}
			if matches >= want {
				return false
			}
		}
		return true
	}
	if n > 0 {
		limit := int64(n)
		if maxlen > 0 && maxlen < limit {
			limit = maxlen
		}
		if rank > 0 {
			i := int64(0)
			_, _ = e.st.LRange(r.Key, 0, int(limit-1), func(v []byte) bool {
				ok := visit(i, v)
				i++
				return ok
			})
		} else {
			for i := int64(n) - 1; i >= int64(n)-limit; i-- {
				v, _, _ := e.st.LIndex(e.num[:0], r.Key, int(i))
				e.num = v[:0]
				if !visit(i, v) {
					break
				}
			}
		}
	}
	switch {
	case count >= 0:
		e.end()
	case first >= 0:
		e.integer(first)
	default:
		e.null()
	}
}

// lmove answers LMOVE source destination LEFT|RIGHT LEFT|RIGHT and
// RPOPLPUSH source destination.
func (e *Engine) lmove(_ *Session, r *command.Request) {
	src, dst := r.Key, r.Args[0]
	fromLeft, toLeft := false, true
	if r.Op == command.OpLMove {
		var ok bool
		if fromLeft, ok = leftRight(r.Args[1]); !ok {
			e.errText(command.Syntax, "ERR syntax error")
			return
		}
		if toLeft, ok = leftRight(r.Args[2]); !ok {
			e.errText(command.Syntax, "ERR syntax error")
			return
		}
	}
	n, err := e.st.LLen(src)
	switch {
	case err != nil:
		e.collError(err)
		return
	case n == 0:
		e.null()
		return
	}
	if t := e.st.TypeOf(dst); t != store.TypeNone && t != store.TypeList {
		e.collError(store.ErrWrongType)
		return
	}
	v, _, _ := e.st.Pop(e.scratch[:0], src, fromLeft)
	e.scratch = v[:0]
	e.pair[0] = v
	_, err = e.st.Push(dst, e.pair[:1], toLeft, true)
	e.pair[0] = nil
	if err != nil {
		e.collError(err)
		return
	}
	e.bulk(v)
}

func leftRight(b []byte) (left, ok bool) {
	switch {
	case command.EqualFold(b, "left"):
		return true, true
	case command.EqualFold(b, "right"):
		return false, true
	}
	return false, false
}
