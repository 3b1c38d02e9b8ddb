//go:build invariants || race

package store

import "testing"

func TestOwnerGoroutineCheck(t *testing.T) {
	s, _ := newStore(t, Options{})
	s.Set(nil, []byte("k"), []byte("v"), SetOptions{})
	done := make(chan any)
	go func() {
		defer func() { done <- recover() }()
		s.Get(nil, []byte("k"))
	}()
	if r := <-done; r == nil {
		t.Fatal("a second goroutine used the store without a panic")
	}
	s.HandOff()
	go func() {
		defer func() { done <- recover() }()
		s.Get(nil, []byte("k"))
	}()
	if r := <-done; r != nil {
		t.Fatalf("after HandOff: %v", r)
	}
}
