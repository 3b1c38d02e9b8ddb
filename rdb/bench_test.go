package rdb

import (
	"bytes"
	"fmt"
	"hash/crc64"
	"io"
	"testing"
)

// TestEncoderAllocatesNothing: once its scratch buffers have grown,
// writing a key allocates nothing, for every kind and encoding.
func TestEncoderAllocatesNothing(t *testing.T) {
	e := NewEncoder(io.Discard, EncoderOptions{})
	if err := e.WriteHeader(); err != nil {
		t.Fatal(err)
	}
	if err := e.SelectDB(0, 0, 0); err != nil {
		t.Fatal(err)
	}
	for _, k := range model() {
		key := []byte(k.key)
		write := func() {
			if err := e.Write(key, &k.v, k.expiry); err != nil {
				t.Fatal(err)
			}
		}
		write()
		if n := testing.AllocsPerRun(20, write); n != 0 {
			t.Errorf("%s: %.1f allocations per Write", k.key, n)
		}
	}
}

// TestDecoderReusesBuffers: decoding many keys allocates a bounded amount
// up front (buffers, the Decoder), nothing per key.
func TestDecoderReusesBuffers(t *testing.T) {
	data, n := stringFile(t, 20000, 16, 16)
	var keys int
	allocs := testing.AllocsPerRun(3, func() {
		d := NewDecoder(bytes.NewReader(data), DecoderOptions{})
		keys = 0
		for d.Next() {
			keys++
		}
		if d.Err() != nil {
			t.Fatal(d.Err())
		}
	})
	if keys != n {
		t.Fatalf("%d keys, want %d", keys, n)
	}
	if allocs > 50 {
		t.Errorf("%.0f allocations to decode %d keys", allocs, n)
	}
}

// stringFile is an RDB file of n string keys of klen and vlen bytes.
func stringFile(tb testing.TB, n, klen, vlen int) ([]byte, int) {
	keys, vals := stringKeys(n, klen, vlen)
	var buf bytes.Buffer
	e := NewEncoder(&buf, EncoderOptions{})
	_ = e.WriteHeader()
	_ = e.SelectDB(0, uint64(n), 0)
	for i := range keys {
		if err := e.Write(keys[i], &vals[i], NoExpiry); err != nil {
			tb.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes(), n
}

// stringKeys makes distinct keys and values that are not integers and do
// not compress (the costlier path: LZF is tried on values over 20 bytes).
func stringKeys(n, klen, vlen int) ([][]byte, []Value) {
	noise := binaryString(vlen + n)
	keys := make([][]byte, n)
	vals := make([]Value, n)
	for i := range keys {
		k := fmt.Appendf(nil, "key:%0*d", klen-4, i)
		keys[i] = k[:klen]
		vals[i] = Value{Kind: KindString, Str: noise[i : i+vlen]}
	}
	return keys, vals
}

var sizes = []struct {
	name       string
	klen, vlen int
}{{"16B+16B", 16, 16}, {"16B+1KB", 16, 1024}}

// BenchmarkEncode: one op writes one string key; MB/s counts key and
// value bytes.
func BenchmarkEncode(b *testing.B) {
	for _, s := range sizes {
		b.Run(s.name, func(b *testing.B) {
			keys, vals := stringKeys(4096, s.klen, s.vlen)
			e := NewEncoder(io.Discard, EncoderOptions{})
			_ = e.WriteHeader()
			_ = e.SelectDB(0, 0, 0)
			b.SetBytes(int64(s.klen + s.vlen))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				j := i & 4095
				if err := e.Write(keys[j], &vals[j], NoExpiry); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecode: one op decodes a whole file of 100,000 string keys;
// MB/s counts file bytes, ns/key and allocs/key are per key.
func BenchmarkDecode(b *testing.B) {
	const n = 100000
	for _, s := range sizes {
		b.Run(s.name, func(b *testing.B) {
			data, _ := stringFile(b, n, s.klen, s.vlen)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				d := NewDecoder(bytes.NewReader(data), DecoderOptions{})
				for d.Next() {
				}
				if d.Err() != nil {
					b.Fatal(d.Err())
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/key")
		})
	}
}

// BenchmarkDecodeCollections decodes the model (every kind and encoding).
func BenchmarkDecodeCollections(b *testing.B) {
	data := writeModel(b, model(), EncoderOptions{})
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		d := NewDecoder(bytes.NewReader(data), DecoderOptions{})
		for d.Next() {
		}
		if d.Err() != nil {
			b.Fatal(d.Err())
		}
	}
}

// BenchmarkCRC64 runs the slicing-by-8 CRC beside hash/crc64 with the
// same polynomial (its compensated form gives the same value).
func BenchmarkCRC64(b *testing.B) {
	tab := crc64.MakeTable(crcPoly)
	for _, n := range []int{64, 1 << 10, 64 << 10} {
		p := binaryString(n)
		b.Run(fmt.Sprintf("rdb/%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for i := 0; i < b.N; i++ {
				_ = CRC64(0, p)
			}
		})
		b.Run(fmt.Sprintf("hash-crc64/%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for i := 0; i < b.N; i++ {
				_ = ^crc64.Update(^uint64(0), tab, p)
			}
		})
	}
}

// BenchmarkLZF compresses text the way a string over 20 bytes is offered.
func BenchmarkLZF(b *testing.B) {
	src := bytes.Repeat([]byte("goblin-rdb lzf benchmark text "), 40)
	dst := make([]byte, len(src)-4)
	var ht lzfTable
	b.SetBytes(int64(len(src)))
	for i := 0; i < b.N; i++ {
		if lzfCompress(dst, src, &ht) == 0 {
			b.Fatal("did not compress")
		}
	}
}
