package store

import (
	"fmt"
	"math/rand/v2"
	"unsafe"

	"github.com/goblin-kv/goblin/arena"
)

// The memory cap: what a write would add, whether it fits under MaxMemory,
// and the eviction policies that make room (docs/store.md, "Memory cap and
// eviction").

// growth is the memory a write adds: the change in block size for an existing key,
// or slot + block + index share for a new one.
func (s *Store) growth(sl *slot, keyLen, encLen int, ttl bool) int64 {
	nb := int64(arena.BlockSize(blockLen(keyLen, encLen, ttl)))
	if sl == nil {
		return nb + slotSize + 16 // two 8-byte index buckets at the maximum load
	}
	return nb - int64(arena.BlockSize(s.blockLenOf(sl)))
}

// overCap returns the growth of a write when it would take the store over MaxMemory,
// 0 when the write fits (or there is no cap).
func (s *Store) overCap(sl *slot, keyLen, encLen int, ttl bool) int64 {
	if s.o.MaxMemory == 0 {
		return 0
	}
	if grow := s.growth(sl, keyLen, encLen, ttl); grow > 0 && s.totalUsed()+grow > s.o.MaxMemory {
		return grow
	}
	return 0
}

// used is the memory counted against MaxMemory.
func (s *Store) used() int64 {
	return int64(len(s.ix.t)+len(s.ix.old))*8 + s.liveSlots*slotSize + s.ar.LiveBytes() +
		int64(len(s.colls))*int64(unsafe.Sizeof(coll{})) + int64(len(s.bigs))*bigPageLen*int64(unsafe.Sizeof(collBig{}))
}

// Eviction bounds: slots sampled per victim, victims per write. A write that still
// does not fit after maxEvictPerWrite evictions proceeds (like Redis' eviction time
// limit) and Tick keeps evicting, so no single call does unbounded work.
const (
	evictScan        = 64
	maxEvictPerWrite = 128
)

// makeRoom evicts keys until grow more bytes fit under MaxMemory, never evicting slot
// keep. It fails with ErrOOM when the policy forbids eviction or finds no victim.
func (s *Store) makeRoom(grow int64, keep uint32) error {
	for n := 0; s.totalUsed()+grow > s.o.MaxMemory; n++ {
		if n == maxEvictPerWrite {
			return nil
		}
		if !s.evictOne(keep) {
			s.stats.OOMRejects++
			return fmt.Errorf("%w: used %d + %d bytes > maxmemory %d (policy %v)", ErrOOM, s.totalUsed(), grow, s.o.MaxMemory, s.o.Eviction)
		}
	}
	return nil
}

// evictOne evicts one key under the policy, from this store or, when it
// has no victim, from a sibling sharing its cap; false when none has one.
func (s *Store) evictOne(keep uint32) bool {
	if v := s.victim(keep); v != 0 {
		s.evicted(v)
		s.removeID(v)
		s.stats.Evicted++
		return true
	}
	if s.group == nil {
		return false
	}
	for _, m := range s.group.members {
		if m == s {
			continue
		}
		if v := m.victim(0); v != 0 {
			m.evicted(v)
			m.removeID(v)
			m.stats.Evicted++
			return true
		}
	}
	return false
}

// evicted tells OnRemove's callback that slot id's key is evicted.
func (s *Store) evicted(id uint32) {
	if s.removed != nil {
		s.removed(s.keyOf(s.slot(id)), true)
	}
}

// victim picks a key to evict under the policy, 0 when there is none.
// Each search examines at most 16 times evictScan slots from the eviction
// hand; when one finds no candidate (few keys with a TTL among many
// without, under a volatile policy, or a sparse slot table), the next
// goes on from where it stopped, so a key that can be evicted is found
// before the write is refused with OOM: at most one walk of the table.
func (s *Store) victim(keep uint32) uint32 {
	for range int(s.nextSlot)/(evictScan*16) + 1 {
		if v := s.victimNear(keep); v != 0 {
			return v
		}
		if s.liveSlots == 0 || (s.o.Eviction.volatile() && s.ttlKeys == 0) {
			return 0 // nothing a further search could find
		}
	}
	return 0
}

