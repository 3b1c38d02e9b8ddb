package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
	"unsafe"
)

// Errors the Decoder returns, inside an *Error that names the offset.
var (
	// ErrCorrupt: the input is not a well-formed RDB file or DUMP payload
	// (bad magic, an unknown opcode or type, a value whose encoding is
	// malformed, a truncated file).
	ErrCorrupt = errors.New("rdb: corrupt input")
	// ErrUnsupported: the input holds something goblin does not store: a
	// stream, a module value, module AUX data or a function library.
	ErrUnsupported = errors.New("rdb: unsupported type")
	// ErrChecksum: the CRC64 does not match the content.
	ErrChecksum = errors.New("rdb: checksum mismatch")
	// ErrVersion: the RDB version is one the Decoder cannot read; for a
	// DUMP payload, one later than Version (as RESTORE in Redis 7.0).
	ErrVersion = errors.New("rdb: unsupported version")
)

// Error describes why the input was refused and where.
type Error struct {
	Offset int64  // byte offset in the input where the problem was found
	Key    []byte // the key being read, if any
	Type   string // the key's type, if known
	Reason string
	Err    error // ErrCorrupt, ErrUnsupported, ErrChecksum, ErrVersion or a read error
}

func (e *Error) Error() string {
	s := "rdb: offset " + strconv.FormatInt(e.Offset, 10)
	if e.Key != nil {
		s += ": key " + strconv.Quote(string(e.Key))
	}
	if e.Type != "" {
		s += " (" + e.Type + ")"
	}
	return s + ": " + e.Reason
}

func (e *Error) Unwrap() error { return e.Err }

// Entry is one key read by the Decoder. Its slices point into the
// Decoder's buffers and are valid until the next call to Next.
type Entry struct {
	DB     int
	Key    []byte
	Expiry int64 // absolute Unix ms, or NoExpiry
	Type   byte  // the RDB type byte the value was read from (TypeName names it)
	// Idle is the key's LRU idle time in seconds (RDB_OPCODE_IDLE, written
	// by a Redis under an LRU maxmemory-policy) and Freq its LFU counter
	// (RDB_OPCODE_FREQ, under an LFU policy); -1 when the file has none.
	Idle int64
	Freq int
	Value
}

// DecoderOptions configures a Decoder. The zero value reads every key,
// expired or not, and refuses unsupported types.
type DecoderOptions struct {
	// SkipUnsupported skips streams, module values, module AUX data and
	// function libraries instead of refusing the input; Stats counts them.
	// A pre-GA module value (type 6) cannot be skipped and is refused.
	SkipUnsupported bool
	// DropExpired drops keys whose expiry is before Now, as a Redis
	// master does when it loads; Stats counts them.
	DropExpired bool
	// Now is the time DropExpired compares with; default time.Now().
	Now time.Time
	// OnAux, if set, is called for each AUX field.
	OnAux func(key, value []byte)
	// OnResizeDB, if set, is called with each RESIZEDB hint.
	OnResizeDB func(db int, keys, expires uint64)
}

// Stats counts what a Decoder has read.
type Stats struct {
	Keys     int64 // keys returned by Next
	Expired  int64 // keys dropped by DropExpired
	Skipped  int64 // values, AUX records and functions skipped by SkipUnsupported
	Empty    int64 // empty collections, dropped as Redis drops them
	Bytes    int64 // bytes consumed
	Checksum bool  // a non-zero CRC64 was present and matched
}

// Decoder reads an RDB file from an io.Reader, one key at a time:
//
//	d := rdb.NewDecoder(f, rdb.DecoderOptions{})
//	for d.Next() {
//		e := d.Entry()
//		…
//	}
//	if err := d.Err(); err != nil { … }
//
// It reads everything Redis 7.0 writes for strings, lists, sets, hashes and
// sorted sets, and the older encodings of RDB versions 1 to 9 (ziplist,
// zipmap, quicklist of ziplists, text scores). Buffers are reused from key
// to key, so steady-state decoding allocates only when a value is larger
// than any before it.
type Decoder struct {
	r       reader
	opts    DecoderOptions
	nowMs   int64
	version int
	started bool
	done    bool
	err     error
	db      int
	entry   Entry
	stats   Stats

	key    []byte
	arena  []byte
	offs   []int
	blob   []byte
	lzfIn  []byte
	tmp    []byte
	scores []float64
}

