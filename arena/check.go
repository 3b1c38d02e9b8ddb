package arena

import (
	"fmt"
	"slices"
)

// Stats fills *st with the arena's byte counts.
func (a *Arena) Stats(st *Stats) {
	*st = Stats{
		Size: a.size, Live: a.live, Dead: a.dead, Free: a.free,
		Chunks: int64(len(a.chunks)), Dedicated: a.dedicated,
		Moves: a.moves, PagesReleased: a.released, Mapped: a.mem.Mapped(),
	}
	for c := 1; c < len(a.classes); c++ {
		st.Pages += a.classes[c].pages
	}
}

// Live reports whether r names an allocated block whose capacity is exactly the one
// Alloc(n) gives (BlockSize(n)): the check an owner runs over its references.
func (a *Arena) Live(r Ref, n int) error {
	p, off := r.page(), r.off()
	if r == 0 || int(p) >= len(a.bufs) {
		return fmt.Errorf("arena: ref %#x out of range", uint32(r))
	}
	m := &a.meta[p]
	switch m.class {
	case classNone:
		return fmt.Errorf("arena: ref %#x is in an unused page", uint32(r))
	case classLarge:
		if off != 0 || int(m.bump) != BlockSize(n) {
			return fmt.Errorf("arena: dedicated ref %#x holds %d bytes, want %d", uint32(r), m.bump, BlockSize(n))
		}
		return nil
	}
	size := classSizes[m.class]
	if off%size != 0 || off >= m.bump {
		return fmt.Errorf("arena: ref %#x is not a block start of class %d", uint32(r), size)
	}
	if a.isFree(p, off) {
		return fmt.Errorf("arena: ref %#x is free", uint32(r))
	}
	if int(size) != BlockSize(n) {
		return fmt.Errorf("arena: ref %#x has class %d, a %d-byte block needs %d", uint32(r), size, n, BlockSize(n))
	}
	return nil
}

// isFree reports whether the block at off of small page p is on the page's free
// list. The arena keeps no bitmap of its blocks for itself: the first call builds
// freeSet from every page's free list, and Alloc and Free keep it current after.
func (a *Arena) isFree(p, off uint32) bool {
	if a.freeSet == nil {
		if err := a.buildFreeSet(); err != nil {
			return false // a corrupt free list; Check reports it
		}
	}
	return a.freeSet[p*bitmapLen+off>>9]&(1<<(off>>3&63)) != 0
}

// buildFreeSet sets freeSet's bit at the start of every block on a free list. It
// fails (leaving freeSet nil) on a free list that holds a block twice, runs past the
// page's bump or is longer or shorter than recorded.
func (a *Arena) buildFreeSet() error {
	a.freeSet = nil
	set := make([]uint64, len(a.bufs)*bitmapLen)
	for p := 1; p < len(a.bufs); p++ {
		m := &a.meta[p]
		if a.bufs[p] == nil || m.class == classNone || m.class == classLarge {
			continue
		}
		sz := classSizes[m.class]
		buf := a.bufs[p]
		var nf uint32
		for h := m.freeHead; h != 0; {
			off := h - 1
			if nf > m.nfree || off%sz != 0 || off >= m.bump {
				return fmt.Errorf("arena: page %d: bad free list entry at offset %d (nfree %d)", p, off, m.nfree)
			}
			w, bit := p*bitmapLen+int(off>>9), uint64(1)<<(off>>3&63)
			if set[w]&bit != 0 {
				return fmt.Errorf("arena: page %d: block %d is on the free list twice (freed twice?)", p, off)
			}
			set[w] |= bit
			nf++
			h = uint32(buf[off]) | uint32(buf[off+1])<<8 | uint32(buf[off+2])<<16 | uint32(buf[off+3])<<24
		}
		if nf != m.nfree {
			return fmt.Errorf("arena: page %d: free list length %d, recorded %d", p, nf, m.nfree)
		}
	}
	a.freeSet = set
	return nil
}

