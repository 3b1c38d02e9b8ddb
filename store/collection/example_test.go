package collection_test

import (
	"fmt"

	"github.com/goblin-kv/goblin/arena"
	"github.com/goblin-kv/goblin/store/collection"
)

// A small hash as Redis stores it: field, value pairs in one listpack blob.
func ExampleListpack() {
	lp := collection.NewListpack(nil)
	lp = lp.Append([]byte("f1")).Append([]byte("v1")).Append([]byte("f2")).Append([]byte("123"))
	fmt.Printf("% x\n", []byte(lp))
	if p := lp.Find(lp.First(), []byte("f2"), 1); p >= 0 {
		fmt.Printf("f2 = %s\n", lp.AppendValue(nil, lp.Next(p)))
	}
	fmt.Println(collection.ValidateListpack(lp, true, nil))
	// Output:
	// 15 00 00 00 04 00 82 66 31 03 82 76 31 03 82 66 32 03 7b 01 ff
	// f2 = 123
	// <nil>
}

func ExampleIntset() {
	is := collection.NewIntset(nil)
	for _, v := range []int64{3, 1, 2} {
		is, _ = is.Add(v)
	}
	fmt.Printf("% x\n", []byte(is))
	// Output: 02 00 00 00 03 00 00 00 01 00 02 00 03 00
}

// A large hash in an arena, kept correct while Compact moves its blocks: the
// relocate callback finds the owning structure by the id each block starts with.
func ExampleHash() {
	a, _ := arena.New(arena.Options{})
	hashes := map[uint32]*collection.Hash{}
	h := collection.NewHash(7)
	hashes[7] = &h
	for i := range 1000 {
		h.Set(a, fmt.Appendf(nil, "field:%d", i), []byte("value"))
	}
	for i := 0; i < 1000; i += 2 {
		h.Delete(a, fmt.Appendf(nil, "field:%d", i))
	}
	a.Compact(100, func(old, nw arena.Ref) {
		hashes[collection.OwnerOf(a, nw)].Relocate(a, old, nw)
	})
	v, ok := h.Get(a, []byte("field:999"))
	fmt.Println(h.Len(), string(v), ok, h.Check(a))
	for !h.FreeStep(a, 64) {
	}
	// Output: 500 value true <nil>
}
