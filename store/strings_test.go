package store

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestEncodingOf: what OBJECT ENCODING reports follows Redis for every way
// a string gets written.
func TestEncodingOf(t *testing.T) {
	s, _ := newStore(t, Options{})
	k := []byte("k")
	for _, c := range []struct {
		write func()
		want  Encoding
	}{
		{func() { s.Set(nil, k, []byte("12345"), SetOptions{}) }, EncodingInt},
		{func() { s.Set(nil, k, []byte("012"), SetOptions{}) }, EncodingEmbStr},
		{func() { s.Set(nil, k, bytes.Repeat([]byte("a"), 44), SetOptions{}) }, EncodingEmbStr},
		{func() { s.Set(nil, k, bytes.Repeat([]byte("a"), 45), SetOptions{}) }, EncodingRaw},
		{func() { s.Set(nil, k, []byte("1"), SetOptions{Kind: AsString}) }, EncodingEmbStr}, // INCRBYFLOAT
		{func() { s.IncrBy(k, 1) }, EncodingInt},
		{func() { s.Append(k, []byte("x")) }, EncodingRaw},
		{func() { s.Set(nil, k, []byte("abc"), SetOptions{}) }, EncodingEmbStr},
		{func() { s.SetRange(k, 1, []byte("z")) }, EncodingRaw},
		{func() { s.Update(k, func(v []byte) []byte { return append(v, 1) }) }, EncodingRaw},
	} {
		c.write()
		if got := s.EncodingOf(k); got != c.want {
			t.Fatalf("after writing %q: encoding %v, want %v", must(s.Get(nil, k)), got, c.want)
		}
	}
	if s.EncodingOf([]byte("nope")) != EncodingNone {
		t.Fatal("missing key has an encoding")
	}
}

func must(v []byte, _ bool) []byte { return v }

// TestRangeInlineAndTail reads every range of values whose bytes straddle
// the slot's inline part and the arena tail, and of integers.
func TestRangeInlineAndTail(t *testing.T) {
	s, _ := newStore(t, Options{})
	for _, v := range []string{"", "a", "abcde", "abcdef", "abcdefghijklmnop", "-12345678901", "0"} {
		s.Set(nil, []byte("k"), []byte(v), SetOptions{})
		for a := int64(-20); a < 20; a++ {
			for b := int64(-20); b < 20; b++ {
				if got, want := s.GetRange(nil, []byte("k"), a, b), modelRange([]byte(v), a, b); !bytes.Equal(got, want) {
					t.Fatalf("%q[%d:%d] = %q, want %q", v, a, b, got, want)
				}
			}
		}
	}
}

func TestSetRangeAndUpdateLimits(t *testing.T) {
	s, _ := newStore(t, Options{MaxValueLen: 100})
	if n, err := s.SetRange([]byte("k"), 5, nil); n != 0 || err != nil || s.Exists([]byte("k")) {
		t.Fatalf("empty SETRANGE on a missing key: %d %v", n, err)
	}
	if n, err := s.SetRange([]byte("k"), 2, []byte("ab")); n != 4 || err != nil {
		t.Fatalf("SETRANGE: %d %v", n, err)
	}
	if v, _ := s.Get(nil, []byte("k")); string(v) != "\x00\x00ab" {
		t.Fatalf("value %q", v)
	}
	if _, err := s.SetRange([]byte("k"), 99, []byte("ab")); !errors.Is(err, ErrValueTooLong) {
		t.Fatalf("SETRANGE past the limit: %v", err)
	}
	if _, err := s.Update([]byte("k"), func(v []byte) []byte { return append(v, make([]byte, 200)...) }); !errors.Is(err, ErrValueTooLong) {
		t.Fatalf("Update past the limit: %v", err)
	}
	if v, _ := s.Get(nil, []byte("k")); string(v) != "\x00\x00ab" {
		t.Fatalf("value after refused writes %q", v)
	}
}

