package collection

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"github.com/goblin-kv/goblin/arena"
	"github.com/goblin-kv/goblin/internal/testkit"
)

func newArena(t testing.TB) *arena.Arena {
	t.Helper()
	a, err := arena.New(arena.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func checkNoPointers(v any) error {
	if typ := reflect.TypeOf(v); testkit.HasPointers(typ) {
		return fmt.Errorf("%v holds pointers: the GC would scan every collection", typ)
	}
	return nil
}

func TestHashHoldsNoPointers(t *testing.T) {
	if err := checkNoPointers(Hash{}); err != nil {
		t.Fatal(err)
	}
}

// hashWorld is several hashes sharing one arena, as the store's keys will, with
// the relocate callback the store will have: read the owner id, patch that hash.
type hashWorld struct {
	t      testing.TB
	a      *arena.Arena
	hs     []Hash // owner i+1
	models []map[string]string
	relo   func(old, nw arena.Ref)
}

func newHashWorld(t testing.TB, n int) *hashWorld {
	w := &hashWorld{t: t, a: newArena(t)}
	for i := range n {
		w.hs = append(w.hs, NewHash(uint32(i+1)))
		w.models = append(w.models, map[string]string{})
	}
	w.relo = func(old, nw arena.Ref) {
		o := OwnerOf(w.a, nw)
		if o == 0 || int(o) > len(w.hs) || !w.hs[o-1].Relocate(w.a, old, nw) {
			panic(fmt.Sprintf("moved block %#x (owner %d) that no hash holds", old, o))
		}
	}
	return w
}

func (w *hashWorld) check() {
	w.t.Helper()
	if err := w.a.Check(); err != nil {
		w.t.Fatal(err)
	}
	for i := range w.hs {
		h, m := &w.hs[i], w.models[i]
		if err := h.Check(w.a); err != nil {
			w.t.Fatalf("hash %d: %v", i+1, err)
		}
		if h.Len() != len(m) {
			w.t.Fatalf("hash %d: Len %d, model %d", i+1, h.Len(), len(m))
		}
		n := 0
		h.Range(w.a, func(f, v []byte) bool {
			n++
			if mv, ok := m[string(f)]; !ok || mv != string(v) {
				w.t.Fatalf("hash %d: field %q = %q, model %q (%v)", i+1, f, v, mv, ok)
			}
			return true
		})
		if n != len(m) {
			w.t.Fatalf("hash %d: Range visited %d, model %d", i+1, n, len(m))
		}
	}
}

// Random HSET/HGET/HDEL/random-field against Go maps, on four hashes sharing an
// arena, with Compact moving blocks in between; growth, shrinking and every
// rehash state are crossed many times.
func TestHashModel(t *testing.T) {
	w := newHashWorld(t, 4)
	r := rand.New(rand.NewPCG(5, 6))
	moved := 0
	for op := 0; op < 200000; op++ {
		i := r.IntN(len(w.hs))
		h, m := &w.hs[i], w.models[i]
		space := 3000
		if op/20000%2 == 1 {
			space = 50 // phases of few fields: the tables shrink
		}
		f := "field:" + strconv.Itoa(r.IntN(space))
		switch k := r.IntN(10); {
		case k < 5:
			v := string(make([]byte, r.IntN(120)))
			if r.IntN(2) == 0 {
				v = strconv.Itoa(op)
			}
			added, err := h.Set(w.a, []byte(f), []byte(v))
			if err != nil {
				t.Fatal(err)
			}
			if _, had := m[f]; added == had {
				t.Fatalf("Set(%q) added %v, model had it %v", f, added, had)
			}
			m[f] = v
		case k < 8:
			_, had := m[f]
			if got := h.Delete(w.a, []byte(f)); got != had {
				t.Fatalf("Delete(%q) = %v, model %v", f, got, had)
			}
			delete(m, f)
		case k < 9:
			v, ok := h.Get(w.a, []byte(f))
			if mv, had := m[f]; ok != had || string(v) != mv {
				t.Fatalf("Get(%q) = %q %v, model %q %v", f, v, ok, mv, had)
			}
		default:
			if h.Len() > 0 {
				rf, rv := h.Random(w.a, r.Uint64())
				if m[string(rf)] != string(rv) {
					t.Fatalf("Random gave %q=%q, model %q", rf, rv, m[string(rf)])
				}
			}
		}
		if op%97 == 0 {
			moved += w.a.Compact(32, w.relo)
		}
		if op%5000 == 0 {
			w.check()
		}
	}
	w.check()
	if moved == 0 {
		t.Fatal("Compact never moved a block: the test does not exercise Relocate")
	}
	t.Logf("%d blocks moved by Compact", moved)
}

// Freeing a large hash takes many bounded steps, with Compact moving its remaining
// blocks in between, and leaves the arena empty.
func TestHashFreeStepBounded(t *testing.T) {
	w := newHashWorld(t, 2)
	a := w.a
	for i := range 50000 {
		for j := range w.hs {
			if _, err := w.hs[j].Set(a, []byte("f"+strconv.Itoa(i)), []byte("v"+strconv.Itoa(i*j))); err != nil {
				t.Fatal(err)
			}
		}
		if i%3 == 0 {
			w.hs[1].Delete(a, []byte("f"+strconv.Itoa(i/2))) // fragment hash 2's pages
		}
	}
	var before arena.Stats
	a.Stats(&before)
	steps := 0
	for !w.hs[0].FreeStep(a, 1000) {
		steps++
		var st arena.Stats
		a.Stats(&st)
		if freed := (before.Live - st.Live); freed > int64(steps+1)*1100*arena.MaxSmall {
			t.Fatalf("step %d freed %d bytes: more than its budget", steps, freed)
		}
		a.Compact(64, w.relo)
		if err := a.Check(); err != nil {
			t.Fatal(err)
		}
	}
	if steps < 40 {
		t.Fatalf("freed 50000 fields in %d steps of 1000", steps)
	}
	w.models[0] = map[string]string{}
	w.hs[0] = NewHash(1)
	for i := range 50000 {
		w.models[1]["f"+strconv.Itoa(i)] = "v" + strconv.Itoa(i)
	}
	for i := 0; i < 50000; i += 3 {
		delete(w.models[1], "f"+strconv.Itoa(i/2))
	}
	w.check()
	for !w.hs[1].FreeStep(a, 100000) {
	}
	var st arena.Stats
	a.Stats(&st)
	if st.Live != 0 {
		t.Fatalf("%d bytes live after freeing both hashes", st.Live)
	}
}

// A write during a rehash examines a bounded number of old buckets, so no HSET
// pays for the whole table.
func TestHashRehashIsIncremental(t *testing.T) {
	a := newArena(t)
	h := NewHash(1)
	maxSteps := 0
	for i := range 100000 {
		old, left := h.old, h.mleft
		if _, err := h.Set(a, []byte(strconv.Itoa(i)), nil); err != nil {
			t.Fatal(err)
		}
		if old != 0 && h.old != 0 {
			maxSteps = max(maxSteps, int(left-h.mleft))
		}
		if h.old != 0 && old == 0 && i > 1000 && h.mleft < 1<<h.oldLog {
			t.Fatalf("insert %d started a rehash and migrated %d buckets at once", i, 1<<h.oldLog-h.mleft)
		}
	}
	// A step examines migrateBudget buckets and then finishes the run it is in;
	// runs at 3/4 load are a few dozen buckets at worst, against 2^17 buckets.
	if maxSteps == 0 || maxSteps > 512 {
		t.Fatalf("a write examined up to %d old buckets", maxSteps)
	}
	t.Logf("a write examined at most %d old buckets (tables up to %d)", maxSteps, 1<<h.log)
}

func FuzzHashOps(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 1, 1, 3, 0, 2, 2})
	f.Add([]byte{0, 9, 0, 9, 0, 10, 1, 9, 3, 3, 0, 200})
	f.Fuzz(func(t *testing.T, data []byte) {
		w := newHashWorld(t, 2)
		for ; len(data) >= 2; data = data[2:] {
			op, arg := data[0], data[1]
			i := int(op>>4) % 2
			h, m := &w.hs[i], w.models[i]
			f := strconv.Itoa(int(arg) % 64)
			switch op % 4 {
			case 0, 1:
				v := string(make([]byte, int(arg)%40))
				if _, err := h.Set(w.a, []byte(f), []byte(v)); err != nil {
					t.Fatal(err)
				}
				m[f] = v
			case 2:
				h.Delete(w.a, []byte(f))
				delete(m, f)
			case 3:
				w.a.Compact(int(arg)%8, w.relo)
			}
			w.check()
		}
	})
}

