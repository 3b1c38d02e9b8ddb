package store

import (
	"errors"
	"strconv"
	"testing"
)

// TestVolatileAndRandomPolicies: at a memory cap, volatile-lru,
// allkeys-random and volatile-random keep the store under the cap; the
// volatile ones never evict a key without a TTL and refuse a write
// (ErrOOM) when only such keys are left; volatile-lru keeps the keys read
// often; allkeys-random evicts old and new keys alike.
func TestVolatileAndRandomPolicies(t *testing.T) {
	for _, p := range []EvictionPolicy{VolatileLRU, AllKeysRandom, VolatileRandom} {
		t.Run(p.String(), func(t *testing.T) {
			s, c := newStore(t, Options{MaxMemory: 532 << 10, Eviction: p})
			volatile := p != AllKeysRandom
			val := make([]byte, 50)
			ttl := SetOptions{ExpireAt: c.NowMillis() + 3_600_000}
			for i := 0; i < 100; i++ {
				s.Set(nil, []byte("persistent"+strconv.Itoa(i)), val, SetOptions{})
			}
			hot := func(i int) []byte { return []byte("hot" + strconv.Itoa(i)) }
			for i := 0; i < 100; i++ {
				s.Set(nil, hot(i), val, ttl)
			}
			for n := 0; n < 30000; n++ {
				if _, _, _, err := s.Set(nil, []byte("cold"+strconv.Itoa(n)), val, ttl); err != nil {
					t.Fatalf("write %d: %v", n, err)
				}
				if p == VolatileLRU && n%50 == 0 {
					for i := 0; i < 100; i++ {
						s.Get(nil, hot(i))
					}
				}
			}
			var st Stats
			s.Stats(&st)
			if st.UsedMemory > st.MaxMemory || st.Evicted == 0 {
				t.Fatalf("stats %+v", st)
			}
			persistent, hotKept := 0, 0
			for i := 0; i < 100; i++ {
				if s.Exists([]byte("persistent" + strconv.Itoa(i))) {
					persistent++
				}
				if s.Exists(hot(i)) {
					hotKept++
				}
			}
			switch {
			case volatile && persistent != 100:
				t.Fatalf("%v evicted %d keys without a TTL", p, 100-persistent)
			case p == VolatileLRU && hotKept < 90:
				t.Fatalf("volatile-lru kept %d of 100 keys read every 50 writes", hotKept)
			case p == AllKeysRandom && persistent+hotKept > 150:
				t.Fatalf("allkeys-random kept %d of the 200 oldest keys after %d evictions: not random", persistent+hotKept, st.Evicted)
			}
			mustCheck(t, s)
			if !volatile {
				return
			}
			// Only keys without a TTL left: nothing a volatile policy may evict.
			s.Flush()
			var err error
			for n := 0; n < 100000 && err == nil; n++ {
				_, _, _, err = s.Set(nil, []byte("p"+strconv.Itoa(n)), val, SetOptions{})
			}
			if !errors.Is(err, ErrOOM) {
				t.Fatalf("%v with no key with a TTL: %v, want ErrOOM", p, err)
			}
		})
	}
}

// TestVolatileFindsRareTTLKeys: under every volatile policy, a write at
// the cap evicts a key with a TTL even when such
// keys are a few among very many without one, spread far apart in the
// slot table: one search gives up after 16×evictScan slots, and the write
// must not be refused with OOM while a key the policy may evict exists.
func TestVolatileFindsRareTTLKeys(t *testing.T) {
	for _, p := range []EvictionPolicy{VolatileLRU, VolatileLFU, VolatileRandom, VolatileTTL} {
		t.Run(p.String(), func(t *testing.T) {
			s, c := newStore(t, Options{Eviction: p})
			val := make([]byte, 16)
			ttl := SetOptions{ExpireAt: c.NowMillis() + 3_600_000}
			const persistent, every = 60000, 5000 // a TTL key after every 5,000 without
			withTTL := 0
			for i := 0; i < persistent; i++ {
				if i%every == every-1 {
					s.Set(nil, []byte("ttl"+strconv.Itoa(i)), val, ttl)
					withTTL++
				}
				s.Set(nil, []byte("p"+strconv.Itoa(i)), val, SetOptions{})
			}
			var st Stats
			s.Stats(&st)
			if err := s.SetMaxMemory(st.UsedMemory); err != nil {
				t.Fatal(err)
			}
			for n := 0; n < withTTL; n++ {
				if _, _, _, err := s.Set(nil, []byte("new"+strconv.Itoa(n)), val, SetOptions{}); err != nil {
					t.Fatalf("write %d at the cap with %d keys with a TTL left: %v", n, withTTL-n, err)
				}
			}
			s.Stats(&st)
			if st.Evicted == 0 {
				t.Fatalf("writes at the cap evicted nothing: %+v", st)
			}
			mustCheck(t, s)
		})
	}
}
