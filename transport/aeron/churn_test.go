package aeron_test

import (
	"sync"
	"testing"

	"github.com/goblin-kv/goblin/internal/testkit/wiretest"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/server"
	"github.com/goblin-kv/goblin/transport/aeron"
)

// TestChurn: two listeners share one driver (the second with
// External); rounds of six connections dial at once, do a few round trips
// and close, so clients come and go while others connect. Every round trip
// must succeed. The two loops back off (goblin-server's default) rather
// than yield: two yielding loops kept both of a 2-core CI machine's cores
// busy for the test's whole run, beside the race run's other package.
func TestChurn(t *testing.T) {
	t.Parallel() // its own driver and listeners; it times nothing (each round trip has 30 s)
	needDriver(t)
	p := newInProcess(t, aeron.Options{Media: "ipc", Proto: proto.RESP}, server.IdleBackoff)
	p2 := newInProcess(t, aeron.Options{Media: "ipc", Proto: proto.SBE, Dir: p.o.Dir, External: true, Stream: 2001, ReplyStream: 2002}, server.IdleBackoff)
	for it := range 15 {
		var wg sync.WaitGroup
		for i := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pp := p
				pr := proto.RESP
				if i%2 == 1 {
					pp, pr = p2, proto.SBE
				}
				c, err := dialCtx(pp.dialOptions(pr))
				if err != nil {
					t.Error(it, i, err)
					return
				}
				defer c.Close()
				req := resp.AppendCommandString(nil, "PING")
				if pr == proto.SBE {
					req = wiretest.Request(pr, "PING")
				}
				for range 5 {
					if _, err := roundTrip(c, req); err != nil {
						t.Error(it, i, err)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
}
