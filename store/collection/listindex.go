package collection

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/goblin-kv/goblin/arena"
)

// A List can carry a counted index of its nodes (EnableIndex; sorted sets
// do): one arena block holding, in node order, each node's Ref and
// element count, and a Fenwick tree over the counts. With it
//   - the node holding rank i is found by descending the Fenwick tree,
//     O(log m) for m nodes, not by walking m/2 node counts;
//   - a node's rank is a Fenwick prefix sum, O(log m);
//   - a bound in a sorted set's order (ZCount) is found by binary search
//     over the nodes' last zkeys, O(log m) node reads;
//
// and an element added to or removed from a node updates O(log m) tree
// words. Each node also has up to ixCps checkpoints: the index and byte
// offset of every ixEvery-th entry, laid by one walk of the node when it
// is first searched, so a bound is found inside the node by a binary
// search over them and a scan of at most about ixEvery entries, not of
// the whole node (up to 8 KiB of entries). A single insert or delete in
// the node shifts its checkpoints (O(ixCps) words, no walk); any other
// change of the node's entries drops them, to be laid again when needed. A node added or removed (a split, an emptied node) shifts the
// arrays and rebuilds the tree, O(m) sequential words, once per node's
// worth of inserts. The index holds Refs, not pointers, like the rest of
// the arena: the GC never scans it.
//
// Block layout: [owner:4][m:4][cap:4][unused:4], then refs [cap]uint32,
// counts [cap]uint32, the tree [cap]uint32 and the checkpoints
// [cap][ixCps]uint32 (entry index<<16 | byte offset, in entry order; 0
// ends a node's list, and a node whose first word is 0 has none laid), in
// native byte order (the block is never written out: snapshots walk the
// nodes). A node's listpack is at most 8 KiB (NodeBytes; a larger element
// has a node of its own), so an entry's index and offset fit 16 bits.
//
// Every List operation that changes a node's count, moves a node or adds
// or removes one reports it (ixCount, ixRef, ixInsert, ixRemove); a List
// without an index pays one branch. The position of the node an operation
// touches is found from l.hint, the position the last index lookup
// returned (the node an insert or delete just located), checked before a
// scan of the refs.
const (
	ixHead = 16
	// ixCps is the number of checkpoints per node, ixEvery the entries
	// between two when they are laid: 32 × 16 covers a node of 512
	// entries, a full node of 14-byte zkeys. (16 × 32 cost 14,926
	// instructions per BenchmarkZsetList/ZADD-move, 32 × 16 13,145.)
	ixCps   = 32
	ixEvery = 16
	// ixWords is the uint32 words the index keeps per node.
	ixWords = 3 + ixCps
)

// EnableIndex gives l a counted index of its nodes, built by one walk. It
// is a no-op when l has one; on an allocation error l keeps working
// without it.
func (l *List) EnableIndex(a *arena.Arena) error {
	if l.idx != 0 {
		return nil
	}
	if err := l.ixAlloc(a, max(16, 2*int(l.nodes))); err != nil {
		return err
	}
	m, refs, counts, fen := l.ix(a)
	for r := l.head; r != 0; _, r = nodeLinks(a, r) {
		refs[m], counts[m] = uint32(r), uint32(nodeLP(a, r).Len())
		m++
	}
	l.ixSetLen(a, m)
	fenBuild(counts[:m], fen[:m])
	return nil
}

// Indexed reports whether l has a counted index.
func (l *List) Indexed() bool { return l.idx != 0 }

