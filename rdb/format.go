package rdb

import (
	"encoding/binary"
	"strconv"
)

// Version is the RDB format version the Encoder writes: Redis 7.0's. Redis
// 7.0 refuses files and DUMP payloads of a later version.
const Version = 10

// maxReadVersion is the newest version the Decoder reads: Redis 7.2 (11)
// and 7.4 (12) files are read as far as their types are known here.
const maxReadVersion = 12

// Opcodes (src/rdb.h).
const (
	opFunction2    = 0xF5
	opFunction     = 0xF6
	opModuleAux    = 0xF7
	opIdle         = 0xF8
	opFreq         = 0xF9
	opAux          = 0xFA
	opResizeDB     = 0xFB
	opExpireTimeMs = 0xFC
	opExpireTime   = 0xFD
	opSelectDB     = 0xFE
	opEOF          = 0xFF
)

// Type bytes (src/rdb.h RDB_TYPE_*).
const (
	typeString          = 0
	typeList            = 1
	typeSet             = 2
	typeZSet            = 3
	typeHash            = 4
	typeZSet2           = 5
	typeModule          = 6
	typeModule2         = 7
	typeHashZipmap      = 9
	typeListZiplist     = 10
	typeSetIntset       = 11
	typeZSetZiplist     = 12
	typeHashZiplist     = 13
	typeListQuicklist   = 14
	typeStreamListpacks = 15
	typeHashListpack    = 16
	typeZSetListpack    = 17
	typeListQuicklist2  = 18
	typeStreamListpack2 = 19
	typeSetListpack     = 20
	typeStreamListpack3 = 21
)

// typeNames names every type byte the Decoder recognises, for errors.
var typeNames = [...]string{
	typeString: "string", typeList: "list", typeSet: "set", typeZSet: "zset (text scores)",
	typeHash: "hash", typeZSet2: "zset", typeModule: "module (pre-GA)", typeModule2: "module",
	8: "", typeHashZipmap: "hash (zipmap)", typeListZiplist: "list (ziplist)",
	typeSetIntset: "set (intset)", typeZSetZiplist: "zset (ziplist)", typeHashZiplist: "hash (ziplist)",
	typeListQuicklist: "list (quicklist)", typeStreamListpacks: "stream",
	typeHashListpack: "hash (listpack)", typeZSetListpack: "zset (listpack)",
	typeListQuicklist2: "list (quicklist 2)", typeStreamListpack2: "stream", typeSetListpack: "set (listpack)",
	typeStreamListpack3: "stream",
}

// TypeName returns a readable name for an RDB type byte.
func TypeName(t byte) string {
	if int(t) < len(typeNames) && typeNames[t] != "" {
		return typeNames[t]
	}
	return "unknown type " + strconv.Itoa(int(t))
}

// Quicklist node containers (src/quicklist.h).
const (
	containerPlain  = 1
	containerPacked = 2
)

// parseInt is Redis's string2ll: an optional '-', no leading zeros (other
// than "0" itself), no '+', no spaces, no "-0", and the value fits int64.
// Exactly these strings are stored as integers in listpacks and RDB strings.
func parseInt(s []byte) (int64, bool) {
	n := len(s)
	if n == 0 || n > 20 {
		return 0, false
	}
	if n == 1 && s[0] == '0' {
		return 0, true
	}
	neg := false
	i := 0
	if s[0] == '-' {
		neg = true
		i = 1
		if n == 1 {
			return 0, false
		}
	}
	if s[i] < '1' || s[i] > '9' {
		return 0, false
	}
	var v uint64
	for ; i < n; i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return int64(-v), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// appendLen appends an RDB length in its shortest form (rdbSaveLen).
func appendLen(b []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, byte(n>>8)|0x40, byte(n))
	case n <= 0xFFFFFFFF:
		return binary.BigEndian.AppendUint32(append(b, 0x80), uint32(n))
	default:
		return binary.BigEndian.AppendUint64(append(b, 0x81), n)
	}
}

