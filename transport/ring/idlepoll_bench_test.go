package ring_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit/wiretest"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/transport/ring"
)

// BenchmarkIdlePoll is one Poll of a ring server whose one client sends
// nothing, what a spinning loop does between requests (a request that
// arrives mid-Poll waits out the rest): guarded is Poll, with its own
// fault guard (SetPanicOnFault and a deferred recover); unguarded is
// PollUnguarded, what the server's loop calls, holding the guard for its
// whole goroutine (server.FaultGuarded). For callgrind:
//
//	benchmarks/instructions.sh ./transport/ring '^BenchmarkIdlePoll$/^unguarded$'
func BenchmarkIdlePoll(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "ring")
	rs, err := ring.Listen(ring.Options{Dir: dir, Proto: proto.RESP, Handler: wiretest.Pong{}})
	if err != nil {
		b.Fatal(err)
	}
	defer rs.Close()
	done := make(chan error, 1)
	var c *ring.Conn
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var err error
		c, err = ring.Dial(ctx, dir, ring.DialOptions{Proto: proto.RESP})
		done <- err
	}()
	for polling := true; polling; {
		select {
		case err := <-done:
			if err != nil {
				b.Fatal(err)
			}
			polling = false
		default:
			rs.Poll(int64(time.Since(doorbellClock)))
			time.Sleep(100 * time.Microsecond)
		}
	}
	defer c.Close()
	// The housekeeping interval is not reached within a run: now stays.
	now := int64(time.Since(doorbellClock))
	for _, m := range []struct {
		name string
		poll func(int64) int
	}{{"guarded", rs.Poll}, {"unguarded", rs.PollUnguarded}} {
		b.Run(m.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if m.poll(now) != 0 {
					b.Fatal("work on an idle ring")
				}
			}
		})
	}
}
