package rdb

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"
)

// Kind is the logical type of a value, independent of its encoding.
type Kind uint8

// The kinds goblin stores.
const (
	KindString Kind = iota + 1
	KindList
	KindSet
	KindZSet
	KindHash
)

func (k Kind) String() string {
	switch k {
	case KindString:
		return "string"
	case KindList:
		return "list"
	case KindSet:
		return "set"
	case KindZSet:
		return "zset"
	case KindHash:
		return "hash"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one value of any kind. Only the fields of its Kind are used:
//   - KindString: Str.
//   - KindList: Items, the elements in order.
//   - KindSet: Items, the members (no duplicates).
//   - KindHash: Items, fields and values alternating: f1, v1, f2, v2, …
//   - KindZSet: Items, the members, and Scores, each member's score.
type Value struct {
	Kind   Kind
	Str    []byte
	Items  [][]byte
	Scores []float64
	// Large says a hash, set or sorted set is kept in its large encoding
	// (hashtable, skiplist) whatever its size: one that shrank below the
	// compact thresholds keeps it in Redis, which writes a value by its
	// encoding, so the Encoder writes the plain form (HASH, SET, ZSET_2).
	Large bool
}

// NoExpiry is the expiry of a key that does not expire.
const NoExpiry = math.MinInt64

// Errors the Encoder returns, wrapped with the key they concern.
var (
	// ErrEmpty: Redis never writes an empty collection (its loader skips
	// them), so neither does the Encoder.
	ErrEmpty = errors.New("rdb: empty collection")
	// ErrBadValue: the value cannot be written: a NaN score, Scores not
	// parallel to Items, an odd hash, an unknown Kind, or a duplicate set
	// member Redis's integrity check would refuse.
	ErrBadValue = errors.New("rdb: value cannot be encoded")
	// ErrState: a method called out of order (a key before WriteHeader or
	// SelectDB, anything after Close).
	ErrState = errors.New("rdb: encoder used out of order")
)

// Limits choose between the compact and the plain encoding of a
// collection, as Redis's configuration of the same names does. The zero
// value means Redis 7.0's defaults.
type Limits struct {
	HashMaxListpackEntries int // hash-max-listpack-entries, default 512
	HashMaxListpackValue   int // hash-max-listpack-value, default 64
	ZSetMaxListpackEntries int // zset-max-listpack-entries, default 128
	ZSetMaxListpackValue   int // zset-max-listpack-value, default 64
	SetMaxIntsetEntries    int // set-max-intset-entries, default 512
	ListMaxListpackSize    int // list-max-listpack-size, bytes per quicklist node (-2 = 8192), default 8192
}

func (l *Limits) ensureDefaults() {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&l.HashMaxListpackEntries, 512)
	def(&l.HashMaxListpackValue, 64)
	def(&l.ZSetMaxListpackEntries, 128)
	def(&l.ZSetMaxListpackValue, 64)
	def(&l.SetMaxIntsetEntries, 512)
	def(&l.ListMaxListpackSize, 8192)
}

// EncoderOptions configures an Encoder. The zero value writes what a
// default Redis 7.0 writes: LZF on, checksum on, default limits.
type EncoderOptions struct {
	// NoCompression turns LZF off (rdbcompression no).
	NoCompression bool
	// NoChecksum writes a zero CRC (rdbchecksum no); readers then skip the check.
	NoChecksum bool
	// RedisVersion is the redis-ver AUX field; default "7.0.15", the
	// Redis whose format this is.
	RedisVersion string
	// Now is the ctime AUX field; default time.Now().
	Now time.Time
	// UsedMemory is the used-mem AUX field.
	UsedMemory int64
	// Aux holds more AUX fields, key then value, written after the
	// standard ones (repl-id, repl-offset, … for a replica's snapshot).
	Aux [][2]string
	Limits
}

// Encoder writes an RDB file: WriteHeader, then per database SelectDB
// followed by its keys, then Close. After the first error every call
// returns it. Writing a key allocates nothing once the scratch buffers have
// grown to the largest value.
type Encoder struct {
	w     io.Writer
	opts  EncoderOptions
	crc   uint64
	buf   []byte
	state int // 0 new, 1 header written, 2 in a db, 3 closed
	err   error
	vw    valueWriter
}

const flushAt = 64 << 10

// NewEncoder returns an Encoder writing to w. It buffers: nothing reaches
// w until 64 KiB are pending or Close.
func NewEncoder(w io.Writer, opts EncoderOptions) *Encoder {
	opts.Limits.ensureDefaults()
	if opts.RedisVersion == "" {
		opts.RedisVersion = "7.0.15"
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	e := &Encoder{w: w, opts: opts, buf: make([]byte, 0, flushAt+4096)}
	e.vw.limits = opts.Limits
	e.vw.compress = !opts.NoCompression
	return e
}

// WriteHeader writes the magic and the AUX fields, in Redis's order:
// redis-ver, redis-bits, ctime, used-mem, the caller's Aux, aof-base.
func (e *Encoder) WriteHeader() error {
	if e.err != nil {
		return e.err
	}
	if e.state != 0 {
		return e.fail(fmt.Errorf("%w: WriteHeader twice", ErrState))
	}
	e.buf = append(e.buf, "REDIS0010"...)
	e.aux("redis-ver", e.opts.RedisVersion)
	e.aux("redis-bits", "64")
	e.aux("ctime", strconv.FormatInt(e.opts.Now.Unix(), 10))
	e.aux("used-mem", strconv.FormatInt(e.opts.UsedMemory, 10))
	for _, kv := range e.opts.Aux {
		e.aux(kv[0], kv[1])
	}
	e.aux("aof-base", "0")
	e.state = 1
	return e.flush(false)
}

func (e *Encoder) aux(k, v string) {
	e.buf = append(e.buf, opAux)
	e.buf = e.vw.appendString(e.buf, []byte(k))
	e.buf = e.vw.appendString(e.buf, []byte(v))
}

// SelectDB starts database db. keys and expires are the RESIZEDB hints: how
// many keys follow and how many of them have an expiry (a loader sizes its
// tables from them; Redis does not check them). Redis writes only
// non-empty databases.
func (e *Encoder) SelectDB(db int, keys, expires uint64) error {
	if e.err != nil {
		return e.err
	}
	if e.state != 1 && e.state != 2 {
		return e.fail(fmt.Errorf("%w: SelectDB before WriteHeader or after Close", ErrState))
	}
	if db < 0 {
		return e.fail(fmt.Errorf("%w: database %d", ErrBadValue, db))
	}
	e.buf = appendLen(append(e.buf, opSelectDB), uint64(db))
	e.buf = appendLen(append(e.buf, opResizeDB), keys)
	e.buf = appendLen(e.buf, expires)
	e.state = 2
	return e.flush(false)
}

// Write writes one key. expiry is an absolute Unix time in milliseconds, or
// NoExpiry. The value's encoding is chosen as Redis 7.0 would hold it in
// memory (see Limits): a string as an integer, LZF or raw; a list as a
// quicklist of listpacks; a set as an intset or a plain set; a hash and a
// zset as a listpack or their plain form.
func (e *Encoder) Write(key []byte, v *Value, expiry int64) error {
	return e.WriteAccess(key, v, expiry, -1, -1)
}

// WriteAccess is Write with the key's access record before it, as Redis
// 7.0's rdbSaveKeyValuePair writes it under an LRU maxmemory-policy (idle:
// RDB_OPCODE_IDLE, the seconds since its last access) or an LFU one (freq:
// RDB_OPCODE_FREQ, its counter, 0–255); a negative value writes none.
func (e *Encoder) WriteAccess(key []byte, v *Value, expiry, idle int64, freq int) error {
	if e.err != nil {
		return e.err
	}
	if e.state != 2 {
		return e.fail(fmt.Errorf("%w: key %q before SelectDB or after Close", ErrState, key))
	}
	mark := len(e.buf)
	if expiry != NoExpiry {
		e.buf = binary.LittleEndian.AppendUint64(append(e.buf, opExpireTimeMs), uint64(expiry))
	}
	if idle >= 0 {
		e.buf = appendLen(append(e.buf, opIdle), uint64(idle))
	}
	if freq >= 0 {
		e.buf = append(e.buf, opFreq, byte(min(freq, 255)))
	}
	tpos := len(e.buf)
	e.buf = append(e.buf, 0)
	e.buf = e.vw.appendString(e.buf, key)
	var t byte
	var err error
	e.buf, t, err = e.vw.appendValue(e.buf, v)
	if err != nil {
		e.buf = e.buf[:mark]
		return fmt.Errorf("key %q: %w", key, err) // not sticky: nothing was written
	}
	e.buf[tpos] = t
	return e.flush(false)
}

// Close writes EOF and the CRC64 and flushes. It does not close the
// underlying writer.
func (e *Encoder) Close() error {
	if e.err != nil {
		return e.err
	}
	if e.state == 0 || e.state == 3 {
		return e.fail(fmt.Errorf("%w: Close before WriteHeader or twice", ErrState))
	}
	e.buf = append(e.buf, opEOF)
	e.crc = CRC64(e.crc, e.buf)
	sum := e.crc
	if e.opts.NoChecksum {
		sum = 0
	}
	e.state = 3
	if _, err := e.w.Write(binary.LittleEndian.AppendUint64(e.buf, sum)); err != nil {
		return e.fail(err)
	}
	e.buf = e.buf[:0]
	return nil
}

func (e *Encoder) flush(force bool) error {
	if len(e.buf) < flushAt && !force {
		return nil
	}
	e.crc = CRC64(e.crc, e.buf)
	if _, err := e.w.Write(e.buf); err != nil {
		return e.fail(err)
	}
	e.buf = e.buf[:0]
	return nil
}

func (e *Encoder) fail(err error) error {
	e.err = err
	return err
}

// AppendDump appends v's DUMP payload, as Redis's DUMP returns it: type
// byte, value, RDB version (2 bytes LE) and CRC64 (8 bytes LE). It uses the
// Encoder's options and scratch buffers and needs no header, so an Encoder
// made with a nil writer serves for payloads alone.
func (e *Encoder) AppendDump(dst []byte, v *Value) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 0)
	dst, t, err := e.vw.appendValue(dst, v)
	if err != nil {
		return dst[:start], err
	}
	dst[start] = t
	dst = binary.LittleEndian.AppendUint16(dst, Version)
	return binary.LittleEndian.AppendUint64(dst, CRC64(0, dst[start:])), nil
}

