package collection

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goblin-kv/goblin/arena"
)

// TestListIndexModel: a sorted set's order List with a counted index,
// against a sorted slice of zkeys: random inserts and deletes (enough to
// split and empty hundreds of nodes and grow the index block several
// times), range deletes, rank lookups and bound counts, with Compact
// moving the nodes and the index block in between and Check (which
// compares the index with a walk of the nodes) after every round. The
// same operations on an unindexed list must give the same answers.
func TestListIndexModel(t *testing.T) {
	a := newArena(t)
	var ls [2]List
	ls[0], ls[1] = NewList(1), NewList(2)
	if err := ls[0].EnableIndex(a); err != nil {
		t.Fatal(err)
	}
	relo := func(old, nw arena.Ref) {
		o := OwnerOf(a, nw)
		if o < 1 || o > 2 || !ls[o-1].Relocate(a, old, nw) {
			panic(fmt.Sprintf("moved block %#x (owner %d) that no list holds", old, o))
		}
	}
	var model [][]byte
	rng := rand.New(rand.NewPCG(1, 2))
	zkey := func(score float64, m string) []byte { return AppendZKey(nil, score, []byte(m)) }
	moved := 0
	for round := 0; round < 100; round++ {
		for range 400 {
			switch op := rng.IntN(10); {
			case op < 7 || len(model) == 0: // insert
				k := zkey(float64(rng.IntN(5000)), fmt.Sprintf("member-%d-%s", rng.IntN(1e6), bytes.Repeat([]byte("x"), rng.IntN(40))))
				if _, found := slices.BinarySearchFunc(model, k, bytes.Compare); found {
					continue
				}
				b := ZBound{Kind: ZByKey, Score: ZKeyScore(k), Member: k[ZKeyLen:]}
				for i := range ls {
					if err := ls[i].ZInsert(a, k, &b); err != nil {
						t.Fatal(err)
					}
				}
				i, _ := slices.BinarySearchFunc(model, k, bytes.Compare)
				model = slices.Insert(model, i, k)
			case op < 9: // delete
				i := rng.IntN(len(model))
				k := model[i]
				b := ZBound{Kind: ZByKey, Score: ZKeyScore(k), Member: k[ZKeyLen:]}
				for j := range ls {
					if !ls[j].ZDelete(a, &b) {
						t.Fatalf("round %d: ZDelete of rank %d missed", round, i)
					}
				}
				model = slices.Delete(model, i, i+1)
			default: // range delete
				start := rng.IntN(len(model))
				count := rng.IntN(4)
				if rng.IntN(200) == 0 { // now and then a whole node or more
					count = rng.IntN(400)
				}
				count = min(count, len(model)-start)
				for j := range ls {
					ls[j].DeleteRange(a, start, count)
				}
				model = slices.Delete(model, start, start+count)
			}
		}
		// Ranks, ranges and bounds agree with the model.
		for range 50 {
			if len(model) == 0 {
				break
			}
			i := rng.IntN(len(model))
			for j := range ls {
				var got []byte
				ls[j].Range(a, i, i, func(s []byte, v int64, isInt bool) bool { got = append(got, s...); return true })
				if !bytes.Equal(got, model[i]) {
					t.Fatalf("round %d list %d: rank %d is %q, want %q", round, j, i, got, model[i])
				}
				sc := float64(rng.IntN(5000))
				b := ZBound{Kind: ZByScore, Score: sc}
				want, _ := slices.BinarySearchFunc(model, zkey(sc, ""), bytes.Compare)
				if n := ls[j].ZCount(a, &b); n != want {
					t.Fatalf("round %d list %d: %d members below score %v, want %d", round, j, n, sc, want)
				}
			}
		}
		moved += a.Compact(64, relo)
		for j := range ls {
			if err := ls[j].Check(a); err != nil {
				t.Fatalf("round %d list %d: %v", round, j, err)
			}
			if ls[j].Len() != len(model) {
				t.Fatalf("round %d: list %d holds %d, model %d", round, j, ls[j].Len(), len(model))
			}
		}
	}
	if ls[0].Nodes() < 50 {
		t.Fatalf("the index never covered more than %d nodes", ls[0].Nodes())
	}
	if moved == 0 {
		t.Fatal("Compact never moved a block: Relocate is not exercised")
	}
	for !ls[0].FreeStep(a, 7) {
	}
	if ls[0].Indexed() {
		t.Fatal("a freed list keeps its index")
	}
}
