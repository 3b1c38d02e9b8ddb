package store

// Sweeping reports whether Tick's expiry sweep has keys to look at: keys
// with a TTL, in a store that expires them on its own (not a replica's,
// nor during a pause's hold of expiry). The server's loop keeps its
// parks short while it does, so a key's expiry is not delayed by an idle
// loop's long park.
func (s *Store) Sweeping() bool {
	s.owner.check()
	return s.ttlKeys > 0 && !s.keepExpired && !s.noExpiry
}