// ---- listpack (src/listpack.c) ----

const (
	lpHeaderSize = 6
	lpEnd        = 0xFF
	lpMaxSafety  = 1 << 30
)

// lpIntEntry appends the encoding of integer v in its smallest listpack
// form (lpEncodeIntegerGetType) and returns b and the entry's size.
func lpIntEntry(b []byte, v int64) ([]byte, int) {
	switch {
	case v >= 0 && v <= 127:
		return append(b, byte(v)), 1
	case v >= -4096 && v <= 4095:
		u := uint64(v) & (1<<13 - 1)
		return append(b, byte(u>>8)|0xC0, byte(u)), 2
	case v >= -32768 && v <= 32767:
		return binary.LittleEndian.AppendUint16(append(b, 0xF1), uint16(v)), 3
	case v >= -8388608 && v <= 8388607:
		u := uint32(v)
		return append(b, 0xF2, byte(u), byte(u>>8), byte(u>>16)), 4
	case v >= -2147483648 && v <= 2147483647:
		return binary.LittleEndian.AppendUint32(append(b, 0xF3), uint32(v)), 5
	default:
		return binary.LittleEndian.AppendUint64(append(b, 0xF4), uint64(v)), 9
	}
}

// lpBacklen appends the backlen of an entry of size e (lpEncodeBacklen).
func lpBacklen(b []byte, e int) []byte {
	switch {
	case e <= 127:
		return append(b, byte(e))
	case e < 16383:
		return append(b, byte(e>>7), byte(e&127)|128)
	case e < 2097151:
		return append(b, byte(e>>14), byte(e>>7&127)|128, byte(e&127)|128)
	case e < 268435455:
		return append(b, byte(e>>21), byte(e>>14&127)|128, byte(e>>7&127)|128, byte(e&127)|128)
	default:
		return append(b, byte(e>>28), byte(e>>21&127)|128, byte(e>>14&127)|128, byte(e>>7&127)|128, byte(e&127)|128)
	}
}

func lpBacklenSize(e int) int {
	switch {
	case e <= 127:
		return 1
	case e < 16383:
		return 2
	case e < 2097151:
		return 3
	case e < 268435455:
		return 4
	default:
		return 5
	}
}

// lpAppendInt appends integer v as a whole entry, backlen included.
func lpAppendInt(b []byte, v int64) []byte {
	b, e := lpIntEntry(b, v)
	return lpBacklen(b, e)
}

// lpAppend appends s as a whole entry in its canonical form (lpAppend):
// as an integer when string2ll accepts it, else as a string.
func lpAppend(b []byte, s []byte) []byte {
	if v, ok := parseInt(s); ok {
		return lpAppendInt(b, v)
	}
	n := len(s)
	var e int
	switch {
	case n < 64:
		b = append(b, 0x80|byte(n))
		e = 1 + n
	case n < 4096:
		b = append(b, 0xE0|byte(n>>8), byte(n))
		e = 2 + n
	default:
		b = binary.LittleEndian.AppendUint32(append(b, 0xF0), uint32(n))
		e = 5 + n
	}
	b = append(b, s...)
	return lpBacklen(b, e)
}

// lpEntrySize is the number of bytes lpAppend(s) adds.
func lpEntrySize(s []byte) int {
	var e int
	if v, ok := parseInt(s); ok {
		switch {
		case v >= 0 && v <= 127:
			e = 1
		case v >= -4096 && v <= 4095:
			e = 2
		case v >= -32768 && v <= 32767:
			e = 3
		case v >= -8388608 && v <= 8388607:
			e = 4
		case v >= -2147483648 && v <= 2147483647:
			e = 5
		default:
			e = 9
		}
	} else {
		n := len(s)
		switch {
		case n < 64:
			e = 1 + n
		case n < 4096:
			e = 2 + n
		default:
			e = 5 + n
		}
	}
	return e + lpBacklenSize(e)
}

