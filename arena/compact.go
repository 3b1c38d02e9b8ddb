package arena

import "math/bits"

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
// hundred words, whatever the arena's size.
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
		off, ok := a.nextLive(p, a.cursor)
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

// nextLive returns the offset of the first allocated block at or after off in page p.
func (a *Arena) nextLive(p uint32, off uint32) (uint32, bool) {
	bm := a.bitmaps[p*bitmapLen : (p+1)*bitmapLen]
	unit := off >> unitShift
	w := unit >> 6
	if w >= bitmapLen {
		return 0, false
	}
	word := bm[w] &^ (1<<(unit&63) - 1)
	for {
		if word != 0 {
			return (w<<6 + uint32(bits.TrailingZeros64(word))) << unitShift, true
		}
		w++
		if w >= bitmapLen {
			return 0, false
		}
		word = bm[w]
	}
}

// pickVictim chooses the next page to evacuate, if any class is fragmented enough.
func (a *Arena) pickVictim() bool {
	n := len(a.classes)
	for i := 0; i < classScanLimit; i++ {
		c := 1 + (a.pickStart+i)%(n-1)
		cs := &a.classes[c]
		perPage := int64(PageSize / classSizes[c])
		if cs.pages < 2 || cs.holes < perPage || cs.holes*compactDeadDiv < cs.pages*perPage {
			continue
		}
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
		a.victim = int32(p)
		a.cursor = 0
		a.pickStart = (a.pickStart + i) % (n - 1)
		return true
	}
	a.pickStart = (a.pickStart + classScanLimit) % (n - 1)
	return false
}
