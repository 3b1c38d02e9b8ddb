package engine

import (
	"math"
	"runtime/metrics"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/internal/monotime"
)

// saveProbe measures what a background save does to the loop, from inside
// the loop and so independently of the clients' view: the time between two
// consecutive save slices (the loop's whole cycle: polling the sockets,
// serving what came in, the store's tick and the slice; a request waits at
// most one such cycle), the loop thread's CPU time over the same interval
// (the loop's own work, GC assists included, without the time the kernel
// or the Go scheduler kept it off a CPU), the longest slice, and what the
// Go runtime and the kernel did meanwhile (GC cycles and pauses, scheduler
// latency, heap allocation, the loop thread's page faults and involuntary
// context switches). INFO persistence shows the last save's figures as
// goblin_bgsave_* fields (docs/persistence.md, "Measuring a save").
//
// Loop goroutine only. The per-cycle cost is three clock reads (two of
// them the thread CPU clock, a vDSO call or a system call): about 1 µs per
// 20 µs slice, and only while a save runs. The thread CPU time of a cycle
// is split at the slice's end, so a long cycle is found in the walk (the
// slice: encoding, handing buffers to the writer) or in the rest (serving,
// polling, the store's tick).
type saveProbe struct {
	on          bool
	prevWall    int64 // monotonic ns at the previous slice's start, 0 before the first
	prevCPU     int64 // thread CPU ns then
	cycles      int64
	maxCycle    int64 // longest wall time between two slices' starts
	maxCPU      int64 // longest thread CPU time between two slices' starts
	maxSlice    int64 // longest slice (StepFor), wall
	maxSliceCPU int64 // most thread CPU time inside one slice: the walk's own work
	maxRestCPU  int64 // most thread CPU time between a slice's end and the next one's start: serving, polling, the tick
	endCPU      int64 // thread CPU ns at the previous slice's end
	hist        [len(cycleBounds) + 1]int64
	cpuHist     [len(cycleBounds) + 1]int64
	ru0         unix.Rusage
	rt          []metrics.Sample       // scratch for metrics.Read
	rt0         []probeValue           // the runtime metrics when the save began
	top         [topCycles]cycleRecord // the cycles with the most thread CPU, most first
	beginCPU    int64                  // thread CPU ns of starting the save (BGSAVE's part)
	last        saveFigures
	haveFirst   bool
	rests       int64 // rests the loop took (Engine.SaveRested)
}

// topCycles is how many of the longest cycles (in thread CPU time) a save
// keeps the details of.
const topCycles = 4

// cycleRecord is one cycle of the loop during a save: its thread CPU time,
// that of its slice, its wall time, and when it began on CLOCK_MONOTONIC
// (what `perf record -k CLOCK_MONOTONIC` stamps its samples with, so a
// long cycle can be found in a profile of the loop's thread).
type cycleRecord struct {
	cpu, sliceCPU, wall, at int64 // ns
}

// cycleBounds are the upper bounds (µs) of the cycle histogram's buckets;
// one more bucket holds the longer cycles.
var cycleBounds = [...]int64{16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768}

// saveFigures are one background save's measurements (INFO persistence's
// goblin_bgsave_* fields).
type saveFigures struct {
	cycles, maxCycle, maxCPU, maxSlice int64 // ns
	maxSliceCPU, maxRestCPU            int64 // ns
	hist, cpuHist                      [len(cycleBounds) + 1]int64
	gcCycles                           int64
	gcPauseMax                         float64 // s: upper bound of the highest pause bucket that grew
	gcPauseTotal                       float64 // s: total GC stop-the-world (sum of the buckets' lower bounds)
	schedLatMax                        float64 // s: upper bound of the highest runnable-wait bucket that grew
	assistCPU                          float64 // s of GC assist CPU, every goroutine
	allocBytes, allocObjects           int64
	minflt, majflt, nivcsw, nvcsw      int64 // the loop thread's
	overflow                           int64 // writer buffers allocated beyond the save's own (snapshot.Job.Overflow)
	rescued                            int64 // 1 when the writer got a rescuer (snapshot.Job.Rescued)
	rests                              int64 // the loop's rests between slices (Engine.SaveRested)
	top                                [topCycles]cycleRecord
	beginCPU, endCPU                   int64 // ns: thread CPU of starting the save, and of ending it after its last slice
}

var probeMetrics = []string{
	"/gc/cycles/total:gc-cycles",
	"/sched/pauses/total/gc:seconds",
	"/sched/latencies:seconds",
	"/cpu/classes/gc/mark/assist:cpu-seconds",
	"/gc/heap/allocs:bytes",
	"/gc/heap/allocs:objects",
}

// probeValue is a copy of one metric's value: metrics.Read reuses a
// histogram's memory.
type probeValue struct {
	kind metrics.ValueKind
	u    uint64
	f    float64
	h    metrics.Float64Histogram
}

