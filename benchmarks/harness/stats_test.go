package harness

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/internal/testkit/latency"
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

// A fixture in the format HdrHistogram's outputPercentileDistribution
// prints (values in µs).
const hdrFixture = `Histogram of RTT latencies in microseconds.
       Value     Percentile TotalCount 1/(1-Percentile)

       0.500 0.000000000000          1           1.00
       0.700 0.500000000000        500           2.00
       0.900 0.900000000000        900          10.00
       1.500 0.990000000000        990         100.00
       9.000 0.999000000000        999        1000.00
      20.000 1.000000000000       1000
#[Mean    =        0.812, StdDeviation   =        0.700]
#[Max     =       20.000, Total count    =         1000]
#[Buckets =           24, SubBuckets     =         2048]
`

func TestParseHdrPercentiles(t *testing.T) {
	s, dist, err := parseHdrPercentiles(hdrFixture)
	if err != nil {
		t.Fatal(err)
	}
	want := Summary{Samples: 1000, P50: 700, P90: 900, P99: 1500, P999: 9000, Max: 20000, Min: 500, Mean: 812}
	if s != want {
		t.Errorf("got %+v, want %+v", s, want)
	}
	if dist[0] != 500 || dist[len(dist)-1] != 20000 {
		t.Errorf("distribution ends %d..%d", dist[0], dist[len(dist)-1])
	}
	if _, _, err := parseHdrPercentiles(strings.ReplaceAll(hdrFixture, "#[Max", "#[Nope")); err == nil {
		t.Error("output without a total count was accepted")
	}
}

// The exact percentiles agree with goblin's HdrHistogram recorder
// (internal/testkit/latency, three significant digits) on a long-tailed
// distribution: two independent computations of the same figures.
func TestExactPercentilesAgreeWithHDR(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 200000
	exact := NewRecorder(n)
	hdr := latency.New()
	for i := 0; i < n; i++ {
		// Mostly 300 ns–3 µs, with a tail to a millisecond.
		v := int64(300 + rng.ExpFloat64()*700)
		if rng.IntN(1000) == 0 {
			v += rng.Int64N(1_000_000)
		}
		exact.Record(v)
		hdr.Record(v)
	}
	s := exact.Summarize()
	h := hdr.Summary()
	check := func(name string, got, want int64) {
		t.Helper()
		if d := math.Abs(float64(got-want)) / float64(want); d > 0.002 {
			t.Errorf("%s: exact %d, HdrHistogram %d (%.2f%% apart)", name, got, want, 100*d)
		}
	}
	check("p50", s.P50, h.P50)
	check("p90", s.P90, h.P90)
	check("p99", s.P99, h.P99)
	check("p99.9", s.P999, h.P999)
	check("max", s.Max, h.Max)
}