// TestRenameKeepsExpiryAndSlot: RENAME moves value, expiry and encoding to
// the new name without moving the key's slot, also while the index is
// resizing, and RENAMENX refuses an existing name.
func TestRenameKeepsExpiryAndSlot(t *testing.T) {
	s, c := newStore(t, Options{})
	s.Set(nil, []byte("src"), []byte("a value with a tail"), SetOptions{ExpireAt: c.NowMillis() + 5000})
	s.Set(nil, []byte("taken"), []byte("x"), SetOptions{})
	if r, _ := s.Rename([]byte("src"), []byte("taken"), true); r != DestTaken {
		t.Fatalf("RENAMENX onto an existing key: %v", r)
	}
	for i := 0; i < 3000; i++ { // grow the index so it migrates
		s.Set(nil, []byte(strings.Repeat("f", i%50)+string(rune('a'+i%26))+string(rune(i))), []byte("v"), SetOptions{})
	}
	if r, err := s.Rename([]byte("src"), []byte("a-much-longer-destination-name"), false); r != Renamed || err != nil {
		t.Fatalf("RENAME: %v %v", r, err)
	}
	if s.Exists([]byte("src")) || s.PTTL([]byte("a-much-longer-destination-name")) != 5000 {
		t.Fatal("RENAME lost the value or its expiry")
	}
	if v, _ := s.Get(nil, []byte("a-much-longer-destination-name")); string(v) != "a value with a tail" {
		t.Fatalf("renamed value %q", v)
	}
	if r, _ := s.Rename([]byte("missing"), []byte("x"), false); r != NoSuchKey {
		t.Fatalf("RENAME of a missing key: %v", r)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestSiblingsShareTheCap: two stores (databases) under one cap: a write
// that does not fit evicts from its sibling when its own store has nothing
// to give, and under noeviction is refused whichever store holds the
// memory.
func TestSiblingsShareTheCap(t *testing.T) {
	a, _ := newStore(t, Options{MaxMemory: 300 << 10, Eviction: AllKeysLRU})
	b, err := a.Sibling()
	if err != nil {
		t.Fatal(err)
	}
	val := make([]byte, 1000)
	for i := 0; i < 400; i++ {
		if _, _, _, err := b.Set(nil, []byte{byte(i), byte(i >> 8)}, val, SetOptions{}); err != nil {
			t.Fatalf("filling the sibling: %v", err)
		}
	}
	var sa, sb Stats
	a.Stats(&sa)
	b.Stats(&sb)
	if sa.UsedMemory+sb.UsedMemory > 300<<10 || sb.Evicted == 0 {
		t.Fatalf("the sibling was not held to the cap: used %d, evicted %d", sb.UsedMemory, sb.Evicted)
	}
	before := sb.Keys
	if _, _, _, err := a.Set(nil, []byte("in-a"), val, SetOptions{}); err != nil {
		t.Fatalf("a write to the empty store: %v", err)
	}
	b.Stats(&sb)
	if sb.Keys >= before {
		t.Fatalf("the write to a did not evict from b (%d keys before, %d after)", before, sb.Keys)
	}
	if err := a.SetEviction(NoEviction); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := a.Set(nil, []byte("more"), make([]byte, 20000), SetOptions{}); !errors.Is(err, ErrOOM) {
		t.Fatalf("noeviction at the shared cap: %v", err)
	}
	if b.Options().Eviction != NoEviction {
		t.Fatal("SetEviction did not reach the sibling")
	}
	_ = b.SetEviction(AllKeysLRU)
	b.Set(nil, []byte("last"), []byte("12"), SetOptions{ExpireAt: 1 << 50})
	if src, kind, at, ok := b.Export(nil, []byte("last")); !ok || kind != AsSet || at != 1<<50 {
		t.Fatalf("Export: %q %v %d %v", src, kind, at, ok)
	} else {
		if done, err := a.Import([]byte("moved"), src, kind, at, false); !done || err != nil {
			t.Fatalf("Import: %v %v", done, err)
		}
		if a.EncodingOf([]byte("moved")) != EncodingInt || a.ExpireTime([]byte("moved")) != 1<<50 {
			t.Fatal("Import lost the encoding or the expiry")
		}
	}
}

// TestCanonicalIntBounds: a value is stored as an integer only when it is
// one; twenty digits past int64 (which wrapped round 2^64 to 0) stay text.
func TestCanonicalIntBounds(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"9223372036854775807", 1<<63 - 1, true}, {"-9223372036854775808", -1 << 63, true},
		{"9223372036854775808", 0, false}, {"-9223372036854775809", 0, false},
		{"18446744073709551615", 0, false}, {"18446744073709551616", 0, false}, {"18446744073709551626", 0, false},
		{"99999999999999999999", 0, false}, {"-18446744073709551616", 0, false}, {"0", 0, true}, {"-0", 0, false},
	} {
		if got, ok := parseCanonicalInt([]byte(c.in)); got != c.want || ok != c.ok {
			t.Errorf("parseCanonicalInt(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
	s, _ := newStore(t, Options{})
	for _, v := range []string{"18446744073709551616", "18446744073709551626"} {
		s.Set(nil, []byte("k"), []byte(v), SetOptions{})
		if got, _ := s.Get(nil, []byte("k")); string(got) != v {
			t.Errorf("SET %s, GET = %q", v, got)
		}
	}
}
