package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/goblin-kv/goblin/rdb"
	"github.com/goblin-kv/goblin/store/collection"
)

// Sorted sets, as Redis 7.0 keeps them: a listpack of member, score,
// member, score… in order (score, then member bytes) while the set has at
// most Limits.ZSetMaxListpackEntries members of at most
// Limits.ZSetMaxListpackValue bytes each (OBJECT ENCODING listpack); past
// either, never converted back (OBJECT ENCODING skiplist):
//   - s.ch(c), a collection.Hash of member → score (8 bytes, the float's bits),
//     for ZSCORE and the existence checks;
//   - s.cl(c), a collection.List of zkeys (collection.AppendZKey) in order, for
//     ranks and ranges. A rank or a bound is found by walking node counts
//     (every node holds up to 8 KiB of zkeys), so it costs O(n/k) node
//     visits for k zkeys per node, not a skiplist's O(log n).
//
// The hash's blocks carry the owner id of the record with zsetIndexBit
// set, so relocate tells them from the list's nodes. Every command works
// through ranks: a range by score or by lex is the ranks between two
// bounds' counts (ZCount), so both encodings answer the same few calls.

// zsetIndexBit marks the owner id of a sorted set's hash blocks.
const zsetIndexBit = 1 << 30

// The ZAdd flags (ZADD's options).
const (
	ZAddNX uint8 = 1 << iota
	ZAddXX
	ZAddGT
	ZAddLT
	ZAddIncr
)

// ZAdd's outcomes.
const (
	ZAddNop     = iota // refused: NX on a member, XX on a non-member, GT or LT
	ZAddSame           // member kept its score (the same one given)
	ZAddAdded          // member is new
	ZAddUpdated        // member's score changed
)

// ErrNaNScore: ZADD INCR or ZINCRBY would make a score NaN (inf + -inf).
var ErrNaNScore = errors.New("store: resulting score is not a number (NaN)")

// zsetFor finds key's sorted set (nil, no error, when missing).
func (s *Store) zsetFor(key []byte) (*coll, error) {
	_, c, err := s.collFor(key, tagZSet, false, 0)
	return c, err
}

// ZAdd sets member's score in the sorted set at key (creating it unless
// ZAddXX is set), as zsetAdd does with flags: with ZAddIncr score is added
// to the current one (0 when new). It returns the outcome and the member's
// score after it.
func (s *Store) ZAdd(key []byte, score float64, member []byte, flags uint8) (int, float64, error) {
	s.owner.check()
	s.step()
	if math.IsNaN(score) {
		return ZAddNop, 0, ErrNaNScore
	}
	id, c, err := s.collFor(key, tagZSet, false, 0)
	if err != nil {
		return ZAddNop, 0, err
	}
	if c == nil {
		if flags&ZAddXX != 0 {
			return ZAddNop, 0, nil
		}
		enc := encListpack
		if s.o.Limits.ZSetMaxListpackEntries == 0 || len(member) > s.o.Limits.ZSetMaxListpackValue {
			enc = encSkiplist
		}
		if id, c, err = s.collFor(key, tagZSet, true, enc); err != nil {
			return ZAddNop, 0, err
		}
		if enc == encSkiplist {
			i := collIndex(s.slot(id))
			*s.ch(c) = collection.NewHash(i | ownerBit | zsetIndexBit)
		}
	}
	i := collIndex(s.slot(id))
	cur, found := s.zscore(c, member)
	if found {
		if flags&ZAddNX != 0 {
			return ZAddNop, cur, nil
		}
		if flags&ZAddIncr != 0 {
			score += cur
			if math.IsNaN(score) {
				return ZAddNop, cur, ErrNaNScore
			}
		}
		if (flags&ZAddLT != 0 && score >= cur) || (flags&ZAddGT != 0 && score <= cur) {
			return ZAddNop, cur, nil
		}
		if score == cur {
			return ZAddSame, score, nil
		}
		if err := s.collRoom(len(member)+32, id); err != nil {
			return ZAddNop, cur, err
		}
		c = &s.colls[i]
		s.zdelete(c, member, cur)
		if err := s.zinsert(i, member, score); err != nil {
			return ZAddNop, cur, err
		}
		s.mods++
		return ZAddUpdated, score, nil
	}
	if flags&ZAddXX != 0 {
		return ZAddNop, 0, nil
	}
	if err := s.collRoom(len(member)+32, id); err != nil {
		s.deleteIfEmpty(key, c)
		return ZAddNop, 0, err
	}
	if err := s.zinsert(i, member, score); err != nil {
		s.deleteIfEmpty(key, &s.colls[i])
		return ZAddNop, 0, err
	}
	s.mods++
	return ZAddAdded, score, nil
}

