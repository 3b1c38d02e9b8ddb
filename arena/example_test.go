package arena_test

import (
	"fmt"

	"github.com/goblin-kv/goblin/arena"
)

func Example() {
	a, err := arena.New(arena.Options{})
	if err != nil {
		panic(err)
	}
	r, _ := a.Alloc(11) // an 11-byte value tail: a 16-byte block
	copy(a.Bytes(r, 11), "hello arena")
	fmt.Println(string(a.Bytes(r, 11)), a.Cap(r))

	a.Free(r)
	r2, _ := a.Alloc(13) // same size class: the freed block is reused
	fmt.Println(r2 == r)

	// Compaction reports every move so the owner can patch its references.
	moved := a.Compact(16, func(old, new arena.Ref) { fmt.Println("moved", old, "to", new) })
	fmt.Println(moved, "moves (nothing is fragmented yet)")

	var st arena.Stats
	a.Stats(&st)
	fmt.Println(st.Live, st.Live+st.Dead+st.Free == st.Size)
	// Output:
	// hello arena 16
	// true
	// 0 moves (nothing is fragmented yet)
	// 16 true
}
