package engine

import (
	"runtime/metrics"

	"github.com/goblin-kv/goblin/store"
)

// The process's memory as Redis's INFO fields mean it. Redis's used_memory
// is what its allocator handed out (the live allocations at their size
// class, not the allocator's unused extents or freed slots); goblin's
// allocators are the Go runtime and the store's arena, whose chunks past
// the first few are mappings the runtime does not see. So used_memory is
// the runtime's memory in use (heap objects, goroutine stacks, the
// runtime's own metadata: its total less the free, released and unused
// heap) with the arena's chunks and blocks on the Go heap taken out, plus
// the arena's live blocks; the arena's unused room (the uncut rest of its
// last 4 MiB chunk, freed blocks, empty pages) counts as Redis counts
// jemalloc's, in rss and so in mem_fragmentation_ratio (rss over
// used_memory), which then means what a dashboard's alert expects. The store's own accounting, which maxmemory caps, is reported
// under goblin_store_* names.

// goMemoryMetrics are the runtime/metrics samples processMemory reads:
// the total, less the three that are not in use.
var goMemoryMetrics = [...]string{
	"/memory/classes/total:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/released:bytes",
	"/memory/classes/heap/unused:bytes",
}

// goMemory returns the Go runtime's memory in use; a variable so tests can
// make INFO's output repeatable.
var goMemory = func(samples []metrics.Sample) int64 {
	for i := range goMemoryMetrics {
		samples[i].Name = goMemoryMetrics[i]
	}
	metrics.Read(samples)
	var n int64
	for i, s := range samples {
		if s.Value.Kind() != metrics.KindUint64 {
			continue
		}
		v := int64(s.Value.Uint64())
		if i == 0 {
			n += v
		} else {
			n -= v
		}
	}
	return n
}

// memInfo is the process's memory, in Redis's sense, at one INFO.
type memInfo struct {
	used, rss, peak, startup int64
	dataset, overhead        int64
}

// processMemory measures the process's memory given the stores' summed
// stats and rss, and keeps the peak.
func (e *Engine) processMemory(st *store.Stats, rss int64) memInfo {
	if e.memSamples == nil {
		e.memSamples = make([]metrics.Sample, len(goMemoryMetrics))
	}
	// The arena's bytes on the Go heap (its first chunks and its dedicated
	// blocks) are Size less Mapped; the runtime counts them whole.
	goOwn := max(goMemory(e.memSamples)-(st.ArenaSize-st.ArenaMapped), 0)
	m := memInfo{used: goOwn + st.ArenaLive, rss: rss}
	// The store's values and long keys are the dataset; everything else
	// (index, slots, client buffers, the runtime) is overhead.
	m.dataset = min(st.ArenaLive, m.used)
	m.overhead = m.used - m.dataset
	if e.startupUsed == 0 {
		e.startupUsed = m.used
	}
	e.peakProcess = max(e.peakProcess, m.used)
	m.peak, m.startup = e.peakProcess, min(e.startupUsed, e.peakProcess)
	return m
}

// gcScannable returns what the garbage collector would scan now: the
// scannable part of the heap (the bytes of objects that may hold
// pointers, /gc/scan/heap) and of the globals. The store keeps its data
// in pointer-free arena chunks and slices, so these stay small whatever
// the keyspace holds; INFO memory reports them (goblin_gc_scan_*) so a
// benchmark can show it. A variable so tests can make INFO repeatable.
var gcScannable = func() (heap, globals int64) {
	s := [2]metrics.Sample{{Name: "/gc/scan/heap:bytes"}, {Name: "/gc/scan/globals:bytes"}}
	metrics.Read(s[:])
	if s[0].Value.Kind() == metrics.KindUint64 {
		heap = int64(s[0].Value.Uint64())
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		globals = int64(s[1].Value.Uint64())
	}
	return heap, globals
}
