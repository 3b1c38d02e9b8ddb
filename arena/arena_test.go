package arena

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// block is the model's view of one allocation.
type block struct {
	n    int
	fill byte
}

// model drives an Arena and mirrors every block's contents, checking both agree.
type model struct {
	t      testing.TB
	a      *Arena
	blocks map[Ref]block
	refs   []Ref
}

func newModel(t testing.TB) *model {
	a, err := New(Options{ChunkSize: PageSize * 4})
	if err != nil {
		t.Fatal(err)
	}
	return &model{t: t, a: a, blocks: make(map[Ref]block)}
}

func (m *model) alloc(n int, fill byte) {
	r, err := m.a.Alloc(n)
	if err != nil {
		m.t.Fatalf("Alloc(%d): %v", n, err)
	}
	if _, dup := m.blocks[r]; dup || r == 0 {
		m.t.Fatalf("Alloc(%d) returned %#x, already live or nil", n, r)
	}
	if c := m.a.Cap(r); c < n || c != BlockSize(n) {
		m.t.Fatalf("Alloc(%d): cap %d, want %d", n, c, BlockSize(n))
	}
	b := m.a.Bytes(r, n)
	for i := range b {
		b[i] = fill
	}
	m.blocks[r] = block{n, fill}
	m.refs = append(m.refs, r)
}

func (m *model) free(i int) {
	r := m.refs[i]
	m.verify(r)
	m.a.Free(r)
	delete(m.blocks, r)
	m.refs[i] = m.refs[len(m.refs)-1]
	m.refs = m.refs[:len(m.refs)-1]
}

func (m *model) verify(r Ref) {
	b := m.blocks[r]
	if err := m.a.Live(r, b.n); err != nil {
		m.t.Fatal(err)
	}
	got := m.a.Bytes(r, b.n)
	for i, c := range got {
		if c != b.fill {
			m.t.Fatalf("block %#x (%d bytes, fill %#x): byte %d is %#x", r, b.n, b.fill, i, c)
		}
	}
}

func (m *model) compact(maxMoves int) int {
	moved := 0
	n := m.a.Compact(maxMoves, func(old, nw Ref) {
		b, ok := m.blocks[old]
		if !ok {
			m.t.Fatalf("relocate of unknown block %#x", old)
		}
		if _, dup := m.blocks[nw]; dup {
			m.t.Fatalf("relocate to live block %#x", nw)
		}
		delete(m.blocks, old)
		m.blocks[nw] = b
		for i, r := range m.refs {
			if r == old {
				m.refs[i] = nw
			}
		}
		moved++
	})
	if n != moved || n > maxMoves {
		m.t.Fatalf("Compact(%d) reported %d moves, callback saw %d", maxMoves, n, moved)
	}
	return n
}

func (m *model) check() {
	if err := m.a.Check(); err != nil {
		m.t.Fatal(err)
	}
	for r := range m.blocks {
		m.verify(r)
	}
}

func TestAllocFreeReuse(t *testing.T) {
	m := newModel(t)
	m.alloc(11, 1)
	r := m.refs[0]
	m.free(0)
	m.alloc(13, 2) // same 16-byte class: the freed block comes back
	if m.refs[0] != r {
		t.Fatalf("freed block %#x not reused, got %#x", r, m.refs[0])
	}
	m.check()
	var st Stats
	m.a.Stats(&st)
	if st.Live != 16 || st.Live+st.Dead+st.Free != st.Size {
		t.Fatalf("stats %+v", st)
	}
}

func TestBlockSizeClasses(t *testing.T) {
	prev := 0
	for n := 1; n <= MaxSmall+100; n++ {
		bs := BlockSize(n)
		if bs < n || bs%Align != 0 || bs < prev {
			t.Fatalf("BlockSize(%d) = %d (previous %d)", n, bs, prev)
		}
		if n <= MaxSmall && bs > n+n/4+Align {
			t.Fatalf("BlockSize(%d) = %d wastes more than a quarter", n, bs)
		}
		prev = bs
	}
	if BlockSize(16) != 16 || BlockSize(27) != 32 || BlockSize(8) != 8 {
		t.Fatal("small classes are not 8-byte steps")
	}
}

func TestLargeBlocks(t *testing.T) {
	m := newModel(t)
	m.alloc(MaxSmall+1, 7)
	m.alloc(3<<20, 8)
	m.alloc(40, 9)
	m.check()
	m.free(0)
	m.check()
	if _, err := m.a.Alloc(MaxBlock + 1); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Alloc(MaxBlock+1) = %v, want ErrTooLarge", err)
	}
}

// TestCompactFreesSparsePages fills a class, frees most blocks at random, and checks
// that bounded Compact steps give pages back while every block keeps its contents.
func TestCompactFreesSparsePages(t *testing.T) {
	m := newModel(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		m.alloc(24, byte(i))
	}
	for i := 0; i < 16000; i++ {
		m.free(rng.IntN(len(m.refs)))
	}
	m.check()
	var before, after Stats
	m.a.Stats(&before)
	steps := 0
	for m.compact(8) > 0 {
		steps++
		if steps%50 == 0 {
			m.check()
		}
	}
	m.check()
	m.a.Stats(&after)
	if after.Pages >= before.Pages || after.Dead >= before.Dead || after.Moves == 0 {
		t.Fatalf("compaction did nothing: before %+v after %+v", before, after)
	}
	// Compaction stops once holes are under an eighth of the class or one page.
	perPage := int64(PageSize / 24)
	if holes := after.Dead / 24; holes >= perPage && holes*compactDeadDiv >= after.Pages*perPage {
		t.Fatalf("compaction stopped with %d holes in %d pages", holes, after.Pages)
	}
	t.Logf("pages %d -> %d, dead %d -> %d, %d moves in %d steps", before.Pages, after.Pages, before.Dead, after.Dead, after.Moves, steps)
}