// NewDecoder returns a Decoder reading from r. It buffers its input.
func NewDecoder(r io.Reader, opts DecoderOptions) *Decoder {
	d := &Decoder{opts: opts}
	d.r.reset(r)
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	d.nowMs = opts.Now.UnixMilli()
	return d
}

// Version is the file's RDB version, known after the first Next.
func (d *Decoder) Version() int { return d.version }

// Stats returns the counts so far.
func (d *Decoder) Stats() Stats {
	s := d.stats
	s.Bytes = d.r.offset()
	return s
}

// Entry returns the key Next has just read.
func (d *Decoder) Entry() *Entry { return &d.entry }

// Err returns the error that stopped Next, or nil at a clean end.
func (d *Decoder) Err() error { return d.err }

// Decode calls fn for every key, stopping at the first error fn returns.
func (d *Decoder) Decode(fn func(*Entry) error) error {
	for d.Next() {
		if err := fn(&d.entry); err != nil {
			return err
		}
	}
	return d.err
}

// fail records an error at offset off and returns false for Next.
func (d *Decoder) fail(off int64, err error, reason string) bool {
	if d.err == nil {
		e := &Error{Offset: off, Reason: reason, Err: err}
		if d.entry.Key != nil {
			e.Key = append([]byte(nil), d.entry.Key...)
			e.Type = TypeName(d.entry.Type)
		}
		d.err = e
	}
	return false
}

// ioFail turns a read error into a Decoder error.
func (d *Decoder) ioFail(err error) bool {
	if errors.Is(err, errShort) {
		return d.fail(d.r.offset(), ErrCorrupt, "truncated input")
	}
	if pe, ok := err.(*parseError); ok {
		return d.fail(pe.off, pe.err, pe.reason)
	}
	return d.fail(d.r.offset(), err, "read error: "+err.Error())
}

// parseError is raised inside value parsing and becomes an *Error.
type parseError struct {
	off    int64
	err    error
	reason string
}

func (e *parseError) Error() string { return e.reason }

func (d *Decoder) corrupt(reason string) error {
	return &parseError{off: d.r.offset(), err: ErrCorrupt, reason: reason}
}

func (d *Decoder) readHeader() bool {
	p, err := d.r.next(9)
	if err != nil {
		return d.fail(0, ErrCorrupt, "too short for the REDIS magic")
	}
	if string(p[:5]) != "REDIS" {
		return d.fail(0, ErrCorrupt, "no REDIS magic")
	}
	v := 0
	for _, c := range p[5:9] {
		if c < '0' || c > '9' {
			return d.fail(5, ErrCorrupt, "version is not 4 digits")
		}
		v = v*10 + int(c-'0')
	}
	if v < 1 || v > maxReadVersion {
		return d.fail(5, ErrVersion, fmt.Sprintf("can't handle RDB format version %d", v))
	}
	d.version = v
	return true
}