// lpStart begins a listpack in b; lpFinish fills in its header.
func lpStart(b []byte) []byte { return append(b, 0, 0, 0, 0, 0, 0) }

func lpFinish(b []byte, start, count int) []byte {
	b = append(b, lpEnd)
	binary.LittleEndian.PutUint32(b[start:], uint32(len(b)-start))
	if count > 0xFFFF {
		count = 0xFFFF
	}
	binary.LittleEndian.PutUint16(b[start+4:], uint16(count))
	return b
}

// lpEntry is one decoded listpack or ziplist entry: a string or an integer.
type lpEntry struct {
	s     []byte
	v     int64
	isInt bool
}

// lpIter walks a listpack, checking every entry against the bounds and its
// backlen as lpValidateNext does.
type lpIter struct {
	p     []byte
	pos   int
	count int // entries seen
}

// lpOpen checks a listpack's header and returns an iterator and the count
// the header declares (0xFFFF = unknown).
func lpOpen(p []byte) (lpIter, int, string) {
	if len(p) < lpHeaderSize+1 {
		return lpIter{}, 0, "listpack shorter than its header"
	}
	if int(binary.LittleEndian.Uint32(p)) != len(p) {
		return lpIter{}, 0, "listpack total size does not match its blob"
	}
	if p[len(p)-1] != lpEnd {
		return lpIter{}, 0, "listpack does not end with 0xFF"
	}
	return lpIter{p: p, pos: lpHeaderSize}, int(binary.LittleEndian.Uint16(p[4:])), ""
}

// next returns the next entry; done is true at the terminator. reason is
// non-empty when the listpack is malformed.
func (it *lpIter) next() (e lpEntry, done bool, reason string) {
	p := it.p
	if it.pos >= len(p) {
		return e, false, "listpack entry past the end"
	}
	b := p[it.pos]
	if b == lpEnd {
		if it.pos != len(p)-1 {
			return e, false, "listpack terminator before the end"
		}
		return e, true, ""
	}
	rest := p[it.pos:]
	var size int
	switch {
	case b&0x80 == 0:
		e.v, e.isInt, size = int64(b), true, 1
	case b&0xC0 == 0x80:
		n := int(b & 0x3F)
		size = 1 + n
		if size > len(rest) {
			return e, false, "listpack string past the end"
		}
		e.s = rest[1:size]
	case b&0xE0 == 0xC0:
		if len(rest) < 2 {
			return e, false, "listpack integer past the end"
		}
		u := int64(b&0x1F)<<8 | int64(rest[1])
		if u >= 1<<12 {
			u -= 1 << 13
		}
		e.v, e.isInt, size = u, true, 2
	case b&0xF0 == 0xE0:
		if len(rest) < 2 {
			return e, false, "listpack string past the end"
		}
		n := int(b&0x0F)<<8 | int(rest[1])
		size = 2 + n
		if size > len(rest) {
			return e, false, "listpack string past the end"
		}
		e.s = rest[2:size]
	case b == 0xF0:
		if len(rest) < 5 {
			return e, false, "listpack string past the end"
		}
		n := int(binary.LittleEndian.Uint32(rest[1:]))
		if n > len(rest)-5 {
			return e, false, "listpack string past the end"
		}
		size = 5 + n
		e.s = rest[5:size]
	case b >= 0xF1 && b <= 0xF4:
		w := [...]int{2, 3, 4, 8}[b-0xF1]
		if len(rest) < 1+w {
			return e, false, "listpack integer past the end"
		}
		d := rest[1 : 1+w]
		switch w {
		case 2:
			e.v = int64(int16(binary.LittleEndian.Uint16(d)))
		case 3:
			u := int64(d[0]) | int64(d[1])<<8 | int64(d[2])<<16
			if u >= 1<<23 {
				u -= 1 << 24
			}
			e.v = u
		case 4:
			e.v = int64(int32(binary.LittleEndian.Uint32(d)))
		case 8:
			e.v = int64(binary.LittleEndian.Uint64(d))
		}
		e.isInt, size = true, 1+w
	default:
		return e, false, "invalid listpack entry encoding"
	}
	bl := lpBacklenSize(size)
	if size+bl > len(rest)-1 {
		return e, false, "listpack entry past the end"
	}
	// The backlen, read backwards from its last byte.
	var got, shift int
	for i := size + bl - 1; i >= size; i-- {
		got |= int(rest[i]&127) << shift
		shift += 7
		if i > size && rest[i]&128 == 0 {
			return e, false, "listpack backlen malformed"
		}
	}
	if got != size || rest[size]&128 != 0 {
		return e, false, "listpack backlen does not match its entry"
	}
	it.pos += size + bl
	it.count++
	return e, false, ""
}

