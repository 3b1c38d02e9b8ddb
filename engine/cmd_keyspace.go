package engine

import (
	"math"
	"strconv"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/internal/glob"
	"github.com/goblin-kv/goblin/proto/argv"
	"github.com/goblin-kv/goblin/store"
)

func (e *Engine) del(_ *Session, r *command.Request) {
	n := b2i(e.st.Del(r.Key))
	for _, k := range r.Args {
		n += b2i(e.st.Del(k))
	}
	e.integer(n)
}

func (e *Engine) exists(_ *Session, r *command.Request) {
	n := b2i(e.st.Exists(r.Key))
	for _, k := range r.Args {
		n += b2i(e.st.Exists(k))
	}
	e.integer(n)
}

func (e *Engine) ttl(_ *Session, r *command.Request) {
	ms := e.st.PTTL(r.Key)
	if ms >= 0 && r.Op == command.OpTTL {
		ms = (ms + 500) / 1000
	}
	e.integer(ms)
}

func (e *Engine) persist(_ *Session, r *command.Request) { e.integer(b2i(e.st.Persist(r.Key))) }

func (e *Engine) keyType(_ *Session, r *command.Request) {
	e.simple(bs(e.st.TypeOf(r.Key).String()))
}

func (e *Engine) dbsize(*Session, *command.Request) { e.integer(int64(e.st.Len())) }

// expire answers EXPIRE, PEXPIRE, EXPIREAT and PEXPIREAT key time
// [NX|XX|GT|LT] as Redis 7 does.
func (e *Engine) expire(_ *Session, r *command.Request) {
	if r.Flags&^(command.FlagNX|command.FlagXX|command.FlagGT|command.FlagLT) != 0 {
		e.errText(command.Syntax, "ERR syntax error")
		return
	}
	if text := argv.ExpireFlagsError(r.Flags); text != "" {
		e.errText(command.Syntax, text)
		return
	}
	when := r.Amount
	now := e.clock.NowMillis()
	seconds := r.Op == command.OpExpire || r.Op == command.OpExpireAt
	base := now // the relative forms count from now
	if r.Op == command.OpExpireAt || r.Op == command.OpPExpireAt {
		base = 0
	}
	if (seconds && (when > math.MaxInt64/1000 || when < math.MinInt64/1000)) ||
		(seconds && when*1000 > math.MaxInt64-base) || (!seconds && when > math.MaxInt64-base) {
		e.fail(command.InvalidExpire, "ERR invalid expire time in '", bs(command.Name(r.Op)), "' command")
		return
	}
	if seconds {
		when *= 1000
	}
	when += base
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
		if (r.Flags&command.FlagNX != 0 && current != -1) ||
			(r.Flags&command.FlagXX != 0 && current == -1) ||
			(r.Flags&command.FlagGT != 0 && (current == -1 || when <= current)) ||
			(r.Flags&command.FlagLT != 0 && current != -1 && when >= current) {
			e.integer(0)
			return
		}
	}
	e.integer(b2i(e.st.ExpireAt(r.Key, when)))
}

func (e *Engine) touch(_ *Session, r *command.Request) {
	n := b2i(e.st.Touch(r.Key))
	for _, k := range r.Args {
		n += b2i(e.st.Touch(k))
	}
	e.integer(n)
}

// rename answers RENAME and RENAMENX key newkey.
func (e *Engine) rename(_ *Session, r *command.Request) {
	nx := r.Op == command.OpRenameNX
	res, err := e.st.Rename(r.Key, r.Args[0], nx)
	switch {
	case err != nil:
		e.storeError(err)
	case res == store.NoSuchKey:
		e.errText(command.NoSuchKey, "ERR no such key")
	case res == store.DestTaken:
		e.integer(0)
	case nx:
		e.integer(1)
	default:
		e.ok()
	}
}

func (e *Engine) randomKey(*Session, *command.Request) {
	key, ok := e.st.Random(e.scratch[:0])
	e.scratch = key[:0]
	if ok {
		e.bulk(key)
	} else {
		e.null()
	}
}

// expireTime answers EXPIRETIME and PEXPIRETIME.
func (e *Engine) expireTime(_ *Session, r *command.Request) {
	at := e.st.ExpireTime(r.Key)
	if at >= 0 && r.Op == command.OpExpireTime {
		at = (at + 500) / 1000
	}
	e.integer(at)
}

