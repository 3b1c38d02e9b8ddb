//go:build linux

package arena

import "golang.org/x/sys/unix"

// mapRegion maps n zeroed bytes, private and anonymous, with the given
// advice: adviseHuge asks for transparent huge pages (advice only: the
// kernel may decline, e.g. with THP disabled); adviseSmall asks for none,
// which matters where THP is "always"; adviseNone leaves the system's
// default.
func mapRegion(n int, advice pageAdvice) ([]byte, error) {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, err
	}
	switch {
	case advice == adviseSmall:
		_ = unix.Madvise(b, unix.MADV_NOHUGEPAGE)
	case advice == adviseHuge && n%RegionAlign == 0:
		_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
	}
	return b, nil
}

// adviseHugeLater advises huge pages for a region mapped with adviseNone:
// the kernel's khugepaged then collapses its small pages into huge ones in
// the background.
func adviseHugeLater(b []byte) {
	if len(b)%RegionAlign == 0 {
		_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
	}
}

// collapseRange asks the kernel to put the n bytes at addr in huge pages
// now (MADV_COLLAPSE, Linux 6.1+), copying their small pages, rather than
// wait for khugepaged; it blocks while it does. An error (an older kernel,
// no huge page to be had, nothing mapped there) leaves them as they were.
// The range is a number to the kernel: no Go memory is touched.
func collapseRange(addr uintptr, n int) error {
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
