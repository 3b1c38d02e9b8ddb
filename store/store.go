// Package store is goblin's keyspace: a single-threaded, GC-free map from byte-string
// keys to byte-string values with expiry, a memory cap and eviction.
//
// A Store is owned by one goroutine (the server loop); it has no locks and must not be
// called concurrently. Hot methods take caller-owned buffers and append into them, so
// GET, SET, DEL and INCR allocate nothing.
//
// Layout (docs/store.md has the details):
//   - index: open addressing with linear probing over []uint64 entries, each a 32-bit
//     hash tag and a 32-bit slot id; it grows by doubling, migrating a bounded number
//     of buckets per write and per Tick, so there is never a rehash pause;
//   - slots: 20-byte pointer-free records in 80 KiB pages holding the key length, the
//     value's encoded length, the first 6 encoded value bytes, a TTL flag, 2 CLOCK bits,
//     the key's last access in seconds (OBJECT IDLETIME; access.go) and a reference
//     into the arena;
//   - arena block per key: [slot id:4][expiry:8, if any][key][value tail]; a long key
//     (longKey bytes or more: the slot's 16-bit length says longKey) has its length
//     before it, [key length:4][key], so only keys that long pay for reading it.
//
// Snapshots (cut.go): every change to an existing key goes through rewrite,
// removeAt or rekey, which call beforeChange(id) first, and every new key
// through insert, which calls born(id); a new kind of change must do the
// same, or a running BGSAVE would write the changed value instead of the one
// its cut began with.
//
// Values are encoded as a tag byte followed by the bytes, so values of up to 5 bytes
// live wholly in the slot; canonical decimal integers are stored as a tag byte and
// 1 to 8 little-endian bytes, so counters up to ±2^39 need no arena at all. Nothing
// the store keeps per key contains a Go pointer: the garbage collector's work does not
// grow with the number of keys.
package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"runtime"
	"slices"
	"strconv"
	"unsafe"

	"github.com/goblin-kv/goblin/arena"
)

// Value tags: the first encoded byte of every value. The two string tags
// differ only in what OBJECT ENCODING reports (see Encoding).
const (
	tagRaw byte = 0 // the bytes as given by a SET-like write
	tagInt byte = 1 // a canonical int64, 1..8 little-endian two's-complement bytes
	tagMod byte = 2 // the bytes, built or changed in place (APPEND, SETRANGE, SETBIT...)
)

// Slot meta word.
const (
	encMask    = 1<<29 - 1
	ttlBit     = 1 << 29
	clockShift = 30
	clockMax   = 3
	inlineLen  = 6
	idLen      = 4 // slot id at the start of each block
	expLen     = 8

	// longKey in a slot's keyLen marks a key of longKey bytes or more, whose
	// length is in its block (keyLenLen bytes before the key).
	longKey   = 1<<16 - 1
	keyLenLen = 4

	slotPageBits = 12
	slotPageLen  = 1 << slotPageBits
	slotSize     = 20
)

// slot is one key's fixed-size, pointer-free record.
type slot struct {
	ref    arena.Ref // the key's block; for a free slot, the next free slot id
	keyLen uint16
	inl    [inlineLen]byte // the first encoded value bytes, tag first
	meta   uint32          // encLen:29 | ttl:1 | clock:2; 0 for a free slot
	atime  uint32          // the last access, on the store's LRU clock (access.go)
}

func (sl *slot) encLen() int   { return int(sl.meta & encMask) }
func (sl *slot) hasTTL() bool  { return sl.meta&ttlBit != 0 }
func (sl *slot) used() bool    { return sl.meta&encMask != 0 }
func (sl *slot) clock() uint32 { return sl.meta >> clockShift }
func (sl *slot) keyOff() int {
	if sl.hasTTL() {
		return idLen + expLen
	}
	return idLen
}
func tailLen(encLen int) int {
	if encLen > inlineLen {
		return encLen - inlineLen
	}
	return 0
}

// keyField is how many block bytes a key of keyLen bytes takes: itself, and
// for a long key its length too.
func keyField(keyLen int) int {
	if keyLen >= longKey {
		return keyLenLen + keyLen
	}
	return keyLen
}

// slotKeyLen is what a slot records for a key of keyLen bytes.
func slotKeyLen(keyLen int) uint16 { return uint16(min(keyLen, longKey)) }

// putKey writes key at the start of b (the block from the key's offset on),
// its length first when it is long, and returns the bytes written.
func putKey(b, key []byte) int {
	if len(key) < longKey {
		return copy(b, key)
	}
	binary.LittleEndian.PutUint32(b, uint32(len(key)))
	return keyLenLen + copy(b[keyLenLen:], key)
}

func blockLen(keyLen, encLen int, ttl bool) int {
	n := idLen + keyField(keyLen) + tailLen(encLen)
	if ttl {
		n += expLen
	}
	return n
}

// keyLenOf returns the length of sl's key: the slot's, or for a long key
// the one in its block.
func (s *Store) keyLenOf(sl *slot) int {
	if sl.keyLen != longKey {
		return int(sl.keyLen)
	}
	return int(binary.LittleEndian.Uint32(s.ar.Bytes(sl.ref, sl.keyOff()+keyLenLen)[sl.keyOff():]))
}

// blockLenOf returns the length of sl's block.
func (s *Store) blockLenOf(sl *slot) int { return blockLen(s.keyLenOf(sl), sl.encLen(), sl.hasTTL()) }

// Store is the keyspace. The zero value is not usable; call New.
type Store struct {
	o     Options
	seed  maphash.Seed
	hk    hashKeys // the short-key hash's keys, from seed (keyhash.go)
	ar    *arena.Arena
	ix    index
	relo  func(old, new arena.Ref)
	stats Stats

	mem        *arena.OffHeap       // large index tables and slot pages beyond heapSlotPages
	slots      []*[slotPageLen]slot // fixed-size pages: an id's slot costs one bounds check
	slotRegion []byte               // unused rest of the current off-heap slot region
	nextSlot   uint32               // slot ids below this have been handed out at least once
	freeSlot   uint32               // head of the free slot list, 0 = empty
	liveSlots  int64
	ttlKeys    int64

	expireCursor   uint32                         // active expiry sweeps slot ids
	sweepRestUntil int64                          // unix ms before which active expiry rests
	evictHand      uint32                         // CLOCK hand / eviction sampler
	ttlCursor      uint32                         // where AvgTTL's sample continues
	mods           uint64                         // changes made to keys (Mods)
	noTouch        bool                           // reads leave keys' recency alone (SetNoTouch)
	lru            uint32                         // the LRU clock, seconds (access.go)
	touchMask      uint32                         // ^0, or 0 under SetNoTouch (touch)
	lfu            bool                           // an LFU policy: atime holds the LFU word (lfu.go)
	lfuLogFactor   int                            // lfu-log-factor (lfu.go)
	lfuDecayTime   int                            // lfu-decay-time, minutes (lfu.go)
	lfuCmd         bool                           // inside BeginCommand's command (lfu.go)
	lfuN           int                            // slots in lfuSeen
	lfuSeen        [8]*slot                       // the slots the command has counted (lfu.go)
	scratch        []byte                         // Append's reusable buffer
	group          *group                         // siblings sharing the memory cap (group.go); nil alone
	cut            *Cut                           // the snapshot being taken (cut.go); nil when none
	removed        func(key []byte, evicted bool) // OnRemove's callback; nil when none
	keepExpired    bool                           // a replica's store: no active expiry, and lookups hide expired keys without deleting them (SetKeepExpired)
	noExpiry       bool                           // applying a primary's stream: no key's time has passed (SetNoExpiry)
	owner          ownerCheck

	colls     []coll // collection records (coll.go); pointer-free
	freeColl  uint32 // head of the free record list + 1, 0 = empty
	liveColls int    // records named by keys
	// The large collections' structures (coll.go's collBig), in pages that
	// never move; the outer slice is one pointer per 256 large collections.
	bigs           [][]collBig
	nBigs, freeBig uint32   // collBigs handed out; head of their free list + 1
	liveBigs       int      // collBigs in use
	lazy           []uint32 // records of deleted collections still being freed
	ends           []int    // ExportCollection's item ends
	// Integer items of collections are formatted here for callbacks (a
	// local buffer handed to an unknown function would escape).
	fbuf, vbuf  [20]byte
	zkey, zrem  []byte   // sorted-set zkey and member scratch
	zbuf, zbuf2 [24]byte // sorted-set listpack integers as text
}

