package engine

import (
	"strconv"
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/sbe"
)

// TestServeSBETypedCollections: the typed collection messages of schema
// version 4 (HGET, HSET, LPUSH, RPOP, ZADD, ZRANGE) and the same commands
// as a version 3 client wrote them (proto/sbe/testdata/v3: MultiRequests
// with wideOp) are both served, with the same answers.
func TestServeSBETypedCollections(t *testing.T) {
	e, _ := newEngine(t, Options{Params: redisDefaultParams})
	var c sbe.Codec
	s := NewSession(proto.SBE, nil)
	var rep command.Reply
	serve := func(msg []byte) string {
		t.Helper()
		out, closeConn := e.ServeMessage(s, msg, nil)
		if err := c.DecodeReply(out, &rep); err != nil || closeConn {
			t.Fatalf("%x: %v, close %v", msg, err, closeConn)
		}
		return sbeText(&rep)
	}
	v3 := func(name string) []byte { return testkit.ReadHexFile(t, "../proto/sbe/testdata/v3/"+name) }
	w := func(ws ...string) [][]byte {
		out := make([][]byte, len(ws))
		for i, s := range ws {
			out[i] = []byte(s)
		}
		return out
	}
	typed := func(op command.Op, key string, args ...string) []byte {
		r := command.Request{CorrelationID: 1, Op: op, Key: []byte(key), Args: w(args...)}
		msg := c.AppendRequest(nil, &r)
		if tid, _ := c.TemplateID(msg); tid < 7 || tid > 12 {
			t.Fatalf("%s went as template %d, not a typed message", command.Name(op), tid)
		}
		return msg
	}
	for _, step := range []struct {
		old, typed []byte
		want       string
	}{
		// The v3 files: HSET h f v, HGET h f, LPUSH l x, RPOP l, ZADD z 1.5 m, ZRANGE z 0 9.
		{v3("hset.hex"), typed(command.OpHSet, "h2", "f", "v"), ":1"},
		{v3("hget.hex"), typed(command.OpHGet, "h2", "f"), "$v"},
		{v3("lpush.hex"), typed(command.OpLPush, "l2", "x"), ":1"},
		{v3("rpop.hex"), typed(command.OpRPop, "l2"), "$x"},
		{v3("rpop.hex"), typed(command.OpRPop, "l2"), "nil"},
		{v3("zadd.hex"), typed(command.OpZAdd, "z2", "1.5", "m"), ":1"},
		{v3("zrange.hex"), typed(command.OpZRange, "z2", "0", "9"), "[$m]"},
	} {
		if got := serve(step.old); got != step.want {
			t.Fatalf("version 3 %x: %s, want %s", step.old, got, step.want)
		}
		if got := serve(step.typed); got != step.want {
			t.Fatalf("typed %x: %s, want %s", step.typed, got, step.want)
		}
	}
	// Errors come as over RESP: a bad score, the wrong type.
	if got := serve(typed(command.OpZAdd, "z2", "x", "m")); got != "-ERR value is not a valid float" {
		t.Fatalf("ZADD z2 x m: %s", got)
	}
	if got := serve(typed(command.OpHGet, "z2", "f")); got != "-WRONGTYPE Operation against a key holding the wrong kind of value" {
		t.Fatalf("HGET of a sorted set: %s", got)
	}
}

// TestServeSBETypedAllocatesNothing: serving each typed message (decode,
// command, reply) allocates nothing once buffers have grown.
func TestServeSBETypedAllocatesNothing(t *testing.T) {
	e, _ := newEngine(t, Options{Params: redisDefaultParams})
	var c sbe.Codec
	s := NewSession(proto.SBE, nil)
	b := func(s string) []byte { return []byte(s) }
	msgs := [][]byte{
		c.AppendRequest(nil, &command.Request{Op: command.OpHSet, Key: b("h"), Args: [][]byte{b("f"), b("v")}}),
		c.AppendRequest(nil, &command.Request{Op: command.OpHGet, Key: b("h"), Args: [][]byte{b("f")}}),
		c.AppendRequest(nil, &command.Request{Op: command.OpLPush, Key: b("l"), Args: [][]byte{b("x")}}),
		c.AppendRequest(nil, &command.Request{Op: command.OpRPop, Key: b("l")}),
		c.AppendRequest(nil, &command.Request{Op: command.OpZAdd, Key: b("z"), Args: [][]byte{b("2"), b("m")}}),
		c.AppendRequest(nil, &command.Request{Op: command.OpZRange, Key: b("z"), Args: [][]byte{b("0"), b("9")}}),
	}
	out := make([]byte, 0, 4096)
	run := func() {
		for _, m := range msgs {
			out, _ = e.ServeMessage(s, m, out[:0])
		}
	}
	run()
	run()
	if a := testing.AllocsPerRun(500, run) / float64(len(msgs)); a != 0 {
		t.Fatalf("%.2f allocations per typed request, want 0", a)
	}
}

// TestInfoReportsGCScannableHeap: INFO memory gives the garbage
// collector's scannable heap and globals (runtime/metrics' /gc/scan/*),
// which benchmarks/collections_memory.sh prints beside bytes per element.
func TestInfoReportsGCScannableHeap(t *testing.T) {
	e, _ := newEngine(t, Options{Params: redisDefaultParams})
	s := NewSession(proto.RESP, nil)
	info := do(t, e, s, "INFO", "memory")
	for _, field := range []string{"goblin_gc_scan_heap_bytes:", "goblin_gc_scan_globals_bytes:"} {
		i := strings.Index(info, field)
		if i < 0 {
			t.Fatalf("INFO memory has no %s", field)
		}
		v := info[i+len(field):]
		v = v[:strings.IndexAny(v, "\r\n")]
		if n, err := strconv.ParseInt(v, 10, 64); err != nil || n <= 0 || n > 1<<40 {
			t.Fatalf("%s%s: want a positive byte count", field, v)
		}
	}
}
