package store

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/goblin-kv/goblin/arena"
	"github.com/goblin-kv/goblin/store/collection"
)

// Collections: a key whose value is a hash, set or list holds, in its slot,
// a tag byte naming the type and the 4-byte index of a collection record
// (5 encoded bytes: wholly inline, no value tail). The record, in the
// store's pointer-free colls table, holds the structure: a compact blob
// (listpack or intset) in one arena block, or a collection.Hash or
// collection.List built from arena blocks.
//
// Every arena block of a collection starts with a 4-byte owner id: the
// record's index with ownerBit set. A key's own block starts with its slot
// id, always below ownerBit, so relocate tells the two apart by that bit.
// The record, not the slot, owns the blocks, so a collection deleted by DEL,
// expiry or eviction keeps its record while its blocks are freed a bounded
// number per Tick (lazy free), whatever becomes of the slot meanwhile.

// Collection value tags (after the string tags tagRaw, tagInt, tagMod).
const (
	tagHash byte = 3
	tagSet  byte = 4
	tagList byte = 5
	tagZSet byte = 6
)

// Collection encodings, as OBJECT ENCODING names them.
const (
	encListpack  uint8 = iota + 1 // hash: one listpack of fields and values
	encIntset                     // set: one intset
	encHashtable                  // hash or set: a collection.Hash (a set's values are empty)
	encQuicklist                  // list: a collection.List
	encSkiplist                   // sorted set: a collection.Hash and a collection.List of zkeys
)

const (
	ownerBit  = 1 << 31
	collValue = 5 // tag + record index
	blobHead  = 4 // owner id before a blob's bytes
	// freeNow is the size up to which a deleted collection is freed at once;
	// a larger one is queued and freed lazyFreeStep blocks per Tick unit.
	freeNow = 64
)

// ErrWrongType: the command expects a different type of value than the key holds.
var ErrWrongType = errors.New("store: operation against a key holding the wrong kind of value")

// coll is one collection's record. It holds no Go pointers.
type coll struct {
	kind uint8 // tagHash, tagSet or tagList; 0 for a free record
	enc  uint8
	blob arena.Ref // encListpack, encIntset: [owner:4][blob]
	// link is, while the record is free, the next free record + 1 (the
	// free list); while it is live, its owner id (its index | ownerBit),
	// which takeBig gives its structures.
	link uint32
	// big is the record's collBig + 1 (0: none), for the encodings built
	// from arena blocks (hashtable, quicklist, skiplist): a compact
	// collection, the common case of millions of small hashes, pays 16
	// bytes of record instead of the 112 it did with the structures inline.
	big uint32
}

// collBig is a large collection's structures: the hash of a hashtable
// hash or set or of a sorted set's index, the list of a quicklist or of a
// sorted set's order. It holds no Go pointers.
type collBig struct {
	h    collection.Hash
	l    collection.List
	next uint32 // free list: the next free collBig + 1
}

// bigPageLen is how many collBigs a page of s.bigs holds. Pages never
// move, so a *collBig stays valid while others are taken (a command may
// hold one collection's structures while it creates another's).
const bigPageLen = 256

// bigOf returns c's structures, taking a collBig for it on first use; c
// must point into s.colls. Its Hash and List carry c's owner id (a sorted
// set sets its index's own).
func (s *Store) bigOf(c *coll) *collBig {
	if c.big == 0 {
		s.takeBig(c)
	}
	i := c.big - 1
	return &s.bigs[i/bigPageLen][i%bigPageLen]
}

// ch and cl are c's hash and list (bigOf).
func (s *Store) ch(c *coll) *collection.Hash { return &s.bigOf(c).h }
func (s *Store) cl(c *coll) *collection.List { return &s.bigOf(c).l }

func (s *Store) takeBig(c *coll) {
	owner := c.link // live: the owner id its blocks carry
	var i uint32
	if s.freeBig != 0 {
		i = s.freeBig - 1
		s.freeBig = s.bigs[i/bigPageLen][i%bigPageLen].next
	} else {
		i = s.nBigs
		if i%bigPageLen == 0 {
			s.bigs = append(s.bigs, make([]collBig, bigPageLen))
		}
		s.nBigs++
	}
	s.bigs[i/bigPageLen][i%bigPageLen] = collBig{h: collection.NewHash(owner), l: collection.NewList(owner)}
	s.liveBigs++
	c.big = i + 1
}

