package shm

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestMapSharesWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "seg")
	a, err := Create(path, 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer Unmap(a)
	b, err := Map(path)
	if err != nil {
		t.Fatal(err)
	}
	defer Unmap(b)
	c, err := MapPrefault(path)
	if err != nil {
		t.Fatal(err)
	}
	defer Unmap(c)
	if len(b) != 4096 {
		t.Fatalf("len = %d, want 4096", len(b))
	}
	StoreInt64Release(a, 64, 0x0102030405060708)
	if got := LoadInt64Acquire(b, 64); got != 0x0102030405060708 {
		t.Fatalf("second mapping reads %#x", got)
	}
	if got := GetInt64(b, 64); got != 0x0102030405060708 {
		t.Fatalf("plain read %#x", got)
	}
	if got := LoadInt64Acquire(c, 64); got != 0x0102030405060708 {
		t.Fatalf("prefaulted mapping reads %#x", got)
	}
	if old := GetAndAddInt64(a, 64, 8); old != 0x0102030405060708 || GetInt64(b, 64) != 0x0102030405060710 {
		t.Fatalf("GetAndAdd old=%#x now=%#x", old, GetInt64(b, 64))
	}
	if CompareAndSwapInt64(a, 64, 1, 2) {
		t.Fatal("CAS succeeded on a wrong old value")
	}
	if !CompareAndSwapInt32(b, 8, 0, -5) || LoadInt32Acquire(a, 8) != -5 {
		t.Fatal("CAS32 failed")
	}
	PutUint16(a, 100, 0xBEEF)
	if GetUint16(b, 100) != 0xBEEF {
		t.Fatal("uint16 round trip")
	}
}

func TestMapErrors(t *testing.T) {
	if _, err := Map(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("mapping a missing file succeeded")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("out-of-range access did not panic")
		}
	}()
	LoadInt64Acquire(make([]byte, 8), 4)
}

func TestReleaseOnlyStores(t *testing.T) {
	b := make([]byte, 64)
	StoreInt64ReleaseOnly(b, 8, -42)
	StoreInt32ReleaseOnly(b, 20, 7)
	if LoadInt64Acquire(b, 8) != -42 || LoadInt32Acquire(b, 20) != 7 || GetInt32(b, 16) != 0 {
		t.Fatal("release-only stores wrote the wrong bytes")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("out-of-range release-only store did not panic")
		}
	}()
	StoreInt64ReleaseOnly(b, 60, 1)
}

// A writer publishes a payload with a release-only store of its sequence;
// the reader that acquire-loads the sequence must see the payload.
func TestReleaseOnlyPublishes(t *testing.T) {
	b := make([]byte, 128)
	done := make(chan struct{})
	deadline := time.Now().Add(30 * time.Second) // both sides give up by then, the reader saying where
	go func() {
		defer close(done)
		for i := int64(1); i <= 2000; i++ {
			for LoadInt64Acquire(b, 64) != i-1 {
				if time.Now().After(deadline) {
					return
				}
				runtime.Gosched()
			}
			PutInt64(b, 0, i*3)
			StoreInt64ReleaseOnly(b, 8, i)
		}
	}()
	for i := int64(1); i <= 2000; i++ {
		for LoadInt64Acquire(b, 8) != i {
			if time.Now().After(deadline) {
				t.Fatalf("the writer's sequence %d never became visible in 30 s (it reads %d)", i, LoadInt64Acquire(b, 8))
			}
			runtime.Gosched()
		}
		if got := GetInt64(b, 0); got != i*3 {
			t.Fatalf("payload %d after sequence %d", got, i)
		}
		StoreInt64Release(b, 64, i)
	}
	<-done
}

// TestMapPrefaultStoresTakeNoFault writes one byte into every page of a
// sparse file mapped by MapPrefault and counts this thread's page faults
// while it does. A read-only prefault (MAP_POPULATE on a shared mapping)
// leaves the pages write-protected on a disk-backed file system, so every
// store faulted; on tmpfs even that maps them writable, so only a
// disk-backed temp directory (the usual /tmp) can catch the difference.
func TestMapPrefaultStoresTakeNoFault(t *testing.T) {
	const pages = 512
	dir := t.TempDir()
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	if fs.Type == unix.TMPFS_MAGIC {
		t.Logf("%s is tmpfs: pages map writable on any prefault, so this run cannot tell a read-only prefault apart", dir)
	}
	path := filepath.Join(dir, "log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(pages * 4096); err != nil {
		t.Fatal(err)
	}
	f.Close()
	b, err := MapPrefault(path)
	if err != nil {
		t.Fatal(err)
	}
	defer Unmap(b)

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := threadMinorFaults(t)
	for off := 0; off < len(b); off += 4096 {
		b[off] = 1
	}
	faults := threadMinorFaults(t) - before
	// A few faults may come from elsewhere (the runtime on this thread);
	// a store fault per page is what the prefault must remove.
	if faults > pages/8 {
		t.Fatalf("%d page faults writing one byte into each of %d prefaulted pages", faults, pages)
	}
}

func threadMinorFaults(t *testing.T) int64 {
	t.Helper()
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		t.Fatal(err)
	}
	return ru.Minflt
}
