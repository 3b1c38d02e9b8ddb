package store

import (
	"errors"

	"github.com/goblin-kv/goblin/rdb"
)

// A Cut is a point-in-time image of a store, read out in bounded steps
// while the store goes on changing: what snapshots (BGSAVE) are made of.
//
// The image is the keys the store held when the cut began, each with the
// value and expiry it had then. Step walks the slots in id order; every
// key the walk has not reached yet that a write is about to change
// (overwrite, expiry change, rename, deletion by command, expiry or
// eviction, flush) is handed to the cut's function first, with its value
// as it was (copy-on-write at entry level, no copy of the keyspace). A key
// created after the cut began is never handed over.
//
// The version state is one bit per slot id below the cut's limit (the
// slots that existed when it began), set once a key is handed over or a
// slot is taken by a new key: nextSlot/8 bytes, allocated when the cut
// begins and dropped when it ends; a store with no cut carries none, and
// each write checks one pointer.
//
// A Cut belongs to its store's goroutine, like the store.
type Cut struct {
	s     *Store
	fn    func(*Entry)
	limit uint32   // slot ids below this existed when the cut began
	next  uint32   // the walk's position: ids below it are done
	done  []uint64 // ids in [next, limit) already handed over or born after the start
	keys  int64    // keys and keys with an expiry when the cut began
	ttls  int64
	ent   Entry
	buf   []byte
}

// Entry is one key a Cut hands over. Its slices are valid only during the
// call.
type Entry struct {
	Key []byte
	// Type is the value's type; Value holds a string's bytes, Coll a
	// hash's, set's or list's items (as ExportCollection fills it).
	Type  Type
	Value []byte
	Coll  rdb.Value
	// ExpireAt is the key's expiry in unix milliseconds, 0 for none. It
	// may already have passed: a cut is an image of the store, and the
	// keys it held that had expired but were not reclaimed yet are in it
	// (a loader drops them, as Redis's does).
	ExpireAt int64
	// Idle is the seconds since the key's last access under an LRU
	// eviction policy, Freq its decayed LFU counter under an LFU one; -1
	// otherwise (what Redis writes into a snapshot before the key).
	Idle int64
	Freq int
}

// ErrCutActive: the store already has a cut; one must end before another
// begins.
var ErrCutActive = errors.New("store: a cut is already in progress")

// NewCut begins a cut of s that hands each key of the image to fn, once:
// from Step, or from the write about to change it. fn must not call the
// store. End the cut with Close, done or not.
func (s *Store) NewCut(fn func(*Entry)) (*Cut, error) {
	s.owner.check()
	if s.cut != nil {
		return nil, ErrCutActive
	}
	c := &Cut{s: s, fn: fn, limit: s.nextSlot, next: 1, keys: s.liveSlots, ttls: s.ttlKeys}
	c.done = make([]uint64, (int(c.limit)+63)/64)
	s.cut = c
	return c, nil
}

// Counts returns how many keys, and how many with an expiry, the image
// holds (some may have expired already).
func (c *Cut) Counts() (keys, expires int64) { return c.keys, c.ttls }

// VersionBytes returns the bytes of version state the cut keeps: its
// bitmap, one bit per slot id that existed when it began.
func (c *Cut) VersionBytes() int { return len(c.done) * 8 }

// Step walks up to n slots, handing each key of the image not handed over
// yet to the cut's function, and reports whether the walk has finished.
func (c *Cut) Step(n int) bool {
	s := c.s
	s.owner.check()
	for ; n > 0 && c.next < c.limit; n-- {
		id := c.next
		c.next++
		if c.done[id>>6]&(1<<(id&63)) != 0 {
			continue
		}
		if sl := s.slot(id); sl.used() {
			c.emit(id, sl)
		}
	}
	return c.next >= c.limit
}

// Done reports whether every key of the image has been handed over.
func (c *Cut) Done() bool { return c.next >= c.limit }

// Close ends the cut: the store stops copying on write. Keys not handed
// over yet never will be.
func (c *Cut) Close() {
	if c.s != nil && c.s.cut == c {
		c.s.cut = nil
	}
	c.done = nil
}

// pending reports whether id is a key of the image not handed over yet.
func (c *Cut) pending(id uint32) bool {
	return id >= c.next && id < c.limit && c.done[id>>6]&(1<<(id&63)) == 0
}

// mark records that id needs nothing more from the cut.
func (c *Cut) mark(id uint32) {
	if id >= c.next && id < c.limit {
		c.done[id>>6] |= 1 << (id & 63)
	}
}

func (c *Cut) emit(id uint32, sl *slot) {
	s := c.s
	e := &c.ent
	e.Key, e.ExpireAt, e.Value = s.keyOf(sl), s.expiryOf(sl), nil
	e.Idle, e.Freq = -1, -1
	switch p := s.o.Eviction; {
	case p.LFU():
		e.Freq = int(s.lfuDecayed(sl.atime))
	case p == AllKeysLRU || p == VolatileLRU:
		e.Idle = s.idle(sl)
	}
	if isColl(sl) {
		e.Type = typeOfTag(sl.inl[0])
		c.buf = s.exportColl(s.collOf(sl), &e.Coll, c.buf[:0])
	} else {
		c.buf = s.appendValue(c.buf[:0], sl)
		e.Type, e.Value = TypeString, c.buf
	}
	c.fn(e)
	c.mark(id)
}

// drain hands over every key of the image not handed over yet (before a
// flush empties the store).
func (c *Cut) drain() {
	for ; c.next < c.limit; c.next++ {
		id := c.next
		if c.done[id>>6]&(1<<(id&63)) == 0 {
			if sl := c.s.slot(id); sl.used() {
				c.emit(id, sl)
			}
		}
	}
}

// beforeChange is called before slot id's key is changed or removed: a
// key of the image not handed over yet is handed over as it still is.
func (s *Store) beforeChange(id uint32) {
	if c := s.cut; c != nil && c.pending(id) {
		c.emit(id, s.slot(id))
	}
}

// born is called when slot id takes a new key: the cut must not hand it
// over.
func (s *Store) born(id uint32) {
	if c := s.cut; c != nil {
		c.mark(id)
	}
}

// Reserve sizes an empty store's index for n keys, so a bulk load (a
// snapshot's RESIZEDB hint) inserts without growing it step by step. It
// does nothing to a store that holds keys or is already that large.
func (s *Store) Reserve(n int) {
	s.owner.check()
	if s.liveSlots != 0 || s.ix.old != nil || n <= len(s.ix.t)*3/4 {
		return
	}
	s.ix.freeTable(s.ix.t)
	s.ix.init(s.mem, n)
}
