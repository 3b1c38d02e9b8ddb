package store

import (
	"strconv"

	"github.com/goblin-kv/goblin/store/collection"
)

// Hashes: a listpack of field, value, field, value… while the hash has at
// most Limits.HashMaxListpackEntries fields and every field and value is at
// most Limits.HashMaxListpackValue bytes; past either, a collection.Hash
// (OBJECT ENCODING hashtable), never converted back (as in Redis). The
// conversion walks at most HashMaxListpackEntries fields, a bounded step.

// lpField returns the offset of field's entry in a field/value listpack, or -1.
func lpField(lp collection.Listpack, field []byte) int {
	if lp.First() < 0 {
		return -1
	}
	return lp.Find(lp.First(), field, 1)
}

// toHashtable converts collection i (a hash listpack, or a set's intset when
// set) to a collection.Hash.
func (s *Store) toHashtable(i uint32) error {
	c := &s.colls[i]
	h := collection.NewHash(i | ownerBit)
	var fb, vb [20]byte
	var err error
	switch c.enc {
	case encListpack:
		lp := collection.Listpack(s.blob(c))
		for p := lp.First(); p >= 0 && err == nil; p = lp.Next(lp.Next(p)) {
			f := lp.AppendValue(fb[:0], p)
			v := lp.AppendValue(vb[:0], lp.Next(p))
			_, err = h.Set(s.ar, f, v)
		}
	case encIntset:
		is := collection.Intset(s.blob(c))
		for k := 0; k < is.Len() && err == nil; k++ {
			_, err = h.Set(s.ar, strconv.AppendInt(fb[:0], is.Get(k), 10), nil)
		}
	}
	if err != nil {
		for !h.FreeStep(s.ar, 1<<20) {
		}
		return wrapOOM(err)
	}
	s.ar.Free(c.blob)
	c.blob, c.enc = 0, encHashtable
	*s.ch(c) = h
	return nil
}

// HSet sets the fields and values of pairs (field, value, field, value…) in
// the hash at key, creating it, and returns how many fields are new; with
// nx a field that exists is left as it is (HSETNX).
func (s *Store) HSet(key []byte, pairs [][]byte, nx bool) (added int, err error) {
	s.owner.check()
	s.step()
	id, c, err := s.collFor(key, tagHash, true, encListpack)
	if err != nil {
		return 0, err
	}
	i := collIndex(s.slot(id))
	grow := 0
	for _, p := range pairs {
		grow += len(p) + 16
	}
	if err := s.collRoom(grow, id); err != nil {
		s.deleteIfEmpty(key, c)
		return 0, err
	}
	c = &s.colls[i]
	if c.enc == encListpack {
		for _, p := range pairs {
			if len(p) > s.o.Limits.HashMaxListpackValue {
				if err := s.toHashtable(i); err != nil {
					s.deleteIfEmpty(key, c)
					return 0, err
				}
				break
			}
		}
	}
	// Every path below writes a field, except HSETNX's refusals.
	written := false
	defer s.noteWrite(&written)
	for k := 0; k+1 < len(pairs); k += 2 {
		f, v := pairs[k], pairs[k+1]
		if c.enc == encHashtable {
			if nx {
				if _, ok := s.ch(c).Get(s.ar, f); ok {
					continue
				}
			}
			a, err := s.ch(c).Set(s.ar, f, v)
			if err != nil {
				s.deleteIfEmpty(key, c)
				return added, wrapOOM(err)
			}
			written = true
			added += b2i(a)
			continue
		}
		lp, err := s.reserveBlob(c, i|ownerBit, collection.EntrySize(f)+collection.EntrySize(v))
		if err != nil {
			s.deleteIfEmpty(key, c)
			return added, err
		}
		l := collection.Listpack(lp)
		if p := lpField(l, f); p >= 0 {
			if !nx {
				sameStart(lp, l.Replace(l.Next(p), v))
				written = true
			}
			continue
		}
		l = l.Append(f)
		sameStart(lp, l)
		sameStart(lp, l.Append(v))
		written = true
		added++
		if l.Len()/2 > s.o.Limits.HashMaxListpackEntries {
			if err := s.toHashtable(i); err != nil {
				return added, err
			}
		}
	}
	return added, nil
}

// HGet appends the value of field in the hash at key to dst; found is false
// when the key or the field is missing.
func (s *Store) HGet(dst, key, field []byte) (val []byte, found bool, err error) {
	s.owner.check()
	_, c, err := s.collFor(key, tagHash, false, 0)
	if c == nil {
		return dst, false, err
	}
	if c.enc == encHashtable {
		v, ok := s.ch(c).Get(s.ar, field)
		return append(dst, v...), ok, nil
	}
	lp := collection.Listpack(s.blob(c))
	p := lpField(lp, field)
	if p < 0 {
		return dst, false, nil
	}
	return lp.AppendValue(dst, lp.Next(p)), true, nil
}

