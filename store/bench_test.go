package store

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Benchmarks. The comparison ones run ours beside a plain map[string][]byte in the
// same process; the heavy ones (Memory, GC at 10 M keys) are meant for
// -benchtime=1x. docs/store.md has the commands and the figures.

// splitmix64 gives reproducible, well-spread key bytes without holding keys in memory.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// benchKey writes the i-th 16-byte key of a key set into k.
func benchKey(k *[16]byte, set, i uint64) {
	binary.LittleEndian.PutUint64(k[:8], splitmix64(i^set<<56))
	binary.LittleEndian.PutUint64(k[8:], splitmix64(i^set<<56^0x5555))
}

const benchKeys = 1 << 20 // "1 M random keys"

var benchVal = []byte("0123456789abcdef") // 16 bytes: 6 inline, 11-byte tail

// loadStore returns a store holding n keys of set 0.
func loadStore(b *testing.B, n int) *Store {
	s, err := New(Options{Clock: NewFakeClock(1), InitialCapacity: 0})
	if err != nil {
		b.Fatal(err)
	}
	var k [16]byte
	for i := 0; i < n; i++ {
		benchKey(&k, 0, uint64(i))
		if _, _, _, err := s.Set(nil, k[:], benchVal, SetOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	for s.Tick(1<<16) > 0 {
	}
	return s
}

func loadMap(n int) map[string][]byte {
	m := make(map[string][]byte)
	var k [16]byte
	for i := 0; i < n; i++ {
		benchKey(&k, 0, uint64(i))
		m[string(k[:])] = append([]byte(nil), benchVal...)
	}
	return m
}

// order is a pseudo-random walk over the key indices, so lookups miss the cache as
// they would under real traffic.
func order(i int) uint64 { return splitmix64(uint64(i)^0xabcdef) & (benchKeys - 1) }

// BenchmarkOps: GET hit, GET miss, SET new key, SET overwrite at 1 M random 16-byte
// keys with 16-byte values, store beside map.
func BenchmarkOps(b *testing.B) {
	var s *Store
	var m map[string][]byte
	fixtures := func(b *testing.B) {
		if s == nil {
			b.StopTimer()
			s, m = loadStore(b, benchKeys), loadMap(benchKeys)
			runtime.GC()
			b.StartTimer()
		}
	}
	// GET of keys the store holds (set 0) and of keys it does not (set 1).
	for _, get := range []struct {
		name string
		set  uint64
	}{{"GetHit", 0}, {"GetMiss", 1}} {
		for _, side := range []string{"store", "map"} {
			b.Run(get.name+"/"+side, func(b *testing.B) {
				fixtures(b)
				b.ReportAllocs()
				var k [16]byte
				dst := make([]byte, 0, 64)
				store := side == "store"
				for i := 0; i < b.N; i++ {
					benchKey(&k, get.set, order(i))
					if store {
						dst, _ = s.Get(dst[:0], k[:])
					} else {
						dst = append(dst[:0], m[string(k[:])]...)
					}
				}
			})
		}
	}
	b.Run("SetOverwrite/store", func(b *testing.B) {
		fixtures(b)
		storeSets(b, s, 0, true)
	})
	b.Run("SetOverwrite/map", func(b *testing.B) {
		fixtures(b)
		b.ReportAllocs()
		var k [16]byte
		for i := 0; i < b.N; i++ {
			benchKey(&k, 0, order(i))
			// The map's best case: reuse the old value's memory (one lookup, no garbage).
			if old := m[string(k[:])]; len(old) == len(benchVal) {
				copy(old, benchVal)
			} else {
				m[string(k[:])] = append([]byte(nil), benchVal...)
			}
		}
	})
	// SET of keys never seen, into a store that starts with 1 M keys; both sides grow
	// (the store's index incrementally).
	b.Run("SetNew/store", func(b *testing.B) {
		b.StopTimer()
		s := loadStore(b, benchKeys)
		runtime.GC()
		b.StartTimer()
		storeSets(b, s, 2, false)
	})
	b.Run("SetNew/map", func(b *testing.B) {
		b.StopTimer()
		m := loadMap(benchKeys)
		runtime.GC()
		b.StartTimer()
		b.ReportAllocs()
		var k [16]byte
		for i := 0; i < b.N; i++ {
			benchKey(&k, 2, uint64(i))
			m[string(k[:])] = append([]byte(nil), benchVal...)
		}
	})
}

// storeSets times b.N SETs into s of keys of key set ks: its keys in the
// random order when random (overwrites of keys s holds), else in sequence
// (new keys).
func storeSets(b *testing.B, s *Store, ks uint64, random bool) {
	b.ReportAllocs()
	var k [16]byte
	for i := 0; i < b.N; i++ {
		at := uint64(i)
		if random {
			at = order(i)
		}
		benchKey(&k, ks, at)
		s.Set(nil, k[:], benchVal, SetOptions{})
	}
}

// reportQuantiles reports h's p50, p99, p99.9, p99.99 and max.
func reportQuantiles(b *testing.B, h *hdrhistogram.Histogram) {
	b.ReportMetric(float64(h.ValueAtQuantile(50)), "p50-ns")
	b.ReportMetric(float64(h.ValueAtQuantile(99)), "p99-ns")
	b.ReportMetric(float64(h.ValueAtQuantile(99.9)), "p99.9-ns")
	b.ReportMetric(float64(h.ValueAtQuantile(99.99)), "p99.99-ns")
	b.ReportMetric(float64(h.Max()), "max-ns")
}

// BenchmarkOverwriteLatency overwrites one key with a 16-byte value b.N times (run it
// with -benchtime=1000000x), reading the monotonic clock around each call, and reports
// the distribution. Beside every timed call it also times an empty pair of clock
// reads: clock-* is that baseline (the clock's own cost, included in every sample, and
// the machine's scheduling noise: a max there means the thread was descheduled, not
// that the store paused).
func BenchmarkOverwriteLatency(b *testing.B) {
	s, err := New(Options{Clock: NewFakeClock(1)})
	if err != nil {
		b.Fatal(err)
	}
	key := []byte("key:000000000001")
	val := append([]byte(nil), benchVal...)
	s.Set(nil, key, val, SetOptions{})
	empty := hdrhistogram.New(1, 100_000_000, 3)
	h := hdrhistogram.New(1, 100_000_000, 3)
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		val[15] = byte(i)
		t0 := time.Now()
		empty.RecordValue(int64(time.Since(t0)))
		t0 = time.Now()
		s.Set(nil, key, val, SetOptions{})
		h.RecordValue(int64(time.Since(t0)))
	}
	b.StopTimer()
	reportQuantiles(b, h)
	b.ReportMetric(float64(empty.ValueAtQuantile(50)), "clock-p50-ns")
	b.ReportMetric(float64(empty.ValueAtQuantile(99.99)), "clock-p99.99-ns")
	b.ReportMetric(float64(empty.Max()), "clock-max-ns")
	over := func(h *hdrhistogram.Histogram) float64 {
		n := int64(0)
		for _, bar := range h.Distribution() {
			if bar.From > 5000 {
				n += bar.Count
			}
		}
		return float64(n)
	}
	b.ReportMetric(over(h), "samples>5µs")
	b.ReportMetric(over(empty), "clock-samples>5µs")
	var st Stats
	s.Stats(&st)
	b.ReportMetric(float64(st.ArenaDead), "arena-dead-bytes")
}

// rss returns the process's resident set in bytes.
func rss(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		b.Skip("no /proc/self/statm:", err)
	}
	f := strings.Fields(string(data))
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// BenchmarkMemory loads 16-byte keys with 16-byte values and reports the process's
// RSS growth per key (and the Go runtime's view, heap Sys minus released).
// Run with -benchtime=1x; keys=10M takes a few seconds and about 700 MB.
func BenchmarkMemory(b *testing.B) {
	for _, n := range []int{1_000_000, 10_000_000} {
		b.Run(fmt.Sprintf("keys=%dM", n/1_000_000), func(b *testing.B) {
			for range b.N {
				runtime.GC()
				debug.FreeOSMemory()
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				r0 := rss(b)
				s := loadStore(b, n)
				runtime.GC()
				debug.FreeOSMemory()
				runtime.ReadMemStats(&m1)
				r1 := rss(b)
				var st Stats
				s.Stats(&st)
				b.ReportMetric(float64(r1-r0)/float64(n), "rss-B/key")
				b.ReportMetric(float64((m1.Sys-m1.HeapReleased)-(m0.Sys-m0.HeapReleased))/float64(n), "go-sys-B/key")
				b.ReportMetric(float64(st.UsedMemory)/float64(n), "used-B/key")
				runtime.KeepAlive(s)
			}
		})
	}
}

// BenchmarkGC loads n keys, then measures forced collections: the scannable heap (what
// the collector must trace), the CPU time the collector spent per cycle, the longest
// stop-the-world pause during the measured cycles (upper bound of its histogram
// bucket) and the wall time of runtime.GC. With the keyspace pointer-free, none
// should grow with n.
func BenchmarkGC(b *testing.B) {
	type peer struct {
		name string
		n    int
	}
	for _, p := range []peer{{"store", 100_000}, {"store", 1_000_000}, {"store", 10_000_000}, {"map", 1_000_000}} {
		n := p.n
		b.Run(fmt.Sprintf("%s/keys=%d", p.name, n), func(b *testing.B) {
			var s any
			if p.name == "map" {
				s = loadMap(n)
			} else {
				s = loadStore(b, n)
			}
			runtime.GC()
			samples := []metrics.Sample{
				{Name: "/gc/scan/heap:bytes"},
				{Name: "/sched/pauses/total/gc:seconds"},
				{Name: "/cpu/classes/gc/total:cpu-seconds"},
			}
			metrics.Read(samples)
			pauses0 := slices.Clone(samples[1].Value.Float64Histogram().Counts)
			cpu0 := samples[2].Value.Float64()
			b.ResetTimer()
			var wall time.Duration
			for range b.N {
				t0 := time.Now()
				runtime.GC()
				wall += time.Since(t0)
			}
			b.StopTimer()
			metrics.Read(samples)
			b.ReportMetric(float64(samples[0].Value.Uint64()), "scan-heap-bytes")
			h := samples[1].Value.Float64Histogram()
			maxPause := 0.0
			for i, c := range h.Counts {
				if c > pauses0[i] {
					maxPause = h.Buckets[i+1] // upper bound of the bucket
				}
			}
			b.ReportMetric(maxPause*1e6, "max-pause-µs")
			b.ReportMetric((samples[2].Value.Float64()-cpu0)*1e6/float64(b.N), "gc-cpu-µs")
			b.ReportMetric(float64(wall.Microseconds())/float64(b.N), "gc-wall-µs")
			runtime.KeepAlive(s)
		})
	}
}

// BenchmarkInsertLatency inserts b.N new 16-byte keys into an empty store (and, as
// the peer, into an empty map) timing each call: the index doubles many times on the
// way, incrementally, so the tail should show no rehash pause. Run with
// -benchtime=4000000x.
func BenchmarkInsertLatency(b *testing.B) {
	for _, side := range []string{"store", "map"} {
		b.Run(side, func(b *testing.B) {
			s, err := New(Options{Clock: NewFakeClock(1)})
			if err != nil {
				b.Fatal(err)
			}
			m := make(map[string][]byte)
			h := hdrhistogram.New(1, 1_000_000_000, 3)
			var k [16]byte
			runtime.GC()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				benchKey(&k, 3, uint64(i))
				t0 := time.Now()
				if side == "store" {
					s.Set(nil, k[:], benchVal, SetOptions{})
				} else {
					m[string(k[:])] = append([]byte(nil), benchVal...)
				}
				h.RecordValue(int64(time.Since(t0)))
			}
			b.StopTimer()
			reportQuantiles(b, h)
			runtime.KeepAlive(s)
			runtime.KeepAlive(m)
		})
	}
}

// BenchmarkTickIdle measures an idle store's Tick (no resize, no TTLs, no
// memory cap, nothing to compact), which the server loop runs every few
// microseconds when no request comes: 100,000 keys loaded.
//
//	go test -run '^$' -bench TickIdle -count 10 ./store/
func BenchmarkTickIdle(b *testing.B) {
	s := loadStore(b, 100_000)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if s.Tick(256) != 0 {
			b.Fatal("an idle store's Tick did work")
		}
	}
}
