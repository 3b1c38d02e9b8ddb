package sbe

import (
	"bytes"
	"testing"

	"github.com/goblin-kv/goblin/command"
)

// TestAppendReplyHeader: a header from AppendReplyHeader (or written by
// PutReplyHeader over scribbled bytes; PutSimpleOK's whole reply) followed by the
// value, or with the length set afterwards by SetReplyValueLen or
// FinishReplyValue, is byte
// for byte what AppendReply writes for the same Reply, and decodes.
func TestAppendReplyHeader(t *testing.T) {
	var c Codec
	for _, r := range []command.Reply{
		{CorrelationID: 77, Kind: command.Bulk, Value: []byte("0123456789abcdef")},
		{CorrelationID: 1, Kind: command.Simple, Value: []byte("OK")},
		{CorrelationID: 1 << 60, Kind: command.Nil},
		{CorrelationID: 3, Kind: command.Error, Status: command.Err, Value: []byte("ERR x")},
	} {
		want := c.AppendReply([]byte("prefix"), &r)
		got := append(AppendReplyHeader([]byte("prefix"), r.CorrelationID, r.Status, r.Kind, len(r.Value)), r.Value...)
		if !bytes.Equal(got, want) {
			t.Errorf("%v: header+value\n%x\nAppendReply\n%x", r.Kind, got, want)
		}
		late := append(AppendReplyHeader([]byte("prefix"), r.CorrelationID, r.Status, r.Kind, 0), r.Value...)
		SetReplyValueLen(late[len("prefix"):], len(r.Value))
		if !bytes.Equal(late, want) {
			t.Errorf("%v: length set late\n%x\nAppendReply\n%x", r.Kind, late, want)
		}
		fin := append(AppendReplyHeader([]byte("prefix"), r.CorrelationID, r.Status, r.Kind, 0), r.Value...)
		FinishReplyValue(fin[len("prefix"):])
		if !bytes.Equal(fin, want) {
			t.Errorf("%v: FinishReplyValue\n%x\nAppendReply\n%x", r.Kind, fin, want)
		}
		framed := AppendFrameStart([]byte("prefix"))
		framed = append(AppendReplyHeader(framed, r.CorrelationID, r.Status, r.Kind, len(r.Value)), r.Value...)
		FinishFrame(framed[len("prefix"):])
		if wantFramed := c.AppendFramedReply([]byte("prefix"), &r); !bytes.Equal(framed, wantFramed) {
			t.Errorf("%v: framed\n%x\nAppendFramedReply\n%x", r.Kind, framed, wantFramed)
		}
		// PutReplyHeader writes every byte of the header: over scribbled
		// bytes, the same message.
		put := bytes.Repeat([]byte{0xff}, len("prefix")+ReplyHeaderLen)
		copy(put, "prefix")
		PutReplyHeader(put[len("prefix"):], r.CorrelationID, r.Status, r.Kind, len(r.Value))
		if put = append(put, r.Value...); !bytes.Equal(put, want) {
			t.Errorf("%v: PutReplyHeader\n%x\nAppendReply\n%x", r.Kind, put, want)
		}
		if r.Kind == command.Simple && string(r.Value) == "OK" {
			ok := bytes.Repeat([]byte{0xff}, len("prefix")+ReplyHeaderLen+2)
			copy(ok, "prefix")
			PutSimpleOK(ok[len("prefix"):], r.CorrelationID)
			if !bytes.Equal(ok, want) {
				t.Errorf("PutSimpleOK\n%x\nAppendReply\n%x", ok, want)
			}
		}
		var back command.Reply
		if err := c.DecodeReply(got[len("prefix"):], &back); err != nil || back.CorrelationID != r.CorrelationID || back.Kind != r.Kind || string(back.Value) != string(r.Value) {
			t.Errorf("%v: decodes as %+v (%v)", r.Kind, back, err)
		}
	}
}
