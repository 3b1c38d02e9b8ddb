// Package arena is a pointer-free byte arena for goblin's store.
//
// Memory lives in large []byte chunks that contain no Go pointers, so the garbage
// collector never scans them however much is stored: the first HeapChunks chunks
// (1 MiB each by default) come from the Go heap, later ones (OffHeapChunk, 4 MiB) are
// anonymous mappings outside it, backed by transparent huge pages where the kernel
// allows, so random access to a large arena takes few TLB misses. Blocks are named
// by a 32-bit Ref (0 is nil) instead of a pointer; Bytes turns a Ref back into a slice.
//
// Chunks are cut into 64 KiB pages and every page serves one size class (8-byte steps
// up to 128 bytes, then four classes per doubling up to 8 KiB). Freed blocks go on
// their page's free list and are reused by the next allocation of the same class, so a
// workload that keeps rewriting values of similar length reaches a steady state with no
// growth. A page whose last block is freed goes back to a shared pool for any class.
// Blocks larger than MaxSmall get a dedicated allocation of their own.
//
// Fragmentation (many pages of a class each holding a few live blocks) is repaired by
// Compact, which is incremental: each call moves at most maxMoves live blocks out of
// the sparsest page of a class into other pages of that class, and reports every move
// to the owner through a callback so it can patch its references. No operation ever
// rebuilds the whole arena.
//
// An Arena is not safe for concurrent use.
package arena

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"
)

// Ref names a block: the page index in the high bits, the offset within the page in
// 8-byte units in the low bits. The zero Ref is nil.
type Ref uint32

// Layout constants.
const (
	// Align is the alignment and granularity of block sizes.
	Align = 8
	// PageSize is the size of a page; every page serves a single size class.
	PageSize = 64 << 10
	// MaxSmall is the largest block served from pages; larger blocks are dedicated.
	MaxSmall = 8 << 10
	// MaxPages is the number of page indices a Ref can name (small pages and dedicated
	// blocks together), which bounds the arena at 32 GiB of small pages.
	MaxPages = 1 << (32 - offBits)
	// MaxBlock is the largest block Alloc accepts.
	MaxBlock = 1 << 30
	// DefaultChunkSize is the size of the chunks pages are cut from.
	DefaultChunkSize = 1 << 20
	// HeapChunks chunks come from the Go heap; beyond them chunks are OffHeap regions
	// of at least OffHeapChunk bytes, so small arenas (tests, small stores) never map
	// memory and large ones get huge pages.
	HeapChunks   = 4
	OffHeapChunk = 4 << 20

	pageShift  = 16
	unitShift  = 3
	offBits    = pageShift - unitShift
	offMask    = 1<<offBits - 1
	bitmapLen  = PageSize / Align / 64 // uint64 words of a bitmap with a bit per block of the smallest class
	classLarge = 0xff
	classNone  = 0
)

// Errors returned by Alloc.
var (
	// ErrTooLarge: the requested block exceeds MaxBlock.
	ErrTooLarge = errors.New("arena: block too large")
	// ErrFull: the arena has used all MaxPages page indices.
	ErrFull = errors.New("arena: address space exhausted")
)

// classSizes[c] is the block size of class c; class 0 means "no class".
var classSizes []uint32

// classOfUnits[u] is the class serving a block of u 8-byte units.
var classOfUnits [MaxSmall/Align + 1]uint8

// classPerPage[c] is PageSize / classSizes[c], the blocks of a class-c page, for
// pickVictim's test, which would otherwise divide for every class it examines.
var classPerPage []int64

func init() {
	classSizes = append(classSizes, 0)
	for s := uint32(Align); s <= 128; s += Align {
		classSizes = append(classSizes, s)
	}
	for base := uint32(128); base < MaxSmall; base *= 2 {
		step := base / 4
		for s := base + step; s <= base*2; s += step {
			classSizes = append(classSizes, s)
		}
	}
	c := 1
	for u := 1; u <= MaxSmall/Align; u++ {
		for uint32(u*Align) > classSizes[c] {
			c++
		}
		classOfUnits[u] = uint8(c)
	}
	classPerPage = make([]int64, len(classSizes))
	for c := 1; c < len(classSizes); c++ {
		classPerPage[c] = int64(PageSize / classSizes[c])
	}
}

// BlockSize returns the capacity of the block Alloc(n) would return: n rounded up to
// its size class (or to Align for dedicated blocks).
func BlockSize(n int) int {
	if n <= 0 {
		n = 1
	}
	if n <= MaxSmall {
		return int(classSizes[classOfUnits[(n+Align-1)/Align]])
	}
	return (n + Align - 1) &^ (Align - 1)
}