// AppendDump appends v's DUMP payload with Redis's default options. An
// Encoder's AppendDump reuses its scratch buffers; this one allocates them.
func AppendDump(dst []byte, v *Value) ([]byte, error) {
	var w Encoder
	w.vw.limits.ensureDefaults()
	w.vw.compress = true
	return w.AppendDump(dst, v)
}

// valueWriter turns values into RDB bytes, keeping scratch buffers so
// that steady-state writing allocates nothing.
type valueWriter struct {
	limits   Limits
	compress bool
	lzf      []byte
	ht       *lzfTable
	blob     []byte
	ints     []int64
	idx      []int32
}

// appendString appends s as rdbSaveRawString does: as an integer if it is
// a canonical one fitting 32 bits, LZF-compressed if that is on, s is over
// 20 bytes and compression saves at least 4 bytes, else raw.
func (w *valueWriter) appendString(b, s []byte) []byte {
	if len(s) <= 11 {
		if v, ok := parseInt(s); ok && v >= math.MinInt32 && v <= math.MaxInt32 {
			return appendIntString(b, v)
		}
	}
	if w.compress && len(s) > 20 {
		if w.ht == nil {
			w.ht = new(lzfTable)
		}
		w.lzf = growTo(w.lzf, len(s)-4)
		if n := lzfCompress(w.lzf, s, w.ht); n > 0 {
			b = append(b, 0xC3)
			b = appendLen(b, uint64(n))
			b = appendLen(b, uint64(len(s)))
			return append(b, w.lzf[:n]...)
		}
	}
	return append(appendLen(b, uint64(len(s))), s...)
}

