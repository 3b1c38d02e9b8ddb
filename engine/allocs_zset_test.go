package engine

import (
	"strconv"
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
)

// zsetAllocCases are sorted-set commands that must allocate nothing per
// request once buffers have grown, on a listpack set (z) and a skiplist
// one (big), in RESP2 and RESP3.
var zsetAllocCases = [][]string{
	{"ZADD z 1 a"}, {"ZADD z 2 a", "ZADD z 1 a"}, {"ZADD z 5 n", "ZREM z n"}, {"ZADD big 3 m5"}, {"ZADD big 7 new", "ZREM big new"},
	{"ZADD z XX CH GT 9 b"}, {"ZINCRBY z 1 c"}, {"ZSCORE z a"}, {"ZSCORE big m7"}, {"ZMSCORE z a b nope"}, {"ZCARD big"},
	{"ZRANK z b"}, {"ZREVRANK big m9"}, {"ZRANGE z 0 9"}, {"ZRANGE z 0 9 WITHSCORES"}, {"ZRANGE big 0 9 WITHSCORES"},
	{"ZRANGE big 0 9 REV"}, {"ZRANGEBYSCORE z 1 5 WITHSCORES LIMIT 0 3"}, {"ZRANGE big (2 10 BYSCORE"},
	{"ZREVRANGEBYSCORE big +inf -inf LIMIT 0 10"}, {"ZRANGEBYLEX lex [a (d"}, {"ZCOUNT big 1 5"}, {"ZLEXCOUNT lex - +"},
	{"ZPOPMIN z", "ZADD z 1 a"}, {"ZSCAN z 0"}, {"ZRANDMEMBER z"}, {"TYPE z"}, {"OBJECT ENCODING big"},
}

func TestZSetAllocs(t *testing.T) {
	e, _ := newEngine(t, Options{Params: redisDefaultParams})
	rs := e.Open(proto.RESP, nil)
	do(t, e, rs, "ZADD", "z", "1", "a", "2", "b", "3", "c", "4.5", "d", "inf", "e")
	do(t, e, rs, "ZADD", "lex", "0", "a", "0", "b", "0", "c", "0", "d")
	for i := 0; i < 1000; i++ {
		do(t, e, rs, "ZADD", "big", strconv.Itoa(i%17), "m"+strconv.Itoa(i))
	}
	if got := do(t, e, rs, "OBJECT", "ENCODING", "big"); got != "$skiplist" {
		t.Fatalf("big is %s", got)
	}
	for _, resp3 := range []bool{false, true} {
		if resp3 {
			do(t, e, rs, "HELLO", "3")
		}
		for _, cycle := range zsetAllocCases {
			var wire [][]byte
			for _, c := range cycle {
				wire = append(wire, resp.AppendCommand(nil, strs(strings.Fields(c)...)...))
			}
			out := make([]byte, 0, 4096)
			run := func() {
				for _, w := range wire {
					_, out, _ = e.ServeStream(rs, w, out[:0])
				}
			}
			run()
			if len(out) > 0 && out[0] == '-' {
				t.Fatalf("%q: %q", cycle, out)
			}
			run()
			if a := testing.AllocsPerRun(200, run) / float64(len(cycle)); a != 0 {
				t.Errorf("RESP%d %q: %.2f allocations per request, want 0", 2+b2i(resp3), cycle, a)
			}
		}
	}
}
