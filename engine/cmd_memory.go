package engine

import (
	"runtime/debug"
	"strconv"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/store"
)

// allStats sums the counters of every database into e.stats.
func (e *Engine) allStats() *store.Stats {
	var one store.Stats
	e.stats = store.Stats{}
	for _, st := range e.dbs {
		if st == nil {
			continue
		}
		st.Stats(&one)
		t := &e.stats
		t.Keys += one.Keys
		t.KeysWithTTL += one.KeysWithTTL
		t.Hits += one.Hits
		t.Misses += one.Misses
		t.Expired += one.Expired
		t.Evicted += one.Evicted
		t.OOMRejects += one.OOMRejects
		t.UsedMemory += one.UsedMemory
		t.MaxMemory = one.MaxMemory
		t.IndexBuckets += one.IndexBuckets
		t.SlotBytes += one.SlotBytes
		t.ArenaSize += one.ArenaSize
		t.ArenaMapped += one.ArenaMapped
		t.ArenaLive += one.ArenaLive
		t.ArenaDead += one.ArenaDead
		t.ArenaFree += one.ArenaFree
	}
	return &e.stats
}

// memoryDoctor answers MEMORY DOCTOR with a short report in goblin's words.
func (e *Engine) memoryDoctor(*Session, *command.Request) {
	st := e.allStats()
	b := append(e.scratch[:0], "goblin's store holds "...)
	b = strconv.AppendInt(b, st.Keys, 10)
	b = append(b, " keys in "...)
	b = strconv.AppendInt(b, st.UsedMemory, 10)
	b = append(b, " bytes"...)
	if st.MaxMemory > 0 {
		b = append(b, " of a "...)
		b = strconv.AppendInt(b, st.MaxMemory, 10)
		b = append(b, "-byte cap"...)
	}
	b = append(b, "; its arena has "...)
	b = strconv.AppendInt(b, st.ArenaDead, 10)
	b = append(b, " dead bytes, which compaction returns as the loop idles. No memory issue to report.\n"...)
	e.scratch = b[:0]
	e.res.Kind, e.res.Value = command.Verbatim, b
}

// memoryStats answers MEMORY STATS with the store's figures under Redis's
// field names where one fits.
func (e *Engine) memoryStats(*Session, *command.Request) {
	st := e.allStats()
	rss, _, _ := processStats()
	m := e.processMemory(st, rss)
	e.begin(command.Map)
	field := func(name string, v int64) {
		e.addBulkStr(name)
		e.addInt(v)
	}
	// The process's memory as INFO's used_memory* (procmem.go), then
	// the store's own accounting.
	field("peak.allocated", m.peak)
	field("total.allocated", m.used)
	field("startup.allocated", m.startup)
	field("overhead.total", m.overhead)
	field("keys.count", st.Keys)
	perKey := int64(0)
	if st.Keys > 0 {
		perKey = st.UsedMemory / st.Keys
	}
	field("keys.bytes-per-key", perKey)
	field("dataset.bytes", m.dataset)
	field("goblin.store.bytes", st.UsedMemory)
	field("goblin.store.overhead", st.IndexBuckets*8+st.SlotBytes)
	field("goblin.arena.size", st.ArenaSize)
	field("goblin.arena.dead", st.ArenaDead)
	field("goblin.index.buckets", st.IndexBuckets)
	for i, db := range e.dbs {
		if db == nil || db.Len() == 0 {
			continue
		}
		var one store.Stats
		db.Stats(&one)
		e.addBulkNamed("db.", int64(i))
		e.push(command.Map)
		field("overhead.hashtable.main", one.IndexBuckets*8+one.SlotBytes)
		field("overhead.hashtable.expires", 0)
		e.pop()
	}
	e.end()
}

var txtNoAllocatorStats = []byte("Stats not supported for the current allocator")

func (e *Engine) memoryMallocStats(*Session, *command.Request) {
	e.res.Kind, e.res.Value = command.Verbatim, txtNoAllocatorStats
}

// memoryPurge is Redis's MEMORY PURGE (jemalloc returns its dirty pages
// to the system): here the Go runtime collects and returns what it can
// (debug.FreeOSMemory), so used_memory afterwards counts live memory only.
// The store's data is pointer-free, so the collection scans little; the
// call blocks the loop for it, as Redis's purge does.
func (e *Engine) memoryPurge(*Session, *command.Request) {
	debug.FreeOSMemory()
	e.ok()
}
