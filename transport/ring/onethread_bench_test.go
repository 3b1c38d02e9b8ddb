package ring_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/engine"
	"github.com/goblin-kv/goblin/internal/testkit/wiretest"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/server"
	"github.com/goblin-kv/goblin/store"
	"github.com/goblin-kv/goblin/transport/ring"
)

// BenchmarkOneThreadEngine is BenchmarkOneThread (path_bench_test.go)
// through the real engine and its server adapter: client Write, server
// Poll, client ReadAppend of a depth-one PING, SET (16-byte value) or GET
// on one goroutine, no cross-core transfers: what callgrind counts. Its
// difference from BenchmarkOneThread/pong is the engine's share of a round
// trip, and from the engine's own BenchmarkServe the transport's share of
// the bigger records (values, replies):
//
//	benchmarks/instructions.sh ./transport/ring '^BenchmarkOneThreadEngine$/^SBE$/^GET$'
func BenchmarkOneThreadEngine(b *testing.B) {
	for _, p := range []proto.Protocol{proto.SBE, proto.RESP} {
		for _, op := range []string{"PING", "GET", "SET"} {
			b.Run(p.String()+"/"+op, func(b *testing.B) { benchOneThreadEngine(b, p, op) })
		}
	}
}

func benchOneThreadEngine(b *testing.B, p proto.Protocol, op string) {
	st, err := store.New(store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	eng := engine.NewEngine(st, engine.Options{})
	dir := filepath.Join(b.TempDir(), "ring")
	srv, err := ring.Listen(ring.Options{Dir: dir, Proto: p, Handler: server.NewEngineHandler(eng, new(engine.Stats), "ring/"+p.String())})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	// Poll's clock is the caller's: this one starts at 1 s, so the
	// handshake's housekeeping runs at once, and the measured rounds, at a
	// now earlier than the last housekeeping, never run it.
	start := time.Now()
	clock := func() int64 { return int64(time.Second + time.Since(start)) }
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dialed := make(chan error, 1)
	var c *ring.Conn
	go func() {
		var err error
		c, err = ring.Dial(ctx, dir, ring.DialOptions{Proto: p})
		dialed <- err
	}()
	for waiting := true; waiting; {
		select {
		case err := <-dialed:
			if err != nil {
				b.Fatal(err)
			}
			waiting = false
		default:
			srv.Poll(clock())
			time.Sleep(100 * time.Microsecond)
		}
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Hour))
	buf := make([]byte, 0, 256)
	round := func(req []byte) {
		if err := c.Write(req); err != nil {
			b.Fatal(err)
		}
		srv.Poll(0)
		if buf, err = c.ReadAppend(buf[:0]); err != nil {
			b.Fatal(err)
		}
	}
	round(wiretest.Request(p, "SET")) // GET reads what SET wrote
	req := wiretest.Request(p, op)
	for range 100 {
		round(req)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		round(req)
	}
	b.StopTimer()
	wiretest.CheckReply(b, p, op, buf)
}
