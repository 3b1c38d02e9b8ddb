package engine

import (
	"strconv"
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
)

// collAllocCases are collection commands (RESP only: they have no SBE form
// yet) that must allocate nothing per request once buffers have grown, on
// a listpack hash (h) and a hashtable one (big), a list (l), an intset (s)
// and a hashtable set (ws).
var collAllocCases = [][]string{
	{"HSET h f v"}, {"HGET h f"}, {"HSET big f v"}, {"HGET big f"}, {"HMGET h f a nope"}, {"HEXISTS big f"},
	{"HSTRLEN h f"}, {"HLEN big"}, {"HINCRBY h n 1"}, {"HDEL h x", "HSET h x 1"}, {"HDEL big x", "HSET big x 1"},
	{"HGETALL h"}, {"HKEYS h"}, {"HVALS h"}, {"HSETNX h f w"}, {"HSCAN h 0"}, {"HRANDFIELD h"}, {"HRANDFIELD h 2"},
	{"TYPE h"}, {"OBJECT ENCODING big"}, {"GET h"}, {"EXISTS h big"},
	{"LPUSH l v", "RPOP l"}, {"RPUSH l v", "LPOP l"}, {"LPUSH l 1 2 3", "LPOP l 3"}, {"LLEN l"}, {"LINDEX l 3"},
	{"LRANGE l 0 9"}, {"LSET l 0 w"}, {"SADD s 7", "SREM s 7"}, {"SADD ws x", "SREM ws x"}, {"SADD ws a"},
	{"SISMEMBER s 1"}, {"SISMEMBER ws a"}, {"SCARD ws"}, {"SMEMBERS s"}, {"SMISMEMBER s 1 2 9"},
}

// TestCollectionAllocs: collAllocCases allocate nothing, under the
// default policy and under allkeys-lfu (where every command takes
// executeSlow and counts its keys' accesses, store/lfu.go).
func TestCollectionAllocs(t *testing.T) {
	for _, policy := range []string{"noeviction", "allkeys-lfu"} {
		t.Run(policy, func(t *testing.T) { testCollectionAllocs(t, policy) })
	}
}

func testCollectionAllocs(t *testing.T, policy string) {
	e, _ := newEngine(t, Options{Params: redisDefaultParams})
	rs := e.Open(proto.RESP, nil)
	do(t, e, rs, "CONFIG", "SET", "maxmemory-policy", policy)
	do(t, e, rs, "HSET", "h", "f", "v", "a", "1")
	do(t, e, rs, "RPUSH", "l", "a", "b", "c", "d", "e", "f", "1", "2", "3", "4", "5")
	do(t, e, rs, "SADD", "s", "1", "2", "3")
	do(t, e, rs, "SADD", "ws", "a", "b", "c")
	for i := 0; i < 1000; i++ {
		do(t, e, rs, "HSET", "big", "f"+strconv.Itoa(i), "v")
	}
	if got := do(t, e, rs, "OBJECT", "ENCODING", "big"); got != "$hashtable" {
		t.Fatalf("big is %s", got)
	}
	for _, cycle := range collAllocCases {
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
		if len(out) > 0 && out[0] == '-' && cycle[0] != "GET h" {
			t.Fatalf("%q: %q", cycle, out)
		}
		run()
		if a := testing.AllocsPerRun(200, run) / float64(len(cycle)); a != 0 {
			t.Errorf("%q: %.2f allocations per request, want 0", cycle, a)
		}
	}
}
