package store

import "math"

// SweepAt returns when Tick's expiry sweep next has work, on the store's
// clock (unix ms): math.MaxInt64 when it has none (no key with a TTL, or a
// store that does not expire keys itself: a replica's, or during a pause's
// hold of expiry); the end of the sweep's rest (sweepPauseMillis after a
// full pass over the slots); or a time not after now while a pass is
// under way. The server's loop parks no longer than that, so an idle
// loop's long park delays no key's expiry beyond the sweep's own rest,
// and a server holding keys with a TTL still dozes between passes.
func (s *Store) SweepAt() int64 {
	s.owner.check()
	if s.ttlKeys == 0 || s.keepExpired || s.noExpiry {
		return math.MaxInt64
	}
	return s.sweepRestUntil
}
