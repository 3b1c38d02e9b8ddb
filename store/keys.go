package store

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"unsafe"

	"github.com/goblin-kv/goblin/arena"
)

// The keyspace commands beyond GET/SET/DEL: touching, renaming, moving a
// key between stores (databases), picking a random key, and what a key
// costs.

// Touch marks key as used now (for the LRU policy) and reports whether it
// exists.
func (s *Store) Touch(key []byte) bool {
	s.owner.check()
	_, sl := s.lookup(key)
	if sl == nil {
		return false
	}
	s.touch(sl)
	return true
}

// RenameResult is Rename's outcome.
type RenameResult uint8

// Rename's outcomes.
const (
	Renamed   RenameResult = iota // the key has its new name
	NoSuchKey                     // the source key does not exist
	DestTaken                     // with nx: the destination exists, nothing changed
)

// Rename gives src's value, expiry and encoding to dst and removes src; an
// existing dst is overwritten, unless nx, which leaves everything as it was.
// The value is not copied: the key's block is re-keyed and its slot keeps
// its id. Renaming a key to itself changes nothing (and with nx reports
// DestTaken, as Redis's RENAMENX answers 0). When the new block does not
// fit under the memory cap, Rename fails with ErrOOM and changes nothing.
func (s *Store) Rename(src, dst []byte, nx bool) (RenameResult, error) {
	s.owner.check()
	if err := s.checkKey(dst); err != nil {
		return NoSuchKey, err
	}
	s.step()
	id, sl := s.lookup(src)
	if sl == nil {
		return NoSuchKey, nil
	}
	if string(src) == string(dst) {
		if nx {
			return DestTaken, nil
		}
		return Renamed, nil
	}
	_, taken := s.lookup(dst)
	if taken != nil && nx {
		return DestTaken, nil
	}
	// The new block first, so a failure leaves dst as it was.
	r, err := s.rekeyBlock(id, len(dst))
	if err != nil {
		return NoSuchKey, err
	}
	if taken != nil {
		s.Del(dst)
	}
	// Eviction and deleting dst may have shifted index entries: find src again.
	_, inOld, pos := s.find(src, s.hash(src))
	s.rekey(id, inOld, pos, r, dst)
	return Renamed, nil
}

// rekeyBlock allocates the block for slot id's value under a key of
// keyLen bytes, evicting to make room under the cap (never slot id).
func (s *Store) rekeyBlock(id uint32, keyLen int) (arena.Ref, error) {
	sl := s.slot(id)
	nl := blockLen(keyLen, sl.encLen(), sl.hasTTL())
	if grow := int64(arena.BlockSize(nl)) - int64(arena.BlockSize(s.blockLenOf(sl))); grow > 0 &&
		s.o.MaxMemory > 0 && s.totalUsed()+grow > s.o.MaxMemory {
		if err := s.makeRoom(grow, id); err != nil {
			return 0, err
		}
	}
	r, err := s.ar.Alloc(nl)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrOOM, err)
	}
	return r, nil
}

// rekey moves the key in slot id (its index entry at pos) to the name key,
// in block r from rekeyBlock: same expiry and value tail, a new index
// entry.
func (s *Store) rekey(id uint32, inOld bool, pos uint64, r arena.Ref, key []byte) {
	s.beforeChange(id)
	s.mods++
	sl := s.slot(id)
	ttl := sl.hasTTL()
	nl := blockLen(len(key), sl.encLen(), ttl)
	b := s.ar.Bytes(r, nl)
	old := s.ar.Bytes(sl.ref, s.blockLenOf(sl))
	binary.LittleEndian.PutUint32(b, id)
	off := idLen
	if ttl {
		copy(b[idLen:idLen+expLen], old[idLen:idLen+expLen])
		off += expLen
	}
	off += putKey(b[off:], key)
	copy(b[off:], s.tail(sl))
	s.ix.deleteEntry(inOld, pos)
	s.ar.Free(sl.ref)
	sl.ref, sl.keyLen = r, slotKeyLen(len(key))
	s.touch(sl)
	s.ix.insert(uint64(tagOf(s.hash(key)))<<32 | uint64(id))
}

// Export appends key's value to dst and returns how it is kept and its
// expiry (0: none), for writing it elsewhere with Import.
func (s *Store) Export(dst, key []byte) (val []byte, kind ValueKind, expireAt int64, ok bool) {
	s.owner.check()
	_, sl := s.lookup(key)
	if sl == nil || isColl(sl) {
		return dst, 0, 0, false
	}
	switch sl.inl[0] {
	case tagRaw:
		kind = AsString
	case tagMod:
		kind = AsBuilt
	}
	return s.appendValue(dst, sl), kind, s.expiryOf(sl), true
}

// Import writes a value Export read (kept the same way, with the same
// expiry) under key. Unless replace, an existing key is left alone and
// Import reports false.
func (s *Store) Import(key, val []byte, kind ValueKind, expireAt int64, replace bool) (bool, error) {
	_, _, applied, err := s.Set(nil, key, val, SetOptions{NX: !replace, ExpireAt: expireAt, Kind: kind})
	return applied, err
}

// Random returns a random live key, appended to dst, or false when the
// store is empty. It samples slots at random (deleting expired keys it
// meets, as Redis's RANDOMKEY does), then walks on from a random slot.
func (s *Store) Random(dst []byte) ([]byte, bool) {
	s.owner.check()
	now := s.expiryNow()
	for try := 0; s.liveSlots > 0 && try < 64; try++ {
		id := 1 + uint32(rand.Uint64N(uint64(s.nextSlot-1)))
		if key, ok := s.liveKey(dst, id, now); ok {
			return key, true
		}
	}
	if s.liveSlots == 0 {
		return dst, false
	}
	start := 1 + uint32(rand.Uint64N(uint64(s.nextSlot-1)))
	for i := uint32(0); i < s.nextSlot-1 && s.liveSlots > 0; i++ {
		id := 1 + (start-1+i)%(s.nextSlot-1)
		if key, ok := s.liveKey(dst, id, now); ok {
			return key, true
		}
	}
	return dst, false
}

// liveKey appends slot id's key when it holds a live one; an expired key
// there is deleted.
func (s *Store) liveKey(dst []byte, id uint32, now int64) ([]byte, bool) {
	sl := s.slot(id)
	if !sl.used() {
		return dst, false
	}
	if sl.hasTTL() && s.expiryOf(sl) <= now {
		if !s.keepExpired {
			s.expired(sl)
			s.removeID(id)
			s.stats.Expired++
		}
		return dst, false
	}
	return append(dst, s.keyOf(sl)...), true
}

// MemoryUsage returns the bytes key costs: its slot, its arena block (at
// its size class) and its share of the index at the maximum load; 0 when
// it does not exist.
func (s *Store) MemoryUsage(key []byte) int64 {
	s.owner.check()
	_, sl := s.lookup(key)
	if sl == nil {
		return 0
	}
	n := slotSize + int64(arena.BlockSize(s.blockLenOf(sl))) + 16
	if isColl(sl) {
		c := s.collOf(sl)
		n += int64(unsafe.Sizeof(coll{})) + s.collBytes(c)
		if c.big != 0 {
			n += int64(unsafe.Sizeof(collBig{}))
		}
	}
	return n
}
