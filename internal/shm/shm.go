// Package shm maps shared-memory files and gives typed, documented access to
// integers inside them. Goblin reads and writes shared memory (Aeron's files,
// goblin's rings) through these accessors, with one exception: package
// aeron's exclusive-publication offer on amd64, which forms raw pointers
// into a mapped term and its log metadata (aeron/frame.go, and the uintptr
// addresses of aeron/exclusive.go) and stores through them in assembly
// (aeron/frame_amd64.s; its portable twin, aeron/frame_other.go, comes back
// here). The Go media driver (aeron/driver) maps its own files with
// syscall.Mmap but accesses them through these accessors too.
//
// # Accessors
//
// Every accessor takes a byte slice and a byte offset. The slice may be a
// mapping returned by Map or plain Go memory (unit tests use plain memory).
// Offsets are bounds-checked through the slice; atomic accessors also need
// the address to be naturally aligned (4 bytes for 32-bit, 8 for 64-bit),
// which every Aeron and goblin layout guarantees for the fields accessed
// atomically. The caller documents, beside each call, who writes the field,
// who reads it and which ordering the protocol relies on.
//
// # Memory ordering
//
// The shared-memory protocols goblin speaks (Aeron, goblin's rings) are
// written in terms of acquire loads, release stores and full-fence
// read-modify-write operations. Go's sync/atomic operations are sequentially
// consistent (the Go memory model, "synchronized before"), which is strictly
// stronger than acquire or release: an atomic load is at least an acquire,
// an atomic store at least a release, and Add/Swap/CompareAndSwap are full
// fences. The accessor names say which ordering the protocol needs; the
// implementation gives at least that. The exception is StoreInt32ReleaseOnly
// and StoreInt64ReleaseOnly, which give release and nothing more (a plain
// MOV on amd64, like Java's putRelease) for hot paths that publish data to
// an acquiring reader and need no store-load ordering. Plain accessors
// (Get*/Put*) carry no ordering and must be published by a later release
// store or read after an earlier acquire load.
//
// The race detector does not observe memory outside the Go heap, so accesses
// to mappings are not checked by it; accesses to plain Go memory in tests are,
// and the acquire/release pairs above are what make them race-free.
package shm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrTooSmall reports a file shorter than the caller needs.
var ErrTooSmall = errors.New("shm: file too small")

// Map maps the whole file at path read-write and shared, so writes are seen
// by every other process mapping it. The file must be non-empty. The mapping
// stays valid after Map returns (the file descriptor is closed); release it
// with Unmap.
func Map(path string) ([]byte, error) { return mapFile(path, 0) }

// MapPrefault is Map, and also faults every page of the file into the
// mapping for writing now, so the first touch of each page later (on a hot
// path), a store included, does not take a page fault. It costs time at map
// time and, for a sparse file, allocates all of it.
//
// MAP_POPULATE alone is not enough for a file on a disk-backed file system
// (ext4, xfs): on a shared mapping it faults pages in for reading only, and
// such a file system maps them write-protected to track dirty pages, so
// the first store to each page still faults (page_mkwrite, which allocates
// the block of a sparse file: 3–4 µs on a 2-vCPU VM, once per 4 KiB page
// of an Aeron term). MADV_POPULATE_WRITE takes those write faults here.
// On tmpfs (/dev/shm) either way maps the pages writable. Kernels before
// 5.14 lack MADV_POPULATE_WRITE and get MAP_POPULATE's read faults.
func MapPrefault(path string) ([]byte, error) {
	b, err := mapFile(path, 0)
	if err != nil {
		return nil, err
	}
	if unix.Madvise(b, unix.MADV_POPULATE_WRITE) == nil {
		return b, nil
	}
	if err := Unmap(b); err != nil {
		return nil, err
	}
	return mapFile(path, syscall.MAP_POPULATE)
}

func mapFile(path string, flags int) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("shm: open %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("shm: stat %s: %w", path, err)
	}
	size := st.Size()
	if size <= 0 {
		return nil, fmt.Errorf("shm: map %s: %w (empty)", path, ErrTooSmall)
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("shm: map %s: file of %d bytes does not fit the address space", path, size)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|flags)
	if err != nil {
		return nil, fmt.Errorf("shm: mmap %s: %w", path, err)
	}
	return b, nil
}

// MapFD maps size bytes of the open file fd (a memfd handed over a socket,
// say) read-write and shared, like Map. The caller keeps fd and may close
// it once mapped: the mapping holds the file.
func MapFD(fd, size int) ([]byte, error) {
	if size <= 0 {
		return nil, fmt.Errorf("shm: map fd %d: %w (%d bytes)", fd, ErrTooSmall, size)
	}
	b, err := syscall.Mmap(fd, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("shm: mmap fd %d: %w", fd, err)
	}
	return b, nil
}