// Options configure an Arena. The zero value works.
type Options struct {
	// ChunkSize is the size of each chunk pages are cut from: a power of two between
	// PageSize and 16 MiB; 0 means DefaultChunkSize.
	ChunkSize int
}

type pageMeta struct {
	class      uint8
	evacuating bool
	live       uint32 // allocated blocks (dedicated: 1)
	bump       uint32 // bytes handed out from the start of the page (dedicated: block length)
	freeHead   uint32 // offset+1 of the first block on the free list, 0 = empty
	nfree      uint32 // blocks on the free list
	partialIdx int32  // index in its class's partial list, -1 when absent
}

type classState struct {
	cur        int32    // page allocations go to first, -1 none
	partial    []uint32 // pages with room, other than cur
	pages      int64    // pages of this class
	liveBlocks int64
	freeBlocks int64 // blocks that can still be allocated in this class's pages (free lists + bump room)
	holes      int64 // blocks on the free lists of this class's pages
}

// Stats are the arena's byte counts. Live + Dead + Free == Size at all times.
type Stats struct {
	Size          int64 // bytes of chunks plus dedicated blocks
	Mapped        int64 // bytes of Size in mappings outside the Go heap (OffHeap regions)
	Live          int64 // bytes in allocated blocks (rounded to their class)
	Dead          int64 // bytes in freed blocks on page free lists
	Free          int64 // bytes never handed out: page bump room, empty pages, uncut chunk space
	Chunks        int64
	Pages         int64 // small pages in use by a class
	Dedicated     int64 // dedicated (large) blocks
	Moves         int64 // blocks moved by Compact since New
	PagesReleased int64 // pages emptied (by frees or compaction) and returned to the pool
}

// Arena is a pointer-free block allocator. See the package documentation.
type Arena struct {
	chunkSize int
	mem       *OffHeap // chunks beyond HeapChunks
	chunks    [][]byte
	chunkUsed int // bytes of the last chunk already cut into pages

	bufs [][]byte   // per page index: the page's memory (nil when the index is unused)
	meta []pageMeta // per page index

	// No per-page allocation bitmap: a page's free blocks are its free list, and the
	// blocks below its bump that are not on it are live. Only the page Compact
	// evacuates needs its live blocks by position: victimLive has a bit per block of
	// the victim (block i at offset i*size), built from the free list when the victim
	// is picked and cleared by Free, since nothing allocates into a victim.
	victimLive [bitmapLen]uint64

	// freeSet is nil until a check (Live or Check, for tests) asks whether a block is
	// free: then it is built from the free lists, with a bit per Align unit set at
	// every free block's start (bitmapLen words per page index), and kept up to date
	// by Alloc and Free from then on. A server never builds it.
	freeSet []uint64

	freeIdx   []uint32 // page indices with no memory
	freePages []uint32 // page indices holding an empty small page
	classes   []classState

	size, live, dead, free int64
	dedicated              int64
	moves, released        int64

	victim    int32  // page being evacuated, -1 none
	cursor    uint32 // next offset to examine in victim
	pickStart int    // rotating start for victim search
	calm      int    // classes found unfragmented in a row since the last change that can fragment one (pickVictim)
}

// New returns an empty arena.
func New(o Options) (*Arena, error) {
	cs := o.ChunkSize
	if cs == 0 {
		cs = DefaultChunkSize
	}
	if cs < PageSize || cs > 16<<20 || cs&(cs-1) != 0 {
		return nil, fmt.Errorf("arena: ChunkSize %d is not a power of two in [%d, %d]", cs, PageSize, 16<<20)
	}
	a := &Arena{chunkSize: cs, mem: &OffHeap{}}
	runtime.AddCleanup(a, (*OffHeap).FreeAll, a.mem)
	a.Reset()
	return a, nil
}

// Reset frees every block and every chunk (mapped chunks are unmapped at once).
// Slices from Bytes must not be used afterwards.
func (a *Arena) Reset() {
	a.bufs = nil
	a.chunks = nil
	a.mem.FreeAll()
	a.chunkUsed = 0
	a.bufs = make([][]byte, 1) // index 0 is never used, so Ref 0 is nil
	a.meta = make([]pageMeta, 1)
	a.freeSet = nil
	a.freeIdx = nil
	a.freePages = nil
	a.classes = make([]classState, len(classSizes))
	for i := range a.classes {
		a.classes[i].cur = -1
	}
	a.size, a.live, a.dead, a.free, a.dedicated = 0, 0, 0, 0, 0
	a.victim = -1
	a.cursor = 0
	a.calm = 0
}

func makeRef(page uint32, off uint32) Ref { return Ref(page<<offBits | off>>unitShift) }

func (r Ref) page() uint32 { return uint32(r) >> offBits }
func (r Ref) off() uint32  { return (uint32(r) & offMask) << unitShift }

