package engine

import (
	"bufio"
	"bytes"
	"errors"
	"math"
	"math/bits"
	"os"
	"strconv"
	"strings"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/resp"
)

// LATENCY, as Redis 7.0 has it: the latency monitor (events that took at
// least latency-monitor-threshold milliseconds, 160 samples each, one per
// second) and the per-command latency histograms (latency-tracking,
// LATENCY HISTOGRAM, INFO latencystats).
//
// Neither reads the clock for itself on a command's path: commandTimed is
// handed the duration the slow log measured. While the slow log is on
// (slowlog-log-slower-than ≥ 0, the default) that is every command; while
// it is off, one command in sampleEvery (the one timed for the Prometheus
// histograms), so the histograms then count a sample of the calls. The
// loop's own events (store-cycle, bgsave-slice) are timed only while the
// monitor is on.

// Redis's figures (latency.h, server.h).
const (
	latencyTSLen       = 160 // samples per event
	latencyGraphCols   = 80
	latencyHistMin     = 1             // ns
	latencyHistMax     = 1_000_000_000 // ns
	defaultPercentiles = "50 99 99.9"
)

// The latency events goblin records. command and fast-command are Redis's
// (a command with the fast flag or not); store-cycle is the store's
// background step on the loop (index resize, active expiry, lazy freeing,
// eviction down to maxmemory, arena compaction: Redis's expire-cycle and
// eviction-cycle in one), bgsave-slice one slice of a forkless BGSAVE.
const (
	EventCommand     = "command"
	EventFastCommand = "fast-command"
	EventStoreCycle  = "store-cycle"
	EventBgsaveSlice = "bgsave-slice"
)

type latencySample struct{ time, latency int64 } // unix seconds, ms

type latencySeries struct {
	name    string
	idx     int
	max     int64
	samples [latencyTSLen]latencySample
}

// latencyState is the engine's latency monitor and histograms.
type latencyState struct {
	threshold   int64 // ms; 0: the monitor is off
	tracking    bool
	percentiles []float64
	events      []*latencySeries // in order of first sample
	hist        [command.NumOps]*cmdHist
}

func (l *latencyState) init() {
	l.tracking = true
	l.percentiles, _ = ParsePercentiles(defaultPercentiles)
}

// commandTimed is the one hook on a command's path: the slow log, the
// latency histogram and the latency monitor, given the nanoseconds the
// command took. Its common case (tracking on, the command seen before, not
// slow, the monitor off) is small enough to inline: one histogram slot
// incremented.
func (e *Engine) commandTimed(s *Session, r *command.Request, d int64) {
	h := e.lat.hist[r.Op]
	if h == nil || !e.lat.tracking || d/1000 >= e.slow.slowerThan || e.lat.threshold > 0 {
		e.commandTimedRest(s, r, d)
		return
	}
	h.record(d)
}

// commandTimedRest is commandTimed's uncommon case.
func (e *Engine) commandTimedRest(s *Session, r *command.Request, d int64) {
	if e.slow.slowerThan >= 0 && d/1000 >= e.slow.slowerThan {
		e.slowlogPush(s, r, d)
	}
	e.timedStats(r.Op, d)
}

// timedStats is what commandTimedRest counts of a command of op that took
// d nanoseconds besides the slow log: the latency histogram and the
// latency monitor.
func (e *Engine) timedStats(op command.Op, d int64) {
	if e.lat.tracking {
		h := e.lat.hist[op]
		if h == nil {
			h = new(cmdHist) // once per command, on its first call
			e.lat.hist[op] = h
		}
		h.record(d)
	}
	if e.lat.threshold > 0 && d/1e6 >= e.lat.threshold {
		ev := EventCommand
		if command.Lookup(op).Flags&command.Fast != 0 {
			ev = EventFastCommand
		}
		e.latencyAdd(ev, d/1e6)
	}
}

// latencyEnd adds event when the time since start (e.mono) reached the
// threshold, and returns the time now. Called only while the monitor is on.
func (e *Engine) latencyEnd(event string, start int64) int64 {
	now := e.mono()
	if ms := (now - start) / 1e6; ms >= e.lat.threshold {
		e.latencyAdd(event, ms)
	}
	return now
}

