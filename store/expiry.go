package store

// Active expiry: Tick sweeps slot ids from a cursor and deletes keys whose
// time has passed; lazy expiry (on access) is in lookup and the write
// paths of store.go.

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