// Next reads the next key. It returns false at the end of the file or on
// an error (see Err).
func (d *Decoder) Next() bool {
	if d.err != nil || d.done {
		return false
	}
	if !d.started {
		d.started = true
		if !d.readHeader() {
			return false
		}
	}
	d.entry.Key = nil
	expiry := int64(NoExpiry)
	d.entry.Idle, d.entry.Freq = -1, -1
	for {
		off := d.r.offset()
		op, err := d.r.readByte()
		if err != nil {
			return d.ioFail(err)
		}
		switch op {
		case opAux:
			var err error
			if d.key, err = d.readString(d.key[:0]); err != nil {
				return d.ioFail(err)
			}
			if d.tmp, err = d.readString(d.tmp[:0]); err != nil {
				return d.ioFail(err)
			}
			if d.opts.OnAux != nil {
				d.opts.OnAux(d.key, d.tmp)
			}
		case opSelectDB:
			n, err := d.readLen()
			if err != nil {
				return d.ioFail(err)
			}
			if n > math.MaxInt32 {
				return d.fail(off, ErrCorrupt, "database number out of range")
			}
			d.db = int(n)
		case opResizeDB:
			keys, err := d.readLen()
			if err != nil {
				return d.ioFail(err)
			}
			exp, err := d.readLen()
			if err != nil {
				return d.ioFail(err)
			}
			if d.opts.OnResizeDB != nil {
				d.opts.OnResizeDB(d.db, keys, exp)
			}
		case opExpireTimeMs:
			p, err := d.r.next(8)
			if err != nil {
				return d.ioFail(err)
			}
			expiry = int64(binary.LittleEndian.Uint64(p))
		case opExpireTime:
			p, err := d.r.next(4)
			if err != nil {
				return d.ioFail(err)
			}
			expiry = int64(int32(binary.LittleEndian.Uint32(p))) * 1000
		case opIdle:
			n, err := d.readLen()
			if err != nil {
				return d.ioFail(err)
			}
			d.entry.Idle = int64(min(n, math.MaxInt64))
		case opFreq:
			b, err := d.r.readByte()
			if err != nil {
				return d.ioFail(err)
			}
			d.entry.Freq = int(b)
		case opModuleAux:
			id, err := d.readLen()
			if err != nil {
				return d.ioFail(err)
			}
			if !d.opts.SkipUnsupported {
				return d.fail(off, ErrUnsupported, "AUX data of module type "+moduleName(id)+", which goblin does not have")
			}
			if err := d.skipModuleFields(); err != nil {
				return d.ioFail(err)
			}
			d.stats.Skipped++
		case opFunction2:
			if !d.opts.SkipUnsupported {
				return d.fail(off, ErrUnsupported, "function library (goblin has no FUNCTION)")
			}
			if err := d.skipString(); err != nil {
				return d.ioFail(err)
			}
			d.stats.Skipped++
		case opFunction:
			if !d.opts.SkipUnsupported {
				return d.fail(off, ErrUnsupported, "function (goblin has no FUNCTION)")
			}
			for range 2 {
				if err := d.skipString(); err != nil {
					return d.ioFail(err)
				}
			}
			hasDesc, err := d.readLen()
			if err != nil {
				return d.ioFail(err)
			}
			if hasDesc != 0 {
				if err := d.skipString(); err != nil {
					return d.ioFail(err)
				}
			}
			if err := d.skipString(); err != nil {
				return d.ioFail(err)
			}
			d.stats.Skipped++
		case opEOF:
			d.done = true
			if d.version < 5 {
				return false
			}
			sum := d.r.sum()
			p, err := d.r.next(8)
			if err != nil {
				return d.ioFail(err)
			}
			if want := binary.LittleEndian.Uint64(p); want != 0 {
				if want != sum {
					return d.fail(off+1, ErrChecksum, fmt.Sprintf("CRC64 is %#016x, content gives %#016x", want, sum))
				}
				d.stats.Checksum = true
			}
			return false
		default:
			if op >= byte(len(typeNames)) || typeNames[op] == "" {
				return d.fail(off, ErrCorrupt, fmt.Sprintf("unknown opcode or type %#02x", op))
			}
			ok, keep := d.readKey(off, op, expiry)
			if !ok {
				return false
			}
			if !keep {
				expiry = NoExpiry
				d.entry.Key = nil
				d.entry.Idle, d.entry.Freq = -1, -1
				continue
			}
			d.stats.Keys++
			return true
		}
	}
}