func appendIntString(b []byte, v int64) []byte {
	switch {
	case v >= math.MinInt8 && v <= math.MaxInt8:
		return append(b, 0xC0, byte(v))
	case v >= math.MinInt16 && v <= math.MaxInt16:
		return binary.LittleEndian.AppendUint16(append(b, 0xC1), uint16(v))
	default:
		return binary.LittleEndian.AppendUint32(append(b, 0xC2), uint32(v))
	}
}

// appendValue appends v's body and returns the type byte to go before it.
func (w *valueWriter) appendValue(b []byte, v *Value) ([]byte, byte, error) {
	switch v.Kind {
	case KindString:
		return w.appendString(b, v.Str), typeString, nil
	case KindList:
		if len(v.Items) == 0 {
			return b, 0, ErrEmpty
		}
		return w.appendList(b, v.Items), typeListQuicklist2, nil
	case KindSet:
		if len(v.Items) == 0 {
			return b, 0, ErrEmpty
		}
		return w.appendSet(b, v.Items, v.Large)
	case KindHash:
		if len(v.Items) == 0 {
			return b, 0, ErrEmpty
		}
		if len(v.Items)%2 != 0 {
			return b, 0, fmt.Errorf("%w: hash with an odd number of items", ErrBadValue)
		}
		return w.appendHash(b, v.Items, v.Large)
	case KindZSet:
		if len(v.Items) == 0 {
			return b, 0, ErrEmpty
		}
		if len(v.Scores) != len(v.Items) {
			return b, 0, fmt.Errorf("%w: zset with %d members and %d scores", ErrBadValue, len(v.Items), len(v.Scores))
		}
		return w.appendZSet(b, v.Items, v.Scores, v.Large)
	}
	return b, 0, fmt.Errorf("%w: unknown kind %d", ErrBadValue, v.Kind)
}