// releaseBig returns c's collBig, if it has one, to the free list.
func (s *Store) releaseBig(c *coll) {
	if c.big == 0 {
		return
	}
	i := c.big - 1
	s.bigs[i/bigPageLen][i%bigPageLen] = collBig{next: s.freeBig}
	s.freeBig = c.big
	s.liveBigs--
	c.big = 0
}

// Type is the type of a key's value, as TYPE names it.
type Type uint8

// The types.
const (
	TypeNone Type = iota
	TypeString
	TypeList
	TypeSet
	TypeHash
	TypeZSet
)

var typeNames = [...]string{"none", "string", "list", "set", "hash", "zset"}

func (t Type) String() string { return typeNames[t] }

func isColl(sl *slot) bool { return sl.inl[0] >= tagHash }

func typeOfTag(tag byte) Type {
	switch tag {
	case tagHash:
		return TypeHash
	case tagSet:
		return TypeSet
	case tagList:
		return TypeList
	case tagZSet:
		return TypeZSet
	}
	return TypeString
}

// TypeOf returns the type of key's value (TypeNone when it is missing).
func (s *Store) TypeOf(key []byte) Type {
	s.owner.check()
	_, sl := s.lookup(key)
	if sl == nil {
		return TypeNone
	}
	return typeOfTag(sl.inl[0])
}

// Collections returns how many keys hold a collection (lazily freed ones
// excluded): a caller can skip type checks while it is 0.
func (s *Store) Collections() int { return s.liveColls }

func collIndex(sl *slot) uint32 { return binary.LittleEndian.Uint32(sl.inl[1:5]) }

// collOf returns the record of a collection slot.
func (s *Store) collOf(sl *slot) *coll { return &s.colls[collIndex(sl)] }

// newColl takes a free record (growing the table when none is free) and
// returns its index.
func (s *Store) newColl(kind, enc uint8) (uint32, error) {
	var i uint32
	if s.freeColl != 0 {
		i = s.freeColl - 1
		s.freeColl = s.colls[i].link
	} else {
		if len(s.colls) >= zsetIndexBit-1 {
			return 0, fmt.Errorf("%w: too many collections", ErrOOM)
		}
		s.colls = append(s.colls, coll{})
		i = uint32(len(s.colls) - 1)
	}
	s.colls[i] = coll{kind: kind, enc: enc, link: i | ownerBit}
	s.liveColls++
	return i, nil
}

// releaseColl returns record i to the free list.
func (s *Store) releaseColl(i uint32) {
	s.releaseBig(&s.colls[i])
	s.colls[i] = coll{link: s.freeColl}
	s.freeColl = i + 1
}

// dropColl frees collection i, whose key is gone: at once when it is
// small, else by queueing it for Tick's lazy free.
func (s *Store) dropColl(i uint32) {
	s.liveColls--
	c := &s.colls[i]
	switch c.enc {
	case encListpack, encIntset:
		s.ar.Free(c.blob)
		s.releaseColl(i)
		return
	case encHashtable:
		if s.ch(c).Len() <= freeNow && s.ch(c).FreeStep(s.ar, 4*freeNow) {
			s.releaseColl(i)
			return
		}
	case encQuicklist:
		if s.cl(c).Len() <= freeNow && s.cl(c).FreeStep(s.ar, freeNow) {
			s.releaseColl(i)
			return
		}
	case encSkiplist:
		if s.ch(c).Len() <= freeNow && s.ch(c).FreeStep(s.ar, 4*freeNow) && s.cl(c).FreeStep(s.ar, freeNow) {
			s.releaseColl(i)
			return
		}
	}
	s.lazy = append(s.lazy, i)
}

// LazyFreeBlocks is how many arena blocks Tick frees per unit of its
// budget from collections deleted while large (DEL, UNLINK, expiry,
// eviction, overwrite): freeing a collection of millions of elements is
// spread over many loop turns, as Redis's lazyfree spreads it over a
// thread's time.
const LazyFreeBlocks = 16

