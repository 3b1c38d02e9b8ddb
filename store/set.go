package store

import (
	"strconv"

	"github.com/goblin-kv/goblin/store/collection"
)

// Sets, as Redis 7.0 keeps them: an intset while every member is an integer
// (string2ll's strict form) and there are at most Limits.SetMaxIntsetEntries
// of them; past that a collection.Hash whose values are empty (OBJECT
// ENCODING hashtable), never converted back. The conversion walks at most
// SetMaxIntsetEntries members.

// SAdd adds members to the set at key, creating it, and returns how many
// were new.
func (s *Store) SAdd(key []byte, members [][]byte) (int, error) {
	s.owner.check()
	s.step()
	enc := encIntset
	for _, m := range members {
		if _, ok := collection.ParseInt(m); !ok {
			enc = encHashtable
			break
		}
	}
	if len(members) > s.o.Limits.SetMaxIntsetEntries {
		enc = encHashtable
	}
	id, c, err := s.collFor(key, tagSet, true, enc)
	if err != nil {
		return 0, err
	}
	i := collIndex(s.slot(id))
	grow := 0
	for _, m := range members {
		grow += len(m) + 16
	}
	if err := s.collRoom(grow, id); err != nil {
		s.deleteIfEmpty(key, c)
		return 0, err
	}
	c = &s.colls[i]
	added := 0
	for _, m := range members {
		if c.enc == encIntset {
			v, ok := collection.ParseInt(m)
			if ok {
				b, err := s.reserveBlob(c, i|ownerBit, 8+8*(collection.Intset(s.blob(c)).Len()+1)-len(s.blob(c)))
				if err != nil {
					s.deleteIfEmpty(key, c)
					return added, err
				}
				is, a := collection.Intset(b).Add(v)
				sameStart(b, is)
				if !a {
					continue
				}
				added++
				if is.Len() <= s.o.Limits.SetMaxIntsetEntries {
					continue
				}
			}
			if err := s.toHashtable(i); err != nil {
				s.deleteIfEmpty(key, c)
				return added, err
			}
			if ok {
				continue
			}
		}
		a, err := s.ch(c).Set(s.ar, m, nil)
		if err != nil {
			s.deleteIfEmpty(key, c)
			return added, wrapOOM(err)
		}
		added += b2i(a)
	}
	if added > 0 {
		s.mods++
	}
	return added, nil
}

// SRem removes members from the set at key and returns how many were
// there; a set left empty is deleted.
func (s *Store) SRem(key []byte, members [][]byte) (int, error) {
	s.owner.check()
	s.step()
	_, c, err := s.collFor(key, tagSet, false, 0)
	if c == nil {
		return 0, err
	}
	n := 0
	for _, m := range members {
		n += b2i(s.setRemove(c, m))
	}
	if n > 0 {
		s.mods++
		s.deleteIfEmpty(key, c)
	}
	return n, nil
}

func (s *Store) setRemove(c *coll, m []byte) bool {
	if c.enc == encHashtable {
		return s.ch(c).Delete(s.ar, m)
	}
	v, ok := collection.ParseInt(m)
	if !ok {
		return false
	}
	b := s.blob(c)
	is, removed := collection.Intset(b).Remove(v)
	sameStart(b, is)
	return removed
}

// SIsMember reports whether member is in the set at key.
func (s *Store) SIsMember(key, member []byte) (bool, error) {
	s.owner.check()
	_, c, err := s.collFor(key, tagSet, false, 0)
	if c == nil {
		return false, err
	}
	return s.setHas(c, member), nil
}

func (s *Store) setHas(c *coll, m []byte) bool {
	if c.enc == encHashtable {
		_, ok := s.ch(c).Get(s.ar, m)
		return ok
	}
	v, ok := collection.ParseInt(m)
	return ok && collection.Intset(s.blob(c)).Contains(v)
}

// SCard returns the number of members of the set at key (0 when missing).
func (s *Store) SCard(key []byte) (int, error) {
	s.owner.check()
	_, c, err := s.collFor(key, tagSet, false, 0)
	if c == nil {
		return 0, err
	}
	return s.collLen(c), nil
}

// SRange calls fn with every member of the set at key, in the set's order
// (ascending for an intset), until fn returns false; it reports whether the
// key exists. fn must not change the store.
func (s *Store) SRange(key []byte, fn func(member []byte) bool) (bool, error) {
	s.owner.check()
	_, c, err := s.collFor(key, tagSet, false, 0)
	if c == nil {
		return false, err
	}
	s.rangeSet(c, fn)
	return true, nil
}

func (s *Store) rangeSet(c *coll, fn func(member []byte) bool) {
	if c.enc == encHashtable {
		s.ch(c).Range(s.ar, func(f, _ []byte) bool { return fn(f) })
		return
	}
	is := collection.Intset(s.blob(c))
	for k := 0; k < is.Len(); k++ {
		if !fn(strconv.AppendInt(s.fbuf[:0], is.Get(k), 10)) {
			return
		}
	}
}

// SRandom appends a random member of the set at key (r choosing it) to dst;
// found is false when the key is missing.
func (s *Store) SRandom(dst, key []byte, r uint64) ([]byte, bool, error) {
	s.owner.check()
	_, c, err := s.collFor(key, tagSet, false, 0)
	if c == nil {
		return dst, false, err
	}
	return s.setRandom(dst, c, r), true, nil
}

func (s *Store) setRandom(dst []byte, c *coll, r uint64) []byte {
	if c.enc == encHashtable {
		f, _ := s.ch(c).Random(s.ar, r)
		return append(dst, f...)
	}
	return strconv.AppendInt(dst, collection.Intset(s.blob(c)).Random(r), 10)
}

// SPop removes a random member of the set at key (r choosing it), appends
// it to dst and deletes the set when it is left empty.
func (s *Store) SPop(dst, key []byte, r uint64) ([]byte, bool, error) {
	s.owner.check()
	s.step()
	_, c, err := s.collFor(key, tagSet, false, 0)
	if c == nil {
		return dst, false, err
	}
	start := len(dst)
	dst = s.setRandom(dst, c, r)
	s.setRemove(c, dst[start:])
	s.mods++
	s.deleteIfEmpty(key, c)
	return dst, true, nil
}

// SScan is HScan for a set: fn gets each member.
func (s *Store) SScan(key []byte, cursor uint64, count int, fn func(member []byte)) (uint64, error) {
	s.owner.check()
	_, c, err := s.collFor(key, tagSet, false, 0)
	if c == nil {
		return 0, err
	}
	return s.scanColl(c, cursor, count, func(f, _ []byte) { fn(f) }), nil
}
