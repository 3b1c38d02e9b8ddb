package collection

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"unsafe"
)

// Listpack layout (Redis 7.0, src/listpack.c): a 6-byte header, the entries, and a
// terminator byte.
const (
	lpHeaderSize   = 6       // u32 LE total bytes, u16 LE element count
	lpCountUnknown = 0xFFFF  // header count when it does not fit; count by scanning
	lpEOF          = 0xFF    // terminator
	lpMaxSafety    = 1 << 30 // LISTPACK_MAX_SAFETY_SIZE: validation rejects larger blobs
	lpEmptyLen     = lpHeaderSize + 1
	lpMaxIntLen    = 9 // the longest integer entry (0xF4 + 8 bytes)
)

// Entry first bytes (encoding tags).
const (
	lpEnc7BitUint  = 0x00 // 0xxxxxxx
	lpEnc6BitStr   = 0x80 // 10llllll
	lpEnc13BitInt  = 0xC0 // 110vvvvv vvvvvvvv
	lpEnc12BitStr  = 0xE0 // 1110llll llllllll
	lpEnc32BitStr  = 0xF0 // F0 + u32 LE length
	lpEnc16BitInt  = 0xF1
	lpEnc24BitInt  = 0xF2
	lpEnc32BitInt  = 0xF3
	lpEnc64BitInt  = 0xF4
	lpMaskTop1     = 0x80
	lpMaskTop2     = 0xC0
	lpMaskTop3     = 0xE0
	lpMaskTop4     = 0xF0
	lp6BitStrMax   = 63
	lp12BitStrMax  = 4095
	lpBacklen1Max  = 127
	lpBacklen2Next = 16383 // a 2-byte backlen holds sizes below this (Redis's uneven thresholds)
	lpBacklen3Next = 2097151
	lpBacklen4Next = 268435455
)

// Errors reported by ValidateListpack.
var (
	// ErrListpackHeader: the header's total length or the terminator is wrong.
	ErrListpackHeader = errors.New("collection: listpack header does not match its length")
	// ErrListpackEntry: an entry is malformed or reaches past the end.
	ErrListpackEntry = errors.New("collection: listpack entry is malformed")
	// ErrListpackCount: the header's element count disagrees with the entries.
	ErrListpackCount = errors.New("collection: listpack element count does not match its entries")
)

// Listpack is a byte blob in Redis 7.0's listpack format: the bytes an RDB file
// stores for a small hash, list or sorted set. Methods that change it return the
// changed blob, which shares the receiver's array when its capacity allows (as
// append does), leaving the receiver stale; offsets name entries by the position of their first byte, and -1
// means "none".
type Listpack []byte

// NewListpack appends an empty listpack to dst and returns it.
func NewListpack(dst []byte) Listpack {
	dst = append(dst, lpEmptyLen, 0, 0, 0, 0, 0, lpEOF)
	return Listpack(dst[len(dst)-lpEmptyLen:])
}

func (lp Listpack) totalBytes() int { return int(binary.LittleEndian.Uint32(lp)) }

func (lp Listpack) setHeader(total, count int) {
	binary.LittleEndian.PutUint32(lp, uint32(total))
	if count >= lpCountUnknown {
		count = lpCountUnknown
	}
	binary.LittleEndian.PutUint16(lp[4:], uint16(count))
}

// Bytes returns the blob's length in bytes.
func (lp Listpack) Bytes() int { return len(lp) }

// Len returns the number of entries. When the header count is unknown (65535
// entries were reached) it scans, and stores the count back when it fits again,
// as Redis's lpLength does.
func (lp Listpack) Len() int {
	if c := int(binary.LittleEndian.Uint16(lp[4:])); c != lpCountUnknown {
		return c
	}
	n := 0
	for p := lp.First(); p >= 0; p = lp.Next(p) {
		n++
	}
	if n < lpCountUnknown {
		binary.LittleEndian.PutUint16(lp[4:], uint16(n)) // as lpLength does
	}
	return n
}

// First returns the offset of the first entry, or -1 when empty.
func (lp Listpack) First() int {
	if lp[lpHeaderSize] == lpEOF {
		return -1
	}
	return lpHeaderSize
}

// Last returns the offset of the last entry, or -1 when empty.
func (lp Listpack) Last() int {
	end := len(lp) - 1
	if end == lpHeaderSize {
		return -1
	}
	return lp.prevFrom(end)
}

