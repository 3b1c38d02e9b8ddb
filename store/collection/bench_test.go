package collection

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/goblin-kv/goblin/arena"
)

// HSET then HGET of 1 M distinct fields: the steady-state cost of a write that
// adds a field (with its share of incremental rehashing) and of a read.
func BenchmarkHash(b *testing.B) {
	const n = 1 << 20
	fields := make([][]byte, n)
	for i := range fields {
		fields[i] = []byte("field:" + strconv.Itoa(i))
	}
	val := []byte("value-12")
	b.Run("HSET", func(b *testing.B) {
		a := newArena(b)
		h := NewHash(1)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if i&(n-1) == 0 && i > 0 {
				for !h.FreeStep(a, 1<<20) {
				}
				h = NewHash(1)
			}
			if _, err := h.Set(a, fields[i&(n-1)], val); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("HGET", func(b *testing.B) {
		a := newArena(b)
		h := NewHash(1)
		for _, f := range fields {
			h.Set(a, f, val)
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, ok := h.Get(a, fields[(i*7919)&(n-1)]); !ok {
				b.Fatal("missing")
			}
		}
	})
}

// TestHashBytesPerField reports the arena bytes a hash of 1 M fields ("field:N",
// 8-byte values) takes per field: entries plus the table. Redis's figure for the
// same shape is 70-90 B/field (dictEntry + two sds + robj overheads).
func TestHashBytesPerField(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 1 M fields")
	}
	a := newArena(t)
	h := NewHash(1)
	const n = 1_000_000
	for i := range n {
		if _, err := h.Set(a, []byte("field:"+strconv.Itoa(i)), []byte("value-12")); err != nil {
			t.Fatal(err)
		}
	}
	for h.Rehashing() {
		h.migrate(a, 1<<20)
	}
	var st arena.Stats
	a.Stats(&st)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("1M fields: arena live %.1f B/field, arena size %.1f B/field (table 2^%d buckets)",
		float64(st.Live)/n, float64(st.Size)/n, h.log)
	if float64(st.Live)/n > 90 {
		t.Errorf("%.1f live bytes per field: more than Redis's", float64(st.Live)/n)
	}
}

// LPUSH then RPOP: a queue in steady state (pushes at the head, pops at the tail).
func BenchmarkList(b *testing.B) {
	val := []byte("job:1234567")
	b.Run("LPUSH+RPOP", func(b *testing.B) {
		a := newArena(b)
		l := NewList(1)
		for range 10000 {
			l.PushFront(a, val)
		}
		var buf []byte
		b.ReportAllocs()
		for b.Loop() {
			if err := l.PushFront(a, val); err != nil {
				b.Fatal(err)
			}
			buf, _ = l.PopBack(a, buf[:0])
		}
	})
	b.Run("LINDEX-middle-1M", func(b *testing.B) {
		a := newArena(b)
		l := NewList(1)
		for range 1 << 20 {
			l.PushBack(a, val)
		}
		var buf []byte
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			buf, _ = l.Index(a, 1<<19+i%1000, buf[:0])
		}
	})
}

// TestListBytesPerElement reports the arena bytes per element of a list of 1 M
// small strings ("element:N"). Redis's quicklist takes ~10-15 B/element for such
// lists.
func TestListBytesPerElement(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 1 M elements")
	}
	a := newArena(t)
	l := NewList(1)
	const n = 1_000_000
	for i := range n {
		if err := l.PushBack(a, []byte("element:"+strconv.Itoa(i%100000))); err != nil {
			t.Fatal(err)
		}
	}
	var st arena.Stats
	a.Stats(&st)
	t.Logf("1M elements (13-15 byte strings): arena live %.1f B/element, size %.1f B/element, %d nodes",
		float64(st.Live)/n, float64(st.Size)/n, l.nodes)
	if float64(st.Live)/n > 20 {
		t.Errorf("%.1f live bytes per element", float64(st.Live)/n)
	}
}

func TestBenchOpsAllocateNothing(t *testing.T) {
	a := newArena(t)
	h := NewHash(1)
	l := NewList(2)
	f, v := []byte("field"), []byte("value")
	h.Set(a, f, v)
	var buf []byte
	if n := testing.AllocsPerRun(1000, func() {
		h.Set(a, f, v)
		h.Get(a, f)
		l.PushFront(a, v)
		buf, _ = l.PopBack(a, buf[:0])
	}); n != 0 {
		t.Fatalf("%v allocations per HSET+HGET+LPUSH+RPOP", n)
	}
}

// ZADD (insert in order) and ZRANK on a sorted set's listpack of 128 members,
// Redis's default zset-max-listpack-entries: the compact encoding's costs.
func BenchmarkZsetListpack(b *testing.B) {
	members := make([][]byte, 128)
	for i := range members {
		members[i] = []byte("member:" + strconv.Itoa(i))
	}
	full := NewListpack(make([]byte, 0, 8192))
	for i, m := range members {
		full = full.ZsetInsert(m, float64(i*7%128)+0.5)
	}
	b.Run("ZADD-128th", func(b *testing.B) {
		lp := NewListpack(make([]byte, 0, 8192))
		extra := []byte("member:new")
		b.ReportAllocs()
		for b.Loop() {
			lp = append(lp[:0], full...)
			lp = lp.ZsetInsert(extra, 63.25)
		}
	})
	b.Run("ZRANK", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if r, _ := full.ZsetRank(members[i&127]); r < 0 {
				b.Fatal("missing")
			}
		}
	})
}

// BenchmarkZsetList measures a large sorted set's ordered list with its
// counted index (what ZADD of 100 000 members builds): ZADD-move moves
// the middle member between two scores, a ZDelete at its old place and a
// ZInsert at its new one, each located by the index.
func BenchmarkZsetList(b *testing.B) {
	const size = 100_000
	a := newArena(b)
	l := NewList(1)
	if err := l.EnableIndex(a); err != nil {
		b.Fatal(err)
	}
	var zk []byte
	insert := func(score float64, member []byte) {
		zk = AppendZKey(zk[:0], score, member)
		bd := ZBound{Kind: ZByKey, Score: score, Member: member}
		if err := l.ZInsert(a, zk, &bd); err != nil {
			b.Fatal(err)
		}
	}
	for i := range size {
		insert(float64(i), []byte("m"+strconv.Itoa(i)))
	}
	mid := []byte("m" + strconv.Itoa(size/2))
	b.Run("ZADD-move", func(b *testing.B) {
		scores := [2]float64{size / 2, 1}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			from, to := scores[i&1], scores[(i+1)&1]
			bd := ZBound{Kind: ZByKey, Score: from, Member: mid}
			if !l.ZDelete(a, &bd) {
				b.Fatalf("%s at %v is missing", mid, from)
			}
			insert(to, mid)
		}
	})
	if err := l.ixCheck(a); err != nil {
		b.Fatal(err)
	}
}
