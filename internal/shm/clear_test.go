package shm

import (
	"bytes"
	"testing"
)

// TestClearNonTemporal zeroes exactly the slice it is given, for lengths
// that are and are not whole lines and words, at aligned offsets.
func TestClearNonTemporal(t *testing.T) {
	for _, off := range []int{0, 8, 64, 4096 + 8} {
		for _, n := range []int{0, 7, 8, 24, 64, 72, 4096, 65536 - 8, 65536 + 3} {
			buf := bytes.Repeat([]byte{0xA5}, off+n+64)
			ClearNonTemporal(buf[off : off+n])
			for i, c := range buf {
				inside := i >= off && i < off+n
				if inside && c != 0 || !inside && c != 0xA5 {
					t.Fatalf("off %d len %d: byte %d is %#x", off, n, i, c)
				}
			}
		}
	}
}

// BenchmarkClearTerm zeroes 4 MiB steps through a 192 MiB log (three
// 64 MiB terms, as an IPC publication's), as the driver cleans behind its
// subscribers: ordinary stores against non-temporal ones.
func BenchmarkClearTerm(b *testing.B) {
	log := make([]byte, 192<<20)
	const step = 4 << 20
	for _, c := range []struct {
		name string
		fn   func([]byte)
	}{{"clear", func(p []byte) { clear(p) }}, {"non-temporal", ClearNonTemporal}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(step)
			b.ReportAllocs()
			off := 0
			for b.Loop() {
				c.fn(log[off+8 : off+step])
				off = (off + step) % len(log)
			}
		})
	}
}
