package store

import (
	"strconv"
)

// Lists: a collection.List (a quicklist of listpack nodes of at most 8 KiB),
// which Redis 7.0's OBJECT ENCODING calls quicklist whatever the length.

// listFor finds key's list, creating it when create.
func (s *Store) listFor(key []byte, create bool) (uint32, *coll, error) {
	return s.collFor(key, tagList, create, encQuicklist)
}

// Push adds values at the head (front) or tail of the list at key and
// returns its new length. Unless create, a missing key is left missing and
// Push returns 0 (LPUSHX, RPUSHX).
func (s *Store) Push(key []byte, values [][]byte, front, create bool) (int, error) {
	s.owner.check()
	s.step()
	id, c, err := s.listFor(key, create)
	if c == nil {
		return 0, err
	}
	i := collIndex(s.slot(id))
	grow := 0
	for _, v := range values {
		grow += len(v) + 2
	}
	if err := s.collRoom(grow, id); err != nil {
		s.deleteIfEmpty(key, c)
		return 0, err
	}
	c = &s.colls[i]
	s.mods++
	for _, v := range values {
		if front {
			err = s.cl(c).PushFront(s.ar, v)
		} else {
			err = s.cl(c).PushBack(s.ar, v)
		}
		if err != nil {
			s.deleteIfEmpty(key, c)
			return s.cl(c).Len(), wrapOOM(err)
		}
	}
	return s.cl(c).Len(), nil
}

// Pop removes the first (front) or last element of the list at key,
// appends it to dst and deletes the list when it is left empty; found is
// false when the key is missing.
func (s *Store) Pop(dst, key []byte, front bool) ([]byte, bool, error) {
	s.owner.check()
	s.step()
	_, c, err := s.listFor(key, false)
	if c == nil {
		return dst, false, err
	}
	if front {
		dst, _ = s.cl(c).PopFront(s.ar, dst)
	} else {
		dst, _ = s.cl(c).PopBack(s.ar, dst)
	}
	s.mods++
	s.deleteIfEmpty(key, c)
	return dst, true, nil
}

// LLen returns the length of the list at key (0 when missing).
func (s *Store) LLen(key []byte) (int, error) {
	s.owner.check()
	_, c, err := s.listFor(key, false)
	if c == nil {
		return 0, err
	}
	return s.cl(c).Len(), nil
}

// LIndex appends element i (negative counts from the end) to dst.
func (s *Store) LIndex(dst, key []byte, i int) ([]byte, bool, error) {
	s.owner.check()
	_, c, err := s.listFor(key, false)
	if c == nil {
		return dst, false, err
	}
	dst, ok := s.cl(c).Index(s.ar, i, dst)
	return dst, ok, nil
}

// ErrNoSuchKey and ErrIndexRange are LSET's failures.
var (
	// ErrNoSuchKey: the key a command changes in place does not exist.
	ErrNoSuchKey = errNoSuchKey{}
	// ErrIndexRange: a list index outside the list.
	ErrIndexRange = errIndexRange{}
)

type errNoSuchKey struct{}

func (errNoSuchKey) Error() string { return "store: no such key" }

type errIndexRange struct{}

func (errIndexRange) Error() string { return "store: index out of range" }

// LSet replaces element i of the list at key.
func (s *Store) LSet(key []byte, i int, v []byte) error {
	s.owner.check()
	s.step()
	id, c, err := s.listFor(key, false)
	if c == nil {
		if err == nil {
			err = ErrNoSuchKey
		}
		return err
	}
	if err := s.collRoom(len(v)+2, id); err != nil {
		return err
	}
	c = s.collOf(s.slot(id))
	ok, err := s.cl(c).Set(s.ar, i, v)
	if err != nil {
		return wrapOOM(err)
	}
	if !ok {
		return ErrIndexRange
	}
	s.mods++
	return nil
}

// LRange calls fn with elements start..stop (Redis's inclusive indexes,
// negative from the end) of the list at key until fn returns false; it
// reports whether the key exists.
func (s *Store) LRange(key []byte, start, stop int, fn func(v []byte) bool) (bool, error) {
	s.owner.check()
	_, c, err := s.listFor(key, false)
	if c == nil {
		return false, err
	}
	s.cl(c).Range(s.ar, start, stop, func(v []byte, n int64, isInt bool) bool {
		if isInt {
			v = strconv.AppendInt(s.fbuf[:0], n, 10)
		}
		return fn(v)
	})
	return true, nil
}

// LTrim keeps elements start..stop of the list at key (deleting the key when
// none are left).
func (s *Store) LTrim(key []byte, start, stop int) error {
	s.owner.check()
	s.step()
	_, c, err := s.listFor(key, false)
	if c == nil {
		return err
	}
	before := s.cl(c).Len()
	s.cl(c).Trim(s.ar, start, stop)
	if s.cl(c).Len() != before {
		s.mods++
	}
	s.deleteIfEmpty(key, c)
	return nil
}

// LDelete removes element i of the list at key (deleting the key when none
// are left); it is LREM's and LINSERT's primitive.
func (s *Store) LDelete(key []byte, i int) error {
	s.owner.check()
	_, c, err := s.listFor(key, false)
	if c == nil {
		return err
	}
	if s.cl(c).Delete(s.ar, i) {
		s.mods++
	}
	s.deleteIfEmpty(key, c)
	return nil
}

// LInsert puts v before element i (0 <= i <= length) of the existing list at key.
func (s *Store) LInsert(key []byte, i int, v []byte) error {
	s.owner.check()
	id, c, err := s.listFor(key, false)
	if c == nil {
		return err
	}
	if err := s.collRoom(len(v)+2, id); err != nil {
		return err
	}
	c = s.collOf(s.slot(id))
	if err := s.cl(c).Insert(s.ar, i, v); err != nil {
		return wrapOOM(err)
	}
	s.mods++
	return nil
}
