package collection

import (
	"bytes"
	"math"
	"strconv"
)

// AppendScore appends score as Redis 7.0's d2string writes it into a sorted set's
// listpack: "inf"/"-inf"/"nan", "0"/"-0", an integral value within ±(2^52-1) as an
// integer, anything else with "%.17g".
func AppendScore(dst []byte, score float64) []byte {
	switch {
	case math.IsNaN(score):
		return append(dst, "nan"...)
	case math.IsInf(score, 1):
		return append(dst, "inf"...)
	case math.IsInf(score, -1):
		return append(dst, "-inf"...)
	case score >= -math.MaxInt64/2 && score <= math.MaxInt64/2 && score == math.Trunc(score):
		return strconv.AppendInt(dst, int64(score), 10)
	}
	return strconv.AppendFloat(dst, score, 'g', 17, 64)
}

// Score reads the score entry at p of a sorted set's listpack.
func (lp Listpack) Score(p int) float64 {
	s, v, isInt := lp.Get(p)
	if isInt {
		return float64(v)
	}
	switch string(s) {
	case "inf":
		return math.Inf(1)
	case "-inf":
		return math.Inf(-1)
	}
	f, _ := strconv.ParseFloat(string(s), 64)
	return f
}

// zless orders sorted-set elements as zzlInsert does: by score, then by member
// bytes (a prefix first).
func zless(s1 float64, m1 []byte, s2 float64, m2 []byte) bool {
	if s1 != s2 {
		return s1 < s2
	}
	return bytes.Compare(m1, m2) < 0
}

// ZsetInsert adds member with score to a sorted set's listpack (member, score
// pairs in order), where member is not present yet, at the place zzlInsert puts
// it, and returns the changed listpack.
func (lp Listpack) ZsetInsert(member []byte, score float64) Listpack {
	var mbuf [24]byte
	p := lp.First()
	for p >= 0 {
		sp := lp.Next(p)
		ms := zkeyAt(lp, p, &mbuf)
		if zless(score, member, lp.Score(sp), ms) {
			break
		}
		p = lp.Next(sp)
	}
	if p < 0 {
		p = len(lp) - 1
	}
	var sbuf [32]byte
	sc := AppendScore(sbuf[:0], score)
	lp = lp.InsertBefore(p, member)
	return lp.InsertBefore(p+entrySize(lp[p:]), sc)
}

// ZsetRank returns the 0-based rank of member in a sorted set's listpack and its
// score, or -1.
func (lp Listpack) ZsetRank(member []byte) (int, float64) {
	rank := 0
	for p := lp.First(); p >= 0; p = lp.Next(lp.Next(p)) {
		if lp.Equal(p, member) {
			return rank, lp.Score(lp.Next(p))
		}
		rank++
	}
	return -1, 0
}

// AppendDouble appends score as Redis 7.0 replies with a double
// (addReplyDouble: "%.17g", "inf" and "-inf") and as ZSCAN writes a
// skiplist's scores.
func AppendDouble(dst []byte, score float64) []byte {
	switch {
	case math.IsInf(score, 1):
		return append(dst, "inf"...)
	case math.IsInf(score, -1):
		return append(dst, "-inf"...)
	}
	return strconv.AppendFloat(dst, score, 'g', 17, 64)
}
