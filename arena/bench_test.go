package arena

import (
	"strconv"
	"testing"
)

// BenchmarkAllocFree measures the allocation path: a block freed and taken
// back from its page's free list (churn), and blocks cut from fresh pages then
// freed (fill), for a small class and the 8 KiB class of a list node.
//
//	go test -run '^$' -bench AllocFree -count 10 ./arena/
func BenchmarkAllocFree(b *testing.B) {
	for _, n := range []int{16, MaxSmall} {
		b.Run("churn/"+strconv.Itoa(n), func(b *testing.B) {
			a, _ := New(Options{})
			refs := make([]Ref, 1024)
			for i := range refs {
				refs[i], _ = a.Alloc(n)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				j := i & 1023
				a.Free(refs[j])
				refs[j], _ = a.Alloc(n)
			}
		})
		b.Run("fill/"+strconv.Itoa(n), func(b *testing.B) {
			a, _ := New(Options{})
			refs := make([]Ref, 0, 1<<16)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				r, err := a.Alloc(n)
				if err != nil {
					b.Fatal(err)
				}
				if refs = append(refs, r); len(refs) == cap(refs) {
					for _, r := range refs {
						a.Free(r)
					}
					refs = refs[:0]
				}
			}
		})
	}
}

// BenchmarkCompactIdle measures Compact when no class is fragmented enough to
// compact, as an idle store's Tick calls it: an arena with a few pages in each of
// ten classes and few holes.
//
//	go test -run '^$' -bench CompactIdle -count 10 ./arena/
func BenchmarkCompactIdle(b *testing.B) {
	a, _ := New(Options{})
	for _, n := range []int{8, 16, 24, 32, 48, 64, 100, 200, 500, 1000} {
		var refs []Ref
		for range 2 * PageSize / BlockSize(n) {
			r, _ := a.Alloc(n)
			refs = append(refs, r)
		}
		for _, r := range refs[:len(refs)/32] {
			a.Free(r)
		}
	}
	relocate := func(Ref, Ref) {}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if a.Compact(1, relocate) != 0 {
			b.Fatal("Compact moved a block of an unfragmented arena")
		}
	}
}
