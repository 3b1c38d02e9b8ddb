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
