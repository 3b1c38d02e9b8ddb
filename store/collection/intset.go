package collection

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Intset layout (Redis 7.0, src/intset.h): u32 LE element width (2, 4 or 8), u32
// LE length, then the elements as signed little-endian integers, unique and
// ascending.
const (
	isHeaderSize = 8
	isEnc16      = 2
	isEnc32      = 4
	isEnc64      = 8
)

// Errors reported by ValidateIntset.
var (
	// ErrIntsetHeader: unknown width, a length that disagrees with the blob's size,
	// or an empty set (Redis never writes one).
	ErrIntsetHeader = errors.New("collection: intset header does not match its size")
	// ErrIntsetOrder: the elements are not unique and ascending.
	ErrIntsetOrder = errors.New("collection: intset elements are not unique and ascending")
)

// Intset is a set of integers in Redis 7.0's intset format: the bytes an RDB file
// stores for a small set of integers. Methods that change it return the changed
// blob, which shares the receiver's array when its capacity allows (as append does) The receiver is stale after a change: use only the
// returned value.
type Intset []byte

// NewIntset appends an empty intset (2-byte width) to dst and returns it. An empty
// intset is valid in memory only; ValidateIntset rejects it as Redis does.
func NewIntset(dst []byte) Intset {
	dst = append(dst, isEnc16, 0, 0, 0, 0, 0, 0, 0)
	return Intset(dst[len(dst)-isHeaderSize:])
}

func (is Intset) width() int { return int(binary.LittleEndian.Uint32(is)) }

// Len returns the number of elements.
func (is Intset) Len() int { return int(binary.LittleEndian.Uint32(is[4:])) }

// Get returns element i (0 is the smallest).
func (is Intset) Get(i int) int64 { return getWidth(is, is.width(), i) }

func getWidth(is []byte, w, i int) int64 {
	o := isHeaderSize + i*w
	switch w {
	case isEnc16:
		return int64(int16(binary.LittleEndian.Uint16(is[o:])))
	case isEnc32:
		return int64(int32(binary.LittleEndian.Uint32(is[o:])))
	}
	return int64(binary.LittleEndian.Uint64(is[o:]))
}

func putWidth(is []byte, w, i int, v int64) {
	o := isHeaderSize + i*w
	switch w {
	case isEnc16:
		binary.LittleEndian.PutUint16(is[o:], uint16(v))
	case isEnc32:
		binary.LittleEndian.PutUint32(is[o:], uint32(v))
	default:
		binary.LittleEndian.PutUint64(is[o:], uint64(v))
	}
}

// widthOf is the smallest element width holding v (_intsetValueEncoding).
func widthOf(v int64) int {
	switch {
	case v < math.MinInt32 || v > math.MaxInt32:
		return isEnc64
	case v < math.MinInt16 || v > math.MaxInt16:
		return isEnc32
	}
	return isEnc16
}

// search returns the position of v, or where it would be inserted.
func (is Intset) search(v int64) (int, bool) {
	n := is.Len()
	if n == 0 {
		return 0, false
	}
	w := is.width()
	// Fast paths Redis also takes: beyond either end.
	if v > getWidth(is, w, n-1) {
		return n, false
	}
	if v < getWidth(is, w, 0) {
		return 0, false
	}
	lo, hi := 0, n-1
	for lo <= hi {
		mid := int(uint(lo+hi) >> 1)
		switch cur := getWidth(is, w, mid); {
		case cur < v:
			lo = mid + 1
		case cur > v:
			hi = mid - 1
		default:
			return mid, true
		}
	}
	return lo, false
}

// Contains reports whether v is in the set.
func (is Intset) Contains(v int64) bool {
	if widthOf(v) > is.width() {
		return false
	}
	_, ok := is.search(v)
	return ok
}