// Contains reports whether addr (a fault address, say) lies inside the
// mapping b.
func Contains(b []byte, addr uintptr) bool {
	if len(b) == 0 {
		return false
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return addr >= base && addr-base < uintptr(len(b))
}

// Create creates (or truncates) the file at path with size bytes, all zero,
// and maps it like Map. Tests and goblin's own rings use it.
func Create(path string, size int) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("shm: create %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Truncate(int64(size)); err != nil {
		return nil, fmt.Errorf("shm: size %s: %w", path, err)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("shm: mmap %s: %w", path, err)
	}
	return b, nil
}

// Unmap releases a mapping returned by Map or Create. No goroutine may touch
// the slice afterwards: the addresses are gone and an access faults.
func Unmap(b []byte) error {
	if b == nil {
		return nil
	}
	if err := syscall.Munmap(b); err != nil {
		return fmt.Errorf("shm: munmap: %w", err)
	}
	return nil
}

func p32(b []byte, off int) *int32 {
	_ = b[off : off+4] // bounds check without a (race-instrumented) read
	return (*int32)(unsafe.Pointer(&b[off]))
}

func p64(b []byte, off int) *int64 {
	_ = b[off : off+8] // bounds check without a (race-instrumented) read
	return (*int64)(unsafe.Pointer(&b[off]))
}

// LoadInt32Acquire reads the int32 at off with (at least) acquire ordering:
// every write the storing side made before its release store is visible
// after this load.
func LoadInt32Acquire(b []byte, off int) int32 { return atomic.LoadInt32(p32(b, off)) }

// StoreInt32Release writes v at off with (at least) release ordering: every
// earlier write by this goroutine is visible to a reader whose acquire load
// sees v.
func StoreInt32Release(b []byte, off int, v int32) { atomic.StoreInt32(p32(b, off), v) }

// CompareAndSwapInt32 replaces old by new at off if it holds old; it is a
// full fence either way.
func CompareAndSwapInt32(b []byte, off int, old, new int32) bool {
	return atomic.CompareAndSwapInt32(p32(b, off), old, new)
}

// Int64At is the int64 at off (8-byte aligned) as a typed atomic value,
// for a word a hot path reads often: the bounds are checked once, here,
// and each Load then is one inlined MOV. The pointer is valid while the
// mapping is: the caller drops it when it unmaps b.
func Int64At(b []byte, off int) *atomic.Int64 {
	if off%8 != 0 {
		panic("shm: Int64At: unaligned offset")
	}
	return (*atomic.Int64)(unsafe.Pointer(p64(b, off)))
}

// LoadInt64Acquire reads the int64 at off with (at least) acquire ordering.
func LoadInt64Acquire(b []byte, off int) int64 { return atomic.LoadInt64(p64(b, off)) }

// StoreInt64Release writes v at off with (at least) release ordering.
func StoreInt64Release(b []byte, off int, v int64) { atomic.StoreInt64(p64(b, off), v) }

// GetAndAddInt64 adds delta to the int64 at off and returns the value before
// the addition; it is a full fence.
func GetAndAddInt64(b []byte, off int, delta int64) int64 {
	return atomic.AddInt64(p64(b, off), delta) - delta
}

// CompareAndSwapInt64 replaces old by new at off if it holds old; it is a
// full fence either way.
func CompareAndSwapInt64(b []byte, off int, old, new int64) bool {
	return atomic.CompareAndSwapInt64(p64(b, off), old, new)
}

// GetInt32 reads the little-endian int32 at off with no ordering.
func GetInt32(b []byte, off int) int32 { return int32(binary.LittleEndian.Uint32(b[off:])) }

// PutInt32 writes the little-endian int32 at off with no ordering.
func PutInt32(b []byte, off int, v int32) { binary.LittleEndian.PutUint32(b[off:], uint32(v)) }

// GetInt64 reads the little-endian int64 at off with no ordering.
func GetInt64(b []byte, off int) int64 { return int64(binary.LittleEndian.Uint64(b[off:])) }

// PutInt64 writes the little-endian int64 at off with no ordering.
func PutInt64(b []byte, off int, v int64) { binary.LittleEndian.PutUint64(b[off:], uint64(v)) }

// GetUint16 reads the little-endian uint16 at off with no ordering.
func GetUint16(b []byte, off int) uint16 { return binary.LittleEndian.Uint16(b[off:]) }

// PutUint16 writes the little-endian uint16 at off with no ordering.
func PutUint16(b []byte, off int, v uint16) { binary.LittleEndian.PutUint16(b[off:], v) }

// Align rounds v up to a multiple of a, which must be a power of two: the
// record and frame alignment every shared-memory layout uses.
func Align(v, a int) int { return (v + a - 1) &^ (a - 1) }

// GetAndAddInt32 adds delta to the int32 at off and returns the value before
// the addition; it is a full fence.
func GetAndAddInt32(b []byte, off int, delta int32) int32 {
	return atomic.AddInt32(p32(b, off), delta) - delta
}