func (p *saveProbe) readRuntime() []probeValue {
	if p.rt == nil {
		p.rt = make([]metrics.Sample, len(probeMetrics))
		for i, n := range probeMetrics {
			p.rt[i].Name = n
		}
	}
	metrics.Read(p.rt)
	out := make([]probeValue, len(p.rt))
	for i, s := range p.rt {
		v := &out[i]
		v.kind = s.Value.Kind()
		switch v.kind {
		case metrics.KindUint64:
			v.u = s.Value.Uint64()
		case metrics.KindFloat64:
			v.f = s.Value.Float64()
		case metrics.KindFloat64Histogram:
			h := s.Value.Float64Histogram()
			v.h = metrics.Float64Histogram{Counts: append([]uint64(nil), h.Counts...), Buckets: h.Buckets}
		}
	}
	return out
}

// restSlack is the loop thread's timer slack while a background save runs:
// its rests are a slice long (20 µs), and the default slack (50 µs) would
// make each one three times that when no request ends it.
const restSlack = 1000

// setTimerSlack sets the calling thread's timer slack to ns and returns the
// one it had (0, the thread's default, if it cannot be read). The loop's
// goroutine locks its thread, so the loop's rests get it.
func setTimerSlack(ns int) int {
	old, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil {
		return 0
	}
	unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(ns), 0, 0, 0)
	return old
}

func threadCPU() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return ts.Nano()
}

// begin starts measuring a save (on the loop goroutine, which locks its
// thread: RUSAGE_THREAD is the loop's); startCPU is the thread's CPU time
// read before the save was begun, so the cost of beginning it is counted.
func (p *saveProbe) begin(startCPU int64) {
	*p = saveProbe{on: true, last: p.last, rt: p.rt}
	p.beginCPU = threadCPU() - startCPU
	unix.Getrusage(unix.RUSAGE_THREAD, &p.ru0)
	p.rt0 = p.readRuntime()
}

// slice is called at the start of every save slice; it returns the
// monotonic clock for sliceEnd.
func (p *saveProbe) slice() int64 {
	now := monotime.Now()
	cpu := threadCPU()
	if p.haveFirst {
		d := now - p.prevWall
		p.cycles++
		p.maxCycle = max(p.maxCycle, d)
		p.maxCPU = max(p.maxCPU, cpu-p.prevCPU)
		p.hist[bucket(d)]++
		p.cpuHist[bucket(cpu-p.prevCPU)]++
		p.maxRestCPU = max(p.maxRestCPU, cpu-p.endCPU)
		if c := cpu - p.prevCPU; c > p.top[topCycles-1].cpu {
			p.record(cycleRecord{cpu: c, sliceCPU: p.endCPU - p.prevCPU, wall: d})
		}
	}
	p.haveFirst = true
	p.prevWall, p.prevCPU = now, cpu
	return now
}

// record keeps r among the top cycles (rare: only a cycle longer than the
// fourth longest so far), stamping when it began on CLOCK_MONOTONIC.
func (p *saveProbe) record(r cycleRecord) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) == nil {
		r.at = ts.Nano() - r.wall
	}
	i := topCycles - 1
	for ; i > 0 && p.top[i-1].cpu < r.cpu; i-- {
		p.top[i] = p.top[i-1]
	}
	p.top[i] = r
}

// bucket returns the histogram bucket of ns.
func bucket(ns int64) int {
	us := ns / 1000
	for i, ub := range cycleBounds {
		if us <= ub {
			return i
		}
	}
	return len(cycleBounds)
}

func (p *saveProbe) sliceEnd(start int64) {
	p.maxSlice = max(p.maxSlice, monotime.Now()-start)
	p.endCPU = threadCPU()
	p.maxSliceCPU = max(p.maxSliceCPU, p.endCPU-p.prevCPU)
}

// end finishes the measurement: the figures become INFO's.
func (p *saveProbe) end() {
	if !p.on {
		return
	}
	p.on = false
	f := saveFigures{cycles: p.cycles, maxCycle: p.maxCycle, maxCPU: p.maxCPU, maxSlice: p.maxSlice, maxSliceCPU: p.maxSliceCPU, maxRestCPU: p.maxRestCPU, hist: p.hist, cpuHist: p.cpuHist,
		top: p.top, beginCPU: p.beginCPU, rests: p.rests}
	if p.haveFirst { // the last slice's end to here: the save's ending (Finished, the slab's release)
		f.endCPU = threadCPU() - p.endCPU
	}
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_THREAD, &ru)
	f.minflt, f.majflt = ru.Minflt-p.ru0.Minflt, ru.Majflt-p.ru0.Majflt
	f.nivcsw, f.nvcsw = ru.Nivcsw-p.ru0.Nivcsw, ru.Nvcsw-p.ru0.Nvcsw
	now := p.readRuntime()
	for i := range now {
		a, b := &p.rt0[i], &now[i]
		if a.kind != b.kind || a.kind == metrics.KindBad {
			continue
		}
		switch probeMetrics[i] {
		case "/gc/cycles/total:gc-cycles":
			f.gcCycles = int64(b.u - a.u)
		case "/gc/heap/allocs:bytes":
			f.allocBytes = int64(b.u - a.u)
		case "/gc/heap/allocs:objects":
			f.allocObjects = int64(b.u - a.u)
		case "/cpu/classes/gc/mark/assist:cpu-seconds":
			f.assistCPU = b.f - a.f
		case "/sched/pauses/total/gc:seconds":
			f.gcPauseMax, f.gcPauseTotal = histDelta(&a.h, &b.h)
		case "/sched/latencies:seconds":
			f.schedLatMax, _ = histDelta(&a.h, &b.h)
		}
	}
	p.last = f
}