// Add inserts v, upgrading the element width when v needs a wider one, and
// reports whether it was absent.
func (is Intset) Add(v int64) (Intset, bool) {
	if widthOf(v) > is.width() {
		return is.upgradeAdd(v), true
	}
	pos, ok := is.search(v)
	if ok {
		return is, false
	}
	w, n := is.width(), is.Len()
	is = is.resize(n+1, w)
	end := isHeaderSize + n*w
	copy(is[isHeaderSize+(pos+1)*w:], is[isHeaderSize+pos*w:end])
	putWidth(is, w, pos, v)
	binary.LittleEndian.PutUint32(is[4:], uint32(n+1))
	return is, true
}

// resize makes room for n elements of width w, keeping the bytes it had.
func (is Intset) resize(n, w int) Intset {
	size := isHeaderSize + n*w
	if size > cap(is) {
		nb := make([]byte, size, max(size, 2*cap(is)))
		copy(nb, is)
		return nb
	}
	return is[:size]
}

// upgradeAdd widens every element to v's width and adds v, which lies beyond
// every element (below them all when negative, above when positive).
func (is Intset) upgradeAdd(v int64) Intset {
	ow, nw, n := is.width(), widthOf(v), is.Len()
	is = is.resize(n+1, nw)
	prepend := 0
	if v < 0 {
		prepend = 1
	}
	// Back to front, so no element is overwritten before it is read.
	for i := n - 1; i >= 0; i-- {
		putWidth(is, nw, i+prepend, getWidth(is, ow, i))
	}
	if prepend == 1 {
		putWidth(is, nw, 0, v)
	} else {
		putWidth(is, nw, n, v)
	}
	binary.LittleEndian.PutUint32(is, uint32(nw))
	binary.LittleEndian.PutUint32(is[4:], uint32(n+1))
	return is
}

// Remove deletes v and reports whether it was present. The width never shrinks
// (as in Redis).
func (is Intset) Remove(v int64) (Intset, bool) {
	if widthOf(v) > is.width() {
		return is, false
	}
	pos, ok := is.search(v)
	if !ok {
		return is, false
	}
	w, n := is.width(), is.Len()
	copy(is[isHeaderSize+pos*w:], is[isHeaderSize+(pos+1)*w:isHeaderSize+n*w])
	binary.LittleEndian.PutUint32(is[4:], uint32(n-1))
	return is[:isHeaderSize+(n-1)*w], true
}

// Random returns the element r picks (r is any random number: r mod Len), as
// intsetRandom does; the set must not be empty.
func (is Intset) Random(r uint64) int64 { return is.Get(int(r % uint64(is.Len()))) }

// Find returns the index of v, or -1.
func (is Intset) Find(v int64) int {
	if widthOf(v) > is.width() {
		return -1
	}
	if pos, ok := is.search(v); ok {
		return pos
	}
	return -1
}

// ValidateIntset checks b as Redis's intsetValidateIntegrity does: a known
// width, a size of exactly 8+length*width, a non-zero length, and in deep mode
// strictly ascending elements.
func ValidateIntset(b []byte, deep bool) error {
	if len(b) < isHeaderSize {
		return fmt.Errorf("%w: %d bytes", ErrIntsetHeader, len(b))
	}
	is := Intset(b)
	w := is.width()
	if w != isEnc16 && w != isEnc32 && w != isEnc64 {
		return fmt.Errorf("%w: width %d", ErrIntsetHeader, w)
	}
	n := uint64(is.Len())
	if uint64(isHeaderSize)+n*uint64(w) != uint64(len(b)) {
		return fmt.Errorf("%w: %d elements of %d bytes in %d bytes", ErrIntsetHeader, n, w, len(b))
	}
	if n == 0 {
		return fmt.Errorf("%w: empty", ErrIntsetHeader)
	}
	if !deep {
		return nil
	}
	prev := getWidth(b, w, 0)
	for i := 1; i < int(n); i++ {
		cur := getWidth(b, w, i)
		if cur <= prev {
			return fmt.Errorf("%w: element %d (%d) after %d", ErrIntsetOrder, i, cur, prev)
		}
		prev = cur
	}
	return nil
}
