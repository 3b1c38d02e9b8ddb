package collection

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/arena"
)

type listWorld struct {
	t      testing.TB
	a      *arena.Arena
	ls     []List
	models [][]string
	relo   func(old, nw arena.Ref)
}

func newListWorld(t testing.TB, n int) *listWorld {
	w := &listWorld{t: t, a: newArena(t)}
	for i := range n {
		w.ls = append(w.ls, NewList(uint32(i+1)))
		w.models = append(w.models, nil)
	}
	w.relo = func(old, nw arena.Ref) {
		o := OwnerOf(w.a, nw)
		if o == 0 || int(o) > len(w.ls) || !w.ls[o-1].Relocate(w.a, old, nw) {
			panic(fmt.Sprintf("moved block %#x (owner %d) that no list holds", old, o))
		}
	}
	return w
}

func (w *listWorld) check() {
	w.t.Helper()
	if err := w.a.Check(); err != nil {
		w.t.Fatal(err)
	}
	for i := range w.ls {
		l, m := &w.ls[i], w.models[i]
		if err := l.Check(w.a); err != nil {
			w.t.Fatalf("list %d: %v", i+1, err)
		}
		if l.Len() != len(m) {
			w.t.Fatalf("list %d: Len %d, model %d", i+1, l.Len(), len(m))
		}
		k := 0
		l.Range(w.a, 0, -1, func(s []byte, v int64, isInt bool) bool {
			got := string(s)
			if isInt {
				got = strconv.FormatInt(v, 10)
			}
			if got != m[k] {
				w.t.Fatalf("list %d element %d: %q, model %q", i+1, k, got, m[k])
			}
			k++
			return true
		})
		if k != len(m) {
			w.t.Fatalf("list %d: Range visited %d of %d", i+1, k, len(m))
		}
	}
}

func listElem(r *rand.Rand) string {
	switch r.IntN(8) {
	case 0:
		if r.IntN(50) == 0 {
			return strings.Repeat("H", NodeBytes+r.IntN(100)) // a node of its own
		}
		return strings.Repeat("L", r.IntN(3000)) // a few per node
	case 1:
		return strconv.Itoa(r.IntN(100000) - 50000)
	}
	return "e" + strconv.Itoa(r.IntN(1000))
}

// Pushes and pops at both ends, LINDEX, LSET, LINSERT, LREM-by-index, LRANGE and
// LTRIM against slices, on three lists sharing an arena with Compact moving nodes.
func TestListModel(t *testing.T) {
	w := newListWorld(t, 3)
	r := rand.New(rand.NewPCG(9, 10))
	moved := 0
	var buf []byte
	for op := 0; op < 100000; op++ {
		i := r.IntN(len(w.ls))
		l, m := &w.ls[i], w.models[i]
		n := len(m)
		switch k := r.IntN(20); {
		case k < 4:
			e := listElem(r)
			if err := l.PushBack(w.a, []byte(e)); err != nil {
				t.Fatal(err)
			}
			m = append(m, e)
		case k < 8:
			e := listElem(r)
			if err := l.PushFront(w.a, []byte(e)); err != nil {
				t.Fatal(err)
			}
			m = append([]string{e}, m...)
		case k < 10:
			var ok bool
			buf, ok = l.PopFront(w.a, buf[:0])
			if ok != (n > 0) || (ok && string(buf) != m[0]) {
				t.Fatalf("PopFront = %q %v, model %v", buf, ok, m[:min(n, 1)])
			}
			if ok {
				m = m[1:]
			}
		case k < 12:
			var ok bool
			buf, ok = l.PopBack(w.a, buf[:0])
			if ok != (n > 0) || (ok && string(buf) != m[n-1]) {
				t.Fatalf("PopBack = %q %v", buf, ok)
			}
			if ok {
				m = m[:n-1]
			}
		case k < 14:
			j := r.IntN(2*n+3) - n - 1
			var ok bool
			buf, ok = l.Index(w.a, j, buf[:0])
			jj := j
			if jj < 0 {
				jj += n
			}
			if want := jj >= 0 && jj < n; ok != want || (ok && string(buf) != m[jj]) {
				t.Fatalf("Index(%d) = %q %v (len %d)", j, buf, ok, n)
			}
		case k < 15 && n > 0:
			j, e := r.IntN(n), listElem(r)
			if ok, err := l.Set(w.a, j, []byte(e)); !ok || err != nil {
				t.Fatalf("Set(%d): %v %v", j, ok, err)
			}
			m[j] = e
		case k < 17:
			j, e := r.IntN(n+1), listElem(r)
			if err := l.Insert(w.a, j, []byte(e)); err != nil {
				t.Fatal(err)
			}
			m = append(m[:j], append([]string{e}, m[j:]...)...)
		case k < 18 && n > 0:
			j := r.IntN(n)
			if !l.Delete(w.a, j) {
				t.Fatalf("Delete(%d) of %d", j, n)
			}
			m = append(m[:j], m[j+1:]...)
		case k < 19:
			s, e := r.IntN(n+4)-2, r.IntN(n+4)-2
			var got []string
			l.Range(w.a, s, e, func(b []byte, v int64, isInt bool) bool {
				if isInt {
					b = strconv.AppendInt(nil, v, 10)
				}
				got = append(got, string(b))
				return true
			})
			want := redisRange(m, s, e)
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("Range(%d,%d) = %d elements, want %d", s, e, len(got), len(want))
			}
		default:
			if n > 300 || r.IntN(10) == 0 {
				s, e := r.IntN(n+4)-2, r.IntN(n+4)-2
				l.Trim(w.a, s, e)
				m = append([]string(nil), redisRange(m, s, e)...)
			}
		}
		w.models[i] = m
		if op%53 == 0 {
			moved += w.a.Compact(16, w.relo)
		}
		if op%2000 == 0 {
			w.check()
		}
	}
	w.check()
	if moved == 0 {
		t.Fatal("Compact never moved a node: the test does not exercise Relocate")
	}
	t.Logf("%d nodes moved by Compact", moved)
}

