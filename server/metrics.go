package server

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics is the bridge between the loop's plain counters and Prometheus.
//
// The loop goroutine owns every counter it increments (no atomics, no
// lock on the request path). Every Options.MetricsInterval, and when the
// loop stops, it calls Publish, which copies each counter into its
// series' atomic value. Collect, on the HTTP handler's goroutine, loads
// those atomics. Ordering: each series is written by one atomic Store
// (the loop) and read by one atomic Load (the scrape); a scrape may see
// some series from one publish and some from the next, which Prometheus
// tolerates since every counter is monotonic.
type Metrics struct {
	mu      sync.Mutex // guards series, hists and sources while they are set up
	series  []*series
	hists   []*Histogram
	sources []func()
}

// series is one time series: a fixed name and label set and a value.
type series struct {
	desc  *prometheus.Desc
	typ   prometheus.ValueType
	scale float64
	v     atomic.Int64 // written by Publish (loop), read by Collect (scrape)
	// sparse: exported only once it has been non-zero (seen), so a family
	// with a label per possible value (every command) shows the ones that
	// happened rather than hundreds of zeros.
	sparse bool
	seen   atomic.Bool // written by Set (loop), read by Collect (scrape)
}

// Series is a handle a source writes a value to at publish time.
type Series struct{ s *series }

// Set stores v; call it from the publishing (loop) goroutine.
func (s Series) Set(v int64) {
	s.s.v.Store(v)
	if v != 0 && s.s.sparse && !s.s.seen.Load() {
		s.s.seen.Store(true)
	}
}

// NewMetrics returns an empty Metrics.
func NewMetrics() *Metrics { return &Metrics{} }

// Counter adds a counter series named goblin_<name> with fixed labels.
func (m *Metrics) Counter(name, help string, labels prometheus.Labels) Series {
	return m.add(name, help, prometheus.CounterValue, 1, labels)
}

// SparseCounter adds a counter series that is exported from the first
// publish at which it is non-zero on (a counter reset to zero after that
// stays exported): a family labelled by every possible command creates the
// series of a command when it is first seen, at publish time, and the
// request path only increments its plain counter as before.
func (m *Metrics) SparseCounter(name, help string, labels prometheus.Labels) Series {
	s := m.add(name, help, prometheus.CounterValue, 1, labels)
	s.s.sparse = true
	return s
}

// Gauge adds a gauge series.
func (m *Metrics) Gauge(name, help string, labels prometheus.Labels) Series {
	return m.add(name, help, prometheus.GaugeValue, 1, labels)
}

// Seconds adds a counter series whose value is given in nanoseconds and
// exported in seconds.
func (m *Metrics) Seconds(name, help string, labels prometheus.Labels) Series {
	return m.add(name, help, prometheus.CounterValue, 1e-9, labels)
}

func (m *Metrics) add(name, help string, typ prometheus.ValueType, scale float64, labels prometheus.Labels) Series {
	s := &series{desc: prometheus.NewDesc("goblin_"+name, help, nil, labels), typ: typ, scale: scale}
	m.mu.Lock()
	m.series = append(m.series, s)
	m.mu.Unlock()
	return Series{s}
}

// Histogram is a histogram series with fixed bucket bounds, filled at
// publish time from counts the loop keeps in a plain array it owns. The
// same ordering as a Series holds, bucket by bucket: a scrape may see a
// bucket from one publish beside another from the next, so it may be off
// by a publish's worth of calls, never by more.
type Histogram struct {
	desc   *prometheus.Desc
	bounds []float64       // upper bounds in seconds; the last bucket is +Inf
	counts []atomic.Uint64 // per bucket, not cumulative; written by Set (loop), read by Collect
	sum    atomic.Uint64   // nanoseconds
}

// Histogram adds a histogram series named goblin_<name> whose values are
// nanoseconds exported as seconds; bounds are the upper bounds of all but
// the last bucket, in seconds.
func (m *Metrics) Histogram(name, help string, labels prometheus.Labels, bounds []float64) *Histogram {
	h := &Histogram{
		desc:   prometheus.NewDesc("goblin_"+name, help, nil, labels),
		bounds: bounds,
		counts: make([]atomic.Uint64, len(bounds)+1),
	}
	m.mu.Lock()
	m.hists = append(m.hists, h)
	m.mu.Unlock()
	return h
}

// Set stores the per-bucket counts (len(bounds)+1 of them, not
// cumulative) and the sum of the observations in nanoseconds; call it from
// the publishing (loop) goroutine.
func (h *Histogram) Set(counts []uint64, sumNanos uint64) {
	for i := range h.counts {
		h.counts[i].Store(counts[i])
	}
	h.sum.Store(sumNanos)
}

// collect sends h unless it has no observation yet.
func (h *Histogram) collect(ch chan<- prometheus.Metric) {
	cum := make(map[float64]uint64, len(h.bounds))
	var n uint64
	for i, b := range h.bounds {
		n += h.counts[i].Load()
		cum[b] = n
	}
	n += h.counts[len(h.bounds)].Load()
	if n == 0 {
		return
	}
	ch <- prometheus.MustNewConstHistogram(h.desc, n, float64(h.sum.Load())*1e-9, cum)
}

// Source registers fn, which the loop calls at every publish to Set the
// series it owns.
func (m *Metrics) Source(fn func()) {
	m.mu.Lock()
	m.sources = append(m.sources, fn)
	m.mu.Unlock()
}

// Publish runs every source. It is called from the loop goroutine.
func (m *Metrics) Publish() {
	for _, fn := range m.sources {
		fn()
	}
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.series {
		ch <- s.desc
	}
	for _, h := range m.hists {
		ch <- h.desc
	}
}

// Collect implements prometheus.Collector. It takes no lock the loop
// takes: it reads the values Publish stored.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	all, hists := m.series, m.hists
	m.mu.Unlock()
	for _, s := range all {
		if s.sparse && !s.seen.Load() {
			continue
		}
		ch <- prometheus.MustNewConstMetric(s.desc, s.typ, float64(s.v.Load())*s.scale)
	}
	for _, h := range hists {
		h.collect(ch)
	}
}