// Check verifies the arena's invariants: Live + Dead + Free == Size; every page's
// free list and counters agree (a block freed twice shows as a free list holding it
// twice); the evacuated page's live-block bits match its free list; class and pool
// lists are consistent. It walks everything and is meant for tests.
func (a *Arena) Check() error {
	if a.live+a.dead+a.free != a.size {
		return fmt.Errorf("arena: live %d + dead %d + free %d != size %d", a.live, a.dead, a.free, a.size)
	}
	if a.live < 0 || a.dead < 0 || a.free < 0 {
		return fmt.Errorf("arena: negative count: live %d dead %d free %d", a.live, a.dead, a.free)
	}
	var live, dead, free, size int64
	for _, ch := range a.chunks {
		size += int64(len(ch))
	}
	if len(a.chunks) > 0 {
		free = int64(len(a.chunks[len(a.chunks)-1]) - a.chunkUsed)
	}
	inFreeIdx := make(map[uint32]bool)
	for _, p := range a.freeIdx {
		inFreeIdx[p] = true
	}
	inFreePages := make(map[uint32]bool)
	for _, p := range a.freePages {
		if inFreePages[p] {
			return fmt.Errorf("arena: page %d twice in the pool", p)
		}
		inFreePages[p] = true
	}
	kept := a.freeSet
	if err := a.buildFreeSet(); err != nil {
		return err
	}
	if kept != nil && !slices.Equal(kept, a.freeSet) {
		return fmt.Errorf("arena: the free-block bits kept by Alloc and Free disagree with the free lists")
	}
	type cls struct{ pages, live, free, holes int64 }
	per := make([]cls, len(a.classes))
	for p := 1; p < len(a.bufs); p++ {
		m := &a.meta[p]
		switch {
		case a.bufs[p] == nil:
			if !inFreeIdx[uint32(p)] || m.class != classNone {
				return fmt.Errorf("arena: index %d has no memory but is not in the index pool", p)
			}
			continue
		case m.class == classLarge:
			if len(a.bufs[p]) != int(m.bump) || m.live != 1 {
				return fmt.Errorf("arena: dedicated block %d: len %d, recorded %d", p, len(a.bufs[p]), m.bump)
			}
			size += int64(m.bump)
			live += int64(m.bump)
			continue
		case m.class == classNone:
			if !inFreePages[uint32(p)] {
				return fmt.Errorf("arena: unassigned page %d is not in the pool", p)
			}
			if m.freeHead != 0 || m.live != 0 || m.nfree != 0 || m.bump != 0 {
				return fmt.Errorf("arena: pooled page %d has blocks (live %d, free %d, bump %d)", p, m.live, m.nfree, m.bump)
			}
			free += PageSize
			continue
		}
		if inFreePages[uint32(p)] {
			return fmt.Errorf("arena: page %d of class %d is also in the pool", p, classSizes[m.class])
		}
		sz := classSizes[m.class]
		if (m.live+m.nfree)*sz != m.bump {
			return fmt.Errorf("arena: page %d: (live %d + free %d) * %d != bump %d", p, m.live, m.nfree, sz, m.bump)
		}
		if m.evacuating != (a.victim == int32(p)) {
			return fmt.Errorf("arena: page %d: evacuating flag %v, victim %d", p, m.evacuating, a.victim)
		}
		if m.evacuating {
			for i := uint32(0); i < bitmapLen*64; i++ {
				off := i * sz
				live := off < m.bump && a.freeSet[uint32(p)*bitmapLen+off>>9]&(1<<(off>>3&63)) == 0
				if marked := a.victimLive[i>>6]&(1<<(i&63)) != 0; marked != live {
					return fmt.Errorf("arena: victim page %d: block %d marked live %v, is live %v", p, off, marked, live)
				}
			}
		}
		c := &per[m.class]
		c.pages++
		c.live += int64(m.live)
		c.holes += int64(m.nfree)
		c.free += int64(PageSize/sz) - int64(m.live)
		live += int64(m.live) * int64(sz)
		dead += int64(m.nfree) * int64(sz)
		free += int64(PageSize - m.bump)
	}
	if live != a.live || dead != a.dead || free != a.free || size != a.size {
		return fmt.Errorf("arena: recount live %d dead %d free %d size %d, recorded %d %d %d %d",
			live, dead, free, size, a.live, a.dead, a.free, a.size)
	}
	for c := 1; c < len(a.classes); c++ {
		cs := &a.classes[c]
		if per[c].pages != cs.pages || per[c].live != cs.liveBlocks || per[c].free != cs.freeBlocks || per[c].holes != cs.holes {
			return fmt.Errorf("arena: class %d: recount pages %d live %d free %d holes %d, recorded %d %d %d %d",
				classSizes[c], per[c].pages, per[c].live, per[c].free, per[c].holes, cs.pages, cs.liveBlocks, cs.freeBlocks, cs.holes)
		}
		for i, p := range cs.partial {
			if a.meta[p].class != uint8(c) || a.meta[p].partialIdx != int32(i) || int32(p) == cs.cur {
				return fmt.Errorf("arena: class %d: partial list entry %d (page %d) inconsistent", classSizes[c], i, p)
			}
		}
		if cs.cur >= 0 && a.meta[cs.cur].class != uint8(c) {
			return fmt.Errorf("arena: class %d: current page %d has class %d", classSizes[c], cs.cur, a.meta[cs.cur].class)
		}
	}
	return nil
}