// Bytes returns the n bytes of block r. The slice aliases the arena: it is valid until
// r is freed or moved by Compact.
func (a *Arena) Bytes(r Ref, n int) []byte {
	off := r.off()
	return a.bufs[r.page()][off : off+uint32(n) : off+uint32(n)]
}

// At returns the address of block r's first byte, having checked, as Bytes does,
// that its page holds n > 0 bytes from there: one comparison where Bytes's slice
// costs about twenty instructions, for a caller that then reads the block at
// offsets below n (store.Get). The address is valid while the slice Bytes would
// return is. The caller guarantees n ≥ 1 (with n ≤ 0 the check checks
// nothing).
func (a *Arena) At(r Ref, n int) unsafe.Pointer {
	buf := a.bufs[r.page()]
	off := int(r.off())
	_ = buf[off+n-1]
	return unsafe.Add(unsafe.Pointer(unsafe.SliceData(buf)), off)
}

// Cap returns the capacity of block r (its size class, or the dedicated length).
func (a *Arena) Cap(r Ref) int {
	m := &a.meta[r.page()]
	if m.class == classLarge {
		return int(m.bump)
	}
	return int(classSizes[m.class])
}

// Alloc returns a block of at least n bytes (n >= 1). Its contents are unspecified.
func (a *Arena) Alloc(n int) (Ref, error) {
	if n <= MaxSmall {
		if n <= 0 {
			n = 1
		}
		return a.allocSmall(classOfUnits[(n+Align-1)/Align])
	}
	if n > MaxBlock {
		return 0, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, n, MaxBlock)
	}
	idx, err := a.newIndex()
	if err != nil {
		return 0, err
	}
	sz := (n + Align - 1) &^ (Align - 1)
	a.bufs[idx] = make([]byte, sz)
	a.meta[idx] = pageMeta{class: classLarge, live: 1, bump: uint32(sz), partialIdx: -1}
	a.size += int64(sz)
	a.live += int64(sz)
	a.dedicated++
	return makeRef(idx, 0), nil
}

// newIndex returns an unused page index.
func (a *Arena) newIndex() (uint32, error) {
	if k := len(a.freeIdx); k > 0 {
		idx := a.freeIdx[k-1]
		a.freeIdx = a.freeIdx[:k-1]
		return idx, nil
	}
	if len(a.bufs) >= MaxPages {
		return 0, fmt.Errorf("%w: %d page indices in use", ErrFull, len(a.bufs))
	}
	a.bufs = append(a.bufs, nil)
	a.meta = append(a.meta, pageMeta{partialIdx: -1})
	if a.freeSet != nil {
		a.freeSet = append(a.freeSet, make([]uint64, bitmapLen)...)
	}
	return uint32(len(a.bufs) - 1), nil
}

// newPage gives class c an empty page.
func (a *Arena) newPage(c uint8) (uint32, error) {
	var idx uint32
	if k := len(a.freePages); k > 0 {
		idx = a.freePages[k-1]
		a.freePages = a.freePages[:k-1]
	} else {
		var err error
		if idx, err = a.newIndex(); err != nil {
			return 0, err
		}
		if len(a.chunks) == 0 || a.chunkUsed+PageSize > len(a.chunks[len(a.chunks)-1]) {
			var ch []byte
			if len(a.chunks) < HeapChunks {
				ch = make([]byte, a.chunkSize)
			} else {
				ch = a.mem.Alloc(max(a.chunkSize, OffHeapChunk))
			}
			a.chunks = append(a.chunks, ch)
			a.chunkUsed = 0
			a.size += int64(len(ch))
			a.free += int64(len(ch))
		}
		ch := a.chunks[len(a.chunks)-1]
		a.bufs[idx] = ch[a.chunkUsed : a.chunkUsed+PageSize : a.chunkUsed+PageSize]
		a.chunkUsed += PageSize
	}
	a.meta[idx] = pageMeta{class: c, partialIdx: -1}
	cs := &a.classes[c]
	cs.pages++
	cs.freeBlocks += classPerPage[c]
	a.calm = 0 // a class's second page can make it fragmented (pickVictim)
	return idx, nil
}

