package rdb

// LZF, the block format Redis compresses strings with (src/lzf_c.c and
// src/lzf_d.c). A block is a run of items, each opened by a control byte c:
// c < 32 copies the next c+1 bytes; otherwise L = c>>5 (7 means "add the
// next byte"), and L+2 bytes are copied from d = (c&0x1F)<<8 + next byte + 1
// bytes back in the output, byte by byte, so a copy may overlap itself.

const (
	lzfMaxLit = 32          // longest literal run one control byte covers
	lzfMaxOff = 1 << 13     // farthest back-reference
	lzfMaxRef = 1<<8 + 1<<3 // longest back-reference length field
	lzfHLog   = 16          // log2 of the match table's size, as Redis builds liblzf
	lzfHSize  = 1 << lzfHLog
)

// lzfTable is the compressor's match table: per hash slot, the stamp of
// the input position last seen there. Stamps grow across calls (base), so
// the table never needs clearing between strings: a slot written for an
// earlier input holds a stamp below the current base and reads as empty.
type lzfTable struct {
	slot [lzfHSize]uint32
	base uint32
}

// lzfIdx is liblzf's hash of the last three (and, through the shift, a
// fourth) input bytes, in its VERY_FAST configuration.
func lzfIdx(h uint32) uint32 {
	return ((h >> (3*8 - lzfHLog)) - h*5) & (lzfHSize - 1)
}

// lzfCompress compresses src into dst and returns the number of bytes
// written, or 0 when the output does not fit in len(dst): as in Redis, the
// caller offers a buffer smaller than src, so 0 means "not worth it". It
// makes the same choices as liblzf's lzf_compress as Redis 7.0 builds it
// (HLOG 16, VERY_FAST) with a cleared hash table, so for the same input it
// writes the same bytes as Redis's rdbSaveLzfStringObject.
func lzfCompress(dst, src []byte, ht *lzfTable) int {
	n := len(src)
	outEnd := len(dst)
	if n == 0 || outEnd == 0 {
		return 0
	}
	if ht.base > 1<<31 {
		clear(ht.slot[:])
		ht.base = 0
	}
	base := ht.base
	ht.base += uint32(n) + 1
	// The slot stamp of position p is base+p+1; anything ≤ base is empty.
	ip, op, lit := 0, 1, 0
	var hval uint32
	if n >= 2 {
		hval = uint32(src[0])<<8 | uint32(src[1])
	}
	for ip < n-2 {
		hval = hval<<8 | uint32(src[ip+2])
		k := lzfIdx(hval)
		ref := -1
		if st := ht.slot[k]; st > base {
			ref = int(st - base - 1)
		}
		ht.slot[k] = base + uint32(ip) + 1
		off := ip - ref - 1
		if ref > 0 && off < lzfMaxOff && ip+4 < n &&
			src[ref] == src[ip] && src[ref+1] == src[ip+1] && src[ref+2] == src[ip+2] {
			l := 2
			maxlen := min(n-ip-l, lzfMaxRef)
			// The output check comes first, as liblzf's: a literal run
			// that just filled the buffer leaves op past its end.
			empty := 0
			if lit == 0 {
				empty = 1
			}
			if op-empty+3+1 >= outEnd {
				return 0
			}
			dst[op-lit-1] = byte(lit - 1) // close the literal run
			op -= empty                   // no literals: drop the run's control byte
			matched := false
			if maxlen > 16 {
				for range 16 {
					l++
					if src[ref+l] != src[ip+l] {
						matched = true
						break
					}
				}
			}
			if !matched {
				for {
					l++
					if l >= maxlen || src[ref+l] != src[ip+l] {
						break
					}
				}
			}
			l -= 2 // now the length field: bytes copied minus 2, plus 1
			ip++
			if l < 7 {
				dst[op] = byte(off>>8 + l<<5)
				op++
			} else {
				dst[op] = byte(off>>8 + 7<<5)
				dst[op+1] = byte(l - 7)
				op += 2
			}
			dst[op] = byte(off)
			op++
			lit = 0
			op++ // open a new literal run
			ip += l + 1
			if ip >= n-2 {
				break
			}
			// Index the last two positions of the match.
			ip -= 2
			hval = uint32(src[ip])<<8 | uint32(src[ip+1])
			hval = hval<<8 | uint32(src[ip+2])
			ht.slot[lzfIdx(hval)] = base + uint32(ip) + 1
			ip++
			hval = hval<<8 | uint32(src[ip+2])
			ht.slot[lzfIdx(hval)] = base + uint32(ip) + 1
			ip++
			continue
		}
		if op >= outEnd {
			return 0
		}
		lit++
		dst[op] = src[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			dst[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	if op+3 > outEnd { // at most 3 bytes are still to come
		return 0
	}
	for ip < n {
		lit++
		dst[op] = src[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			dst[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	dst[op-lit-1] = byte(lit - 1)
	if lit == 0 {
		op--
	}
	return op
}

// lzfDecompress appends the decompression of src to dst; it fails unless
// the output is exactly want bytes.
func lzfDecompress(dst, src []byte, want int) ([]byte, bool) {
	base := len(dst)
	dst = growTo(dst, base+want)
	out := dst[base : base+want]
	op := 0
	for ip := 0; ip < len(src); {
		c := int(src[ip])
		ip++
		if c < 32 {
			k := c + 1
			if ip+k > len(src) || op+k > want {
				return dst[:base], false
			}
			copy(out[op:], src[ip:ip+k])
			op += k
			ip += k
			continue
		}
		L := c >> 5
		if L == 7 {
			if ip >= len(src) {
				return dst[:base], false
			}
			L += int(src[ip])
			ip++
		}
		if ip >= len(src) {
			return dst[:base], false
		}
		ref := op - (c&0x1F)<<8 - int(src[ip]) - 1
		ip++
		L += 2
		if ref < 0 || op+L > want {
			return dst[:base], false
		}
		// A back-reference may overlap the bytes it writes (its distance
		// d = op-ref below L, e.g. a run of one byte: d = 1), and then its
		// d bytes repeat. Each copy takes everything from ref to what is
		// written so far (never overlapping its destination): n stays a
		// multiple of d until the last copy, so the pattern lines up, and
		// the chunks double rather than going a byte at a time.
		for n := 0; n < L; {
			n += copy(out[op+n:op+L], out[ref:op+n])
		}
		op += L
	}
	if op != want {
		return dst[:base], false
	}
	return dst[:base+want], true
}

// growTo returns b with length n, reusing its array when it is big enough.
func growTo(b []byte, n int) []byte {
	if n <= cap(b) {
		return b[:n]
	}
	nb := make([]byte, n, max(n, 2*cap(b)))
	copy(nb, b)
	return nb
}
