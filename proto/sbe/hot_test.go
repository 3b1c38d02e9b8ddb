package sbe

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/goblin-kv/goblin/command"
)

// checkAsRequest asserts AsRequest's contract on msg: when it decodes,
// DecodeRequest accepts msg and decodes the same Request.
func checkAsRequest(t *testing.T, msg []byte) bool {
	t.Helper()
	var c Codec
	var got, want command.Request
	checkPeekKeyed(t, msg)
	if !AsRequest(msg, &got) {
		return false
	}
	if err := c.DecodeRequest(msg, &want); err != nil {
		t.Fatalf("AsRequest decoded % x, which DecodeRequest refuses: %v", msg, err)
	}
	got.Args, want.Args = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("AsRequest decoded % x as\n%+v\nDecodeRequest as\n%+v", msg, got, want)
	}
	return true
}

// checkPeekKeyed asserts PeekKeyed's contract on msg: it reads exactly
// the GETs and plain SETs (version 2 or later) that AsRequest decodes, as
// AsRequest decodes them.
func checkPeekKeyed(t *testing.T, msg []byte) {
	t.Helper()
	op, corr, key, value, ok := PeekKeyed(msg)
	var r command.Request
	decoded := AsRequest(msg, &r)
	want := decoded && r.Version >= 2 &&
		(r.Op == command.OpGet || r.Op == command.OpSet && r.Flags == 0 && r.Expiry == command.ExpiryNone)
	if ok != want {
		t.Fatalf("PeekKeyed read % x: %v, want %v (AsRequest: %v %+v)", msg, ok, want, decoded, r)
	}
	if ok && (op != r.Op || corr != r.CorrelationID || !bytes.Equal(key, r.Key) || !bytes.Equal(value, r.Value)) {
		t.Fatalf("PeekKeyed read % x as %v %d %q %q; AsRequest as %+v", msg, op, corr, key, value, r)
	}
}

func TestAsRequest(t *testing.T) {
	var c Codec
	for _, r := range []command.Request{
		{Op: command.OpGet, Key: []byte("key:000000000042"), CorrelationID: 7},
		{Op: command.OpSet, Key: []byte("k"), Value: []byte("0123456789abcdef"), CorrelationID: 1 << 60},
		{Op: command.OpSet, Key: []byte("k"), Value: []byte("v"), Flags: command.FlagNX | command.FlagGet, Expiry: command.ExpiryPX, Expire: 1500},
		{Op: command.OpIncrBy, Key: []byte("n"), Amount: -3},
		{Op: command.OpDBSize},
	} {
		msg := c.AppendRequest(nil, &r)
		if !checkAsRequest(t, msg) {
			t.Errorf("AsRequest declined %+v", r)
		}
		// Cut short anywhere, or with a key or value length past the end,
		// it declines (DecodeRequest reports the truncation).
		for n := range len(msg) {
			if checkAsRequest(t, msg[:n]) {
				t.Errorf("AsRequest decoded the first %d of %d bytes of %+v", n, len(msg), r)
			}
		}
	}
	// Other messages are DecodeRequest's: a Ping, a MultiRequest, a
	// Request of another schema.
	for _, r := range []command.Request{
		{Op: command.OpPing, Compact: true},
		{Op: command.OpDel, Key: []byte("a"), Args: [][]byte{[]byte("b")}},
	} {
		if msg := c.AppendRequest(nil, &r); checkAsRequest(t, msg) {
			t.Errorf("AsRequest decoded %+v", r)
		}
	}
	msg := c.AppendRequest(nil, &command.Request{Op: command.OpGet, Key: []byte("k")})
	msg[4]++ // the schema id
	if checkAsRequest(t, msg) {
		t.Error("AsRequest decoded a message of another schema")
	}
	// PeekKeyed reads a GET and a plain SET, and declines a version 1
	// message (which the engine answers in version 1's kinds).
	for _, r := range []command.Request{
		{Op: command.OpGet, Key: []byte("key:000000000042"), CorrelationID: 7},
		{Op: command.OpSet, Key: []byte("k"), Value: []byte("0123456789abcdef"), CorrelationID: 1 << 60},
	} {
		msg := c.AppendRequest(nil, &r)
		if _, _, _, _, ok := PeekKeyed(msg); !ok {
			t.Errorf("PeekKeyed declined %+v", r)
		}
		msg[6], msg[7] = 1, 0 // the schema version
		if _, _, _, _, ok := PeekKeyed(msg); ok {
			t.Errorf("PeekKeyed read a version 1 %+v", r)
		}
	}
}

// FuzzAsRequest: on any bytes AsRequest agrees with DecodeRequest or
// declines.
func FuzzAsRequest(f *testing.F) {
	var c Codec
	f.Add(c.AppendRequest(nil, &command.Request{Op: command.OpSet, Key: []byte("k"), Value: []byte("v")}))
	f.Add(c.AppendRequest(nil, &command.Request{Op: command.OpGet, Key: bytes.Repeat([]byte("k"), 40)}))
	f.Fuzz(func(t *testing.T, msg []byte) { checkAsRequest(t, msg) })
}
