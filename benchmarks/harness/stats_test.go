package harness

import (
	"math/rand/v2"
	"testing"
)

// Samples 1..N in random order have exactly known nearest-rank
// percentiles: the p-th percentile is ceil(p*N/100).
func TestPercentilesOfUniform(t *testing.T) {
	for _, n := range []int{1000, 100000, 12345} {
		r := NewRecorder(n)
		vals := rand.Perm(n)
		for _, v := range vals {
			r.Record(int64(v + 1))
		}
		s := r.Summarize()
		ceil := func(p float64) int64 { // ceil(p*n/100) in integers: p in thousandths of a percent
			milli := int64(p * 1000)
			return (milli*int64(n) + 100000 - 1) / 100000
		}
		want := Summary{Samples: n, P50: ceil(50), P90: ceil(90), P99: ceil(99), P999: ceil(99.9), Max: int64(n), Min: 1,
			Mean: float64(n+1) / 2}
		if s != want {
			t.Errorf("n=%d: got %+v, want %+v", n, s, want)
		}
	}
	// Spot values for N = 1000 written out, so the formula above is checked too.
	r := NewRecorder(1000)
	for i := 1000; i >= 1; i-- {
		r.Record(int64(i))
	}
	s := r.Summarize()
	if s.P50 != 500 || s.P90 != 900 || s.P99 != 990 || s.P999 != 999 || s.Max != 1000 || s.Mean != 500.5 {
		t.Errorf("1..1000: %+v, want p50 500, p90 900, p99 990, p99.9 999, max 1000, mean 500.5", s)
	}
}

func TestPercentileEdges(t *testing.T) {
	one := []int64{7}
	for _, q := range []float64{0, 0.1, 50, 99.999, 100} {
		if got := Percentile(one, q); got != 7 {
			t.Errorf("Percentile([7], %v) = %d", q, got)
		}
	}
	three := []int64{10, 20, 30}
	for q, want := range map[float64]int64{0: 10, 33: 10, 33.4: 20, 66.7: 30, 100: 30} {
		if got := Percentile(three, q); got != want {
			t.Errorf("Percentile(10,20,30; %v) = %d, want %d", q, got, want)
		}
	}
	if s := Summarize(nil); s != (Summary{}) {
		t.Errorf("Summarize(nil) = %+v", s)
	}
	d := Distribution([]int64{1, 2, 3, 4})
	if len(d) != len(DistributionPoints) || d[0] != 1 || d[len(d)-1] != 4 {
		t.Errorf("Distribution = %v", d)
	}
}

func TestRecorderDoesNotAllocate(t *testing.T) {
	r := NewRecorder(1 << 20)
	if a := testing.AllocsPerRun(10000, func() { r.Record(42) }); a != 0 {
		t.Errorf("Record allocates %.1f times", a)
	}
}

func TestCPUList(t *testing.T) {
	got, err := ParseCPUList("0,2-4,7")
	if err != nil || len(got) != 5 || formatCPUList(got) != "0,2-4,7" {
		t.Errorf("ParseCPUList = %v, %v; formatted %q", got, err, formatCPUList(got))
	}
	for _, bad := range []string{"a", "3-1", "-1", "1,"} {
		if _, err := ParseCPUList(bad); err == nil {
			t.Errorf("ParseCPUList(%q) accepted", bad)
		}
	}
}
