package engine

import (
	"testing"
	"time"

	"github.com/goblin-kv/goblin/command"
)

// Every timed call lands in the first bucket whose bound exceeds it, and
// CommandLatency hands out what the loop counted.
func TestLatencyHistogram(t *testing.T) {
	bounds := LatencyBounds()
	if len(bounds) != LatencyBuckets-1 || bounds[0] != 128e-9 || bounds[1] != 256e-9 {
		t.Fatalf("bounds %v", bounds)
	}
	var c cmdStat
	for _, d := range []uint64{0, 127, 128, 255, 256, 1000, 1 << 40} {
		c.observe(d)
	}
	want := [LatencyBuckets]uint64{0: 2, 1: 2, 2: 1, 3: 1, LatencyBuckets - 1: 1} // 1000 ns is under 1024 = 2^(7+3)
	if c.latency != want {
		t.Fatalf("buckets %v, want %v", c.latency, want)
	}
	e, _ := newEngine(t, Options{})
	s := e.Open(0, new(Stats))
	for range 3 * LatencySampling {
		e.ServeMessage(s, []byte("*1\r\n$4\r\nPING\r\n"), nil)
	}
	var dst [LatencyBuckets]uint64
	sum := e.CommandLatency(command.OpPing, &dst)
	var n uint64
	for _, x := range dst {
		n += x
	}
	if n < 3 || n > 4 || sum == 0 || time.Duration(sum) > time.Minute {
		t.Fatalf("after %d PINGs: %d timed calls, %d ns in all", 3*LatencySampling, n, sum)
	}
}

// BenchmarkLatencyObserve is what filling the histogram adds to a timed
// call: it must stay under 5 ns (and a request pays it one time in
// LatencySampling).
func BenchmarkLatencyObserve(b *testing.B) {
	b.ReportAllocs()
	var c cmdStat
	d := uint64(300)
	for b.Loop() {
		c.observe(d)
		d = d*7 + 13&0xfffff
	}
	if c.sampled == 0 {
		b.Fatal("nothing observed")
	}
}

// BenchmarkLatencyPerRequest is the histogram's cost per request as
// execute pays it: the countdown to the next timed call, and one observe
// in LatencySampling (the clock reads, older than the histogram, aside).
// Must stay under 5 ns.
func BenchmarkLatencyPerRequest(b *testing.B) {
	b.ReportAllocs()
	var c cmdStat
	left := 0
	for b.Loop() {
		if left--; left <= 0 {
			left = sampleEvery
			c.observe(uint64(c.calls) * 37)
		}
		c.calls++
	}
}
