package store

import "testing"

// BenchmarkCachedOps: GET hit, GET miss and SET overwrite over 4,096 random
// 16-byte keys with 16-byte values, a key set that stays in the CPU caches:
// the store's own instructions per operation without BenchmarkOps's memory
// stalls, so a change to the lookup or the block layout shows here first
// (and a busy machine's cache pressure shows less).
func BenchmarkCachedOps(b *testing.B) {
	const n = 1 << 12
	s := loadStore(b, n)
	var k [16]byte
	dst := make([]byte, 0, 64)
	for _, c := range []struct {
		name string
		set  uint64
		op   func()
	}{
		{"GetHit", 0, func() { dst, _ = s.Get(dst[:0], k[:]) }},
		{"GetMiss", 1, func() { dst, _ = s.Get(dst[:0], k[:]) }},
		{"SetOverwrite", 0, func() { s.Set(nil, k[:], benchVal, SetOptions{}) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				benchKey(&k, c.set, uint64(i)*0x9e37&(n-1))
				c.op()
			}
		})
	}
}
