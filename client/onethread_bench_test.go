package client

import (
	"context"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/engine"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/server"
	"github.com/goblin-kv/goblin/store"
	"github.com/goblin-kv/goblin/transport"
)

// loopConn is a message transport without a transport: Write serves the
// request at once through an engine session and ReadAppend hands its
// reply back, on the caller's goroutine. It isolates the client library's
// own work per call (encode, decode, locking, deadlines) from any
// transport's, for callgrind.
type loopConn struct {
	sess  transport.MessageSession
	reply []byte
}

func (c *loopConn) Write(p []byte) error {
	c.reply, _ = c.sess.ServeMessage(p, c.reply[:0])
	return nil
}

func (c *loopConn) ReadAppend(dst []byte) ([]byte, error) { return append(dst, c.reply...), nil }
func (c *loopConn) SetDeadline(time.Time) error           { return nil }
func (c *loopConn) Close() error                          { c.sess.Close(); return nil }

// BenchmarkOneThreadLibrary is a depth-one PING, SET (16-byte value) or
// GET through the client library's typed calls, the request served by the
// engine on the same goroutine through a loopConn in place of a
// transport: the library's and the engine's instructions per call, none
// of a transport's. Less the engine's own (engine's BenchmarkServe) it is
// what the library adds to every round trip the latency matrix measures:
//
//	benchmarks/instructions.sh ./client '^BenchmarkOneThreadLibrary$/^SBE$/^PING$'
func BenchmarkOneThreadLibrary(b *testing.B) {
	for _, p := range []proto.Protocol{proto.SBE, proto.RESP} {
		for _, op := range []string{"PING", "GET", "SET"} {
			b.Run(p.String()+"/"+op, func(b *testing.B) { benchOneThreadLibrary(b, p, op) })
		}
	}
}

func benchOneThreadLibrary(b *testing.B, p proto.Protocol, op string) {
	st, err := store.New(store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	eng := engine.NewEngine(st, engine.Options{})
	h := server.NewEngineHandler(eng, new(engine.Stats), "loop/"+p.String())
	const scheme = transport.Scheme("loop")
	lookupDialer = func(s transport.Scheme) (dialer, error) {
		return dialer{message: true, dial: func(context.Context, transport.Target, *Options) (transport.Conn, error) {
			return &loopConn{sess: h.OpenMessage(p)}, nil
		}}, nil
	}
	defer func() { lookupDialer = dialerFor }()
	ctx := context.Background()
	c, err := Options{}.DialTarget(ctx, transport.Target{Scheme: scheme, Address: "x", Proto: p, ProtoSet: true})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	key, val := "bench:key:000001", []byte("0123456789abcdef")
	if err := c.Set(ctx, key, val, SetOptions{}); err != nil {
		b.Fatal(err)
	}
	dst := make([]byte, 0, 64)
	var do func() error
	switch op {
	case "PING":
		do = func() error { return c.Ping(ctx) }
	case "SET":
		do = func() error { return c.Set(ctx, key, val, SetOptions{}) }
	case "GET":
		do = func() error { _, err := c.GetAppend(ctx, dst[:0], key); return err }
	}
	for range 100 {
		if err := do(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := do(); err != nil {
			b.Fatal(err)
		}
	}
}
