package shm

import "unsafe"

//go:noescape
func clearNonTemporal(p unsafe.Pointer, n int)

// ClearNonTemporal zeroes b with non-temporal stores (MOVNTI), then
// fences them (SFENCE), so every store after it is ordered after the
// zeroes: for large stretches of shared memory nobody reads soon (a log
// term cleaned behind its subscribers), it halves the memory traffic of
// clear (no line is read before it is written) and leaves the caches to
// the threads that use them. b's start must be 8-byte aligned; a length
// that is not a multiple of 8 ends with ordinary stores.
func ClearNonTemporal(b []byte) {
	n := len(b) &^ 7
	if n > 0 {
		if uintptr(unsafe.Pointer(&b[0]))&7 != 0 {
			panic("shm: ClearNonTemporal of a slice not 8-byte aligned")
		}
		clearNonTemporal(unsafe.Pointer(&b[0]), n)
	}
	clear(b[n:])
}