// lazyFree frees up to budget blocks of queued collections and returns the
// units of work used (one per LazyFreeBlocks blocks, at least one).
func (s *Store) lazyFree(units int) int {
	budget := units * LazyFreeBlocks
	used := 0
	for len(s.lazy) > 0 && used < budget {
		i := s.lazy[0]
		c := &s.colls[i]
		step := min(budget-used, 1024)
		var done bool
		switch c.enc {
		case encHashtable:
			done = s.ch(c).FreeStep(s.ar, step)
		case encSkiplist:
			done = s.ch(c).FreeStep(s.ar, step) && s.cl(c).FreeStep(s.ar, step)
		default:
			done = s.cl(c).FreeStep(s.ar, step)
		}
		used += step
		if done {
			s.releaseColl(i)
			s.lazy = s.lazy[1:]
			if len(s.lazy) == 0 {
				s.lazy = s.lazy[:0:0]
			}
		}
	}
	return max(1, used/LazyFreeBlocks)
}

// LazyFreePending reports how many deleted collections still hold blocks.
func (s *Store) LazyFreePending() int { return len(s.lazy) }

// relocateColl patches collection i after Compact moved its block old to nw.
func (s *Store) relocateColl(i uint32, old, nw arena.Ref) {
	if int(i&^zsetIndexBit) >= len(s.colls) {
		panic(fmt.Sprintf("store: arena moved block %#x owned by collection %d of %d", old, i, len(s.colls)))
	}
	index := i&zsetIndexBit != 0 // a sorted set's hash block
	i &^= zsetIndexBit
	c := &s.colls[i]
	switch {
	case index:
		if c.enc != encSkiplist || !s.ch(c).Relocate(s.ar, old, nw) {
			panic(fmt.Sprintf("store: arena moved block %#x that sorted set %d's index does not hold", old, i))
		}
	case c.blob == old && (c.enc == encListpack || c.enc == encIntset):
		c.blob = nw
	case c.enc == encHashtable && s.ch(c).Relocate(s.ar, old, nw):
	case (c.enc == encQuicklist || c.enc == encSkiplist) && s.cl(c).Relocate(s.ar, old, nw):
	default:
		panic(fmt.Sprintf("store: arena moved block %#x that collection %d does not hold", old, i))
	}
}

// putCollValue fills ev with a collection value: tag and record index.
func putCollValue(ev *encoded, tag byte, i uint32) {
	ev.tag = tagInt // body kept in num, so the encoded value stays on the stack
	binary.LittleEndian.PutUint32(ev.num[:], i)
	ev.n = 4
	ev.tag = tag
}

// blob returns collection c's blob (a listpack or an intset) with its
// capacity reaching the end of its block, so edits that fit happen in place.
func (s *Store) blob(c *coll) []byte {
	b := s.ar.Bytes(c.blob, s.ar.Cap(c.blob))[blobHead:]
	n := blobLen(c.enc, b)
	return b[:n]
}

func blobLen(enc uint8, b []byte) int {
	if enc == encIntset {
		return 8 + int(binary.LittleEndian.Uint32(b))*int(binary.LittleEndian.Uint32(b[4:]))
	}
	return int(binary.LittleEndian.Uint32(b))
}

// reserveBlob makes c's blob able to grow by extra bytes in place, moving
// it to a bigger block (twice the size, so n appends cost O(n) copying)
// when it must, and returns it.
func (s *Store) reserveBlob(c *coll, owner uint32, extra int) ([]byte, error) {
	b := s.blob(c)
	if len(b)+extra <= cap(b) {
		return b, nil
	}
	need := blobHead + len(b) + extra
	r, err := s.ar.Alloc(max(need, min(2*(blobHead+len(b)), need+64<<10)))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOOM, err)
	}
	nb := s.ar.Bytes(r, s.ar.Cap(r))
	binary.LittleEndian.PutUint32(nb, owner)
	copy(nb[blobHead:], b)
	s.ar.Free(c.blob)
	c.blob = r
	return nb[blobHead : blobHead+len(b)], nil
}

// newBlob gives c a fresh blob block holding init, with room for extra more bytes.
func (s *Store) newBlob(c *coll, owner uint32, init []byte, extra int) error {
	r, err := s.ar.Alloc(blobHead + len(init) + extra)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrOOM, err)
	}
	b := s.ar.Bytes(r, blobHead+len(init))
	binary.LittleEndian.PutUint32(b, owner)
	copy(b[blobHead:], init)
	c.blob = r
	return nil
}

