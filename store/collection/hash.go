package collection

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"unsafe"

	"github.com/goblin-kv/goblin/arena"
)

// Hash layout. A table is one arena block: [owner:4][unused:4] then 2^log uint64
// buckets, each 0 (empty) or tag<<32 | entry Ref, where tag is the top 32 bits of
// the field's hash (never 0) and the bucket an entry belongs in is the top log bits
// of its tag. Collisions probe linearly; deletion shifts later entries of the run
// back (no tombstones). An entry is one block: [owner:4][field len:4][value len:4]
// [field][value].
const (
	ownerLen       = 4
	tableHead      = 8
	entryHead      = 12
	minHashLog     = 3
	maxHashLog     = 27 // a table block is at most 1 GiB (arena.MaxBlock)
	migrateBudget  = 8  // old buckets examined per write while a rehash is under way
	loadNum        = 3  // grow past loadNum/loadDen full
	loadDen        = 4
	shrinkFraction = 8 // shrink below 1/shrinkFraction full (and above the minimum)
)

// ErrHashFull: the table has reached its largest size (2^27 buckets).
var ErrHashFull = errors.New("collection: hash table is at its maximum size")

var hashSeed = maphash.MakeSeed()

// Hash is a field → value map of byte strings stored wholly in an arena: a table of
// arena references that grows (and shrinks) by incremental rehashing, a bounded
// number of buckets per write, as Redis's dict does, so no write ever pays for the
// whole table. While a rehash is under way both tables exist; lookups try the new
// table and then the old, inserts go to the new one. The zero Hash (or NewHash) is
// empty; its first Set allocates the table.
//
// A Hash holds no Go pointers: the store can keep it in its own pointer-free
// records. Every method takes the arena the Hash lives in.
type Hash struct {
	owner       uint32
	table, old  arena.Ref
	log, oldLog uint8
	freeing     bool
	n, oldN     uint64 // entries in table and in old
	mpos, mleft uint64 // next old bucket to migrate, old buckets left to examine
	fpos        uint64 // FreeStep's progress through the current table
}

// NewHash returns an empty hash whose blocks carry owner (see OwnerOf).
func NewHash(owner uint32) Hash { return Hash{owner: owner} }

// OwnerOf returns the owner id stored at the start of block r, the id the
// structure owning r was created with: a Compact relocate callback reads it from
// the block's new copy to find the structure to call Relocate on.
func OwnerOf(a *arena.Arena, r arena.Ref) uint32 {
	return binary.LittleEndian.Uint32(a.Bytes(r, ownerLen))
}

// Len returns the number of fields.
func (h *Hash) Len() int { return int(h.n + h.oldN) }

// Rehashing reports whether an incremental rehash is under way.
func (h *Hash) Rehashing() bool { return h.old != 0 }

func hashOf(b []byte) (tag uint32) {
	t := uint32(maphash.Bytes(hashSeed, b) >> 32)
	if t == 0 {
		t = 1
	}
	return t
}

func tableBytes(log uint8) int { return tableHead + 8<<log }

// buckets returns the table block r of 2^log buckets as a []uint64 aliasing the
// arena. Arena blocks start 8-aligned, so the cast is aligned.
func buckets(a *arena.Arena, r arena.Ref, log uint8) []uint64 {
	b := a.Bytes(r, tableBytes(log))
	return unsafe.Slice((*uint64)(unsafe.Pointer(&b[tableHead])), 1<<log)
}

func (h *Hash) newTable(a *arena.Arena, log uint8) (arena.Ref, error) {
	r, err := a.Alloc(tableBytes(log))
	if err != nil {
		return 0, err
	}
	b := a.Bytes(r, tableBytes(log))
	clear(b)
	binary.LittleEndian.PutUint32(b, h.owner)
	return r, nil
}

func entryLen(b []byte) (flen, vlen int) {
	return int(binary.LittleEndian.Uint32(b[4:])), int(binary.LittleEndian.Uint32(b[8:]))
}