// redisRange is LRANGE's index arithmetic over a slice.
func redisRange(m []string, s, e int) []string {
	n := len(m)
	if s < 0 {
		s = max(s+n, 0)
	}
	if e < 0 {
		e += n
	}
	e = min(e, n-1)
	if s > e || s >= n {
		return nil
	}
	return m[s : e+1]
}

func TestListFreeStepBounded(t *testing.T) {
	w := newListWorld(t, 1)
	for i := range 200000 {
		w.ls[0].PushBack(w.a, []byte("element:"+strconv.Itoa(i)))
	}
	nodes := w.ls[0].nodes
	steps := 0
	for !w.ls[0].FreeStep(w.a, 16) {
		steps++
		w.a.Compact(8, w.relo)
	}
	if want := int(nodes) / 16; steps < want {
		t.Fatalf("freed %d nodes in %d steps of 16", nodes, steps)
	}
	var st arena.Stats
	w.a.Stats(&st)
	if st.Live != 0 {
		t.Fatalf("%d bytes live after FreeStep finished", st.Live)
	}
}

func TestListHoldsNoPointers(t *testing.T) {
	if err := checkNoPointers(List{}); err != nil {
		t.Fatal(err)
	}
}

func FuzzListOps(f *testing.F) {
	f.Add([]byte{0, 1, 1, 2, 2, 0, 3, 1, 4, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		w := newListWorld(t, 1)
		l := &w.ls[0]
		var buf []byte
		for ; len(data) >= 2; data = data[2:] {
			op, arg := data[0], int(data[1])
			m := w.models[0]
			n := len(m)
			e := strings.Repeat("x", arg*13%2500)
			if arg%3 == 0 {
				e = strconv.Itoa(arg * 37)
			}
			switch op % 6 {
			case 0:
				l.PushBack(w.a, []byte(e))
				m = append(m, e)
			case 1:
				l.PushFront(w.a, []byte(e))
				m = append([]string{e}, m...)
			case 2:
				if _, ok := l.PopFront(w.a, buf[:0]); ok {
					m = m[1:]
				}
			case 3:
				j := arg % (n + 1)
				l.Insert(w.a, j, []byte(e))
				m = append(m[:j], append([]string{e}, m[j:]...)...)
			case 4:
				s, e := arg%7-3, arg/7%7-3
				l.Trim(w.a, s, e)
				m = append([]string(nil), redisRange(m, s, e)...)
			case 5:
				w.a.Compact(arg%8, w.relo)
			}
			w.models[0] = m
			w.check()
		}
	})
}