// victimNear is one search of victim's.
func (s *Store) victimNear(keep uint32) uint32 {
	switch s.o.Eviction {
	case AllKeysLRU:
		return s.clockVictim(keep)
	case VolatileLRU:
		return s.clockVictimTTL(keep)
	case AllKeysRandom, VolatileRandom:
		return s.randomVictim(keep, s.o.Eviction == VolatileRandom)
	case VolatileTTL:
		return s.ttlVictim(keep)
	case AllKeysLFU, VolatileLFU:
		return s.lfuVictim(keep, s.o.Eviction == VolatileLFU)
	}
	return 0
}

// evictOverCap evicts up to n keys while the store is above MaxMemory (after an index
// growth, or writes that proceeded at the per-write eviction limit).
func (s *Store) evictOverCap(n int) int {
	work := 0
	for ; work < n && s.o.MaxMemory > 0 && s.totalUsed() > s.o.MaxMemory; work++ {
		if !s.evictOne(0) {
			break
		}
	}
	return work
}

// advanceHand moves the eviction hand to the next slot id and returns it.
func (s *Store) advanceHand() uint32 {
	if s.evictHand >= s.nextSlot {
		s.evictHand = 1
	}
	id := s.evictHand
	s.evictHand++
	return id
}

// clockVictim runs the CLOCK hand: keys touched since the hand last passed have their
// counter lowered; the first key at 0 is the victim. After evictScan slots without one,
// the least recently touched key seen is taken.
func (s *Store) clockVictim(keep uint32) uint32 {
	if s.liveSlots == 0 || (s.liveSlots == 1 && keep != 0) {
		return 0
	}
	best, bestClock := uint32(0), uint32(clockMax+1)
	for i := 0; i < evictScan || best == 0; i++ {
		id := s.advanceHand()
		sl := s.slot(id)
		if !sl.used() || id == keep {
			continue
		}
		c := sl.clock()
		if c == 0 {
			return id
		}
		sl.meta -= 1 << clockShift
		if c-1 < bestClock {
			best, bestClock = id, c-1
		}
		if i > 4*int(s.nextSlot) {
			break
		}
	}
	return best
}

// ttlVictim samples up to evictScan keys with a TTL (examining at most 16 times as
// many slots) and returns the one that expires soonest, or 0 when it found none.
func (s *Store) ttlVictim(keep uint32) uint32 {
	if s.ttlKeys == 0 {
		return 0
	}
	best, bestExp := uint32(0), int64(maxInt64)
	for i, found := 0, 0; i < evictScan*16 && found < evictScan; i++ {
		id := s.advanceHand()
		sl := s.slot(id)
		if !sl.used() || !sl.hasTTL() || id == keep {
			continue
		}
		found++
		if e := s.expiryOf(sl); e < bestExp {
			best, bestExp = id, e
		}
	}
	return best
}

// clockVictimTTL is clockVictim among keys with a TTL (volatile-lru): the
// hand passes the others without lowering their counters, examining at
// most 16 times evictScan slots; 0 when it found no key with a TTL.
func (s *Store) clockVictimTTL(keep uint32) uint32 {
	if s.ttlKeys == 0 {
		return 0
	}
	best, bestClock := uint32(0), uint32(clockMax+1)
	for i, found := 0, 0; i < evictScan*16 && found < evictScan; i++ {
		id := s.advanceHand()
		sl := s.slot(id)
		if !sl.used() || !sl.hasTTL() || id == keep {
			continue
		}
		found++
		c := sl.clock()
		if c == 0 {
			return id
		}
		sl.meta -= 1 << clockShift
		if c-1 < bestClock {
			best, bestClock = id, c-1
		}
	}
	return best
}

// randomVictim returns a key chosen at random (with a TTL alone when
// volatile): up to evictScan random slot ids, then the eviction hand's
// walk over at most 16 times evictScan slots; 0 when it found none.
func (s *Store) randomVictim(keep uint32, volatile bool) uint32 {
	if s.liveSlots == 0 || (volatile && s.ttlKeys == 0) || s.nextSlot <= 1 {
		return 0
	}
	ok := func(id uint32) bool {
		sl := s.slot(id)
		return sl.used() && id != keep && (!volatile || sl.hasTTL())
	}
	for range evictScan {
		if id := 1 + rand.Uint32N(s.nextSlot-1); ok(id) {
			return id
		}
	}
	for range evictScan * 16 {
		if id := s.advanceHand(); ok(id) {
			return id
		}
	}
	return 0
}
