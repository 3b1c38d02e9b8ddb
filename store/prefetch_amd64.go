package store

// prefetch asks the processor to bring the cache line at addr into its
// caches and returns at once (prefetch_amd64.s: PREFETCHT0). It reads
// nothing the program sees and cannot fault, so any address will do.
//
//go:noescape
func prefetch(addr uintptr)