// TestRandomOpsModel runs random allocations, frees and compaction steps against a
// model of every block, checking the invariants as it goes.
func TestRandomOpsModel(t *testing.T) {
	ops := 300000
	if testing.Short() || raceEnabled {
		ops = 100000
	}
	m := newModel(t)
	rng := rand.New(rand.NewPCG(3, 4))
	sizes := []int{1, 8, 11, 16, 17, 27, 64, 100, 200, 1000, 5000, MaxSmall, MaxSmall + 1, 20000}
	for i := 0; i < ops; i++ {
		switch op := rng.IntN(100); {
		case op < 50 || len(m.refs) == 0:
			n := sizes[rng.IntN(len(sizes))]
			if rng.IntN(2) == 0 {
				n = 1 + rng.IntN(300)
			}
			m.alloc(n, byte(rng.Uint32()))
		case op < 95:
			m.free(rng.IntN(len(m.refs)))
		default:
			m.compact(1 + rng.IntN(16))
		}
		if i%20000 == 0 {
			m.check()
		}
	}
	m.check()
	for len(m.refs) > 0 {
		m.free(len(m.refs) - 1)
	}
	m.check()
	var st Stats
	m.a.Stats(&st)
	// Each class keeps at most its current page when empty.
	if st.Live != 0 || st.Pages > int64(len(classSizes)-1) || st.Dedicated != 0 {
		t.Fatalf("empty arena: %+v", st)
	}
}

func TestNoPointersInMetadata(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[Ref](), reflect.TypeFor[pageMeta]()} {
		if testkit.HasPointers(typ) {
			t.Errorf("%v holds pointers", typ)
		}
	}
	if !testkit.HasPointers(reflect.TypeFor[[]byte]()) {
		t.Fatal("hasPointers misses slices")
	}
}

func TestAllocFreeAllocatesNothing(t *testing.T) {
	a, _ := New(Options{})
	r, _ := a.Alloc(16)
	a.Free(r)
	n := testing.AllocsPerRun(1000, func() {
		r, _ := a.Alloc(16)
		b := a.Bytes(r, 16)
		b[0] = 1
		a.Free(r)
	})
	if n != 0 {
		t.Fatalf("Alloc+Free allocated %v times per run", n)
	}
}

func TestNewRejectsBadChunkSize(t *testing.T) {
	for _, cs := range []int{1000, PageSize / 2, 32 << 20, 3 << 20} {
		if _, err := New(Options{ChunkSize: cs}); err == nil {
			t.Errorf("New(ChunkSize %d) accepted", cs)
		}
	}
}

func TestOffHeapRegions(t *testing.T) {
	var m OffHeap
	a := m.Alloc(RegionAlign)
	b := m.Alloc(3 * RegionAlign)
	for _, r := range [][]byte{a, b} {
		for i := 0; i < len(r); i += 4096 {
			if r[i] != 0 {
				t.Fatal("region not zeroed")
			}
			r[i] = 1
		}
	}
	if m.Bytes() != 4*RegionAlign {
		t.Fatalf("Bytes %d", m.Bytes())
	}
	m.Free(a)
	if m.Bytes() != 3*RegionAlign {
		t.Fatalf("Bytes after Free %d", m.Bytes())
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("freeing a foreign slice did not panic")
			}
		}()
		m.Free(make([]byte, 10))
	}()
	m.FreeAll()
	if m.Bytes() != 0 {
		t.Fatal("FreeAll left regions")
	}
}

// TestLargeArenaGoesOffHeap: beyond HeapChunks the arena maps its chunks, and Reset
// gives them back.
func TestLargeArenaGoesOffHeap(t *testing.T) {
	a, _ := New(Options{})
	for i := 0; i < (HeapChunks+3)*DefaultChunkSize/64; i++ {
		if _, err := a.Alloc(64); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Check(); err != nil {
		t.Fatal(err)
	}
	if a.mem.Bytes() == 0 {
		t.Fatal("no chunk was mapped")
	}
	a.Reset()
	if a.mem.Bytes() != 0 {
		t.Fatal("Reset kept mapped chunks")
	}
}

// The arena keeps no allocation bitmap of its own: Live and Check tell a freed
// block from a live one through the free lists, before and after the free-block
// bits exist, and a block freed twice shows in Check.
func TestLiveAndCheckWithoutBitmap(t *testing.T) {
	a, _ := New(Options{})
	var refs []Ref
	for range 100 {
		r, _ := a.Alloc(24)
		refs = append(refs, r)
	}
	a.Free(refs[10])
	if a.freeSet != nil {
		t.Fatal("Alloc and Free built the free-block bits; only checks should")
	}
	if err := a.Live(refs[10], 24); err == nil {
		t.Error("Live accepted a freed block")
	}
	if err := a.Live(refs[11], 24); err != nil {
		t.Errorf("Live of an allocated block: %v", err)
	}
	// The bits now exist: Free and Alloc must keep them current.
	a.Free(refs[20])
	if err := a.Live(refs[20], 24); err == nil {
		t.Error("Live accepted a block freed after the bits were built")
	}
	r, _ := a.Alloc(24) // from the free list: refs[20]
	if err := a.Live(r, 24); err != nil {
		t.Errorf("Live of a block reallocated from the free list: %v", err)
	}
	if err := a.Check(); err != nil {
		t.Fatal(err)
	}
	a.Free(refs[30])
	a.Free(refs[30])
	if err := a.Check(); err == nil {
		t.Error("Check missed a block freed twice")
	}
}
