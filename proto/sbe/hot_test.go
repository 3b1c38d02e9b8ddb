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
}

// FuzzAsRequest: on any bytes AsRequest agrees with DecodeRequest or
// declines.
func FuzzAsRequest(f *testing.F) {
	var c Codec
	f.Add(c.AppendRequest(nil, &command.Request{Op: command.OpSet, Key: []byte("k"), Value: []byte("v")}))
	f.Add(c.AppendRequest(nil, &command.Request{Op: command.OpGet, Key: bytes.Repeat([]byte("k"), 40)}))
	f.Fuzz(func(t *testing.T, msg []byte) { checkAsRequest(t, msg) })
}
