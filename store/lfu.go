package store

import (
	"fmt"
	"math/rand/v2"
)

// Each key's access frequency under an LFU policy (allkeys-lfu,
// volatile-lfu), as Redis 7.0 keeps it in its objects' 24-bit LRU field
// (evict.c): the low 8 bits are a logarithmic counter, the 16 above them
// the time of its last decrement in minutes (Unix minutes mod 65,536).
//
// Under an LFU policy the slot's atime holds that word instead of the
// last access second (access.go), as Redis's field holds one or the
// other: a policy change converts no key, so a key's first reads after
// it see the other policy's bits, which Redis's OBJECT FREQ and OBJECT
// IDLETIME errors warn about ("LRU and LFU data will take some time to
// adjust").
//
//   - A new key starts at lfuInitVal (5) with the current minute.
//   - An access (touch) first decays the counter, by one per
//     lfu-decay-time minutes since its minute (none when lfu-decay-time
//     is 0), then increments it with probability
//     1/((counter-5)·lfu-log-factor + 1) (always below 5, and always
//     with lfu-log-factor 0), saturating at 255, and stores it with the
//     current minute.
//   - OBJECT FREQ (Freq) reads the decayed counter and stores nothing.
//   - A command counts one access per key however many of the store's
//     calls it makes on it (ZADD of several members, ZRANGE, LINSERT),
//     as Redis's one lookup per key does, when its caller brackets it
//     with BeginCommand and EndCommand (the engine does under an LFU
//     policy); without them every call counts.
//   - Eviction samples keys and evicts the one with the lowest decayed
//     counter (lfuVictim).

// Redis's LFU constants (server.h).
const (
	lfuInitVal          = 5
	lfuCounterMax       = 255
	DefaultLFULogFactor = 10 // lfu-log-factor's default
	DefaultLFUDecayTime = 1  // lfu-decay-time's default, minutes
)

// LFU reports whether p evicts by access frequency (and so keeps LFU
// counters instead of access times).
func (p EvictionPolicy) LFU() bool { return p == AllKeysLFU || p == VolatileLFU }

// volatile reports whether p evicts only keys with a TTL.
func (p EvictionPolicy) volatile() bool {
	return p == VolatileLRU || p == VolatileLFU || p == VolatileRandom || p == VolatileTTL
}

// SetLFUParams sets lfu-log-factor and lfu-decay-time (minutes) of s and
// its siblings; neither may be negative.
func (s *Store) SetLFUParams(logFactor, decayTime int) error {
	if logFactor < 0 || decayTime < 0 {
		return fmt.Errorf("%w: lfu-log-factor %d and lfu-decay-time %d must not be negative", ErrBadOption, logFactor, decayTime)
	}
	s.each(func(m *Store) { m.lfuLogFactor, m.lfuDecayTime = logFactor, decayTime })
	return nil
}

// LFUParams returns lfu-log-factor and lfu-decay-time.
func (s *Store) LFUParams() (logFactor, decayTime int) { return s.lfuLogFactor, s.lfuDecayTime }

// lfuMinutes is Redis's LFUGetTimeInMinutes on the store's clock.
func (s *Store) lfuMinutes() uint32 { return (s.lru / 60) & 0xffff }

// newAtime is the atime a new key starts with: the LRU clock, or under an
// LFU policy the initial counter at the current minute.
func (s *Store) newAtime() uint32 {
	if s.lfu {
		return s.lfuMinutes()<<8 | lfuInitVal
	}
	return s.lru
}

// lfuDecayed is Redis's LFUDecrAndReturn: w's counter less one per
// lfu-decay-time minutes since w's minute.
func (s *Store) lfuDecayed(w uint32) uint32 {
	counter := w & 0xff
	if s.lfuDecayTime == 0 {
		return counter
	}
	ldt, now := (w>>8)&0xffff, s.lfuMinutes()
	elapsed := now - ldt
	if now < ldt { // the 16-bit minute wrapped, as Redis's LFUTimeElapsed counts it
		elapsed = 65535 - ldt + now
	}
	if periods := elapsed / uint32(s.lfuDecayTime); periods > 0 {
		if periods > counter {
			return 0
		}
		return counter - periods
	}
	return counter
}

// BeginCommand starts a command whose store calls count one access per
// key (under an LFU policy) until EndCommand; it forgets the keys an
// earlier command touched.
func (s *Store) BeginCommand() { s.lfuCmd, s.lfuN = true, 0 }

// EndCommand ends BeginCommand's command: every call counts again.
func (s *Store) EndCommand() { s.lfuCmd = false }

// touchLFU is touch under an LFU policy: Redis's updateLFU, once per key
// in a command (BeginCommand; the first len(lfuSeen) keys of a command
// are remembered, the ones after them count at every call).
func (s *Store) touchLFU(sl *slot) {
	if s.noTouch {
		return
	}
	if s.lfuCmd && !s.lfuMark(sl) {
		return
	}
	c := s.lfuDecayed(sl.atime)
	if c < lfuCounterMax {
		base := max(int(c)-lfuInitVal, 0)
		// Redis's LFULogIncr: rand()/RAND_MAX < 1/(base·factor+1).
		if base == 0 || s.lfuLogFactor == 0 || rand.Float64() < 1/float64(base*s.lfuLogFactor+1) {
			c++
		}
	}
	sl.atime = s.lfuMinutes()<<8 | c
}

// lfuMark remembers that the command counted sl, reporting false when
// it had already.
func (s *Store) lfuMark(sl *slot) bool {
	for _, seen := range s.lfuSeen[:s.lfuN] {
		if seen == sl {
			return false
		}
	}
	if s.lfuN < len(s.lfuSeen) {
		s.lfuSeen[s.lfuN] = sl
		s.lfuN++
	}
	return true
}

// Freq returns key's access frequency counter as OBJECT FREQ shows it
// (decayed, not stored back) and whether the key exists. It is not an
// access. Its value means something only under an LFU policy.
func (s *Store) Freq(key []byte) (int64, bool) {
	s.owner.check()
	_, sl := s.lookup(key)
	if sl == nil {
		return 0, false
	}
	return int64(s.lfuDecayed(sl.atime)), true
}

// SetFreq sets key's counter to n (0–255) at the current minute, as
// RESTORE … FREQ does under an LFU policy (Redis's objectSetLRUOrLFU);
// under another policy it does nothing. It reports whether the key exists.
func (s *Store) SetFreq(key []byte, n int) bool {
	s.owner.check()
	_, sl := s.lookup(key)
	if sl == nil {
		return false
	}
	if s.lfu {
		sl.atime = s.lfuMinutes()<<8 | uint32(min(max(n, 0), lfuCounterMax))
	}
	return true
}

// lfuVictim samples up to evictScan keys from the eviction hand (with a
// TTL alone when volatile, examining at most 16 times as many slots) and
// returns the one with the lowest decayed counter, 0 when it found none.
func (s *Store) lfuVictim(keep uint32, volatile bool) uint32 {
	if s.liveSlots == 0 || (volatile && s.ttlKeys == 0) {
		return 0
	}
	best, bestFreq := uint32(0), uint32(lfuCounterMax+1)
	for i, found := 0, 0; i < evictScan*16 && found < evictScan; i++ {
		id := s.advanceHand()
		sl := s.slot(id)
		if !sl.used() || id == keep || (volatile && !sl.hasTTL()) {
			continue
		}
		found++
		if f := s.lfuDecayed(sl.atime); f < bestFreq {
			best, bestFreq = id, f
			if f == 0 {
				break
			}
		}
	}
	return best
}
