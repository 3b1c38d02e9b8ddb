package engine

import (
	"bytes"
	"math"
	"slices"

	"github.com/goblin-kv/goblin/acl"
	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/store"
)

// SORT and SORT_RO, as Redis 7.0's sortCommandGeneric answers them: the
// options in its order of checks, LIMIT clamped as it clamps it, the
// "no sort" shortcuts for lists and sorted sets (BY a pattern without
// '*'), scores read with strtod, ties broken by the element's bytes, and
// the sorted set converted to its large encoding first, as Redis converts
// it (OBJECT ENCODING says skiplist afterwards, even after SORT_RO).
//
// Memory: SORT must see every element before it answers, so it copies
// the N elements it sorts (and, with BY and ALPHA, their N compare
// values) into the engine's sorter, one []byte and one []sortItem of
// N entries reused from request to request: no allocation once they have
// grown, and trimmed back after a request that grew them past
// maxKeptScratch. With STORE the output is gathered the same way before
// the destination is replaced (the destination may be the sorted key or
// a key a GET pattern reads).

// sortItem is one element of the sorting vector: its bytes in
// sorter.buf[off:off+n], its score (numeric sort) or the offset of its
// compare value (ALPHA BY; cmpOff -1 when the BY key is missing).
type sortItem struct {
	off, n       int
	score        float64
	cmpOff, cmpN int
}

// sorter is SORT's reused state.
type sorter struct {
	items []sortItem
	buf   []byte   // elements and compare values
	val   []byte   // a pattern lookup's value
	key   []byte   // a pattern's key being built
	gets  [][]byte // the GET patterns
	outs  []int    // STORE: offset and length of each value, in buf
	vals  [][]byte // STORE: the values pushed to the destination

	desc, alpha, byPattern, store bool
}

const (
	txtSortConv      = "ERR One or more scores can't be converted into double"
	txtSortByCluster = "ERR BY option of SORT denied in Cluster mode."
	txtSortGetCluter = "ERR GET option of SORT denied in Cluster mode."
	txtSortByACL     = "ERR BY option of SORT denied due to insufficient ACL permissions."
	txtSortGetACL    = "ERR GET option of SORT denied due to insufficient ACL permissions."
)

func (so *sorter) elem(i int) []byte {
	it := &so.items[i]
	return so.buf[it.off : it.off+it.n]
}

// add appends an element to the vector.
func (so *sorter) add(v []byte) bool {
	so.items = append(so.items, sortItem{off: len(so.buf), n: len(v), cmpOff: -1})
	so.buf = append(so.buf, v...)
	return true
}

// compare is sortCompare: numeric by score, ties by the elements' bytes;
// ALPHA by the BY values (a missing one first) or the elements, binary
// with STORE and otherwise as strcoll compares C strings (up to a NUL) in
// the C locale.
func (so *sorter) compare(a, b *sortItem) int {
	var cmp int
	switch {
	case !so.alpha:
		switch {
		case a.score > b.score:
			cmp = 1
		case a.score < b.score:
			cmp = -1
		default:
			cmp = bytes.Compare(so.buf[a.off:a.off+a.n], so.buf[b.off:b.off+b.n])
		}
	case so.byPattern:
		switch {
		case a.cmpOff < 0 || b.cmpOff < 0:
			cmp = int(b2i(a.cmpOff >= 0) - b2i(b.cmpOff >= 0))
		default:
			cmp = so.collate(so.buf[a.cmpOff:a.cmpOff+a.cmpN], so.buf[b.cmpOff:b.cmpOff+b.cmpN])
		}
	default:
		cmp = so.collate(so.buf[a.off:a.off+a.n], so.buf[b.off:b.off+b.n])
	}
	if so.desc {
		return -cmp
	}
	return cmp
}

func (so *sorter) collate(a, b []byte) int {
	if so.store {
		return bytes.Compare(a, b)
	}
	return bytes.Compare(cString(a), cString(b))
}

