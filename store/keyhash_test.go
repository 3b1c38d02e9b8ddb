package store

import (
	"bytes"
	"fmt"
	"testing"
)

// TestShortKeysEveryLength stores keys of every length around the short
// hash's and the inline compare's cases (0 to 3, 4 to 7, 8 to 16, longer),
// each with neighbours that differ in one byte only (first, middle, last),
// and values of every length around the inline copy's (tails of 1 to 3, 4
// to 7, 8 to 16 bytes, longer), then reads every one back.
func TestShortKeysEveryLength(t *testing.T) {
	s, _ := newStore(t, Options{})
	want := map[string][]byte{}
	for n := 0; n <= 40; n++ {
		base := bytes.Repeat([]byte{'k'}, n)
		keys := [][]byte{base}
		for _, at := range []int{0, n / 2, n - 1} {
			if n > 0 {
				k := bytes.Clone(base)
				k[at] = 'x'
				keys = append(keys, k)
			}
		}
		for i, k := range keys {
			val := bytes.Repeat([]byte{byte('a' + i)}, (n+i)%30)
			if _, _, _, err := s.Set(nil, k, val, SetOptions{}); err != nil {
				t.Fatal(err)
			}
			want[string(k)] = val
		}
	}
	mustCheck(t, s)
	for k, v := range want {
		for _, dst := range [][]byte{nil, make([]byte, 3, 64)} {
			got, ok := s.Get(dst, []byte(k))
			if !ok || !bytes.Equal(got[len(dst):], v) || !bytes.Equal(got[:len(dst)], dst) {
				t.Fatalf("Get(%q) into cap %d = %q, %v; want %q", k, cap(dst), got, ok, v)
			}
		}
	}
	if _, ok := s.Get(nil, []byte("kkkkkkkkkkkkkkkz")); ok {
		t.Fatal("a key never set was found")
	}
}

// TestShortHashSpreads checks that the short-key hash spreads keys that
// differ only in a few digits (redis-benchmark's key:000000000042) over
// the tags: a weak mix would pile them into few home buckets.
func TestShortHashSpreads(t *testing.T) {
	s, _ := newStore(t, Options{})
	const n = 1 << 16
	tags := map[uint32]bool{}
	homes := map[uint32]int{}
	for i := range n {
		tag := tagOf(s.hash(fmt.Appendf(nil, "key:%012d", i)))
		tags[tag] = true
		homes[tag>>16]++ // a 65,536-bucket table's home buckets
	}
	// 2^16 keys over 2^32 tags: about half a collision expected.
	if len(tags) < n-8 {
		t.Errorf("%d distinct tags for %d keys", len(tags), n)
	}
	most := 0
	for _, c := range homes {
		most = max(most, c)
	}
	// A fair spread puts at most about 10 keys in any one of 2^16 buckets.
	if most > 12 || len(homes) < n/2 {
		t.Errorf("keys pile up: %d home buckets used, at most %d keys in one", len(homes), most)
	}
}

// TestPutMatchesSet drives two stores through the same writes, one with
// Put and one with Set and no options, over Put's fast cases (an existing
// short key, the same or another value length) and its hand-offs to Set
// (new keys, long keys, keys with a TTL, a collection, integers), and
// compares what a reader sees: values, TTLs, encodings, counts, Mods.
func TestPutMatchesSet(t *testing.T) {
	put, _ := newStore(t, Options{})
	set, _ := newStore(t, Options{})
	long := bytes.Repeat([]byte{'L'}, 40)
	keys := [][]byte{[]byte("k"), []byte("key:000000000042"), []byte("ttl-key"), []byte("a-list"), long}
	vals := [][]byte{[]byte("0123456789abcdef"), []byte("0123456789abcdeX"), []byte("v"), []byte("12345"), []byte("-7"), []byte("0"), []byte("007"), bytes.Repeat([]byte{'x'}, 100), nil}
	for _, s := range []*Store{put, set} {
		if _, _, _, err := s.Set(nil, []byte("ttl-key"), []byte("old"), SetOptions{ExpireAt: 1_800_000_000_000}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.HSet([]byte("a-list"), [][]byte{[]byte("f"), []byte("v")}, false); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 3 {
		for _, k := range keys {
			for _, v := range vals {
				if err := put.Put(k, v); err != nil {
					t.Fatal(err)
				}
				if _, _, _, err := set.Set(nil, k, v, SetOptions{}); err != nil {
					t.Fatal(err)
				}
				for _, c := range keys {
					pv, pok := put.Get(nil, c)
					sv, sok := set.Get(nil, c)
					if pok != sok || !bytes.Equal(pv, sv) || put.PTTL(c) != set.PTTL(c) || put.EncodingOf(c) != set.EncodingOf(c) {
						t.Fatalf("round %d after %q=%q: key %q: Put's store %q %v ttl %d %v, Set's %q %v ttl %d %v", round, k, v, c,
							pv, pok, put.PTTL(c), put.EncodingOf(c), sv, sok, set.PTTL(c), set.EncodingOf(c))
					}
				}
			}
		}
	}
	if put.Mods() != set.Mods() || put.Len() != set.Len() {
		t.Fatalf("Put's store: %d mods, %d keys; Set's: %d, %d", put.Mods(), put.Len(), set.Mods(), set.Len())
	}
	mustCheck(t, put)
}
