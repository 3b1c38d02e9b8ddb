package arena

import (
	"slices"
	"sync/atomic"
	"unsafe"
)

// OffHeap is a set of memory regions outside the Go heap: anonymous private mappings
// on Linux, advised to use transparent huge pages. The garbage collector neither
// scans nor counts them, and huge pages spare random accesses most TLB misses. Its
// owner frees regions explicitly (Free, FreeAll) and should register FreeAll as a
// cleanup (runtime.AddCleanup) in case it is dropped without closing.
//
// Only the owner's goroutine touches the regions: no other code receives them.
// Where mappings are unavailable (other systems, or mmap failing) regions come from
// the Go heap and freeing only forgets them.
type OffHeap struct {
	live [][]byte // every region handed out and not yet freed
	heap [][]byte // the ones that fell back to the Go heap

	deferHuge bool     // DeferHugePages is on: Alloc maps advised against huge pages
	pending   [][]byte // regions Alloc mapped while deferHuge, to advise at AdviseHugePages

	// freed counts FreeAll's calls. The owner writes it (FreeAll); a
	// Collapse running on another goroutine reads it between regions and
	// stops once it differs from the count it was made at, so a flush
	// after a load does not leave a collapse working through unmapped
	// (or mapped again) ranges. Only the number passes between them, no
	// memory: a count read one region late costs one harmless madvise.
	freed atomic.Uint64
}

// pageAdvice is what mapRegion tells the kernel about a region's pages.
type pageAdvice uint8

const (
	adviseHuge  pageAdvice = iota // MADV_HUGEPAGE
	adviseSmall                   // MADV_NOHUGEPAGE
	adviseLater                   // MADV_NOHUGEPAGE until adviseHugeLater (DeferHugePages)
)

// Populate faults every page of b in, writable, with one system call
// (MADV_POPULATE_WRITE, Linux 5.14+), without writing to them: a thread
// that can wait does it so that the owner who writes the memory later does
// not take a page fault (on a virtual machine possibly a host's too) per
// 4 KiB page. Best effort: an older kernel leaves the pages to fault in
// as they are first touched. Safe beside writes to the same memory.
func Populate(b []byte) { populate(b) }

// DeferHugePages makes Alloc map its regions advised against huge pages
// (MADV_NOHUGEPAGE, so that THP "always" does not give them huge pages
// either) until AdviseHugePages, for a bulk load that fills them at once, and
// fault each one in whole when it is mapped (MADV_POPULATE_WRITE: one
// system call instead of a page fault per 4 KiB page, ~20 % less system
// time). A huge page can cost a load far more than the small pages it
// replaces: a free 2 MiB block is the kind a virtual machine with free
// page reporting (virtio-balloon) has handed back to the host, so its
// first touch faults on the host too, and with THP defrag "madvise" a
// fault may compact memory to find one; small pages mostly reuse memory
// the guest has touched before. Once advised, khugepaged (or a Collapse)
// puts them in huge pages.
func (m *OffHeap) DeferHugePages() { m.deferHuge = true }

// HugePagesDeferred reports whether DeferHugePages is on (until
// AdviseHugePages): tests of a bulk load read it, on the owner's
// goroutine.
func (m *OffHeap) HugePagesDeferred() bool { return m.deferHuge }

// AdviseHugePages ends DeferHugePages: the regions mapped meanwhile are
// advised huge pages now (khugepaged collapses them in the background;
// until then they are served from small pages), and later ones at once.
// It returns a Collapse of those regions, which puts them in huge pages at
// once instead.
func (m *OffHeap) AdviseHugePages() Collapse {
	c := Collapse{regions: make([]region, 0, len(m.pending)), freed: &m.freed, at: m.freed.Load()}
	for _, r := range m.pending {
		adviseHugeLater(r)
		c.regions = append(c.regions, region{uintptr(unsafe.Pointer(unsafe.SliceData(r))), len(r)})
	}
	m.pending, m.deferHuge = nil, false
	return c
}

// region is a mapping's address and length, kept as numbers: a Collapse
// hands them to the kernel and never touches the memory.
type region struct {
	addr uintptr
	n    int
}