// latencyAdd is Redis's latencyAddSample.
func (e *Engine) latencyAdd(event string, ms int64) {
	var ts *latencySeries
	for _, s := range e.lat.events {
		if s.name == event {
			ts = s
		}
	}
	if ts == nil {
		ts = &latencySeries{name: event}
		e.lat.events = append(e.lat.events, ts)
	}
	now := wallClock().Unix()
	ts.max = max(ts.max, ms)
	prev := (ts.idx + latencyTSLen - 1) % latencyTSLen
	if ts.samples[prev].time == now {
		ts.samples[prev].latency = max(ts.samples[prev].latency, ms)
		return
	}
	ts.samples[ts.idx] = latencySample{time: now, latency: ms}
	ts.idx = (ts.idx + 1) % latencyTSLen
}

func (e *Engine) latencyEvent(name []byte) *latencySeries {
	for _, s := range e.lat.events {
		if command.EqualFold(name, s.name) {
			return s
		}
	}
	return nil
}

func (e *Engine) latencyLatest(*Session, *command.Request) {
	e.settleBatch()
	e.begin(command.Array)
	for _, ts := range e.lat.events {
		last := ts.samples[(ts.idx+latencyTSLen-1)%latencyTSLen]
		e.push(command.Array)
		e.addBulkStr(ts.name)
		e.addInt(last.time)
		e.addInt(last.latency)
		e.addInt(ts.max)
		e.pop()
	}
	e.end()
}

func (e *Engine) latencyHistory(_ *Session, r *command.Request) {
	e.settleBatch()
	e.begin(command.Array)
	if ts := e.latencyEvent(r.Args[0]); ts != nil {
		for j := 0; j < latencyTSLen; j++ {
			sm := ts.samples[(ts.idx+j)%latencyTSLen]
			if sm.time == 0 {
				continue
			}
			e.push(command.Array)
			e.addInt(sm.time)
			e.addInt(sm.latency)
			e.pop()
		}
	}
	e.end()
}

func (e *Engine) latencyReset(_ *Session, r *command.Request) {
	e.settleBatch()
	n := 0
	keep := e.lat.events[:0]
	for _, ts := range e.lat.events {
		drop := len(r.Args) == 0
		for _, a := range r.Args {
			drop = drop || command.EqualFold(a, ts.name)
		}
		if drop {
			n++
			continue
		}
		keep = append(keep, ts)
	}
	clear(e.lat.events[len(keep):])
	e.lat.events = keep
	e.integer(int64(n))
}

func (e *Engine) latencyGraph(_ *Session, r *command.Request) {
	e.settleBatch()
	ts := e.latencyEvent(r.Args[0])
	if ts == nil {
		e.fail(command.Err, "ERR No samples available for event '", r.Args[0], "'")
		return
	}
	var seq sparkSeq
	var lo, hi int64
	now := wallClock().Unix()
	for j := 0; j < latencyTSLen; j++ {
		sm := ts.samples[(ts.idx+j)%latencyTSLen]
		if sm.time == 0 {
			continue
		}
		if len(seq.samples) == 0 {
			lo, hi = sm.latency, sm.latency
		} else {
			hi, lo = max(hi, sm.latency), min(lo, sm.latency)
		}
		el := now - sm.time
		var label string
		switch {
		case el < 60:
			label = strconv.FormatInt(el, 10) + "s"
		case el < 3600:
			label = strconv.FormatInt(el/60, 10) + "m"
		case el < 3600*24:
			label = strconv.FormatInt(el/3600, 10) + "h"
		default:
			label = strconv.FormatInt(el/(3600*24), 10) + "d"
		}
		seq.add(float64(sm.latency), label)
	}
	out := e.scratch[:0]
	out = append(out, ts.name...)
	out = append(out, " - high "...)
	out = strconv.AppendInt(out, hi, 10)
	out = append(out, " ms, low "...)
	out = strconv.AppendInt(out, lo, 10)
	out = append(out, " ms (all time high "...)
	out = strconv.AppendInt(out, ts.max, 10)
	out = append(out, " ms)\n"...)
	out = append(out, strings.Repeat("-", latencyGraphCols)...)
	out = append(out, '\n')
	out = seq.render(out, latencyGraphCols, 4)
	e.scratch = out[:0]
	e.res.Kind, e.res.Value = command.Verbatim, out
}

// sparkSeq is Redis's sparkline sequence (sparkline.c), rendered with
// SPARKLINE_FILL as LATENCY GRAPH draws it.
type sparkSeq struct {
	samples  []sparkSample
	min, max float64
	labels   int
}

type sparkSample struct {
	value float64
	label string
}

func (q *sparkSeq) add(v float64, label string) {
	if len(q.samples) == 0 {
		q.min, q.max = v, v
	} else if v < q.min { // Redis's else: a new minimum is not checked against the maximum
		q.min = v
	} else if v > q.max {
		q.max = v
	}
	q.samples = append(q.samples, sparkSample{v, label})
	if label != "" {
		q.labels++
	}
}