// Next returns the offset of the entry after the one at p, or -1 at the end.
func (lp Listpack) Next(p int) int {
	p += entrySize(lp[p:])
	if lp[p] == lpEOF {
		return -1
	}
	return p
}

// Prev returns the offset of the entry before the one at p, or -1 at the start.
func (lp Listpack) Prev(p int) int {
	if p == lpHeaderSize {
		return -1
	}
	return lp.prevFrom(p)
}

// prevFrom returns the start of the entry that ends just before offset end.
func (lp Listpack) prevFrom(end int) int {
	q := end - 1
	size, n := decodeBacklen(lp, q)
	return q - n + 1 - size
}

// decodeBacklen reads the backlen whose last byte is at q: the size it encodes and
// its own length in bytes; n is 0 when more than 5 bytes carry the continuation bit.
func decodeBacklen(lp []byte, q int) (size, n int) {
	var v uint64
	for shift := 0; ; shift += 7 {
		if q < 0 || shift > 28 {
			return 0, 0
		}
		b := lp[q]
		v |= uint64(b&127) << shift
		n++
		if b&128 == 0 {
			break
		}
		q--
	}
	return int(v), n
}

// backlenSize is the length of the backlen encoding an entry of size l.
func backlenSize(l int) int {
	switch {
	case l <= lpBacklen1Max:
		return 1
	case l < lpBacklen2Next:
		return 2
	case l < lpBacklen3Next:
		return 3
	case l < lpBacklen4Next:
		return 4
	}
	return 5
}

// appendBacklen appends the backlen of an entry of size l: most significant 7-bit
// group first, every byte but the first flagged 0x80.
func appendBacklen(b []byte, l int) []byte {
	n := backlenSize(l)
	for i := n - 1; i >= 0; i-- {
		c := byte(l >> (7 * i) & 127)
		if i != n-1 {
			c |= 128
		}
		b = append(b, c)
	}
	return b
}

// headerLen returns the length of the encoding bytes of the entry starting with
// byte c (0 for an invalid tag), and encodedSize the encoding+data length.
func headerLen(c byte) int {
	switch {
	case c&lpMaskTop1 == lpEnc7BitUint, c&lpMaskTop2 == lpEnc6BitStr:
		return 1
	case c&lpMaskTop3 == lpEnc13BitInt, c&lpMaskTop4 == lpEnc12BitStr:
		return 2
	case c == lpEnc32BitStr:
		return 5
	case c >= lpEnc16BitInt && c <= lpEnc64BitInt:
		return 1
	}
	return 0
}

// encodedSize returns the encoding+data size of the entry at e[0], which must have
// at least headerLen bytes; 0 for an invalid tag.
func encodedSize(e []byte) int {
	c := e[0]
	switch {
	case c&lpMaskTop1 == lpEnc7BitUint:
		return 1
	case c&lpMaskTop2 == lpEnc6BitStr:
		return 1 + int(c&0x3F)
	case c&lpMaskTop3 == lpEnc13BitInt:
		return 2
	case c&lpMaskTop4 == lpEnc12BitStr:
		return 2 + (int(c&0x0F)<<8 | int(e[1]))
	case c == lpEnc32BitStr:
		return 5 + int(binary.LittleEndian.Uint32(e[1:]))
	case c == lpEnc16BitInt:
		return 3
	case c == lpEnc24BitInt:
		return 4
	case c == lpEnc32BitInt:
		return 5
	case c == lpEnc64BitInt:
		return 9
	}
	return 0
}

// entrySize is the whole entry's size, backlen included.
func entrySize(e []byte) int {
	s := encodedSize(e)
	return s + backlenSize(s)
}