// appendList writes a quicklist 2 of packed nodes, each a listpack of at
// most ListMaxListpackSize bytes (a single larger element gets a node of
// its own), as Redis's list-max-listpack-size -2 makes them.
func (w *valueWriter) appendList(b []byte, items [][]byte) []byte {
	limit := w.limits.ListMaxListpackSize
	nodes := 0
	size := 0
	for _, it := range items {
		s := lpEntrySize(it)
		if size == 0 || size+s > limit {
			nodes++
			size = lpHeaderSize + 1
		}
		size += s
	}
	b = appendLen(b, uint64(nodes))
	i := 0
	for n := 0; n < nodes; n++ {
		lp := lpStart(w.blob[:0])
		count := 0
		for ; i < len(items); i++ {
			s := lpEntrySize(items[i])
			if count > 0 && len(lp)+1+s > limit {
				break
			}
			lp = lpAppend(lp, items[i])
			count++
		}
		lp = lpFinish(lp, 0, count)
		w.blob = lp
		b = append(b, containerPacked)
		b = w.appendString(b, lp)
	}
	return b
}

func (w *valueWriter) appendSet(b []byte, items [][]byte, large bool) ([]byte, byte, error) {
	if len(items) <= w.limits.SetMaxIntsetEntries && !large {
		ints := w.ints[:0]
		for _, it := range items {
			v, ok := parseInt(it)
			if !ok {
				ints = nil
				break
			}
			ints = append(ints, v)
		}
		if ints != nil {
			w.ints = ints
			slices.Sort(ints)
			width := 2
			for i, v := range ints {
				if i > 0 && ints[i-1] == v {
					return b, 0, fmt.Errorf("%w: duplicate set member %d", ErrBadValue, v)
				}
				if v < math.MinInt32 || v > math.MaxInt32 {
					width = 8
				} else if (v < math.MinInt16 || v > math.MaxInt16) && width < 4 {
					width = 4
				}
			}
			is := binary.LittleEndian.AppendUint32(w.blob[:0], uint32(width))
			is = binary.LittleEndian.AppendUint32(is, uint32(len(ints)))
			for _, v := range ints {
				switch width {
				case 2:
					is = binary.LittleEndian.AppendUint16(is, uint16(v))
				case 4:
					is = binary.LittleEndian.AppendUint32(is, uint32(v))
				default:
					is = binary.LittleEndian.AppendUint64(is, uint64(v))
				}
			}
			w.blob = is
			return w.appendString(b, is), typeSetIntset, nil
		}
	}
	b = appendLen(b, uint64(len(items)))
	for _, it := range items {
		b = w.appendString(b, it)
	}
	return b, typeSet, nil
}

