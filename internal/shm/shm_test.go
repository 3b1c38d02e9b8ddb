package shm

import (
	"path/filepath"
	"testing"
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
