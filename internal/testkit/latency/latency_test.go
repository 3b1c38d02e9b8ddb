package latency

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestUniformPercentiles(t *testing.T) {
	r := New()
	for i := int64(1); i <= 100000; i++ {
		r.Record(i * 10) // 10 ns .. 1 ms, uniform
	}
	s := r.Summary()
	if s.Count != 100000 {
		t.Fatalf("Count = %d, want 100000", s.Count)
	}
	check := func(name string, got, want int64) {
		t.Helper()
		// three significant digits: allow 0.1% relative error.
		if math.Abs(float64(got-want)) > float64(want)*0.001+1 {
			t.Errorf("%s = %d, want %d ±0.1%%", name, got, want)
		}
	}
	check("min", s.Min, 10)
	check("p50", s.P50, 500000)
	check("p90", s.P90, 900000)
	check("p99", s.P99, 990000)
	check("p99.9", s.P999, 999000)
	check("max", s.Max, 1000000)
	if math.Abs(s.Mean-500005) > 500 {
		t.Errorf("mean = %f, want about 500005", s.Mean)
	}
	check("Quantile(0.99)", r.Quantile(0.99), 990000)
}

func TestResetAndEmpty(t *testing.T) {
	r := New()
	if s := r.Summary(); s != (Summary{}) {
		t.Fatalf("empty summary = %+v", s)
	}
	if q := r.Quantile(0.5); q != 0 {
		t.Fatalf("empty Quantile = %d", q)
	}
	r.Record(1234)
	r.Record(5678)
	r.Reset()
	if r.Count() != 0 {
		t.Fatalf("Count after Reset = %d", r.Count())
	}
	r.Record(42)
	if s := r.Summary(); s.P50 != 42 || s.Max != 42 || s.Count != 1 {
		t.Fatalf("after Reset+Record(42): %+v", s)
	}
}

func TestClampAndMerge(t *testing.T) {
	r := NewWithMax(int64(time.Millisecond))
	r.Record(-5)
	r.Record(int64(time.Second))
	if r.Clamped() != 1 {
		t.Fatalf("Clamped = %d, want 1", r.Clamped())
	}
	if got := r.Summary().Min; got != 1 {
		t.Fatalf("Min = %d, want 1 (negative clamps to 1)", got)
	}
	if mx := r.Summary().Max; mx < int64(time.Millisecond)*999/1000 || mx > int64(time.Millisecond)*1001/1000 {
		t.Fatalf("Max = %d, want about 1ms", mx)
	}
	o := NewWithMax(int64(time.Millisecond))
	o.Record(500)
	o.RecordDuration(2 * time.Second)
	r.Merge(o)
	if r.Count() != 4 || r.Clamped() != 2 {
		t.Fatalf("after Merge Count=%d Clamped=%d, want 4 and 2", r.Count(), r.Clamped())
	}
}

type fakeB map[string]float64

func (f fakeB) ReportMetric(n float64, unit string) { f[unit] = n }

func TestReportAndString(t *testing.T) {
	r := New()
	for i := 0; i < 1000; i++ {
		r.Record(2000)
	}
	m := fakeB{}
	r.Report(m)
	for _, k := range []string{"p50-ns", "p90-ns", "p99-ns", "p99.9-ns", "max-ns", "mean-ns"} {
		if v, ok := m[k]; !ok || v < 1990 || v > 2010 {
			t.Errorf("metric %s = %v (present %v), want about 2000", k, v, ok)
		}
	}
	if s := r.Summary().String(); !strings.Contains(s, "p50=2.00µs") || !strings.Contains(s, "n=1000") {
		t.Errorf("String() = %q", s)
	}
}

func TestRecordDoesNotAllocate(t *testing.T) {
	r := New()
	n := int64(0)
	if a := testing.AllocsPerRun(1000, func() { n += 37; r.Record(n) }); a != 0 {
		t.Fatalf("Record allocates %v times per call", a)
	}
}

func BenchmarkRecord(b *testing.B) {
	r := New()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.Record(int64(i&0xffff) + 100)
	}
}

func TestRounds(t *testing.T) {
	r := New()
	calls := 0
	r.Rounds(5, func() { calls++ })
	if calls != 5 || r.Count() != 5 {
		t.Fatalf("Rounds(5): %d calls, %d samples", calls, r.Count())
	}
}