// HandOff gives the store to whichever goroutine calls it next: call it after
// filling a store in one goroutine and before the loop goroutine takes over. It
// matters only in -tags invariants builds, which check that one goroutine at a time
// uses the store.
func (s *Store) HandOff() { s.owner.release() }

// New returns an empty store configured by o.
func New(o Options) (*Store, error) {
	o = o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	ar, err := arena.New(arena.Options{ChunkSize: o.ArenaChunkSize})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadOption, err)
	}
	s := &Store{o: o, seed: maphash.MakeSeed(), ar: ar, mem: &arena.OffHeap{}, touchMask: ^uint32(0),
		lfu: o.Eviction.LFU(), lfuLogFactor: DefaultLFULogFactor, lfuDecayTime: DefaultLFUDecayTime}
	s.hk = newHashKeys(s.seed)
	s.SetLRUClock(o.Clock.NowMillis())
	runtime.AddCleanup(s, (*arena.OffHeap).FreeAll, s.mem)
	s.relo = s.relocate
	s.reset()
	return s, nil
}

func (s *Store) reset() {
	if s.cut != nil {
		s.cut.drain() // the image keeps what the flush removes
	}
	s.mods++
	s.ar.Reset()
	s.ix = index{}
	s.slots, s.slotRegion = nil, nil
	s.mem.FreeAll()
	s.ix.init(s.mem, s.o.InitialCapacity)
	s.nextSlot = 1 // id 0 is nil
	s.freeSlot = 0
	s.liveSlots = 0
	s.ttlKeys = 0
	s.expireCursor = 1
	s.sweepRestUntil = 0
	s.evictHand = 1
	s.colls, s.freeColl, s.liveColls, s.lazy = nil, 0, 0, nil
	s.bigs, s.nBigs, s.freeBig, s.liveBigs = nil, 0, 0, 0
}

func (s *Store) slot(id uint32) *slot { return &s.slots[id>>slotPageBits][id&(slotPageLen-1)] }

func (s *Store) keyOf(sl *slot) []byte {
	off, n := sl.keyOff(), int(sl.keyLen)
	if n == longKey {
		n = s.keyLenOf(sl)
		off += keyLenLen
	}
	return s.ar.Bytes(sl.ref, off+n)[off:]
}

func (s *Store) expiryOf(sl *slot) int64 {
	if !sl.hasTTL() {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(s.ar.Bytes(sl.ref, idLen+expLen)[idLen:]))
}

// lookup finds key; a key whose TTL has passed is deleted and reported missing.
func (s *Store) lookup(key []byte) (id uint32, sl *slot) {
	tag := tagOf(s.hash(key))
	var pos uint64
	if len(key) <= shortKey {
		id, pos, sl = s.probeShort(s.ix.t, s.ix.shift, tag, key)
	} else {
		id, pos, sl = s.probe(s.ix.t, s.ix.shift, tag, key)
	}
	inOld := false
	if id == 0 {
		if s.ix.old == nil {
			return 0, nil
		}
		if id, pos, sl = s.probe(s.ix.old, s.ix.oldShift, tag, key); id == 0 {
			return 0, nil
		}
		inOld = true
	}
	if sl.hasTTL() && s.expiryOf(sl) <= s.expiryNow() {
		if s.keepExpired {
			return 0, nil // a replica's key goes when its primary's DEL arrives
		}
		s.expired(sl)
		s.removeAt(id, inOld, pos)
		s.stats.Expired++
		return 0, nil
	}
	return id, sl
}

// find returns the slot id of key (0 when absent), which table holds it and where.
func (s *Store) find(key []byte, h uint64) (id uint32, inOld bool, pos uint64) {
	tag := tagOf(h)
	if len(key) <= shortKey {
		id, pos, _ = s.probeShort(s.ix.t, s.ix.shift, tag, key)
	} else {
		id, pos, _ = s.probe(s.ix.t, s.ix.shift, tag, key)
	}
	if id != 0 {
		return id, false, pos
	}
	if s.ix.old != nil {
		if id, pos, _ = s.probe(s.ix.old, s.ix.oldShift, tag, key); id != 0 {
			return id, true, pos
		}
	}
	return 0, false, 0
}

// probeShort is probe for a key of at most shortKey bytes (the caller
// checks), with no call: the key is compared as at most two overlapping
// words, so nothing is spilled around a call that never happens.
func (s *Store) probeShort(t []uint64, shift uint8, tag uint32, key []byte) (uint32, uint64, *slot) {
	mask := uint64(len(t) - 1)
	for pos := uint64(tag >> shift); ; pos = (pos + 1) & mask {
		e := t[pos]
		if e == 0 {
			return 0, 0, nil
		}
		if uint32(e>>32) != tag {
			continue
		}
		id := uint32(e)
		sl := s.slot(id)
		n := len(key)
		if int(sl.keyLen) != n {
			continue
		}
		off := sl.keyOff()
		k := s.ar.Bytes(sl.ref, off+n)[off:]
		var same bool
		switch {
		case n >= 8:
			same = binary.LittleEndian.Uint64(k) == binary.LittleEndian.Uint64(key) &&
				binary.LittleEndian.Uint64(k[n-8:]) == binary.LittleEndian.Uint64(key[n-8:])
		case n >= 4:
			same = binary.LittleEndian.Uint32(k) == binary.LittleEndian.Uint32(key) &&
				binary.LittleEndian.Uint32(k[n-4:]) == binary.LittleEndian.Uint32(key[n-4:])
		case n > 0: // the first, middle and last bytes are all of them
			same = k[0] == key[0] && k[n>>1] == key[n>>1] && k[n-1] == key[n-1]
		default:
			same = true
		}
		if same {
			return id, pos, sl
		}
	}
}

