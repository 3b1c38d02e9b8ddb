package sbe

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/internal/testkit"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/sbe/goblinsbe"
)

func TestFlagsMatchSchema(t *testing.T) {
	var f goblinsbe.SetFlags
	for _, c := range []struct {
		got  uint8
		want command.Flags
	}{
		{f.SetNxValue(0, true), command.FlagNX}, {f.SetXxValue(0, true), command.FlagXX},
		{f.SetKeepTtlValue(0, true), command.FlagKeepTTL}, {f.SetGetValue(0, true), command.FlagGet},
		{f.SetGtValue(0, true), command.FlagGT}, {f.SetLtValue(0, true), command.FlagLT},
	} {
		if command.Flags(c.got) != c.want {
			t.Errorf("schema bit %#x, package constant %#x", c.got, c.want)
		}
	}
	var items goblinsbe.ArrayReplyItems
	if items.SbeBlockLength() != itemBlockLen {
		t.Fatalf("items block length %d, itemBlockLen %d", items.SbeBlockLength(), itemBlockLen)
	}
}

func sampleRequest() command.Request {
	return command.Request{
		CorrelationID: 0x0102030405060708, Op: command.OpSet, Flags: command.FlagNX | command.FlagGet,
		Expiry: command.ExpiryPX, Expire: 1500, Amount: -3,
		Key: []byte("key"), Value: []byte("0123456789abcdef"),
		Args: [][]byte{[]byte("a"), {}, []byte("ccc")},
	}
}

func TestRequestRoundTrip(t *testing.T) {
	var c Codec
	in := sampleRequest()
	buf := c.AppendRequest([]byte("prefix"), &in)
	msg := buf[len("prefix"):]
	if len(msg) != RequestLen(&in) {
		t.Fatalf("encoded %d bytes, RequestLen %d", len(msg), RequestLen(&in))
	}
	var out command.Request
	if err := c.DecodeRequest(msg, &out); err != nil {
		t.Fatal(err)
	}
	in.Version = SchemaVersion // the decoder reports the encoder's version
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip:\n in %+v\nout %+v", in, out)
	}
	if n, err := c.MessageLen(append(msg, 1, 2, 3)); err != nil || n != len(msg) {
		t.Fatalf("MessageLen = %d, %v; want %d", n, err, len(msg))
	}
	for i := 0; i < len(msg); i++ {
		if err := c.DecodeRequest(msg[:i], &out); !errors.Is(err, ErrMalformed) {
			t.Fatalf("prefix of %d bytes decoded: %v", i, err)
		}
	}
}

func TestReplyRoundTrip(t *testing.T) {
	var c Codec
	in := command.Reply{CorrelationID: 9, Status: command.OK, Kind: command.Array, Integer: 3,
		Items: []command.Item{{Kind: command.Bulk, Value: []byte("v1")}, {Kind: command.Nil, Value: []byte{}}, {Kind: command.Integer, Integer: -7, Value: []byte{}}}}
	msg := c.AppendReply(nil, &in)
	var out command.Reply
	if err := c.DecodeReply(msg, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip:\n in %+v\nout %+v", in, out)
	}
	single := command.Reply{CorrelationID: 10, Status: command.Syntax, Kind: command.Error, Value: []byte("ERR syntax error")}
	var out1 command.Reply
	if err := c.DecodeReply(c.AppendReply(nil, &single), &out1); err != nil || !reflect.DeepEqual(single, out1) {
		t.Fatalf("single reply round trip: %v\n in %+v\nout %+v", err, single, out1)
	}
	one := command.Request{CorrelationID: 3, Op: command.OpGet, Key: []byte("k"), Value: []byte{}, Version: SchemaVersion}
	var got command.Request
	if err := c.DecodeRequest(c.AppendRequest(nil, &one), &got); err != nil || !reflect.DeepEqual(one, got) {
		t.Fatalf("single request round trip: %v\n in %+v\nout %+v", err, one, got)
	}
	if err := c.DecodeRequest(msg, new(command.Request)); !errors.Is(err, ErrWrongTemplate) {
		t.Fatalf("reply decoded as request: %v", err)
	}
	for i := 0; i < len(msg); i++ {
		if err := c.DecodeReply(msg[:i], &out); !errors.Is(err, ErrMalformed) {
			t.Fatalf("prefix of %d bytes decoded: %v", i, err)
		}
	}
}

