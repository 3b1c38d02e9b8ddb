package engine

import (
	"strconv"
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
)

// sortAllocCases are SORT requests that must allocate nothing once the
// sorter's buffers have grown: numeric and ALPHA sorts of a list, a set
// and a sorted set, BY and GET patterns (strings and hash fields), LIMIT,
// the no-sort shortcuts and STORE.
var sortAllocCases = []string{
	"SORT l", "SORT l DESC LIMIT 10 20", "SORT l ALPHA", "SORT l BY nosort DESC LIMIT 5 5", "SORT s ALPHA",
	"SORT z BY nosort LIMIT 3 4", "SORT z ALPHA DESC", "SORT l BY w_* GET n_* GET #", "SORT l BY h_*->f GET h_*->g",
	"SORT l BY n_* ALPHA LIMIT 0 10", "SORT l STORE dst", "SORT l BY w_* GET n_* STORE dst", "SORT_RO s ALPHA",
}

func TestSortAllocs(t *testing.T) {
	e, _ := newEngine(t, Options{Params: redisDefaultParams})
	rs := e.Open(proto.RESP, nil)
	for i := 0; i < 200; i++ {
		n := strconv.Itoa((i * 37) % 211)
		do(t, e, rs, "RPUSH", "l", n)
		do(t, e, rs, "SADD", "s", "m"+n)
		do(t, e, rs, "ZADD", "z", n, "m"+n)
		do(t, e, rs, "SET", "w_"+n, strconv.Itoa(i))
		do(t, e, rs, "SET", "n_"+n, "name"+strconv.Itoa(i%17))
		do(t, e, rs, "HSET", "h_"+n, "f", strconv.Itoa(-i), "g", "x")
	}
	for _, c := range sortAllocCases {
		w := resp.AppendCommand(nil, strs(strings.Fields(c)...)...)
		out := make([]byte, 0, 1<<16)
		run := func() { _, out, _ = e.ServeStream(rs, w, out[:0]) }
		run()
		if len(out) == 0 || out[0] == '-' {
			t.Fatalf("%s: %q", c, out)
		}
		if a := testing.AllocsPerRun(100, run); a != 0 && !raceEnabled {
			t.Errorf("%s: %.2f allocations per request, want 0", c, a)
		}
	}
}

// BenchmarkSort: SORT of a 1,000-element list, numeric, ALPHA, by a
// pattern with GET, and the no-sort range.
func BenchmarkSort(b *testing.B) {
	e, _ := newEngine(b, Options{Params: redisDefaultParams})
	rs := e.Open(proto.RESP, nil)
	for i := 0; i < 1000; i++ {
		n := strconv.Itoa((i * 7919) % 1000)
		do(b, e, rs, "RPUSH", "l", n)
		do(b, e, rs, "SET", "w_"+n, strconv.Itoa(i))
	}
	for _, c := range []string{"SORT l", "SORT l ALPHA", "SORT l BY w_* GET # LIMIT 0 10", "SORT l BY nosort LIMIT 100 10"} {
		b.Run(strings.ReplaceAll(c, " ", "_"), func(b *testing.B) {
			w := resp.AppendCommand(nil, strs(strings.Fields(c)...)...)
			out := make([]byte, 0, 1<<16)
			b.ReportAllocs()
			for b.Loop() {
				_, out, _ = e.ServeStream(rs, w, out[:0])
			}
		})
	}
}
