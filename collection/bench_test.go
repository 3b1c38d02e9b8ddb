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