// Get returns the entry at p: a string (s, isInt false, aliasing lp) or an integer
// (v, isInt true).
func (lp Listpack) Get(p int) (s []byte, v int64, isInt bool) {
	e := lp[p:]
	c := e[0]
	switch {
	case c&lpMaskTop1 == lpEnc7BitUint:
		return nil, int64(c), true
	case c&lpMaskTop2 == lpEnc6BitStr:
		n := int(c & 0x3F)
		return e[1 : 1+n], 0, false
	case c&lpMaskTop3 == lpEnc13BitInt:
		u := uint64(c&0x1F)<<8 | uint64(e[1])
		return nil, signExtend(u, 13), true
	case c&lpMaskTop4 == lpEnc12BitStr:
		n := int(c&0x0F)<<8 | int(e[1])
		return e[2 : 2+n], 0, false
	case c == lpEnc32BitStr:
		n := int(binary.LittleEndian.Uint32(e[1:]))
		return e[5 : 5+n], 0, false
	case c == lpEnc16BitInt:
		return nil, int64(int16(binary.LittleEndian.Uint16(e[1:]))), true
	case c == lpEnc24BitInt:
		u := uint64(e[1]) | uint64(e[2])<<8 | uint64(e[3])<<16
		return nil, signExtend(u, 24), true
	case c == lpEnc32BitInt:
		return nil, int64(int32(binary.LittleEndian.Uint32(e[1:]))), true
	case c == lpEnc64BitInt:
		return nil, int64(binary.LittleEndian.Uint64(e[1:])), true
	}
	panic(fmt.Sprintf("collection: listpack entry at %d has invalid tag %#x", p, c))
}

func signExtend(u uint64, bits uint) int64 {
	shift := 64 - bits
	return int64(u<<shift) >> shift
}

// AppendValue appends the entry at p to dst as a string (integers in decimal), the
// way Redis replies with it.
func (lp Listpack) AppendValue(dst []byte, p int) []byte {
	s, v, isInt := lp.Get(p)
	if isInt {
		return strconv.AppendInt(dst, v, 10)
	}
	return append(dst, s...)
}

// Equal reports whether the entry at p equals the string s (an integer entry
// compares by its decimal text).
func (lp Listpack) Equal(p int, s []byte) bool {
	es, v, isInt := lp.Get(p)
	if !isInt {
		return string(es) == string(s)
	}
	var buf [20]byte
	return string(strconv.AppendInt(buf[:0], v, 10)) == string(s)
}

// ParseInt reports whether s is an integer in the strict form Redis's
// lpStringToInt64 (string2ll) accepts: optional '-', no leading zeros, no '+',
// no spaces, "-0" rejected, within int64.
func ParseInt(s []byte) (int64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	if len(s) == 1 && s[0] == '0' {
		return 0, true
	}
	neg := false
	i := 0
	if s[0] == '-' {
		neg = true
		i = 1
		if len(s) == 1 {
			return 0, false
		}
	}
	if s[i] < '1' || s[i] > '9' {
		return 0, false
	}
	var v uint64
	for ; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			return 0, false
		}
		if v > (1<<64-1)/10 {
			return 0, false
		}
		v *= 10
		if v > 1<<64-1-uint64(d) {
			return 0, false
		}
		v += uint64(d)
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// encodeInt writes v's smallest integer encoding into buf and returns its length.
func encodeInt(buf *[lpMaxIntLen]byte, v int64) int {
	switch {
	case v >= 0 && v <= 127:
		buf[0] = byte(v)
		return 1
	case v >= -4096 && v <= 4095:
		u := uint64(v) & (1<<13 - 1)
		buf[0] = byte(u>>8) | lpEnc13BitInt
		buf[1] = byte(u)
		return 2
	case v >= -32768 && v <= 32767:
		buf[0] = lpEnc16BitInt
		binary.LittleEndian.PutUint16(buf[1:], uint16(v))
		return 3
	case v >= -8388608 && v <= 8388607:
		buf[0] = lpEnc24BitInt
		buf[1], buf[2], buf[3] = byte(v), byte(v>>8), byte(v>>16)
		return 4
	case v >= -2147483648 && v <= 2147483647:
		buf[0] = lpEnc32BitInt
		binary.LittleEndian.PutUint32(buf[1:], uint32(v))
		return 5
	}
	buf[0] = lpEnc64BitInt
	binary.LittleEndian.PutUint64(buf[1:], uint64(v))
	return 9
}

// element is one value to write: an integer or a string, with its encoded size.
type element struct {
	s     []byte
	ib    [lpMaxIntLen]byte
	isInt bool
	enc   int // encoding+data size
}

func makeString(s []byte) element {
	if v, ok := ParseInt(s); ok {
		return makeInt(v)
	}
	e := element{s: s}
	switch {
	case len(s) <= lp6BitStrMax:
		e.enc = 1 + len(s)
	case len(s) <= lp12BitStrMax:
		e.enc = 2 + len(s)
	default:
		e.enc = 5 + len(s)
	}
	return e
}

