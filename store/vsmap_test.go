package store

import (
	"runtime"
	"slices"
	"testing"
	"time"
)

// BenchmarkVsMap runs the same work on the store and on a map[string][]byte in
// alternating batches of vsBatch operations, b.N rounds (run with -benchtime=30x), and
// reports each side's median and best ns/op and the ratio store/map of the medians.
// Interleaving keeps a busy, shared machine's noise from favouring either side.
func BenchmarkVsMap(b *testing.B) {
	const vsBatch = 50_000
	s, m := loadStore(b, benchKeys), loadMap(benchKeys)
	runtime.GC()
	type op struct {
		name    string
		store   func(i int)
		mapSide func(i int)
	}
	var k [16]byte
	dst := make([]byte, 0, 64)
	var newS, newM int
	ops := []op{
		{name: "GetHit",
			store:   func(i int) { benchKey(&k, 0, order(i)); dst, _ = s.Get(dst[:0], k[:]) },
			mapSide: func(i int) { benchKey(&k, 0, order(i)); dst = append(dst[:0], m[string(k[:])]...) }},
		{name: "GetMiss",
			store:   func(i int) { benchKey(&k, 1, order(i)); dst, _ = s.Get(dst[:0], k[:]) },
			mapSide: func(i int) { benchKey(&k, 1, order(i)); dst = append(dst[:0], m[string(k[:])]...) }},
		{name: "SetOverwrite",
			store: func(i int) { benchKey(&k, 0, order(i)); s.Set(nil, k[:], benchVal, SetOptions{}) },
			mapSide: func(i int) {
				benchKey(&k, 0, order(i))
				if old := m[string(k[:])]; len(old) == len(benchVal) {
					copy(old, benchVal)
				} else {
					m[string(k[:])] = append([]byte(nil), benchVal...)
				}
			}},
		{name: "SetNew",
			store:   func(int) { benchKey(&k, 2, uint64(newS)); newS++; s.Set(nil, k[:], benchVal, SetOptions{}) },
			mapSide: func(int) { benchKey(&k, 2, uint64(newM)); newM++; m[string(k[:])] = append([]byte(nil), benchVal...) }},
	}
	for _, o := range ops {
		b.Run(o.name, func(b *testing.B) {
			var st, mt []float64
			base := 0
			batch := func(f func(int)) float64 {
				t0 := time.Now()
				for i := base; i < base+vsBatch; i++ {
					f(i)
				}
				return float64(time.Since(t0).Nanoseconds()) / vsBatch
			}
			for r := 0; r < b.N; r++ {
				if r%2 == 0 {
					st = append(st, batch(o.store))
					mt = append(mt, batch(o.mapSide))
				} else {
					mt = append(mt, batch(o.mapSide))
					st = append(st, batch(o.store))
				}
				base += vsBatch
			}
			slices.Sort(st)
			slices.Sort(mt)
			sm, mm := st[len(st)/2], mt[len(mt)/2]
			b.ReportMetric(sm, "store-ns/op")
			b.ReportMetric(mm, "map-ns/op")
			b.ReportMetric(st[0], "store-best-ns/op")
			b.ReportMetric(mt[0], "map-best-ns/op")
			b.ReportMetric(sm/mm, "ratio")
		})
	}
}
