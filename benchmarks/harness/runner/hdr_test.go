package runner

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/benchmarks/harness"
	"github.com/goblin-kv/goblin/internal/testkit/latency"
)

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
	want := harness.Summary{Samples: 1000, P50: 700, P90: 900, P99: 1500, P999: 9000, Max: 20000, Min: 500, Mean: 812}
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
	exact := harness.NewRecorder(n)
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
