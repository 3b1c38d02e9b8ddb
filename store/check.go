package store

import (
	"encoding/binary"
	"fmt"
)

// Check verifies the store's invariants and returns the first violation: the arena's
// own (live + dead + free = size, page bookkeeping); every index entry names a used
// slot whose key hashes to the entry's tag and is found by a lookup; every used slot
// is named by exactly one entry; every slot's block is a live arena block of exactly
// the size class its key, value tail and expiry need, and starts with the slot's id;
// the migrated part of an old index table is empty; counters agree. It walks the whole
// store and is meant for tests.
func (s *Store) Check() error {
	if err := s.ar.Check(); err != nil {
		return err
	}
	seen := make(map[uint32]bool, s.liveSlots)
	named := make(map[uint32]bool)
	var ttl int64
	checkTable := func(name string, t []uint64, shift uint8, n int) error {
		count := 0
		for pos, e := range t {
			if e == 0 {
				continue
			}
			count++
			id := uint32(e)
			if id == 0 || id >= s.nextSlot {
				return fmt.Errorf("store: %s index bucket %d: slot id %d out of range", name, pos, id)
			}
			if seen[id] {
				return fmt.Errorf("store: slot %d named twice in the index", id)
			}
			seen[id] = true
			sl := s.slot(id)
			if !sl.used() {
				return fmt.Errorf("store: %s index bucket %d names free slot %d", name, pos, id)
			}
			if sl.keyLen == longKey {
				// A long key's length is in its block: the block must hold
				// at least the length, and the length must be long.
				if c := s.ar.Cap(sl.ref); c < sl.keyOff()+keyLenLen {
					return fmt.Errorf("store: slot %d: a long key's block of %d bytes cannot hold its length", id, c)
				}
				if n := s.keyLenOf(sl); n < longKey || n > s.o.MaxKeyLen {
					return fmt.Errorf("store: slot %d: long key of %d bytes (long keys are %d to %d bytes)", id, n, longKey, s.o.MaxKeyLen)
				}
			}
			if err := s.ar.Live(sl.ref, s.blockLenOf(sl)); err != nil {
				return fmt.Errorf("store: slot %d (key %d bytes, value %d encoded bytes, ttl %v): %w", id, s.keyLenOf(sl), sl.encLen(), sl.hasTTL(), err)
			}
			if got := binary.LittleEndian.Uint32(s.ar.Bytes(sl.ref, idLen)); got != id {
				return fmt.Errorf("store: slot %d's block names slot %d", id, got)
			}
			key := s.keyOf(sl)
			h := s.hash(key)
			if tagOf(h) != uint32(e>>32) {
				return fmt.Errorf("store: slot %d: index tag %#x, key hashes to %#x", id, uint32(e>>32), tagOf(h))
			}
			if fid, _, _ := s.find(key, h); fid != id {
				return fmt.Errorf("store: key of slot %d is not found by a lookup (found %d)", id, fid)
			}
			if isColl(sl) {
				if sl.encLen() != collValue || int(collIndex(sl)) >= len(s.colls) || s.collOf(sl).kind != sl.inl[0] {
					return fmt.Errorf("store: slot %d: collection value of %d bytes names a bad record", id, sl.encLen())
				}
				named[collIndex(sl)] = true
			}
			if tag := sl.inl[0]; tag > tagZSet {
				return fmt.Errorf("store: slot %d: unknown value tag %d", id, tag)
			}
			if sl.inl[0] == tagInt && (sl.encLen() < 2 || sl.encLen() > 9) {
				return fmt.Errorf("store: slot %d: integer with %d encoded bytes", id, sl.encLen())
			}
			if sl.hasTTL() {
				ttl++
			}
		}
		if count != n {
			return fmt.Errorf("store: %s index holds %d entries, count says %d", name, count, n)
		}
		return nil
	}
	if err := checkTable("current", s.ix.t, s.ix.shift, s.ix.n); err != nil {
		return err
	}
	if s.ix.old != nil {
		if err := checkTable("old", s.ix.old, s.ix.oldShift, s.ix.oldN); err != nil {
			return err
		}
		// Buckets already examined by migration are empty.
		mask := uint64(len(s.ix.old) - 1)
		done := uint64(len(s.ix.old)) - s.ix.mleft
		for i, p := uint64(0), (s.ix.mpos-done)&mask; i < done; i, p = i+1, (p+1)&mask {
			if s.ix.old[p] != 0 {
				return fmt.Errorf("store: migrated old bucket %d is not empty", p)
			}
		}
	}
	if int64(len(seen)) != s.liveSlots || ttl != s.ttlKeys {
		return fmt.Errorf("store: index names %d slots (%d with TTL), counters say %d (%d)", len(seen), ttl, s.liveSlots, s.ttlKeys)
	}
	var free int64
	for id := s.freeSlot; id != 0; id = uint32(s.slot(id).ref) {
		if s.slot(id).used() || seen[id] || free > int64(s.nextSlot) {
			return fmt.Errorf("store: free slot list is corrupt at %d", id)
		}
		free++
	}
	if free+s.liveSlots != int64(s.nextSlot)-1 {
		return fmt.Errorf("store: %d free + %d used slots != %d handed out", free, s.liveSlots, s.nextSlot-1)
	}
	if err := s.checkColls(named); err != nil {
		return err
	}
	if (s.ix.n+s.ix.oldN)*8 > len(s.ix.t)*7 {
		return fmt.Errorf("store: index load %d/%d above 7/8", s.ix.n+s.ix.oldN, len(s.ix.t))
	}
	return nil
}
