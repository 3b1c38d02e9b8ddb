package collection

import (
	"encoding/binary"
	"fmt"

	"github.com/goblin-kv/goblin/arena"
)

// List node layout: one arena block [owner:4][prev:4][next:4][unused:4] followed by
// a listpack of the node's elements (its header holds the node's byte length and
// element count). Nodes are linked both ways by Ref; the links are also how
// Relocate finds the references to a moved node.
const (
	nodeHead = 16
	// NodeBytes is the most listpack bytes a node takes new elements into: nodes
	// stay within the arena's small blocks (arena.MaxSmall), which Compact can move,
	// as Redis's default list-max-listpack-size -2 keeps nodes within 8 KiB. A single
	// larger element gets a node of its own.
	NodeBytes = arena.MaxSmall - nodeHead
)

// List is a sequence of byte strings stored as a doubly linked list of arena
// nodes, each holding a listpack, like Redis's quicklist: pushes and pops at either
// end touch one node; indexing, insertion, ranges and trims walk node counts from
// the nearer end and touch only the nodes they change. The zero List (or NewList)
// is empty. A List holds no Go pointers.
type List struct {
	owner      uint32
	head, tail arena.Ref
	nodes      uint32
	n          uint64
	freeing    bool
	idx        arena.Ref // the counted index of the nodes (listindex.go), 0: none
	hint       uint32    // the index position the last lookup found
}

// NewList returns an empty list whose blocks carry owner (see OwnerOf).
func NewList(owner uint32) List { return List{owner: owner} }

// Len returns the number of elements.
func (l *List) Len() int { return int(l.n) }

func nodeLinks(a *arena.Arena, r arena.Ref) (prev, next arena.Ref) {
	b := a.Bytes(r, nodeHead)
	return arena.Ref(binary.LittleEndian.Uint32(b[4:])), arena.Ref(binary.LittleEndian.Uint32(b[8:]))
}

func setPrev(a *arena.Arena, r, prev arena.Ref) {
	binary.LittleEndian.PutUint32(a.Bytes(r, nodeHead)[4:], uint32(prev))
}

func setNext(a *arena.Arena, r, next arena.Ref) {
	binary.LittleEndian.PutUint32(a.Bytes(r, nodeHead)[8:], uint32(next))
}

// nodeLP returns node r's listpack, with capacity up to the end of the block so
// in-place edits that fit need no copy.
func nodeLP(a *arena.Arena, r arena.Ref) Listpack {
	c := a.Cap(r)
	b := a.Bytes(r, c)
	n := int(binary.LittleEndian.Uint32(b[nodeHead:]))
	return Listpack(b[nodeHead : nodeHead+n])
}

// newNode allocates a node with an empty listpack and room for lpBytes.
func (l *List) newNode(a *arena.Arena, lpBytes int, prev, next arena.Ref) (arena.Ref, error) {
	r, err := a.Alloc(nodeHead + lpBytes)
	if err != nil {
		return 0, err
	}
	b := a.Bytes(r, nodeHead+lpEmptyLen)
	binary.LittleEndian.PutUint32(b, l.owner)
	binary.LittleEndian.PutUint32(b[4:], uint32(prev))
	binary.LittleEndian.PutUint32(b[8:], uint32(next))
	binary.LittleEndian.PutUint32(b[12:], 0)
	NewListpack(b[nodeHead:nodeHead])
	l.link(a, r, prev, next)
	l.ixInsert(a, r, prev)
	return r, nil
}

// link points r's neighbours (or the list's ends) at r.
func (l *List) link(a *arena.Arena, r, prev, next arena.Ref) {
	if prev == 0 {
		l.head = r
	} else {
		setNext(a, prev, r)
	}
	if next == 0 {
		l.tail = r
	} else {
		setPrev(a, next, r)
	}
}

