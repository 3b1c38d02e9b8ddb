// Package bitmap is the arithmetic of Redis's bit commands over a string
// value: BITCOUNT's and BITPOS's ranges (in bytes or bits, negative
// offsets from the end), and BITFIELD's integers of any width at any bit
// offset, with Redis's overflow rules (wrap, saturate, fail). Bit 0 is the
// most significant bit of byte 0, as in Redis. The functions are pure and
// allocate nothing; the command engine reads and writes the value.
package bitmap

import "math/bits"

// span turns a BITCOUNT/BITPOS range over n bytes into the bytes it
// covers, [first, last], and the masks of the bits of the first and last
// byte that lie outside it (bit ranges only). ok is false for an empty
// range.
func span(n, start, end int64, isBit bool) (first, last int64, firstOut, lastOut byte, ok bool) {
	total := n
	if isBit {
		total *= 8
	}
	if start < 0 {
		start += total
	}
	if end < 0 {
		end += total
	}
	start, end = max(start, 0), max(end, 0)
	if end >= total {
		end = total - 1
	}
	if start > end {
		return 0, 0, 0, 0, false
	}
	if isBit {
		firstOut = ^byte(0xFF >> (start & 7))
		lastOut = byte(1<<(7-end&7)) - 1
		start, end = start>>3, end>>3
	}
	return start, end, firstOut, lastOut, true
}

// Count is BITCOUNT: the set bits of p, or of the range [start, end]
// (inclusive; bytes, or bits when isBit) when hasRange.
func Count(p []byte, start, end int64, hasRange, isBit bool) int64 {
	if !hasRange {
		return popcount(p)
	}
	if start < 0 && end < 0 && start > end {
		return 0
	}
	first, last, firstOut, lastOut, ok := span(int64(len(p)), start, end, isBit)
	if !ok {
		return 0
	}
	n := popcount(p[first : last+1])
	n -= int64(bits.OnesCount8(p[first]&firstOut) + bits.OnesCount8(p[last]&lastOut))
	return n
}

func popcount(p []byte) int64 {
	var n int
	for len(p) >= 8 {
		n += bits.OnesCount64(uint64(p[0]) | uint64(p[1])<<8 | uint64(p[2])<<16 | uint64(p[3])<<24 |
			uint64(p[4])<<32 | uint64(p[5])<<40 | uint64(p[6])<<48 | uint64(p[7])<<56)
		p = p[8:]
	}
	for _, c := range p {
		n += bits.OnesCount8(c)
	}
	return int64(n)
}

// Pos is BITPOS: the position of the first bit equal to bit (0 or 1) in p,
// or in a range when hasStart (a start without an end runs to the end).
// (A missing key is the caller's: Redis answers 0 for a 0 and -1 for a 1.)
// Without a range, or without an end, the value counts as followed by
// zero bits, so a search for 0 in all-ones finds the bit just past it; in
// an explicit range, and for a 1 not found, the answer is -1.
func Pos(p []byte, bit int, start, end int64, hasStart, hasEnd, isBit bool) int64 {
	if !hasStart {
		if len(p) == 0 {
			return -1 // an empty range holds neither a 0 nor a 1
		}
		return find(p, bit, 0, int64(len(p))-1, 0, 0, false)
	}
	if !hasEnd {
		end = int64(len(p)) - 1
		if isBit {
			end = int64(len(p))*8 + 7
		}
	}
	first, last, firstOut, lastOut, ok := span(int64(len(p)), start, end, isBit)
	if !ok {
		return -1
	}
	return find(p, bit, first, last, firstOut, lastOut, hasEnd)
}

// find searches bytes [first, last] of p, ignoring the bits in the masks,
// and applies the end-of-range rule.
func find(p []byte, bit int, first, last int64, firstOut, lastOut byte, explicitEnd bool) int64 {
	for i := first; i <= last; i++ {
		c := p[i]
		ignore := byte(0)
		if i == first {
			ignore |= firstOut
		}
		if i == last {
			ignore |= lastOut
		}
		if bit == 1 {
			c &^= ignore
		} else {
			c |= ignore
			c = ^c
		}
		if c != 0 {
			return i*8 + int64(bits.LeadingZeros8(c))
		}
	}
	if bit == 1 || explicitEnd {
		return -1
	}
	return (last + 1) * 8 // the zero bits after the value
}

// Unsigned reads the width-bit unsigned integer at bit offset off of p
// (bits past the end of p read as 0).
func Unsigned(p []byte, off uint64, width uint8) uint64 {
	var v uint64
	for j := uint64(0); j < uint64(width); j++ {
		o := off + j
		var b uint64
		if o>>3 < uint64(len(p)) {
			b = uint64(p[o>>3]>>(7-o&7)) & 1
		}
		v = v<<1 | b
	}
	return v
}

// Signed reads the width-bit two's-complement integer at bit offset off.
func Signed(p []byte, off uint64, width uint8) int64 {
	v := Unsigned(p, off, width)
	if width < 64 && v&(1<<(width-1)) != 0 {
		v |= ^uint64(0) << width
	}
	return int64(v)
}

// Put writes the low width bits of v at bit offset off of p, which must be
// long enough.
func Put(p []byte, off uint64, width uint8, v uint64) {
	for j := uint64(0); j < uint64(width); j++ {
		o := off + j
		bit := byte(v>>(uint64(width)-1-j)) & 1
		mask := byte(1) << (7 - o&7)
		p[o>>3] = p[o>>3]&^mask | bit<<(7-o&7)
	}
}

// Overflow behaviours (BITFIELD's OVERFLOW).
const (
	Wrap = 0
	Sat  = 1
	Fail = 2
)

// AddUnsigned adds incr to the width-bit unsigned value, as BITFIELD does
// for INCRBY (and with incr 0 to place SET's value): the sum, and whether
// it overflowed (then wrapped, or saturated at 0 or the maximum, per
// behaviour; with Fail the caller writes nothing).
func AddUnsigned(value uint64, incr int64, width uint8, behaviour int) (uint64, bool) {
	max := uint64(1)<<width - 1
	if width == 64 {
		max = ^uint64(0)
	}
	maxIncr := int64(max - value)
	minIncr := -int64(value)
	switch {
	case value > max || (incr > 0 && incr > maxIncr):
		if behaviour == Sat {
			return max, true
		}
	case incr < 0 && incr < minIncr:
		if behaviour == Sat {
			return 0, true
		}
	default:
		return value + uint64(incr), false
	}
	return (value + uint64(incr)) &^ (^uint64(0) << width), true
}

// AddSigned is AddUnsigned for width-bit two's-complement values.
func AddSigned(value, incr int64, width uint8, behaviour int) (int64, bool) {
	max := int64(1)<<(width-1) - 1
	if width == 64 {
		max = 1<<63 - 1
	}
	min := -max - 1
	maxIncr := int64(uint64(max) - uint64(value)) // may wrap: used only once value <= max
	minIncr := min - value
	switch {
	case value > max || (width != 64 && incr > maxIncr) || (value >= 0 && incr > 0 && incr > maxIncr):
		if behaviour == Sat {
			return max, true
		}
	case value < min || (width != 64 && incr < minIncr) || (value < 0 && incr < 0 && incr < minIncr):
		if behaviour == Sat {
			return min, true
		}
	default:
		return value + incr, false
	}
	c := uint64(value) + uint64(incr)
	if width < 64 {
		if c&(1<<(width-1)) != 0 {
			c |= ^uint64(0) << width
		} else {
			c &^= ^uint64(0) << width
		}
	}
	return int64(c), true
}
