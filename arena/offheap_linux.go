//go:build linux

package arena

import "golang.org/x/sys/unix"

// mapRegion maps n zeroed bytes, private and anonymous. With huge it asks for
// transparent huge pages (advice only: the kernel may decline, e.g. with THP
// disabled); without, it asks for none, which matters where THP is "always".
func mapRegion(n int, huge bool) ([]byte, error) {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, err
	}
	switch {
	case !huge:
		_ = unix.Madvise(b, unix.MADV_NOHUGEPAGE)
	case n%RegionAlign == 0:
		_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
	}
	return b, nil
}

func unmapRegion(b []byte) {
	if err := unix.Munmap(b); err != nil {
		panic("arena: munmap: " + err.Error())
	}
}
