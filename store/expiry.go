package store

// Expiry: the TTL calls (ExpireAt, Persist, PTTL, ExpireTime) and active
// expiry, in which Tick sweeps slot ids from a cursor and deletes keys
// whose time has passed; lazy expiry (on access) is in lookup and the
// write paths of store.go; eviction is in eviction.go.

// sweepPauseMillis is how long active expiry rests after a full pass over the slots,
// so an idle loop's Tick returns 0 and lets the idle strategy park.
const sweepPauseMillis = 100

// expireSweep examines up to n slots from the expiry cursor and deletes the expired.
// After a full pass it rests for sweepPauseMillis.
func (s *Store) expireSweep(n int) int {
	now := s.o.Clock.NowMillis()
	if now < s.sweepRestUntil {
		return 0
	}
	work := 0
	for ; work < n; work++ {
		if s.expireCursor >= s.nextSlot {
			s.expireCursor = 1
			s.sweepRestUntil = now + sweepPauseMillis
			break
		}
		id := s.expireCursor
		s.expireCursor++
		sl := s.slot(id)
		if sl.used() && sl.hasTTL() && s.expiryOf(sl) <= now {
			s.expired(sl)
			s.removeID(id)
			s.stats.Expired++
		}
	}
	return work
}

// AvgTTL estimates the mean time to live, in milliseconds, of the keys
// that have one (0 when none does), from up to sample of them met walking
// the slots on from where the last estimate stopped (at most 16 slots
// examined per key sampled), as INFO keyspace's avg_ttl.
func (s *Store) AvgTTL(sample int) int64 {
	s.owner.check()
	if s.ttlKeys == 0 || s.nextSlot <= 1 {
		return 0
	}
	now := s.o.Clock.NowMillis()
	var sum float64 // far-future expiries would overflow an int64 sum
	var n int64
	for i := 0; i < 16*sample && n < int64(sample) && n < s.ttlKeys; i++ {
		if s.ttlCursor <= 0 || s.ttlCursor >= s.nextSlot {
			s.ttlCursor = 1
		}
		sl := s.slot(s.ttlCursor)
		s.ttlCursor++
		if sl.used() && sl.hasTTL() {
			if left := s.expiryOf(sl) - now; left > 0 {
				sum += float64(left)
				n++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return int64(sum / float64(n))
}

// ExpireAt sets key's expiry to unixMillis and reports whether the key existed. A
// time not after now deletes the key (and still reports true), as Redis does.
func (s *Store) ExpireAt(key []byte, unixMillis int64) bool {
	s.owner.check()
	id, sl := s.lookup(key)
	if sl == nil {
		return false
	}
	if unixMillis <= s.expiryNow() {
		s.removeID(id)
		return true
	}
	s.touch(sl) // a write of the key, as Redis's lookupKeyWrite
	// An error means the block had to grow and the arena is out of address
	// space: the key keeps its old expiry and still existed. Only reachable
	// with tens of GiB stored.
	_ = s.retime(id, sl, unixMillis)
	return true
}

// retime changes the expiry of a live key, keeping its value.
func (s *Store) retime(id uint32, sl *slot, exp int64) error {
	// The value's body is copied out first: the tail may move inside the block.
	var ev encoded
	ev.tag = sl.inl[0]
	n := sl.encLen()
	s.scratch = append(s.scratch[:0], sl.inl[1:min(n, inlineLen)]...)
	if n > inlineLen {
		s.scratch = append(s.scratch, s.tail(sl)...)
	}
	if ev.tag == tagInt || ev.tag >= tagHash {
		ev.n = copy(ev.num[:], s.scratch)
	} else {
		ev.raw = s.scratch
	}
	return s.rewrite(id, sl, &ev, exp)
}

// Persist removes key's expiry and reports whether there was one to remove.
func (s *Store) Persist(key []byte) bool {
	s.owner.check()
	id, sl := s.lookup(key)
	if sl == nil {
		return false
	}
	s.touch(sl) // looked up for writing, as Redis's, with or without an expiry to remove
	if !sl.hasTTL() {
		return false
	}
	_ = s.retime(id, sl, 0) // shrinking never needs a new block of a larger class
	return true
}

// PTTL returns the milliseconds key has left: -2 when the key does not exist, -1 when
// it has no expiry.
func (s *Store) PTTL(key []byte) int64 {
	at := s.ExpireTime(key)
	if at < 0 {
		return at
	}
	// The clock may have moved on since lookup found the key alive: never
	// answer a negative TTL, which callers would read as -1 "no expiry"
	// or -2 "missing".
	return max(at-s.o.Clock.NowMillis(), 0)
}

// ExpireTime returns key's absolute expiry in Unix milliseconds: -2 when the key does
// not exist, -1 when it has no expiry.
func (s *Store) ExpireTime(key []byte) int64 {
	s.owner.check()
	_, sl := s.lookup(key)
	if sl == nil {
		return -2
	}
	if !sl.hasTTL() {
		return -1
	}
	return s.expiryOf(sl)
}
