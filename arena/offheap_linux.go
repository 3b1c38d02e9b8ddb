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

func unmapRegion(b []byte) {
	if err := unix.Munmap(b); err != nil {
		panic("arena: munmap: " + err.Error())
	}
}
