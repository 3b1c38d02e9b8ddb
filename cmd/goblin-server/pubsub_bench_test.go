package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/proto/resp"
)

// BenchmarkPubSubFanOut: one publisher pipelines PUBLISH of a 16-byte
// message (batches of 64) to a channel with 1 or 10 subscribers, each
// reading on its own goroutine, over Unix sockets; goblin-server and
// redis-server 7.0 in the same run. An op is one message published and
// delivered to every subscriber; deliveries/s is the subscribers' total.
//
//	go test -run '^$' -bench BenchmarkPubSubFanOut -benchtime 200000x ./cmd/goblin-server/
func BenchmarkPubSubFanOut(b *testing.B) {
	servers := []struct{ name, sock string }{{"goblin", startServerTB(b).sock}, {"redis", startRedisB(b)}}
	for _, subs := range []int{1, 10} {
		for _, srv := range servers {
			b.Run(fmt.Sprintf("subscribers=%d/%s", subs, srv.name), func(b *testing.B) {
				fanOut(b, srv.sock, subs)
			})
		}
	}
}

func fanOut(b *testing.B, sock string, subs int) {
	const batch = 64
	msg := "0123456789abcdef"
	one := []byte("*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$16\r\n" + msg + "\r\n")
	var ready, done sync.WaitGroup
	errs := make(chan error, subs)
	for range subs {
		c, err := net.Dial("unix", sock)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			r := bufio.NewReaderSize(c, 64<<10)
			c.Write(resp.AppendCommandString(nil, "SUBSCRIBE", "ch"))
			confirm := make([]byte, len("*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"))
			_, err := io.ReadFull(r, confirm)
			ready.Done()
			if err != nil {
				errs <- err
				return
			}
			c.SetReadDeadline(time.Now().Add(5 * time.Minute))
			buf := make([]byte, len(one))
			for i := 0; i < b.N; i++ {
				if _, err := io.ReadFull(r, buf); err != nil || !bytes.Equal(buf, one) {
					errs <- fmt.Errorf("message %d: %q %v", i, buf, err)
					return
				}
			}
		}()
	}
	ready.Wait()
	pub, err := net.Dial("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	defer pub.Close()
	var req []byte
	for range batch {
		req = resp.AppendCommandString(req, "PUBLISH", "ch", msg)
	}
	answers := make([]byte, 0, batch*8)
	pr := bufio.NewReaderSize(pub, 64<<10)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for sent := 0; sent < b.N; sent += batch {
		n := min(batch, b.N-sent)
		if _, err := pub.Write(req[:n*len(req)/batch]); err != nil {
			b.Fatal(err)
		}
		for range n {
			line, err := pr.ReadSlice('\n')
			if err != nil {
				b.Fatal(err)
			}
			answers = append(answers[:0], line...)
		}
	}
	done.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	if want := fmt.Sprintf(":%d\r\n", subs); string(answers) != want {
		b.Fatalf("PUBLISH answered %q, want %q", answers, want)
	}
	b.ReportMetric(float64(b.N*subs)/elapsed.Seconds(), "deliveries/s")
}