// reserve makes node r able to hold its listpack plus grow bytes, moving it to a
// bigger block when needed, and returns the (possibly new) node.
func (l *List) reserve(a *arena.Arena, r arena.Ref, grow int) (arena.Ref, error) {
	lp := nodeLP(a, r)
	need := nodeHead + len(lp) + grow
	if need <= a.Cap(r) {
		return r, nil
	}
	nr, err := a.Alloc(need)
	if err != nil {
		return 0, err
	}
	copy(a.Bytes(nr, nodeHead+len(lp)), a.Bytes(r, nodeHead+len(lp)))
	prev, next := nodeLinks(a, r)
	l.link(a, nr, prev, next)
	l.ixRef(a, r, nr)
	a.Free(r)
	return nr, nil
}

// unlink removes node r from the list and frees it.
func (l *List) unlink(a *arena.Arena, r arena.Ref) {
	l.ixRemove(a, r)
	prev, next := nodeLinks(a, r)
	if prev == 0 {
		l.head = next
	} else {
		setNext(a, prev, next)
	}
	if next == 0 {
		l.tail = prev
	} else {
		setPrev(a, next, prev)
	}
	a.Free(r)
	l.nodes--
}

// PushBack appends v (RPUSH).
func (l *List) PushBack(a *arena.Arena, v []byte) error {
	es := EntrySize(v)
	r := l.tail
	if r == 0 || len(nodeLP(a, r))+es > NodeBytes {
		var err error
		if r, err = l.newNode(a, lpEmptyLen+es, l.tail, 0); err != nil {
			return err
		}
		l.nodes++
	} else if r2, err := l.reserve(a, r, es); err != nil {
		return err
	} else {
		r = r2
	}
	lp := nodeLP(a, r)
	lp.Append(v) // fits in place: reserve made room
	if l.idx != 0 {
		l.ixShift(a, r, lp.Len()-1, EntrySize(v), 1) // past every checkpoint: they stay
	}
	l.n++
	return nil
}

// PushFront prepends v (LPUSH).
func (l *List) PushFront(a *arena.Arena, v []byte) error {
	es := EntrySize(v)
	r := l.head
	if r == 0 || len(nodeLP(a, r))+es > NodeBytes {
		var err error
		if r, err = l.newNode(a, lpEmptyLen+es, 0, l.head); err != nil {
			return err
		}
		l.nodes++
	} else if r2, err := l.reserve(a, r, es); err != nil {
		return err
	} else {
		r = r2
	}
	nodeLP(a, r).Prepend(v)
	l.ixCount(a, r, 1)
	l.n++
	return nil
}

// PopFront removes the first element, appending it to dst (LPOP); ok is false
// when the list is empty.
func (l *List) PopFront(a *arena.Arena, dst []byte) ([]byte, bool) {
	if l.head == 0 {
		return dst, false
	}
	return l.popAt(a, l.head, true, dst), true
}

// PopBack removes the last element, appending it to dst (RPOP).
func (l *List) PopBack(a *arena.Arena, dst []byte) ([]byte, bool) {
	if l.tail == 0 {
		return dst, false
	}
	return l.popAt(a, l.tail, false, dst), true
}

func (l *List) popAt(a *arena.Arena, r arena.Ref, first bool, dst []byte) []byte {
	lp := nodeLP(a, r)
	p := lp.Last()
	if first {
		p = lp.First()
	}
	dst = lp.AppendValue(dst, p)
	if lp = lp.Delete(p); lp.Len() == 0 {
		l.unlink(a, r)
	} else {
		l.ixCount(a, r, -1)
	}
	l.n--
	return dst
}

// locate returns the node holding element i (0 <= i < Len) and i's index in it,
// walking node counts from the nearer end.
func (l *List) locate(a *arena.Arena, i int) (arena.Ref, int) {
	if l.idx != 0 {
		r, k, _ := l.ixSeek(a, i)
		return r, k
	}
	if uint64(i) < l.n/2 {
		for r := l.head; ; {
			c := nodeLP(a, r).Len()
			if i < c {
				return r, i
			}
			i -= c
			_, r = nodeLinks(a, r)
		}
	}
	back := int(l.n) - 1 - i // 0 = last element
	for r := l.tail; ; {
		c := nodeLP(a, r).Len()
		if back < c {
			return r, c - 1 - back
		}
		back -= c
		r, _ = nodeLinks(a, r)
	}
}

