package sbe

import (
	"testing"

	"github.com/goblin-kv/goblin/command"
)

func BenchmarkCodec(b *testing.B) {
	var c Codec
	ping := c.AppendRequest(nil, &command.Request{CorrelationID: 1, Op: command.OpPing})
	set := c.AppendRequest(nil, &command.Request{CorrelationID: 1, Op: command.OpSet, Key: []byte("key:000000000042"), Value: []byte("0123456789abcdef")})
	for _, m := range []struct {
		name string
		msg  []byte
	}{{"DecodeRequest/PING", ping}, {"DecodeRequest/SET", set}} {
		b.Run(m.name, func(b *testing.B) {
			var r command.Request
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if err := c.DecodeRequest(m.msg, &r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("AppendReply/PONG", func(b *testing.B) {
		out := make([]byte, 0, 128)
		rep := command.Reply{Kind: command.Simple, Value: []byte("PONG")}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			out = c.AppendReply(out[:0], &rep)
		}
	})
	b.Run("AppendRequest/SET", func(b *testing.B) {
		out := make([]byte, 0, 128)
		req := command.Request{CorrelationID: 1, Op: command.OpSet, Key: []byte("key:000000000042"), Value: []byte("0123456789abcdef")}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			out = c.AppendRequest(out[:0], &req)
		}
	})
	b.Run("DecodeReply/bulk", func(b *testing.B) {
		msg := c.AppendReply(nil, &command.Reply{Kind: command.Bulk, Value: []byte("0123456789abcdef")})
		var r command.Reply
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := c.DecodeReply(msg, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