// TestNestedRepliesAndAmount2 round-trips what version 2 added: nested
// aggregates of every kind in one ArrayReply, a map or set root, the new
// leaf kinds and statuses, and a request whose only extra is Amount2 (a
// MultiRequest with no args).
func TestNestedRepliesAndAmount2(t *testing.T) {
	var c Codec
	e := []byte{}
	for _, in := range []command.Reply{
		{CorrelationID: 1, Kind: command.Map, Integer: 2, Items: []command.Item{
			{Kind: command.Bulk, Value: []byte("k")}, {Kind: command.Array, Integer: 2, Value: e},
			{Kind: command.Set, Integer: 1, Value: e}, {Kind: command.Double, Value: []byte("1.5")},
			{Kind: command.Boolean, Integer: 1, Value: e},
			{Kind: command.Simple, Value: []byte("x")}, {Kind: command.Map, Integer: 0, Value: e}}},
		{CorrelationID: 2, Kind: command.Set, Integer: 2, Items: []command.Item{{Kind: command.Verbatim, Value: []byte("txt")}, {Kind: command.NilArray, Value: e}}},
		{CorrelationID: 3, Kind: command.Array, Integer: 0},
	} {
		msg := c.AppendReply(nil, &in)
		if len(msg) != ReplyLen(&in) {
			t.Fatalf("encoded %d bytes, ReplyLen %d", len(msg), ReplyLen(&in))
		}
		var out command.Reply
		if err := c.DecodeReply(msg, &out); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(in, out) {
			t.Fatalf("round trip:\n in %+v\nout %+v", in, out)
		}
		// Counts that do not add up are malformed.
		bad := in
		bad.Integer++
		if err := c.DecodeReply(c.AppendReply(nil, &bad), &out); !errors.Is(err, ErrMalformed) {
			t.Fatalf("root count %d over %d items decoded: %v", bad.Integer, len(bad.Items), err)
		}
	}
	for _, k := range []command.Kind{command.Double, command.Boolean, command.Verbatim, command.NilArray} {
		in := command.Reply{CorrelationID: 4, Status: command.OutOfRange, Kind: k, Integer: 1, Value: []byte("v")}
		var out command.Reply
		if err := c.DecodeReply(c.AppendReply(nil, &in), &out); err != nil || !reflect.DeepEqual(in, out) {
			t.Fatalf("%v: %v\n in %+v\nout %+v", k, err, in, out)
		}
	}
	in := command.Request{CorrelationID: 5, Op: command.OpGetRange, Amount: 1, Amount2: -1, Key: []byte("k"), Value: e, Version: SchemaVersion}
	msg := c.AppendRequest(nil, &in)
	if tid, _ := c.TemplateID(msg); tid != templateMultiRequest || len(msg) != RequestLen(&in) {
		t.Fatalf("Amount2 request: template %d, %d bytes (RequestLen %d)", tid, len(msg), RequestLen(&in))
	}
	var out command.Request
	if err := c.DecodeRequest(msg, &out); err != nil {
		t.Fatal(err)
	}
	out.Args = nil
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip:\n in %+v\nout %+v", in, out)
	}
	// A Request decoded after it does not keep its Amount2.
	get := c.AppendRequest(nil, &command.Request{Op: command.OpGet, Key: []byte("k")})
	if err := c.DecodeRequest(get, &out); err != nil || out.Amount2 != 0 {
		t.Fatalf("Amount2 %d after a Request (%v)", out.Amount2, err)
	}
}

