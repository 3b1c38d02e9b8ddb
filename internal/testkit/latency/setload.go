package latency

import (
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// SetLoad runs clients depth-one RESP SET clients against network/addr for
// d (16-byte values over 10,000 keys a client) and returns the SETs done and
// their round-trip times merged. A dial, write or reply failure is reported
// with tb.Error and ends that client. The replication benchmarks use it as
// the steady write load a primary is measured under.
func SetLoad(tb testing.TB, network, addr string, clients int, d time.Duration) (int64, *Recorder) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		ops   int64
		total = New()
	)
	end := time.Now().Add(d)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial(network, addr)
			if err != nil {
				tb.Error(err)
				return
			}
			defer conn.Close()
			rec := New()
			buf := make([]byte, 5)
			var n int64
			for i := 0; time.Now().Before(end); i++ {
				key := fmt.Sprintf("key:%d:%07d", c, i%10000)
				req := fmt.Sprintf("*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$16\r\n%016d\r\n", len(key), key, i)
				start := Now()
				if _, err := io.WriteString(conn, req); err != nil {
					tb.Error(err)
					return
				}
				if _, err := io.ReadFull(conn, buf); err != nil || string(buf) != "+OK\r\n" {
					tb.Errorf("SET: %q %v", buf, err)
					return
				}
				rec.Record(Now() - start)
				n++
			}
			mu.Lock()
			total.Merge(rec)
			ops += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	return ops, total
}