func (q *sparkSeq) render(out []byte, columns, rows int) []byte {
	for j := 0; j < len(q.samples); j += columns {
		if j != 0 {
			out = append(out, '\n')
		}
		out = q.renderRange(out, rows, j, min(len(q.samples)-j, columns))
	}
	return out
}

func (q *sparkSeq) renderRange(out []byte, rows, offset, n int) []byte {
	const fill = "_o#"
	relmax := q.max - q.min
	if relmax == 0 {
		relmax = 1
	}
	steps := len(fill) * rows
	chars := make([]byte, n)
	for row, loop := 0, true; loop; {
		loop = false
		for j := range chars {
			chars[j] = ' '
		}
		for j := 0; j < n; j++ {
			s := &q.samples[j+offset]
			step := int(float64(int((s.value-q.min)*float64(steps))) / relmax)
			step = min(max(step, 0), steps-1)
			if row < rows {
				idx := step - (rows-row-1)*len(fill)
				loop = true
				if idx >= 0 && idx < len(fill) {
					chars[j] = fill[idx]
				} else if idx >= len(fill) {
					chars[j] = '|'
				}
				continue
			}
			if q.labels > 0 && row-rows < 1 { // the label's top margin
				loop = true
				break
			}
			if c := row - rows - 1; len(s.label) > c {
				loop = true
				chars[j] = s.label[c]
			}
		}
		if loop {
			row++
			out = append(out, chars...)
			out = append(out, '\n')
		}
	}
	return out
}

// latencyStats is Redis's analyzeLatencyForEvent.
func (e *Engine) latencyStats(ts *latencySeries) (samples, avg, mad, period int64) {
	var sum, oldest int64
	for _, sm := range ts.samples {
		if sm.time == 0 {
			continue
		}
		samples++
		sum += sm.latency
		if oldest == 0 || sm.time < oldest {
			oldest = sm.time
		}
	}
	if samples == 0 {
		return
	}
	avg = sum / samples
	period = max(wallClock().Unix()-oldest, 1)
	sum = 0
	for _, sm := range ts.samples {
		if sm.time != 0 {
			d := avg - sm.latency
			if d < 0 {
				d = -d
			}
			sum += d
		}
	}
	return samples, avg, sum / samples, period
}

// latencyDoctor is Redis's createLatencyReport for the events goblin has.
func (e *Engine) latencyDoctor(*Session, *command.Request) {
	e.settleBatch()
	var b strings.Builder
	if len(e.lat.events) == 0 && e.lat.threshold == 0 {
		b.WriteString("I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n")
		e.verbatim(b.String())
		return
	}
	var slowEnabled, slowTuning, slowInspect, scheduler, largeObjects, massEviction, thp bool
	advices := 0
	for i, ts := range e.lat.events {
		if i == 0 {
			b.WriteString("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n")
		}
		n, avg, mad, period := e.latencyStats(ts)
		b.WriteString(strconv.Itoa(i+1) + ". " + ts.name + ": " + strconv.FormatInt(n, 10) + " latency spikes (average " +
			strconv.FormatInt(avg, 10) + "ms, mean deviation " + strconv.FormatInt(mad, 10) + "ms, period " +
			strconv.FormatFloat(float64(period)/float64(max(n, 1)), 'f', 2, 64) + " sec). Worst all time event " +
			strconv.FormatInt(ts.max, 10) + "ms.")
		switch ts.name {
		case EventCommand:
			if e.slow.slowerThan < 0 {
				slowEnabled = true
				advices++
			} else if e.slow.slowerThan/1000 > e.lat.threshold {
				slowTuning = true
				advices++
			}
			slowInspect, largeObjects = true, true
			advices += 2
		case EventFastCommand:
			scheduler = true
			advices++
		case EventStoreCycle:
			largeObjects, massEviction = true, true
			advices += 2
		}
		b.WriteString("\n")
	}
	if anonHugePages() > 0 {
		thp = true
		advices++
	}
	n := len(e.lat.events)
	switch {
	case n == 0 && advices == 0:
		b.WriteString("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n")
	case n > 0 && advices == 0:
		b.WriteString("\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the Redis community to get some help, providing this report in your help request.\n")
	default:
		b.WriteString("\nI have a few advices for you:\n\n")
		th := strconv.FormatInt(e.lat.threshold*1000, 10)
		if slowEnabled {
			b.WriteString("- There are latency issues with potentially slow commands you are using. Try to enable the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than " + th + "'. If the Slow log is disabled Redis is not able to log slow commands execution for you.\n")
		}
		if slowTuning {
			b.WriteString("- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than " + th + "'.\n")
		}
		if slowInspect {
			b.WriteString("- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n")
		}
		if scheduler {
			b.WriteString("- The system is slow to execute Redis code paths not containing system calls. This usually means the system does not provide Redis CPU time to run for long periods. You should try to:\n" +
				"  1) Lower the system load.\n" +
				"  2) Use a computer / VM just for Redis if you are running other software in the same system.\n" +
				"  3) Check if you have a \"noisy neighbour\" problem.\n" +
				"  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your system.\n" +
				"  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if you are using Jemalloc. However this may create fragmentation problems.\n")
		}
		if largeObjects {
			b.WriteString("- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n")
		}
		if massEviction {
			b.WriteString("- Sudden changes to the 'maxmemory' setting via 'CONFIG SET', or allocation of large objects via sets or sorted sets intersections, STORE option of SORT, Redis Cluster large keys migrations (RESTORE command), may create sudden memory pressure forcing the server to block trying to evict keys. \n")
		}
		if thp {
			b.WriteString("- I detected a non zero amount of anonymous huge pages used by your process. This creates very serious latency events in different conditions, especially when Redis is persisting on disk. To disable THP support use the command 'echo never > /sys/kernel/mm/transparent_hugepage/enabled', make sure to also add it into /etc/rc.local so that the command will be executed again after a reboot. Note that even if you have already disabled THP, you still need to restart the Redis process to get rid of the huge pages already created.\n")
		}
	}
	e.verbatim(b.String())
}