// probe looks key up in table t: its slot id (0 when absent), the bucket
// holding it and its slot. Only an entry whose tag matches costs a look
// at its slot.
func (s *Store) probe(t []uint64, shift uint8, tag uint32, key []byte) (uint32, uint64, *slot) {
	mask := uint64(len(t) - 1)
	for pos := uint64(tag >> shift); ; pos = (pos + 1) & mask {
		e := t[pos]
		if e == 0 {
			return 0, 0, nil
		}
		if uint32(e>>32) == tag {
			id := uint32(e)
			sl := s.slot(id)
			// A key shorter than longKey is compared in place (keyOf's
			// common case, inlined); a long one through keyOf.
			if n := int(sl.keyLen); n == len(key) && n != longKey {
				if off := sl.keyOff(); string(s.ar.Bytes(sl.ref, off+n)[off:]) == string(key) {
					return id, pos, sl
				}
			} else if n == longKey && len(key) >= longKey && bytes.Equal(s.keyOf(sl), key) {
				return id, pos, sl
			}
		}
	}
}

// touch records an access to sl: its CLOCK bits for eviction and its
// access time for OBJECT IDLETIME, unless the reader asked not to
// (SetNoTouch). The time is one store with no branch of its own: the
// clock the engine's Tick keeps (access.go) where touchMask is all ones,
// the old time again where SetNoTouch made it 0. Under an LFU policy
// the access counts in the LFU counter instead (lfu.go).
func (s *Store) touch(sl *slot) {
	if s.lfu {
		s.touchLFU(sl)
		return
	}
	sl.atime ^= (sl.atime ^ s.lru) & s.touchMask
	if sl.meta>>clockShift != clockMax && !s.noTouch {
		sl.meta |= clockMax << clockShift
	}
}

// appendValue appends sl's value, decoded, to dst. A string of up to
// inlineLen-1+16 bytes (a short key's tail) that fits dst's capacity, a
// GET's usual case, is copied with no call: the slot's part as one fixed
// size move and the tail as at most two overlapping words, so the common
// path spills nothing around a growslice or memmove it does not make.
func (s *Store) appendValue(dst []byte, sl *slot) []byte {
	n := sl.encLen()
	if t := n - inlineLen; t > 0 && t <= 16 && sl.inl[0] != tagInt && sl.keyLen != longKey && cap(dst)-len(dst) >= n-1 {
		off := sl.keyOff() + int(sl.keyLen)
		src := s.ar.Bytes(sl.ref, off+t)[off:]
		l := len(dst)
		dst = dst[:l+n-1]
		*(*[inlineLen - 1]byte)(dst[l:]) = [inlineLen - 1]byte(sl.inl[1:])
		copyShort(dst[l+inlineLen-1:], src)
		return dst
	}
	return s.appendValueSlow(dst, sl)
}

// copyShort copies src, 1 to 16 bytes, to the start of d (which has room)
// with at most two overlapping word moves and no call: memmove's call
// and the spills around it cost more than a short copy itself.
func copyShort(d, src []byte) {
	switch t := len(src); {
	case t >= 8:
		binary.LittleEndian.PutUint64(d, binary.LittleEndian.Uint64(src))
		binary.LittleEndian.PutUint64(d[t-8:], binary.LittleEndian.Uint64(src[t-8:]))
	case t >= 4:
		binary.LittleEndian.PutUint32(d, binary.LittleEndian.Uint32(src))
		binary.LittleEndian.PutUint32(d[t-4:], binary.LittleEndian.Uint32(src[t-4:]))
	case t > 0: // the first, middle and last bytes are all of them
		d[0], d[t>>1], d[t-1] = src[0], src[t>>1], src[t-1]
	}
}

// appendValueSlow is appendValue's general case.
func (s *Store) appendValueSlow(dst []byte, sl *slot) []byte {
	n := sl.encLen()
	if sl.inl[0] == tagInt {
		return strconv.AppendInt(dst, s.slotInt(sl, n), 10)
	}
	if n <= inlineLen {
		return append(dst, sl.inl[1:n]...)
	}
	// The slot's inlineLen-1 bytes, then the tail after the key (tail's
	// common case inline): dst grows once, and the slot's part is a fixed
	// size move rather than a memmove call.
	off := sl.keyOff() + int(sl.keyLen)
	if sl.keyLen == longKey {
		off = sl.keyOff() + keyField(s.keyLenOf(sl))
	}
	t := s.ar.Bytes(sl.ref, off+n-inlineLen)[off:]
	l := len(dst)
	dst = slices.Grow(dst, n-1)[:l+n-1]
	*(*[inlineLen - 1]byte)(dst[l:]) = [inlineLen - 1]byte(sl.inl[1:])
	copy(dst[l+inlineLen-1:], t)
	return dst
}

func (s *Store) tail(sl *slot) []byte {
	off := sl.keyOff() + int(sl.keyLen)
	if sl.keyLen == longKey {
		off = sl.keyOff() + keyField(s.keyLenOf(sl))
	}
	return s.ar.Bytes(sl.ref, off+tailLen(sl.encLen()))[off:]
}