// norm turns a Redis index (negative counts from the end) into 0..Len-1, or -1.
func (l *List) norm(i int) int {
	if i < 0 {
		i += int(l.n)
	}
	if i < 0 || i >= int(l.n) {
		return -1
	}
	return i
}

// Index appends element i (negative from the end) to dst (LINDEX).
func (l *List) Index(a *arena.Arena, i int, dst []byte) ([]byte, bool) {
	if i = l.norm(i); i < 0 {
		return dst, false
	}
	r, k := l.locate(a, i)
	lp := nodeLP(a, r)
	return lp.AppendValue(dst, lp.Seek(k)), true
}

// Set replaces element i (LSET); false when out of range.
func (l *List) Set(a *arena.Arena, i int, v []byte) (bool, error) {
	if i = l.norm(i); i < 0 {
		return false, nil
	}
	r, k := l.locate(a, i)
	lp := nodeLP(a, r)
	p := lp.Seek(k)
	grow := EntrySize(v) - entrySize(lp[p:])
	if len(lp)+grow > NodeBytes && lp.Len() > 1 {
		// Too big for this node: delete and insert, which splits the node.
		l.Delete(a, i)
		return true, l.Insert(a, i, v)
	}
	if grow > 0 {
		var err error
		if r, err = l.reserve(a, r, grow); err != nil {
			return false, err
		}
		lp = nodeLP(a, r)
	}
	lp.Replace(p, v)
	l.ixDrop(a, r) // the entries after it moved
	return true, nil
}

// Insert puts v before element i (0 <= i <= Len; Len appends), as LINSERT does
// once it has found its pivot. A node that would outgrow NodeBytes is split.
func (l *List) Insert(a *arena.Arena, i int, v []byte) error {
	switch {
	case i < 0 || i > int(l.n):
		return fmt.Errorf("collection: list insert at %d of %d", i, l.n)
	case i == int(l.n):
		return l.PushBack(a, v)
	case i == 0:
		return l.PushFront(a, v)
	}
	r, k := l.locate(a, i)
	return l.insertAt(a, r, k, v)
}

// insertAt puts v before entry k of node r (not before the list's first
// element: Insert and ZInsert push at the ends themselves).
func (l *List) insertAt(a *arena.Arena, r arena.Ref, k int, v []byte) error {
	return l.insertAtPos(a, r, k, -1, v)
}

// insertAtPos is insertAt told the offset p of entry k in the node's
// listpack (-1: unknown, sought).
func (l *List) insertAtPos(a *arena.Arena, r arena.Ref, k, p int, v []byte) error {
	es := EntrySize(v)
	if len(nodeLP(a, r))+es <= NodeBytes {
		r, err := l.reserve(a, r, es)
		if err != nil {
			return err
		}
		lp := nodeLP(a, r)
		if p < 0 {
			p = lp.Seek(k)
		}
		lp.InsertBefore(p, v)
		if l.idx != 0 {
			l.ixShift(a, r, k, es, 1)
		}
		l.n++
		return nil
	}
	// The node is full: split it at the insertion point (as quicklist does), then
	// put v at the end of the left part, the start of the right part, or in a node
	// of its own between them.
	if k > 0 {
		if err := l.splitAt(a, r, k); err != nil {
			return err
		}
		_, r = nodeLinks(a, r)
	}
	left, _ := nodeLinks(a, r)
	switch {
	case left != 0 && len(nodeLP(a, left))+es <= NodeBytes:
		left, err := l.reserve(a, left, es)
		if err != nil {
			return err
		}
		nodeLP(a, left).Append(v)
		l.ixCount(a, left, 1)
	case len(nodeLP(a, r))+es <= NodeBytes:
		r, err := l.reserve(a, r, es)
		if err != nil {
			return err
		}
		nodeLP(a, r).Prepend(v)
		l.ixCount(a, r, 1)
	default:
		nr, err := l.newNode(a, lpEmptyLen+es, left, r)
		if err != nil {
			return err
		}
		l.nodes++
		nodeLP(a, nr).Append(v)
		l.ixCount(a, nr, 1)
	}
	l.n++
	return nil
}

