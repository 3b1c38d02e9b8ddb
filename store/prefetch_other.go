//go:build !amd64

package store

// prefetch is a hint only; elsewhere than amd64 it does nothing.
func prefetch(addr uintptr) {}
