package ring_test

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/engine"
	"github.com/goblin-kv/goblin/idle"
	"github.com/goblin-kv/goblin/internal/shm"
	"github.com/goblin-kv/goblin/internal/testkit/latency"
	"github.com/goblin-kv/goblin/internal/testkit/wiretest"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/server"
	"github.com/goblin-kv/goblin/store"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/ring"
)

// The round-trip benchmarks: the raw floor (one cache line ping-ponged
// between two threads through shared memory, no protocol) and depth-one
// PING, SET (16-byte value) and GET over the ring for RESP and SBE through
// the real engine and server loop, both sides spinning. Run them together
// so the ratios compare like with like:
//
//	go test -run '^$' -bench RoundTrip -benchtime 200000x ./transport/ring/
//
// Each reports p50/p90/p99/p99.9/max/mean in ns per round trip and the
// involuntary context switches the process suffered meanwhile; PING adds
// its p50 as a multiple of the floor's (target ≤ 2), SET its p99.9 as a
// multiple of its p50 (target ≤ 3). Spinning client and spinning server
// loop each take one whole core: on a two-core machine that is all of it.

const warmup = 20_000

// floorP50 is the floor's p50 measured earlier in the same run, if any.
var floorP50 float64

func BenchmarkRoundTrip(b *testing.B) {
	b.Run("floor", benchFloor)
	b.Run("ring-pong", benchRingPong)
	for _, p := range []proto.Protocol{proto.RESP, proto.SBE} {
		for _, op := range []string{"PING", "SET", "GET"} {
			b.Run("ring-"+p.String()+"/"+op, func(b *testing.B) { benchRing(b, p, op) })
		}
		b.Run("inline-"+p.String()+"/SET", func(b *testing.B) { benchInline(b, p, "SET") })
	}
}

// benchInline runs the engine and store maintenance on this thread, no
// transport: the store's own contribution to the round trip and its tail
// (a store pause would show here as well as over the ring).
func benchInline(b *testing.B, p proto.Protocol, op string) {
	st, err := store.New(store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	e := engine.NewEngine(st, engine.Options{})
	s := engine.NewSession(p, nil)
	req := wiretest.Request(p, op)
	out := make([]byte, 0, 256)
	for range warmup {
		out, _ = e.ServeMessage(s, req, out[:0])
		st.Tick(server.DefaultTickBudget)
	}
	rec := latency.New()
	b.ReportAllocs()
	b.ResetTimer()
	cs := preemptions()
	rec.Rounds(b.N, func() {
		out, _ = e.ServeMessage(s, req, out[:0])
		st.Tick(server.DefaultTickBudget)
	})
	b.StopTimer()
	b.ReportMetric(float64(preemptions()-cs), "preemptions")
	wiretest.CheckReply(b, p, op, out)
	rec.Report(b)
	sum := rec.Summary()
	b.ReportMetric(float64(sum.P999)/float64(sum.P50), "p99.9/p50")
}

// benchFloor ping-pongs one cache line in a shared mapping between two
// goroutines locked to their own OS threads: the pinger stores i into the
// line's first word, the ponger spins until it sees i and stores i into the
// second word, the pinger spins until it sees it. That is two cache-line
// transfers per round trip, the least any shared-memory transport can cost.
func benchFloor(b *testing.B) {
	mem, err := shm.Create(filepath.Join(b.TempDir(), "floor"), 4096)
	if err != nil {
		b.Fatal(err)
	}
	defer shm.Unmap(mem)
	const ping, pong = 0, 8 // one cache line: the mapping is page-aligned
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for last := int64(0); ; {
			// ping: written by the pinger (release), read here (acquire).
			v := shm.LoadInt64Acquire(mem, ping)
			if v == last {
				continue
			}
			if v < 0 {
				return
			}
			last = v
			// pong: written here (release), read by the pinger (acquire).
			shm.StoreInt64Release(mem, pong, v)
		}
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	rec := latency.New()
	seq := int64(0)
	round := func() {
		seq++
		shm.StoreInt64Release(mem, ping, seq)
		for shm.LoadInt64Acquire(mem, pong) != seq {
		}
	}
	for range warmup {
		round()
	}
	b.ReportAllocs()
	b.ResetTimer()
	cs := preemptions()
	rec.Rounds(b.N, round)
	b.StopTimer()
	b.ReportMetric(float64(preemptions()-cs), "preemptions")
	shm.StoreInt64Release(mem, ping, -1)
	<-done
	rec.Report(b)
	floorP50 = float64(rec.Quantile(0.5))
}

// preemptions counts the times the kernel took the CPU from any of this
// process's threads (involuntary context switches). Each one during a
// measurement is a sample stretched by a scheduler time slice: when they
// are more than 0.1% of the samples, p99.9 measures the machine's load, not
// the ring.
func preemptions() int64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Nivcsw
}

// gcs is the number of garbage collections so far.
func gcs() uint32 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.NumGC
}

// benchRingPong is the transport's own cost: the ring and the server loop
// with a handler that does nothing but answer.
func benchRingPong(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "ring")
	rs, err := ring.Listen(ring.Options{Dir: dir, Handler: wiretest.Pong{}})
	if err != nil {
		b.Fatal(err)
	}
	loop, err := server.NewLoop(server.LoopConfig{Transports: []transport.Server{rs}, Idle: server.IdleSpin})
	if err != nil {
		rs.Close()
		b.Fatal(err)
	}
	measureRing(b, loop, dir, proto.RESP, "PING")
}