// splitAt moves node r's elements from index k on into a new node after it.
func (l *List) splitAt(a *arena.Arena, r arena.Ref, k int) error {
	lp := nodeLP(a, r)
	c := lp.Len()
	p := lp.Seek(k)
	moved := len(lp) - 1 - p
	_, next := nodeLinks(a, r)
	nr, err := l.newNode(a, lpEmptyLen+moved, r, next)
	if err != nil {
		return err
	}
	l.nodes++
	lp = nodeLP(a, r)
	nlp := nodeLP(a, nr)[:lpEmptyLen+moved]
	copy(nlp[lpHeaderSize:], lp[p:len(lp)-1])
	nlp[len(nlp)-1] = lpEOF
	nlp.setHeader(len(nlp), c-k)
	lp.DeleteRange(p, c-k)
	l.ixCount(a, r, k-c)
	l.ixCount(a, nr, c-k)
	return nil
}

// Delete removes element i (negative from the end); false when out of range.
func (l *List) Delete(a *arena.Arena, i int) bool {
	if i = l.norm(i); i < 0 {
		return false
	}
	r, k := l.locate(a, i)
	l.deleteAt(a, r, k)
	return true
}

// deleteAt removes entry k of node r.
func (l *List) deleteAt(a *arena.Arena, r arena.Ref, k int) { l.deleteAtPos(a, r, k, -1) }

// deleteAtPos is deleteAt told the offset p of entry k in the node's
// listpack (-1: unknown, sought).
func (l *List) deleteAtPos(a *arena.Arena, r arena.Ref, k, p int) {
	lp := nodeLP(a, r)
	if p < 0 {
		p = lp.Seek(k)
	}
	size := entrySize(lp[p:])
	if lp = lp.Delete(p); lp.Len() == 0 {
		l.unlink(a, r)
	} else if l.idx != 0 {
		l.ixShift(a, r, k, size, -1)
	}
	l.n--
}

// Range calls fn with elements start..stop (Redis's LRANGE indexes, clamped), each
// as the listpack entry's string or integer, until fn returns false. It touches
// only the nodes in range (after walking node counts to the first).
func (l *List) Range(a *arena.Arena, start, stop int, fn func(s []byte, v int64, isInt bool) bool) {
	start, stop, ok := l.clamp(start, stop)
	if !ok {
		return
	}
	r, k := l.locate(a, start)
	left := stop - start + 1
	for r != 0 && left > 0 {
		lp := nodeLP(a, r)
		for p := lp.Seek(k); p >= 0 && left > 0; p = lp.Next(p) {
			if !fn(lp.Get(p)) {
				return
			}
			left--
		}
		k = 0
		_, r = nodeLinks(a, r)
	}
}

func (l *List) clamp(start, stop int) (int, int, bool) {
	n := int(l.n)
	if start < 0 {
		start = max(start+n, 0)
	}
	if stop < 0 {
		stop += n
	}
	stop = min(stop, n-1)
	return start, stop, start <= stop && start < n
}

// Trim keeps elements start..stop (LTRIM), freeing whole nodes outside the range
// and cutting the two boundary nodes.
func (l *List) Trim(a *arena.Arena, start, stop int) {
	start, stop, ok := l.clamp(start, stop)
	if !ok {
		for l.head != 0 {
			l.unlink(a, l.head)
		}
		l.n = 0
		return
	}
	l.dropFront(a, start)
	l.dropBack(a, int(l.n)-(stop-start+1))
}

func (l *List) dropFront(a *arena.Arena, k int) {
	for k > 0 {
		lp := nodeLP(a, l.head)
		if c := lp.Len(); c <= k {
			l.unlink(a, l.head)
			k -= c
			l.n -= uint64(c)
			continue
		}
		lp.DeleteRange(lp.First(), k)
		l.ixCount(a, l.head, -k)
		l.n -= uint64(k)
		return
	}
}

func (l *List) dropBack(a *arena.Arena, k int) {
	for k > 0 {
		lp := nodeLP(a, l.tail)
		c := lp.Len()
		if c <= k {
			l.unlink(a, l.tail)
			k -= c
			l.n -= uint64(c)
			continue
		}
		lp.DeleteRange(lp.Seek(c-k), k)
		l.ixCount(a, l.tail, -k)
		l.n -= uint64(k)
		return
	}
}