// entry returns the field and value of entry block r (aliasing the arena).
func entry(a *arena.Arena, r arena.Ref) (field, value []byte) {
	flen, vlen := entryLen(a.Bytes(r, entryHead))
	b := a.Bytes(r, entryHead+flen+vlen)
	return b[entryHead : entryHead+flen], b[entryHead+flen:]
}

// probe looks for field in table t: its bucket, or -1.
func probe(a *arena.Arena, t []uint64, log uint8, tag uint32, field []byte) int {
	mask := uint64(len(t) - 1)
	for pos := uint64(tag >> (32 - log)); ; pos = (pos + 1) & mask {
		e := t[pos]
		if e == 0 {
			return -1
		}
		if uint32(e>>32) == tag {
			if f, _ := entry(a, arena.Ref(e)); string(f) == string(field) {
				return int(pos)
			}
		}
	}
}

// find returns the bucket holding field and whether it is in the old table.
func (h *Hash) find(a *arena.Arena, tag uint32, field []byte) (pos int, inOld bool) {
	if h.table == 0 {
		return -1, false
	}
	if pos = probe(a, buckets(a, h.table, h.log), h.log, tag, field); pos >= 0 {
		return pos, false
	}
	if h.old != 0 {
		if pos = probe(a, buckets(a, h.old, h.oldLog), h.oldLog, tag, field); pos >= 0 {
			return pos, true
		}
	}
	return -1, false
}

// Get returns the value of field, aliasing the arena (valid until the next change
// to the hash or the next Compact).
func (h *Hash) Get(a *arena.Arena, field []byte) ([]byte, bool) {
	pos, inOld := h.find(a, hashOf(field), field)
	if pos < 0 {
		return nil, false
	}
	_, v := entry(a, arena.Ref(h.bucket(a, inOld)[pos]))
	return v, true
}

func (h *Hash) bucket(a *arena.Arena, inOld bool) []uint64 {
	if inOld {
		return buckets(a, h.old, h.oldLog)
	}
	return buckets(a, h.table, h.log)
}

// Set stores value under field and reports whether the field is new.
func (h *Hash) Set(a *arena.Arena, field, value []byte) (added bool, err error) {
	if h.freeing {
		panic("collection: Set on a hash being freed")
	}
	if h.old != 0 {
		h.migrate(a, migrateBudget)
	}
	tag := hashOf(field)
	pos, inOld := h.find(a, tag, field)
	need := entryHead + len(field) + len(value)
	if pos >= 0 {
		t := h.bucket(a, inOld)
		r := arena.Ref(t[pos])
		if a.Cap(r) == arena.BlockSize(need) {
			b := a.Bytes(r, need)
			binary.LittleEndian.PutUint32(b[8:], uint32(len(value)))
			copy(b[entryHead+len(field):], value)
			return false, nil
		}
		nr, err := h.newEntry(a, field, value)
		if err != nil {
			return false, err
		}
		t = h.bucket(a, inOld) // Alloc does not move blocks, but keep the rule simple
		t[pos] = uint64(tag)<<32 | uint64(nr)
		a.Free(r)
		return false, nil
	}
	if h.table == 0 {
		if h.table, err = h.newTable(a, minHashLog); err != nil {
			return false, err
		}
		h.log = minHashLog
	} else if (h.n+h.oldN+1)*loadDen > loadNum<<h.log {
		if err := h.resize(a, h.log+1); err != nil {
			return false, err
		}
	}
	nr, err := h.newEntry(a, field, value)
	if err != nil {
		return false, err
	}
	insertBucket(buckets(a, h.table, h.log), h.log, uint64(tag)<<32|uint64(nr))
	h.n++
	return true, nil
}

