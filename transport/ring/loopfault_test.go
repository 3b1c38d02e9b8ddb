package ring_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/engine"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/server"
	"github.com/goblin-kv/goblin/store"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/ring"
)

// TestLoopSurvivesFault is TestFaultDropsOnlyThatClient under the server's
// loop, which holds the ring's fault guard for its whole goroutine
// (server.FaultGuarded) and polls the ring without it: a fault in one
// client's mapping drops that client, the loop goes on running, and the
// other client is served.
func TestLoopSurvivesFault(t *testing.T) {
	st, err := store.New(store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.NewEngine(st, engine.Options{})
	dir := filepath.Join(t.TempDir(), "ring")
	rs, err := ring.Listen(ring.Options{Dir: dir, Proto: proto.RESP, Handler: server.NewEngineHandler(eng, new(engine.Stats), "ring/resp")})
	if err != nil {
		t.Fatal(err)
	}
	var _ server.FaultGuarded = rs
	broken := filepath.Join(t.TempDir(), "victim.ring")
	var breakNow atomic.Bool
	var faults, clients atomic.Int64
	faults.Store(-1)
	breakErr := make(chan error, 1)
	loop, err := server.NewLoop(server.LoopConfig{
		Transports: []transport.Server{rs},
		Idle:       server.IdleBackoff,
		BeginCycle: func(int64) { // on the loop goroutine, before the cycle's Poll
			if breakNow.CompareAndSwap(true, false) {
				breakErr <- ring.BreakMapping(rs, 0, broken)
			}
			var s ring.Stats
			rs.Stats(&s)
			faults.Store(s.Faults)
			clients.Store(int64(s.Clients))
		},
	})
	if err != nil {
		rs.Close()
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- loop.Run() }()
	t.Cleanup(func() {
		loop.Stop()
		if err := <-errc; err != nil {
			t.Error(err)
		}
	})
	dial := func() *ring.Conn {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := ring.Dial(ctx, dir, ring.DialOptions{Proto: proto.RESP})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	victim := dial() // the server's client 0
	if err := ping(victim, proto.RESP, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	other := dial()
	breakNow.Store(true)
	if err := <-breakErr; err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, "the loop drops the faulted client and goes on", func() (bool, string) {
		f, n := faults.Load(), clients.Load()
		return f == 1 && n == 1, fmt.Sprintf("faults %d, clients %d", f, n)
	})
	if err := ping(other, proto.RESP, 10*time.Second); err != nil {
		t.Fatalf("the other client after the fault: %v", err)
	}
	select {
	case err := <-errc:
		t.Fatalf("the loop stopped after the fault: %v", err)
	default:
	}
}
