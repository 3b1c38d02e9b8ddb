package arena

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestCompactCalmMatchesScan runs one random sequence of allocations, frees and
// compactions on two arenas, one of which forgets its calm count before every
// Compact (so it scans classes as before the count existed): every Compact moves
// the same blocks to the same places, and the first arena's rotation stays in step.
func TestCompactCalmMatchesScan(t *testing.T) {
	a, _ := New(Options{ChunkSize: PageSize * 4})
	b, _ := New(Options{ChunkSize: PageSize * 4})
	rng := rand.New(rand.NewPCG(28, 12))
	var refs []Ref
	sizes := []int{8, 16, 24, 40, 64, 200, 1000, 3000}
	calmHits := 0
	for step := range 20000 {
		switch op := rng.IntN(10); {
		case op < 5 || len(refs) == 0:
			n := sizes[rng.IntN(len(sizes))]
			ra, errA := a.Alloc(n)
			rb, errB := b.Alloc(n)
			if ra != rb || (errA == nil) != (errB == nil) {
				t.Fatalf("step %d: Alloc(%d) = %#x, %v and %#x, %v", step, n, ra, errA, rb, errB)
			}
			refs = append(refs, ra)
		case op < 8:
			i := rng.IntN(len(refs))
			a.Free(refs[i])
			b.Free(refs[i])
			refs[i] = refs[len(refs)-1]
			refs = refs[:len(refs)-1]
		default:
			if a.calm >= len(a.classes)-1 {
				calmHits++
			}
			b.calm = 0
			var movedA, movedB [][2]Ref
			na := a.Compact(4, func(old, nw Ref) { movedA = append(movedA, [2]Ref{old, nw}) })
			nb := b.Compact(4, func(old, nw Ref) { movedB = append(movedB, [2]Ref{old, nw}) })
			if na != nb || len(movedA) != len(movedB) {
				t.Fatalf("step %d: Compact moved %d and %d", step, na, nb)
			}
			for i := range movedA {
				if movedA[i] != movedB[i] {
					t.Fatalf("step %d: move %d: %v and %v", step, i, movedA[i], movedB[i])
				}
			}
			for _, mv := range movedA {
				for i, r := range refs {
					if r == mv[0] {
						refs[i] = mv[1]
					}
				}
			}
			if a.pickStart != b.pickStart || a.victim != b.victim {
				t.Fatalf("step %d: pickStart %d and %d, victim %d and %d", step, a.pickStart, b.pickStart, a.victim, b.victim)
			}
		}
	}
	// Idle compactions at the end: the calm path must have been taken.
	for range 20 {
		if a.Compact(4, func(Ref, Ref) {}) != 0 {
			continue
		}
		b.calm = 0
		b.Compact(4, func(Ref, Ref) {})
		if a.pickStart != b.pickStart {
			t.Fatalf("idle: pickStart %d and %d", a.pickStart, b.pickStart)
		}
	}
	if a.calm < len(a.classes)-1 {
		t.Fatalf("after idle compactions calm is %d, want at least %d", a.calm, len(a.classes)-1)
	}
	if err := a.Check(); err != nil {
		t.Fatal(err)
	}
	t.Logf("calm path taken by %d of the random Compact calls", calmHits)
}

// TestCompactCalmWakes: an arena that found nothing to compact compacts again as
// soon as frees fragment a class, and checkCalm catches a count left stale.
func TestCompactCalmWakes(t *testing.T) {
	a, _ := New(Options{})
	var refs []Ref
	for range 4 * PageSize / 16 {
		r, err := a.Alloc(16)
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, r)
	}
	for range len(a.classes) {
		if n := a.Compact(8, func(Ref, Ref) {}); n != 0 {
			t.Fatalf("Compact of an unfragmented arena moved %d", n)
		}
	}
	if a.calm < len(a.classes)-1 {
		t.Fatalf("calm %d after idle compactions, want at least %d", a.calm, len(a.classes)-1)
	}
	for i, r := range refs {
		if i%4 != 0 {
			a.Free(r)
		}
	}
	if a.calm != 0 {
		t.Fatalf("calm %d after frees, want 0", a.calm)
	}
	moved := 0
	for range len(a.classes) { // a rotation reaches the class within len(classes)/classScanLimit calls
		moved += a.Compact(8, func(Ref, Ref) {})
	}
	if moved == 0 {
		t.Fatal("Compact of a fragmented class moved nothing")
	}

	a.calm = len(a.classes) // stale: the class is still fragmented
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "calm") {
			t.Fatalf("checkCalm did not catch a stale count: %v", r)
		}
	}()
	a.checkCalm()
}
