package bitmap

import (
	"math/big"
	"testing"
)

// The models below read a value bit by bit and do BITFIELD's arithmetic in
// math/big, so they share nothing with the package's masks and shifts.

func bitAt(p []byte, i int64) int {
	if i < 0 || i>>3 >= int64(len(p)) {
		return 0
	}
	return int(p[i>>3]>>(7-i&7)) & 1
}

// modelBits turns a BITCOUNT/BITPOS range into bit indexes [lo, hi].
func modelBits(n, start, end int64, isBit bool) (lo, hi int64, ok bool) {
	total := n
	if isBit {
		total = n * 8
	}
	if start < 0 {
		start += total
	}
	if end < 0 {
		end += total
	}
	if start < 0 {
		start = 0
	}
	if end < 0 {
		end = 0
	}
	if end >= total {
		end = total - 1
	}
	if start > end {
		return 0, 0, false
	}
	if isBit {
		return start, end, true
	}
	return start * 8, end*8 + 7, true
}

func modelCount(p []byte, start, end int64, hasRange, isBit bool) int64 {
	lo, hi := int64(0), int64(len(p))*8-1
	if hasRange {
		if start < 0 && end < 0 && start > end {
			return 0
		}
		var ok bool
		if lo, hi, ok = modelBits(int64(len(p)), start, end, isBit); !ok {
			return 0
		}
	}
	var n int64
	for i := lo; i <= hi; i++ {
		n += int64(bitAt(p, i))
	}
	return n
}

func modelPos(p []byte, bit int, start, end int64, hasStart, hasEnd, isBit bool) int64 {
	if !hasStart {
		if len(p) == 0 {
			return -1
		}
		start, end, isBit = 0, int64(len(p))-1, false
	} else if !hasEnd {
		end = int64(len(p)) - 1
	}
	lo, hi, ok := modelBits(int64(len(p)), start, end, isBit)
	if !ok {
		return -1
	}
	for i := lo; i <= hi; i++ {
		if bitAt(p, i) == bit {
			return i
		}
	}
	if bit == 1 || hasEnd {
		return -1
	}
	return (hi/8 + 1) * 8 // past the range's last byte: zero padding
}

// modelAdd does BITFIELD's overflow rule on exact integers.
func modelAdd(value, incr *big.Int, width uint, signed bool, behaviour int) (*big.Int, bool) {
	lo, hi := new(big.Int), new(big.Int).Lsh(big.NewInt(1), width)
	hi.Sub(hi, big.NewInt(1))
	if signed {
		hi.Rsh(hi, 1)
		lo.Neg(hi).Sub(lo, big.NewInt(1))
	}
	sum := new(big.Int).Add(value, incr)
	if sum.Cmp(lo) >= 0 && sum.Cmp(hi) <= 0 {
		return sum, false
	}
	if behaviour == Sat {
		if sum.Cmp(lo) < 0 {
			return lo, true
		}
		return hi, true
	}
	mod := new(big.Int).Lsh(big.NewInt(1), width)
	w := new(big.Int).Mod(sum, mod)
	if signed && w.Cmp(hi) > 0 {
		w.Sub(w, mod)
	}
	return w, true
}

func FuzzCount(f *testing.F) {
	f.Add([]byte("foobar"), int64(1), int64(-2), true, false)
	f.Add([]byte("\xff\x0f"), int64(3), int64(12), true, true)
	f.Add([]byte{}, int64(0), int64(-1), true, true)
	f.Fuzz(func(t *testing.T, p []byte, start, end int64, hasRange, isBit bool) {
		if start < -1<<40 || start > 1<<40 || end < -1<<40 || end > 1<<40 {
			return // Redis's arithmetic is on values of at most 512 MiB
		}
		if got, want := Count(p, start, end, hasRange, isBit), modelCount(p, start, end, hasRange, isBit); got != want {
			t.Fatalf("Count(%x, %d, %d, %v, %v) = %d, model %d", p, start, end, hasRange, isBit, got, want)
		}
	})
}

func FuzzPos(f *testing.F) {
	f.Add([]byte("\xff\xf0\x00"), 0, int64(7), int64(15), true, true, true)
	f.Add([]byte("\xff\xff"), 0, int64(0), int64(0), false, false, false)
	f.Add([]byte("\x00"), 1, int64(-3), int64(-1), true, true, true)
	f.Fuzz(func(t *testing.T, p []byte, bit int, start, end int64, hasStart, hasEnd, isBit bool) {
		bit &= 1
		if !hasStart {
			hasEnd = false
		}
		if !hasEnd {
			isBit = false
		}
		if start < -1<<40 || start > 1<<40 || end < -1<<40 || end > 1<<40 {
			return
		}
		if got, want := Pos(p, bit, start, end, hasStart, hasEnd, isBit), modelPos(p, bit, start, end, hasStart, hasEnd, isBit); got != want {
			t.Fatalf("Pos(%x, %d, %d, %d, start %v, end %v, bit %v) = %d, model %d", p, bit, start, end, hasStart, hasEnd, isBit, got, want)
		}
	})
}

// FuzzField: reading a field back after Put gives the low bits written, as
// the bit-by-bit model reads them, and AddSigned/AddUnsigned agree with
// exact arithmetic.
func FuzzField(f *testing.F) {
	f.Add([]byte("abcdefghij"), uint64(3), uint8(13), uint64(0x1234), int64(100), uint8(0))
	f.Add([]byte{0, 0}, uint64(0), uint8(64), uint64(1)<<63, int64(-1), uint8(1))
	f.Fuzz(func(t *testing.T, p []byte, off uint64, width uint8, v uint64, incr int64, behaviour uint8) {
		width = width%64 + 1
		off %= 256
		for int(off+uint64(width)+7)/8 > len(p) {
			p = append(p, 0)
		}
		Put(p, off, width, v)
		var want uint64
		for j := uint64(0); j < uint64(width); j++ {
			want = want<<1 | uint64(bitAt(p, int64(off+j)))
		}
		mask := ^uint64(0) >> (64 - width)
		if got := Unsigned(p, off, width); got != want || got != v&mask {
			t.Fatalf("Unsigned after Put(%d, %d, %#x) = %#x, bits %#x", off, width, v, got, want)
		}
		b := int(behaviour % 3)
		sv := Signed(p, off, width)
		got, of := AddSigned(sv, incr, width, b)
		wantS, wantOf := modelAdd(big.NewInt(sv), big.NewInt(incr), uint(width), true, b)
		if of != wantOf || (!(of && b == Fail) && big.NewInt(got).Cmp(wantS) != 0) {
			t.Fatalf("AddSigned(%d, %d, i%d, %d) = %d %v, model %s %v", sv, incr, width, b, got, of, wantS, wantOf)
		}
		if width < 64 {
			uv := Unsigned(p, off, width)
			gotU, ofU := AddUnsigned(uv, incr, width, b)
			wantU, wantOfU := modelAdd(new(big.Int).SetUint64(uv), big.NewInt(incr), uint(width), false, b)
			if ofU != wantOfU || (!(ofU && b == Fail) && new(big.Int).SetUint64(gotU).Cmp(wantU) != 0) {
				t.Fatalf("AddUnsigned(%d, %d, u%d, %d) = %d %v, model %s %v", uv, incr, width, b, gotU, ofU, wantU, wantOfU)
			}
		}
	})
}
