package store

import (
	"slices"
	"testing"
	"time"
)

// TestOnRemoveReportsExpiryAndEviction: the callback hears of every key
// the store removes on its own (expired on access, by the active sweep, on
// a write over it; evicted), with the key, and of none a command deletes.
func TestOnRemoveReportsExpiryAndEviction(t *testing.T) {
	s, clock := newStore(t, Options{})
	var got []string
	s.OnRemove(func(key []byte, evicted bool) {
		if evicted {
			t.Errorf("%s reported evicted", key)
		}
		got = append(got, string(key))
	})
	now := clock.NowMillis()
	for _, k := range []string{"read", "swept", "overwritten", "deleted"} {
		if _, _, _, err := s.Set(nil, []byte(k), []byte("v"), SetOptions{ExpireAt: now + 1000}); err != nil {
			t.Fatal(err)
		}
	}
	s.Del([]byte("deleted")) // a command's own delete: not reported
	clock.Advance(2 * time.Second)
	if _, ok := s.Get(nil, []byte("read")); ok {
		t.Fatal("an expired key was read")
	}
	s.Set(nil, []byte("overwritten"), []byte("new"), SetOptions{})
	for i := 0; i < 10; i++ {
		s.Tick(1000)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"overwritten", "read", "swept"}) {
		t.Fatalf("reported %q", got)
	}

	e, _ := newStore(t, Options{MaxMemory: 1 << 20, Eviction: AllKeysLRU})
	evicted := 0
	e.OnRemove(func(key []byte, ev bool) {
		if !ev {
			t.Errorf("%s reported expired", key)
		}
		evicted++
	})
	val := make([]byte, 1000)
	for i := 0; i < 5000; i++ {
		if _, _, _, err := e.Set(nil, []byte{byte(i), byte(i >> 8), 'k'}, val, SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var st Stats
	e.Stats(&st)
	if evicted == 0 || int64(evicted) != st.Evicted {
		t.Fatalf("reported %d evictions, the store counted %d", evicted, st.Evicted)
	}
}
