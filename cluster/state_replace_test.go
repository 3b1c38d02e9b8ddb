package cluster

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestReplaceFollowsTheChange: over 2,000 random views (slots moving
// between nodes, one slot or whole ranges at a time, ranges handed on as
// the same slice or as an equal copy, nodes joining and leaving, slots
// MIGRATING and IMPORTING), the State Replace keeps equals the one a full
// rebuild keeps: owners, moves, myself, epoch.
func TestReplaceFollowsTheChange(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	id := func(i int) string { return fmt.Sprintf("%040x", i+1) }
	owner := make([]int, Slots) // node number per slot, -1: none
	for x := range owner {
		owner[x] = x % 3
	}
	members := []int{0, 1, 2}
	nextID := 3
	ranges := map[int][]Range{} // the slice last handed on, per node number
	view := func(epoch uint64) *Config {
		c := &Config{Epoch: epoch, Myself: id(members[0])}
		for _, m := range members {
			var rs []Range
			for x := 0; x < Slots; x++ {
				if owner[x] != m {
					continue
				}
				if k := len(rs); k > 0 && int(rs[k-1].Last) == x-1 {
					rs[k-1].Last = uint16(x)
				} else {
					rs = append(rs, Range{uint16(x), uint16(x)})
				}
			}
			if prev, ok := ranges[m]; ok && sameRanges(prev, rs) && rng.IntN(2) == 0 {
				rs = prev // the bus hands unchanged ranges on as the same slice
			}
			ranges[m] = rs
			c.Nodes = append(c.Nodes, Node{ID: id(m), Host: "127.0.0.1", Port: 7000 + m, Slots: rs})
		}
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		return c
	}
	got, want := NewEmpty(), NewEmpty()
	c := view(1)
	got.Replace(c)
	want.rebuild(c)
	for step := range 2000 {
		switch k := rng.IntN(10); {
		case k < 4: // one slot changes owner (SETSLOT NODE)
			owner[rng.IntN(Slots)] = members[rng.IntN(len(members))]
		case k < 6: // a range changes owner, or is unassigned
			a := rng.IntN(Slots)
			b := min(Slots, a+1+rng.IntN(2000))
			to := members[rng.IntN(len(members))]
			if rng.IntN(4) == 0 {
				to = -1
			}
			for x := a; x < b; x++ {
				owner[x] = to
			}
		case k < 7 && len(members) < 8: // a node joins, in a random place
			at := 1 + rng.IntN(len(members))
			members = append(members[:at], append([]int{nextID}, members[at:]...)...)
			nextID++
		case k < 8 && len(members) > 2: // a node other than myself leaves: its slots go
			at := 1 + rng.IntN(len(members)-1)
			gone := members[at]
			members = append(members[:at], members[at+1:]...)
			for x := range owner {
				if owner[x] == gone {
					owner[x] = -1
				}
			}
		case k < 9: // a slot starts moving, on both States alike
			x := uint16(rng.IntN(Slots))
			other := id(members[1+rng.IntN(len(members)-1)])
			how := "MIGRATING"
			if got.Owner(x) != got.Me() {
				how = "IMPORTING"
			}
			e1, e2 := got.SetSlot(x, how, other), want.SetSlot(x, how, other)
			if (e1 == nil) != (e2 == nil) {
				t.Fatalf("step %d: SETSLOT %d %s: %v and %v", step, x, how, e1, e2)
			}
			continue
		default: // nothing changes: the same view again
		}
		c := view(uint64(step + 2))
		got.Replace(c)
		want.rebuild(c)
		if got.owner != want.owner || got.moving != want.moving || got.importing != want.importing ||
			got.open != want.open || got.me != want.me || got.epoch != want.epoch {
			t.Fatalf("step %d (%d members): Replace's State differs from a full rebuild's (owners equal %v, moves equal %v, open %d/%d, me %d/%d)",
				step, len(members), got.owner == want.owner, got.moving == want.moving, got.open, want.open, got.me, want.me)
		}
		if got.Gen() != want.Gen() {
			t.Fatalf("step %d: Gen %d, want %d", step, got.Gen(), want.Gen())
		}
	}
}

// TestDiffRanges: the runs diffRanges reports are exactly the slots in
// one list of ranges and not the other, each once, in order, for random
// lists.
func TestDiffRanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	random := func() (rs []Range, in [Slots]bool) {
		for x := rng.IntN(300); x < Slots; x += 1 + rng.IntN(600) {
			last := min(Slots-1, x+rng.IntN(400))
			rs = append(rs, Range{uint16(x), uint16(last)})
			for y := x; y <= last; y++ {
				in[y] = true
			}
			x = last + 1
		}
		return rs, in
	}
	for range 500 {
		a, inA := random()
		b, inB := random()
		var seen [Slots]int
		prev := -1
		diffRanges(a, b, func(first, last int, gained bool) {
			if first <= prev || last < first {
				t.Fatalf("run %d-%d after %d: out of order", first, last, prev)
			}
			prev = last
			for x := first; x <= last; x++ {
				if inB[x] == inA[x] || gained != inB[x] {
					t.Fatalf("slot %d reported (gained %v), in a %v, in b %v", x, gained, inA[x], inB[x])
				}
				seen[x]++
			}
		})
		for x := range Slots {
			if want := inA[x] != inB[x]; want != (seen[x] == 1) {
				t.Fatalf("slot %d: in a %v, in b %v, reported %d times", x, inA[x], inB[x], seen[x])
			}
		}
	}
}
