package ring

import (
	"strconv"
	"testing"

	"github.com/goblin-kv/goblin/internal/testkit/wiretest"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/transport"
)

// BenchmarkOneThread runs the whole one-record round trip — client Write,
// server Poll (serve, echo, publish), client ReadAppend — on one
// goroutine, so it measures the code path's own cost without the
// cross-core cache transfers and scheduling noise of BenchmarkRoundTrip:
// what a change to the record format or the serve loop costs. 16B and
// 1000B echo the request (the test handler's own prefix checks included);
// pong answers a RESP PING with a canned +PONG (wiretest.Pong), the
// transport alone, as the Aeron transport's transport-pong does.
// BenchmarkOneThreadEngine (bench_test.go) adds the engine.
//
//	go test -run '^$' -bench OneThread -count 10 ./transport/ring/
//	benchmarks/instructions.sh ./transport/ring '^BenchmarkOneThread$/^pong$'
func BenchmarkOneThread(b *testing.B) {
	for _, size := range []int{16, 1000} {
		b.Run(strconv.Itoa(size)+"B", func(b *testing.B) {
			benchOneThread(b, &echo{}, make([]byte, size), size)
		})
	}
	b.Run("pong", func(b *testing.B) {
		benchOneThread(b, wiretest.Pong{}, wiretest.Request(proto.RESP, "PING"), len("+PONG\r\n"))
	})
}

func benchOneThread(b *testing.B, h transport.MessageHandler, msg []byte, replyLen int) {
	srv, dir := listenTest(b, Options{Handler: h})
	l := startLoop(b, srv) // for the handshake
	c := dialTest(b, dir, DialOptions{})
	roundTrip(b, c, "warm")
	l.halt()
	buf := make([]byte, 0, 2048)
	now := mono() // the same now: no housekeeping, only serving
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := c.Write(msg); err != nil {
			b.Fatal(err)
		}
		srv.Poll(now)
		var err error
		if buf, err = c.ReadAppend(buf[:0]); err != nil || len(buf) != replyLen {
			b.Fatal(err)
		}
	}
}
