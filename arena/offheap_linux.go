//go:build linux

package arena

import (
	"bytes"
	"errors"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// mapRegion maps n zeroed bytes, private and anonymous, with the given
// advice: adviseHuge asks for transparent huge pages (advice only: the
// kernel may decline, e.g. with THP disabled); adviseSmall asks for none,
// which matters where THP is "always"; adviseLater asks for none too, in a
// region adviseHugeLater will advise huge pages (a multiple of
// RegionAlign): with no advice at all a system whose THP is "always"
// (RHEL's default) would fault it in huge pages at once, which is what
// DeferHugePages defers. A region of another size keeps the system's
// default, as it would have later.
func mapRegion(n int, advice pageAdvice) ([]byte, error) {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, err
	}
	switch {
	case advice == adviseSmall, advice == adviseLater && n%RegionAlign == 0:
		_ = unix.Madvise(b, unix.MADV_NOHUGEPAGE)
	case advice == adviseHuge && n%RegionAlign == 0:
		_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
	}
	return b, nil
}

// adviseHugeLater advises huge pages for a region mapped with adviseLater
// (MADV_HUGEPAGE also clears its MADV_NOHUGEPAGE): the kernel's
// khugepaged then collapses its small pages into huge ones in the
// background.
func adviseHugeLater(b []byte) {
	if len(b)%RegionAlign == 0 {
		_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
	}
}

// populate faults every page of b in, writable, with one system call
// (MADV_POPULATE_WRITE, Linux 5.14+) rather than a page fault per page as
// the owner first touches them. It is best effort: on an older kernel, or
// short of memory, the pages fault in one by one as before.
func populate(b []byte) { _ = unix.Madvise(b, unix.MADV_POPULATE_WRITE) }

// collapseRange asks the kernel to put the n bytes at addr in huge pages
// now (MADV_COLLAPSE, Linux 6.1+), copying their small pages, rather than
// wait for khugepaged; it blocks while it does. An error (an older kernel,
// no huge page to be had, nothing mapped there) leaves them as they were.
// The range is a number to the kernel: no Go memory is touched.
// MADV_COLLAPSE ignores the system's THP setting, so an operator's
// "never" is checked here first (thpNever).
func collapseRange(addr uintptr, n int) error {
	if thpNever() {
		return errTHPNever
	}
	if _, _, e := unix.Syscall(unix.SYS_MADVISE, addr, uintptr(n), unix.MADV_COLLAPSE); e != 0 {
		return e
	}
	return nil
}

func unmapRegion(b []byte) {
	if err := unix.Munmap(b); err != nil {
		panic("arena: munmap: " + err.Error())
	}
}

// errTHPNever is collapseRange's answer where transparent huge pages are
// switched off.
var errTHPNever = errors.New("transparent huge pages are off (enabled: never)")

// thpNever reports whether /sys/kernel/mm/transparent_hugepage/enabled
// selects "[never]", read once: an operator who switched huge pages off
// gets none from the arena, MADV_COLLAPSE included.
var thpNever = sync.OnceValue(func() bool {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil && thpSelectsNever(b)
})

// thpSelectsNever reports whether enabled, the file's text (e.g. "always
// [madvise] never"), has "never" selected.
func thpSelectsNever(enabled []byte) bool { return bytes.Contains(enabled, []byte("[never]")) }