// TestVersion1Messages decodes messages a schema version 1 codec wrote
// (testdata/v1, produced by goblin before version 2): a server of version
// 2 understands an old client, and an old server's replies still decode.
func TestVersion1Messages(t *testing.T) {
	var c Codec
	read := func(name string) []byte { return testkit.ReadHexFile(t, "testdata/v1/"+name) }
	framed := func(name string) []byte { return read(name)[SOFHLen:] }
	e := []byte{}
	for _, tc := range []struct {
		msg  []byte
		want command.Request
	}{
		{read("set-px.hex"), command.Request{CorrelationID: 7, Op: command.OpSet, Flags: command.FlagNX, Expiry: command.ExpiryPX, Expire: 1500, Key: []byte("k"), Value: []byte("v")}},
		{read("mget.hex"), command.Request{CorrelationID: 8, Op: command.OpMGet, Key: []byte("k"), Value: e, Args: [][]byte{[]byte("k2")}}},
		{read("config-get.hex"), command.Request{CorrelationID: 9, Op: command.OpConfigGet, Key: []byte("maxmemory"), Value: e}},
		{framed("ping.hex"), command.Request{CorrelationID: 1, Op: command.OpPing, Key: e, Value: e}},
		{framed("ping-compact.hex"), command.Request{CorrelationID: 1, Op: command.OpPing, Compact: true}},
	} {
		var got command.Request
		if err := c.DecodeRequest(tc.msg, &got); err != nil {
			t.Fatalf("%x: %v", tc.msg, err)
		}
		tc.want.Version = 1
		if len(got.Args) == 0 {
			got.Args = nil
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Fatalf("version 1 message decoded as\n%+v, want\n%+v", got, tc.want)
		}
		if n, err := c.MessageLen(tc.msg); err != nil || n != len(tc.msg) {
			t.Fatalf("MessageLen %d, %v; want %d", n, err, len(tc.msg))
		}
	}
	// An old server's array reply: root count 0, items flat.
	var rep command.Reply
	if err := c.DecodeReply(read("array-reply.hex"), &rep); err != nil {
		t.Fatal(err)
	}
	want := command.Reply{CorrelationID: 8, Kind: command.Array, Integer: 2, Items: []command.Item{{Kind: command.Bulk, Value: []byte("v")}, {Kind: command.Nil, Value: e}}}
	if !reflect.DeepEqual(rep, want) {
		t.Fatalf("version 1 array reply decoded as\n%+v, want\n%+v", rep, want)
	}
	for _, name := range []string{"pong.hex", "pong-compact.hex"} {
		if err := c.DecodeReply(framed(name), &rep); err != nil || string(rep.Value) != "PONG" {
			t.Fatalf("%s: %+v, %v", name, rep, err)
		}
	}
}

