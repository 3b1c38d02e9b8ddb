package aeron

import (
	"encoding/binary"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/latency"
)

// benchChannel is the IPC channel the benchmarks use; override with
// AERON_BENCH_CHANNEL to compare term lengths.
func benchChannel() string {
	if c := os.Getenv("AERON_BENCH_CHANNEL"); c != "" {
		return c
	}
	return "aeron:ipc"
}

const pingWarmup = 10_000

// lockSpinner locks a spinning benchmark goroutine to its OS thread, like
// the Java samples' dedicated threads, unless AERON_BENCH_LOCK=0 (to
// compare: with every P spinning, the runtime preempts a spinner every
// 10 ms so timers and the conductor can run, and a locked one then hands
// its P over and waits to be woken).
func lockSpinner() func() {
	if os.Getenv("AERON_BENCH_LOCK") != "0" {
		runtime.LockOSThread()
		return runtime.UnlockOSThread
	}
	return func() {}
}

// BenchmarkIPCPingPong measures the round trip of a 32-byte message over
// Aeron IPC through the real Java media driver: ping offers, pong echoes
// on a second stream, ping waits for the echo. Both sides busy-spin, as
// Aeron's Ping/Pong samples do (see lockSpinner). It warms up with
// 10,000 round trips, then records every one of b.N in an HDR histogram
// and reports p50/p99/p99.9.
func BenchmarkIPCPingPong(b *testing.B) {
	d := startDriver(b)
	c := connectTest(b, d, Options{})
	ch := benchChannel()
	pingSub, err := c.AddSubscription(ch, 1002)
	if err != nil {
		b.Fatal(err)
	}
	pongSub, err := c.AddSubscription(ch, 1001)
	if err != nil {
		b.Fatal(err)
	}
	pingPub, err := c.AddExclusivePublication(ch, 1001)
	if err != nil {
		b.Fatal(err)
	}
	pongPub, err := c.AddExclusivePublication(ch, 1002)
	if err != nil {
		b.Fatal(err)
	}
	testkit.Eventually(b, 20*time.Second, "images", func() (bool, string) { return pingSub.ImageCount() == 1 && pongSub.ImageCount() == 1, "" })
	pongImg, pingImg := pongSub.Images()[0], pingSub.Images()[0]

	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // pong: echo every message back
		defer wg.Done()
		defer lockSpinner()()
		buf := make([]byte, 0, 64)
		for !stop.Load() {
			m, ok := pongImg.NextMessage(buf[:0])
			if !ok {
				continue
			}
			for pongPub.Offer(m) < 0 && !stop.Load() {
			}
		}
	}()
	defer lockSpinner()()

	msg := make([]byte, 32)
	buf := make([]byte, 0, 64)
	seq := uint64(0)
	roundTrip := func() {
		seq++
		binary.LittleEndian.PutUint64(msg, seq)
		for pingPub.Offer(msg) < 0 {
		}
		for {
			m, ok := pingImg.NextMessage(buf[:0])
			if ok {
				if binary.LittleEndian.Uint64(m) != seq || len(m) != 32 {
					b.Fatalf("echo %d, want %d", binary.LittleEndian.Uint64(m), seq)
				}
				return
			}
		}
	}
	for i := 0; i < pingWarmup; i++ {
		roundTrip()
	}
	rec := latency.New()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		roundTrip()
		rec.Record(int64(time.Since(start)))
	}
	b.StopTimer()
	stop.Store(true)
	wg.Wait()
	rec.Report(b)
	b.ReportMetric(0, "ns/op") // the histogram carries the latency
}

// BenchmarkIPCThroughput measures one exclusive publisher streaming b.N
// messages of 32 and 256 bytes to one subscriber polling 256 fragments at
// a time, over Aeron IPC through the real Java media driver. msgs/s is
// b.N over the time from the first offer to the last message received.
func BenchmarkIPCThroughput(b *testing.B) {
	for _, size := range []int{32, 256} {
		b.Run(sizeName(size), func(b *testing.B) { benchThroughput(b, size) })
	}
}

// threadCPU is the calling OS thread's user+system CPU time in ns.
func threadCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func sizeName(n int) string {
	return string(rune('0'+n/100%10)) + string(rune('0'+n/10%10)) + string(rune('0'+n%10)) + "B"
}