// ixAlloc gives l an empty index block with room for capacity nodes (the
// old block, if any, is copied and freed).
func (l *List) ixAlloc(a *arena.Arena, capacity int) error {
	r, err := a.Alloc(ixHead + 4*ixWords*capacity)
	if err != nil {
		return err
	}
	b := a.Bytes(r, ixHead)
	binary.LittleEndian.PutUint32(b, l.owner)
	binary.LittleEndian.PutUint32(b[4:], 0)
	binary.LittleEndian.PutUint32(b[8:], uint32(capacity))
	binary.LittleEndian.PutUint32(b[12:], 0)
	old := l.idx
	l.idx = r
	clear(l.ixCheckpoints(a)) // arena blocks come unzeroed: no node has any laid
	if old != 0 {
		l.idx = old
		m, orefs, ocounts, _ := l.ix(a)
		ocps := l.ixCheckpoints(a)
		l.idx = r
		_, refs, counts, fen := l.ix(a)
		copy(refs, orefs[:m])
		copy(counts, ocounts[:m])
		copy(l.ixCheckpoints(a), ocps[:m*ixCps])
		l.ixSetLen(a, m)
		fenBuild(counts[:m], fen[:m])
		a.Free(old)
	}
	return nil
}

// ix returns the index's node count and its three arrays (full capacity).
func (l *List) ix(a *arena.Arena) (m int, refs, counts, fen []uint32) {
	head := a.Bytes(l.idx, ixHead)
	m = int(binary.LittleEndian.Uint32(head[4:]))
	c := int(binary.LittleEndian.Uint32(head[8:]))
	b := a.Bytes(l.idx, ixHead+4*ixWords*c)
	// The block is 8-byte aligned and holds only uint32s past its header.
	w := unsafe.Slice((*uint32)(unsafe.Pointer(&b[ixHead])), 3*c)
	return m, w[:c:c], w[c : 2*c : 2*c], w[2*c : 3*c : 3*c]
}

// ixCheckpoints returns the nodes' checkpoints (full capacity): node j's
// are [j*ixCps, (j+1)*ixCps).
func (l *List) ixCheckpoints(a *arena.Arena) []uint32 {
	c := int(binary.LittleEndian.Uint32(a.Bytes(l.idx, ixHead)[8:]))
	b := a.Bytes(l.idx, ixHead+4*ixWords*c)
	// As in ix: aligned, uint32s only.
	return unsafe.Slice((*uint32)(unsafe.Pointer(&b[ixHead+12*c])), ixCps*c)
}

// layCheckpoints sets cp to the index and offset of every ixEvery-th
// entry of lp, by one walk.
func layCheckpoints(cp []uint32, lp Listpack) {
	clear(cp)
	c, i := 0, 0
	for p := lp.First(); p >= 0 && c < len(cp); p = lp.Next(p) {
		if i%ixEvery == 0 {
			cp[c] = uint32(i)<<16 | uint32(p)
			c++
		}
		i++
	}
}

// ixShift records in node r's count and checkpoints that its entry k was
// inserted (d 1) or deleted (d -1), size bytes long: the checkpoints past
// it move with their entries, and a deleted entry's own goes.
func (l *List) ixShift(a *arena.Arena, r arena.Ref, k, size, d int) {
	m, refs, counts, fen := l.ix(a)
	j := l.ixFind(refs, m, r)
	counts[j] = uint32(int(counts[j]) + d)
	fenAdd(fen[:m], j, d)
	l.hint = uint32(j)
	cp := l.ixCheckpoints(a)[j*ixCps : (j+1)*ixCps]
	out := 0
	for _, w := range cp {
		if w == 0 {
			break
		}
		i, off := int(w>>16), int(w&0xffff)
		if i == k && d < 0 {
			continue
		}
		if i >= k {
			i, off = i+d, off+d*size
		}
		cp[out] = uint32(i)<<16 | uint32(off)
		out++
	}
	if out < len(cp) {
		cp[out] = 0
	}
}

func (l *List) ixSetLen(a *arena.Arena, m int) {
	binary.LittleEndian.PutUint32(a.Bytes(l.idx, ixHead)[4:], uint32(m))
}

