package store

import (
	"fmt"
	"strconv"

	"github.com/goblin-kv/goblin/rdb"
)

// Collections in and out of the store as rdb.Values: what DUMP, RESTORE,
// COPY and MOVE (and a snapshot writer) exchange. ExportCollection fills a
// Value with one function per type (exportHash, exportSet, exportList,
// exportZSet),
// which rdb's encoder then writes in Redis's encoding for the value.

// ExportCollection fills v with the collection at key (Kind and Items,
// whose bytes it copies into buf, returned grown) and returns the key's
// expiry (0: none); ok is false when key is missing or holds a string.
func (s *Store) ExportCollection(key []byte, v *rdb.Value, buf []byte) (out []byte, expireAt int64, ok bool) {
	s.owner.check()
	_, sl := s.lookup(key)
	if sl == nil || !isColl(sl) {
		return buf, 0, false
	}
	return s.exportColl(s.collOf(sl), v, buf), s.expiryOf(sl), true
}

// exportColl fills v with collection c's kind and items, copying their
// bytes into buf (returned grown). It reads the store and changes nothing
// but its scratch, so a Cut may call it from inside a write.
func (s *Store) exportColl(c *coll, v *rdb.Value, buf []byte) []byte {
	base := len(buf)
	ends := s.ends[:0]
	add := func(b []byte) {
		buf = append(buf, b...)
		ends = append(ends, len(buf))
	}
	switch c.kind {
	case tagHash:
		v.Kind = rdb.KindHash
		s.exportHash(c, add)
	case tagSet:
		v.Kind = rdb.KindSet
		s.exportSet(c, add)
	case tagList:
		v.Kind = rdb.KindList
		s.exportList(c, add)
	}
	v.Scores = v.Scores[:0]
	v.Large = c.enc == encHashtable || c.enc == encSkiplist
	if c.kind == tagZSet {
		v.Kind = rdb.KindZSet
		v.Scores = s.exportZSet(c, add, v.Scores)
	}
	v.Items = v.Items[:0]
	for _, e := range ends {
		v.Items = append(v.Items, buf[base:e:e])
		base = e
	}
	s.ends = ends[:0]
	return buf
}

// The per-type exporters: each passes every item, in the collection's
// order, to add (a hash's fields and values alternating).
func (s *Store) exportHash(c *coll, add func([]byte)) {
	s.rangeHash(c, func(f, v []byte) bool {
		add(f)
		add(v)
		return true
	})
}

func (s *Store) exportSet(c *coll, add func([]byte)) {
	s.rangeSet(c, func(m []byte) bool {
		add(m)
		return true
	})
}

func (s *Store) exportList(c *coll, add func([]byte)) {
	s.cl(c).Range(s.ar, 0, -1, func(v []byte, n int64, isInt bool) bool {
		if isInt {
			v = strconv.AppendInt(s.fbuf[:0], n, 10)
		}
		add(v)
		return true
	})
}

// ImportCollection writes v (a hash, set, list or sorted set) under key, which must be
// missing, with expiry expireAt (0: none).
func (s *Store) ImportCollection(key []byte, v *rdb.Value, expireAt int64) error {
	s.owner.check()
	if len(v.Items) == 0 {
		return fmt.Errorf("%w: empty collection", rdb.ErrEmpty)
	}
	var err error
	switch v.Kind {
	case rdb.KindHash:
		_, err = s.HSet(key, v.Items, false)
	case rdb.KindSet:
		_, err = s.SAdd(key, v.Items)
	case rdb.KindList:
		_, err = s.Push(key, v.Items, false, true)
	case rdb.KindZSet:
		err = s.importZSet(key, v)
	default:
		return fmt.Errorf("%w: kind %v", rdb.ErrBadValue, v.Kind)
	}
	if err == nil && expireAt != 0 {
		s.ExpireAt(key, expireAt)
	}
	return err
}
