package snapshot

import (
	"slices"

	"github.com/goblin-kv/goblin/arena"
	"github.com/goblin-kv/goblin/store"
)

// A BulkLoad is the stores one load has put in bulk-load mode
// (store.Store.BeginBulkLoad) and what happens when it ends: the load at
// start's Loader keeps one, and so does a replica's full
// resynchronisation (engine.Engine.BeginFullSync, EndFullSync), so both
// end the mode and collapse their chunks the same way. Only the stores'
// owning goroutine uses it. The zero value holds no store.
type BulkLoad struct {
	stores []*store.Store
}

// Add puts s in bulk-load mode until End, once however often it is
// added: a loader adds each database as it reaches it.
func (b *BulkLoad) Add(s *store.Store) {
	if !slices.Contains(b.stores, s) {
		s.BeginBulkLoad()
		b.stores = append(b.stores, s)
	}
}

// End ends every store's bulk-load mode (store.Store.EndBulkLoad) and
// forgets them. When whole (the load completed) a thread of low priority
// then collapses the chunks loaded into huge pages (arena.Collapse,
// runCollapse), until done or until a flush of the store frees them
// (ReadCollapseStats counts what it did). A load given up (a shutdown, a
// full resync replacing it, a corrupt file, a lost link) is mostly about
// to be flushed or replaced: it gets no collapse, and End(false) leaves
// its stores usable, their chunks advised huge pages for khugepaged (which
// collapses them in time if they stay, as after a promotion part-way
// through a replica's full sync). It may be called more than once.
func (b *BulkLoad) End(whole bool) {
	var cs []arena.Collapse
	for _, s := range b.stores {
		if c := s.EndBulkLoad(); c.Len() > 0 && whole { // a small store maps nothing
			cs = append(cs, c)
		}
	}
	b.stores = nil
	if len(cs) > 0 {
		// The chunks go to huge pages now, off the caller's goroutine,
		// rather than whenever khugepaged reaches them, on a thread of
		// low priority (runCollapse) so that the loop, serving as soon
		// as the load ends, takes a CPU from it first: while a normal
		// thread collapsed 1.4 GB, a depth-one GET client's p99.9 was
		// 5.1-5.4 ms in 4 of 6 rounds (BENCH_GET_SECONDS,
		// docs/persistence.md (d)).
		runCollapse(cs)
	}
}
