package store

import (
	"testing"
	"time"
)

// A replica's store keeps a key whose time has passed (its primary sends
// the DEL) but reads report it missing; back in a primary's mode the next
// read deletes it.
func TestKeepExpiredHidesWithoutDeleting(t *testing.T) {
	s, clock := newStore(t, Options{})
	if _, _, _, err := s.Set(nil, []byte("k"), []byte("v"), SetOptions{ExpireAt: clock.NowMillis() + 1000}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.HSet([]byte("h"), [][]byte{[]byte("f"), []byte("v")}, false); err != nil {
		t.Fatal(err)
	}
	s.ExpireAt([]byte("h"), clock.NowMillis()+1000)
	s.SetKeepExpired(true)
	clock.Advance(2 * time.Second)
	for i := 0; i < 100; i++ {
		s.Tick(1 << 20)
	}
	if _, found := s.Get(nil, []byte("k")); found {
		t.Fatal("a read of an expired key on a replica's store found it")
	}
	if _, found, _ := s.HGet(nil, []byte("h"), []byte("f")); found {
		t.Fatal("a read of an expired hash on a replica's store found it")
	}
	if s.Len() != 2 {
		t.Fatalf("the replica's store holds %d keys after reads and ticks, want the 2 expired ones kept", s.Len())
	}
	s.SetKeepExpired(false)
	if _, found := s.Get(nil, []byte("k")); found {
		t.Fatal("found an expired key")
	}
	if s.Len() != 1 {
		t.Fatalf("%d keys after a primary-mode read of one expired key, want 1", s.Len())
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}
