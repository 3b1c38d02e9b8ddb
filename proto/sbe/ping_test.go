package sbe

import (
	"bytes"
	"testing"

	"github.com/goblin-kv/goblin/command"
)

// TestAsPingAgreesWithDecodeRequest: AsPing and AppendPong are shortcuts
// for DecodeRequest and AppendReply on the compact Ping; they must give the
// same answers, and AsPing must refuse every other message.
func TestAsPingAgreesWithDecodeRequest(t *testing.T) {
	var c Codec
	ping := c.AppendRequest(nil, &command.Request{Op: command.OpPing, CorrelationID: 0x1122334455667788, Compact: true})
	corr, ok := AsPing(ping)
	if !ok || corr != 0x1122334455667788 {
		t.Fatalf("AsPing(% x) = %#x, %v; want the correlation id", ping, corr, ok)
	}
	var r command.Request
	if err := c.DecodeRequest(ping, &r); err != nil || r.Op != command.OpPing || r.CorrelationID != corr || !r.Compact {
		t.Fatalf("DecodeRequest(% x) = %+v, %v", ping, r, err)
	}
	rep := command.Reply{Kind: command.Simple, Value: []byte("PONG"), CorrelationID: corr, Compact: true}
	if want, got := c.AppendReply(nil, &rep), AppendPong(nil, corr); !bytes.Equal(want, got) {
		t.Fatalf("AppendPong = % x, AppendReply = % x", got, want)
	}
	// A version-1 Ping (same layout, older version field) is a Ping too.
	v1 := bytes.Clone(ping)
	v1[6], v1[7] = 1, 0
	if _, ok := AsPing(v1); !ok {
		t.Error("AsPing refused a version 1 Ping")
	}
	for name, msg := range map[string][]byte{
		"short":       ping[:PingLen-1],
		"long":        append(bytes.Clone(ping), 0),
		"get":         c.AppendRequest(nil, &command.Request{Op: command.OpGet, Key: []byte("k")}),
		"pong":        AppendPong(nil, 1),
		"schema":      func() []byte { b := bytes.Clone(ping); b[4]++; return b }(),
		"block":       func() []byte { b := bytes.Clone(ping); b[0]++; return b }(),
		"empty":       nil,
		"non-compact": c.AppendRequest(nil, &command.Request{Op: command.OpPing, Args: [][]byte{[]byte("hi")}}),
	} {
		if _, ok := AsPing(msg); ok {
			t.Errorf("AsPing accepted %s: % x", name, msg)
		}
	}
}