// readKey reads a key and its value; keep is false when the key was
// skipped (unsupported, expired or empty).
func (d *Decoder) readKey(off int64, t byte, expiry int64) (ok, keep bool) {
	var err error
	d.entry.Type = t
	d.entry.Key = nil
	if d.key, err = d.readString(d.key[:0]); err != nil {
		return d.ioFail(err), false
	}
	d.entry.Key = d.key
	d.entry.DB = d.db
	d.entry.Expiry = expiry
	switch t {
	case typeModule:
		return d.fail(off, ErrUnsupported, "pre-GA module value, which cannot be skipped"), false
	case typeModule2:
		id, err := d.readLen()
		if err != nil {
			return d.ioFail(err), false
		}
		if !d.opts.SkipUnsupported {
			return d.fail(off, ErrUnsupported, "value of module type "+moduleName(id)+", which goblin does not store"), false
		}
		if err := d.skipModuleFields(); err != nil {
			return d.ioFail(err), false
		}
		d.stats.Skipped++
		return true, false
	case typeStreamListpacks, typeStreamListpack2, typeStreamListpack3:
		if !d.opts.SkipUnsupported {
			return d.fail(off, ErrUnsupported, "stream, a type goblin does not store"), false
		}
		if err := d.skipStream(t); err != nil {
			return d.ioFail(err), false
		}
		d.stats.Skipped++
		return true, false
	}
	if err := d.readValue(t); err != nil {
		return d.ioFail(err), false
	}
	if d.entry.Kind != KindString && len(d.entry.Items) == 0 {
		d.stats.Empty++
		return true, false
	}
	if d.opts.DropExpired && expiry != NoExpiry && expiry < d.nowMs {
		d.stats.Expired++
		return true, false
	}
	return true, true
}

// readLen reads an RDB length; a special-encoding byte is an error here.
func (d *Decoder) readLen() (uint64, error) {
	n, enc, err := d.readLenEnc()
	if err == nil && enc {
		return 0, d.corrupt("string encoding where a length was expected")
	}
	return n, err
}

func (d *Decoder) readLenEnc() (uint64, bool, error) {
	b, err := d.r.readByte()
	if err != nil {
		return 0, false, err
	}
	switch b >> 6 {
	case 0:
		return uint64(b & 0x3F), false, nil
	case 1:
		c, err := d.r.readByte()
		return uint64(b&0x3F)<<8 | uint64(c), false, err
	case 2:
		switch b {
		case 0x80:
			p, err := d.r.next(4)
			if err != nil {
				return 0, false, err
			}
			return uint64(binary.BigEndian.Uint32(p)), false, nil
		case 0x81:
			p, err := d.r.next(8)
			if err != nil {
				return 0, false, err
			}
			return binary.BigEndian.Uint64(p), false, nil
		}
		return 0, false, d.corrupt(fmt.Sprintf("unknown length encoding %#02x", b))
	}
	return uint64(b & 0x3F), true, nil
}

// readString appends the next RDB string to dst.
func (d *Decoder) readString(dst []byte) ([]byte, error) {
	off := d.r.offset()
	n, enc, err := d.readLenEnc()
	if err != nil {
		return dst, err
	}
	if !enc {
		return d.r.appendN(dst, n)
	}
	switch n {
	case 0:
		b, err := d.r.readByte()
		return strconv.AppendInt(dst, int64(int8(b)), 10), err
	case 1:
		p, err := d.r.next(2)
		if err != nil {
			return dst, err
		}
		return strconv.AppendInt(dst, int64(int16(binary.LittleEndian.Uint16(p))), 10), nil
	case 2:
		p, err := d.r.next(4)
		if err != nil {
			return dst, err
		}
		return strconv.AppendInt(dst, int64(int32(binary.LittleEndian.Uint32(p))), 10), nil
	case 3:
		clen, err := d.readLen()
		if err != nil {
			return dst, err
		}
		ulen, err := d.readLen()
		if err != nil {
			return dst, err
		}
		// A back-reference of 3 bytes yields at most 264: anything
		// claiming more than 88 bytes per input byte is corrupt, and
		// checking before allocating keeps a forged length harmless.
		if clen == 0 || ulen > 88*clen+32 || ulen > lpMaxSafety*4 {
			return dst, &parseError{off, ErrCorrupt, "LZF lengths impossible"}
		}
		if d.lzfIn, err = d.r.appendN(d.lzfIn[:0], clen); err != nil {
			return dst, err
		}
		out, ok := lzfDecompress(dst, d.lzfIn, int(ulen))
		if !ok {
			return dst, &parseError{off, ErrCorrupt, "invalid LZF compressed string"}
		}
		return out, nil
	}
	return dst, &parseError{off, ErrCorrupt, fmt.Sprintf("unknown string encoding %d", n)}
}

