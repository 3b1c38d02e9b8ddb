package store

import (
	"fmt"
	"testing"
	"time"
)

// A replica applying its primary's stream late (its clock already past
// keys' absolute expiries) holds what the primary holds: under SetNoExpiry
// no key's time has passed, so nothing is deleted, INCR counts on from the
// stored value, an expiry already past is set rather than deleting, and a
// SET with an absolute expiry in the past creates the key. Reads in the
// replica's mode then answer those keys as missing, still without deleting.
func TestNoExpiryKeepsWhatThePrimaryKeeps(t *testing.T) {
	s, clock := newStore(t, Options{})
	past := clock.NowMillis() - 1000 // where the primary's clock was when it wrote
	s.SetNoExpiry(true)
	if _, _, applied, err := s.Set(nil, []byte("pxat"), []byte("v"), SetOptions{ExpireAt: past}); err != nil || !applied {
		t.Fatalf("SET PXAT <past> under NoExpiry: applied %v, %v; want the key created", applied, err)
	}
	if _, _, _, err := s.Set(nil, []byte("n"), []byte("10"), SetOptions{ExpireAt: clock.NowMillis() + 500}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.HSet([]byte("h"), [][]byte{[]byte("f"), []byte("v")}, false); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.Set(nil, []byte("gone"), []byte("v"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Second) // the replica is now late: n's time has passed too
	if !s.ExpireAt([]byte("h"), past) {
		t.Fatal("PEXPIREAT h <past> under NoExpiry reported no key")
	}
	if n, err := s.IncrBy([]byte("n"), 1); err != nil || n != 11 {
		t.Fatalf("INCR n (expired by this clock) under NoExpiry = %d, %v; want 11 as on the primary", n, err)
	}
	if v, found := s.Get(nil, []byte("pxat")); !found || string(v) != "v" {
		t.Fatalf("GET pxat under NoExpiry: %q, %v", v, found)
	}
	if added, err := s.HSet([]byte("h"), [][]byte{[]byte("g"), []byte("w")}, false); err != nil || added != 1 {
		t.Fatalf("HSET h g under NoExpiry: added %d, %v; want 1 (the hash kept its f)", added, err)
	}
	if !s.Del([]byte("gone")) {
		t.Fatal("DEL of a live key under NoExpiry reported false")
	}
	for i := 0; i < 100; i++ {
		s.Tick(1 << 20)
	}
	if s.Len() != 3 {
		t.Fatalf("%d keys after the late stream and ticks, want 3 (pxat, n, h)", s.Len())
	}
	var st Stats
	if s.Stats(&st); st.Expired != 0 {
		t.Fatalf("expired_keys %d under NoExpiry, want 0", st.Expired)
	}
	if n, _ := s.HLen([]byte("h")); n != 2 {
		t.Fatalf("HLEN h under NoExpiry = %d, want 2", n)
	}

	// The stream applied: the replica's reads hide the three, keep them.
	s.SetNoExpiry(false)
	s.SetKeepExpired(true)
	for _, k := range []string{"pxat", "n", "h"} {
		if s.Exists([]byte(k)) {
			t.Errorf("EXISTS %s on the replica after its time: true, want the key hidden", k)
		}
	}
	if s.Len() != 3 {
		t.Fatalf("%d keys after the replica's reads, want the 3 kept until the primary's DEL", s.Len())
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

// Neither the replica's read mode nor the stream's mode runs active expiry
// in Tick: the keys stay, expired_keys stays 0; back in a primary's mode
// Tick deletes them.
func TestKeepExpiredNoActiveEviction(t *testing.T) {
	for _, mode := range []string{"KeepExpired", "NoExpiry"} {
		t.Run(mode, func(t *testing.T) {
			s, clock := newStore(t, Options{})
			for i := 0; i < 1000; i++ {
				k := []byte{'k', byte(i >> 8), byte(i)}
				if _, _, _, err := s.Set(nil, k, []byte("v"), SetOptions{ExpireAt: clock.NowMillis() + 100}); err != nil {
					t.Fatal(err)
				}
			}
			if mode == "KeepExpired" {
				s.SetKeepExpired(true)
			} else {
				s.SetNoExpiry(true)
			}
			clock.Advance(time.Second)
			for i := 0; i < 100; i++ {
				s.Tick(1 << 20)
				clock.Advance(200 * time.Millisecond) // past the sweep's rest each time
			}
			var st Stats
			if s.Stats(&st); s.Len() != 1000 || st.Expired != 0 {
				t.Fatalf("%s: %d keys, expired_keys %d after 100 ticks; want 1000 kept, 0 expired", mode, s.Len(), st.Expired)
			}
			s.SetKeepExpired(false)
			s.SetNoExpiry(false)
			for i := 0; i < 100 && s.Len() > 0; i++ {
				s.Tick(1 << 20)
				clock.Advance(200 * time.Millisecond)
			}
			if s.Len() != 0 {
				t.Fatalf("a primary's Tick left %d expired keys", s.Len())
			}
		})
	}
}

// Under SetNoExpiry the replica's read mode makes no difference: every
// place that reads SetKeepExpired's flag first finds a key's time passed
// (against expiryNow, which NoExpiry puts before every expiry) or runs
// only without NoExpiry (Tick's sweep). So the engine applies the stream
// with NoExpiry alone, leaving the read mode as it is. The same late
// stream and reads give the same answers and the same store either way.
func TestNoExpiryMakesKeepExpiredMoot(t *testing.T) {
	run := func(keep bool) (trace []string, keys int, expired int64) {
		s, clock := newStore(t, Options{})
		s.SetKeepExpired(keep)
		s.SetNoExpiry(true)
		note := func(f string, a ...any) { trace = append(trace, fmt.Sprintf(f, a...)) }
		past := clock.NowMillis() - 1000
		for i := 0; i < 200; i++ {
			k := []byte(fmt.Sprintf("k%d", i))
			at := clock.NowMillis() + int64(i%3-1)*500 // past, now-ish, future
			_, _, applied, err := s.Set(nil, k, []byte("1"), SetOptions{ExpireAt: at})
			note("set %s %v %v", k, applied, err)
		}
		clock.Advance(2 * time.Second) // every key's time has passed by this clock
		for i := 0; i < 200; i++ {
			k := []byte(fmt.Sprintf("k%d", i))
			n, err := s.IncrBy(k, 1)
			v, found := s.Get(nil, k)
			note("incr %s %d %v get %q %v exists %v", k, n, err, v, found, s.Exists(k))
			if i%7 == 0 {
				note("expireat %s %v", k, s.ExpireAt(k, past))
			}
			if i%11 == 0 {
				note("del %s %v", k, s.Del(k))
			}
		}
		for i := 0; i < 50; i++ {
			r, ok := s.Random(nil)
			note("random %v %v", len(r) > 0, ok)
			s.Tick(1 << 20)
			clock.Advance(200 * time.Millisecond)
		}
		n := 0
		s.Scan(0, 1<<20, func([]byte) { n++ })
		note("scan %d", n)
		var st Stats
		s.Stats(&st)
		if err := s.Check(); err != nil {
			t.Fatal(err)
		}
		return trace, s.Len(), st.Expired
	}
	a, an, ae := run(false)
	b, bn, be := run(true)
	if an != bn || ae != be || len(a) != len(b) {
		t.Fatalf("keys %d/%d, expired %d/%d, %d/%d answers with KeepExpired off/on under NoExpiry; want the same", an, bn, ae, be, len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("answer %d under NoExpiry: %q with KeepExpired off, %q with it on", i, a[i], b[i])
		}
	}
	if an == 0 || ae != 0 {
		t.Fatalf("%d keys kept, %d expired under NoExpiry: the scenario tested nothing", an, ae)
	}
}
