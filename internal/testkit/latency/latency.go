// Package latency records round-trip times in nanoseconds and summarises
// them as the percentiles goblin's benchmarks report (p50, p90, p99, p99.9,
// max and mean). It wraps an HdrHistogram, so recording is a constant-time,
// allocation-free counter increment and the summary is accurate to three
// significant digits whatever the range.
//
// A Recorder is not safe for concurrent use: give each measuring goroutine
// its own and Merge them afterwards.
package latency

import (
	"fmt"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// DefaultMax is the largest latency a Recorder made by New tracks exactly:
// one minute. Longer samples are clamped to it and counted in Clamped.
const DefaultMax = int64(time.Minute)

// Recorder accumulates latency samples in nanoseconds.
type Recorder struct {
	h       *hdrhistogram.Histogram
	max     int64
	clamped int64
}

// New returns a Recorder for samples from 1 ns to DefaultMax with three
// significant digits.
func New() *Recorder { return NewWithMax(DefaultMax) }

// NewWithMax returns a Recorder for samples from 1 ns to maxNanos (at least
// 2 ns) with three significant digits.
func NewWithMax(maxNanos int64) *Recorder {
	if maxNanos < 2 {
		maxNanos = 2
	}
	return &Recorder{h: hdrhistogram.New(1, maxNanos, 3), max: maxNanos}
}

// Record adds one sample of ns nanoseconds. Samples below 1 ns count as
// 1 ns; samples above the recorder's maximum count as the maximum and are
// reported by Clamped. Record does not allocate.
func (r *Recorder) Record(ns int64) {
	if ns < 1 {
		ns = 1
	}
	if ns > r.max {
		ns = r.max
		r.clamped++
	}
	// Cannot fail: ns is within the histogram's trackable range.
	_ = r.h.RecordValue(ns)
}

// clockBase makes Now a small count of nanoseconds.
var clockBase = time.Now()

// Now is the monotonic clock in nanoseconds (since the process started):
// one read of the runtime's clock, cheaper than time.Now.
func Now() int64 { return int64(time.Since(clockBase)) }

// Rounds runs round n times back to back and records each one's duration,
// reading the clock once between rounds: the benchmarks' timing loop.
func (r *Recorder) Rounds(n int, round func()) {
	t0 := Now()
	for range n {
		round()
		t1 := Now()
		r.Record(t1 - t0)
		t0 = t1
	}
}

// RecordDuration adds one sample given as a time.Duration.
func (r *Recorder) RecordDuration(d time.Duration) { r.Record(int64(d)) }

// Since records the time elapsed since start and returns it.
func (r *Recorder) Since(start time.Time) time.Duration {
	d := time.Since(start)
	r.Record(int64(d))
	return d
}

// Count is the number of samples recorded since the last Reset.
func (r *Recorder) Count() int64 { return r.h.TotalCount() }

// Clamped is the number of samples that exceeded the maximum.
func (r *Recorder) Clamped() int64 { return r.clamped }

// Reset forgets every sample, e.g. at the end of a warm-up.
func (r *Recorder) Reset() {
	r.h.Reset()
	r.clamped = 0
}

// Merge adds other's samples into r.
func (r *Recorder) Merge(other *Recorder) {
	r.h.Merge(other.h)
	r.clamped += other.clamped
}

// Quantile returns the latency in nanoseconds at quantile q (0 < q ≤ 1),
// e.g. 0.999 for p99.9; 0 when nothing was recorded.
func (r *Recorder) Quantile(q float64) int64 {
	if r.h.TotalCount() == 0 {
		return 0
	}
	return r.h.ValueAtQuantile(q * 100)
}

// Summary is the usual digest of a latency distribution, in nanoseconds.
type Summary struct {
	Count                    int64
	Min, P50, P90, P99, P999 int64
	Max                      int64
	Mean                     float64
}

// Summary digests the recorded samples.
func (r *Recorder) Summary() Summary {
	if r.h.TotalCount() == 0 {
		return Summary{}
	}
	return Summary{
		Count: r.h.TotalCount(),
		Min:   r.h.Min(),
		P50:   r.h.ValueAtQuantile(50),
		P90:   r.h.ValueAtQuantile(90),
		P99:   r.h.ValueAtQuantile(99),
		P999:  r.h.ValueAtQuantile(99.9),
		Max:   r.h.Max(),
		Mean:  r.h.Mean(),
	}
}

// String formats the summary in microseconds, e.g.
// "n=1000 p50=12.3µs p90=… p99=… p99.9=… max=… mean=…".
func (s Summary) String() string {
	us := func(ns int64) string { return fmt.Sprintf("%.2fµs", float64(ns)/1e3) }
	return fmt.Sprintf("n=%d p50=%s p90=%s p99=%s p99.9=%s max=%s mean=%.2fµs",
		s.Count, us(s.P50), us(s.P90), us(s.P99), us(s.P999), us(s.Max), s.Mean/1e3)
}

// MetricReporter is the part of *testing.B that Report uses; taking the
// interface keeps package testing out of binaries that record latency.
type MetricReporter interface {
	ReportMetric(n float64, unit string)
}

// Report attaches the summary to a benchmark (a *testing.B) as custom
// metrics named p50-ns, p90-ns, p99-ns, p99.9-ns, max-ns and mean-ns, so
// benchstat can compare them across runs.
func (r *Recorder) Report(b MetricReporter) {
	s := r.Summary()
	b.ReportMetric(float64(s.P50), "p50-ns")
	b.ReportMetric(float64(s.P90), "p90-ns")
	b.ReportMetric(float64(s.P99), "p99-ns")
	b.ReportMetric(float64(s.P999), "p99.9-ns")
	b.ReportMetric(float64(s.Max), "max-ns")
	b.ReportMetric(s.Mean, "mean-ns")
}