func (d *Decoder) skipString() error {
	n, enc, err := d.readLenEnc()
	if err != nil {
		return err
	}
	if !enc {
		return d.r.skip(n)
	}
	switch n {
	case 0, 1, 2:
		return d.r.skip(1 << n)
	case 3:
		clen, err := d.readLen()
		if err != nil {
			return err
		}
		if _, err := d.readLen(); err != nil {
			return err
		}
		return d.r.skip(clen)
	}
	return d.corrupt(fmt.Sprintf("unknown string encoding %d", n))
}

// moduleName decodes the module type name from a module id: nine
// characters of 6 bits above a 10-bit encoding version
// (moduleTypeNameByID).
func moduleName(id uint64) string {
	const charset = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	var name [9]byte
	id >>= 10
	for j := range 9 {
		name[8-j] = charset[id&63]
		id >>= 6
	}
	return string(name[:])
}

// skipModuleFields skips the tagged fields of a MODULE_2 value or a
// MODULE_AUX record up to their end tag, as redis-check-rdb does.
func (d *Decoder) skipModuleFields() error {
	for {
		tag, err := d.readLen()
		if err != nil {
			return err
		}
		switch tag {
		case 0:
			return nil
		case 1, 2:
			_, err = d.readLen()
		case 3:
			err = d.r.skip(4)
		case 4:
			err = d.r.skip(8)
		case 5:
			err = d.skipString()
		default:
			return d.corrupt(fmt.Sprintf("unknown module field tag %d", tag))
		}
		if err != nil {
			return err
		}
	}
}

// skipStream skips a stream value of type t (15, 19 or 21).
func (d *Decoder) skipStream(t byte) error {
	lens := func(n int) error {
		for range n {
			if _, err := d.readLen(); err != nil {
				return err
			}
		}
		return nil
	}
	n, err := d.readLen()
	if err != nil {
		return err
	}
	for ; n > 0; n-- {
		if err := d.skipString(); err != nil { // master ID
			return err
		}
		if err := d.skipString(); err != nil { // listpack
			return err
		}
	}
	if err := lens(3); err != nil { // length, last id
		return err
	}
	if t >= typeStreamListpack2 {
		if err := lens(5); err != nil { // first id, max deleted id, entries added
			return err
		}
	}
	groups, err := d.readLen()
	if err != nil {
		return err
	}
	for ; groups > 0; groups-- {
		if err := d.skipString(); err != nil {
			return err
		}
		k := 2
		if t >= typeStreamListpack2 {
			k = 3
		}
		if err := lens(k); err != nil {
			return err
		}
		pel, err := d.readLen()
		if err != nil {
			return err
		}
		for ; pel > 0; pel-- {
			if err := d.r.skip(16 + 8); err != nil {
				return err
			}
			if err := lens(1); err != nil {
				return err
			}
		}
		consumers, err := d.readLen()
		if err != nil {
			return err
		}
		for ; consumers > 0; consumers-- {
			if err := d.skipString(); err != nil {
				return err
			}
			seen := uint64(8)
			if t >= typeStreamListpack3 {
				seen = 16
			}
			if err := d.r.skip(seen); err != nil {
				return err
			}
			cp, err := d.readLen()
			if err != nil {
				return err
			}
			if cp > 1<<40 {
				return d.corrupt("consumer PEL size impossible")
			}
			if err := d.r.skip(16 * cp); err != nil {
				return err
			}
		}
	}
	return nil
}

// ---- values ----

func (d *Decoder) add(s []byte) {
	d.offs = append(d.offs, len(d.arena))
	d.arena = append(d.arena, s...)
	d.offs = append(d.offs, len(d.arena))
}

func (d *Decoder) addEntry(e lpEntry) {
	d.offs = append(d.offs, len(d.arena))
	if e.isInt {
		d.arena = strconv.AppendInt(d.arena, e.v, 10)
	} else {
		d.arena = append(d.arena, e.s...)
	}
	d.offs = append(d.offs, len(d.arena))
}

func (d *Decoder) addString() error {
	start := len(d.arena)
	var err error
	d.arena, err = d.readString(d.arena)
	d.offs = append(d.offs, start, len(d.arena))
	return err
}