// Get appends key's value to dst and reports whether the key exists.
//
// A GET's usual case is served here with no call: a key of 8 to 16 bytes
// (hashed and compared as two words), no index resize under way and an
// LRU policy, and the key either not in the index or found with no TTL
// and a string value of 6 to 21 bytes (the slot's part and a tail of at
// most two words) that fits dst's capacity. Anything else goes to
// getSlow, the general case, whose bytes and counters this path matches
// (TestGetFastMatchesGeneral).
//
// The key's block is bounds checked once (arena.At) for its key and its
// value's tail, and dst's room is checked once; the words inside both are
// then read through pointers (word) and the tail copied as 8-byte array
// moves (getProbe still writes with setWord), which those checks
// keep in bounds: the bounds checks and slice arithmetic of each access
// were half of what a lookup cost (callgrind: Get 377 instructions before,
// 199 after, BenchmarkServe GET).
func (s *Store) Get(dst, key []byte) (val []byte, found bool) {
	s.owner.check()
	n := len(key)
	if n < 8 || n > shortKey || s.ix.old != nil || s.lfu {
		return s.getSlow(dst, key)
	}
	// The home slot, with no loop: most GETs end there (a hit, a miss on an
	// empty entry, or a slot for getSlow), and with no loop around them the
	// values the probe needs (mask, table, position) are not kept live, so
	// nothing spills. Any other entry there sends the request to getProbe,
	// which probes again from the home slot.
	kp := unsafe.Pointer(unsafe.SliceData(key))
	k0, k1 := word(kp, 0), word(kp, n-8)
	tag := tagOf(s.hk.mix(k0, k1, n))
	t := s.ix.t
	// The home slot's entry, within the table as getProbe's are.
	e := *(*uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(t)), (uint64(tag>>(s.ix.shift&31))&uint64(len(t)-1))*8))
	if e == 0 {
		s.stats.Misses++
		return dst, false
	}
	if uint32(e>>32) != tag {
		return s.getProbe(dst, key)
	}
	sl := s.slot(uint32(e))
	if int(sl.keyLen) != n {
		return s.getProbe(dst, key)
	}
	meta := sl.meta
	enc := int(meta & encMask)
	tl := enc - inlineLen
	// The checks are getProbe's (its comments say why). dst's room as its
	// new length m against the capacity, unsigned: the compiler then knows
	// dst[:m] below in bounds and checks it no more.
	m := len(dst) + enc - 1
	if meta&(ttlBit|encMask)-(inlineLen+1) > 16-1 || sl.inl[0]&^tagMod != 0 || uint(m) > uint(cap(dst)) {
		return s.getSlow(dst, key)
	}
	bp := s.ar.At(sl.ref, idLen+n+tl)
	if word(bp, idLen) != k0 || word(bp, idLen+n-8) != k1 {
		return s.getProbe(dst, key)
	}
	s.stats.Hits++
	sl.atime ^= (sl.atime ^ s.lru) & s.touchMask
	if meta>>clockShift != clockMax && !s.noTouch {
		sl.meta = meta | clockMax<<clockShift
	}
	dp := unsafe.Add(unsafe.Pointer(unsafe.SliceData(dst)), len(dst))
	dst = dst[:m]
	*(*[inlineLen - 1]byte)(dp) = [inlineLen - 1]byte(sl.inl[1:])
	dp, src := unsafe.Add(dp, inlineLen-1), unsafe.Add(bp, idLen+n)
	switch {
	case tl >= 8:
		*(*[8]byte)(dp) = *(*[8]byte)(src)
		*(*[8]byte)(unsafe.Add(dp, tl-8)) = *(*[8]byte)(unsafe.Add(src, tl-8))
	case tl >= 4:
		*(*[4]byte)(dp) = *(*[4]byte)(src)
		*(*[4]byte)(unsafe.Add(dp, tl-4)) = *(*[4]byte)(unsafe.Add(src, tl-4))
	default:
		for i := range tl {
			*(*byte)(unsafe.Add(dp, i)) = *(*byte)(unsafe.Add(src, i))
		}
	}
	return dst, true
}

// getProbe is Get's path past a home slot that holds another key (or
// another key's tag): the same checks, probing from the home slot again.
// The caller has checked Get's conditions (key of 8 to 16 bytes, no
// resize, LRU).
func (s *Store) getProbe(dst, key []byte) (val []byte, found bool) {
	n := len(key)
	kp := unsafe.Pointer(unsafe.SliceData(key))
	k0, k1 := word(kp, 0), word(kp, n-8)
	tag := tagOf(s.hk.mix(k0, k1, n))
	// The table's length is a power of two and mask one less, so every
	// pos below is within it: its entries are read with no bounds check.
	// shift is below 32 (32 - log2 of the length, at least 1).
	t := s.ix.t
	mask := uint64(len(t) - 1)
	tp := unsafe.Pointer(unsafe.SliceData(t))
	for pos := uint64(tag>>(s.ix.shift&31)) & mask; ; pos = (pos + 1) & mask {
		e := *(*uint64)(unsafe.Add(tp, pos*8))
		if e == 0 {
			s.stats.Misses++
			return dst, false
		}
		if uint32(e>>32) != tag {
			continue
		}
		sl := s.slot(uint32(e))
		if int(sl.keyLen) != n {
			continue
		}
		// A slot this path does not serve sends the request the general
		// way as soon as its tag and length match, before its key is
		// compared: getSlow looks again, and rarely for another key.
		// One comparison for the TTL bit and the tail's length of 1 to 16
		// (an encoded length of 7 to 22: with ttlBit set the masked meta is
		// far above), one for the tag (tagRaw or tagMod, 0 or 2).
		meta := sl.meta
		enc := int(meta & encMask)
		tl := enc - inlineLen // the value's tail, after the key
		l := len(dst)
		if meta&(ttlBit|encMask)-(inlineLen+1) > 16-1 || sl.inl[0]&^tagMod != 0 || cap(dst)-l < enc-1 {
			return s.getSlow(dst, key)
		}
		// The block, [id][key][tail] with no TTL, checked once for both.
		bp := s.ar.At(sl.ref, idLen+n+tl) // idLen+n+tl bytes
		if word(bp, idLen) != k0 || word(bp, idLen+n-8) != k1 {
			continue
		}
		s.stats.Hits++
		// touch's LRU case.
		sl.atime ^= (sl.atime ^ s.lru) & s.touchMask
		if meta>>clockShift != clockMax && !s.noTouch {
			sl.meta = meta | clockMax<<clockShift
		}
		// appendValue's usual case: the slot's inlineLen-1 bytes, then
		// the tail (copyShort's moves) from bp+idLen+n into the room
		// checked above.
		dst = dst[:l+enc-1]
		dp := unsafe.Add(unsafe.Pointer(unsafe.SliceData(dst)), l)
		*(*[inlineLen - 1]byte)(dp) = [inlineLen - 1]byte(sl.inl[1:])
		dp, src := unsafe.Add(dp, inlineLen-1), unsafe.Add(bp, idLen+n)
		switch {
		case tl >= 8:
			setWord(dp, 0, word(src, 0))
			setWord(dp, tl-8, word(src, tl-8))
		case tl >= 4:
			*(*[4]byte)(dp) = *(*[4]byte)(src)
			*(*[4]byte)(unsafe.Add(dp, tl-4)) = *(*[4]byte)(unsafe.Add(src, tl-4))
		default:
			for i := range tl {
				*(*byte)(unsafe.Add(dp, i)) = *(*byte)(unsafe.Add(src, i))
			}
		}
		return dst, true
	}
}

// word returns the little-endian word at p+off, which the caller has
// checked lies within one slice (Get).
func word(p unsafe.Pointer, off int) uint64 {
	return binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(p, off))[:])
}

// setWord stores w, little-endian, at p+off, which the caller has checked
// lies within one slice (Get).
func setWord(p unsafe.Pointer, off int, w uint64) {
	binary.LittleEndian.PutUint64((*[8]byte)(unsafe.Add(p, off))[:], w)
}

// getSlow is Get's general case.
func (s *Store) getSlow(dst, key []byte) (val []byte, found bool) {
	s.step()
	_, sl := s.lookup(key)
	if sl == nil || isColl(sl) {
		s.stats.Misses++
		return dst, false
	}
	s.stats.Hits++
	s.touch(sl)
	return s.appendValue(dst, sl), true
}

// StrLen returns the length of key's value, 0 when the key does not exist.
func (s *Store) StrLen(key []byte) int {
	s.owner.check()
	_, sl := s.lookup(key)
	if sl == nil || isColl(sl) {
		return 0
	}
	s.touch(sl)
	if sl.inl[0] == tagInt {
		var b [24]byte
		return len(s.appendValue(b[:0], sl))
	}
	return sl.encLen() - 1
}

func (s *Store) checkKey(key []byte) error {
	if len(key) > s.o.MaxKeyLen {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrKeyTooLong, len(key), s.o.MaxKeyLen)
	}
	return nil
}

