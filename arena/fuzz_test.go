package arena

import (
	"testing"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// FuzzArena decodes the input as allocations, frees and compaction steps, checking
// every block's contents and the arena's invariants after each operation. The seed
// corpus in testdata/fuzz/FuzzArena runs in every plain `go test`.
func FuzzArena(f *testing.F) {
	f.Add([]byte{0, 16, 0, 16, 1, 0, 2, 4})
	f.Add([]byte{0, 200, 0, 255, 0, 3, 1, 1, 0, 24, 2, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		m := newModel(t)
		in := testkit.NewFuzzReader(data)
		next := in.Next
		for ops := 0; in.Len() > 0 && ops < 5000; ops++ {
			switch next() % 4 {
			case 0, 3:
				n := int(next())
				switch {
				case n > 250:
					n = MaxSmall + (n-250)*1000 // dedicated blocks
				case n > 200:
					n = (n - 200) * 160
				}
				m.alloc(max(n, 1), next())
			case 1:
				if len(m.refs) > 0 {
					m.free(int(next()) % len(m.refs))
				}
			case 2:
				m.compact(int(next()%16) + 1)
			}
			if err := m.a.Check(); err != nil {
				t.Fatal(err)
			}
		}
		m.check()
	})
}