// sort answers SORT and SORT_RO.
func (e *Engine) sort(s *Session, r *command.Request) {
	so := &e.sorter
	defer so.trim()
	so.items, so.buf, so.gets = so.items[:0], so.buf[:0], so.gets[:0]
	so.desc, so.alpha, so.byPattern, so.store = false, false, false, false
	var by, dst []byte
	limitStart, limitCount := int64(0), int64(-1)
	dontsort := false
	args := r.Args
	for j := 0; j < len(args); j++ {
		left, a := len(args)-j-1, args[j]
		switch {
		case command.EqualFold(a, "asc"):
			so.desc = false
		case command.EqualFold(a, "desc"):
			so.desc = true
		case command.EqualFold(a, "alpha"):
			so.alpha = true
		case command.EqualFold(a, "limit") && left >= 2:
			var ok1, ok2 bool
			limitStart, ok1 = resp.ParseInt(args[j+1])
			if ok1 {
				limitCount, ok2 = resp.ParseInt(args[j+2])
			}
			if !ok1 || !ok2 {
				e.errText(command.NotInteger, txtNotInteger)
				return
			}
			j += 2
		case r.Op == command.OpSort && command.EqualFold(a, "store") && left >= 1:
			dst = args[j+1]
			j++
		case command.EqualFold(a, "by") && left >= 1:
			by = args[j+1]
			if bytes.IndexByte(cString(by), '*') < 0 {
				dontsort = true // a constant BY: nothing to sort by
			} else if !e.sortPatternAllowed(s, r, txtSortByCluster, txtSortByACL) {
				return
			}
			j++
		case command.EqualFold(a, "get") && left >= 1:
			if !e.sortPatternAllowed(s, r, txtSortGetCluter, txtSortGetACL) {
				return
			}
			so.gets = append(so.gets, args[j+1])
			j++
		default:
			e.errText(command.Syntax, txtSyntax)
			return
		}
	}
	typ := e.st.TypeOf(r.Key)
	switch typ {
	case store.TypeNone, store.TypeList, store.TypeSet, store.TypeZSet:
	default:
		e.errText(command.Err, txtWrongType)
		return
	}
	so.store = dst != nil
	if dontsort && typ == store.TypeSet && so.store {
		// A set's order is its hash order: sort it for a stable STORE.
		dontsort, so.alpha, by = false, true, nil
	}
	so.byPattern = by != nil
	var n int
	switch typ {
	case store.TypeZSet:
		_ = e.st.ZToSkiplist(r.Key) // as Redis; on OOM the listpack answers the same
		n, _ = e.st.ZCard(r.Key)
	case store.TypeList:
		n, _ = e.st.LLen(r.Key)
	case store.TypeSet:
		n, _ = e.st.SCard(r.Key)
	}
	// LIMIT, clamped to the vector as Redis clamps it.
	vl := int64(n)
	start := min(max(limitStart, 0), vl)
	limitCount = min(max(limitCount, -1), vl)
	end := vl - 1
	if limitCount >= 0 {
		end = start + limitCount - 1
	}
	if start >= vl {
		start, end = vl-1, vl-2
	}
	end = min(end, vl-1)
	if typ != store.TypeSet && dontsort && (start != 0 || end != vl-1) {
		vl = end - start + 1
	}
	add := so.add
	switch {
	case typ == store.TypeList && dontsort:
		if end >= start {
			if so.desc {
				_, _ = e.st.LRange(r.Key, n-int(start)-int(vl), n-int(start)-1, add)
				slices.Reverse(so.items)
			} else {
				_, _ = e.st.LRange(r.Key, int(start), int(start+vl-1), add)
			}
			end, start = end-start, 0
		}
	case typ == store.TypeList:
		_, _ = e.st.LRange(r.Key, 0, -1, add)
	case typ == store.TypeSet:
		_, _ = e.st.SRange(r.Key, add)
	case typ == store.TypeZSet:
		lo, hi, rev := 0, n-1, false
		if dontsort {
			lo, hi, rev = int(start), int(start+vl-1), so.desc
			if rev {
				lo, hi = n-int(start)-int(vl), n-int(start)-1
			}
			end, start = end-start, 0
		}
		_ = e.st.ZRange(r.Key, lo, hi, rev, func(m []byte, _ float64) bool { return add(m) })
	}
	convErr := false
	if !dontsort {
		for i := range so.items {
			v := so.elem(i)
			if by != nil {
				var found bool
				if so.val, found = e.sortLookup(so.val[:0], by, v); !found {
					continue
				}
				v = so.val
			}
			it := &so.items[i]
			if so.alpha {
				if by != nil {
					it.cmpOff, it.cmpN = len(so.buf), len(v)
					so.buf = append(so.buf, v...)
				}
				continue
			}
			f, ok, erange := strtod(cString(v))
			// glibc's strtod sets ERANGE for a subnormal result too.
			if !ok || erange || math.IsNaN(f) || (f != 0 && math.Abs(f) < 0x1p-1022) {
				convErr = true
			}
			it.score = f
		}
		slices.SortStableFunc(so.items, func(a, b sortItem) int { return so.compare(&a, &b) })
	}
	out := end - start + 1
	if len(so.gets) > 0 {
		out *= int64(len(so.gets))
	}
	switch {
	case convErr:
		e.errText(command.Err, txtSortConv)
	case dst == nil:
		e.begin(command.Array)
		for j := start; j <= end; j++ {
			if len(so.gets) == 0 {
				e.addCopy(command.Bulk, so.elem(int(j)))
			}
			for _, p := range so.gets {
				at := len(e.scratch)
				var found bool
				if e.scratch, found = e.sortLookup(e.scratch, p, so.elem(int(j))); found {
					e.fixes = append(e.fixes, fixup{item: len(e.res.Items), start: at, end: len(e.scratch)})
					e.add(command.Bulk, 0, nil)
				} else {
					e.add(command.Nil, 0, nil)
				}
			}
		}
		e.end()
	default:
		e.sortStore(dst, start, end, out)
	}
}