func (s *Store) checkValue(val []byte) error {
	if len(val) > s.o.MaxValueLen {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrValueTooLong, len(val), s.o.MaxValueLen)
	}
	return nil
}

// encoded is a value ready to store: a tag byte, then the body (raw for strings,
// num[:n] for integers; kept apart so an encoded value never points into itself and
// stays on the stack).
type encoded struct {
	tag byte
	n   int // body length for integers
	raw []byte
	num [8]byte
}

func (e *encoded) body() []byte {
	if e.tag == tagInt || e.tag >= tagHash {
		return e.num[:e.n]
	}
	return e.raw
}

func (e *encoded) len() int {
	if e.tag == tagInt || e.tag >= tagHash {
		return 1 + e.n
	}
	return 1 + len(e.raw)
}

// set encodes val the way k says.
func (e *encoded) set(val []byte, k ValueKind) {
	if k == AsSet { // SET's path first
		// Only a value starting as a canonical integer can be one: a
		// digit 1-9 or '-', or the lone "0".
		if len(val) == 0 || !(val[0]-'1' < 9 || val[0] == '-' || (val[0] == '0' && len(val) == 1)) {
			e.tag, e.raw = tagRaw, val
			return
		}
		if n, ok := parseCanonicalInt(val); ok {
			e.setInt(n)
			return
		}
		e.tag, e.raw = tagRaw, val
		return
	}
	e.tag, e.raw = tagRaw, val
	if k == AsBuilt {
		e.tag = tagMod
	}
}

func (e *encoded) setInt(n int64) {
	e.tag = tagInt
	e.n = encodeInt(&e.num, n)
}

// Set stores val under key as modified by o. With o.Get the old value (if any) is
// appended to dst and returned as old; hadOld reports whether the key existed.
// applied reports whether the write happened (NX/XX may prevent it).
func (s *Store) Set(dst, key, val []byte, o SetOptions) (old []byte, hadOld, applied bool, err error) {
	s.owner.check()
	if err := s.checkKey(key); err != nil {
		return dst, false, false, err
	}
	if err := s.checkValue(val); err != nil {
		return dst, false, false, err
	}
	s.step()
	var ev encoded
	ev.set(val, o.Kind)
	old = dst
	evicted := false
	for attempt := 0; ; attempt++ {
		h := s.hash(key)
		id, inOld, pos := s.find(key, h)
		var sl *slot
		var now int64
		if id != 0 {
			sl = s.slot(id)
			if sl.hasTTL() {
				now = s.expiryNow()
				if s.expiryOf(sl) <= now {
					s.expired(sl)
					s.removeAt(id, inOld, pos)
					s.stats.Expired++
					id, sl = 0, nil
				}
			}
		}
		if attempt == 0 && o.Get && sl != nil {
			if isColl(sl) {
				return dst, true, false, ErrWrongType
			}
			old = s.appendValue(dst, sl)
		}
		if (o.NX && sl != nil) || (o.XX && sl == nil) {
			if sl != nil { // Redis looked the key up to refuse NX: an access
				s.touch(sl)
			}
			return old, sl != nil, false, nil
		}
		exp := o.ExpireAt
		if exp == 0 && o.KeepTTL && sl != nil {
			exp = s.expiryOf(sl)
		}
		if exp != 0 {
			if now == 0 {
				now = s.expiryNow()
			}
			if exp <= now {
				if sl != nil {
					s.removeAt(id, inOld, pos)
				}
				return old, sl != nil, true, nil
			}
		}
		if grow := s.overCap(sl, len(key), ev.len(), exp != 0); grow > 0 && !evicted {
			if err := s.makeRoom(grow, id); err != nil {
				return old, sl != nil, false, err
			}
			evicted = true // once: a write that still does not fit proceeds (see makeRoom)
			continue       // eviction may have moved index entries: look again
		}
		if sl != nil && isColl(sl) { // a string replaces the collection
			s.removeAt(id, inOld, pos)
			if err := s.insert(key, h, &ev, exp); err != nil {
				return old, true, false, err
			}
			return old, true, true, nil
		}
		if sl != nil {
			if err := s.rewrite(id, sl, &ev, exp); err != nil {
				return old, true, false, err
			}
			s.touch(sl)
			return old, true, true, nil
		}
		if err := s.insert(key, h, &ev, exp); err != nil {
			return old, false, false, err
		}
		return old, false, true, nil
	}
}

// Put stores val under key: Set with no options (SET key value).
//
// Its usual case, a new value for an existing key of 8 to 16 bytes with no
// expiry and a string value of the same length, 6 to 21 bytes, that
// cannot be an integer (its first byte is no digit 1-9 nor '-'), in a
// store with an LRU policy or none, no memory cap, no index resize and no
// snapshot's cut under way, is written here in place with no call, as
// Get reads (word, setWord inside one bounds-checked slice of the key's
// block). Anything else goes to putSlow. TestPutFastMatchesGeneral holds
// the two to the same store.
func (s *Store) Put(key, val []byte) error {
	s.owner.check()
	n, vl := len(key), len(val)
	tl := vl - (inlineLen - 1) // the value's tail, after the key
	if n < 8 || n > shortKey || tl <= 0 || tl > 16 || s.ix.old != nil || s.o.MaxMemory != 0 || s.lfu || s.cut != nil ||
		n > s.o.MaxKeyLen || vl > s.o.MaxValueLen || val[0]-'1' < 9 || val[0] == '-' {
		return s.putSlow(key, val)
	}
	kp := unsafe.Pointer(unsafe.SliceData(key))
	k0, k1 := word(kp, 0), word(kp, n-8)
	tag := tagOf(s.hk.mix(k0, k1, n))
	t := s.ix.t
	mask := uint64(len(t) - 1)
	for pos := uint64(tag >> s.ix.shift); ; pos = (pos + 1) & mask {
		e := t[pos&mask]
		if e == 0 {
			return s.putSlow(key, val) // a new key
		}
		if uint32(e>>32) != tag {
			continue
		}
		sl := s.slot(uint32(e))
		if int(sl.keyLen) != n {
			continue
		}
		// As Get: a slot this path does not rewrite sends the request the
		// general way as soon as its tag and length match.
		meta := sl.meta
		if meta&ttlBit != 0 || sl.inl[0] > tagMod || sl.inl[0] == tagInt || int(meta&encMask) != 1+vl {
			return s.putSlow(key, val)
		}
		// The block, [id][key][tail] with no TTL, sliced once for both.
		bp := unsafe.Pointer(unsafe.SliceData(s.ar.Bytes(sl.ref, idLen+n+tl))) // idLen+n+tl bytes
		if word(bp, idLen) != k0 || word(bp, idLen+n-8) != k1 {
			continue
		}
		// rewrite's in-place case with writeValue's moves (the cut
		// is nil: beforeChange has nothing to keep), then touch's LRU
		// case.
		s.mods++
		vp := unsafe.Pointer(unsafe.SliceData(val))
		sl.inl[0] = tagRaw
		*(*[inlineLen - 1]byte)(sl.inl[1:]) = *(*[inlineLen - 1]byte)(vp)
		dp, src := unsafe.Add(bp, idLen+n), unsafe.Add(vp, inlineLen-1)
		switch {
		case tl >= 8:
			setWord(dp, 0, word(src, 0))
			setWord(dp, tl-8, word(src, tl-8))
		case tl >= 4:
			*(*[4]byte)(dp) = *(*[4]byte)(src)
			*(*[4]byte)(unsafe.Add(dp, tl-4)) = *(*[4]byte)(unsafe.Add(src, tl-4))
		default:
			for i := range tl {
				*(*byte)(unsafe.Add(dp, i)) = *(*byte)(unsafe.Add(src, i))
			}
		}
		sl.atime ^= (sl.atime ^ s.lru) & s.touchMask
		if meta>>clockShift != clockMax && !s.noTouch {
			sl.meta = meta | clockMax<<clockShift
		}
		return nil
	}
}