func benchThroughput(b *testing.B, size int) {
	d := startDriver(b)
	c := connectTest(b, d, Options{NoPrefault: os.Getenv("AERON_BENCH_NOPREFAULT") == "1"})
	ch := benchChannel()
	sub, err := c.AddSubscription(ch, 2001)
	if err != nil {
		b.Fatal(err)
	}
	pub, err := c.AddExclusivePublication(ch, 2001)
	if err != nil {
		b.Fatal(err)
	}
	testkit.Eventually(b, 20*time.Second, "image", func() (bool, string) { return sub.ImageCount() == 1, "" })
	img := sub.Images()[0]
	msg := make([]byte, size)
	var received atomic.Int64
	var done sync.WaitGroup
	done.Add(1)
	n := int64(b.N)
	go func() {
		defer done.Done()
		defer lockSpinner()()
		count := int64(0)
		handler := func(buf []byte, _ *Header) { count++ }
		for count < n {
			img.Poll(handler, 256)
		}
		received.Store(count)
	}()
	locked := os.Getenv("AERON_BENCH_LOCK") != "0"
	defer lockSpinner()()
	b.ReportAllocs()
	b.SetBytes(int64(size))
	b.ResetTimer()
	start := time.Now()
	cpu0 := threadCPU()
	for i := 0; i < b.N; i++ {
		binary.LittleEndian.PutUint64(msg, uint64(i))
		for pub.Offer(msg) < 0 {
		}
	}
	cpu := threadCPU() - cpu0
	done.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
	if locked {
		// The publisher thread's CPU per message, whatever share of the
		// machine the benchmark got; it includes offers retried while the
		// subscriber was descheduled (back-pressure), so it is an upper
		// bound on the offer path's cost.
		b.ReportMetric(float64(cpu)/float64(b.N), "pub-cpu-ns/msg")
	}
}

// BenchmarkOfferPollMemory is the client's own cost per message, without a
// driver or a second thread: offer one message and poll it back on plain
// memory (the driver's cleaning is played by the loop at each rotation).
func BenchmarkOfferPollMemory(b *testing.B) {
	for _, size := range []int{32, 256} {
		for _, kind := range []string{"concurrent", "exclusive"} {
			b.Run(kind+"/"+sizeName(size), func(b *testing.B) {
				l := newTestLog(16<<20, 1408, 0)
				values := testCounters(1 << 62)
				var offer func([]byte) int64
				if kind == "exclusive" {
					offer = newTestExclusive(l, values).Offer
				} else {
					offer = newTestPublication(l, values).Offer
				}
				img := newTestImage(l, values)
				msg := make([]byte, size)
				n := 0
				handler := func(buf []byte, _ *Header) { n += len(buf) }
				b.ReportAllocs()
				b.SetBytes(int64(size))
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.ResetTimer()
				cpu0 := threadCPU()
				for i := 0; i < b.N; i++ {
					for offer(msg) == AdminAction {
						driverClean(l)
					}
					for img.Poll(handler, 1) == 0 {
					}
				}
				// On a shared machine wall time includes time spent
				// descheduled; this thread's CPU time does not.
				b.ReportMetric(float64(threadCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// BenchmarkReadMemory is the cost of reading one 32-byte message with each
// of the image's readers, on plain memory with no driver or second thread
// (one exclusive offer per read): Poll with a handler, NextMessage (a
// whole message or nothing) and ReadMessage (fragments as they come). The
// thread's own CPU time per op, cpu-ns/op, is what to compare on a busy
// machine.
func BenchmarkReadMemory(b *testing.B) {
	for _, reader := range []string{"poll", "next-message", "read-message"} {
		b.Run(reader, func(b *testing.B) {
			l := newTestLog(16<<20, 1408, 0)
			values := testCounters(1 << 62)
			p := newTestExclusive(l, values)
			img := newTestImage(l, values)
			msg := make([]byte, 32)
			buf := make([]byte, 0, 64)
			n := 0
			handler := func(buf []byte, _ *Header) { n += len(buf) }
			var rs Reassembly
			read := map[string]func() bool{
				"poll":         func() bool { return img.Poll(handler, 1) > 0 },
				"next-message": func() bool { var ok bool; buf, ok = img.NextMessage(buf[:0]); return ok },
				"read-message": func() bool { var ok bool; buf, ok = img.ReadMessage(buf[:0], &rs); return ok },
			}[reader]
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ResetTimer()
			cpu0 := threadCPU()
			for i := 0; i < b.N; i++ {
				for p.Offer(msg) == AdminAction {
					driverClean(l)
				}
				for !read() {
				}
			}
			b.ReportMetric(float64(threadCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
