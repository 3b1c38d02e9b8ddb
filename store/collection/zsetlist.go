package collection

import (
	"bytes"
	"encoding/binary"
	"math"
	"strconv"

	"github.com/goblin-kv/goblin/arena"
)

// A large sorted set keeps its order in a List whose elements are zkeys: the
// score as 8 order-preserving bytes, then the member. Byte order of zkeys is
// Redis's order of elements (score, then member bytes, a prefix first), so
// the List stays sorted by inserting each zkey before the first greater one,
// and a bound in that order is found by walking node counts (ZCount).

// ZKeyLen is the length of a zkey's score prefix.
const ZKeyLen = 8

// AppendZKey appends the zkey of (score, member). -0 is written as +0 (the
// two are equal scores, ordered by member); score must not be NaN.
func AppendZKey(dst []byte, score float64, member []byte) []byte {
	if score == 0 {
		score = 0
	}
	u := math.Float64bits(score)
	if u&(1<<63) != 0 {
		u = ^u
	} else {
		u |= 1 << 63
	}
	dst = binary.BigEndian.AppendUint64(dst, u)
	return append(dst, member...)
}

// ZKeyScore returns a zkey's score (+0 for a stored -0).
func ZKeyScore(k []byte) float64 {
	u := binary.BigEndian.Uint64(k)
	if u&(1<<63) != 0 {
		u &^= 1 << 63
	} else {
		u = ^u
	}
	return math.Float64frombits(u)
}

// The kinds of ZBound.
const (
	ZByKey   uint8 = iota // before (Score, Member) in the set's order
	ZByScore              // before Score (OrEqual: or at it)
	ZByLex                // before Member (OrEqual: or at it); Inf -1 is "-", +1 is "+"
)

// ZBound is a place in a sorted set's order, as range commands give one:
// Before tells the elements that lie before it. The elements before a bound
// are a prefix of the set, so its rank is how many they are (ZCount).
type ZBound struct {
	Kind    uint8
	OrEqual bool
	Inf     int8
	Score   float64
	Member  []byte
}

// Before reports whether the element (score, member) lies before b.
func (b *ZBound) Before(score float64, member []byte) bool {
	switch b.Kind {
	case ZByScore:
		return score < b.Score || (b.OrEqual && score == b.Score)
	case ZByLex:
		if b.Inf != 0 {
			return b.Inf > 0
		}
		c := bytes.Compare(member, b.Member)
		return c < 0 || (b.OrEqual && c == 0)
	}
	return score < b.Score || (score == b.Score && bytes.Compare(member, b.Member) < 0)
}

// ZsetCount returns how many elements of a sorted set's listpack lie before b.
func (lp Listpack) ZsetCount(b *ZBound) int {
	var mbuf [24]byte
	n := 0
	for p := lp.First(); p >= 0; p = lp.Next(lp.Next(p)) {
		sp := lp.Next(p)
		if !b.Before(lp.Score(sp), zkeyAt(lp, p, &mbuf)) {
			break
		}
		n++
	}
	return n
}

// ZsetString returns the string at p of a sorted set's listpack without
// copying it; an integer entry is formatted into buf.
func (lp Listpack) ZsetString(p int, buf *[24]byte) []byte { return zkeyAt(lp, p, buf) }

// ZsetFind returns the offset of member's entry in a sorted set's listpack, or -1.
func (lp Listpack) ZsetFind(member []byte) int {
	for p := lp.First(); p >= 0; p = lp.Next(lp.Next(p)) {
		if lp.Equal(p, member) {
			return p
		}
	}
	return -1
}

// zkeyAt returns the string at p of a listpack (a zkey, a member), without
// copying it unless it is stored as an integer, which is formatted into buf.
func zkeyAt(lp Listpack, p int, buf *[24]byte) []byte {
	s, v, isInt := lp.Get(p)
	if isInt {
		return strconv.AppendInt(buf[:0], v, 10)
	}
	return s
}

// ZCount returns how many zkeys of the list lie before b: whole nodes are
// counted by their last zkey, the node holding the bound entry by entry.
func (l *List) ZCount(a *arena.Arena, b *ZBound) int {
	_, _, _, n := l.zlocate(a, b)
	return n
}

// zlocate finds the first zkey not before b: its node, its index and
// offset in the node and its rank (node 0 and rank Len when every zkey is
// before b).
func (l *List) zlocate(a *arena.Arena, b *ZBound) (arena.Ref, int, int, int) {
	if l.idx != 0 {
		return l.ixLocate(a, b)
	}
	var buf [24]byte
	// The tail first: when its first zkey is before b, so is every zkey of
	// the nodes before it, and the place is in the tail or past it. ZADD of a
	// new highest score (a time series, a rate limiter's window) reads one node.
	if t := l.tail; t != 0 && t != l.head {
		lp := nodeLP(a, t)
		if k := zkeyAt(lp, lp.First(), &buf); b.Before(ZKeyScore(k), k[ZKeyLen:]) {
			return zscan(lp, t, lp.First(), 0, int(l.n)-lp.Len(), b)
		}
	}
	n := 0
	for r := l.head; r != 0; _, r = nodeLinks(a, r) {
		lp := nodeLP(a, r)
		if k := zkeyAt(lp, lp.Last(), &buf); b.Before(ZKeyScore(k), k[ZKeyLen:]) {
			n += lp.Len()
			continue
		}
		return zscan(lp, r, lp.First(), 0, n, b)
	}
	return 0, 0, 0, n
}

