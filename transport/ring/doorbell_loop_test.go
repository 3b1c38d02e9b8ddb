package ring_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/engine"
	"github.com/goblin-kv/goblin/idle"
	"github.com/goblin-kv/goblin/internal/testkit/wiretest"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/proto/sbe"
	"github.com/goblin-kv/goblin/server"
	"github.com/goblin-kv/goblin/store"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/ring"
)

// longPark is the park of the loops in the doorbell tests: long enough
// that a request which waited it out could not pass for a rung one.
const longPark = 30 * time.Second

// parkedServer is a real store loop over a ring server whose backoff parks
// for longPark, with two clients: rung (with the doorbell) and quiet (with
// the doorbell disabled). parks follows LoopStats.Parks, which the loop
// publishes just before each park, after the ring agreed to it: once it
// grows, a request written afterwards is not seen until the park ends.
type parkedServer struct {
	rs          *ring.Server
	loop        *server.Loop
	rung, quiet *ring.Conn
	parks       atomic.Int64
	cycles      atomic.Int64 // LoopStats.Iterations: still while the loop is parked
}

func startParkedServer(t *testing.T, p proto.Protocol) *parkedServer {
	t.Helper()
	st, err := store.New(store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.NewEngine(st, engine.Options{})
	dir := filepath.Join(t.TempDir(), "ring")
	rs, err := ring.Listen(ring.Options{Dir: dir, Proto: p, Handler: server.NewEngineHandler(eng, new(engine.Stats), "ring/"+p.String())})
	if err != nil {
		t.Fatal(err)
	}
	ps := &parkedServer{rs: rs}
	// Handshakes are answered from the loop, and a loop parked for 30 s
	// would answer them 30 s late: dial while polling by hand, then start
	// the loop.
	for _, c := range []**ring.Conn{&ps.rung, &ps.quiet} {
		done := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var err error
			// A parked loop beats no heartbeat: give the clients more
			// patience than the park is long.
			*c, err = ring.Dial(ctx, dir, ring.DialOptions{Proto: p, Wait: idle.Backoff, ServerTimeout: 2 * longPark})
			done <- err
		}()
		for polling := true; polling; {
			select {
			case err := <-done:
				if err != nil {
					rs.Close()
					t.Fatal(err)
				}
				polling = false
			default:
				rs.Poll(int64(time.Since(doorbellClock)))
				time.Sleep(100 * time.Microsecond)
			}
		}
	}
	ring.DisableDoorbell(ps.quiet)
	ps.loop, err = server.NewLoop(server.LoopConfig{
		Transports:   []transport.Server{rs},
		Idle:         server.IdleBackoff,
		Options:      &server.Options{Backoff: idle.Params{MinPark: longPark, MaxPark: longPark}},
		Tick:         st.Tick,
		Publish:      func(s *server.LoopStats) { ps.parks.Store(s.Parks); ps.cycles.Store(s.Iterations) },
		PublishEvery: time.Nanosecond,
	})
	if err != nil {
		rs.Close()
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- ps.loop.Run() }()
	t.Cleanup(func() {
		ps.loop.Stop()
		// The loop may be in a 30 s park: ring until it notices the stop.
		for stopped := false; !stopped; {
			ring.RingDoorbell(ps.rung)
			select {
			case err := <-errc:
				if err != nil {
					t.Error(err)
				}
				stopped = true
			case <-time.After(10 * time.Millisecond):
			}
		}
		ps.rung.Close()
		ps.quiet.Close()
	})
	return ps
}

var doorbellClock = time.Now()

// waitParked waits until the loop has parked more than n times and is in
// a park: its cycle count still for 100 ms (a count read before a request
// can be stale, since a park can end early, at start, and be followed by
// another before the request; the loop then serves the request and runs
// its idle spins before the park that counts).
func (ps *parkedServer) waitParked(t *testing.T, n int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c := ps.cycles.Load()
		if ps.parks.Load() > n {
			time.Sleep(100 * time.Millisecond)
			if ps.cycles.Load() == c {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the loop did not park and stay parked for 100 ms (parks %d, more than %d wanted)", ps.parks.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// ping sends PING on c and reads the reply within d.
func ping(c *ring.Conn, p proto.Protocol, d time.Duration) error {
	if err := c.Write(wiretest.Request(p, "PING")); err != nil {
		return err
	}
	c.SetDeadline(time.Now().Add(d))
	got, err := c.ReadAppend(nil)
	if err != nil {
		return err
	}
	return isPong(p, got)
}

func isPong(p proto.Protocol, got []byte) error {
	if p == proto.RESP {
		if r, _, err := resp.ReadReply(got); err != nil || string(r.Data) != "PONG" {
			return fmt.Errorf("PING answered %q (%v)", got, err)
		}
		return nil
	}
	var c sbe.Codec
	var r command.Reply
	if err := c.DecodeReply(got, &r); err != nil || string(r.Value) != "PONG" {
		return fmt.Errorf("PING answered %+v (%v)", r, err)
	}
	return nil
}

// TestDoorbellWakesParkedLoop: with the loop parked for 30 s, a ring
// request is answered well within 10 s because the client rings the
// doorbell; the same request from a client with the doorbell disabled is
// not answered until something else wakes the loop (the control that shows
// the doorbell is what made the difference).
func TestDoorbellWakesParkedLoop(t *testing.T) {
	for _, p := range []proto.Protocol{proto.RESP, proto.SBE} {
		t.Run(p.String(), func(t *testing.T) {
			ps := startParkedServer(t, p)
			ps.waitParked(t, 0)
			// The park count before the request: the loop, parked for
			// 30 s, parks again only after it has served it. Read after
			// the reply, it could already count that next park (the
			// loop parks again 20 to 100 ms after replying, here, and a
			// loaded machine can keep the test off a CPU that long),
			// and waiting for one more would wait out the 30 s park.
			parked := ps.parks.Load()
			if err := ping(ps.rung, p, 10*time.Second); err != nil {
				t.Fatalf("a rung request to a loop parked for %v: %v", longPark, err)
			}

			// Control: the loop parks again; a request without the
			// doorbell waits for the park to end.
			ps.waitParked(t, parked)
			if err := ping(ps.quiet, p, 300*time.Millisecond); !errors.Is(err, transport.ErrTimeout) {
				t.Fatalf("a request without the doorbell: %v, want %v (the loop is parked for %v)", err, transport.ErrTimeout, longPark)
			}
			// A rung request wakes the loop, which then answers both.
			if err := ping(ps.rung, p, 10*time.Second); err != nil {
				t.Fatal(err)
			}
			ps.quiet.SetDeadline(time.Now().Add(10 * time.Second))
			got, err := ps.quiet.ReadAppend(nil)
			if err == nil {
				err = isPong(p, got)
			}
			if err != nil {
				t.Fatalf("the waiting request after the wake-up: %v", err)
			}
		})
	}
}
