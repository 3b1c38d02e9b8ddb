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

	"github.com/goblin-kv/goblin/proto/sbe/goblinsbe"
)

func TestFlagsMatchSchema(t *testing.T) {
	var f goblinsbe.SetFlags
	for _, c := range []struct {
		got  uint8
		want Flags
	}{
		{f.SetNxValue(0, true), FlagNX}, {f.SetXxValue(0, true), FlagXX},
		{f.SetKeepTtlValue(0, true), FlagKeepTTL}, {f.SetGetValue(0, true), FlagGet},
		{f.SetGtValue(0, true), FlagGT}, {f.SetLtValue(0, true), FlagLT},
	} {
		if Flags(c.got) != c.want {
			t.Errorf("schema bit %#x, package constant %#x", c.got, c.want)
		}
	}
	var items goblinsbe.ArrayReplyItems
	if items.SbeBlockLength() != itemBlockLen {
		t.Fatalf("items block length %d, itemBlockLen %d", items.SbeBlockLength(), itemBlockLen)
	}
}

func sampleRequest() Request {
	return Request{
		CorrelationID: 0x0102030405060708, Op: OpSet, Flags: FlagNX | FlagGet,
		Expiry: ExpiryPX, Expire: 1500, Amount: -3,
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
	var out Request
	if err := c.DecodeRequest(msg, &out); err != nil {
		t.Fatal(err)
	}
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
	in := Reply{CorrelationID: 9, Status: StatusOK, Kind: KindArray, Integer: 0,
		Items: []Item{{Kind: KindBulk, Value: []byte("v1")}, {Kind: KindNil, Value: []byte{}}, {Kind: KindInteger, Integer: -7, Value: []byte{}}}}
	msg := c.AppendReply(nil, &in)
	var out Reply
	if err := c.DecodeReply(msg, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip:\n in %+v\nout %+v", in, out)
	}
	single := Reply{CorrelationID: 10, Status: StatusSyntax, Kind: KindError, Value: []byte("ERR syntax error")}
	var out1 Reply
	if err := c.DecodeReply(c.AppendReply(nil, &single), &out1); err != nil || !reflect.DeepEqual(single, out1) {
		t.Fatalf("single reply round trip: %v\n in %+v\nout %+v", err, single, out1)
	}
	one := Request{CorrelationID: 3, Op: OpGet, Key: []byte("k"), Value: []byte{}}
	var got Request
	if err := c.DecodeRequest(c.AppendRequest(nil, &one), &got); err != nil || !reflect.DeepEqual(one, got) {
		t.Fatalf("single request round trip: %v\n in %+v\nout %+v", err, one, got)
	}
	if err := c.DecodeRequest(msg, new(Request)); !errors.Is(err, ErrWrongTemplate) {
		t.Fatalf("reply decoded as request: %v", err)
	}
	for i := 0; i < len(msg); i++ {
		if err := c.DecodeReply(msg[:i], &out); !errors.Is(err, ErrMalformed) {
			t.Fatalf("prefix of %d bytes decoded: %v", i, err)
		}
	}
}

// TestGoldenPing pins the wire bytes of a framed PING request, so a schema
// change that alters the layout shows up as a diff of testdata/ping.hex.
func TestGoldenPing(t *testing.T) {
	var c Codec
	wire := AppendFramed(nil, &c, &Request{CorrelationID: 1, Op: OpPing})
	got := hex.EncodeToString(wire)
	want, err := os.ReadFile("testdata/ping.hex")
	if os.Getenv("GOBLIN_UPDATE_GOLDEN") != "" {
		err = os.WriteFile("testdata/ping.hex", []byte(got+"\n"), 0o644)
		want = []byte(got + "\n")
	}
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(want)) != got {
		t.Fatalf("framed PING\n got %s\nwant %s", got, want)
	}
	// SOFH: the length includes the header, then 0xEB50.
	if !bytes.HasPrefix(wire, []byte{0, 0, 0, byte(len(wire)), 0xEB, 0x50}) {
		t.Fatalf("bad SOFH % x", wire[:6])
	}
}

func TestReadFrame(t *testing.T) {
	var c Codec
	r := sampleRequest()
	stream := AppendFramed(nil, &c, &r)
	one := len(stream)
	stream = AppendFramed(stream, &c, &Request{Op: OpPing})
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
	rep := Reply{Kind: KindBulk, Value: []byte("0123456789abcdef"), Items: []Item{{Kind: KindBulk, Value: []byte("x")}}}
	buf := make([]byte, 0, 1024)
	var dr Request
	var dp Reply
	dr.Args = make([][]byte, 0, 8)
	dp.Items = make([]Item, 0, 8)
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
	f.Add(AppendFramed(nil, &c, &Request{Op: OpPing}))
	var framed []byte
	framed, start := BeginFrame(nil)
	framed = c.AppendReply(framed, &Reply{Kind: KindArray, Items: []Item{{Kind: KindBulk, Value: []byte("x")}}})
	f.Add(EndFrame(framed, start))
	f.Fuzz(func(t *testing.T, in []byte) {
		var c Codec
		for len(in) > 0 {
			msg, n, err := ReadFrame(in, 1<<20)
			if err != nil || n == 0 {
				msg, n = in, len(in) // also try the bytes as a bare message
			}
			var req Request
			if err := c.DecodeRequest(msg, &req); err == nil {
				again := c.AppendRequest(nil, &req)
				var req2 Request
				if err := c.DecodeRequest(again, &req2); err != nil || fmt.Sprint(req) != fmt.Sprint(req2) {
					t.Fatalf("re-encoded request differs: %v\n%+v\n%+v", err, req, req2)
				}
			}
			var rep Reply
			if err := c.DecodeReply(msg, &rep); err == nil {
				again := c.AppendReply(nil, &rep)
				var rep2 Reply
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
	wire := AppendFramed(nil, &c, &Request{CorrelationID: 42, Op: OpGet, Key: []byte("greeting")})
	msg, n, _ := ReadFrame(wire, 0)
	var req Request
	_ = c.DecodeRequest(msg, &req)
	fmt.Println(n == len(wire), req.CorrelationID, req.Op == OpGet, string(req.Key))
	// Output: true 42 true greeting
}