// A Collapse is the regions AdviseHugePages advised, to be put in huge
// pages at once (MADV_COLLAPSE) rather than whenever khugepaged reaches
// them. Run blocks while the kernel copies them, so it is meant for a
// goroutine of its own: it only asks the kernel about address ranges and
// never reads or writes them, so it may run while the owner uses them. A
// range the owner has unmapped meanwhile fails harmlessly; one mapped
// again by then is collapsed, which changes nothing but its page size.
//
// A FreeAll of the OffHeap that made it stops a running Collapse before
// its next region (Run then reports Stopped).
type Collapse struct {
	regions []region
	freed   *atomic.Uint64 // the OffHeap's FreeAll count (see OffHeap.freed)
	at      uint64         // *freed when AdviseHugePages made the Collapse
}

// CollapseResult is what a Collapse.Run did.
type CollapseResult struct {
	Collapsed int   // regions the kernel put in huge pages
	Failed    int   // regions it refused
	Err       error // the last refusal's error (a syscall.Errno from the kernel), or nil
	Stopped   bool  // Run stopped early: the OffHeap's FreeAll freed the regions
}

// Len returns the number of regions.
func (c Collapse) Len() int { return len(c.regions) }

// Run collapses the regions and returns how many the kernel put in huge
// pages, how many it refused and the last error it gave (an older kernel,
// no huge page to be had, a region unmapped meanwhile). It stops early,
// Stopped, once the OffHeap's FreeAll has run.
func (c Collapse) Run() (r CollapseResult) {
	for _, g := range c.regions {
		if c.freed != nil && c.freed.Load() != c.at {
			r.Stopped = true
			return r
		}
		if e := collapseRange(g.addr, g.n); e != nil {
			r.Failed++
			r.Err = e
			continue
		}
		r.Collapsed++
	}
	return r
}

// RegionAlign is the size regions should be a multiple of for huge pages to apply.
const RegionAlign = 2 << 20

// Alloc returns n zeroed bytes.
func (m *OffHeap) Alloc(n int) []byte {
	if m.deferHuge {
		return m.alloc(n, adviseLater)
	}
	return m.alloc(n, adviseHuge)
}

// AllocSmallPages returns n zeroed bytes mapped without huge pages, for
// memory a latency-bound thread first touches a little at a time: the first
// touch of a huge page has the kernel clear 2 MiB (and, with THP defrag,
// perhaps compact memory) in one page fault, where small pages fault 4 KiB
// at a time as they are reached.
func (m *OffHeap) AllocSmallPages(n int) []byte { return m.alloc(n, adviseSmall) }

func (m *OffHeap) alloc(n int, advice pageAdvice) []byte {
	b, err := mapRegion(n, advice)
	if err != nil {
		b = make([]byte, n)
		m.heap = append(m.heap, b)
	} else if advice == adviseLater {
		m.pending = append(m.pending, b)
		populate(b)
	}
	m.live = append(m.live, b)
	return b
}

// Free releases a region Alloc returned (the same slice, or one with the same start
// and capacity). Using it afterwards faults.
func (m *OffHeap) Free(b []byte) {
	for i, r := range m.live {
		if cap(r) == cap(b) && &r[:1][0] == &b[:1][0] {
			m.live = slices.Delete(m.live, i, i+1)
			m.release(r)
			return
		}
	}
	panic("arena: OffHeap.Free of a region it did not allocate")
}

// FreeAll releases every region.
func (m *OffHeap) FreeAll() {
	for _, r := range m.live {
		m.release(r)
	}
	m.live, m.heap, m.pending = nil, nil, nil
	m.freed.Add(1) // stops a Collapse of these regions (see freed)
}

// Bytes returns the total size of the live regions.
func (m *OffHeap) Bytes() int64 {
	var n int64
	for _, r := range m.live {
		n += int64(cap(r))
	}
	return n
}

// Mapped returns the total size of the live regions that are mappings
// (not Go heap fallbacks): memory the Go runtime does not count.
func (m *OffHeap) Mapped() int64 {
	n := m.Bytes()
	for _, h := range m.heap {
		n -= int64(cap(h))
	}
	return n
}

func (m *OffHeap) release(r []byte) {
	for i, p := range m.pending {
		if &p[:1][0] == &r[:1][0] {
			m.pending = slices.Delete(m.pending, i, i+1)
			break
		}
	}
	for i, h := range m.heap {
		if &h[:1][0] == &r[:1][0] {
			m.heap = slices.Delete(m.heap, i, i+1)
			return
		}
	}
	unmapRegion(r)
}