// HSCAN's contract under change: a full Scan while other fields are added and
// deleted (and tables grow, shrink and rehash) returns every field present
// throughout at least once, and returns only fields that exist.
//
// Coverage cut: 8 rounds, not 20. Each round is the same walk (4,095 Scan
// calls, some 400,000 changes between them, the table growing, shrinking
// and rehashing under the cursor) from a random start of 0-20,000 fields;
// the 20 rounds took 3 CPU-s (11-25 s of a loaded CI run's wall time, the
// package's tests running one after another).
func TestHashScanUnderChange(t *testing.T) {
	a := newArena(t)
	r := rand.New(rand.NewPCG(13, 14))
	for round := range 8 {
		h := NewHash(1)
		model := map[string]bool{}
		stable := map[string]bool{}
		for i := range r.IntN(20000) {
			f := "s" + strconv.Itoa(i)
			h.Set(a, []byte(f), []byte("v"))
			stable[f], model[f] = true, true
		}
		seen := map[string]bool{}
		cursor := uint64(0)
		for calls := 0; ; calls++ {
			cursor = h.Scan(a, cursor, func(f, _ []byte) {
				if !model[string(f)] {
					t.Fatalf("round %d: Scan returned %q, which is not in the hash", round, f)
				}
				seen[string(f)] = true
			})
			for range r.IntN(200) {
				f := "x" + strconv.Itoa(r.IntN(30000))
				if r.IntN(3) == 0 {
					h.Delete(a, []byte(f))
					delete(model, f)
				} else {
					h.Set(a, []byte(f), nil)
					model[f] = true
				}
			}
			if cursor == 0 {
				break
			}
			if calls > 1<<13 {
				t.Fatal("Scan never returned cursor 0")
			}
		}
		for f := range stable {
			if !seen[f] {
				t.Fatalf("round %d: Scan missed %q, present throughout", round, f)
			}
		}
		for !h.FreeStep(a, 1<<20) {
		}
	}
}
