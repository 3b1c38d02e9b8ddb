//go:build amd64 && !race

package shm

//go:noescape
func storeRelease32(addr *int32, v int32)

//go:noescape
func storeRelease64(addr *int64, v int64)

// StoreInt32ReleaseOnly writes v at off with release ordering and nothing
// stronger. On amd64 it is a plain MOV in an assembly routine (x86 stores
// are release stores; the call keeps the compiler from moving memory
// accesses across it), the same instruction Java's putIntRelease becomes.
// Unlike StoreInt32Release it does not order a later load after the store
// (no store-load fence), so use it only where the protocol asks for release
// alone: publishing data to a reader who acquire-loads the same field.
// Under the race detector it is a sync/atomic store, which the detector
// understands.
func StoreInt32ReleaseOnly(b []byte, off int, v int32) { storeRelease32(p32(b, off), v) }

// StoreInt64ReleaseOnly is StoreInt32ReleaseOnly for an int64.
func StoreInt64ReleaseOnly(b []byte, off int, v int64) { storeRelease64(p64(b, off), v) }