func (d *Decoder) addScore(f float64) error {
	if math.IsNaN(f) {
		return d.corrupt("zset with NaN score")
	}
	d.scores = append(d.scores, f)
	return nil
}

func entryScore(e lpEntry) (float64, bool) {
	if e.isInt {
		return float64(e.v), true
	}
	if len(e.s) == 0 {
		return 0, false
	}
	// ParseFloat keeps no reference to its argument (its errors copy it).
	f, err := strconv.ParseFloat(unsafe.String(&e.s[0], len(e.s)), 64)
	return f, err == nil || errors.Is(err, strconv.ErrRange)
}

// readBlob reads a string holding a listpack, intset, ziplist or zipmap.
func (d *Decoder) readBlob() ([]byte, error) {
	var err error
	d.blob, err = d.readString(d.blob[:0])
	return d.blob, err
}

func kindOf(t byte) Kind {
	switch t {
	case typeString:
		return KindString
	case typeList, typeListZiplist, typeListQuicklist, typeListQuicklist2:
		return KindList
	case typeSet, typeSetIntset, typeSetListpack:
		return KindSet
	case typeZSet, typeZSet2, typeZSetZiplist, typeZSetListpack:
		return KindZSet
	}
	return KindHash
}

func (d *Decoder) readValue(t byte) error {
	d.arena = d.arena[:0]
	d.offs = d.offs[:0]
	d.scores = d.scores[:0]
	v := &d.entry.Value
	v.Kind = kindOf(t)
	v.Str = nil
	v.Items = v.Items[:0]
	v.Scores = nil
	var err error
	switch t {
	case typeString:
		d.arena, err = d.readString(d.arena)
		v.Str = d.arena
		return err
	case typeList, typeSet:
		err = d.readStrings(1)
	case typeHash:
		err = d.readStrings(2)
	case typeZSet, typeZSet2:
		err = d.readZSet(t)
	case typeListZiplist, typeZSetZiplist, typeHashZiplist:
		err = d.readZiplist(t)
	case typeListQuicklist:
		err = d.readQuicklist(false)
	case typeListQuicklist2:
		err = d.readQuicklist(true)
	case typeSetIntset:
		err = d.readIntset()
	case typeHashListpack, typeZSetListpack, typeSetListpack:
		err = d.readListpackValue(t)
	case typeHashZipmap:
		err = d.readZipmap()
	default:
		err = d.corrupt("type " + TypeName(t) + " cannot be read")
	}
	if err != nil {
		return err
	}
	for i := 0; i < len(d.offs); i += 2 {
		v.Items = append(v.Items, d.arena[d.offs[i]:d.offs[i+1]:d.offs[i+1]])
	}
	if v.Kind == KindZSet {
		if len(d.scores) != len(v.Items) {
			return d.corrupt("zset members and scores do not pair up")
		}
		v.Scores = d.scores
	}
	return nil
}

// readStrings reads a count and then count*per strings.
func (d *Decoder) readStrings(per uint64) error {
	n, err := d.readLen()
	if err != nil {
		return err
	}
	if n > math.MaxInt64/per {
		return d.corrupt("collection length impossible")
	}
	for n *= per; n > 0; n-- {
		if err := d.addString(); err != nil {
			return err
		}
	}
	return nil
}

func (d *Decoder) readZSet(t byte) error {
	n, err := d.readLen()
	if err != nil {
		return err
	}
	for ; n > 0; n-- {
		if err := d.addString(); err != nil {
			return err
		}
		var f float64
		if t == typeZSet2 {
			p, err := d.r.next(8)
			if err != nil {
				return err
			}
			f = math.Float64frombits(binary.LittleEndian.Uint64(p))
		} else {
			l, err := d.r.readByte()
			if err != nil {
				return err
			}
			switch l {
			case 253:
				f = math.NaN()
			case 254:
				f = math.Inf(1)
			case 255:
				f = math.Inf(-1)
			default:
				p, err := d.r.next(int(l))
				if err != nil {
					return err
				}
				var ok bool
				if f, ok = entryScore(lpEntry{s: p}); !ok {
					return d.corrupt("zset score is not a number")
				}
			}
		}
		if err := d.addScore(f); err != nil {
			return err
		}
	}
	return nil
}