// HDel removes fields from the hash at key and returns how many existed; a
// hash left empty is deleted.
func (s *Store) HDel(key []byte, fields [][]byte) (int, error) {
	s.owner.check()
	s.step()
	_, c, err := s.collFor(key, tagHash, false, 0)
	if c == nil {
		return 0, err
	}
	n := 0
	for _, f := range fields {
		if c.enc == encHashtable {
			n += b2i(s.ch(c).Delete(s.ar, f))
			continue
		}
		b := s.blob(c)
		lp := collection.Listpack(b)
		if p := lpField(lp, f); p >= 0 {
			sameStart(b, lp.DeleteRange(p, 2))
			n++
		}
	}
	if n > 0 {
		s.mods++
		s.deleteIfEmpty(key, c)
	}
	return n, nil
}

// HLen returns the number of fields of the hash at key (0 when missing).
func (s *Store) HLen(key []byte) (int, error) {
	s.owner.check()
	_, c, err := s.collFor(key, tagHash, false, 0)
	if c == nil {
		return 0, err
	}
	return s.collLen(c), nil
}

// HRange calls fn with every field and value of the hash at key, in the
// hash's order, until fn returns false; it reports whether the key exists.
// The slices are valid only during the call; fn must not change the store.
func (s *Store) HRange(key []byte, fn func(field, value []byte) bool) (bool, error) {
	s.owner.check()
	_, c, err := s.collFor(key, tagHash, false, 0)
	if c == nil {
		return false, err
	}
	s.rangeHash(c, fn)
	return true, nil
}

func (s *Store) rangeHash(c *coll, fn func(field, value []byte) bool) {
	if c.enc == encHashtable {
		s.ch(c).Range(s.ar, fn)
		return
	}
	lp := collection.Listpack(s.blob(c))
	for p := lp.First(); p >= 0; p = lp.Next(lp.Next(p)) {
		q := lp.Next(p)
		if !fn(lpString(lp, p, &s.fbuf), lpString(lp, q, &s.vbuf)) {
			return
		}
	}
}

// lpString returns the entry at p as bytes: a string aliasing lp, or an
// integer's decimal text in buf.
func lpString(lp collection.Listpack, p int, buf *[20]byte) []byte {
	s, v, isInt := lp.Get(p)
	if isInt {
		return strconv.AppendInt(buf[:0], v, 10)
	}
	return s
}

// HIncrBy adds delta to the integer in field of the hash at key (a missing
// field counts as 0) and returns the result: ErrNotInteger when the value is
// not an integer, ErrOverflow when the sum would overflow.
func (s *Store) HIncrBy(key, field []byte, delta int64) (int64, error) {
	var buf [24]byte
	cur, found, err := s.HGet(buf[:0], key, field)
	if err != nil {
		return 0, err
	}
	var n int64
	if found {
		var ok bool
		if n, ok = collection.ParseInt(cur); !ok {
			return 0, ErrNotInteger
		}
	}
	if (delta > 0 && n > maxInt64-delta) || (delta < 0 && n < minInt64-delta) {
		return 0, ErrOverflow
	}
	n += delta
	var pairs [2][]byte
	pairs[0], pairs[1] = field, strconv.AppendInt(buf[:0], n, 10)
	if _, err := s.HSet(key, pairs[:], false); err != nil {
		return 0, err
	}
	return n, nil
}

// HRandom calls fn with a random field and value of the hash at key, r
// choosing it; it reports whether the key exists.
func (s *Store) HRandom(key []byte, r uint64, fn func(field, value []byte)) (bool, error) {
	s.owner.check()
	_, c, err := s.collFor(key, tagHash, false, 0)
	if c == nil {
		return false, err
	}
	if c.enc == encHashtable {
		fn(s.ch(c).Random(s.ar, r))
		return true, nil
	}
	lp := collection.Listpack(s.blob(c))
	p := lp.Seek(2 * int(r%uint64(lp.Len()/2)))
	fn(lpString(lp, p, &s.fbuf), lpString(lp, lp.Next(p), &s.vbuf))
	return true, nil
}

// HScan calls fn with fields and values of the hash at key from cursor on,
// about count of them, and returns the cursor to continue from (0 at the
// end). A listpack hash is returned whole in one call, as Redis does.
func (s *Store) HScan(key []byte, cursor uint64, count int, fn func(field, value []byte)) (uint64, error) {
	s.owner.check()
	_, c, err := s.collFor(key, tagHash, false, 0)
	if c == nil {
		return 0, err
	}
	return s.scanColl(c, cursor, count, fn), nil
}

// scanColl is HSCAN's and SSCAN's walk of a hash or set.
func (s *Store) scanColl(c *coll, cursor uint64, count int, fn func(field, value []byte)) uint64 {
	switch c.enc {
	case encHashtable:
		n := 0
		for {
			cursor = s.ch(c).Scan(s.ar, cursor, func(f, v []byte) {
				n++
				fn(f, v)
			})
			if cursor == 0 || n >= count {
				return cursor
			}
		}
	case encIntset:
		is := collection.Intset(s.blob(c))
		for k := 0; k < is.Len(); k++ {
			fn(strconv.AppendInt(s.fbuf[:0], is.Get(k), 10), nil)
		}
	default:
		s.rangeHash(c, func(f, v []byte) bool {
			fn(f, v)
			return true
		})
	}
	return 0
}

// noteWrite counts a change (for WATCH) when *written.
func (s *Store) noteWrite(written *bool) {
	if *written {
		s.mods++
	}
}