// ixFind returns the position of node r: l.hint or its neighbours first,
// else a scan.
func (l *List) ixFind(refs []uint32, m int, r arena.Ref) int {
	h := int(l.hint)
	for _, j := range [5]int{h, h + 1, h - 1, 0, m - 1} {
		if j >= 0 && j < m && refs[j] == uint32(r) {
			return j
		}
	}
	for j := 0; j < m; j++ {
		if refs[j] == uint32(r) {
			return j
		}
	}
	panic(fmt.Sprintf("collection: list index lost node %#x", r))
}

// ixCount records that node r's count changed by d.
func (l *List) ixCount(a *arena.Arena, r arena.Ref, d int) {
	if l.idx == 0 {
		return
	}
	m, refs, counts, fen := l.ix(a)
	j := l.ixFind(refs, m, r)
	counts[j] = uint32(int(counts[j]) + d)
	fenAdd(fen[:m], j, d)
	l.hint = uint32(j)
	l.ixCheckpoints(a)[j*ixCps] = 0 // its entries changed: lay them again when needed
}

// ixDrop forgets node r's checkpoints (its entries moved), to be laid
// again when needed.
func (l *List) ixDrop(a *arena.Arena, r arena.Ref) {
	if l.idx == 0 {
		return
	}
	m, refs, _, _ := l.ix(a)
	l.ixCheckpoints(a)[l.ixFind(refs, m, r)*ixCps] = 0
}

// ixRef records that node old moved to nw.
func (l *List) ixRef(a *arena.Arena, old, nw arena.Ref) {
	if l.idx == 0 {
		return
	}
	m, refs, _, _ := l.ix(a)
	j := l.ixFind(refs, m, old)
	refs[j] = uint32(nw)
	l.hint = uint32(j)
}

// ixInsert records node r (empty, just linked after prev; 0: at the head).
// Should the index not grow, it is dropped: the list works on without.
func (l *List) ixInsert(a *arena.Arena, r, prev arena.Ref) {
	if l.idx == 0 {
		return
	}
	m, refs, _, _ := l.ix(a)
	if m == len(refs) {
		if err := l.ixAlloc(a, 2*m); err != nil {
			a.Free(l.idx)
			l.idx = 0
			return
		}
		m, refs, _, _ = l.ix(a)
	}
	j := 0
	if prev != 0 {
		j = l.ixFind(refs, m, prev) + 1
	}
	_, refs, counts, fen := l.ix(a)
	copy(refs[j+1:m+1], refs[j:m])
	copy(counts[j+1:m+1], counts[j:m])
	refs[j], counts[j] = uint32(r), 0
	cps := l.ixCheckpoints(a)
	copy(cps[(j+1)*ixCps:(m+1)*ixCps], cps[j*ixCps:m*ixCps])
	cps[j*ixCps] = 0
	m++
	l.ixSetLen(a, m)
	fenBuild(counts[:m], fen[:m])
	l.hint = uint32(j)
}

// ixRemove forgets node r, about to be freed.
func (l *List) ixRemove(a *arena.Arena, r arena.Ref) {
	if l.idx == 0 {
		return
	}
	m, refs, counts, fen := l.ix(a)
	j := l.ixFind(refs, m, r)
	copy(refs[j:m-1], refs[j+1:m])
	copy(counts[j:m-1], counts[j+1:m])
	cps := l.ixCheckpoints(a)
	copy(cps[j*ixCps:(m-1)*ixCps], cps[(j+1)*ixCps:m*ixCps])
	m--
	l.ixSetLen(a, m)
	fenBuild(counts[:m], fen[:m])
	l.hint = uint32(max(j-1, 0))
}

// ixSeek returns the node holding element i (0 <= i < Len), i's index in
// it and the node's position, by descending the Fenwick tree.
func (l *List) ixSeek(a *arena.Arena, i int) (arena.Ref, int, int) {
	m, refs, _, fen := l.ix(a)
	pos, rem := 0, uint32(i)
	for step := 1 << (bits.Len(uint(m)) - 1); step > 0; step >>= 1 {
		if pos+step <= m && fen[pos+step-1] <= rem {
			pos += step
			rem -= fen[pos-1]
		}
	}
	l.hint = uint32(pos)
	return arena.Ref(refs[pos]), int(rem), pos
}