// pairs adds listpack/ziplist entries to the value: for a zset every
// second entry is a score.
func (d *Decoder) addPacked(e lpEntry, zset bool, i int) error {
	if zset && i%2 == 1 {
		f, ok := entryScore(e)
		if !ok {
			return d.corrupt("zset score is not a number")
		}
		return d.addScore(f)
	}
	d.addEntry(e)
	return nil
}

func (d *Decoder) readListpackValue(t byte) error {
	blob, err := d.readBlob()
	if err != nil {
		return err
	}
	return d.addListpack(blob, t == typeZSetListpack, t != typeSetListpack)
}

func (d *Decoder) addListpack(blob []byte, zset, pairs bool) error {
	it, count, reason := lpOpen(blob)
	if reason != "" {
		return d.corrupt(reason)
	}
	for i := 0; ; i++ {
		e, done, reason := it.next()
		if reason != "" {
			return d.corrupt(reason)
		}
		if done {
			break
		}
		if err := d.addPacked(e, zset, i); err != nil {
			return err
		}
	}
	if count != 0xFFFF && count != it.count {
		return d.corrupt("listpack entry count does not match its header")
	}
	if pairs && it.count%2 != 0 {
		return d.corrupt("listpack of pairs with an odd number of entries")
	}
	return nil
}

func (d *Decoder) readZiplist(t byte) error {
	blob, err := d.readBlob()
	if err != nil {
		return err
	}
	return d.addZiplist(blob, t == typeZSetZiplist, t != typeListZiplist)
}

func (d *Decoder) addZiplist(blob []byte, zset, pairs bool) error {
	it, reason := zlOpen(blob)
	if reason != "" {
		return d.corrupt(reason)
	}
	i := 0
	for ; ; i++ {
		e, done, reason := it.next()
		if reason != "" {
			return d.corrupt(reason)
		}
		if done {
			break
		}
		if err := d.addPacked(e, zset, i); err != nil {
			return err
		}
	}
	if zl := int(binary.LittleEndian.Uint16(blob[8:])); zl != 0xFFFF && zl != i {
		return d.corrupt("ziplist entry count does not match its header")
	}
	if pairs && i%2 != 0 {
		return d.corrupt("ziplist of pairs with an odd number of entries")
	}
	return nil
}