// Relocate patches the list after arena.Compact moved its node old to nw, through
// the node's own links; it reports whether the list held old.
func (l *List) Relocate(a *arena.Arena, old, nw arena.Ref) bool {
	if old == l.idx && old != 0 {
		l.idx = nw
		return true
	}
	prev, next := nodeLinks(a, nw)
	if (prev == 0 && l.head != old) || (next == 0 && l.tail != old) {
		return false
	}
	l.link(a, nw, prev, next)
	l.ixRef(a, old, nw)
	return true
}

// FreeStep frees at most budget nodes and reports whether the list is gone.
func (l *List) FreeStep(a *arena.Arena, budget int) (done bool) {
	l.freeing = true
	l.ixFree(a)
	for ; budget > 0 && l.head != 0; budget-- {
		l.unlink(a, l.head)
	}
	if l.head == 0 {
		*l = List{owner: l.owner}
		return true
	}
	return false
}

// Check verifies the list's invariants: nodes are live blocks with the owner's
// id, linked consistently both ways, hold valid non-empty listpacks within their
// block, and their counts add up. It walks everything and is meant for tests.
func (l *List) Check(a *arena.Arena) error {
	var n uint64
	var nodes uint32
	prev := arena.Ref(0)
	for r := l.head; r != 0; {
		if err := a.Live(r, a.Cap(r)); err != nil {
			return fmt.Errorf("collection: list node %d: %w", nodes, err)
		}
		if o := OwnerOf(a, r); o != l.owner {
			return fmt.Errorf("collection: list node %d carries owner %d, want %d", nodes, o, l.owner)
		}
		p, next := nodeLinks(a, r)
		if p != prev {
			return fmt.Errorf("collection: list node %d: prev %#x, want %#x", nodes, p, prev)
		}
		b := a.Bytes(r, a.Cap(r))
		lpLen := int(binary.LittleEndian.Uint32(b[nodeHead:]))
		if nodeHead+lpLen > len(b) {
			return fmt.Errorf("collection: list node %d: listpack of %d bytes in a %d-byte block", nodes, lpLen, len(b))
		}
		lp := Listpack(b[nodeHead : nodeHead+lpLen])
		if err := ValidateListpack(lp, true, nil); err != nil {
			return fmt.Errorf("collection: list node %d: %w", nodes, err)
		}
		c := lp.Len()
		if c == 0 {
			return fmt.Errorf("collection: list node %d is empty", nodes)
		}
		if lpLen > NodeBytes && c > 1 {
			return fmt.Errorf("collection: list node %d holds %d bytes in %d elements, past NodeBytes", nodes, lpLen, c)
		}
		n += uint64(c)
		nodes++
		prev, r = r, next
	}
	if prev != l.tail {
		return fmt.Errorf("collection: list tail %#x, last node %#x", l.tail, prev)
	}
	if n != l.n || nodes != l.nodes {
		return fmt.Errorf("collection: list counts %d elements in %d nodes, found %d in %d", l.n, l.nodes, n, nodes)
	}
	return l.ixCheck(a)
}

// Nodes returns the number of nodes.
func (l *List) Nodes() int { return int(l.nodes) }

// MemoryBytes returns the arena bytes l's blocks take: its index block and
// its nodes' blocks, every node's when it has at most sample nodes, else
// the first sample nodes' mean times the node count (the nodes of a list
// fill alike, and Redis's MEMORY USAGE samples a quicklist's nodes the
// same way). The cost is bounded by sample node reads.
func (l *List) MemoryBytes(a *arena.Arena, sample int) int64 {
	var n int64
	if l.idx != 0 {
		n += int64(a.Cap(l.idx))
	}
	var sum, k int64
	for r := l.head; r != 0 && k < int64(max(sample, 1)); _, r = nodeLinks(a, r) {
		sum += int64(a.Cap(r))
		k++
	}
	if k > 0 {
		n += sum * int64(l.nodes) / k
	}
	return n
}
