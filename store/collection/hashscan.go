package collection

import "github.com/goblin-kv/goblin/arena"

// scanSpan is the slice of the 32-bit tag space one Scan call covers.
const scanSpan = 1 << 20

// Scan calls fn for the fields whose hash tag lies in the next span of the tag
// space after cursor and returns the cursor to continue from, 0 when the whole
// space has been covered (HSCAN's contract: a field present from the first call
// to the last is returned at least once, whatever was added, deleted or rehashed
// meanwhile; a field may be returned twice during a rehash). Start with cursor 0.
// The work of one call is the buckets of one 1/4096 span of each table plus the
// probe runs at its edges. fn must not change the hash.
func (h *Hash) Scan(a *arena.Arena, cursor uint64, fn func(field, value []byte)) uint64 {
	lo := uint32(cursor)
	hi := uint64(lo) + scanSpan // exclusive, up to 2^32
	for _, tr := range [2]struct {
		r   arena.Ref
		log uint8
	}{{h.table, h.log}, {h.old, h.oldLog}} {
		if tr.r != 0 {
			scanTable(a, buckets(a, tr.r, tr.log), tr.log, lo, hi, fn)
		}
	}
	if hi >= 1<<32 {
		return 0
	}
	return hi
}

// scanTable visits the entries of t with tags in [lo, hi): those whose home
// buckets lie in the span. Linear probing keeps an entry at or after its home with
// no empty bucket between, so they all lie from the span's first home bucket to
// the first empty bucket past its last.
func scanTable(a *arena.Arena, t []uint64, log uint8, lo uint32, hi uint64, fn func(field, value []byte)) {
	mask := uint64(len(t) - 1)
	first := uint64(lo >> (32 - log))
	last := (hi - 1) >> (32 - log)
	pos := first
	for n := uint64(0); n < uint64(len(t)); n++ {
		e := t[pos]
		if e == 0 && (pos-first)&mask > (last-first)&mask {
			break
		}
		if e != 0 {
			if tag := uint32(e >> 32); tag >= lo && uint64(tag) < hi {
				f, v := entry(a, arena.Ref(e))
				fn(f, v)
			}
		}
		pos = (pos + 1) & mask
	}
}
