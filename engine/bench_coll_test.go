package engine

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
)

// BenchmarkCollections measures decode + execute + encode of the hot
// collection commands over RESP, as redis-benchmark's -t hset,lpush,rpop,
// sadd tests send them: HSET and HGET on a hash of 10 fields (listpack)
// and of 10 000 (hashtable), LPUSH then RPOP (the list stays the same
// length), SADD of an existing member.
func BenchmarkCollections(b *testing.B) {
	for _, bc := range []struct {
		name  string
		setup [][]string
		cmds  [][]string
	}{
		{"HSET/listpack", nil, [][]string{{"HSET", "h", "f5", "0123456789abcdef"}}},
		{"HGET/listpack", nil, [][]string{{"HGET", "h", "f5"}}},
		{"HSET/hashtable", nil, [][]string{{"HSET", "big", "f5000", "0123456789abcdef"}}},
		{"HGET/hashtable", nil, [][]string{{"HGET", "big", "f5000"}}},
		{"LPUSH+RPOP", nil, [][]string{{"LPUSH", "l", "0123456789abcdef"}, {"RPOP", "l"}}},
		{"SADD/intset", nil, [][]string{{"SADD", "s", "42"}}},
		{"SADD/hashtable", nil, [][]string{{"SADD", "ws", "member:42"}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e, _ := newEngine(b, Options{})
			s := NewSession(proto.RESP, nil)
			for i := 0; i < 10; i++ {
				do(b, e, s, "HSET", "h", "f"+strconv.Itoa(i), "v")
			}
			for i := 0; i < 10_000; i++ {
				do(b, e, s, "HSET", "big", "f"+strconv.Itoa(i), "v")
				do(b, e, s, "SADD", "ws", "member:"+strconv.Itoa(i))
			}
			do(b, e, s, "RPUSH", "l", "a", "b", "c")
			do(b, e, s, "SADD", "s", "1", "42")
			var wire []byte
			for _, c := range bc.cmds {
				wire = resp.AppendCommandString(wire, c...)
			}
			out := make([]byte, 0, 256)
			runtime.GC() // the setup's garbage is not the benchmark's
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_, out, _ = e.ServeStream(s, wire, out[:0])
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(bc.cmds)), "ns/cmd")
		})
	}
}

// BenchmarkZSets measures decode + execute + encode of the hot sorted-set
// commands over RESP: ZADD of an existing member with a new score (a
// delete and an insert), ZSCORE, ZRANGE 0 9 WITHSCORES and ZRANK of the
// middle member, on a set of 100 members (listpack) and of 100 000
// (skiplist, where the middle is the slowest place to find by rank).
func BenchmarkZSets(b *testing.B) {
	for _, size := range []int{100, 100_000} {
		mid, half := "m"+strconv.Itoa(size/2), strconv.Itoa(size/2)
		for _, bc := range []struct {
			name string
			cmds [][]string
		}{
			{"ZADD", [][]string{{"ZADD", "z", "1", mid}, {"ZADD", "z", half, mid}}},
			{"ZSCORE", [][]string{{"ZSCORE", "z", mid}}},
			{"ZRANGE0-9", [][]string{{"ZRANGE", "z", "0", "9", "WITHSCORES"}}},
			{"ZRANK", [][]string{{"ZRANK", "z", mid}}},
		} {
			b.Run(bc.name+"/"+strconv.Itoa(size), func(b *testing.B) {
				e, _ := newEngine(b, Options{})
				s := NewSession(proto.RESP, nil)
				for i := 0; i < size; i += 100 {
					args := []string{"ZADD", "z"}
					for j := i; j < i+100; j++ {
						args = append(args, strconv.Itoa(j), "m"+strconv.Itoa(j))
					}
					do(b, e, s, args...)
				}
				var wire []byte
				for _, c := range bc.cmds {
					wire = resp.AppendCommandString(wire, c...)
				}
				out := make([]byte, 0, 512)
				runtime.GC()
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					_, out, _ = e.ServeStream(s, wire, out[:0])
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(bc.cmds)), "ns/cmd")
			})
		}
	}
}
