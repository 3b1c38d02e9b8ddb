package store

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/goblin-kv/goblin/arena"
)

// LoadString adds a string key the store does not hold yet, as a
// snapshot's loader does at start: one walk of the index finds either the
// key (added is false and nothing changes: the file holds it twice) or the
// empty bucket the key goes in, and the entry is written there, with no
// second probe and none of a write's checks that cannot apply to a key
// being loaded (an old value, NX/XX, GET, KEEPTTL). exp is the absolute
// expiry in Unix milliseconds, 0 for none; an expiry already past is
// stored as it is (the loader drops such keys before). The value is kept
// as SET keeps it.
//
// A store under a memory cap, in the middle of an index resize or with a
// snapshot cut running takes SET's path instead (Set with NX), which
// evicts, migrates and copies on write as a write must; Reserve first
// (the file's RESIZEDB hint) keeps a load on the one-probe path.
//
// h is LoadHash(key): a loader hashes a few keys ahead of the one it
// stores, so the index buckets they go in are read from memory together
// rather than one cache miss after another.
func (s *Store) LoadString(h uint64, key, val []byte, exp int64) (added bool, err error) {
	s.owner.check()
	if s.o.MaxMemory != 0 || s.ix.old != nil || s.cut != nil {
		_, had, applied, err := s.Set(nil, key, val, SetOptions{NX: true, ExpireAt: exp})
		return applied && !had, err
	}
	if err := s.checkKey(key); err != nil {
		return false, err
	}
	if err := s.checkValue(val); err != nil {
		return false, err
	}
	if s.ix.needsGrow() {
		if err := s.ix.grow(); err != nil {
			return false, err
		}
		// The index now migrates step by step: SET's path looks in both
		// tables until it is done.
		_, had, applied, err := s.Set(nil, key, val, SetOptions{NX: true, ExpireAt: exp})
		return applied && !had, err
	}
	tag := tagOf(h)
	t := s.ix.t
	mask := uint64(len(t) - 1)
	pos := uint64(tag >> s.ix.shift)
	for ; t[pos] != 0; pos = (pos + 1) & mask {
		if e := t[pos]; uint32(e>>32) == tag && s.sameKey(s.slot(uint32(e)), key) {
			return false, nil
		}
	}
	var ev encoded
	ev.set(val, AsSet)
	nl := blockLen(len(key), ev.len(), exp != 0)
	r, err := s.ar.Alloc(nl)
	if err != nil {
		return false, fmt.Errorf("%w: %w", ErrOOM, err)
	}
	id, err := s.newSlot()
	if err != nil {
		s.ar.Free(r)
		return false, err
	}
	s.mods++
	sl := s.slot(id)
	*sl = slot{ref: r, keyLen: slotKeyLen(len(key)), meta: clockMax << clockShift, atime: s.newAtime()}
	b := s.ar.Bytes(r, nl)
	binary.LittleEndian.PutUint32(b, id)
	off := idLen
	if exp != 0 {
		off += expLen
	}
	putKey(b[off:], key)
	s.setTTL(sl, b, exp)
	writeValue(sl, b, &ev)
	t[pos] = uint64(tag)<<32 | uint64(id)
	s.ix.n++
	s.liveSlots++
	return true, nil
}

// sameKey reports whether sl holds key (probe's comparison).
func (s *Store) sameKey(sl *slot, key []byte) bool {
	if n := int(sl.keyLen); n == len(key) && n != longKey {
		off := sl.keyOff()
		return string(s.ar.Bytes(sl.ref, off+n)[off:]) == string(key)
	}
	return sl.keyLen == longKey && len(key) >= longKey && string(s.keyOf(sl)) == string(key)
}

// LoadHash returns key's hash for LoadString and asks the processor to
// fetch the index bucket a lookup of key starts at, without waiting for
// it: a loader that hashes a few keys ahead of the one it stores has their
// buckets fetched from memory together, where each LoadString's own read
// would wait for the one before (a bulk load's index is far larger than
// the caches, and its buckets are visited in random order).
func (s *Store) LoadHash(key []byte) uint64 {
	h := s.hash(key)
	prefetch(uintptr(unsafe.Pointer(&s.ix.t[uint64(tagOf(h)>>s.ix.shift)])))
	return h
}

// BeginBulkLoad puts the store in a loader's bulk-load mode until
// EndBulkLoad: the arena's chunks (keys and values) are mapped advised
// against huge pages, each faulted in whole when mapped (see
// arena.OffHeap.DeferHugePages). The first touch of a 2 MiB page can cost
// a load that fills gigabytes at once more than the load itself: on a
// virtual machine that hands free 2 MiB blocks back to its host it faults
// on the host too, and with THP defrag "madvise" it may compact memory.
// The index keeps its huge pages throughout: it is the table
// every request probes at random, sized once from the file's RESIZEDB
// hint (few faults).
func (s *Store) BeginBulkLoad() {
	s.owner.check()
	s.ar.DeferHugePages()
}

// BulkLoading reports whether the store is in bulk-load mode, between
// BeginBulkLoad and EndBulkLoad: for tests of the loaders that use the
// mode (the load at start, a replica's full resynchronisation). Owner's
// goroutine only, as every other method.
func (s *Store) BulkLoading() bool {
	s.owner.check()
	return s.ar.HugePagesDeferred()
}

// EndBulkLoad ends BeginBulkLoad: the chunks mapped meanwhile are advised
// huge pages, which khugepaged collapses in the background, slowly (until
// then a GET costs some TLB misses more). The Collapse it returns puts them
// in huge pages at once; run it on a goroutine of its own (it never
// touches the store's memory, only asks the kernel about its addresses).
func (s *Store) EndBulkLoad() arena.Collapse {
	s.owner.check()
	return s.ar.AdviseHugePages()
}
