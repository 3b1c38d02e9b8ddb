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