func makeInt(v int64) element {
	e := element{isInt: true}
	e.enc = encodeInt(&e.ib, v)
	return e
}

func (e *element) size() int { return e.enc + backlenSize(e.enc) }

// put writes the entry (encoding, data, backlen) at dst[0:] and returns its size.
func (e *element) put(dst []byte) int {
	n := 0
	if e.isInt {
		n = copy(dst, e.ib[:e.enc])
	} else {
		l := len(e.s)
		switch {
		case l <= lp6BitStrMax:
			dst[0] = lpEnc6BitStr | byte(l)
			n = 1
		case l <= lp12BitStrMax:
			dst[0] = lpEnc12BitStr | byte(l>>8)
			dst[1] = byte(l)
			n = 2
		default:
			dst[0] = lpEnc32BitStr
			binary.LittleEndian.PutUint32(dst[1:], uint32(l))
			n = 5
		}
		n += copy(dst[n:], e.s)
	}
	var bl [5]byte
	return n + copy(dst[n:], appendBacklen(bl[:0], e.enc))
}

// splice replaces the del bytes at p with room for add bytes, growing lp as append
// would, and fixes the header (count changes by dcount).
func (lp Listpack) splice(p, del, add, dcount int) Listpack {
	count := int(binary.LittleEndian.Uint16(lp[4:]))
	old := len(lp)
	n := old - del + add
	if add > del {
		if n > cap(lp) {
			nb := make([]byte, old, max(n, 2*cap(lp)))
			copy(nb, lp)
			lp = nb
		}
		lp = lp[:n]
		copy(lp[p+add:], lp[p+del:old])
	} else {
		copy(lp[p+add:], lp[p+del:old])
		lp = lp[:n]
	}
	// As Redis does, an unknown count stays unknown until Len recounts it.
	if count != lpCountUnknown {
		count += dcount
	}
	lp.setHeader(n, count)
	return lp
}

// Append adds s at the end (as an integer entry when ParseInt accepts it).
func (lp Listpack) Append(s []byte) Listpack {
	e := makeString(s)
	return lp.insertElem(len(lp)-1, &e)
}

// AppendInt adds the integer v at the end.
func (lp Listpack) AppendInt(v int64) Listpack {
	e := makeInt(v)
	return lp.insertElem(len(lp)-1, &e)
}

// Prepend adds s at the front.
func (lp Listpack) Prepend(s []byte) Listpack {
	e := makeString(s)
	return lp.insertElem(lpHeaderSize, &e)
}

// InsertBefore inserts s before the entry at p (p may be len(lp)-1, the
// terminator, to append) and returns the changed listpack; the new entry is at p.
func (lp Listpack) InsertBefore(p int, s []byte) Listpack {
	e := makeString(s)
	return lp.insertElem(p, &e)
}

// InsertIntBefore is InsertBefore for an integer.
func (lp Listpack) InsertIntBefore(p int, v int64) Listpack {
	e := makeInt(v)
	return lp.insertElem(p, &e)
}

func (lp Listpack) insertElem(p int, e *element) Listpack {
	sz := e.size()
	if sameArray(lp, e.s) {
		// s points into lp, which splice is about to shift: write from a copy.
		e.s = append([]byte(nil), e.s...)
	}
	lp = lp.splice(p, 0, sz, 1)
	e.put(lp[p:])
	return lp
}

// sameArray reports whether s lies within lp's backing array.
func sameArray(lp, s []byte) bool {
	if len(s) == 0 || cap(lp) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(lp)))
	hi := lo + uintptr(cap(lp))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	return p >= lo && p < hi
}

// Delete removes the entry at p; the entry that followed it is now at p (or p is
// the terminator, len(lp)-1).
func (lp Listpack) Delete(p int) Listpack {
	return lp.splice(p, entrySize(lp[p:]), 0, -1)
}

// DeleteRange removes n entries starting at p (fewer if the listpack ends first).
func (lp Listpack) DeleteRange(p, n int) Listpack {
	q := p
	k := 0
	for ; k < n && lp[q] != lpEOF; k++ {
		q += entrySize(lp[q:])
	}
	return lp.splice(p, q-p, 0, -k)
}

