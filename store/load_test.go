package store

import (
	"fmt"
	"strings"
	"testing"
)

// TestLoadString: keys added by LoadString read back as SET's (strings,
// integers, long keys, expiries), a key already held is refused and left
// as it was, and the store's invariants hold, whether the index was
// reserved (one probe per key), grows during the load (SET's path while it
// migrates) or the store has a memory cap (SET's path throughout).
func TestLoadString(t *testing.T) {
	const n = 5000
	for _, tc := range []struct {
		name    string
		reserve int
		o       Options
	}{
		{"reserved", n, Options{}},
		{"growing", 0, Options{}},
		{"capped", n, Options{MaxMemory: 64 << 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, clk := newStore(t, tc.o)
			s.Reserve(tc.reserve)
			key := func(i int) []byte {
				if i%500 == 7 {
					return []byte(strings.Repeat("L", longKey+i)) // a long key: its length is in its block
				}
				return fmt.Appendf(nil, "key:%d", i)
			}
			val := func(i int) []byte {
				switch i % 3 {
				case 0:
					return fmt.Appendf(nil, "%d", i*7919-5) // an integer, kept as one
				case 1:
					return []byte("v")
				}
				return []byte(strings.Repeat("x", i%300))
			}
			exp := func(i int) int64 {
				if i%4 == 0 {
					return clk.NowMillis() + int64(i) + 1000
				}
				return 0
			}
			for i := range n {
				if added, err := s.LoadString(key(i), val(i), exp(i)); err != nil || !added {
					t.Fatalf("LoadString key %d: added %v, %v; want added", i, added, err)
				}
			}
			for i := 0; i < n; i += 97 {
				if added, err := s.LoadString(key(i), []byte("other"), 0); err != nil || added {
					t.Fatalf("LoadString of key %d again: added %v, %v; want refused", i, added, err)
				}
			}
			if err := s.Check(); err != nil {
				t.Fatal(err)
			}
			if got := s.Len(); got != n {
				t.Fatalf("Len %d, want %d", got, n)
			}
			for i := range n {
				v, ok := s.Get(nil, key(i))
				if !ok || string(v) != string(val(i)) {
					t.Fatalf("Get key %d = %.20q, %v; want %.20q", i, v, ok, val(i))
				}
				want := exp(i)
				if want == 0 {
					want = -1
				}
				if at := s.ExpireTime(key(i)); at != want {
					t.Fatalf("key %d expires at %d, want %d", i, at, want)
				}
			}
		})
	}
}
