package aeron_test

import (
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit/wiretest"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/transport/aeron"
)

// BenchmarkOneThread runs whole Aeron IPC round trips — client Write,
// server Poll (read the request, the handler, offer the reply), client
// ReadAppend — on one goroutine, with goblin's Go media driver in the
// process: the code path's own cost, without cross-core transfers or
// scheduling: what callgrind counts. benchmarks/instructions.sh's 200,000
// iterations are too many here: under valgrind this goroutine starves the
// driver's conductor and the client gives the driver up after 10 s
// without a heartbeat. Count 10,000 and 20,000 instead and divide the
// difference by 10,000 (instructions.sh's method, smaller):
//
//	CGO_ENABLED=0 go test -c -o aeron.test ./transport/aeron
//	GOMAXPROCS=1 GOGC=off GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind \
//	    --callgrind-out-file=/dev/null ./aeron.test -test.run '^$' \
//	    -test.bench '^BenchmarkOneThread$/^transport-pong$' -test.benchtime 10000x
//
// transport-pong answers every request with a canned reply (no engine):
// the transport alone, client and server; SBE/PING adds the engine. The
// loop polls the server until its request count moves (serveOne), without
// manual.serve's two clock reads per round, which callgrind counted as
// some 250 of the transport's instructions.
// Both report allocations, which must stay 0 (TestNoAllocs, TestOneThreadAllocs).
func BenchmarkOneThread(b *testing.B) {
	for _, c := range []struct {
		name string
		o    aeron.Options
		p    proto.Protocol
	}{
		{"transport-pong", aeron.Options{Media: "ipc", Handler: wiretest.Pong{}}, proto.RESP},
		{"SBE/PING", aeron.Options{Media: "ipc", Proto: proto.SBE}, proto.SBE},
	} {
		b.Run(c.name, func(b *testing.B) {
			m := newManualWith(b, c.o)
			conn := m.dial(c.p)
			conn.SetDeadline(time.Now().Add(time.Hour))
			req := wiretest.Request(c.p, "PING")
			buf := make([]byte, 0, 256)
			served := m.stats().Requests
			round := func() {
				if err := conn.Write(req); err != nil {
					b.Fatal(err)
				}
				served++
				serveOne(b, m, served)
				var err error
				if buf, err = conn.ReadAppend(buf[:0]); err != nil {
					b.Fatal(err)
				}
			}
			for range 100 {
				round()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				round()
			}
		})
	}
}

// serveOne polls m's server until it has served want requests in all, or
// fails after a billion polls: manual.serve without the clock.
func serveOne(tb testing.TB, m *manual, want int64) {
	var st aeron.Stats
	for range 1_000_000_000 {
		m.srv.Poll(0)
		if m.srv.Stats(&st); st.Requests >= want {
			return
		}
	}
	tb.Fatalf("served %d requests after a billion polls, want %d", st.Requests, want)
}

// TestOneThreadAllocs fails loudly if an allocation returns to an Aeron
// IPC round trip through the transport alone (client and server, the Go
// media driver in process, a canned reply): TestNoAllocs covers the same
// with the engine, where the Java driver is installed.
func TestOneThreadAllocs(t *testing.T) {
	m := newManualWith(t, aeron.Options{Media: "ipc", Handler: wiretest.Pong{}})
	conn := m.dial(proto.RESP)
	conn.SetDeadline(time.Now().Add(time.Minute))
	req := wiretest.Request(proto.RESP, "PING")
	buf := make([]byte, 0, 256)
	round := func() {
		if err := conn.Write(req); err != nil {
			t.Fatal(err)
		}
		m.serve(1)
		var err error
		if buf, err = conn.ReadAppend(buf[:0]); err != nil {
			t.Fatal(err)
		}
	}
	for range 100 {
		round()
	}
	if a := testing.AllocsPerRun(1000, round); a != 0 {
		t.Fatalf("%v allocations per Aeron IPC round trip (client Write, server Poll, client ReadAppend), want 0", a)
	}
}
