package ring

import (
	"strconv"
	"testing"
)

// BenchmarkOneThread runs the whole one-record round trip — client Write,
// server Poll (serve, echo, publish), client ReadAppend — on one
// goroutine, so it measures the code path's own cost without the
// cross-core cache transfers and scheduling noise of BenchmarkRoundTrip:
// what a change to the record format or the serve loop costs.
//
//	go test -run '^$' -bench OneThread -count 10 ./transport/ring/
func BenchmarkOneThread(b *testing.B) {
	for _, size := range []int{16, 1000} {
		b.Run(strconv.Itoa(size)+"B", func(b *testing.B) {
			srv, dir := listenTest(b, Options{Handler: &echo{}})
			l := startLoop(b, srv) // for the handshake
			c := dialTest(b, dir, DialOptions{})
			roundTrip(b, c, "warm")
			l.halt()
			msg := make([]byte, size)
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
				if buf, err = c.ReadAppend(buf[:0]); err != nil || len(buf) != size {
					b.Fatal(err)
				}
			}
		})
	}
}