// histDelta returns the upper bound of the highest bucket whose count grew
// between a and b, and the sum of the new samples' lower bounds.
func histDelta(a, b *metrics.Float64Histogram) (maxUpper, sumLower float64) {
	if len(a.Counts) != len(b.Counts) {
		return 0, 0
	}
	for i := range b.Counts {
		d := b.Counts[i] - a.Counts[i]
		if d == 0 {
			continue
		}
		up := b.Buckets[i+1]
		if math.IsInf(up, 1) {
			up = b.Buckets[i]
		}
		maxUpper = up
		lo := b.Buckets[i]
		if !math.IsInf(lo, -1) {
			sumLower += float64(d) * lo
		}
	}
	return maxUpper, sumLower
}

// info writes the last save's figures.
func (f *saveFigures) info(w *infoWriter) {
	us := func(ns int64) int64 { return ns / 1000 }
	w.int("goblin_bgsave_cycles", f.cycles)
	w.int("goblin_bgsave_max_cycle_us", us(f.maxCycle))
	w.int("goblin_bgsave_max_cycle_cpu_us", us(f.maxCPU))
	w.int("goblin_bgsave_max_slice_us", us(f.maxSlice))
	w.int("goblin_bgsave_max_slice_cpu_us", us(f.maxSliceCPU))
	w.int("goblin_bgsave_max_rest_cpu_us", us(f.maxRestCPU))
	w.str("goblin_bgsave_cycle_hist", histText(&f.hist))
	w.str("goblin_bgsave_cycle_cpu_hist", histText(&f.cpuHist))
	w.str("goblin_bgsave_longest_cycles", topText(&f.top))
	w.int("goblin_bgsave_begin_cpu_us", us(f.beginCPU))
	w.int("goblin_bgsave_end_cpu_us", us(f.endCPU))
	w.int("goblin_bgsave_gc_cycles", f.gcCycles)
	w.int("goblin_bgsave_gc_pause_max_us", int64(f.gcPauseMax*1e6))
	w.int("goblin_bgsave_gc_pause_total_us", int64(f.gcPauseTotal*1e6))
	w.int("goblin_bgsave_gc_assist_us", int64(f.assistCPU*1e6))
	w.int("goblin_bgsave_sched_latency_max_us", int64(f.schedLatMax*1e6))
	w.int("goblin_bgsave_alloc_bytes", f.allocBytes)
	w.int("goblin_bgsave_alloc_objects", f.allocObjects)
	w.int("goblin_bgsave_loop_minflt", f.minflt)
	w.int("goblin_bgsave_loop_majflt", f.majflt)
	w.int("goblin_bgsave_loop_nivcsw", f.nivcsw)
	w.int("goblin_bgsave_loop_nvcsw", f.nvcsw)
	w.int("goblin_bgsave_overflow_buffers", f.overflow)
	w.int("goblin_bgsave_writer_rescued", f.rescued)
	w.int("goblin_bgsave_loop_rests", f.rests)
}

// topText writes the longest cycles as
// "cpu_us/slice_cpu_us/wall_us@monotonic_us,...", most CPU first.
func topText(top *[topCycles]cycleRecord) string {
	var h []byte
	for _, r := range top {
		if r.cpu == 0 {
			break
		}
		if len(h) > 0 {
			h = append(h, ',')
		}
		h = strconv.AppendInt(h, r.cpu/1000, 10)
		h = strconv.AppendInt(append(h, '/'), r.sliceCPU/1000, 10)
		h = strconv.AppendInt(append(h, '/'), r.wall/1000, 10)
		h = strconv.AppendInt(append(h, '@'), r.at/1000, 10)
	}
	return string(h)
}

// histText writes a histogram as "le16us=n,le32us=n,...,more=n".
func histText(hist *[len(cycleBounds) + 1]int64) string {
	var h []byte
	for i, n := range hist {
		if i > 0 {
			h = append(h, ',')
		}
		if i < len(cycleBounds) {
			h = append(strconv.AppendInt(append(h, "le"...), cycleBounds[i], 10), "us="...)
		} else {
			h = append(h, "more="...)
		}
		h = strconv.AppendInt(h, n, 10)
	}
	return string(h)
}
