//go:build linux

package arena

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// vmFlags returns the VmFlags line of the mapping that holds b's first
// byte, from /proc/self/smaps (neighbouring mappings with the same flags
// are one there).
func vmFlags(t *testing.T, b []byte) string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatalf("cannot read the mappings' advice: %v", err)
	}
	defer f.Close()
	addr := uint64(uintptr(unsafe.Pointer(&b[0])))
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uint64
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return line
		}
	}
	t.Fatalf("no mapping holds %#x in /proc/self/smaps", addr)
	return ""
}

// TestDeferHugePages: regions Alloc maps under DeferHugePages are advised
// against huge pages (nh; THP "always" would give them huge pages
// otherwise) until AdviseHugePages, which advises them huge pages and
// returns a Collapse of them (a region freed meanwhile is forgotten) that
// leaves their contents as they were; Alloc advises at once again after.
func TestDeferHugePages(t *testing.T) {
	var m OffHeap
	defer m.FreeAll()
	if b := m.Alloc(RegionAlign); !strings.Contains(vmFlags(t, b), " hg") {
		testkit.Missing(t, "the kernel shows no hg flag for an advised mapping (%s): THP advice not visible here", vmFlags(t, b))
	}
	m.DeferHugePages()
	a, freed := m.Alloc(2*RegionAlign), m.Alloc(RegionAlign)
	if fl := vmFlags(t, a); strings.Contains(fl, " hg") || !strings.Contains(fl, " nh") {
		t.Fatalf("a region mapped under DeferHugePages is not advised against huge pages (nh), so THP \"always\" would fault it in huge pages: %s", fl)
	}
	m.Free(freed)
	if len(m.pending) != 1 {
		t.Fatalf("%d regions wait for the advice after one was freed, want 1", len(m.pending))
	}
	for i := range a {
		a[i] = byte(i * 7)
	}
	c := m.AdviseHugePages()
	if c.Len() != 1 {
		t.Fatalf("AdviseHugePages returned a Collapse of %d regions, want the 1 still mapped", c.Len())
	}
	r := c.Run()
	t.Logf("MADV_COLLAPSE: %d of 1 regions collapsed (%v)", r.Collapsed, r.Err)
	for i := range a {
		if a[i] != byte(i*7) {
			t.Fatalf("byte %d changed by the collapse: %d, want %d", i, a[i], byte(i*7))
		}
	}
	if fl := vmFlags(t, a); !strings.Contains(fl, " hg") || strings.Contains(fl, " nh") {
		t.Fatalf("AdviseHugePages did not advise the deferred region huge pages instead of none: %s", fl)
	}
	if fl := vmFlags(t, m.Alloc(RegionAlign)); !strings.Contains(fl, " hg") {
		t.Fatalf("Alloc after AdviseHugePages does not advise: %s", fl)
	}
	if fl := vmFlags(t, m.AllocSmallPages(RegionAlign)); !strings.Contains(fl, " nh") {
		t.Fatalf("AllocSmallPages does not refuse huge pages: %s", fl)
	}
}

// TestTHPNeverIsRead: the kernel's THP setting is read as the operator set
// it: only "[never]" selected stops the arena's MADV_COLLAPSE.
func TestTHPNeverIsRead(t *testing.T) {
	for text, never := range map[string]bool{
		"always [madvise] never\n": false,
		"[always] madvise never\n": false,
		"always madvise [never]\n": true,
	} {
		if got := thpSelectsNever([]byte(text)); got != never {
			t.Errorf("thpSelectsNever(%q) = %v, want %v", text, got, never)
		}
	}
}

// TestDeferHugePagesPopulates: a region Alloc maps under DeferHugePages is
// resident before anything touches it (MADV_POPULATE_WRITE, Linux 5.14+),
// one mapped at other times is not; on an older kernel the region is
// still usable, faulted in as it is touched.
func TestDeferHugePagesPopulates(t *testing.T) {
	var m OffHeap
	defer m.FreeAll()
	resident := func(b []byte) int {
		vec := make([]byte, len(b)/os.Getpagesize())
		// mincore(2) reads the mapping's page table, never its memory.
		if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
			t.Fatalf("mincore: %v", e)
		}
		n := 0
		for _, v := range vec {
			n += int(v & 1)
		}
		return n
	}
	if n := resident(m.Alloc(RegionAlign)); n != 0 {
		t.Fatalf("%d pages of a region Alloc mapped are resident before any touch, want 0", n)
	}
	probe, err := unix.Mmap(-1, 0, RegionAlign, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	err = unix.Madvise(probe, unix.MADV_POPULATE_WRITE)
	unix.Munmap(probe)
	m.DeferHugePages()
	b := m.Alloc(2 * RegionAlign)
	if err != nil {
		// A kernel feature, not something scripts/setup.sh installs: an
		// older kernel gets the fallback, the pages faulted in as touched.
		var u unix.Utsname
		_ = unix.Uname(&u)
		t.Logf("MADV_POPULATE_WRITE (Linux 5.14+) refused by kernel %s (%v): checking the fallback", unix.ByteSliceToString(u.Release[:]), err)
		if n := resident(b); n != 0 {
			t.Fatalf("%d pages resident after Alloc where MADV_POPULATE_WRITE is refused, want 0", n)
		}
		for i := range b {
			b[i] = byte(i)
		}
		if n, want := resident(b), len(b)/os.Getpagesize(); n != want {
			t.Fatalf("%d of %d pages resident once written, want all", n, want)
		}
		return
	}
	if n, want := resident(b), len(b)/os.Getpagesize(); n != want {
		t.Fatalf("%d of %d pages resident after Alloc under DeferHugePages, want all", n, want)
	}
}