func (d *Decoder) readQuicklist(v2 bool) error {
	n, err := d.readLen()
	if err != nil {
		return err
	}
	for ; n > 0; n-- {
		container := uint64(containerPacked)
		if v2 {
			if container, err = d.readLen(); err != nil {
				return err
			}
		}
		blob, err := d.readBlob()
		if err != nil {
			return err
		}
		switch {
		case container == containerPlain:
			d.add(blob)
		case container != containerPacked:
			return d.corrupt("quicklist integrity check failed: unknown container")
		case v2:
			err = d.addListpack(blob, false, false)
		default:
			err = d.addZiplist(blob, false, false)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (d *Decoder) readIntset() error {
	blob, err := d.readBlob()
	if err != nil {
		return err
	}
	if len(blob) < 8 {
		return d.corrupt("intset shorter than its header")
	}
	w := binary.LittleEndian.Uint32(blob)
	n := binary.LittleEndian.Uint32(blob[4:])
	if w != 2 && w != 4 && w != 8 {
		return d.corrupt("intset encoding invalid")
	}
	if n == 0 || uint64(len(blob)) != 8+uint64(n)*uint64(w) {
		return d.corrupt("intset size does not match its length")
	}
	var prev int64
	for i := 0; i < int(n); i++ {
		p := blob[8+i*int(w):]
		var v int64
		switch w {
		case 2:
			v = int64(int16(binary.LittleEndian.Uint16(p)))
		case 4:
			v = int64(int32(binary.LittleEndian.Uint32(p)))
		default:
			v = int64(binary.LittleEndian.Uint64(p))
		}
		if i > 0 && v <= prev {
			return d.corrupt("intset not strictly ascending")
		}
		prev = v
		d.addEntry(lpEntry{v: v, isInt: true})
	}
	return nil
}

// readZipmap reads the pre-2.6 hash encoding: a count byte, then per pair a
// length, the field, a length, a free-byte count, the value and the free
// bytes, and a closing 0xFF.
func (d *Decoder) readZipmap() error {
	blob, err := d.readBlob()
	if err != nil {
		return err
	}
	if len(blob) < 2 {
		return d.corrupt("zipmap too short")
	}
	p := blob[1:]
	zlen := func() (int, bool) {
		if len(p) == 0 {
			return 0, false
		}
		if p[0] < 254 {
			n := int(p[0])
			p = p[1:]
			return n, true
		}
		if p[0] == 254 && len(p) >= 5 {
			n := int(binary.LittleEndian.Uint32(p[1:]))
			p = p[5:]
			return n, true
		}
		return 0, false
	}
	for {
		if len(p) == 0 {
			return d.corrupt("zipmap without its end byte")
		}
		if p[0] == 0xFF {
			if len(p) != 1 {
				return d.corrupt("zipmap end byte before the end")
			}
			return nil
		}
		kl, ok := zlen()
		if !ok || kl > len(p) {
			return d.corrupt("zipmap field past the end")
		}
		d.add(p[:kl])
		p = p[kl:]
		vl, ok := zlen()
		if !ok || len(p) < 1 {
			return d.corrupt("zipmap value past the end")
		}
		free := int(p[0])
		p = p[1:]
		if vl > len(p) || free > len(p)-vl {
			return d.corrupt("zipmap value past the end")
		}
		d.add(p[:vl])
		p = p[vl+free:]
	}
}

// DecodeDump decodes a DUMP payload as RESTORE in Redis 7.0 does: at least
// 10 bytes, a footer version no later than Version and a matching CRC64
// (else ErrVersion or ErrChecksum, which RESTORE reports as "DUMP payload
// version or checksum are wrong"), then one value; bytes after the value
// are ignored, as Redis ignores them, and, as in Redis, a value that runs
// past its end reads on into the footer. The Value points into the Decoder's
// buffers and is valid until its next use. Streams and module values are
// refused with ErrUnsupported.
func (d *Decoder) DecodeDump(payload []byte) (*Value, error) {
	d.err = nil
	d.entry = Entry{Value: Value{Items: d.entry.Items[:0]}, Expiry: NoExpiry}
	if len(payload) < 10 {
		return nil, &Error{Reason: "DUMP payload shorter than 10 bytes", Err: ErrCorrupt}
	}
	foot := payload[len(payload)-10:]
	if v := binary.LittleEndian.Uint16(foot); v > Version {
		return nil, &Error{Offset: int64(len(payload) - 10), Reason: fmt.Sprintf("DUMP payload version %d is newer than %d", v, Version), Err: ErrVersion}
	}
	if want, got := binary.LittleEndian.Uint64(foot[2:]), CRC64(0, payload[:len(payload)-8]); want != got {
		return nil, &Error{Offset: int64(len(payload) - 8), Reason: fmt.Sprintf("DUMP payload CRC64 is %#016x, content gives %#016x", want, got), Err: ErrChecksum}
	}
	// Redis reads the value from the whole payload, footer included
	// (rioInitWithBuffer over all of it): a value cut short runs into the
	// footer's bytes rather than failing, and so it does here.
	d.r.resetBytes(payload)
	t, err := d.r.readByte()
	if err != nil {
		d.ioFail(err)
		return nil, d.err
	}
	if int(t) >= len(typeNames) || typeNames[t] == "" {
		return nil, &Error{Reason: fmt.Sprintf("unknown type %#02x", t), Err: ErrCorrupt}
	}
	d.entry.Type = t
	switch t {
	case typeModule, typeModule2, typeStreamListpacks, typeStreamListpack2, typeStreamListpack3:
		return nil, &Error{Type: TypeName(t), Reason: TypeName(t) + ", a type goblin does not store", Err: ErrUnsupported}
	}
	if err := d.readValue(t); err != nil {
		d.ioFail(err)
		return nil, d.err
	}
	return &d.entry.Value, nil
}