// ixRank returns how many elements the nodes before position j hold.
func (l *List) ixRank(fen []uint32, j int) int {
	n := 0
	for i := j; i > 0; i -= i & -i {
		n += int(fen[i-1])
	}
	return n
}

// ixFree drops the index (the list is being freed).
func (l *List) ixFree(a *arena.Arena) {
	if l.idx != 0 {
		a.Free(l.idx)
		l.idx = 0
	}
}

// ixCheck verifies the index against the nodes: same nodes in the same
// order, their counts, and the tree over them.
func (l *List) ixCheck(a *arena.Arena) error {
	if l.idx == 0 {
		return nil
	}
	capacity := int(binary.LittleEndian.Uint32(a.Bytes(l.idx, ixHead)[8:]))
	if err := a.Live(l.idx, ixHead+4*ixWords*capacity); err != nil {
		return fmt.Errorf("collection: list index: %w", err)
	}
	if o := OwnerOf(a, l.idx); o != l.owner {
		return fmt.Errorf("collection: list index carries owner %d, want %d", o, l.owner)
	}
	m, refs, counts, fen := l.ix(a)
	if m != int(l.nodes) {
		return fmt.Errorf("collection: list index of %d nodes, list of %d", m, l.nodes)
	}
	j := 0
	cps := l.ixCheckpoints(a)
	for r := l.head; r != 0; _, r = nodeLinks(a, r) {
		if refs[j] != uint32(r) || counts[j] != uint32(nodeLP(a, r).Len()) {
			return fmt.Errorf("collection: list index entry %d: node %#x of %d, list has %#x of %d",
				j, refs[j], counts[j], r, nodeLP(a, r).Len())
		}
		if err := checkCheckpoints(cps[j*ixCps:(j+1)*ixCps], nodeLP(a, r)); err != nil {
			return fmt.Errorf("collection: list index node %d: %w", j, err)
		}
		j++
	}
	want := make([]uint32, m)
	fenBuild(counts[:m], want)
	for i := range want {
		if want[i] != fen[i] {
			return fmt.Errorf("collection: list index tree word %d is %d, want %d", i, fen[i], want[i])
		}
	}
	return nil
}

// checkCheckpoints verifies that each checkpoint of cp is the index and
// offset of an entry of lp, in increasing order.
func checkCheckpoints(cp []uint32, lp Listpack) error {
	c, i := 0, 0
	for p := lp.First(); p >= 0 && c < len(cp) && cp[c] != 0; p = lp.Next(p) {
		if int(cp[c]>>16) == i {
			if int(cp[c]&0xffff) != p {
				return fmt.Errorf("checkpoint %d of entry %d at offset %d, the entry is at %d", c, i, cp[c]&0xffff, p)
			}
			c++
		}
		i++
	}
	if c < len(cp) && cp[c] != 0 {
		return fmt.Errorf("checkpoint %d (entry %d, offset %d) is no entry in order", c, cp[c]>>16, cp[c]&0xffff)
	}
	return nil
}

// fenBuild makes fen the Fenwick tree of counts, in O(len).
func fenBuild(counts, fen []uint32) {
	m := len(counts)
	copy(fen, counts)
	for i := 1; i <= m; i++ {
		if j := i + (i & -i); j <= m {
			fen[j-1] += fen[i-1]
		}
	}
}

// fenAdd adds d to the count at position j.
func fenAdd(fen []uint32, j, d int) {
	for i := j + 1; i <= len(fen); i += i & -i {
		fen[i-1] = uint32(int(fen[i-1]) + d)
	}
}
