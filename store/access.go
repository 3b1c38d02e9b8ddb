package store

// Each key's last access (OBJECT IDLETIME, DEBUG OBJECT's
// lru_seconds_idle), as Redis keeps it in its objects' 24-bit LRU field.
//
// The store keeps an LRU clock in whole seconds (lru), which the owner
// moves forward with SetLRUClock (the engine does it once per loop cycle,
// only when the second changes, as Redis's serverCron updates its
// server.lruclock), and every access stores it into the key's slot
// (slot.atime, 4 bytes per key: slots grew from 16 to 20 bytes). An
// access is what touches the key's CLOCK bits: reads (GET, GETRANGE, a
// collection read), writes of an existing key, TOUCH and new keys; a
// reader under SetNoTouch (CLIENT NO-TOUCH) and the introspection calls
// (IdleTime, EncodingOf, Exists) leave it. The clock is 32 bits of
// seconds, so unlike Redis's 24-bit one it does not wrap (Redis's wraps
// every 194 days).

// SetLRUClock sets the store's LRU clock from unixMillis (seconds
// resolution): the time the next accesses record.
func (s *Store) SetLRUClock(unixMillis int64) { s.lru = uint32(unixMillis / 1000) }

// IdleTime returns the seconds since key was last accessed, by the LRU
// clock, and whether it exists. It is not an access.
func (s *Store) IdleTime(key []byte) (int64, bool) {
	s.owner.check()
	_, sl := s.lookup(key)
	if sl == nil {
		return 0, false
	}
	return s.idle(sl), true
}

func (s *Store) idle(sl *slot) int64 {
	if sl.atime > s.lru { // the clock was set back (a test's, or the wall clock)
		return 0
	}
	return int64(s.lru - sl.atime)
}

// SetIdleTime makes key look idle for seconds (RESTORE … IDLETIME, as
// Redis's objectSetLRUOrLFU); false when the key does not exist. Under an
// LFU policy, which keeps no access time, it changes nothing.
func (s *Store) SetIdleTime(key []byte, seconds int64) bool {
	s.owner.check()
	_, sl := s.lookup(key)
	if sl == nil {
		return false
	}
	if s.lfu {
		return true
	}
	if seconds < 0 {
		seconds = 0
	}
	sl.atime = s.lru - uint32(min(seconds, int64(s.lru)))
	return true
}

// LRUClock returns the store's LRU clock, in seconds.
func (s *Store) LRUClock() uint32 { return s.lru }

// AccessWord returns key's access record as the store keeps it (the LRU
// clock's second of its last access, or under an LFU policy the LFU word,
// lfu.go) and whether key exists, for MOVE to carry it to another
// database as Redis moves the object itself. It is not an access.
func (s *Store) AccessWord(key []byte) (uint32, bool) {
	s.owner.check()
	_, sl := s.lookup(key)
	if sl == nil {
		return 0, false
	}
	return sl.atime, true
}

// SetAccessWord sets key's access record to w, one AccessWord returned
// (from this store or a sibling, which keep the same clock and policy);
// false when key does not exist.
func (s *Store) SetAccessWord(key []byte, w uint32) bool {
	s.owner.check()
	_, sl := s.lookup(key)
	if sl == nil {
		return false
	}
	sl.atime = w
	return true
}
