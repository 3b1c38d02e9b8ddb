package sbe

import (
	"errors"
	"reflect"
	"testing"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/proto/sbe/goblinsbe"
)

func words(ws ...string) [][]byte {
	out := make([][]byte, len(ws))
	for i, w := range ws {
		out[i] = []byte(w)
	}
	return out
}

// typedCases are the six typed messages' requests, each with its template.
var typedCases = []struct {
	template uint16
	req      command.Request
}{
	{templateHGet, command.Request{CorrelationID: 21, Op: command.OpHGet, Key: []byte("h"), Args: words("field")}},
	{templateHSet, command.Request{CorrelationID: 22, Op: command.OpHSet, Key: []byte("h"), Args: words("field", "value")}},
	{templateLPush, command.Request{CorrelationID: 23, Op: command.OpLPush, Key: []byte("list"), Args: words("")}},
	{templateRPop, command.Request{CorrelationID: 24, Op: command.OpRPop, Key: []byte("list")}},
	{templateZAdd, command.Request{CorrelationID: 25, Op: command.OpZAdd, Key: []byte("z"), Args: words("-inf", "m")}},
	{templateZRange, command.Request{CorrelationID: 26, Op: command.OpZRange, Key: []byte("z"), Args: words("0", "-1")}},
}

// TestTypedRoundTrip: each of the six commands in its one-element form
// travels as its typed message (shorter than the MultiRequest it was in
// version 3), decodes back to the same request, and every shorter prefix
// is malformed, not misread.
func TestTypedRoundTrip(t *testing.T) {
	var c Codec
	for _, tc := range typedCases {
		msg := c.AppendRequest(nil, &tc.req)
		if tid, err := c.TemplateID(msg); err != nil || tid != tc.template {
			t.Fatalf("%s: template %d (%v), want %d", command.Name(tc.req.Op), tid, err, tc.template)
		}
		if len(msg) != RequestLen(&tc.req) {
			t.Fatalf("%s: %d bytes, RequestLen %d", command.Name(tc.req.Op), len(msg), RequestLen(&tc.req))
		}
		wide := tc.req
		wide.Amount2 = 1 // forces the MultiRequest
		if n := RequestLen(&wide); len(msg) >= n {
			t.Fatalf("%s: typed message %d bytes, the MultiRequest %d", command.Name(tc.req.Op), len(msg), n)
		}
		got := command.Request{Value: []byte("stale"), Amount: 5, Flags: command.FlagNX}
		if err := c.DecodeRequest(append(msg, 0xee), &got); err != nil {
			t.Fatal(err)
		}
		want := tc.req
		want.Version = SchemaVersion
		if len(want.Args) == 0 {
			want.Args = got.Args[:0]
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded\n%+v, want\n%+v", got, want)
		}
		if n, err := c.MessageLen(append(msg, 1, 2)); err != nil || n != len(msg) {
			t.Fatalf("MessageLen %d %v, want %d", n, err, len(msg))
		}
		for i := range len(msg) {
			if err := c.DecodeRequest(msg[:i], &got); !errors.Is(err, ErrMalformed) {
				t.Fatalf("%s: a %d-byte prefix decoded: %v", command.Name(tc.req.Op), i, err)
			}
		}
		if err := c.DecodeReply(msg, new(command.Reply)); !errors.Is(err, ErrWrongTemplate) {
			t.Fatalf("a typed request decoded as a reply: %v", err)
		}
	}
	// Other forms stay MultiRequests.
	for _, r := range []command.Request{
		{Op: command.OpHSet, Key: []byte("h"), Args: words("f", "v", "f2", "v2")},
		{Op: command.OpHGet, Key: []byte("h")},
		{Op: command.OpLPush, Key: []byte("l"), Args: words("a", "b")},
		{Op: command.OpRPop, Key: []byte("l"), Args: words("2")},
		{Op: command.OpZAdd, Key: []byte("z"), Args: words("NX", "1", "m")},
		{Op: command.OpZRange, Key: []byte("z"), Args: words("0", "1", "WITHSCORES")},
		{Op: command.OpRPush, Key: []byte("l"), Args: words("a")},
	} {
		if tid, _ := c.TemplateID(c.AppendRequest(nil, &r)); tid != templateMultiRequest {
			t.Fatalf("%s %q: template %d, want MultiRequest", command.Name(r.Op), r.Args, tid)
		}
	}
}