// zscore returns member's score in sorted set c.
func (s *Store) zscore(c *coll, member []byte) (float64, bool) {
	if c.enc == encListpack {
		lp := collection.Listpack(s.blob(c))
		p := lp.ZsetFind(member)
		if p < 0 {
			return 0, false
		}
		return lp.Score(lp.Next(p)), true
	}
	v, ok := s.ch(c).Get(s.ar, member)
	if !ok {
		return 0, false
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(v)), true
}

// zinsert adds member (not in the set) with score to sorted set i,
// converting it to a skiplist first when it would outgrow its listpack.
func (s *Store) zinsert(i uint32, member []byte, score float64) error {
	c := &s.colls[i]
	if c.enc == encListpack {
		lp := collection.Listpack(s.blob(c))
		if lp.Len()/2+1 > s.o.Limits.ZSetMaxListpackEntries || len(member) > s.o.Limits.ZSetMaxListpackValue {
			if err := s.toSkiplist(i); err != nil {
				return err
			}
		} else {
			var sb [32]byte
			grow := collection.EntrySize(member) + collection.EntrySize(collection.AppendScore(sb[:0], score))
			b, err := s.reserveBlob(c, i|ownerBit, grow)
			if err != nil {
				return err
			}
			nl := collection.Listpack(b).ZsetInsert(member, score)
			sameStart(b, nl)
			return nil
		}
	}
	if !s.cl(c).Indexed() {
		_ = s.cl(c).EnableIndex(s.ar) // without it (out of memory) ranks walk the nodes
	}
	var bits [8]byte
	binary.LittleEndian.PutUint64(bits[:], math.Float64bits(score))
	if _, err := s.ch(c).Set(s.ar, member, bits[:]); err != nil {
		return wrapOOM(err)
	}
	s.zkey = collection.AppendZKey(s.zkey[:0], score, member)
	b := collection.ZBound{Kind: collection.ZByKey, Score: score, Member: member}
	if err := s.cl(c).ZInsert(s.ar, s.zkey, &b); err != nil {
		s.ch(c).Delete(s.ar, member)
		return wrapOOM(err)
	}
	return nil
}

// zdelete removes member, whose score is score, from sorted set c.
func (s *Store) zdelete(c *coll, member []byte, score float64) {
	if c.enc == encListpack {
		lp := collection.Listpack(s.blob(c))
		if p := lp.ZsetFind(member); p >= 0 {
			lp.DeleteRange(p, 2)
		}
		return
	}
	b := collection.ZBound{Kind: collection.ZByKey, Score: score, Member: member}
	s.cl(c).ZDelete(s.ar, &b)
	s.ch(c).Delete(s.ar, member)
}

// toSkiplist converts sorted set i from its listpack to the hash and list.
func (s *Store) toSkiplist(i uint32) error {
	c := &s.colls[i]
	h := collection.NewHash(i | ownerBit | zsetIndexBit)
	l := collection.NewList(i | ownerBit)
	lp := collection.Listpack(s.blob(c))
	var mb [24]byte
	var bits [8]byte
	var err error
	for p := lp.First(); p >= 0 && err == nil; p = lp.Next(lp.Next(p)) {
		m := lp.ZsetString(p, &mb)
		sc := lp.Score(lp.Next(p))
		binary.LittleEndian.PutUint64(bits[:], math.Float64bits(sc))
		if _, err = h.Set(s.ar, m, bits[:]); err == nil {
			s.zkey = collection.AppendZKey(s.zkey[:0], sc, m)
			err = l.PushBack(s.ar, s.zkey)
		}
	}
	if err != nil {
		for !h.FreeStep(s.ar, 1<<20) {
		}
		for !l.FreeStep(s.ar, 1<<20) {
		}
		return wrapOOM(err)
	}
	s.ar.Free(c.blob)
	c.blob, c.enc = 0, encSkiplist
	b := s.bigOf(c)
	b.h, b.l = h, l
	return nil
}

// ZScore returns member's score in the sorted set at key.
func (s *Store) ZScore(key, member []byte) (float64, bool, error) {
	s.owner.check()
	c, err := s.zsetFor(key)
	if c == nil {
		return 0, false, err
	}
	sc, ok := s.zscore(c, member)
	return sc, ok, nil
}

// ZCard returns the number of members of the sorted set at key (0 when missing).
func (s *Store) ZCard(key []byte) (int, error) {
	s.owner.check()
	c, err := s.zsetFor(key)
	if c == nil {
		return 0, err
	}
	return s.collLen(c), nil
}

// ZRank returns member's 0-based rank (lowest score first) and score.
func (s *Store) ZRank(key, member []byte) (rank int, score float64, found bool, err error) {
	s.owner.check()
	c, err := s.zsetFor(key)
	if c == nil {
		return 0, 0, false, err
	}
	score, found = s.zscore(c, member)
	if !found {
		return 0, 0, false, nil
	}
	b := collection.ZBound{Kind: collection.ZByKey, Score: score, Member: member}
	return s.zcount(c, &b), score, true, nil
}

