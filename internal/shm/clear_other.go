//go:build !amd64

package shm

// ClearNonTemporal zeroes b, with ordinary stores on this architecture
// (non-temporal ones on amd64); a release store after it orders the zeroes
// before it, as after clear.
func ClearNonTemporal(b []byte) { clear(b) }
