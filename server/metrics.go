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
	mu      sync.Mutex // guards series and sources while they are set up
	series  []*series
	sources []func()
}

// series is one time series: a fixed name and label set and a value.
type series struct {
	desc  *prometheus.Desc
	typ   prometheus.ValueType
	scale float64
	v     atomic.Int64 // written by Publish (loop), read by Collect (scrape)
}

// Series is a handle a source writes a value to at publish time.
type Series struct{ s *series }

// Set stores v; call it from the publishing (loop) goroutine.
func (s Series) Set(v int64) { s.s.v.Store(v) }

// NewMetrics returns an empty Metrics.
func NewMetrics() *Metrics { return &Metrics{} }

// Counter adds a counter series named goblin_<name> with fixed labels.
func (m *Metrics) Counter(name, help string, labels prometheus.Labels) Series {
	return m.add(name, help, prometheus.CounterValue, 1, labels)
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
}

// Collect implements prometheus.Collector. It takes no lock the loop
// takes: it reads the values Publish stored.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	all := m.series
	m.mu.Unlock()
	for _, s := range all {
		ch <- prometheus.MustNewConstMetric(s.desc, s.typ, float64(s.v.Load())*s.scale)
	}
}