func (h *Hash) newEntry(a *arena.Arena, field, value []byte) (arena.Ref, error) {
	need := entryHead + len(field) + len(value)
	r, err := a.Alloc(need)
	if err != nil {
		return 0, err
	}
	b := a.Bytes(r, need)
	binary.LittleEndian.PutUint32(b, h.owner)
	binary.LittleEndian.PutUint32(b[4:], uint32(len(field)))
	binary.LittleEndian.PutUint32(b[8:], uint32(len(value)))
	copy(b[entryHead:], field)
	copy(b[entryHead+len(field):], value)
	return r, nil
}

func insertBucket(t []uint64, log uint8, e uint64) {
	mask := uint64(len(t) - 1)
	pos := uint64(uint32(e>>32) >> (32 - log))
	for t[pos] != 0 {
		pos = (pos + 1) & mask
	}
	t[pos] = e
}

// deleteBucket empties bucket pos and shifts back the entries of its run that may
// move (an entry may fill the hole unless its home lies cyclically after the hole
// and at or before its own position).
func deleteBucket(t []uint64, log uint8, pos uint64) {
	mask := uint64(len(t) - 1)
	i := pos
	for j := (pos + 1) & mask; ; j = (j + 1) & mask {
		e := t[j]
		if e == 0 {
			break
		}
		home := uint64(uint32(e>>32) >> (32 - log))
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			t[i] = e
			i = j
		}
	}
	t[i] = 0
}

// resize starts an incremental rehash into a table of 2^log buckets.
func (h *Hash) resize(a *arena.Arena, log uint8) error {
	if h.old != 0 {
		h.migrate(a, 1<<h.oldLog) // only when writes outpace the budget; finish it
	}
	if log > maxHashLog {
		return fmt.Errorf("%w: %d fields", ErrHashFull, h.n)
	}
	nt, err := h.newTable(a, log)
	if err != nil {
		return err
	}
	h.old, h.oldLog, h.oldN = h.table, h.log, h.n
	h.table, h.log, h.n = nt, log, 0
	// Start just after an empty bucket, so migration begins at the start of a run
	// and never leaves one half-moved (lookups in the old table stay correct).
	t := buckets(a, h.old, h.oldLog)
	var e uint64
	for t[e] != 0 {
		e++
	}
	h.mpos = (e + 1) & uint64(len(t)-1)
	h.mleft = uint64(len(t))
	return nil
}

// migrate moves old buckets into the new table: at least budget buckets examined
// (fewer when done), always stopping at the end of a run.
func (h *Hash) migrate(a *arena.Arena, budget int) {
	old := buckets(a, h.old, h.oldLog)
	nt := buckets(a, h.table, h.log)
	mask := uint64(len(old) - 1)
	for work := 0; h.mleft > 0; work++ {
		e := old[h.mpos]
		if e == 0 {
			if work >= budget {
				break
			}
		} else {
			insertBucket(nt, h.log, e)
			old[h.mpos] = 0
			h.oldN--
			h.n++
		}
		h.mpos = (h.mpos + 1) & mask
		h.mleft--
	}
	if h.mleft == 0 {
		if h.oldN != 0 {
			panic(fmt.Sprintf("collection: hash rehash finished with %d entries left behind", h.oldN))
		}
		a.Free(h.old)
		h.old, h.oldLog = 0, 0
	}
}

// Delete removes field and reports whether it was present.
func (h *Hash) Delete(a *arena.Arena, field []byte) bool {
	if h.old != 0 {
		h.migrate(a, migrateBudget)
	}
	pos, inOld := h.find(a, hashOf(field), field)
	if pos < 0 {
		return false
	}
	t := h.bucket(a, inOld)
	r := arena.Ref(t[pos])
	if inOld {
		deleteBucket(t, h.oldLog, uint64(pos))
		h.oldN--
	} else {
		deleteBucket(t, h.log, uint64(pos))
		h.n--
	}
	a.Free(r)
	if h.old == 0 && h.log > minHashLog && h.n*shrinkFraction < 1<<h.log {
		// Halve (at least) rather than keep a mostly empty table; a shrink failing
		// for lack of memory just leaves the table as it is.
		// The new table starts at most 3/8 full, so migrating the old one (twice
		// its size) at migrateBudget buckets per write ends before inserts fill it.
		log := h.log - 1
		for log > minHashLog && h.n*loadDen*2 <= loadNum<<(log-1) {
			log--
		}
		_ = h.resize(a, log)
	}
	return true
}