func (e *Engine) verbatim(s string) {
	e.scratch = append(e.scratch[:0], s...)
	e.res.Kind, e.res.Value = command.Verbatim, e.scratch
}

// anonHugePages is Redis's THPGetAnonHugePagesSize: the process's
// AnonHugePages in kB (/proc/self/smaps), 0 when it cannot tell.
var anonHugePages = func() int64 {
	f, err := os.Open("/proc/self/smaps_rollup")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("AnonHugePages:")); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(string(rest)), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// latencyHistogram answers LATENCY HISTOGRAM [command ...]: per command
// with data, its calls and the cumulative counts of its latencies in
// power-of-two microsecond buckets, as Redis's fillCommandCDF.
func (e *Engine) latencyHistogram(_ *Session, r *command.Request) {
	e.settleBatch()
	e.begin(command.Map)
	one := func(op command.Op) {
		h := e.lat.hist[op]
		if h == nil {
			return
		}
		e.addBulkStr(command.Name(op))
		e.push(command.Map)
		e.addBulkStr("calls")
		e.addInt(int64(h.total))
		e.addBulkStr("histogram_usec")
		e.push(command.Map)
		h.cdf(func(us, cum int64) {
			e.addInt(us)
			e.addInt(cum)
		})
		e.pop()
		e.pop()
	}
	if len(r.Args) == 0 {
		for _, op := range command.All() {
			one(op)
		}
		e.end()
		return
	}
	for _, a := range r.Args {
		op := command.ByFullName(strings.ToLower(string(a)))
		if op == command.OpNone {
			continue
		}
		one(op)
		if command.Lookup(op).Container == command.OpNone {
			for _, sub := range command.Subcommands(op) {
				one(sub)
			}
		}
	}
	e.end()
}

// infoLatencystats writes INFO's latencystats section.
func (e *Engine) infoLatencystats(w *infoWriter) {
	e.settleBatch()
	w.b = append(w.b, "# Latencystats\r\n"...)
	if !e.lat.tracking {
		return
	}
	for _, op := range command.All() {
		h := e.lat.hist[op]
		if h == nil {
			continue
		}
		w.b = append(w.b, "latency_percentiles_usec_"...)
		w.b = append(w.b, command.Name(op)...)
		w.b = append(w.b, ':')
		for j, p := range e.lat.percentiles {
			if j > 0 {
				w.b = append(w.b, ',')
			}
			w.b = append(w.b, 'p')
			w.b = strconv.AppendFloat(w.b, p, 'f', -1, 64)
			w.b = append(w.b, '=')
			w.b = strconv.AppendFloat(w.b, float64(h.percentile(p))/1000, 'f', 3, 64)
		}
		w.b = append(w.b, "\r\n"...)
	}
}