// TestGoldenPing pins the wire bytes of framed PING requests and their
// replies, so a schema change that alters the layout shows up as a diff of
// testdata/*.hex (GOBLIN_UPDATE_GOLDEN=1 rewrites them).
func TestGoldenPing(t *testing.T) {
	var c Codec
	pong := command.Reply{CorrelationID: 1, Status: command.OK, Kind: command.Simple, Value: []byte("PONG")}
	compactPong := pong
	compactPong.Compact = true
	for _, tc := range []struct {
		file string
		wire []byte
		size int // bare message length
	}{
		{"ping.hex", AppendFramed(nil, &c, &command.Request{CorrelationID: 1, Op: command.OpPing}), 43},
		{"ping-compact.hex", AppendFramed(nil, &c, &command.Request{CorrelationID: 1, Op: command.OpPing, Compact: true}), 16},
		{"pong.hex", c.AppendFramedReply(nil, &pong), 34},
		{"pong-compact.hex", c.AppendFramedReply(nil, &compactPong), 16},
	} {
		got := hex.EncodeToString(tc.wire)
		path := "testdata/" + tc.file
		want, err := os.ReadFile(path)
		if os.Getenv("GOBLIN_UPDATE_GOLDEN") != "" {
			err = os.WriteFile(path, []byte(got+"\n"), 0o644)
			want = []byte(got + "\n")
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(string(want)) != got {
			t.Fatalf("%s\n got %s\nwant %s", tc.file, got, want)
		}
		// SOFH: the length includes the header, then 0xEB50.
		if !bytes.HasPrefix(tc.wire, []byte{0, 0, 0, byte(len(tc.wire)), 0xEB, 0x50}) {
			t.Fatalf("%s: bad SOFH % x", tc.file, tc.wire[:6])
		}
		if n := len(tc.wire) - SOFHLen; n != tc.size {
			t.Fatalf("%s: %d-byte message, want %d", tc.file, n, tc.size)
		}
	}
}

// TestCompactPingPong checks the version 1 Ping and Pong: they round-trip
// to a PING and a PONG with Compact set, they are used only where they can
// carry the whole request or reply, and truncated ones are malformed.
func TestCompactPingPong(t *testing.T) {
	var c Codec
	ping := c.AppendRequest(nil, &command.Request{CorrelationID: 7, Op: command.OpPing, Compact: true})
	if len(ping) != 16 {
		t.Fatalf("Ping is %d bytes, want 16", len(ping))
	}
	if tid, _ := c.TemplateID(ping); tid != templatePing {
		t.Fatalf("template %d, want Ping", tid)
	}
	if n, err := c.MessageLen(append(ping, 1, 2, 3)); n != 16 || err != nil {
		t.Fatalf("MessageLen of a Ping: %d %v", n, err)
	}
	got := command.Request{Key: []byte("stale"), Expire: 9}
	if err := c.DecodeRequest(ping, &got); err != nil {
		t.Fatal(err)
	}
	if want := (command.Request{CorrelationID: 7, Op: command.OpPing, Args: got.Args, Compact: true, Version: SchemaVersion}); !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded Ping %+v, want %+v", got, want)
	}
	for i := 0; i < len(ping); i++ {
		if err := c.DecodeRequest(ping[:i], &got); !errors.Is(err, ErrMalformed) {
			t.Fatalf("Ping prefix of %d bytes decoded: %v", i, err)
		}
	}
	if err := c.DecodeReply(ping, new(command.Reply)); !errors.Is(err, ErrWrongTemplate) {
		t.Fatalf("Ping decoded as a reply: %v", err)
	}
	// PING with a message, or any other command, is never compact.
	for _, r := range []command.Request{
		{Op: command.OpPing, Key: []byte("hello"), Compact: true},
		{Op: command.OpGet, Key: []byte("k"), Compact: true},
	} {
		msg := c.AppendRequest(nil, &r)
		if tid, _ := c.TemplateID(msg); tid != templateRequest {
			t.Fatalf("%+v encoded as template %d", r, tid)
		}
		var back command.Request
		if err := c.DecodeRequest(msg, &back); err != nil || back.Compact {
			t.Fatalf("%+v decoded as %+v, %v", r, back, err)
		}
	}

	pong := c.AppendReply(nil, &command.Reply{CorrelationID: 7, Status: command.OK, Kind: command.Simple, Value: []byte("PONG"), Compact: true})
	if len(pong) != 16 {
		t.Fatalf("Pong is %d bytes, want 16", len(pong))
	}
	rep := command.Reply{Integer: 5, Items: []command.Item{{}}}
	if err := c.DecodeReply(pong, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.CorrelationID != 7 || rep.Status != command.OK || rep.Kind != command.Simple || string(rep.Value) != "PONG" ||
		!rep.Compact || rep.Integer != 0 || len(rep.Items) != 0 {
		t.Fatalf("decoded Pong %+v", rep)
	}
	if cap(rep.Value) != len(rep.Value) {
		t.Fatal("a decoded Pong's value must not be appendable in place")
	}
	if err := c.DecodeRequest(pong, new(command.Request)); !errors.Is(err, ErrWrongTemplate) {
		t.Fatalf("Pong decoded as a request: %v", err)
	}
	// An error answer to a Ping (say, before AUTH) stays a full Reply.
	refusal := command.Reply{Status: command.NoAuth, Kind: command.Error, Value: []byte("NOAUTH Authentication required."), Compact: true}
	msg := c.AppendReply(nil, &refusal)
	if tid, _ := c.TemplateID(msg); tid != templateReply {
		t.Fatalf("refusal encoded as template %d", tid)
	}
}

func TestReadFrame(t *testing.T) {
	var c Codec
	r := sampleRequest()
	stream := AppendFramed(nil, &c, &r)
	one := len(stream)
	stream = AppendFramed(stream, &c, &command.Request{Op: command.OpPing})
	for i := 0; i < one; i++ {
		if msg, n, err := ReadFrame(stream[:i], 0); n != 0 || err != nil || msg != nil {
			t.Fatalf("prefix %d: %d %v", i, n, err)
		}
	}
	msg, n, err := ReadFrame(stream, 0)
	if err != nil || n != one || len(msg) != one-SOFHLen {
		t.Fatalf("ReadFrame = %d bytes, n %d, %v", len(msg), n, err)
	}
	bad := append([]byte(nil), stream...)
	bad[4] = 0x5B
	if _, _, err := ReadFrame(bad, 0); !errors.Is(err, ErrFraming) {
		t.Fatalf("big-endian encoding type accepted: %v", err)
	}
	if _, _, err := ReadFrame([]byte{0, 0, 0, 5, 0xEB, 0x50}, 0); !errors.Is(err, ErrFraming) {
		t.Fatalf("length below header accepted: %v", err)
	}
	if _, _, err := ReadFrame(stream, 10); !errors.Is(err, ErrFraming) {
		t.Fatalf("frame over limit accepted: %v", err)
	}
}

func TestCodecAllocs(t *testing.T) {
	var c Codec
	req := sampleRequest()
	rep := command.Reply{Kind: command.Bulk, Value: []byte("0123456789abcdef"), Items: []command.Item{{Kind: command.Bulk, Value: []byte("x")}}}
	buf := make([]byte, 0, 1024)
	var dr command.Request
	var dp command.Reply
	dr.Args = make([][]byte, 0, 8)
	dp.Items = make([]command.Item, 0, 8)
	allocs := testing.AllocsPerRun(1000, func() {
		buf = AppendFramed(buf[:0], &c, &req)
		msg, n, _ := ReadFrame(buf, 0)
		if n == 0 || c.DecodeRequest(msg, &dr) != nil {
			panic("decode")
		}
		buf = c.AppendReply(buf[:0], &rep)
		if c.DecodeReply(buf, &dp) != nil {
			panic("decode reply")
		}
	})
	if allocs != 0 {
		t.Fatalf("codec allocates %.1f times per run, want 0", allocs)
	}
}

// FuzzDecode feeds arbitrary bytes to the SOFH splitter and both message
// decoders: nothing panics or reads out of bounds, and whatever decodes
// re-encodes to a message that decodes to the same value.
func FuzzDecode(f *testing.F) {
	var c Codec
	r := sampleRequest()
	f.Add(AppendFramed(nil, &c, &r))
	f.Add(AppendFramed(nil, &c, &command.Request{Op: command.OpPing}))
	f.Add(AppendFramed(nil, &c, &command.Request{CorrelationID: 2, Op: command.OpPing, Compact: true}))
	f.Add(c.AppendFramedReply(nil, &command.Reply{CorrelationID: 2, Kind: command.Simple, Value: []byte("PONG"), Compact: true}))
	var framed []byte
	framed, start := BeginFrame(nil)
	framed = c.AppendReply(framed, &command.Reply{Kind: command.Array, Items: []command.Item{{Kind: command.Bulk, Value: []byte("x")}}})
	f.Add(EndFrame(framed, start))
	f.Fuzz(func(t *testing.T, in []byte) {
		var c Codec
		for len(in) > 0 {
			msg, n, err := ReadFrame(in, 1<<20)
			if err != nil || n == 0 {
				msg, n = in, len(in) // also try the bytes as a bare message
			}
			var req command.Request
			if err := c.DecodeRequest(msg, &req); err == nil {
				again := c.AppendRequest(nil, &req)
				var req2 command.Request
				req.Version = SchemaVersion // re-encoded in this codec's version
				if err := c.DecodeRequest(again, &req2); err != nil || fmt.Sprint(req) != fmt.Sprint(req2) {
					t.Fatalf("re-encoded request differs: %v\n%+v\n%+v", err, req, req2)
				}
			}
			var rep command.Reply
			if err := c.DecodeReply(msg, &rep); err == nil {
				again := c.AppendReply(nil, &rep)
				var rep2 command.Reply
				if err := c.DecodeReply(again, &rep2); err != nil || fmt.Sprint(rep) != fmt.Sprint(rep2) {
					t.Fatalf("re-encoded reply differs: %v", err)
				}
			}
			in = in[n:]
		}
		if n := recoveredPanics.Load(); n != 0 {
			t.Fatalf("the decoders' checks missed %d out-of-bounds accesses (caught by recover)", n)
		}
	})
}

func ExampleCodec() {
	var c Codec
	wire := AppendFramed(nil, &c, &command.Request{CorrelationID: 42, Op: command.OpGet, Key: []byte("greeting")})
	msg, n, _ := ReadFrame(wire, 0)
	var req command.Request
	_ = c.DecodeRequest(msg, &req)
	fmt.Println(n == len(wire), req.CorrelationID, req.Op == command.OpGet, string(req.Key))
	// Output: true 42 true greeting
}

// TestOpAboveMaxOpIsRefused: command.Op is wider than the schema's uint8 Op,
// so an Op above MaxOp that wideOp does not carry must be refused, never
// truncated into another command's value on the wire.
func TestOpAboveMaxOpIsRefused(t *testing.T) {
	for _, op := range []command.Op{command.OpSave, command.OpSubscribe, command.OpReplicaOf, 1000} {
		for _, r := range []command.Request{{Op: op, Key: []byte("k")}, {Op: op, Args: [][]byte{[]byte("a")}}} {
			func() {
				defer func() {
					if err, _ := recover().(error); !errors.Is(err, ErrOpNotEncodable) {
						t.Errorf("AppendRequest(op %d, %d args) panicked with %v, want ErrOpNotEncodable", op, len(r.Args), err)
					}
				}()
				var c Codec
				b := c.AppendRequest(nil, &r)
				t.Errorf("AppendRequest(op %d) encoded %x", op, b)
			}()
		}
	}
	var c Codec
	if b := c.AppendRequest(nil, &command.Request{Op: MaxOp, Key: []byte("k")}); len(b) == 0 {
		t.Error("AppendRequest(MaxOp) encoded nothing")
	}
}

// TestWideOpRoundTrip: the collection commands (Ops 256 and up) travel as
// a MultiRequest with op none and the Op in wideOp (schema version 3),
// with or without arguments, and decode to the same request; a wideOp the
// schema does not carry, or beside an op, is not taken.
func TestWideOpRoundTrip(t *testing.T) {
	var c Codec
	for _, op := range []command.Op{command.OpHSet, command.OpHGet, command.OpRPopLPush, command.OpZAdd,
		command.OpLMPop, command.OpBLPop, command.OpBZMPop, command.OpSort, command.OpSortRO} {
		if !Encodable(op) {
			t.Fatalf("op %d (%s) is not Encodable", op, command.Name(op))
		}
		for _, in := range []command.Request{
			{CorrelationID: 7, Op: op, Key: []byte("k")},
			{CorrelationID: 8, Op: op, Key: []byte("k"), Args: [][]byte{[]byte("f"), []byte("v")}, Amount: 3},
		} {
			wire := c.AppendRequest(nil, &in)
			var out command.Request
			if err := c.DecodeRequest(wire, &out); err != nil {
				t.Fatalf("%s: %v", command.Name(op), err)
			}
			if out.Op != op || out.CorrelationID != in.CorrelationID || string(out.Key) != "k" ||
				len(out.Args) != len(in.Args) || out.Amount != in.Amount || out.Version != SchemaVersion {
				t.Fatalf("%s: decoded %+v from %+v", command.Name(op), out, in)
			}
		}
	}
	// A MultiRequest whose wideOp names a RESP-only command decodes as op
	// none, which the engine answers as an unknown operation.
	wire := c.AppendRequest(nil, &command.Request{Op: command.OpHSet, Key: []byte("k")})
	var m goblinsbe.MultiRequest
	m.WrapForDecode(wire, uint64(headerLen), uint64(goblinsbe.MultiRequestSbeBlockLength), uint64(SchemaVersion), uint64(len(wire)))
	m.SetWideOp(uint16(command.OpSubscribe))
	var out command.Request
	if err := c.DecodeRequest(wire, &out); err != nil || out.Op != command.OpNone {
		t.Fatalf("wideOp SUBSCRIBE decoded as op %d (%v)", out.Op, err)
	}
}
