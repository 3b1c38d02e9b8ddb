package store

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
)

// The index's key hash. Keys of at most shortKey bytes (nearly every key
// a cache sees: "user:1000", "key:000000000042") are hashed inline with
// two loads and two 64×64→128-bit multiplies, wyhash's short-input path
// (the one Go's runtime falls back to where it has no AES hash), keyed by
// three words drawn from the store's random maphash seed, so which keys
// collide still differs from process to process; longer keys go through
// maphash. About 20 instructions for a 16-byte key instead of maphash's
// 60 (callgrind, BenchmarkServe GET).

// shortKey is the longest key hashKey hashes inline.
const shortKey = 16

// hashKeys are a store's keys for the short-key hash.
type hashKeys struct{ k0, k1, k2 uint64 }

func newHashKeys(seed maphash.Seed) hashKeys {
	word := func(b byte) uint64 { return maphash.Bytes(seed, []byte{'g', 'o', 'b', 'l', 'i', 'n', b}) }
	return hashKeys{word(0), word(1), word(2)}
}

// hash returns key's index hash (tagOf takes its top 32 bits). A key of
// at most shortKey bytes is hashed from its first and last eight bytes
// (four, for 4 to 7 bytes; for 1 to 3, the first, middle and last byte),
// overlapping as needed so that every byte counts, and its length.
func (s *Store) hash(key []byte) uint64 {
	if len(key) > shortKey {
		return maphash.Bytes(s.seed, key)
	}
	return s.hk.short(key)
}

// short hashes a key of at most shortKey bytes: a leaf function, so it
// spills nothing for a call it does not make.
func (k *hashKeys) short(key []byte) uint64 {
	n := len(key)
	var a, b uint64
	switch {
	case n >= 8:
		a, b = binary.LittleEndian.Uint64(key), binary.LittleEndian.Uint64(key[n-8:])
	case n >= 4:
		a, b = uint64(binary.LittleEndian.Uint32(key)), uint64(binary.LittleEndian.Uint32(key[n-4:]))
	case n > 0:
		a = uint64(key[0])<<16 | uint64(key[n>>1])<<8 | uint64(key[n-1])
	}
	return k.mix(a, b, n)
}

// mix is short's hash of its two words a and b for a key of n bytes; Get
// calls it directly for a key of 8 to 16 bytes, whose words it has read.
func (k *hashKeys) mix(a, b uint64, n int) uint64 {
	hi, lo := bits.Mul64(a^k.k1, b^k.k0)
	hi, lo = bits.Mul64(lo^k.k2^uint64(n), hi^k.k1)
	return hi ^ lo
}
