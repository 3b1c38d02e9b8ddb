package store

import (
	"fmt"
	"unsafe"

	"github.com/goblin-kv/goblin/arena"
)

// index maps hash tags to slot ids: open addressing with linear probing over uint64
// entries (tag<<32 | slot id; 0 is empty). An entry's home bucket is the top bits of
// its tag, so entries sit in tag order and a table can be migrated into one twice its
// size front to back with sequential reads and writes. Deletion shifts later entries
// of the run back (no tombstones).
//
// Growing allocates the new table and leaves the old one in place; every write and
// every Tick migrates a bounded number of old buckets, whole runs at a time (a run
// is never left half-moved, so lookups in the old table stay correct). While both
// tables exist, lookups try the new table and then the old; inserts go to the new.
type index struct {
	mem   *arena.OffHeap // large tables live outside the Go heap
	t     []uint64
	shift uint8 // 32 - log2(len(t))
	n     int

	old         []uint64
	oldShift    uint8
	oldN        int
	mpos, mleft uint64 // next old bucket to migrate, buckets left to examine
}

const (
	minIndexLog = 4
	maxIndexLog = 32
)

func tagOf(h uint64) uint32 {
	t := uint32(h >> 32)
	if t == 0 {
		t = 1
	}
	return t
}

// offHeapTable is the table size (bytes) from which tables are mapped outside the Go
// heap, on huge pages where available.
const offHeapTable = arena.OffHeapChunk

// newTable returns a zeroed table of n buckets.
func (ix *index) newTable(n int) []uint64 {
	if n*8 < offHeapTable {
		return make([]uint64, n)
	}
	// The region is private to the owning goroutine, like the rest of the store; it
	// holds plain integers, and is unmapped only by freeTable (no slice outlives it).
	b := ix.mem.Alloc(n * 8)
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

func (ix *index) freeTable(t []uint64) {
	if len(t)*8 >= offHeapTable {
		ix.mem.Free(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(t))), len(t)*8))
	}
}

func (ix *index) init(mem *arena.OffHeap, capacity int) {
	log := minIndexLog
	for log < maxIndexLog && capacity > (1<<log)*3/4 {
		log++
	}
	*ix = index{mem: mem, shift: uint8(32 - log)}
	ix.t = ix.newTable(1 << log)
}

// needsGrow reports whether one more insert would pass the 3/4 load.
func (ix *index) needsGrow() bool { return (ix.n+ix.oldN+1)*4 > len(ix.t)*3 }

// mustGrow reports whether one more insert would pass 7/8, the most a store under a
// memory cap tolerates rather than grow past the cap.
func (ix *index) mustGrow() bool { return (ix.n+ix.oldN+1)*8 > len(ix.t)*7 }

func (ix *index) grow() error {
	if ix.old != nil {
		ix.migrate(len(ix.old) * 2) // cannot happen at the migration rate; finish anyway
	}
	if ix.shift == 0 {
		return fmt.Errorf("%w: index is at its maximum size", ErrOOM)
	}
	ix.old, ix.oldShift, ix.oldN = ix.t, ix.shift, ix.n
	ix.shift--
	ix.t = ix.newTable(2 * len(ix.old))
	ix.n = 0
	// Start just after an empty bucket, so migration begins at the start of a run.
	mask := uint64(len(ix.old) - 1)
	var e uint64
	for ix.old[e] != 0 {
		e++
	}
	ix.mpos = (e + 1) & mask
	ix.mleft = uint64(len(ix.old))
	return nil
}

// migrate moves old buckets into the new table: at least budget buckets examined
// (fewer when done), always stopping at the end of a run. It returns the buckets
// examined.
func (ix *index) migrate(budget int) int {
	mask := uint64(len(ix.old) - 1)
	work := 0
	for ix.mleft > 0 {
		e := ix.old[ix.mpos]
		if e == 0 {
			if work >= budget {
				break
			}
		} else {
			insertEntry(ix.t, ix.shift, e)
			ix.old[ix.mpos] = 0
			ix.oldN--
			ix.n++
		}
		ix.mpos = (ix.mpos + 1) & mask
		ix.mleft--
		work++
	}
	if ix.mleft == 0 {
		if ix.oldN != 0 {
			panic(fmt.Sprintf("store: index migration finished with %d entries left behind", ix.oldN))
		}
		ix.freeTable(ix.old)
		ix.old = nil
	}
	return work
}

func (ix *index) insert(e uint64) {
	insertEntry(ix.t, ix.shift, e)
	ix.n++
}

func insertEntry(t []uint64, shift uint8, e uint64) {
	mask := uint64(len(t) - 1)
	pos := uint64(uint32(e>>32) >> shift)
	for t[pos] != 0 {
		pos = (pos + 1) & mask
	}
	t[pos] = e
}

// deleteEntry removes the entry at pos, of the old table when inOld (an
// incremental resize is under way) or else of the current one.
func (ix *index) deleteEntry(inOld bool, pos uint64) {
	if inOld {
		deleteAt(ix.old, ix.oldShift, pos)
		ix.oldN--
	} else {
		deleteAt(ix.t, ix.shift, pos)
		ix.n--
	}
}

// deleteAt empties bucket pos and shifts back the entries of its run that may move.
func deleteAt(t []uint64, shift uint8, pos uint64) {
	mask := uint64(len(t) - 1)
	i := pos
	for j := (pos + 1) & mask; ; j = (j + 1) & mask {
		e := t[j]
		if e == 0 {
			break
		}
		h := uint64(uint32(e>>32) >> shift)
		// The entry at j may fill the hole at i unless its home lies cyclically in (i, j].
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			t[i] = e
			i = j
		}
	}
	t[i] = 0
}