// ---- ziplist (src/ziplist.c), read only ----

type zlIter struct {
	p   []byte
	pos int
}

func zlOpen(p []byte) (zlIter, string) {
	if len(p) < 11 {
		return zlIter{}, "ziplist shorter than its header"
	}
	if int(binary.LittleEndian.Uint32(p)) != len(p) {
		return zlIter{}, "ziplist total size does not match its blob"
	}
	if p[len(p)-1] != 0xFF {
		return zlIter{}, "ziplist does not end with 0xFF"
	}
	return zlIter{p: p, pos: 10}, ""
}

func (it *zlIter) next() (e lpEntry, done bool, reason string) {
	p := it.p
	if it.pos >= len(p) {
		return e, false, "ziplist entry past the end"
	}
	if p[it.pos] == 0xFF {
		if it.pos != len(p)-1 {
			return e, false, "ziplist terminator before the end"
		}
		return e, true, ""
	}
	rest := p[it.pos:]
	h := 1
	if rest[0] == 0xFE {
		h = 5
	}
	if len(rest) < h+1 {
		return e, false, "ziplist entry past the end"
	}
	rest = rest[h:]
	b := rest[0]
	var size int
	switch b >> 6 {
	case 0:
		size = 1 + int(b&0x3F)
		if size > len(rest) {
			return e, false, "ziplist string past the end"
		}
		e.s = rest[1:size]
	case 1:
		if len(rest) < 2 {
			return e, false, "ziplist string past the end"
		}
		size = 2 + (int(b&0x3F)<<8 | int(rest[1]))
		if size > len(rest) {
			return e, false, "ziplist string past the end"
		}
		e.s = rest[2:size]
	case 2:
		if b != 0x80 || len(rest) < 5 {
			return e, false, "ziplist string encoding invalid"
		}
		n := int(binary.BigEndian.Uint32(rest[1:]))
		if n > len(rest)-5 {
			return e, false, "ziplist string past the end"
		}
		size = 5 + n
		e.s = rest[5:size]
	default:
		e.isInt = true
		var w int
		switch b {
		case 0xC0:
			w = 2
		case 0xD0:
			w = 4
		case 0xE0:
			w = 8
		case 0xF0:
			w = 3
		case 0xFE:
			w = 1
		default:
			if b >= 0xF1 && b <= 0xFD {
				e.v = int64(b&0x0F) - 1
			} else {
				return e, false, "ziplist integer encoding invalid"
			}
		}
		if 1+w > len(rest) {
			return e, false, "ziplist integer past the end"
		}
		d := rest[1 : 1+w]
		switch w {
		case 1:
			e.v = int64(int8(d[0]))
		case 2:
			e.v = int64(int16(binary.LittleEndian.Uint16(d)))
		case 3:
			u := int64(d[0]) | int64(d[1])<<8 | int64(d[2])<<16
			if u >= 1<<23 {
				u -= 1 << 24
			}
			e.v = u
		case 4:
			e.v = int64(int32(binary.LittleEndian.Uint32(d)))
		case 8:
			e.v = int64(binary.LittleEndian.Uint64(d))
		}
		size = 1 + w
	}
	if h+size >= len(p)-it.pos {
		return e, false, "ziplist entry past the end"
	}
	it.pos += h + size
	return e, false, ""
}