// sameStart panics unless an edit left the blob where it was: reserveBlob
// made room, so the listpack and intset edits must work in place.
func sameStart(a, b []byte) {
	if &a[0] != &b[0] {
		panic("store: collection blob edit did not happen in place")
	}
}

// collFor finds key's collection of type tag. With create, a missing key is
// made an empty collection of encoding enc; without it, a missing key
// returns a nil record and id 0. A key of another type is ErrWrongType.
func (s *Store) collFor(key []byte, tag byte, create bool, enc uint8) (id uint32, c *coll, err error) {
	id, sl := s.lookup(key)
	if sl != nil {
		if sl.inl[0] != tag {
			return 0, nil, ErrWrongType
		}
		s.touch(sl)
		// A running cut gets the collection as it is before the caller
		// (a read or a write: collFor does not know) can change it;
		// handing over an unchanged key early keeps the image exact.
		s.beforeChange(id)
		return id, s.collOf(sl), nil
	}
	if !create {
		return 0, nil, nil
	}
	if err := s.checkKey(key); err != nil {
		return 0, nil, err
	}
	if s.o.MaxMemory > 0 {
		if grow := s.growth(nil, len(key), collValue, false) + 64; s.totalUsed()+grow > s.o.MaxMemory {
			if err := s.makeRoom(grow, 0); err != nil {
				return 0, nil, err
			}
		}
	}
	i, err := s.newColl(tag, enc)
	if err != nil {
		return 0, nil, err
	}
	c = &s.colls[i]
	switch enc {
	case encListpack:
		var empty [7]byte
		err = s.newBlob(c, i|ownerBit, collection.NewListpack(empty[:0]), 64)
	case encIntset:
		var empty [8]byte
		err = s.newBlob(c, i|ownerBit, collection.NewIntset(empty[:0]), 16)
	}
	if err != nil {
		s.liveColls--
		s.releaseColl(i)
		return 0, nil, err
	}
	var ev encoded
	putCollValue(&ev, tag, i)
	h := s.hash(key)
	if err := s.insert(key, h, &ev, 0); err != nil {
		s.dropColl(i)
		return 0, nil, err
	}
	id, _, _ = s.find(key, h)
	return id, &s.colls[i], nil
}

// collRoom checks, under a memory cap, that a collection write of about
// grow bytes fits, evicting (never slot keep) to make room.
func (s *Store) collRoom(grow int, keep uint32) error {
	if s.o.MaxMemory == 0 || s.totalUsed()+int64(grow) <= s.o.MaxMemory {
		return nil
	}
	return s.makeRoom(int64(grow), keep)
}

// deleteIfEmpty removes key, whose collection c has just lost elements,
// when it has none left (Redis deletes an emptied collection's key).
func (s *Store) deleteIfEmpty(key []byte, c *coll) bool {
	if s.collLen(c) > 0 {
		return false
	}
	s.Del(key)
	return true
}

// collLen is a collection's number of elements.
func (s *Store) collLen(c *coll) int {
	switch c.enc {
	case encListpack:
		n := collection.Listpack(s.blob(c)).Len()
		if c.kind == tagHash || c.kind == tagZSet {
			n /= 2
		}
		return n
	case encIntset:
		return collection.Intset(s.blob(c)).Len()
	case encHashtable:
		return s.ch(c).Len()
	case encQuicklist, encSkiplist:
		return s.cl(c).Len()
	}
	return 0
}

// memSample is how many entries of a hash table and nodes of a list
// collBytes reads: exact below that, a mean over them above it. A
// million-element list has about 2,000 nodes; reading 1,024 costs tens
// of microseconds.
const memSample = 1024

// collBytes is the arena memory of collection c, as used memory counts
// it (the blocks at their size class): exact for a blob and for tables,
// sampled for hash entries and list nodes past memSample of them.
func (s *Store) collBytes(c *coll) int64 {
	switch c.enc {
	case encListpack, encIntset:
		return int64(s.ar.Cap(c.blob))
	case encHashtable:
		return s.ch(c).MemoryBytes(s.ar, memSample)
	case encQuicklist:
		return s.cl(c).MemoryBytes(s.ar, memSample)
	case encSkiplist:
		return s.ch(c).MemoryBytes(s.ar, memSample) + s.cl(c).MemoryBytes(s.ar, memSample)
	}
	return 0
}