// sortStore replaces dst with the list of the sorted range (or its GET
// values, "" for a missing one), or deletes dst when that is empty, and
// answers the list's length.
func (e *Engine) sortStore(dst []byte, start, end, out int64) {
	so := &e.sorter
	so.outs = so.outs[:0]
	for j := start; j <= end; j++ {
		if len(so.gets) == 0 {
			it := &so.items[j]
			so.outs = append(so.outs, it.off, it.n)
		}
		for _, p := range so.gets {
			at := len(so.buf)
			so.buf, _ = e.sortLookup(so.buf, p, so.elem(int(j)))
			so.outs = append(so.outs, at, len(so.buf)-at)
		}
	}
	so.vals = so.vals[:0]
	for i := 0; i < len(so.outs); i += 2 {
		so.vals = append(so.vals, so.buf[so.outs[i]:so.outs[i]+so.outs[i+1]])
	}
	e.st.Del(dst)
	const batch = 1024 // Push takes the values in slices; any size works
	for i := 0; i < len(so.vals); i += batch {
		if _, err := e.st.Push(dst, so.vals[i:min(i+batch, len(so.vals))], false, true); err != nil {
			e.collError(err)
			return
		}
	}
	e.integer(out)
}

// sortPatternAllowed applies Redis's limits on BY and GET patterns: none
// in cluster mode (the keys may be anywhere), and none for a user who
// may not read every key. It answers the error and returns false.
func (e *Engine) sortPatternAllowed(s *Session, r *command.Request, inCluster, byACL string) bool {
	if e.cl != nil {
		e.errText(command.Err, inCluster)
		return false
	}
	if u := s.user; !u.AllowsAll() {
		spec := command.Lookup(r.Op)
		if !u.AnyKey(int(aclIDs[r.Op]), e.firstArg(spec), e.requestKeys(r, spec), acl.KeyRead) {
			e.errText(command.Err, byACL)
			return false
		}
	}
	return true
}

// sortLookup appends to dst the value a BY or GET pattern names for elem,
// as lookupKeyByPattern finds it: "#" is elem itself; otherwise the first
// '*' becomes elem, and a "->field" after it reads that field of a hash
// where no "->" reads a string. A pattern without '*', a missing key and a
// key of another type give found false. Like Redis, it reads the pattern
// as a C string where it looks for "#", '*' and "->".
func (e *Engine) sortLookup(dst, pat, elem []byte) ([]byte, bool) {
	cp := cString(pat)
	if len(cp) == 1 && cp[0] == '#' {
		return append(dst, elem...), true
	}
	star := bytes.IndexByte(cp, '*')
	if star < 0 {
		return dst, false
	}
	post, field := pat[star+1:], []byte(nil)
	if f := bytes.Index(cp[star+1:], []byte("->")); f >= 0 && star+1+f+2 < len(cp) {
		post, field = pat[star+1:star+1+f], pat[star+1+f+2:]
	}
	so := &e.sorter
	so.key = append(append(append(so.key[:0], pat[:star]...), elem...), post...)
	if field == nil {
		return e.st.Get(dst, so.key)
	}
	v, found, err := e.st.HGet(dst, so.key, field)
	if err != nil {
		return dst, false
	}
	return v, found
}

// trim drops the sorter's buffers after a request that grew them past
// maxKeptScratch, so one large SORT does not pin its memory.
func (so *sorter) trim() {
	if cap(so.buf) > maxKeptScratch || cap(so.items)*48 > maxKeptScratch {
		*so = sorter{}
	}
	if cap(so.val) > maxKeptScratch {
		so.val = nil
	}
}

func init() {
	handlers[command.OpSort], handlers[command.OpSortRO] = (*Engine).sort, (*Engine).sort
}
