package testkit

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReadHexFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "msg.hex")
	if err := os.WriteFile(path, []byte("  0a0Bff\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := ReadHexFile(t, path); string(got) != "\x0a\x0b\xff" {
		t.Fatalf("ReadHexFile = %x, want 0a0bff", got)
	}
}

// TestReadFails checks that a missing file and text that is not hex fail
// the test rather than return nothing.
func TestReadFails(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.hex")
	if err := os.WriteFile(bad, []byte("0xzz"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "missing.hex"), bad} {
		ft := &fakeTB{TB: t}
		func() {
			defer func() { _ = recover() }()
			ReadHexFile(ft, path)
		}()
		if !ft.failed {
			t.Errorf("ReadHexFile(%s) did not fail", path)
		}
	}
}

// fakeTB records a fatal failure and stops ReadHexFile with a panic, in place of
// runtime.Goexit.
type fakeTB struct {
	testing.TB
	failed bool
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatal(...any) {
	f.failed = true
	panic("fatal")
}
func (f *fakeTB) Fatalf(string, ...any) {
	f.failed = true
	panic("fatal")
}