func (s *Store) zcount(c *coll, b *collection.ZBound) int {
	if c.enc == encListpack {
		return collection.Listpack(s.blob(c)).ZsetCount(b)
	}
	return s.cl(c).ZCount(s.ar, b)
}

// ZCount returns how many members of the sorted set at key lie before b:
// the rank of the first one at or past it.
func (s *Store) ZCount(key []byte, b *collection.ZBound) (int, error) {
	s.owner.check()
	c, err := s.zsetFor(key)
	if c == nil {
		return 0, err
	}
	return s.zcount(c, b), nil
}

// ZRange calls fn with the members of ranks start..stop (0 <= start <=
// stop < ZCard), from start up, or from stop down when rev, and their
// scores, until fn returns false. member is valid only during the call.
func (s *Store) ZRange(key []byte, start, stop int, rev bool, fn func(member []byte, score float64) bool) error {
	s.owner.check()
	c, err := s.zsetFor(key)
	if c == nil {
		return err
	}
	s.zrange(c, start, stop, rev, fn)
	return nil
}

func (s *Store) zrange(c *coll, start, stop int, rev bool, fn func(member []byte, score float64) bool) {
	n := s.collLen(c)
	if start < 0 || stop >= n || start > stop {
		return
	}
	if c.enc == encListpack {
		lp := collection.Listpack(s.blob(c))
		if !rev {
			p := lp.Seek(2 * start)
			for k := start; k <= stop; k++ {
				sp := lp.Next(p)
				if !fn(lp.ZsetString(p, &s.zbuf), lp.Score(sp)) {
					return
				}
				p = lp.Next(sp)
			}
			return
		}
		p := lp.Seek(2 * stop)
		for k := stop; k >= start; k-- {
			if !fn(lp.ZsetString(p, &s.zbuf), lp.Score(lp.Next(p))) {
				return
			}
			if k > start {
				p = lp.Prev(lp.Prev(p))
			}
		}
		return
	}
	each := func(k []byte, v int64, isInt bool) bool {
		if isInt {
			k = s.zint(v)
		}
		sc, m := collection.ZKeyScore(k), k[collection.ZKeyLen:]
		if sc == 0 {
			sc, _ = s.zscore(c, m) // +0 or -0
		}
		return fn(m, sc)
	}
	if rev {
		s.cl(c).RangeRev(s.ar, start, stop, each)
	} else {
		s.cl(c).Range(s.ar, start, stop, each)
	}
}

// zint formats a zkey the list stored as an integer.
func (s *Store) zint(v int64) []byte {
	s.zkey = strconv.AppendInt(s.zkey[:0], v, 10)
	return s.zkey
}

// ZRandom calls fn with a random member of the sorted set at key and its
// score (r chooses it): a listpack's by rank, a skiplist's from its index
// in O(1), as dictGetFairRandomKey does. found is false when key is missing.
func (s *Store) ZRandom(key []byte, r uint64, fn func(member []byte, score float64)) (bool, error) {
	s.owner.check()
	c, err := s.zsetFor(key)
	if c == nil {
		return false, err
	}
	if c.enc == encListpack {
		i := int(r % uint64(s.collLen(c)))
		s.zrange(c, i, i, false, func(m []byte, sc float64) bool {
			fn(m, sc)
			return false
		})
		return true, nil
	}
	m, v := s.ch(c).Random(s.ar, r)
	fn(m, math.Float64frombits(binary.LittleEndian.Uint64(v)))
	return true, nil
}

// ZRem removes members from the sorted set at key and returns how many
// were there; a set left empty is deleted.
func (s *Store) ZRem(key []byte, members [][]byte) (int, error) {
	s.owner.check()
	s.step()
	c, err := s.zsetFor(key)
	if c == nil {
		return 0, err
	}
	n := 0
	for _, m := range members {
		if sc, ok := s.zscore(c, m); ok {
			s.zdelete(c, m, sc)
			n++
		}
	}
	if n > 0 {
		s.mods++
		s.deleteIfEmpty(key, c)
	}
	return n, nil
}

