package sbe

import (
	"bytes"
	"testing"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/sbe/goblinsbe"
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

// TestOffsetsMatchGenerated pins the layout the hot decode and encode use
// directly to the generated flyweights, so a schema change that moves a
// field fails here instead of misreading messages.
func TestOffsetsMatchGenerated(t *testing.T) {
	var rq goblinsbe.Request
	var rp goblinsbe.Reply
	var h goblinsbe.MessageHeader
	for _, c := range []struct {
		name      string
		got, want uint64
	}{
		{"Request.correlationId", reqCorrelationID, uint64(rq.CorrelationIdEncodingOffset())},
		{"Request.op", reqOp, uint64(rq.OpEncodingOffset())},
		{"Request.flags", reqFlags, uint64(rq.FlagsEncodingOffset())},
		{"Request.expiry", reqExpiry, uint64(rq.ExpiryEncodingOffset())},
		{"Request.expire", reqExpire, uint64(rq.ExpireEncodingOffset())},
		{"Request.amount", reqAmount, uint64(rq.AmountEncodingOffset())},
		{"Request block", reqBlockV2, uint64(goblinsbe.RequestSbeBlockLength)},
		{"Reply.correlationId", repCorrelationID, uint64(rp.CorrelationIdEncodingOffset())},
		{"Reply.status", repStatus, uint64(rp.StatusEncodingOffset())},
		{"Reply.kind", repKind, uint64(rp.KindEncodingOffset())},
		{"Reply.integer", repInteger, uint64(rp.IntegerEncodingOffset())},
		{"Reply block", repBlock, uint64(goblinsbe.ReplySbeBlockLength)},
		{"header.blockLength", 0, uint64(h.BlockLengthEncodingOffset())},
		{"header.templateId", 2, uint64(h.TemplateIdEncodingOffset())},
		{"header.schemaId", 4, uint64(h.SchemaIdEncodingOffset())},
		{"header.version", 6, uint64(h.VersionEncodingOffset())},
		{"Request.op size", 1, uint64(rq.OpEncodingLength())},
		{"Reply.status size", 1, uint64(rp.StatusEncodingLength())},
		{"Reply.kind size", 1, uint64(rp.KindEncodingLength())},
	} {
		if c.got != c.want {
			t.Errorf("%s: the hot path uses %d, the generated code %d", c.name, c.got, c.want)
		}
	}
	// And the bytes: a Reply written directly equals the flyweight's.
	rep := command.Reply{CorrelationID: 9, Status: command.NotInteger, Kind: command.Error, Integer: -3, Value: []byte("ERR x")}
	var c Codec
	got := c.AppendReply(nil, &rep)
	want := make([]byte, len(got))
	var m goblinsbe.Reply
	m.WrapAndApplyHeader(want, 0, uint64(len(want)))
	m.SetCorrelationId(9).SetStatus(goblinsbe.Status(rep.Status)).SetKind(goblinsbe.Kind(rep.Kind)).SetInteger(-3)
	m.PutValue(string(rep.Value))
	if !bytes.Equal(got, want) {
		t.Errorf("AppendReply = % x\nflyweight   = % x", got, want)
	}
}