// putSlow is Put's general case: the common case of an existing short key
// with no expiry, in a store with no memory cap and no index resize under
// way, taken without Set's general loop and with one lookup; everything
// else goes through Set, unchanged.
func (s *Store) putSlow(key, val []byte) error {
	if len(key) > shortKey || s.ix.old != nil || s.o.MaxMemory != 0 ||
		len(key) > s.o.MaxKeyLen || len(val) > s.o.MaxValueLen {
		_, _, _, err := s.Set(nil, key, val, SetOptions{})
		return err
	}
	var ev encoded
	ev.set(val, AsSet)
	h := s.hk.short(key)
	id, _, sl := s.probeShort(s.ix.t, s.ix.shift, tagOf(h), key)
	switch {
	case sl == nil: // new: no cap, so nothing to evict (Set's overCap is 0)
		return s.insert(key, h, &ev, 0)
	case sl.hasTTL() || isColl(sl):
		_, _, _, err := s.Set(nil, key, val, SetOptions{})
		return err
	case ev.len() == sl.encLen(): // the same block length: rewrite's in-place case, directly
		s.beforeChange(id)
		s.mods++
		writeValue(sl, s.ar.Bytes(sl.ref, blockLen(int(sl.keyLen), sl.encLen(), false)), &ev)
		s.touch(sl)
		return nil
	}
	if err := s.rewrite(id, sl, &ev, 0); err != nil {
		return err
	}
	s.touch(sl)
	return nil
}

// writeValue stores ev's inline part in sl and its tail at the end of block b.
// A value longer than the slot's part (the usual SET) fills the slot with a
// fixed-size move rather than a memmove call.
func writeValue(sl *slot, b []byte, ev *encoded) {
	n := ev.len()
	body := ev.body()
	if n > inlineLen {
		sl.inl[0] = ev.tag
		*(*[inlineLen - 1]byte)(sl.inl[1:]) = [inlineLen - 1]byte(body)
		if t := body[inlineLen-1:]; len(t) <= 16 {
			copyShort(b[len(b)-len(t):], t)
		} else {
			copy(b[len(b)-len(t):], t)
		}
	} else {
		sl.inl = [inlineLen]byte{ev.tag}
		copy(sl.inl[1:], body)
	}
	sl.meta = sl.meta&^encMask | uint32(n)
}

// rewrite replaces the value and expiry of an existing key, in place when the new
// block has the old block's size class.
func (s *Store) rewrite(id uint32, sl *slot, ev *encoded, exp int64) error {
	s.beforeChange(id)
	s.mods++
	oldTTL := sl.hasTTL()
	newTTL := exp != 0
	kf := int(sl.keyLen)
	if sl.keyLen == longKey {
		kf = keyField(s.keyLenOf(sl))
	}
	nl := blockLen(0, ev.len(), newTTL) + kf
	if c := s.ar.Cap(sl.ref); arena.BlockSize(nl) == c {
		full := s.ar.Bytes(sl.ref, c)
		b := full[:nl]
		if oldTTL != newTTL {
			from, to := idLen, idLen+expLen
			if oldTTL {
				from, to = to, from
			}
			copy(full[to:to+kf], full[from:from+kf])
		}
		s.setTTL(sl, b, exp)
		writeValue(sl, b, ev)
		return nil
	}
	r, err := s.ar.Alloc(nl)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrOOM, err)
	}
	b := s.ar.Bytes(r, nl)
	binary.LittleEndian.PutUint32(b, id)
	newOff := idLen
	if newTTL {
		newOff += expLen
	}
	putKey(b[newOff:], s.keyOf(sl))
	s.ar.Free(sl.ref)
	sl.ref = r
	s.setTTL(sl, b, exp)
	writeValue(sl, b, ev)
	return nil
}

// setTTL records exp (0 = none) in sl and block b, whose key is already in place for
// the new layout.
func (s *Store) setTTL(sl *slot, b []byte, exp int64) {
	if exp != 0 {
		if !sl.hasTTL() {
			s.ttlKeys++
		}
		sl.meta |= ttlBit
		binary.LittleEndian.PutUint64(b[idLen:], uint64(exp))
		return
	}
	if sl.hasTTL() {
		s.ttlKeys--
	}
	sl.meta &^= ttlBit
}

// insert adds a key known to be absent.
func (s *Store) insert(key []byte, h uint64, ev *encoded, exp int64) error {
	s.mods++
	if s.ix.needsGrow() && (s.ix.mustGrow() || s.o.MaxMemory == 0 || s.totalUsed()+int64(len(s.ix.t))*16 <= s.o.MaxMemory) {
		if err := s.ix.grow(); err != nil {
			return err
		}
	}
	nl := blockLen(len(key), ev.len(), exp != 0)
	r, err := s.ar.Alloc(nl)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrOOM, err)
	}
	id, err := s.newSlot()
	if err != nil {
		s.ar.Free(r)
		return err
	}
	s.born(id)
	sl := s.slot(id)
	*sl = slot{ref: r, keyLen: slotKeyLen(len(key)), meta: clockMax << clockShift, atime: s.newAtime()}
	if s.lfuCmd { // a new key's initial count is its command's access (lfu.go)
		s.lfuMark(sl)
	}
	b := s.ar.Bytes(r, nl)
	binary.LittleEndian.PutUint32(b, id)
	off := idLen
	if exp != 0 {
		off += expLen
	}
	putKey(b[off:], key)
	s.setTTL(sl, b, exp)
	writeValue(sl, b, ev)
	s.ix.insert(uint64(tagOf(h))<<32 | uint64(id))
	s.liveSlots++
	return nil
}

func (s *Store) newSlot() (uint32, error) {
	if id := s.freeSlot; id != 0 {
		s.freeSlot = uint32(s.slot(id).ref)
		return id, nil
	}
	id := s.nextSlot
	if id >= ownerBit { // ids with ownerBit set name collection blocks
		return 0, fmt.Errorf("%w: too many keys", ErrOOM)
	}
	if id == 0 {
		return 0, fmt.Errorf("%w: too many keys", ErrOOM)
	}
	if int(id>>slotPageBits) == len(s.slots) {
		s.slots = append(s.slots, s.newSlotPage())
	}
	s.nextSlot++
	return id, nil
}