func (w *valueWriter) appendHash(b []byte, items [][]byte, large bool) ([]byte, byte, error) {
	small := len(items)/2 <= w.limits.HashMaxListpackEntries && !large
	for i := 0; small && i < len(items); i++ {
		small = len(items[i]) <= w.limits.HashMaxListpackValue
	}
	if small {
		lp := lpStart(w.blob[:0])
		for _, it := range items {
			lp = lpAppend(lp, it)
		}
		lp = lpFinish(lp, 0, len(items))
		w.blob = lp
		return w.appendString(b, lp), typeHashListpack, nil
	}
	b = appendLen(b, uint64(len(items)/2))
	for _, it := range items {
		b = w.appendString(b, it)
	}
	return b, typeHash, nil
}

// appendZSet writes a listpack sorted by (score, member), as zzlInsert
// keeps it, or the ZSET_2 form highest score first, as Redis walks its
// skiplist.
func (w *valueWriter) appendZSet(b []byte, members [][]byte, scores []float64, large bool) ([]byte, byte, error) {
	small := len(members) <= w.limits.ZSetMaxListpackEntries && !large
	for i, m := range members {
		if math.IsNaN(scores[i]) {
			return b, 0, fmt.Errorf("%w: NaN score for member %q", ErrBadValue, m)
		}
		if len(m) > w.limits.ZSetMaxListpackValue {
			small = false
		}
	}
	idx := w.idx[:0]
	for i := range members {
		idx = append(idx, int32(i))
	}
	w.idx = idx
	slices.SortFunc(idx, func(x, y int32) int {
		if c := cmp.Compare(scores[x], scores[y]); c != 0 {
			return c
		}
		return bytes.Compare(members[x], members[y])
	})
	if small {
		lp := lpStart(w.blob[:0])
		for _, i := range idx {
			lp = lpAppend(lp, members[i])
			lp = lpAppendScore(lp, scores[i])
		}
		lp = lpFinish(lp, 0, 2*len(idx))
		w.blob = lp
		return w.appendString(b, lp), typeZSetListpack, nil
	}
	b = appendLen(b, uint64(len(members)))
	for k := len(idx) - 1; k >= 0; k-- {
		i := idx[k]
		b = w.appendString(b, members[i])
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(scores[i]))
	}
	return b, typeZSet2, nil
}

// lpAppendScore appends a zset score as zzlInsertAt does: an integer entry
// when double2ll accepts it, else its %.17g text.
func lpAppendScore(lp []byte, f float64) []byte {
	const half = math.MaxInt64 / 2
	if f >= -half && f <= half && f == math.Trunc(f) {
		return lpAppendInt(lp, int64(f))
	}
	var tmp [32]byte
	var s []byte
	switch {
	case math.IsInf(f, 1):
		s = append(tmp[:0], "inf"...)
	case math.IsInf(f, -1):
		s = append(tmp[:0], "-inf"...)
	default:
		s = strconv.AppendFloat(tmp[:0], f, 'g', 17, 64)
	}
	return lpAppend(lp, s)
}