func benchRing(b *testing.B, p proto.Protocol, op string) {
	dir := filepath.Join(b.TempDir(), "ring")
	_, loop, err := newServer(dir, p, server.IdleSpin)
	if err != nil {
		b.Fatal(err)
	}
	measureRing(b, loop, dir, p, op)
}

func measureRing(b *testing.B, loop *server.Loop, dir string, p proto.Protocol, op string) {
	go loop.Run()
	defer func() { loop.Stop(); <-loop.Done() }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := ring.Dial(ctx, dir, ring.DialOptions{Proto: p, Wait: idle.Spin})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	// GET reads what SET wrote.
	set := wiretest.Request(p, "SET")
	if err := c.Write(set); err != nil {
		b.Fatal(err)
	}
	if _, err := c.ReadAppend(nil); err != nil {
		b.Fatal(err)
	}
	req := wiretest.Request(p, op)
	buf := make([]byte, 0, 256)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	round := func() {
		if err := c.Write(req); err != nil {
			b.Fatal(err)
		}
		if buf, err = c.ReadAppend(buf[:0]); err != nil {
			b.Fatal(err)
		}
	}
	for range warmup {
		round()
	}
	wiretest.CheckReply(b, p, op, buf)
	rec := latency.New()
	b.ReportAllocs()
	b.ResetTimer()
	cs, gc0 := preemptions(), gcs()
	rec.Rounds(b.N, round)
	b.StopTimer()
	b.ReportMetric(float64(preemptions()-cs), "preemptions")
	b.ReportMetric(float64(gcs()-gc0), "GCs")
	wiretest.CheckReply(b, p, op, buf)
	rec.Report(b)
	s := rec.Summary()
	switch {
	case op == "PING" && floorP50 > 0: // ring-pong too
		b.ReportMetric(float64(s.P50)/floorP50, "p50/floor-p50")
	case op == "SET":
		b.ReportMetric(float64(s.P999)/float64(s.P50), "p99.9/p50")
	}
}

// BenchmarkParkedWake is the round trip a client sees when the server
// loop has parked: the loop idles with backoff and its default parks
// (DefaultMaxPark, 1 ms); the client pauses 2 ms between requests, then
// waits (yielding) until the server has announced its next park and 100 µs
// more, so every request finds the loop parked, 0.9 ms from the park's
// end. With the doorbell the client wakes it (an
// eventfd write and an epoll wake-up); the no-doorbell cases are the same
// client with the doorbell disabled, which waits out the rest of the park.
// The client waits for the reply spinning (the default), or yielding in
// the -yield case: on a two-core machine a spinning client competes with
// the loop thread the doorbell just woke. Each iteration sleeps 2 ms, so
// keep b.N small:
//
//	go test -run '^$' -bench ParkedWake -benchtime 2000x ./transport/ring/
//
// ns/op includes the pause; the p50 and the other quantiles are of the
// round trip alone.
func BenchmarkParkedWake(b *testing.B) {
	for _, p := range []proto.Protocol{proto.RESP, proto.SBE} {
		b.Run(p.String()+"/doorbell", func(b *testing.B) { benchParked(b, p, true, idle.Spin) })
		b.Run(p.String()+"/no-doorbell", func(b *testing.B) { benchParked(b, p, false, idle.Spin) })
	}
	b.Run("resp/doorbell-yield", func(b *testing.B) { benchParked(b, proto.RESP, true, idle.Yield) })
}

const (
	parkedPause  = 2 * time.Millisecond
	parkedSettle = 100 * time.Microsecond
)

func benchParked(b *testing.B, p proto.Protocol, bell bool, wait idle.Strategy) {
	dir := filepath.Join(b.TempDir(), "ring")
	rs, loop, err := newServer(dir, p, server.IdleBackoff)
	if err != nil {
		b.Fatal(err)
	}
	go loop.Run()
	defer func() { loop.Stop(); <-loop.Done() }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := ring.Dial(ctx, dir, ring.DialOptions{Proto: p, Wait: wait})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if !bell {
		ring.DisableDoorbell(c)
	}
	req := wiretest.Request(p, "PING")
	buf := make([]byte, 0, 256)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	round := func() int64 {
		time.Sleep(parkedPause)
		// Wait for the park to be announced, then a little longer, so the
		// loop is inside epoll_wait rather than between its announcement
		// and its last look at the rings (a request then calls the park
		// off and measures nothing).
		for !ring.ServerParked(c) {
			runtime.Gosched()
		}
		for t := latency.Now(); latency.Now()-t < int64(parkedSettle); {
			runtime.Gosched()
		}
		t0 := latency.Now()
		if err := c.Write(req); err != nil {
			b.Fatal(err)
		}
		if buf, err = c.ReadAppend(buf[:0]); err != nil {
			b.Fatal(err)
		}
		return latency.Now() - t0
	}
	const warm = 20
	for range warm {
		round()
	}
	wiretest.CheckReply(b, p, "PING", buf)
	rec := latency.New()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		rec.Record(round())
	}
	b.StopTimer()
	wiretest.CheckReply(b, p, "PING", buf)
	// The server's counters belong to the loop goroutine: read them once
	// it has stopped.
	loop.Stop()
	<-loop.Done()
	var st ring.Stats
	rs.Stats(&st)
	b.ReportMetric(float64(st.Rings)/float64(b.N+warm), "rings/op")
	rec.Report(b)
}