// checkColls verifies every collection a slot names (its record, type and
// structure) and that records are named once; it is part of Check.
func (s *Store) checkColls(named map[uint32]bool) error {
	free := map[uint32]bool{}
	for i := s.freeColl; i != 0; i = s.colls[i-1].link {
		if free[i-1] || len(free) > len(s.colls) {
			return fmt.Errorf("store: collection free list is corrupt at %d", i-1)
		}
		free[i-1] = true
	}
	lazy := map[uint32]bool{}
	for _, i := range s.lazy {
		lazy[i] = true
	}
	if len(named) != s.liveColls {
		return fmt.Errorf("store: %d keys name collections, counter says %d", len(named), s.liveColls)
	}
	// Every collBig is held by exactly one record or is on the free list.
	bigHeld := map[uint32]bool{}
	for i := range s.colls {
		if b := s.colls[i].big; b != 0 {
			if bigHeld[b] || b > s.nBigs {
				return fmt.Errorf("store: collection %d holds collBig %d, held twice or past %d", i, b-1, s.nBigs)
			}
			bigHeld[b] = true
		}
	}
	freeBigs := 0
	for b := s.freeBig; b != 0; b = s.bigs[(b-1)/bigPageLen][(b-1)%bigPageLen].next {
		if bigHeld[b] || freeBigs > int(s.nBigs) {
			return fmt.Errorf("store: collBig free list is corrupt at %d", b-1)
		}
		freeBigs++
	}
	if len(bigHeld) != s.liveBigs || len(bigHeld)+freeBigs != int(s.nBigs) {
		return fmt.Errorf("store: %d collBigs held and %d free of %d, counter says %d live", len(bigHeld), freeBigs, s.nBigs, s.liveBigs)
	}
	for i := range s.colls {
		id := uint32(i)
		n := b2i(named[id]) + b2i(free[id]) + b2i(lazy[id])
		if n != 1 {
			return fmt.Errorf("store: collection %d is named %d times (key %v, free %v, lazy %v)", i, n, named[id], free[id], lazy[id])
		}
		c := &s.colls[i]
		if !named[id] {
			continue
		}
		if c.link != id|ownerBit {
			return fmt.Errorf("store: collection %d carries owner id %#x, want %#x", i, c.link, id|ownerBit)
		}
		var err error
		switch c.enc {
		case encListpack:
			err = s.ar.Live(c.blob, s.ar.Cap(c.blob))
			if err == nil {
				err = collection.ValidateListpack(s.blob(c), true, nil)
			}
			if err == nil && collection.Listpack(s.blob(c)).Len()%2 != 0 {
				err = errors.New("odd listpack in a hash or sorted set")
			}
			if err == nil && c.kind == tagZSet {
				err = s.checkZSetOrder(c)
			}
		case encIntset:
			err = s.ar.Live(c.blob, s.ar.Cap(c.blob))
			if err == nil && collection.Intset(s.blob(c)).Len() > 0 {
				err = collection.ValidateIntset(s.blob(c), true)
			}
		case encHashtable:
			err = s.ch(c).Check(s.ar)
		case encQuicklist:
			err = s.cl(c).Check(s.ar)
		case encSkiplist:
			if err = s.ch(c).Check(s.ar); err == nil {
				err = s.cl(c).Check(s.ar)
			}
			if err == nil && s.ch(c).Len() != s.cl(c).Len() {
				err = fmt.Errorf("index of %d members, order of %d", s.ch(c).Len(), s.cl(c).Len())
			}
			if err == nil {
				err = s.checkZSetOrder(c)
			}
		default:
			err = fmt.Errorf("unknown encoding %d", c.enc)
		}
		if err == nil && (c.enc == encListpack || c.enc == encIntset) && collection.OwnerOf(s.ar, c.blob) != id|ownerBit {
			err = fmt.Errorf("blob carries owner %#x", collection.OwnerOf(s.ar, c.blob))
		}
		if err == nil && s.collLen(c) == 0 {
			err = errors.New("empty collection kept under a key")
		}
		if err != nil {
			return fmt.Errorf("store: collection %d (%s): %w", i, typeOfTag(c.kind), err)
		}
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func wrapOOM(err error) error { return fmt.Errorf("%w: %w", ErrOOM, err) }