// keys answers KEYS pattern: every live key that matches ("*" matches
// every key without matching, so an empty key is listed too, as in Redis).
func (e *Engine) keys(_ *Session, r *command.Request) {
	all := len(r.Value) == 1 && r.Value[0] == '*'
	e.begin(command.Array)
	var cursor uint64
	for {
		cursor = e.st.Scan(cursor, 1024, func(k []byte) {
			if all || glob.Match(r.Value, k) {
				e.addCopy(command.Bulk, k)
			}
		})
		if cursor == 0 {
			break
		}
	}
	e.end()
}

// scan answers SCAN cursor [MATCH p] [COUNT n] [TYPE t] with [next
// cursor, [keys]]. The cursor is a slot id: a key's slot never moves while
// it lives (index resizes move index entries, not slots), so every key
// present for a whole iteration is returned once.
func (e *Engine) scan(_ *Session, r *command.Request) {
	count := int(r.Amount2)
	if count <= 0 {
		count = 10
	}
	match := r.Flags&command.FlagMatch != 0 && !(len(r.Value) == 1 && r.Value[0] == '*')
	typed := r.Flags&command.FlagType != 0
	e.begin(command.Array)
	e.add(command.Bulk, 0, nil) // the cursor, set below
	e.push(command.Array)
	next := e.st.ScanTyped(uint64(r.Amount), count, func(k []byte, t store.Type) {
		if (!typed || command.EqualFold(r.Args[0], t.String())) && (!match || glob.Match(r.Value, k)) {
			e.addCopy(command.Bulk, k)
		}
	})
	e.pop()
	start := len(e.scratch)
	e.scratch = strconv.AppendUint(e.scratch, next, 10)
	e.fixes = append(e.fixes, fixup{item: 0, start: start, end: len(e.scratch)})
	e.end()
}

// objectEncoding answers OBJECT ENCODING key: int, embstr or raw, nil when
// missing.
func (e *Engine) objectEncoding(_ *Session, r *command.Request) {
	if enc := e.st.EncodingOf(r.Key); enc != store.EncodingNone {
		e.bulk(bs(enc.String()))
	} else {
		e.null()
	}
}

// objectFreq answers OBJECT FREQ: under an LFU policy the key's access
// counter, decayed (store/lfu.go), which this command does not move;
// under another policy, for a key that exists, Redis's error.
func (e *Engine) objectFreq(_ *Session, r *command.Request) {
	n, ok := e.st.Freq(r.Key)
	switch {
	case !ok:
		e.null()
	case !e.st.Options().Eviction.LFU():
		e.errText(command.Err, "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
	default:
		e.integer(n)
	}
}

// objectIdleTime answers OBJECT IDLETIME: the seconds since the key's
// last access by the store's LRU clock (store/access.go), which this
// command does not move; under an LFU policy, which keeps no access time,
// Redis's error.
func (e *Engine) objectIdleTime(_ *Session, r *command.Request) {
	n, ok := e.st.IdleTime(r.Key)
	switch {
	case !ok:
		e.null()
	case e.st.Options().Eviction.LFU():
		e.errText(command.Err, "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
	default:
		e.integer(n)
	}
}

// objectRefCount answers OBJECT REFCOUNT as Redis reports it: the shared
// objects of the integers 0 to 9999 count as 2147483647 (INT_MAX) unless
// an LRU or LFU policy runs under a memory cap; everything else is 1.
func (e *Engine) objectRefCount(_ *Session, r *command.Request) {
	enc := e.st.EncodingOf(r.Key)
	if enc == store.EncodingNone {
		e.null()
		return
	}
	e.integer(e.refCount(r.Key, enc))
}

// refCount is the reference count Redis would show for key, of encoding
// enc: its shared integers' (0–9999 without an LRU or LFU policy under a
// cap, Redis's MAXMEMORY_FLAG_NO_SHARED_INTEGERS) or 1.
func (e *Engine) refCount(key []byte, enc store.Encoding) int64 {
	if enc == store.EncodingInt {
		o := e.st.Options()
		val, _ := e.st.Read(e.scratch[:0], key)
		e.scratch = val[:0]
		n, err := strconv.ParseInt(string(val), 10, 64)
		if err == nil && n >= 0 && n < 10000 && (o.MaxMemory == 0 || (o.Eviction != store.AllKeysLRU && o.Eviction != store.VolatileLRU && !o.Eviction.LFU())) {
			return math.MaxInt32
		}
	}
	return 1
}

func (e *Engine) memoryUsage(_ *Session, r *command.Request) {
	if n := e.st.MemoryUsage(r.Key); n > 0 {
		e.integer(n)
	} else {
		e.null()
	}
}
