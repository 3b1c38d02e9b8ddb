//go:build invariants

package store

import (
	"fmt"
	"runtime"
)

// invariantsBuild reports whether the expensive self-checks are compiled in.
const invariantsBuild = true

// ownerCheck remembers the goroutine that first used the store and panics when
// another one calls it: the store is single-threaded by design. Only compiled with
// -tags invariants (reading the goroutine id costs a stack dump per call).
type ownerCheck struct{ id uint64 }

func (o *ownerCheck) check() {
	g := goroutineID()
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

func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
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