// zscan walks node r's listpack lp from entry i at offset p, of rank n,
// to the first zkey not before b (node 0 and the rank past the node when
// there is none).
func zscan(lp Listpack, r arena.Ref, p, i, n int, b *ZBound) (arena.Ref, int, int, int) {
	var buf [24]byte
	for ; p >= 0; p = lp.Next(p) {
		if k := zkeyAt(lp, p, &buf); !b.Before(ZKeyScore(k), k[ZKeyLen:]) {
			return r, i, p, n
		}
		n++
		i++
	}
	return 0, 0, 0, n
}

// ZInsert puts zkey, whose own ZByKey bound is b, at its place in the order
// with one walk.
func (l *List) ZInsert(a *arena.Arena, zkey []byte, b *ZBound) error {
	r, k, p, rank := l.zlocate(a, b)
	switch {
	case r == 0:
		return l.PushBack(a, zkey)
	case rank == 0:
		return l.PushFront(a, zkey)
	}
	return l.insertAtPos(a, r, k, p, zkey)
}

// ZDelete removes the zkey at b, a ZByKey bound of a zkey the list holds,
// with one walk, and reports whether it was there.
func (l *List) ZDelete(a *arena.Arena, b *ZBound) bool {
	r, k, p, _ := l.zlocate(a, b)
	if r == 0 {
		return false
	}
	l.deleteAtPos(a, r, k, p)
	return true
}

// RangeRev calls fn with elements stop down to start (0 <= start <= stop <
// Len) until fn returns false.
func (l *List) RangeRev(a *arena.Arena, start, stop int, fn func(s []byte, v int64, isInt bool) bool) {
	if start < 0 || stop >= int(l.n) || start > stop {
		return
	}
	r, k := l.locate(a, stop)
	left := stop - start + 1
	for r != 0 && left > 0 {
		lp := nodeLP(a, r)
		p := lp.Seek(k)
		for ; p >= 0 && left > 0; p = lp.Prev(p) {
			if !fn(lp.Get(p)) {
				return
			}
			left--
		}
		r, _ = nodeLinks(a, r)
		if r != 0 {
			k = nodeLP(a, r).Len() - 1
		}
	}
}

// DeleteRange removes count elements from index start on (0 <= start,
// start+count <= Len) with one walk to start: whole nodes in the range are
// unlinked, the two boundary nodes cut.
func (l *List) DeleteRange(a *arena.Arena, start, count int) {
	if count <= 0 || start < 0 || start+count > int(l.n) {
		return
	}
	r, k := l.locate(a, start)
	for count > 0 && r != 0 {
		_, next := nodeLinks(a, r)
		lp := nodeLP(a, r)
		c := lp.Len()
		d := min(count, c-k)
		if k == 0 && d == c {
			l.unlink(a, r)
		} else {
			lp.DeleteRange(lp.Seek(k), d)
			l.ixCount(a, r, -d)
		}
		l.n -= uint64(d)
		count -= d
		r, k = next, 0
	}
}

// ixLocate is zlocate through the counted index: a binary search for the
// first node whose last zkey is not before b (O(log m) node reads), the
// nodes before it counted by the Fenwick tree, then a walk of that node.
func (l *List) ixLocate(a *arena.Arena, b *ZBound) (arena.Ref, int, int, int) {
	var buf [24]byte
	m, refs, _, fen := l.ix(a)
	lo, hi := 0, m
	// The tail first: when its first zkey is before b the place is in it
	// or past it. ZADD of a new highest score (a time series, a rate
	// limiter's window) reads one node.
	if m > 1 {
		lp := nodeLP(a, arena.Ref(refs[m-1]))
		if k := zkeyAt(lp, lp.First(), &buf); b.Before(ZKeyScore(k), k[ZKeyLen:]) {
			lo = m - 1
		}
	}
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		lp := nodeLP(a, arena.Ref(refs[mid]))
		if k := zkeyAt(lp, lp.Last(), &buf); b.Before(ZKeyScore(k), k[ZKeyLen:]) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == m {
		return 0, 0, 0, int(l.n)
	}
	l.hint = uint32(lo)
	r := arena.Ref(refs[lo])
	n := l.ixRank(fen, lo)
	lp := nodeLP(a, r)
	// Within the node: the last checkpoint before b, then a short scan.
	cp := l.ixCheckpoints(a)[lo*ixCps : (lo+1)*ixCps]
	if cp[0] == 0 {
		layCheckpoints(cp, lp)
	}
	c, chi := 0, len(cp) // cp[:c] are before b
	for c < chi {
		mid := int(uint(c+chi) >> 1)
		if cp[mid] == 0 {
			chi = mid
			continue
		}
		if k := zkeyAt(lp, int(cp[mid]&0xffff), &buf); b.Before(ZKeyScore(k), k[ZKeyLen:]) {
			c = mid + 1
		} else {
			chi = mid
		}
	}
	p, i := lp.First(), 0
	if c > 0 {
		p, i = int(cp[c-1]&0xffff), int(cp[c-1]>>16)
	}
	rr, k, q, rank := zscan(lp, r, p, i, n+i, b)
	if k-i > 2*ixEvery {
		layCheckpoints(cp, lp) // inserts crowded one gap: even them out
	}
	if rr == 0 {
		return r, k, q, rank // not reached: the node's last zkey is not before b
	}
	return rr, k, q, rank
}