// ParsePercentiles reads latency-tracking-info-percentiles: numbers from 0
// to 100 separated by spaces (none: an empty list).
func ParsePercentiles(v string) ([]float64, error) {
	f := strings.Fields(v)
	out := make([]float64, 0, len(f))
	for _, s := range f {
		p, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(p) {
			//lint:ignore ST1005 Redis's text, byte for byte (TestLatencyAgainstRedis).
			return nil, errors.New("Invalid latency-tracking-info-percentiles parameters")
		}
		if p > 100 || p < 0 {
			return nil, errors.New("latency-tracking-info-percentiles parameters should sit between [0.0,100.0]")
		}
		out = append(out, p)
	}
	return out, nil
}

// latencyParams are the latency CONFIG parameters.
func (e *Engine) latencyParams() []Param {
	return []Param{
		{Name: "latency-monitor-threshold", Get: func() string { return strconv.FormatInt(e.lat.threshold, 10) },
			Set: func(v string) error {
				n, ok := resp.ParseInt([]byte(v))
				switch {
				case !ok:
					return errors.New("argument couldn't be parsed into an integer")
				case n < 0:
					return errors.New("argument must be between 0 and 9223372036854775807 inclusive")
				}
				e.lat.threshold = n
				return nil
			}},
		YesNoParam("latency-tracking", func() bool { return e.lat.tracking }, func(b bool) { e.lat.tracking = b }),
		{Name: "latency-tracking-info-percentiles", Get: func() string {
			var b []byte
			for j, p := range e.lat.percentiles {
				if j > 0 {
					b = append(b, ' ')
				}
				b = strconv.AppendFloat(b, p, 'f', -1, 64)
			}
			return string(b)
		}, Set: func(v string) error {
			p, err := ParsePercentiles(v)
			if err == nil {
				e.lat.percentiles = p
			}
			return err
		}},
	}
}

// cmdHist is a command's latency histogram in nanoseconds, laid out as
// Redis's hdr_histogram (1 ns to 1 s, 2 significant figures: 128
// sub-buckets per power of two), so LATENCY HISTOGRAM's buckets and
// INFO's percentiles come out as Redis computes them.
type cmdHist struct {
	total  uint64
	counts [(hdrBuckets + 1) * hdrHalf]uint64
}

const (
	hdrHalfMag = 7 // log2 of half the sub-bucket count (256)
	hdrHalf    = 1 << hdrHalfMag
	hdrMask    = 2*hdrHalf - 1
	hdrBuckets = 23 // enough for latencyHistMax
)

func hdrBucket(v int64) int { return 64 - bits.LeadingZeros64(uint64(v)|hdrMask) - (hdrHalfMag + 1) }

func hdrIndex(v int64) int {
	b := hdrBucket(v)
	return (b+1)<<hdrHalfMag + int(v>>b) - hdrHalf
}

func hdrValue(i int) int64 {
	b, sub := i>>hdrHalfMag-1, int64(i&(hdrHalf-1))+hdrHalf
	if b < 0 {
		sub -= hdrHalf
		b = 0
	}
	return sub << b
}

func hdrHighest(v int64) int64 {
	b := hdrBucket(v)
	return (v>>b)<<b + 1<<b - 1
}

// recordN records n calls that took ns each.
func (h *cmdHist) recordN(ns int64, n uint64) {
	ns = min(max(ns, latencyHistMin), latencyHistMax)
	h.counts[hdrIndex(ns)] += n
	h.total += n
}

func (h *cmdHist) record(ns int64) {
	ns = min(max(ns, latencyHistMin), latencyHistMax)
	h.counts[hdrIndex(ns)]++
	h.total++
}

// percentile is hdr_value_at_percentile.
func (h *cmdHist) percentile(p float64) int64 {
	want := int64(min(p, 100)/100*float64(h.total) + 0.5)
	want = max(want, 1)
	var cum int64
	for i, c := range h.counts {
		cum += int64(c)
		if cum >= want {
			v := hdrValue(i)
			if p == 0 {
				return v
			}
			return hdrHighest(v)
		}
	}
	return 0
}

// cdf calls fn with Redis's log-iterator steps (1024 ns, doubling): the
// step's highest equivalent value in µs and the calls up to it, for the
// steps where that count grew.
func (h *cmdHist) cdf(fn func(us, cum int64)) {
	var cum, prev int64
	i := 0
	for level := int64(1024); cum < int64(h.total); level *= 2 {
		top := hdrIndex(level)
		for ; i <= top && i < len(h.counts); i++ {
			cum += int64(h.counts[i])
		}
		if cum > prev {
			fn(hdrHighest(level)/1000, cum)
		}
		prev = cum
	}
}