// Range calls fn for every field and value (aliasing the arena) until fn returns
// false. fn must not change the hash.
func (h *Hash) Range(a *arena.Arena, fn func(field, value []byte) bool) {
	for _, tr := range [2]struct {
		r   arena.Ref
		log uint8
	}{{h.old, h.oldLog}, {h.table, h.log}} {
		if tr.r == 0 {
			continue
		}
		for _, e := range buckets(a, tr.r, tr.log) {
			if e != 0 {
				if f, v := entry(a, arena.Ref(e)); !fn(f, v) {
					return
				}
			}
		}
	}
}

// Random returns a field and value chosen with r (any random number): the first
// entry at or after a random bucket, so not perfectly uniform (nor is Redis's
// dictGetFairRandomKey). The hash must not be empty.
func (h *Hash) Random(a *arena.Arena, r uint64) (field, value []byte) {
	t, log := h.table, h.log
	if h.old != 0 && (h.n == 0 || r&1 == 0 && h.oldN > 0) {
		t, log = h.old, h.oldLog
	}
	b := buckets(a, t, log)
	mask := uint64(len(b) - 1)
	for pos := (r >> 1) & mask; ; pos = (pos + 1) & mask {
		if b[pos] != 0 {
			return entry(a, arena.Ref(b[pos]))
		}
	}
}

// Relocate patches the hash after arena.Compact moved its block old to nw (a
// table or an entry) and reports whether the hash held old.
func (h *Hash) Relocate(a *arena.Arena, old, nw arena.Ref) bool {
	switch old {
	case 0:
		return false
	case h.table:
		h.table = nw
		return true
	case h.old:
		h.old = nw
		return true
	}
	f, _ := entry(a, nw)
	tag := hashOf(f)
	for _, tr := range [2]struct {
		r   arena.Ref
		log uint8
	}{{h.table, h.log}, {h.old, h.oldLog}} {
		if tr.r == 0 {
			continue
		}
		t := buckets(a, tr.r, tr.log)
		mask := uint64(len(t) - 1)
		for pos := uint64(tag >> (32 - tr.log)); t[pos] != 0; pos = (pos + 1) & mask {
			if arena.Ref(t[pos]) == old {
				t[pos] = uint64(tag)<<32 | uint64(nw)
				return true
			}
		}
	}
	return false
}

// FreeStep frees at most budget of the hash's blocks and reports whether it has
// freed them all; after the first call the hash accepts only FreeStep, Relocate
// and Check. Freed entries stay in the table (buckets are not emptied, so probe
// runs stay intact for Relocate) until the table block itself is freed.
func (h *Hash) FreeStep(a *arena.Arena, budget int) (done bool) {
	h.freeing = true
	for budget > 0 {
		t, log := h.old, h.oldLog
		if t == 0 {
			t, log = h.table, h.log
		}
		if t == 0 {
			*h = Hash{owner: h.owner}
			return true
		}
		b := buckets(a, t, log)
		for ; h.fpos < uint64(len(b)) && budget > 0; h.fpos++ {
			if e := b[h.fpos]; e != 0 {
				a.Free(arena.Ref(e))
				budget--
			}
			if h.fpos&63 == 63 {
				budget-- // empty buckets cost too, so a sparse table still advances boundedly
			}
		}
		if h.fpos < uint64(len(b)) {
			return false
		}
		a.Free(t)
		budget--
		h.fpos = 0
		if t == h.old {
			h.old, h.oldN = 0, 0
		} else {
			h.table, h.n = 0, 0
		}
	}
	return h.old == 0 && h.table == 0
}

