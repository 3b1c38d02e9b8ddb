package client

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/sbe"
	"github.com/goblin-kv/goblin/transport"
)

// protoConn is a message connection whose "listener" speaks p and says so
// (transport.ProtocolConn). It answers PING in p, and a request in the
// other protocol with a reply the client cannot parse as p.
type protoConn struct {
	p     proto.Protocol
	codec sbe.Codec
	req   command.Request
	reply []byte
}

func (c *protoConn) Protocol() proto.Protocol { return c.p }

func (c *protoConn) Write(b []byte) error {
	switch {
	case c.p == proto.RESP && bytes.Equal(b, []byte("*1\r\n$4\r\nPING\r\n")):
		c.reply = []byte("+PONG\r\n")
	case c.p == proto.SBE && c.codec.DecodeRequest(b, &c.req) == nil:
		c.reply = c.codec.AppendReply(nil, &command.Reply{CorrelationID: c.req.CorrelationID, Status: command.OK,
			Kind: command.Simple, Value: []byte("PONG"), Compact: true})
	default:
		c.reply = []byte{0xff, 0xff, 0xff, 0xff} // neither protocol
	}
	return nil
}

func (c *protoConn) ReadAppend(dst []byte) ([]byte, error) {
	if c.reply == nil {
		return dst, transport.ErrTimeout
	}
	dst = append(dst, c.reply...)
	c.reply = nil
	return dst, nil
}

func (c *protoConn) SetDeadline(time.Time) error { return nil }
func (c *protoConn) Close() error                { return nil }

// TestProtocolFromHandshake: a target that names no protocol speaks the
// one the connection reports; one that names it keeps it.
func TestProtocolFromHandshake(t *testing.T) {
	for _, server := range []proto.Protocol{proto.RESP, proto.SBE} {
		swapDialer(t, transport.Ring, func(dialer) dialer {
			return dialer{message: true,
				dial: func(context.Context, transport.Target, *Options) (transport.Conn, error) {
					return &protoConn{p: server}, nil
				}}
		})
		c := dialT(t, "ring:///nowhere")
		if err := c.Ping(ctxT(t)); err != nil {
			t.Fatalf("server speaks %v, target names none: %v", server, err)
		}
		if got := c.Target(); got.Proto != server || got.ProtoSet {
			t.Fatalf("server speaks %v: the client's target is %+v", server, got)
		}
		other := proto.SBE
		if server == proto.SBE {
			other = proto.RESP
		}
		pinned := dialT(t, "ring:///nowhere?proto="+other.String())
		if err := pinned.Ping(ctxT(t)); err == nil {
			t.Fatalf("server speaks %v, target names %v: PING succeeded", server, other)
		}
		if pinned.Target().Proto != other {
			t.Fatalf("a target naming %v now speaks %v", other, pinned.Target().Proto)
		}
		// So does a parsed target's Proto (goblin-client --proto).
		tg, err := transport.ParseTarget("ring:///nowhere")
		if err != nil {
			t.Fatal(err)
		}
		tg.Proto, tg.ProtoSet = other, true
		opt, err := DialTarget(ctxT(t), tg)
		if err != nil {
			t.Fatal(err)
		}
		if err := opt.Ping(ctxT(t)); err == nil || opt.Target().Proto != other {
			t.Fatalf("a target with Proto %v against a %v server: %v, speaks %v", other, server, err, opt.Target().Proto)
		}
		opt.Close()
	}
}
