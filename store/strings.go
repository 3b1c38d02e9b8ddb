package store

import "fmt"

// The string commands beyond GET and SET: reads of part of a value,
// writes into part of one, and what OBJECT ENCODING reports.

// Read appends key's value to dst without counting a keyspace hit or miss
// (the read half of a write).
func (s *Store) Read(dst, key []byte) ([]byte, bool) {
	_, sl := s.lookup(key)
	if sl == nil || isColl(sl) {
		return dst, false
	}
	return s.appendValue(dst, sl), true
}

// GetDel appends key's value to dst and deletes the key; found reports
// whether it existed.
func (s *Store) GetDel(dst, key []byte) (val []byte, found bool) {
	s.owner.check()
	s.step()
	id, sl := s.lookup(key)
	if sl == nil || isColl(sl) {
		s.stats.Misses++
		return dst, false
	}
	s.stats.Hits++
	val = s.appendValue(dst, sl)
	s.removeID(id)
	return val, true
}

// GetRange appends the bytes of key's value from start to end inclusive,
// counted as Redis counts them (negative from the end, clamped to the
// value), to dst. A missing key, or an empty range, appends nothing.
func (s *Store) GetRange(dst, key []byte, start, end int64) []byte {
	s.owner.check()
	_, sl := s.lookup(key)
	if sl == nil || isColl(sl) {
		s.stats.Misses++
		return dst
	}
	s.stats.Hits++
	s.touch(sl)
	if sl.inl[0] == tagInt {
		var b [24]byte
		v := s.appendValue(b[:0], sl)
		if from, to, ok := Range(int64(len(v)), start, end); ok {
			dst = append(dst, v[from:to]...)
		}
		return dst
	}
	n := int64(sl.encLen() - 1)
	from, to, ok := Range(n, start, end)
	if !ok {
		return dst
	}
	// The first inlineLen-1 bytes are in the slot, the rest in the tail.
	const head = inlineLen - 1
	if from < head {
		dst = append(dst, sl.inl[1+from:1+min(to, head)]...)
		from = head
	}
	if to > from {
		dst = append(dst, s.tail(sl)[from-head:to-head]...)
	}
	return dst
}

// Range turns Redis's inclusive start and end offsets (negative ones count
// from the end) into a half-open [from, to) over n bytes; ok is false for
// an empty range. It is GETRANGE's arithmetic, shared with BITCOUNT and
// BITPOS.
func Range(n, start, end int64) (from, to int64, ok bool) {
	if start < 0 && end < 0 && start > end {
		return 0, 0, false
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start, end = max(start, 0), max(end, 0)
	if n == 0 || start > end || start >= n {
		return 0, 0, false
	}
	end = min(end, n-1)
	return start, end + 1, true
}

// SetRange writes val into key's value at offset (padding with zero
// bytes), creating the key when it is missing and val is not empty, keeps
// its expiry, and returns the new length. Writing nothing returns the
// current length (0 for a missing key) and changes nothing.
func (s *Store) SetRange(key []byte, offset int, val []byte) (int, error) {
	s.owner.check()
	if err := s.checkKey(key); err != nil {
		return 0, err
	}
	if s.TypeOf(key) > TypeString {
		return 0, ErrWrongType
	}
	cur, found := s.Read(s.scratch[:0], key)
	if len(val) == 0 {
		return len(cur), nil
	}
	if offset+len(val) > s.o.MaxValueLen || offset+len(val) < offset {
		return 0, fmt.Errorf("%w: %d bytes, limit %d", ErrValueTooLong, offset+len(val), s.o.MaxValueLen)
	}
	for len(cur) < offset+len(val) {
		cur = append(cur, 0)
	}
	copy(cur[offset:], val)
	s.scratch = cur[:0]
	if _, _, _, err := s.Set(nil, key, cur, SetOptions{KeepTTL: found, Kind: AsBuilt}); err != nil {
		return 0, err
	}
	return len(cur), nil
}

// Update rewrites key's value in place through fn: fn gets the current
// value (empty for a missing key) in a buffer it may change and extend,
// and returns the new value; the key keeps its expiry and is stored as a
// built string (OBJECT ENCODING raw). exists reports whether the key was
// there. It is the read-modify-write of SETBIT, BITFIELD and the like; fn
// must not call the store.
func (s *Store) Update(key []byte, fn func(cur []byte) []byte) (exists bool, err error) {
	s.owner.check()
	if err := s.checkKey(key); err != nil {
		return false, err
	}
	if s.TypeOf(key) > TypeString {
		return true, ErrWrongType
	}
	cur, found := s.Read(s.scratch[:0], key)
	next := fn(cur)
	if len(next) > s.o.MaxValueLen {
		return found, fmt.Errorf("%w: %d bytes, limit %d", ErrValueTooLong, len(next), s.o.MaxValueLen)
	}
	s.scratch = next[:0]
	_, _, _, err = s.Set(nil, key, next, SetOptions{KeepTTL: found, Kind: AsBuilt})
	return found, err
}

// Encoding is how a value is kept, named as Redis's OBJECT ENCODING names
// the same string.
type Encoding uint8

// The string encodings.
const (
	EncodingNone      Encoding = iota // no such key
	EncodingInt                       // a decimal integer kept as a number
	EncodingEmbStr                    // a string of up to 44 bytes written whole
	EncodingRaw                       // a longer string, or one built in place
	EncodingListpack                  // a small hash: one listpack
	EncodingIntset                    // a small set of integers
	EncodingHashtable                 // a large hash or set
	EncodingQuicklist                 // a list
	EncodingSkiplist                  // a large sorted set
)

var encodingNames = [...]string{"", "int", "embstr", "raw", "listpack", "intset", "hashtable", "quicklist", "skiplist"}

func (e Encoding) String() string { return encodingNames[e] }

// embstrMax is the longest string Redis keeps as embstr.
const embstrMax = 44

// EncodingOf reports how key's value is kept (EncodingNone when it is
// missing). It does not count as an access.
func (s *Store) EncodingOf(key []byte) Encoding {
	s.owner.check()
	_, sl := s.lookup(key)
	switch {
	case sl == nil:
		return EncodingNone
	case isColl(sl):
		return EncodingListpack + Encoding(s.collOf(sl).enc-encListpack)
	case sl.inl[0] == tagInt:
		return EncodingInt
	case sl.inl[0] == tagMod || sl.encLen()-1 > embstrMax:
		return EncodingRaw
	}
	return EncodingEmbStr
}
