package sbe

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"

	"github.com/goblin-kv/goblin/command"
)

// TestAppendPingMatchesAppendRequest: AppendPing writes the bytes the
// general encoder writes for a compact PING.
func TestAppendPingMatchesAppendRequest(t *testing.T) {
	var c Codec
	for _, id := range []uint64{0, 1, 255, 1 << 40, ^uint64(0)} {
		want := c.AppendRequest([]byte("x"), &command.Request{CorrelationID: id, Op: command.OpPing, Compact: true})
		if got := AppendPing([]byte("x"), id); !bytes.Equal(got, want) {
			t.Fatalf("AppendPing(%d) = % x, AppendRequest = % x", id, got, want)
		}
	}
}

// TestDecodeReplyLenMatchesDecodeReply: for every reply kind, values of
// every length around the fixed path's, each reply followed by more bytes,
// cut short at every length, and with a header of another version or
// block, DecodeReplyLen returns MessageLen's length and error and leaves r
// as DecodeReply does (both starting from the same stale r).
// TestAsPongMatchesDecodeReplyLen is in TestDecodeReplyLenMatchesDecodeReply.
func TestDecodeReplyLenMatchesDecodeReply(t *testing.T) {
	var c Codec
	stale := func() command.Reply {
		return command.Reply{CorrelationID: 77, Status: command.Syntax, Kind: command.Array, Integer: -5,
			Value: []byte("stale"), Items: make([]command.Item, 2, 8), Compact: true}
	}
	var msgs [][]byte
	add := func(r command.Reply) { msgs = append(msgs, c.AppendReply(nil, &r)) }
	add(command.Reply{CorrelationID: 1, Status: command.OK, Kind: command.Simple, Value: []byte("PONG"), Compact: true})
	add(command.Reply{CorrelationID: 2, Status: command.OK, Kind: command.Simple, Value: []byte("OK")})
	add(command.Reply{CorrelationID: 3, Status: command.OK, Kind: command.Nil})
	add(command.Reply{CorrelationID: 4, Status: command.OK, Kind: command.Integer, Integer: -12345})
	add(command.Reply{CorrelationID: 5, Status: command.Syntax, Kind: command.Error, Value: []byte("ERR syntax error")})
	for n := range 40 {
		add(command.Reply{CorrelationID: uint64(6 + n), Status: command.OK, Kind: command.Bulk, Value: bytes.Repeat([]byte{'v'}, n)})
	}
	add(command.Reply{CorrelationID: 50, Status: command.OK, Kind: command.Array, Integer: 2,
		Items: []command.Item{{Kind: command.Bulk, Value: []byte("a")}, {Kind: command.Integer, Integer: 3, Value: []byte{}}}})
	add(command.Reply{CorrelationID: 51, Status: command.OK, Kind: command.Map, Integer: 1,
		Items: []command.Item{{Kind: command.Bulk, Value: []byte("f")}, {Kind: command.Bulk, Value: []byte("v")}}})
	// A Reply claiming an aggregate kind, and headers of another version
	// or block length (a newer server's longer block is accepted).
	agg := c.AppendReply(nil, &command.Reply{CorrelationID: 52, Kind: command.Bulk, Value: []byte("x")})
	agg[headerLen+repKind] = byte(command.Array)
	msgs = append(msgs, agg)
	for _, m := range [][]byte{msgs[0], msgs[1], msgs[10]} {
		for _, h := range []uint64{
			binary.LittleEndian.Uint64(m) &^ (0xffff << 48),                     // version 0
			binary.LittleEndian.Uint64(m) + 1<<48,                               // a newer version
			binary.LittleEndian.Uint64(m) + 4,                                   // a longer block
			binary.LittleEndian.Uint64(m)&^0xffff | uint64(len(m)-headerLen)<<0, // block over the whole message
		} {
			v := bytes.Clone(m)
			binary.LittleEndian.PutUint64(v, h)
			msgs = append(msgs, v, append(v, 1, 2, 3, 4, 5, 6, 7, 8))
		}
	}
	var cases [][]byte
	for _, m := range msgs {
		for i := 0; i <= len(m); i++ {
			cases = append(cases, m[:i])
		}
		cases = append(cases, append(bytes.Clone(m), "trailing bytes of the next message"...))
	}
	pongs := 0
	for _, m := range cases {
		if id, ok := AsPong(m); ok {
			// AsPong accepts only what DecodeReplyLen reads as that Pong.
			pongs++
			r := stale()
			n, err := c.DecodeReplyLen(m, &r)
			if err != nil || n != PingLen || r.CorrelationID != id || r.Status != command.OK ||
				r.Kind != command.Simple || string(r.Value) != "PONG" {
				t.Fatalf("% x: AsPong = %d, but DecodeReplyLen = %d, %v, %+v", m, id, n, err, r)
			}
		}
		want, got := stale(), stale()
		wantN, wantErr := c.MessageLen(m)
		derr := c.DecodeReply(m, &want)
		n, err := c.DecodeReplyLen(m, &got)
		if (err == nil) != (derr == nil) || (err != nil && err.Error() != derr.Error()) {
			t.Fatalf("% x: DecodeReplyLen error %v, DecodeReply's %v", m, err, derr)
		}
		if (err == nil) != (wantErr == nil) || (err == nil && n != wantN) {
			t.Fatalf("% x: DecodeReplyLen = %d, %v; MessageLen = %d, %v", m, n, err, wantN, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("% x: DecodeReplyLen gave\n%+v\nDecodeReply\n%+v", m, got, want)
		}
	}
	if pongs == 0 {
		t.Fatal("AsPong accepted none of the cases: the Pong check above never ran")
	}
}

func TestClientHotAllocs(t *testing.T) {
	var c Codec
	buf := make([]byte, 0, 64)
	pong := AppendPong(nil, 9)
	bulk := c.AppendReply(nil, &command.Reply{CorrelationID: 3, Kind: command.Bulk, Value: []byte("0123456789abcdef")})
	var r command.Reply
	if a := testing.AllocsPerRun(100, func() {
		buf = AppendPing(buf[:0], 7)
		c.DecodeReplyLen(pong, &r)
		c.DecodeReplyLen(bulk, &r)
	}); a != 0 {
		t.Fatalf("%v allocations, want 0", a)
	}
}

// TestAppendPlainRequestMatchesRequestAt: the fixed-offset encoder writes
// the bytes the flyweight path writes, for requests of every field, and
// AppendRequest takes it exactly for plain Request messages.
func TestAppendPlainRequestMatchesRequestAt(t *testing.T) {
	var c Codec
	reqs := []command.Request{
		{CorrelationID: 1, Op: command.OpGet, Key: []byte("bench:key:000001")},
		{CorrelationID: 2, Op: command.OpSet, Key: []byte("k"), Value: []byte("0123456789abcdef")},
		{CorrelationID: 3, Op: command.OpSet, Key: []byte("k"), Value: []byte("v"), Flags: command.FlagNX | command.FlagGet | command.FlagKeepTTL,
			Expiry: command.ExpiryPX, Expire: 1 << 40},
		{CorrelationID: 4, Op: command.OpIncrBy, Key: []byte("n"), Amount: -7},
		{CorrelationID: 5, Op: command.OpPing},                                                // a Request: not Compact
		{CorrelationID: 6, Op: command.OpPing, Compact: true},                                 // a Ping
		{CorrelationID: 7, Op: command.OpDel, Key: []byte("a"), Args: [][]byte{[]byte("b")}},  // a MultiRequest
		{CorrelationID: 8, Op: command.OpGetRange, Key: []byte("a"), Amount: 1, Amount2: 3},   // a MultiRequest
		{CorrelationID: 9, Op: command.OpHGet, Key: []byte("h"), Args: [][]byte{[]byte("f")}}, // typed
		{CorrelationID: 10, Op: command.OpRPop, Key: []byte("l")},                             // typed
		{CorrelationID: 11, Op: command.OpGet, Key: []byte{}, Value: bytes.Repeat([]byte{'x'}, 300)},
	}
	for i := range reqs {
		r := &reqs[i]
		want := c.requestAt(make([]byte, 3+RequestLen(r)), 3, RequestLen(r), r)
		want = append([]byte("abc"), want[3:]...)
		if got := c.AppendRequest([]byte("abc"), r); !bytes.Equal(got, want) {
			t.Fatalf("%+v: AppendRequest\n% x\nrequestAt\n% x", r, got, want)
		}
		plain := !multi(r) && !compactPing(r) && typedTemplate(r) == 0
		if plainRequest(r) != plain {
			t.Fatalf("%+v: plainRequest = %t", r, !plain)
		}
		if plain {
			var back command.Request
			if err := c.DecodeRequest(want[3:], &back); err != nil || back.CorrelationID != r.CorrelationID || back.Op != r.Op {
				t.Fatalf("%+v: decodes as %+v, %v", r, back, err)
			}
		}
	}
}
