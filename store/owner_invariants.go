//go:build invariants || race

package store

import (
	"fmt"
	"runtime"
)

// ownerCheck remembers the goroutine that first used the store and panics when
// another one calls it: the store is single-threaded by design. Only compiled with
// -tags invariants, and in every -race build as pebble does, so that CI's
// race run checks it too (reading the goroutine id costs a stack dump per
// call). buf is the dump's room, kept here so that the check allocates
// nothing and the allocation tests hold in these builds too; only the owner
// touches it, until the check has caught a second goroutine.
type ownerCheck struct {
	id  uint64
	buf [64]byte
}

func (o *ownerCheck) check() {
	g := goroutineID(o.buf[:])
	if o.id == 0 {
		o.id = g
		return
	}
	if o.id != g {
		panic(fmt.Sprintf("store: called from goroutine %d, but it belongs to goroutine %d", g, o.id))
	}
}

// release lets the next caller become the owner (hand-off to the loop goroutine).
func (o *ownerCheck) release() { o.id = 0 }

func goroutineID(buf []byte) uint64 {
	b := buf[:runtime.Stack(buf, false)]
	// "goroutine 123 [running]:..."
	var id uint64
	for _, c := range b[len("goroutine "):] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}
