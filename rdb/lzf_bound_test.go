package rdb

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestLZFCompressNeverWritesPastItsBuffer: inputs that fill the output
// with literals (32 at a time) right before a match. Before the fix the
// match closed the literal run one byte past the buffer (a replica's full
// sync crashed the primary on such a hash field). Whatever fits must
// decompress to the input; whatever does not must report 0.
func TestLZFCompressNeverWritesPastItsBuffer(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var ht lzfTable
	for i := 0; i < 200000; i++ {
		n := 21 + rng.IntN(200)
		src := make([]byte, n)
		for j := range src {
			src[j] = byte(rng.IntN(256))
		}
		// A repeat somewhere after the first literals.
		if k := rng.IntN(n); k+8 < n && k > 4 {
			copy(src[k:], src[rng.IntN(k-3):][:min(n-k, 3+rng.IntN(20))])
		}
		dst := make([]byte, n-4)
		c := lzfCompress(dst, src, &ht)
		if c == 0 {
			continue
		}
		got, ok := lzfDecompress(nil, dst[:c], n)
		if !ok || !bytes.Equal(got, src) {
			t.Fatalf("input %x: compressed to %d bytes that do not decompress to it", src, c)
		}
	}
}