// Slot pages: the first heapSlotPages come from the Go heap; later ones are cut from
// off-heap regions of slotRegionSize bytes (huge pages where available).
const (
	heapSlotPages  = 32
	slotRegionSize = arena.OffHeapChunk
)

func (s *Store) newSlotPage() *[slotPageLen]slot {
	if len(s.slots) < heapSlotPages {
		return new([slotPageLen]slot)
	}
	const pageBytes = slotPageLen * slotSize
	if len(s.slotRegion) < pageBytes {
		s.slotRegion = s.mem.Alloc(slotRegionSize)
	}
	// Off-heap memory private to the owning goroutine, holding only integers; it is
	// unmapped by reset, after every slice into it has been dropped.
	p := (*[slotPageLen]slot)(unsafe.Pointer(unsafe.SliceData(s.slotRegion)))
	s.slotRegion = s.slotRegion[pageBytes:]
	return p
}

// removeAt deletes the key in slot id whose index entry is at pos (in the old table
// when inOld).
func (s *Store) removeAt(id uint32, inOld bool, pos uint64) {
	s.beforeChange(id)
	s.mods++
	s.ix.deleteEntry(inOld, pos)
	sl := s.slot(id)
	if sl.hasTTL() {
		s.ttlKeys--
	}
	if isColl(sl) {
		s.dropColl(collIndex(sl))
	}
	s.ar.Free(sl.ref)
	*sl = slot{ref: arena.Ref(s.freeSlot)}
	s.freeSlot = id
	s.liveSlots--
}

// OnRemove sets f to be told the key of every entry the store removes on
// its own, just before it goes: a key found expired (on access, or by the
// active sweep; evicted false) and a key evicted for memory (evicted
// true). A replication primary turns them into DEL commands for its
// replicas. The key is valid during the call only. nil: no callback (the
// default), at the cost of one test per such removal.
func (s *Store) OnRemove(f func(key []byte, evicted bool)) { s.removed = f }

// expired tells OnRemove's callback that sl's key expired.
func (s *Store) expired(sl *slot) {
	if s.removed != nil {
		s.removed(s.keyOf(sl), false)
	}
}

// removeID deletes the key in slot id, finding its index entry by its key.
func (s *Store) removeID(id uint32) {
	key := s.keyOf(s.slot(id))
	h := s.hash(key)
	fid, inOld, pos := s.find(key, h)
	if fid != id {
		panic(fmt.Sprintf("store: slot %d not found in the index (found %d)", id, fid))
	}
	s.removeAt(id, inOld, pos)
}

// Del removes key and reports whether it existed.
func (s *Store) Del(key []byte) bool {
	s.owner.check()
	s.step()
	id, inOld, pos := s.find(key, s.hash(key))
	if id == 0 {
		return false
	}
	sl := s.slot(id)
	live := !sl.hasTTL() || s.expiryOf(sl) > s.expiryNow()
	s.removeAt(id, inOld, pos)
	if !live {
		s.stats.Expired++
	}
	return live
}

// Exists reports whether key exists.
func (s *Store) Exists(key []byte) bool {
	s.owner.check()
	_, sl := s.lookup(key)
	return sl != nil
}

// IncrBy adds delta to the integer stored at key (a missing key counts as 0), keeps its
// expiry and returns the new value.
func (s *Store) IncrBy(key []byte, delta int64) (int64, error) {
	s.owner.check()
	if err := s.checkKey(key); err != nil {
		return 0, err
	}
	s.step()
	evicted := false
	for {
		h := s.hash(key)
		id, inOld, pos := s.find(key, h)
		var sl *slot
		if id != 0 {
			sl = s.slot(id)
			if sl.hasTTL() && s.expiryOf(sl) <= s.expiryNow() {
				s.expired(sl)
				s.removeAt(id, inOld, pos)
				s.stats.Expired++
				id, sl = 0, nil
			}
		}
		var cur int64
		if sl != nil && isColl(sl) {
			return 0, ErrWrongType
		}
		if sl != nil {
			var ok bool
			if cur, ok = s.intValue(sl); !ok {
				return 0, ErrNotInteger
			}
		}
		if (delta > 0 && cur > maxInt64-delta) || (delta < 0 && cur < minInt64-delta) {
			return 0, ErrOverflow
		}
		var ev encoded
		ev.setInt(cur + delta)
		exp := int64(0)
		if sl != nil {
			exp = s.expiryOf(sl)
		}
		if grow := s.overCap(sl, len(key), ev.len(), exp != 0); grow > 0 && !evicted {
			if err := s.makeRoom(grow, id); err != nil {
				return 0, err
			}
			evicted = true
			continue
		}
		if sl != nil {
			if err := s.rewrite(id, sl, &ev, exp); err != nil {
				return 0, err
			}
			s.touch(sl)
		} else if err := s.insert(key, h, &ev, 0); err != nil {
			return 0, err
		}
		return cur + delta, nil
	}
}

const (
	maxInt64 = 1<<63 - 1
	minInt64 = -1 << 63
)

// slotInt decodes the integer of an int-tagged slot whose encoded value is
// n bytes long (the tag, then the integer's bytes, inline and in the tail).
func (s *Store) slotInt(sl *slot, n int) int64 {
	var b [8]byte
	copy(b[:], sl.inl[1:min(n, inlineLen)])
	if n > inlineLen {
		copy(b[inlineLen-1:], s.tail(sl))
	}
	return decodeInt(b[:n-1])
}

// intValue returns the integer a value holds, if it is one.
func (s *Store) intValue(sl *slot) (int64, bool) {
	n := sl.encLen()
	if sl.inl[0] == tagInt {
		return s.slotInt(sl, n), true
	}
	if n-1 > 20 {
		return 0, false
	}
	var b [20]byte
	return parseCanonicalInt(s.appendValue(b[:0], sl))
}

// Append appends val to key's value (creating the key when absent), keeps its expiry,
// and returns the new length.
func (s *Store) Append(key, val []byte) (int, error) {
	s.owner.check()
	if err := s.checkKey(key); err != nil {
		return 0, err
	}
	if s.TypeOf(key) > TypeString {
		return 0, ErrWrongType
	}
	cur, found := s.Read(s.scratch[:0], key)
	if len(cur)+len(val) > s.o.MaxValueLen {
		return 0, fmt.Errorf("%w: %d bytes, limit %d", ErrValueTooLong, len(cur)+len(val), s.o.MaxValueLen)
	}
	cur = append(cur, val...)
	s.scratch = cur[:0]
	// Creating the key, APPEND stores its argument as SET would (Redis
	// adds the argument object, tryObjectEncoding'd: int, embstr or raw);
	// growing one, it leaves a built string (raw).
	kind := AsBuilt
	if !found {
		kind = AsSet
	}
	_, _, _, err := s.Set(nil, key, cur, SetOptions{KeepTTL: found, Kind: kind})
	if err != nil {
		return 0, err
	}
	return len(cur), nil
}

// Len returns the number of keys, counting keys whose TTL passed but which have not
// been reclaimed yet (as Redis' DBSIZE does).
func (s *Store) Len() int { return int(s.liveSlots) }

