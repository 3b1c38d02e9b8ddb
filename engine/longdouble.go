package engine

import (
	"math/big"
	"strconv"
	"unsafe"
)

// INCRBYFLOAT's arithmetic, as Redis does it on x86-64: both numbers are
// read as C long doubles (strtold: 64-bit significand, rounded to nearest
// even), added in that precision, and the sum is printed with "%.17Lf"
// less its trailing zeros. A float64 would differ in the last digits
// ("12345.678" + "0.1" is 12345.77799999999999958 in Redis), so the numbers
// are math/big Floats of 64-bit precision; the decimal conversions are
// big's, which allocate (docs/commands.md says so).
type longDouble struct {
	x, y big.Float
}

// Long double's range: values from 2^16384 overflow to infinity, and
// below half the smallest subnormal (2^-16445) to zero; strtold reports
// both as ERANGE, which Redis refuses.
const (
	ldMaxExp = 16384  // |v| < 2^ldMaxExp
	ldMinExp = -16445 // |v| >= 2^(ldMinExp-1), or zero
)

// parse reads s as Redis 7.0's string2ld does: strtold must consume every
// byte (so a NUL inside the value, where C's string would end, makes it no
// number), no leading space, no NaN, no overflow or underflow to zero.
func (ld *longDouble) parse(f *big.Float, s []byte) bool {
	f.SetPrec(64).SetMode(big.ToNearestEven)
	if len(s) == 0 || len(s) >= 5*1024 || isSpace(s[0]) {
		return false
	}
	body, neg := s, false
	if body[0] == '+' || body[0] == '-' {
		neg = body[0] == '-'
		body = body[1:]
	}
	if word := lowerASCII(body); word == "inf" || word == "infinity" {
		f.SetInf(neg)
		return true
	}
	if !strtoldSyntax(body) {
		return false
	}
	if _, ok := f.SetString(unsafe.String(unsafe.SliceData(s), len(s))); !ok {
		return false
	}
	if f.Sign() != 0 {
		if e := f.MantExp(nil); e > ldMaxExp || e < ldMinExp {
			return false
		}
	}
	return true
}

// strtoldSyntax reports whether b (after the sign) is a complete decimal
// or hexadecimal floating-point number in strtold's grammar.
func strtoldSyntax(b []byte) bool {
	hex := len(b) > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X')
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	digit := isDigit
	expMark := byte('e')
	if hex {
		b = b[2:]
		digit = func(c byte) bool { return isDigit(c) || (c|0x20) >= 'a' && (c|0x20) <= 'f' }
		expMark = 'p'
	}
	i, n := 0, 0
	for ; i < len(b) && digit(b[i]); i++ {
		n++
	}
	if i < len(b) && b[i] == '.' {
		for i++; i < len(b) && digit(b[i]); i++ {
			n++
		}
	}
	if n == 0 {
		return false
	}
	if i < len(b) && b[i]|0x20 == expMark {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		for ; i < len(b) && isDigit(b[i]); i++ {
		}
		if i == start {
			return false
		}
	}
	return i == len(b)
}

func isSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

// lowerASCII returns b in lower case when it is a short word (for "inf"),
// else "".
func lowerASCII(b []byte) string {
	if len(b) > 8 {
		return ""
	}
	var buf [8]byte
	for i, c := range b {
		buf[i] = c | 0x20
	}
	return string(buf[:len(b)])
}

// add appends the sum of the long doubles in value and incr, formatted as
// Redis stores it, to dst. It reports notFloat when either does not parse
// and overflow when the sum is infinite or NaN.
func (ld *longDouble) add(dst, value, incr []byte) (out []byte, notFloat, overflow bool) {
	// Two plain integers whose sum fits int64 add exactly in a long double
	// too, and "%.17Lf" less its zeros prints the integer: no big.Float
	// (whose conversions allocate) is needed.
	if a, ok := plainInt(value); ok {
		if b, ok := plainInt(incr); ok {
			return strconv.AppendInt(dst, a+b, 10), false, false
		}
	}
	return ld.addBig(dst, value, incr)
}

// addBig is add in big.Float arithmetic, for any operands.
func (ld *longDouble) addBig(dst, value, incr []byte) (out []byte, notFloat, overflow bool) {
	if !ld.parse(&ld.x, value) || !ld.parse(&ld.y, incr) {
		return dst, true, false
	}
	if ld.x.IsInf() || ld.y.IsInf() { // inf + x is inf, inf - inf NaN: both refused
		return dst, false, true
	}
	ld.x.Add(&ld.x, &ld.y)
	if ld.x.Sign() != 0 && ld.x.MantExp(nil) > ldMaxExp {
		return dst, false, true
	}
	start := len(dst)
	dst = ld.x.Append(dst, 'f', 17)
	// "%.17Lf" less trailing zeros and the point, and "-0" as "0".
	for dst[len(dst)-1] == '0' {
		dst = dst[:len(dst)-1]
	}
	if dst[len(dst)-1] == '.' {
		dst = dst[:len(dst)-1]
	}
	if string(dst[start:]) == "-0" {
		dst = append(dst[:start], '0')
	}
	return dst, false, false
}

// plainInt reads b when it is an optional minus and 1 to 18 decimal
// digits (so it fits int64 with room); anything else takes the general
// path.
func plainInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}