// ZRemRange removes the members of ranks start..stop (0 <= start <= stop <
// ZCard) and returns how many it removed; a set left empty is deleted.
func (s *Store) ZRemRange(key []byte, start, stop int) (int, error) {
	s.owner.check()
	s.step()
	c, err := s.zsetFor(key)
	if c == nil {
		return 0, err
	}
	n := s.collLen(c)
	if start < 0 || stop >= n || start > stop {
		return 0, nil
	}
	if c.enc == encListpack {
		lp := collection.Listpack(s.blob(c))
		lp.DeleteRange(lp.Seek(2*start), 2*(stop-start+1))
	} else {
		// One walk gathers the members (for the index), one cuts the order.
		mem, ends := s.zrem[:0], s.ends[:0]
		s.cl(c).Range(s.ar, start, stop, func(z []byte, v int64, isInt bool) bool {
			if isInt {
				z = s.zint(v)
			}
			mem = append(mem, z[collection.ZKeyLen:]...)
			ends = append(ends, len(mem))
			return true
		})
		from := 0
		for _, e := range ends {
			s.ch(c).Delete(s.ar, mem[from:e])
			from = e
		}
		s.cl(c).DeleteRange(s.ar, start, stop-start+1)
		s.zrem, s.ends = mem[:0], ends[:0]
	}
	s.mods++
	s.deleteIfEmpty(key, c)
	return stop - start + 1, nil
}

// ZScan is ZSCAN's walk: a listpack whole (cursor 0 back), a skiplist's
// hash by cursor, calling fn with each member and its score as ZSCAN
// writes it (the listpack's own text, or collection.AppendDouble's).
func (s *Store) ZScan(key []byte, cursor uint64, count int, fn func(member, score []byte)) (uint64, error) {
	s.owner.check()
	c, err := s.zsetFor(key)
	if c == nil {
		return 0, err
	}
	if c.enc == encListpack {
		lp := collection.Listpack(s.blob(c))
		for p := lp.First(); p >= 0; p = lp.Next(lp.Next(p)) {
			fn(lp.ZsetString(p, &s.zbuf), lp.ZsetString(lp.Next(p), &s.zbuf2))
		}
		return 0, nil
	}
	n := 0
	for {
		cursor = s.ch(c).Scan(s.ar, cursor, func(m, v []byte) {
			n++
			s.zkey = collection.AppendDouble(s.zkey[:0], math.Float64frombits(binary.LittleEndian.Uint64(v)))
			fn(m, s.zkey)
		})
		if cursor == 0 || n >= count {
			return cursor, nil
		}
	}
}

// exportZSet passes a sorted set's members in order to add and appends
// their scores to v.Scores.
func (s *Store) exportZSet(c *coll, add func([]byte), scores []float64) []float64 {
	s.zrange(c, 0, s.collLen(c)-1, false, func(m []byte, sc float64) bool {
		add(m)
		scores = append(scores, sc)
		return true
	})
	return scores
}

// checkZSetOrder verifies a sorted set's members are in strictly increasing
// order, with no NaN score, and (for a skiplist) that the index agrees.
func (s *Store) checkZSetOrder(c *coll) error {
	var err error
	var prev []byte
	first := true
	var prevScore float64
	s.zrange(c, 0, s.collLen(c)-1, false, func(m []byte, sc float64) bool {
		switch {
		case math.IsNaN(sc):
			err = fmt.Errorf("member %q has a NaN score", m)
		case !first && !(prevScore < sc || (prevScore == sc && bytes.Compare(prev, m) < 0)):
			err = fmt.Errorf("member %q (%v) is not after %q (%v)", m, sc, prev, prevScore)
		case c.enc == encSkiplist:
			if v, ok := s.ch(c).Get(s.ar, m); !ok || math.Float64frombits(binary.LittleEndian.Uint64(v)) != sc {
				err = fmt.Errorf("member %q (%v) is not in the index with its score", m, sc)
			}
		}
		first, prevScore, prev = false, sc, append(prev[:0], m...)
		return err == nil
	})
	return err
}

// importZSet writes v's members and scores as the sorted set at key
// (missing), refusing a NaN score or a member given twice.
func (s *Store) importZSet(key []byte, v *rdb.Value) error {
	if len(v.Scores) != len(v.Items) {
		return fmt.Errorf("%w: sorted set of %d members and %d scores", rdb.ErrBadValue, len(v.Items), len(v.Scores))
	}
	for i, m := range v.Items {
		if math.IsNaN(v.Scores[i]) {
			s.Del(key)
			return fmt.Errorf("%w: member %q has a NaN score", rdb.ErrBadValue, m)
		}
		out, _, err := s.ZAdd(key, v.Scores[i], m, 0)
		if err == nil && out != ZAddAdded {
			err = fmt.Errorf("%w: member %q given twice", rdb.ErrBadValue, m)
		}
		if err != nil {
			s.Del(key)
			return err
		}
	}
	return nil
}

// ZToSkiplist converts the sorted set at key to its large encoding
// (OBJECT ENCODING skiplist) if it is a listpack, as Redis's SORT does to
// the sorted set it sorts (zsetConvert). A missing key is left alone.
func (s *Store) ZToSkiplist(key []byte) error {
	s.owner.check()
	id, c, err := s.collFor(key, tagZSet, false, 0)
	if c == nil || c.enc != encListpack {
		return err
	}
	return s.toSkiplist(collIndex(s.slot(id)))
}