// TestTypedMatchesGenerated reads the typed messages this package writes
// with the generated flyweights: same block, same correlation id, same
// var-data in the schema's order.
func TestTypedMatchesGenerated(t *testing.T) {
	var c Codec
	for _, tc := range typedCases {
		msg := c.AppendRequest(nil, &tc.req)
		hl, bl := uint64(headerLen), uint64(len(msg))
		var got []string
		var corr uint64
		var block uint16
		switch tc.template {
		case templateHGet:
			var m goblinsbe.HGet
			m.WrapForDecode(msg, hl, uint64(goblinsbe.HGetSbeBlockLength), uint64(SchemaVersion), bl)
			block, corr, got = goblinsbe.HGetSbeBlockLength, m.CorrelationId(), []string{m.Key(), m.Field()}
		case templateHSet:
			var m goblinsbe.HSet
			m.WrapForDecode(msg, hl, uint64(goblinsbe.HSetSbeBlockLength), uint64(SchemaVersion), bl)
			block, corr, got = goblinsbe.HSetSbeBlockLength, m.CorrelationId(), []string{m.Key(), m.Field(), m.Value()}
		case templateLPush:
			var m goblinsbe.LPush
			m.WrapForDecode(msg, hl, uint64(goblinsbe.LPushSbeBlockLength), uint64(SchemaVersion), bl)
			block, corr, got = goblinsbe.LPushSbeBlockLength, m.CorrelationId(), []string{m.Key(), m.Element()}
		case templateRPop:
			var m goblinsbe.RPop
			m.WrapForDecode(msg, hl, uint64(goblinsbe.RPopSbeBlockLength), uint64(SchemaVersion), bl)
			block, corr, got = goblinsbe.RPopSbeBlockLength, m.CorrelationId(), []string{m.Key()}
		case templateZAdd:
			var m goblinsbe.ZAdd
			m.WrapForDecode(msg, hl, uint64(goblinsbe.ZAddSbeBlockLength), uint64(SchemaVersion), bl)
			block, corr, got = goblinsbe.ZAddSbeBlockLength, m.CorrelationId(), []string{m.Key(), m.Score(), m.Member()}
		case templateZRange:
			var m goblinsbe.ZRange
			m.WrapForDecode(msg, hl, uint64(goblinsbe.ZRangeSbeBlockLength), uint64(SchemaVersion), bl)
			block, corr, got = goblinsbe.ZRangeSbeBlockLength, m.CorrelationId(), []string{m.Key(), m.Start(), m.Stop()}
		}
		want := []string{string(tc.req.Key)}
		for _, a := range tc.req.Args {
			want = append(want, string(a))
		}
		if block != typedBlock || corr != tc.req.CorrelationID || !reflect.DeepEqual(got, want) {
			t.Fatalf("template %d read by the generated flyweight: block %d, correlation %d, words %q; want %d, %d, %q",
				tc.template, block, corr, got, typedBlock, tc.req.CorrelationID, want)
		}
		var h goblinsbe.MessageHeader
		h.Wrap(msg, 0, uint64(SchemaVersion), bl)
		if h.TemplateId() != tc.template || h.BlockLength() != typedBlock || h.SchemaId() != SchemaID || h.Version() != SchemaVersion {
			t.Fatalf("header %d/%d/%d/%d", h.TemplateId(), h.BlockLength(), h.SchemaId(), h.Version())
		}
	}
}

// TestVersion3Messages decodes the collection commands as a schema
// version 3 codec wrote them (testdata/v3, written by goblin before the
// typed messages): MultiRequests with the op in wideOp, which a version 4
// server still reads as the same requests.
func TestVersion3Messages(t *testing.T) {
	var c Codec
	e := []byte{}
	for _, tc := range []struct {
		file string
		want command.Request
	}{
		{"hset.hex", command.Request{CorrelationID: 11, Op: command.OpHSet, Key: []byte("h"), Value: e, Args: words("f", "v")}},
		{"hget.hex", command.Request{CorrelationID: 12, Op: command.OpHGet, Key: []byte("h"), Value: e, Args: words("f")}},
		{"lpush.hex", command.Request{CorrelationID: 13, Op: command.OpLPush, Key: []byte("l"), Value: e, Args: words("x")}},
		{"rpop.hex", command.Request{CorrelationID: 14, Op: command.OpRPop, Key: []byte("l"), Value: e}},
		{"zadd.hex", command.Request{CorrelationID: 15, Op: command.OpZAdd, Key: []byte("z"), Value: e, Args: words("1.5", "m")}},
		{"zrange.hex", command.Request{CorrelationID: 16, Op: command.OpZRange, Key: []byte("z"), Value: e, Args: words("0", "9")}},
	} {
		msg := testkit.ReadHexFile(t, "testdata/v3/"+tc.file)
		if tid, _ := c.TemplateID(msg); tid != templateMultiRequest {
			t.Fatalf("%s: template %d, want a MultiRequest", tc.file, tid)
		}
		var got command.Request
		if err := c.DecodeRequest(msg, &got); err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		tc.want.Version = 3
		if len(got.Args) == 0 {
			got.Args = nil
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Fatalf("%s decoded as\n%+v, want\n%+v", tc.file, got, tc.want)
		}
	}
}

// TestTypedDecodeAllocatesNothing: decoding a typed message into a request
// whose Args has room (the server's reused one) allocates nothing.
func TestTypedDecodeAllocatesNothing(t *testing.T) {
	var c Codec
	r := command.Request{Args: make([][]byte, 0, 4)}
	for _, tc := range typedCases {
		msg := c.AppendRequest(nil, &tc.req)
		if n := testing.AllocsPerRun(1000, func() {
			r.Args = r.Args[:0]
			if err := c.DecodeRequest(msg, &r); err != nil {
				panic(err)
			}
		}); n != 0 {
			t.Fatalf("%s: %v allocations per decode", command.Name(tc.req.Op), n)
		}
		buf := make([]byte, 0, 256)
		if n := testing.AllocsPerRun(1000, func() { buf = c.AppendFramedRequest(buf[:0], &tc.req) }); n != 0 {
			t.Fatalf("%s: %v allocations per encode", command.Name(tc.req.Op), n)
		}
	}
}

// BenchmarkDecodeCollection compares decoding HSET key field value as the
// typed message and as version 3's MultiRequest.
func BenchmarkDecodeCollection(b *testing.B) {
	var c Codec
	typed := c.AppendRequest(nil, &typedCases[1].req)
	wide := typedCases[1].req
	wide.Amount2 = 1
	multi := c.AppendRequest(nil, &wide)
	for _, bc := range []struct {
		name string
		msg  []byte
	}{{"typed", typed}, {"multi", multi}} {
		b.Run(bc.name, func(b *testing.B) {
			r := command.Request{Args: make([][]byte, 0, 4)}
			b.ReportAllocs()
			for b.Loop() {
				r.Args = r.Args[:0]
				if err := c.DecodeRequest(bc.msg, &r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
