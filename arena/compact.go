package arena

import (
	"fmt"
	"math/bits"
)

// Compaction policy: a class is worth compacting when its free-list holes add up to at
// least one page and to at least 1/compactDeadDiv of its pages; a page is a victim
// when at most victimLiveNum/victimLiveDen of its blocks are live and the rest of the
// class has room for them.
const (
	compactDeadDiv  = 8
	victimLiveNum   = 3
	victimLiveDen   = 4
	victimScanLimit = 64 // partial-list entries examined per class when choosing a victim
	classScanLimit  = 8  // classes examined per Compact call when choosing a victim
)

// Compact moves at most maxMoves live blocks out of the sparsest page of a fragmented
// class into other pages of that class, calling relocate(old, new) for each move after
// the bytes are copied and before old is freed. A page left empty returns to the pool.
// relocate must not call Alloc, Free or Compact. It returns the number of blocks moved;
// 0 means there is nothing worth doing right now.
//
// The work of one call is bounded by maxMoves block copies plus a scan of a few
// hundred words and, when it picks a new victim page, a walk of that page's free
// list, whatever the arena's size.
func (a *Arena) Compact(maxMoves int, relocate func(old, new Ref)) int {
	moves := 0
	for moves < maxMoves {
		if a.victim < 0 && !a.pickVictim() {
			break
		}
		p := uint32(a.victim)
		m := &a.meta[p]
		c := m.class
		size := classSizes[c]
		off, ok := a.nextLive(a.cursor, size)
		if !ok {
			// Cannot happen while live > 0 (an empty page is released at once), but
			// never spin on a corrupt page: give it up.
			m.evacuating = false
			a.victim = -1
			break
		}
		nr, err := a.allocSmall(c)
		if err != nil {
			break
		}
		old := makeRef(p, off)
		copy(a.Bytes(nr, int(size)), a.Bytes(old, int(size)))
		a.cursor = off + size
		relocate(old, nr)
		a.moves++
		moves++
		a.Free(old) // releases the page (and clears victim) with the last live block
	}
	return moves
}

// nextLive returns the offset of the first allocated block at or after off in the
// victim page, whose blocks are size bytes.
func (a *Arena) nextLive(off, size uint32) (uint32, bool) {
	i := (off + size - 1) / size
	w := i >> 6
	if w >= bitmapLen {
		return 0, false
	}
	word := a.victimLive[w] &^ (1<<(i&63) - 1)
	for {
		if word != 0 {
			return (w<<6 + uint32(bits.TrailingZeros64(word))) * size, true
		}
		w++
		if w >= bitmapLen {
			return 0, false
		}
		word = a.victimLive[w]
	}
}

// markVictim fills victimLive for page p: every block below the bump, less those on
// the free list. It costs a word per 64 blocks plus a step per free block, at most
// PageSize/Align steps in all (the 8-byte class), whatever the arena's size.
func (a *Arena) markVictim(p uint32) {
	m := &a.meta[p]
	size := classSizes[m.class]
	n := m.bump / size
	clear(a.victimLive[:])
	for w := uint32(0); w < n>>6; w++ {
		a.victimLive[w] = ^uint64(0)
	}
	if r := n & 63; r != 0 {
		a.victimLive[n>>6] = 1<<r - 1
	}
	buf := a.bufs[p]
	for h := m.freeHead; h != 0; {
		off := h - 1
		i := off / size
		a.victimLive[i>>6] &^= 1 << (i & 63)
		h = uint32(buf[off]) | uint32(buf[off+1])<<8 | uint32(buf[off+2])<<16 | uint32(buf[off+3])<<24
	}
}

// pickVictim chooses the next page to evacuate, if any class is fragmented enough.
//
// It examines classScanLimit classes a call, in rotation. A class that fails the
// fragmentation test (fragmented) adds one to calm, one that passes it sets calm to 0,
// and every change that can make a class pass it (a small Free, which adds a hole or
// releases a page, and a new page) sets calm to 0 too (Alloc's reuse of a hole only
// makes the test harder to pass). Once calm counts every class, none can pass: the
// call only advances the rotation as a scan would have and returns false, with no
// division and no class touched (an idle store's Tick, once per loop cycle or so,
// paid about 80 ns here for two divisions per class; checkCalm holds the count to
// the classes in invariants and race builds).
func (a *Arena) pickVictim() bool {
	n1 := len(a.classes) - 1 // classes 1..n1; classScanLimit < n1
	if a.calm >= n1 {
		if invariants {
			a.checkCalm()
		}
		if a.pickStart += classScanLimit; a.pickStart >= n1 {
			a.pickStart -= n1
		}
		return false
	}
	for i := 0; i < classScanLimit; i++ {
		c := 1 + a.pickStart + i // pickStart < n1 and i < classScanLimit: one wrap at most
		if c > n1 {
			c -= n1
		}
		cs := &a.classes[c]
		perPage := classPerPage[c]
		if !cs.fragmented(perPage) {
			a.calm++
			continue
		}
		a.calm = 0
		best, bestLive := -1, uint32(perPage*victimLiveNum/victimLiveDen)+1
		k := len(cs.partial)
		start := 0
		if k > victimScanLimit {
			start = int(a.moves+int64(a.pickStart)) % k
		}
		for j := 0; j < k && j < victimScanLimit; j++ {
			idx := (start + j) % k
			if l := a.meta[cs.partial[idx]].live; l < bestLive {
				best, bestLive = idx, l
			}
		}
		if best < 0 {
			continue
		}
		p := cs.partial[best]
		pm := &a.meta[p]
		if cs.freeBlocks-(perPage-int64(pm.live)) < int64(pm.live) {
			continue // the rest of the class cannot take its blocks
		}
		last := cs.partial[k-1]
		cs.partial[best] = last
		a.meta[last].partialIdx = int32(best)
		cs.partial = cs.partial[:k-1]
		pm.partialIdx = -1
		pm.evacuating = true
		a.markVictim(p)
		a.victim = int32(p)
		a.cursor = 0
		a.pickStart = (a.pickStart + i) % n1
		return true
	}
	if a.pickStart += classScanLimit; a.pickStart >= n1 {
		a.pickStart -= n1
	}
	return false
}

// fragmented reports whether the class is worth compacting: its free-list holes add
// up to at least one page and to at least 1/compactDeadDiv of its pages (of perPage
// blocks each).
func (cs *classState) fragmented(perPage int64) bool {
	return cs.pages >= 2 && cs.holes >= perPage && cs.holes*compactDeadDiv >= cs.pages*perPage
}

// checkCalm panics when calm says no class is fragmented and one is: a change that
// can fragment a class did not reset it.
func (a *Arena) checkCalm() {
	for c := 1; c < len(a.classes); c++ {
		if a.classes[c].fragmented(classPerPage[c]) {
			panic(fmt.Sprintf("arena: calm %d stale: class %d (%d bytes) is fragmented: %d pages, %d holes",
				a.calm, c, classSizes[c], a.classes[c].pages, a.classes[c].holes))
		}
	}
}
