package collection

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestIntsetGoldenRedisBytes(t *testing.T) {
	is := NewIntset(nil)
	for _, v := range []int64{3, 1, 2} {
		is, _ = is.Add(v)
	}
	if want := unhex(t, "02000000 03000000 0100 0200 0300"); !bytes.Equal(is, want) {
		t.Fatalf("got % x, want % x", []byte(is), want)
	}
	// Upgrades: a negative 32-bit value goes first, a positive 64-bit one last.
	is, _ = is.Add(-70000)
	is, _ = is.Add(math.MaxInt64)
	want := unhex(t, "08000000 05000000 90EEFEFFFFFFFFFF 0100000000000000 0200000000000000 0300000000000000 FFFFFFFFFFFFFF7F")
	if !bytes.Equal(is, want) {
		t.Fatalf("after upgrade got % x, want % x", []byte(is), want)
	}
}

func checkIntset(t testing.TB, is Intset, model map[int64]bool) {
	t.Helper()
	if len(model) > 0 {
		if err := ValidateIntset(is, true); err != nil {
			t.Fatal(err)
		}
	}
	if is.Len() != len(model) {
		t.Fatalf("Len %d, model %d", is.Len(), len(model))
	}
	want := make([]int64, 0, len(model))
	for v := range model {
		want = append(want, v)
	}
	slices.Sort(want)
	for i, v := range want {
		if got := is.Get(i); got != v {
			t.Fatalf("element %d: %d, model %d", i, got, v)
		}
		if !is.Contains(v) || is.Find(v) != i {
			t.Fatalf("Contains/Find(%d) wrong", v)
		}
	}
	// The width is the smallest holding the widest element ever added (it never
	// shrinks), so at least the smallest for the current ones.
	w := isEnc16
	for _, v := range want {
		w = max(w, widthOf(v))
	}
	if is.width() < w {
		t.Fatalf("width %d, elements need %d", is.width(), w)
	}
}

func TestIntsetModel(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	is := NewIntset(nil)
	model := map[int64]bool{}
	val := func() int64 {
		switch r.IntN(4) {
		case 0:
			return r.Int64N(200) - 100
		case 1:
			return r.Int64N(1<<20) - 1<<19
		case 2:
			return int64(r.Uint64())
		}
		return r.Int64N(1<<40) - 1<<39
	}
	for op := 0; op < 30000; op++ {
		if op%3000 == 0 {
			is, model = NewIntset(is[:0]), map[int64]bool{}
		}
		v := val()
		if r.IntN(3) == 0 && len(model) > 0 {
			v = is.Random(r.Uint64())
		}
		switch r.IntN(3) {
		case 0, 1:
			var added bool
			is, added = is.Add(v)
			if added == model[v] {
				t.Fatalf("Add(%d) = %v, model had it: %v", v, added, model[v])
			}
			model[v] = true
		default:
			var removed bool
			is, removed = is.Remove(v)
			if removed != model[v] {
				t.Fatalf("Remove(%d) = %v, model %v", v, removed, model[v])
			}
			delete(model, v)
		}
		if op%100 == 0 || len(model) < 10 {
			checkIntset(t, is, model)
		}
	}
}

func TestValidateIntsetRejects(t *testing.T) {
	for _, c := range []struct {
		name string
		b    string
		deep bool
		want error
	}{
		{"short", "02000000 0000", false, ErrIntsetHeader},
		{"width 3", "03000000 01000000 010000", false, ErrIntsetHeader},
		{"size", "02000000 02000000 0100", false, ErrIntsetHeader},
		{"empty", "02000000 00000000", false, ErrIntsetHeader},
		{"duplicate", "02000000 02000000 0100 0100", true, ErrIntsetOrder},
		{"descending", "02000000 02000000 0200 0100", true, ErrIntsetOrder},
	} {
		if err := ValidateIntset(unhex(t, c.b), c.deep); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if err := ValidateIntset(unhex(t, "02000000 02000000 0200 0100"), false); err != nil {
		t.Errorf("shallow check looks at order: %v", err)
	}
}

func TestIntsetAllocs(t *testing.T) {
	is := NewIntset(make([]byte, 0, 1024))
	if n := testing.AllocsPerRun(1000, func() {
		is, _ = is.Add(7)
		_ = is.Contains(7)
		is, _ = is.Remove(7)
	}); n != 0 {
		t.Fatalf("%v allocations per run", n)
	}
}

func FuzzValidateIntset(f *testing.F) {
	f.Add(unhex(f, "02000000 03000000 0100 0200 0300"))
	f.Add(unhex(f, "04000000 01000000 01000100"))
	f.Add(unhex(f, "08000000 02000000 0100000000000000 0000000000000080"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if ValidateIntset(b, true) != nil {
			return
		}
		is := Intset(append([]byte(nil), b...))
		for i := 0; i < is.Len(); i++ {
			if v := is.Get(i); is.Find(v) != i {
				t.Fatalf("element %d (%d) not found at its place", i, v)
			}
		}
		lo := is.Get(0)
		v := lo - 1
		is2, added := is.Add(v) // is is stale from here on, as after append
		if v < lo && !added {
			t.Fatalf("Add(%d) below the minimum reported present", v)
		}
		if err := ValidateIntset(is2, true); err != nil {
			t.Fatalf("after Add(%d): %v", v, err)
		}
	})
}

// FuzzIntsetOps reads 9-byte records (op, value) and checks against a map.
func FuzzIntsetOps(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 1, 1, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		is := NewIntset(nil)
		model := map[int64]bool{}
		for ; len(data) >= 9; data = data[9:] {
			v := int64(uint64(data[1]) | uint64(data[2])<<8 | uint64(data[3])<<16 | uint64(data[4])<<24 |
				uint64(data[5])<<32 | uint64(data[6])<<40 | uint64(data[7])<<48 | uint64(data[8])<<56)
			if data[0]&1 == 0 {
				is, _ = is.Add(v)
				model[v] = true
			} else {
				is, _ = is.Remove(v)
				delete(model, v)
			}
			checkIntset(t, is, model)
		}
	})
}