// Replace overwrites the entry at p with s.
func (lp Listpack) Replace(p int, s []byte) Listpack {
	e := makeString(s)
	return lp.replaceElem(p, &e)
}

// ReplaceInt overwrites the entry at p with the integer v.
func (lp Listpack) ReplaceInt(p int, v int64) Listpack {
	e := makeInt(v)
	return lp.replaceElem(p, &e)
}

func (lp Listpack) replaceElem(p int, e *element) Listpack {
	if sameArray(lp, e.s) {
		e.s = append([]byte(nil), e.s...)
	}
	lp = lp.splice(p, entrySize(lp[p:]), e.size(), 0)
	e.put(lp[p:])
	return lp
}

// Seek returns the offset of entry i (negative i counts from the end, -1 the
// last), or -1 when out of range. It walks from the nearer end.
func (lp Listpack) Seek(i int) int {
	n := lp.Len()
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		return -1
	}
	if i < n/2 {
		p := lp.First()
		for ; i > 0; i-- {
			p = lp.Next(p)
		}
		return p
	}
	p := lp.Last()
	for k := n - 1; k > i; k-- {
		p = lp.Prev(p)
	}
	return p
}

// Find returns the offset of the first entry at or after p equal to s, looking at
// every skip+1'th entry (skip 1 visits the fields of a field,value listpack), or -1.
func (lp Listpack) Find(p int, s []byte, skip int) int {
	iv, isInt := ParseInt(s)
	for p >= 0 {
		es, v, ok := lp.Get(p)
		if ok == isInt && ((isInt && v == iv) || (!isInt && string(es) == string(s))) {
			return p
		}
		for k := 0; k <= skip && p >= 0; k++ {
			p = lp.Next(p)
		}
	}
	return -1
}

// ValidateListpack checks b as Redis's lpValidateIntegrity does: the header's
// total equals len(b) and the last byte is the terminator; in deep mode also every
// entry's encoding, bounds and backlen, and the element count unless it is 65535.
// entry, when not nil, is called with each entry's offset and may reject it.
func ValidateListpack(b []byte, deep bool, entry func(lp Listpack, p int) error) error {
	if len(b) < lpEmptyLen || len(b) > lpMaxSafety {
		return fmt.Errorf("%w: %d bytes", ErrListpackHeader, len(b))
	}
	lp := Listpack(b)
	if lp.totalBytes() != len(b) {
		return fmt.Errorf("%w: header says %d bytes, blob has %d", ErrListpackHeader, lp.totalBytes(), len(b))
	}
	if b[len(b)-1] != lpEOF {
		return fmt.Errorf("%w: last byte %#x is not the terminator", ErrListpackHeader, b[len(b)-1])
	}
	if !deep {
		return nil
	}
	end := len(b) - 1 // offset of the terminator
	count := 0
	p := lpHeaderSize
	for b[p] != lpEOF {
		hl := headerLen(b[p])
		if hl == 0 {
			return fmt.Errorf("%w: invalid encoding %#x at offset %d", ErrListpackEntry, b[p], p)
		}
		if p+hl > end {
			return fmt.Errorf("%w: encoding at offset %d runs past the end", ErrListpackEntry, p)
		}
		enc := encodedSize(b[p:])
		size := enc + backlenSize(enc)
		if enc <= 0 || size > end-p {
			return fmt.Errorf("%w: entry at offset %d (%d bytes) runs past the end", ErrListpackEntry, p, size)
		}
		bl, n := decodeBacklen(b, p+size-1)
		if n == 0 || bl+n != size {
			return fmt.Errorf("%w: entry at offset %d: backlen %d does not match size %d", ErrListpackEntry, p, bl, enc)
		}
		if entry != nil {
			if err := entry(lp, p); err != nil {
				return err
			}
		}
		p += size
		count++
	}
	if p != end {
		return fmt.Errorf("%w: terminator at offset %d before the end %d", ErrListpackEntry, p, end)
	}
	if h := int(binary.LittleEndian.Uint16(b[4:])); h != lpCountUnknown && h != count {
		return fmt.Errorf("%w: header says %d, found %d", ErrListpackCount, h, count)
	}
	return nil
}

// EntrySize returns the bytes Append(s) would add to a listpack.
func EntrySize(s []byte) int {
	e := makeString(s)
	return e.size()
}