// Check verifies the hash's invariants: every table and entry block is live with
// the owner's id; every entry sits in its table where a probe from its home bucket
// finds it, carries its field's tag, and appears once; the counts match. It walks
// everything and is meant for tests.
func (h *Hash) Check(a *arena.Arena) error {
	if h.freeing {
		return nil
	}
	seen := make(map[string]bool, h.Len())
	for _, tr := range [2]struct {
		name string
		r    arena.Ref
		log  uint8
		n    uint64
	}{{"table", h.table, h.log, h.n}, {"old table", h.old, h.oldLog, h.oldN}} {
		if tr.r == 0 {
			if tr.n != 0 {
				return fmt.Errorf("collection: hash has no %s but counts %d entries in it", tr.name, tr.n)
			}
			continue
		}
		if err := a.Live(tr.r, tableBytes(tr.log)); err != nil {
			return fmt.Errorf("collection: hash %s: %w", tr.name, err)
		}
		if o := OwnerOf(a, tr.r); o != h.owner {
			return fmt.Errorf("collection: hash %s carries owner %d, want %d", tr.name, o, h.owner)
		}
		t := buckets(a, tr.r, tr.log)
		mask := uint64(len(t) - 1)
		var n uint64
		for pos, e := range t {
			if e == 0 {
				continue
			}
			n++
			r := arena.Ref(e)
			flen, vlen := entryLen(a.Bytes(r, entryHead))
			if err := a.Live(r, entryHead+flen+vlen); err != nil {
				return fmt.Errorf("collection: hash %s bucket %d: %w", tr.name, pos, err)
			}
			if o := OwnerOf(a, r); o != h.owner {
				return fmt.Errorf("collection: hash entry in bucket %d carries owner %d, want %d", pos, o, h.owner)
			}
			f, _ := entry(a, r)
			tag := hashOf(f)
			if uint32(e>>32) != tag {
				return fmt.Errorf("collection: hash %s bucket %d: tag %#x, field %q hashes to %#x", tr.name, pos, e>>32, f, tag)
			}
			for p := uint64(tag >> (32 - tr.log)); p != uint64(pos); p = (p + 1) & mask {
				if t[p] == 0 {
					return fmt.Errorf("collection: hash %s: field %q in bucket %d is unreachable from its home (empty bucket %d)", tr.name, f, pos, p)
				}
			}
			if seen[string(f)] {
				return fmt.Errorf("collection: hash field %q appears twice", f)
			}
			seen[string(f)] = true
		}
		if n != tr.n {
			return fmt.Errorf("collection: hash %s holds %d entries, counts %d", tr.name, n, tr.n)
		}
		if (tr.n+1)*loadDen > loadNum<<tr.log+loadDen && tr.name == "table" && h.old == 0 {
			return fmt.Errorf("collection: hash table of %d buckets holds %d entries, past its load factor", 1<<tr.log, tr.n)
		}
	}
	return nil
}

// MemoryBytes returns the arena bytes h's blocks take: its tables exactly
// and its entries' blocks, every entry's when it has at most sample, else
// the mean of the first sample entries (in bucket order) times the entry
// count. The cost is bounded by sample entries and the buckets passed
// over to find them.
func (h *Hash) MemoryBytes(a *arena.Arena, sample int) int64 {
	var n, sum, k int64
	for _, tr := range [2]struct {
		r   arena.Ref
		log uint8
	}{{h.old, h.oldLog}, {h.table, h.log}} {
		if tr.r == 0 {
			continue
		}
		n += int64(a.Cap(tr.r))
		for _, e := range buckets(a, tr.r, tr.log) {
			if k >= int64(max(sample, 1)) {
				break
			}
			if e != 0 {
				sum += int64(a.Cap(arena.Ref(e)))
				k++
			}
		}
	}
	if k > 0 {
		n += sum * int64(h.Len()) / k
	}
	return n
}