func (a *Arena) allocSmall(c uint8) (Ref, error) {
	cs := &a.classes[c]
	size := classSizes[c]
	for {
		if cs.cur >= 0 {
			p := uint32(cs.cur)
			m := &a.meta[p]
			if m.freeHead != 0 {
				off := m.freeHead - 1
				buf := a.bufs[p]
				m.freeHead = uint32(buf[off]) | uint32(buf[off+1])<<8 | uint32(buf[off+2])<<16 | uint32(buf[off+3])<<24
				m.nfree--
				m.live++
				cs.holes--
				a.dead -= int64(size)
				a.live += int64(size)
				cs.liveBlocks++
				cs.freeBlocks--
				if a.freeSet != nil {
					a.freeSet[p*bitmapLen+off>>9] &^= 1 << (off >> 3 & 63)
				}
				return makeRef(p, off), nil
			}
			if m.bump+size <= PageSize {
				off := m.bump
				m.bump += size
				m.live++
				a.free -= int64(size)
				a.live += int64(size)
				cs.liveBlocks++
				cs.freeBlocks--
				return makeRef(p, off), nil
			}
			cs.cur = -1
		}
		if k := len(cs.partial); k > 0 {
			p := cs.partial[k-1]
			cs.partial = cs.partial[:k-1]
			a.meta[p].partialIdx = -1
			cs.cur = int32(p)
			continue
		}
		p, err := a.newPage(c)
		if err != nil {
			return 0, err
		}
		cs.cur = int32(p)
	}
}

// Free returns block r to the arena. Freeing 0 is a no-op; freeing a block twice or a
// Ref Alloc did not return corrupts the arena (Check detects it).
func (a *Arena) Free(r Ref) {
	if r == 0 {
		return
	}
	p, off := r.page(), r.off()
	m := &a.meta[p]
	if m.class == classLarge {
		sz := int64(m.bump)
		a.size -= sz
		a.live -= sz
		a.dedicated--
		a.bufs[p] = nil
		a.meta[p] = pageMeta{partialIdx: -1}
		a.freeIdx = append(a.freeIdx, p)
		return
	}
	c := m.class
	size := classSizes[c]
	cs := &a.classes[c]
	if m.evacuating {
		i := off / size
		a.victimLive[i>>6] &^= 1 << (i & 63)
	}
	m.live--
	a.live -= int64(size)
	cs.liveBlocks--
	a.calm = 0 // a hole or a released page can make the class fragmented (pickVictim)
	if m.live == 0 && cs.cur != int32(p) {
		a.releasePage(p)
		return
	}
	buf := a.bufs[p]
	h := m.freeHead
	buf[off], buf[off+1], buf[off+2], buf[off+3] = byte(h), byte(h>>8), byte(h>>16), byte(h>>24)
	m.freeHead = off + 1
	m.nfree++
	cs.holes++
	a.dead += int64(size)
	cs.freeBlocks++
	if a.freeSet != nil {
		a.freeSet[p*bitmapLen+off>>9] |= 1 << (off >> 3 & 63)
	}
	if !m.evacuating && m.partialIdx < 0 && cs.cur != int32(p) {
		m.partialIdx = int32(len(cs.partial))
		cs.partial = append(cs.partial, p)
	}
}

// releasePage returns an empty small page (live == 0) to the pool.
func (a *Arena) releasePage(p uint32) {
	m := &a.meta[p]
	c := m.class
	size := classSizes[c]
	cs := &a.classes[c]
	a.dead -= int64(m.nfree) * int64(size)
	a.free += int64(m.nfree)*int64(size) + int64(size) // the block just freed
	if m.partialIdx >= 0 {
		last := cs.partial[len(cs.partial)-1]
		cs.partial[m.partialIdx] = last
		a.meta[last].partialIdx = m.partialIdx
		cs.partial = cs.partial[:len(cs.partial)-1]
	}
	if cs.cur == int32(p) {
		cs.cur = -1
	}
	if a.victim == int32(p) {
		a.victim = -1
	}
	cs.pages--
	cs.holes -= int64(m.nfree)
	cs.freeBlocks -= int64(PageSize/size) - 1 // every block of the page but the one just freed was counted
	if a.freeSet != nil {
		clear(a.freeSet[p*bitmapLen : (p+1)*bitmapLen])
	}
	*m = pageMeta{class: classNone, partialIdx: -1}
	a.freePages = append(a.freePages, p)
	a.released++
}

// LiveBytes returns the bytes in allocated blocks (rounded to their class).
func (a *Arena) LiveBytes() int64 { return a.live }

// DeferHugePages maps the arena's next off-heap chunks without the
// huge-page advice until AdviseHugePages (see OffHeap.DeferHugePages): for
// a bulk load.
func (a *Arena) DeferHugePages() { a.mem.DeferHugePages() }

// HugePagesDeferred reports whether DeferHugePages is on (see
// OffHeap.HugePagesDeferred).
func (a *Arena) HugePagesDeferred() bool { return a.mem.HugePagesDeferred() }

// AdviseHugePages ends DeferHugePages (see OffHeap.AdviseHugePages).
func (a *Arena) AdviseHugePages() Collapse { return a.mem.AdviseHugePages() }