// Flush removes every key. Its memory is given back at once: mapped regions are
// unmapped, Go heap chunks left to the collector.
func (s *Store) Flush() {
	s.owner.check()
	s.reset()
}

// Scan calls fn with up to count live keys, starting at cursor (0 to begin), and
// returns the cursor to continue from (0 when the scan is complete). A key present
// for the whole scan is reported exactly once; fn must not modify the store and must
// not keep the key slice.
func (s *Store) Scan(cursor uint64, count int, fn func(key []byte)) uint64 {
	return s.ScanTyped(cursor, count, func(k []byte, _ Type) { fn(k) })
}

// ScanTyped is Scan, with each key's type.
func (s *Store) ScanTyped(cursor uint64, count int, fn func(key []byte, t Type)) uint64 {
	s.owner.check()
	if cursor == 0 {
		cursor = 1
	}
	now := s.expiryNow()
	id := uint32(cursor)
	if cursor >= uint64(s.nextSlot) {
		return 0
	}
	budget := math.MaxInt // slots to look at: 4 per key asked for, and 16 more
	if count < (math.MaxInt-16)/4 {
		budget = count*4 + 16
	}
	for visited := 0; id < s.nextSlot && visited < budget; id++ {
		visited++
		sl := s.slot(id)
		if !sl.used() || (sl.hasTTL() && s.expiryOf(sl) <= now) {
			continue
		}
		fn(s.keyOf(sl), typeOfTag(sl.inl[0]))
		if count--; count == 0 {
			id++
			break
		}
	}
	if id >= s.nextSlot {
		return 0
	}
	return uint64(id)
}

// relocate patches the slot whose block the arena moved.
func (s *Store) relocate(old, nw arena.Ref) {
	id := binary.LittleEndian.Uint32(s.ar.Bytes(nw, idLen))
	if id&ownerBit != 0 {
		s.relocateColl(id&^ownerBit, old, nw)
		return
	}
	sl := s.slot(id)
	if sl.ref != old {
		panic(fmt.Sprintf("store: arena moved block %#x owned by slot %d, which holds %#x", old, id, sl.ref))
	}
	sl.ref = nw
}

// Per-operation background work: each write migrates this many index buckets while a
// resize runs (a resize needs at least 4/3 per insert to finish in time).
const stepMigrate = 64

func (s *Store) step() {
	if s.ix.old != nil {
		s.ix.migrate(stepMigrate)
	}
}

// Tick does up to about budget units of background work (one unit: one index bucket
// migrated or one slot examined; an eviction costs 4, an arena move 8) and returns the
// units used: finishing an index resize, active expiry, evicting down to MaxMemory
// when above it, and arena compaction. Call it from the
// loop when idle or every few hundred operations; 0 means nothing was left to do.
func (s *Store) Tick(budget int) int {
	s.owner.check()
	work := 0
	if s.ix.old != nil {
		work += s.ix.migrate(budget / 2)
	}
	if s.ttlKeys > 0 && work < budget && !s.keepExpired && !s.noExpiry {
		work += s.expireSweep(max((budget-work)/2, 1))
	}
	if len(s.lazy) > 0 && work < budget {
		work += s.lazyFree(max((budget-work)/2, 1))
	}
	if s.o.MaxMemory > 0 && s.o.Eviction != NoEviction && work < budget {
		work += 4 * s.evictOverCap(max((budget-work)/4, 1))
	}
	if work < budget {
		work += 8 * s.ar.Compact(max((budget-work)/8, 1), s.relo)
	}
	return work
}

// Stats overwrites *st with the store's counters.
func (s *Store) Stats(st *Stats) {
	s.owner.check()
	*st = s.stats
	st.Keys = s.liveSlots
	st.KeysWithTTL = s.ttlKeys
	st.UsedMemory = s.used()
	st.MaxMemory = s.o.MaxMemory
	st.IndexBuckets = int64(len(s.ix.t) + len(s.ix.old))
	st.IndexResizing = s.ix.old != nil
	st.SlotBytes = int64(len(s.slots)) * slotPageLen * slotSize
	var as arena.Stats
	s.ar.Stats(&as)
	st.ArenaSize, st.ArenaLive, st.ArenaDead, st.ArenaFree = as.Size, as.Live, as.Dead, as.Free
	st.ArenaMapped = as.Mapped
	st.ArenaMoves, st.ArenaPagesFreed = as.Moves, as.PagesReleased
}

// Mods counts the changes the store has made to its keys: every insert,
// overwrite, expiry change, rename, deletion (expiry and eviction
// included) and flush adds at least one. A caller compares two readings to
// learn whether anything changed in between (WATCH's check of a write).
func (s *Store) Mods() uint64 { return s.mods }

// ResetStats zeroes the counters Stats reports (hits, misses, expired,
// evicted, refused writes), as CONFIG RESETSTAT asks.
func (s *Store) ResetStats() {
	s.owner.check()
	s.stats = Stats{}
}

// SetNoTouch makes reads (and writes) leave keys' LRU recency as it is
// until SetNoTouch(false), for a client that asked for CLIENT NO-TOUCH.
func (s *Store) SetNoTouch(on bool) {
	s.noTouch = on
	s.touchMask = ^uint32(0)
	if on {
		s.touchMask = 0
	}
}

// SetKeepExpired puts the store in a replica's expiry mode (on) or back in
// a primary's (off). A replica never deletes a key because its time has
// passed: its primary does, and sends the DEL. So with on, Tick runs no
// active expiry, and the reads (lookup, RANDOMKEY) report a key whose time
// has passed as missing but leave it in place. Writes must not run with on:
// a write that found such a key missing would insert a second copy of it.
// The engine turns it off around a writable replica's writes; the
// primary's stream applies under SetNoExpiry, which makes it moot.
func (s *Store) SetKeepExpired(on bool) { s.keepExpired = on }

// KeepExpired reports the mode SetKeepExpired set.
func (s *Store) KeepExpired() bool { return s.keepExpired }

// SetNoExpiry puts the store in the mode a replica applies its primary's
// stream in (on): no key's time has passed. A replica applying the stream
// late, its clock already past a key's absolute expiry (SET PXAT,
// PEXPIREAT, RESTORE ABSTTL), must hold what the primary holds: lookups
// and writes see such a key as live (INCR goes on counting from its
// value), an expiry time already past is set rather than deleting the key,
// and Tick runs no active expiry. The key goes when the primary's DEL
// arrives; reads in SetKeepExpired mode answer it as missing meanwhile.
// This is Redis's expireIfNeeded for the master client of a replica.
func (s *Store) SetNoExpiry(on bool) { s.noExpiry = on }

// NoExpiry reports the mode SetNoExpiry set.
func (s *Store) NoExpiry() bool { return s.noExpiry }

// expiryNow is the time keys' expiries are compared with: the clock's, or
// under SetNoExpiry a time before every expiry.
func (s *Store) expiryNow() int64 {
	if s.noExpiry {
		return math.MinInt64
	}
	return s.o.Clock.NowMillis()
}
