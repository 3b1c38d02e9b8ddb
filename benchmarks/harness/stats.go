package harness

import (
	"fmt"
	"math"
	"slices"
)

// Summary is the latency distribution of one measured operation, in
// nanoseconds, computed exactly from every recorded sample.
type Summary struct {
	Samples int
	P50     int64
	P90     int64
	P99     int64
	P999    int64
	Max     int64
	Min     int64
	Mean    float64
}

// Recorder keeps every sample of one measured operation in a buffer
// allocated up front, so recording allocates nothing and the percentiles
// are exact rather than bucketed. 100,000 samples cost 800 KB.
type Recorder struct {
	Samples []int64
}

// NewRecorder returns a Recorder with room for n samples.
func NewRecorder(n int) *Recorder {
	return &Recorder{Samples: make([]int64, 0, n)}
}

// Record adds one sample (nanoseconds). It never allocates while fewer than
// the capacity given to NewRecorder have been recorded.
func (r *Recorder) Record(ns int64) {
	r.Samples = append(r.Samples, ns)
}

// Reset forgets every sample and keeps the buffer.
func (r *Recorder) Reset() { r.Samples = r.Samples[:0] }

// Len is the number of samples recorded.
func (r *Recorder) Len() int { return len(r.Samples) }

// Sorted sorts the samples in place and returns them; the Recorder keeps
// ownership.
func (r *Recorder) Sorted() []int64 {
	slices.Sort(r.Samples)
	return r.Samples
}

// Summarize sorts the samples and computes the summary.
func (r *Recorder) Summarize() Summary {
	return Summarize(r.Sorted())
}

// Summarize computes the summary of samples that are already sorted in
// ascending order. Percentiles use the nearest-rank definition: the q-th
// percentile is the smallest sample such that at least q% of the samples
// are at or below it, so for the samples 1..N the p-th percentile is
// ceil(p*N/100).
func Summarize(sorted []int64) Summary {
	if len(sorted) == 0 {
		return Summary{}
	}
	var sum float64
	for _, v := range sorted {
		sum += float64(v)
	}
	return Summary{
		Samples: len(sorted),
		P50:     Percentile(sorted, 50),
		P90:     Percentile(sorted, 90),
		P99:     Percentile(sorted, 99),
		P999:    Percentile(sorted, 99.9),
		Max:     sorted[len(sorted)-1],
		Min:     sorted[0],
		Mean:    sum / float64(len(sorted)),
	}
}

// Percentile returns the nearest-rank q-th percentile (0 < q <= 100) of
// ascending samples; q <= 0 gives the minimum. It panics on an empty slice
// (programmer error).
func Percentile(sorted []int64, q float64) int64 {
	if len(sorted) == 0 {
		panic("harness: percentile of no samples")
	}
	if q <= 0 {
		return sorted[0]
	}
	// The rank is computed in integer arithmetic on q scaled to parts per
	// million so that, e.g., 99.9% of 1000 samples is exactly rank 999 and
	// not 999.0000000000001 rounded up to 1000.
	ppm := int64(math.Round(q * 10000))
	n := int64(len(sorted))
	rank := (ppm*n + 999999) / 1000000 // ceil(q/100 * n)
	if rank < 1 {
		rank = 1
	}
	if rank > n {
		rank = n
	}
	return sorted[rank-1]
}

// DistributionPoints are the percentiles written to each case's
// distribution file and drawn in its percentile plot: dense toward the tail,
// as HdrHistogram's percentile distribution is.
var DistributionPoints = []float64{
	0, 10, 20, 30, 40, 50, 60, 70, 75, 80, 85, 90, 92.5, 95, 96, 97, 97.5, 98, 98.5, 99,
	99.25, 99.5, 99.75, 99.9, 99.95, 99.99, 99.995, 99.999, 100,
}

// Distribution returns the sample value at every point of DistributionPoints.
func Distribution(sorted []int64) []int64 {
	out := make([]int64, len(DistributionPoints))
	for i, q := range DistributionPoints {
		out[i] = Percentile(sorted, q)
	}
	return out
}

// Micros formats nanoseconds as microseconds with three decimals, the unit
// every table and CSV in the archive uses.
func Micros(ns float64) string {
	return fmt.Sprintf("%.3f", ns/1000)
}
