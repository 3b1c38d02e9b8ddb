package store

import (
	"testing"
	"time"
)

// TestIdleTime: a key's idle time is the LRU clock's seconds since its
// last access; reads, overwrites and Touch are accesses, IdleTime,
// Exists and EncodingOf are not, nor a read under SetNoTouch; a new key
// starts at 0; SetIdleTime sets it (RESTORE … IDLETIME); a clock set
// back reads 0, not a wrapped huge value.
func TestIdleTime(t *testing.T) {
	s, c := newStore(t, Options{})
	tick := func(d time.Duration) { c.Advance(d); s.SetLRUClock(c.NowMillis()) }
	idle := func(key string) int64 {
		t.Helper()
		n, ok := s.IdleTime([]byte(key))
		if !ok {
			t.Fatalf("IdleTime(%s): the key is missing", key)
		}
		return n
	}
	want := func(key string, n int64, after string) {
		t.Helper()
		if got := idle(key); got != n {
			t.Fatalf("after %s: IdleTime(%s) = %d, want %d", after, key, got, n)
		}
	}
	s.Set(nil, []byte("k"), []byte("some value"), SetOptions{})
	want("k", 0, "SET")
	tick(10 * time.Second)
	want("k", 10, "10 s")
	want("k", 10, "IdleTime itself")
	s.Exists([]byte("k"))
	s.EncodingOf([]byte("k"))
	want("k", 10, "Exists and EncodingOf")
	tick(999 * time.Millisecond)
	want("k", 10, "999 ms more (whole seconds)")
	s.Get(nil, []byte("k"))
	want("k", 0, "GET")
	tick(5 * time.Second)
	s.SetNoTouch(true)
	s.Get(nil, []byte("k"))
	s.SetNoTouch(false)
	want("k", 5, "a GET under SetNoTouch")
	s.Touch([]byte("k"))
	want("k", 0, "Touch")
	tick(7 * time.Second)
	s.Set(nil, []byte("k"), []byte("another value"), SetOptions{})
	want("k", 0, "an overwrite")
	tick(3 * time.Second)
	s.IncrBy([]byte("n"), 1)
	tick(3 * time.Second)
	s.IncrBy([]byte("n"), 1)
	want("n", 0, "INCR of an existing counter")
	s.SAdd([]byte("set"), [][]byte{[]byte("m")})
	tick(4 * time.Second)
	want("set", 4, "a set untouched for 4 s")
	s.SIsMember([]byte("set"), []byte("m"))
	want("set", 0, "SISMEMBER")
	if !s.SetIdleTime([]byte("k"), 1000) {
		t.Fatal("SetIdleTime on an existing key: false")
	}
	want("k", 1000, "SetIdleTime 1000")
	if _, ok := s.IdleTime([]byte("missing")); ok || s.SetIdleTime([]byte("missing"), 1) {
		t.Fatal("a missing key has an idle time")
	}
	c.Set(c.NowMillis() - 3_600_000)
	s.SetLRUClock(c.NowMillis())
	want("set", 0, "the clock set back an hour")
}

// TestTouchAllocsNothing: GET with the access clock allocates nothing.
func TestTouchAllocsNothing(t *testing.T) {
	s, _ := newStore(t, Options{})
	s.Set(nil, []byte("k"), []byte("0123456789abcdef"), SetOptions{})
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(1000, func() { s.Get(buf[:0], []byte("k")) }); n != 0 {
		t.Fatalf("GET allocates %v times", n)
	}
}
