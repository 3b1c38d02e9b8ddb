//go:build !amd64 || race

package shm

import "sync/atomic"

// StoreInt32ReleaseOnly writes v at off with (at least) release ordering.
// On this platform, or under the race detector, it is a sync/atomic store;
// on amd64 without -race it is a plain MOV (see release_amd64.go). Use it
// only where the protocol asks for release alone.
func StoreInt32ReleaseOnly(b []byte, off int, v int32) { atomic.StoreInt32(p32(b, off), v) }

// StoreInt64ReleaseOnly is StoreInt32ReleaseOnly for an int64.
func StoreInt64ReleaseOnly(b []byte, off int, v int64) { atomic.StoreInt64(p64(b, off), v) }
