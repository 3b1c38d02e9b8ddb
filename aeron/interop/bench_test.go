package interop

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/javadriver"
	"github.com/goblin-kv/goblin/internal/testkit"
)

// The benchmarks put the Go client beside the Java client in the same run,
// on the same media driver:
//
//	go test -run '^$' -bench . -benchtime 1x ./aeron/interop/
//
// Each benchmark op is one whole harness run, so -benchtime 1x (as
// `make bench` passes) runs each side once:
//   - BenchmarkPingPongIPC: 32-byte messages, one in flight, warm-up then
//     measured round trips (GOBLIN_PING_WARMUP, default 10,000;
//     GOBLIN_PING_COUNT, default 100,000); p50/p99/p99.9 in ns, and ns/op is
//     the mean round trip.
//   - BenchmarkThroughputIPC: one publisher, one subscriber, 32 and 256
//     bytes, for GOBLIN_TPUT_MS (default 3000 ms after a 1000 ms warm-up);
//     msgs/s, and ns/op is the time per message.
//
// The driver profile comes from GOBLIN_AERON_PROFILE (default frugal, which
// suits 2 cores: IPC does not need the driver on the message path). Ping
// and pong (and publisher and subscriber) busy-spin on both sides, Go and
// Java alike, so each side takes two whole cores while it runs.

var benchDrv struct {
	once sync.Once
	d    *javadriver.Driver
	err  error
}

// benchDriver is the one driver every benchmark in this binary shares;
// TestMain stops it.
func benchDriver(b *testing.B) *javadriver.Driver {
	b.Helper()
	benchDrv.once.Do(func() {
		p := javadriver.Frugal
		if s := os.Getenv("GOBLIN_AERON_PROFILE"); s != "" {
			if p, benchDrv.err = javadriver.ParseProfile(s); benchDrv.err != nil {
				return
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		defer cancel()
		benchDrv.d, benchDrv.err = javadriver.Start(ctx, javadriver.Options{Profile: p})
	})
	if benchDrv.err != nil {
		b.Fatal(benchDrv.err)
	}
	return benchDrv.d
}

func stopBenchDriver() {
	if benchDrv.d != nil {
		benchDrv.d.Stop()
	}
}

func envInt(name string, dflt int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return dflt
}

// pingPong is a Go ping and pong over IPC on one client, the pong on its
// own goroutine locked to an OS thread.
type pingPong struct {
	pingPub *aeron.ExclusivePublication
	pongSub *aeron.Subscription
	inline  func() // echo on the pinging goroutine instead (tests), or nil
	buf     []byte
	onPong  aeron.FragmentHandler
	got     bool
	rtt     int64
	base    time.Time
	stop    atomic.Bool
	pongErr atomic.Value
	done    chan struct{}
	close   func() // stops the pong goroutine and closes the streams; idempotent
}

// With inline set, no pong goroutine runs: roundTrip echoes the ping itself
// (same calls, one goroutine), so tests do not depend on two spinning
// goroutines getting cores on a loaded machine.
func newPingPong(tb testing.TB, c *aeron.Client, size int, inline bool) *pingPong {
	pingPub, err := c.AddExclusivePublication("aeron:ipc", 3002)
	if err != nil {
		tb.Fatal(err)
	}
	pingSub, err := c.AddSubscription("aeron:ipc", 3002)
	if err != nil {
		tb.Fatal(err)
	}
	pongPub, err := c.AddExclusivePublication("aeron:ipc", 3003)
	if err != nil {
		tb.Fatal(err)
	}
	pongSub, err := c.AddSubscription("aeron:ipc", 3003)
	if err != nil {
		tb.Fatal(err)
	}
	testkit.Eventually(tb, ioTimeout, "ping and pong to connect", func() (bool, string) {
		return pingPub.IsConnected() && pongPub.IsConnected() && pingSub.IsConnected() && pongSub.IsConnected(), ""
	})
	pp := &pingPong{pingPub: pingPub, pongSub: pongSub, buf: make([]byte, size), base: time.Now(), done: make(chan struct{})}
	Fill(pp.buf, 0)
	pp.onPong = func(b []byte, _ *aeron.Header) {
		pp.rtt = int64(time.Since(pp.base)) - int64(binary.LittleEndian.Uint64(b))
		pp.got = true
	}
	if inline {
		echo := pp.echoer(pongPub)
		pp.inline = func() { pingSub.Poll(echo, 1) }
		close(pp.done)
	} else {
		go pp.pong(pingSub, pongPub)
	}
	pp.close = sync.OnceFunc(func() {
		pp.stop.Store(true)
		<-pp.done
		pingPub.Close()
		pingSub.Close()
		pongPub.Close()
		pongSub.Close()
	})
	tb.Cleanup(pp.close)
	return pp
}

// pong echoes every ping with TryClaim, spinning.
func (pp *pingPong) pong(sub *aeron.Subscription, pub *aeron.ExclusivePublication) {
	defer close(pp.done)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	echo := pp.echoer(pub)
	for !pp.stop.Load() {
		sub.Poll(echo, 16)
	}
}

// echoer returns the pong's fragment handler: copy the ping into a claim.
func (pp *pingPong) echoer(pub *aeron.ExclusivePublication) aeron.FragmentHandler {
	var claim aeron.BufferClaim
	return func(b []byte, _ *aeron.Header) {
		for {
			r := pub.TryClaim(len(b), &claim)
			if r > 0 {
				copy(claim.Buffer(), b)
				claim.Commit()
				return
			}
			if r == aeron.Closed || r == aeron.MaxPositionExceeded {
				pp.pongErr.Store(aeron.StatusString(r))
				pp.stop.Store(true)
				return
			}
		}
	}
}

// roundTrip sends one ping and spins until its pong; it returns the RTT in
// ns, or -1 if the ping could not be sent or the pong stopped.
func (pp *pingPong) roundTrip() int64 {
	binary.LittleEndian.PutUint64(pp.buf, uint64(time.Since(pp.base)))
	for {
		r := pp.pingPub.Offer(pp.buf)
		if r > 0 {
			break
		}
		if r == aeron.Closed || r == aeron.MaxPositionExceeded || pp.stop.Load() {
			return -1
		}
	}
	pp.got = false
	for !pp.got {
		if pp.inline != nil {
			pp.inline()
		}
		if pp.pongSub.Poll(pp.onPong, 1) == 0 && pp.stop.Load() {
			return -1
		}
	}
	return pp.rtt
}

func BenchmarkPingPongIPC(b *testing.B) {
	warmup := envInt("GOBLIN_PING_WARMUP", 10_000)
	count := envInt("GOBLIN_PING_COUNT", 100_000)
	const size = 32
	b.Run("go", func(b *testing.B) {
		d := benchDriver(b)
		c := connect(b, d, aeron.Options{})
		pp := newPingPong(b, c, size, false)
		samples := make([]int64, 0, count)
		var all []int64
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			_, samples = goPing(b, pp, warmup, count, samples)
			all = append(all, samples...)
		}
		b.StopTimer()
		r := rttStats(all)
		b.ReportMetric(r.mean, "ns/op")
		b.ReportMetric(r.p50, "p50-ns")
		b.ReportMetric(r.p99, "p99-ns")
		b.ReportMetric(r.p999, "p99.9-ns")
		b.ReportMetric(float64(count), "rtts/op")
	})
	b.Run("java", func(b *testing.B) {
		j := needJava(b)
		d := benchDriver(b)
		var p50, p99, p999, mean float64
		for range b.N {
			r := javaPing(b, j, d.Dir(), size, warmup, count)
			p50 += r.p50 / float64(b.N)
			p99 += r.p99 / float64(b.N)
			p999 += r.p999 / float64(b.N)
			mean += r.mean / float64(b.N)
		}
		// With b.N > 1 these are the means of each run's percentiles.
		b.ReportMetric(mean, "ns/op")
		b.ReportMetric(p50, "p50-ns")
		b.ReportMetric(p99, "p99-ns")
		b.ReportMetric(p999, "p99.9-ns")
		b.ReportMetric(float64(count), "rtts/op")
	})
}

type rttResult struct{ p50, p99, p999, mean float64 }

// javaPing runs the Java Pong and Ping on d and returns Ping's figures.
func javaPing(b *testing.B, j *Java, dir string, size, warmup, count int) rttResult {
	pong := startProcIn(b, j, dir, "Pong", "stream=3012", "pongStream=3013")
	defer pong.Stop(time.Minute)
	ping, err := j.Start(context.Background(), dir, "Ping", "stream=3012", "pongStream=3013",
		"size="+strconv.Itoa(size), "warmup="+strconv.Itoa(warmup), "count="+strconv.Itoa(count))
	if err != nil {
		b.Fatal(err)
	}
	defer ping.Kill()
	res, err := ping.Result(10 * time.Minute)
	if err != nil {
		b.Fatal(err)
	}
	if err := ping.Wait(); err != nil {
		b.Fatalf("Java Ping: %v\n%s", err, ping.Output())
	}
	var r rttResult
	for _, f := range []struct {
		k string
		v *float64
	}{{"p50", &r.p50}, {"p99", &r.p99}, {"p999", &r.p999}, {"mean", &r.mean}} {
		if *f.v, err = Float(res, f.k); err != nil {
			b.Fatal(err)
		}
	}
	return r
}

// goPing runs warm-up and count round trips on pp and returns the figures.
func goPing(b *testing.B, pp *pingPong, warmup, count int, samples []int64) (rttResult, []int64) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	samples = samples[:0]
	for i := -warmup; i < count; i++ {
		rtt := pp.roundTrip()
		if rtt < 0 {
			b.Fatalf("round trip %d failed (pong: %v)", i, pp.pongErr.Load())
		}
		if i >= 0 {
			samples = append(samples, rtt)
		}
	}
	return rttStats(samples), samples
}

// rttStats sorts samples and returns nearest-rank percentiles and the mean.
func rttStats(samples []int64) rttResult {
	slices.Sort(samples)
	pct := func(q float64) float64 {
		i := int(q*float64(len(samples))+0.999999) - 1
		i = max(0, min(len(samples)-1, i))
		return float64(samples[i])
	}
	var sum float64
	for _, s := range samples {
		sum += float64(s)
	}
	return rttResult{p50: pct(0.50), p99: pct(0.99), p999: pct(0.999), mean: sum / float64(len(samples))}
}

// javaThroughput runs the Java Throughput program on d and returns msgs/s.
func javaThroughput(b *testing.B, j *Java, dir string, size int, warmup, duration time.Duration) float64 {
	return javaThroughputPlaced(b, j, dir, size, warmup, duration, nil).rate
}

// tputRun is one run of the Java Throughput program: messages a second
// and the CPUs its publisher and subscriber threads got while counting.
type tputRun struct{ rate, cpus float64 }

// javaThroughputPlaced is javaThroughput with the program's threads placed
// by pl before it sends its first message (pl nil: where the scheduler
// puts them).
func javaThroughputPlaced(b testing.TB, j *Java, dir string, size int, warmup, duration time.Duration, pl *placement) tputRun {
	args := []string{"stream=" + strconv.Itoa(4100+size),
		"size=" + strconv.Itoa(size), "warmupMs=" + strconv.Itoa(int(warmup.Milliseconds())),
		"durationMs=" + strconv.Itoa(int(duration.Milliseconds()))}
	if pl != nil {
		args = append(args, "threads=true")
	}
	p, err := j.Start(context.Background(), dir, "Throughput", args...)
	if err != nil {
		b.Fatal(err)
	}
	if pl != nil {
		defer p.Kill()
		l, err := p.Line("THREADS", ioTimeout)
		if err != nil {
			b.Fatal(err)
		}
		pub, sub, err := threadIDs(l)
		if err != nil {
			b.Fatal(err)
		}
		if err := pl.placePeer(p.PID(), pub, sub); err != nil {
			b.Fatal(err)
		}
		if err := p.Send("go"); err != nil {
			b.Fatal(err)
		}
	}
	return throughputRun(b, p)
}

// threadIDs reads the publisher's and subscriber's thread ids from Java
// Throughput's "THREADS publisher=TID subscriber=TID" line.
func threadIDs(line string) (publisher, subscriber int, err error) {
	if !strings.HasPrefix(line, "THREADS ") {
		return 0, 0, fmt.Errorf("not a THREADS line: %q", line)
	}
	f := ParseFields(line)
	pub, err1 := Int(f, "publisher")
	sub, err2 := Int(f, "subscriber")
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, err
	}
	if pub <= 0 || sub <= 0 || pub == sub {
		return 0, 0, fmt.Errorf("implausible thread ids in %q", line)
	}
	return int(pub), int(sub), nil
}

// throughputRun waits for a Java Throughput program and returns its rate
// and its two threads' CPUs, failing on sequence breaks.
func throughputRun(b testing.TB, p *Proc) tputRun {
	b.Helper()
	defer p.Kill()
	res, err := p.Result(10 * time.Minute)
	if err != nil {
		b.Fatalf("%v\n%s", err, p.Output())
	}
	if err := p.Wait(); err != nil {
		b.Fatalf("Java Throughput: %v\n%s", err, p.Output())
	}
	if e, _ := Int(res, "errors"); e != 0 {
		b.Fatalf("Java Throughput saw %d sequence breaks", e)
	}
	v, err := Float(res, "msgs_per_sec")
	if err != nil {
		b.Fatal(err)
	}
	cpus, err := Float(res, "cpus")
	if err != nil {
		b.Fatal(err)
	}
	return tputRun{rate: v, cpus: cpus}
}

// goThroughput runs one Go publisher goroutine against one subscriber for
// warm-up then duration, and returns messages received per second.
func goThroughput(b *testing.B, c *aeron.Client, stream int32, size int, warmup, duration time.Duration) float64 {
	pub, err := c.AddExclusivePublication("aeron:ipc", stream)
	if err != nil {
		b.Fatal(err)
	}
	defer pub.Close()
	sub, err := c.AddSubscription("aeron:ipc", stream)
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Close()
	testkit.Eventually(b, ioTimeout, "the throughput stream to connect", func() (bool, string) { return pub.IsConnected() && sub.IsConnected(), "" })

	var stop atomic.Bool
	pubDone := make(chan struct{})
	go func() {
		defer close(pubDone)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		msg := make([]byte, size)
		Fill(msg, 0)
		var seq uint64
		for !stop.Load() {
			binary.LittleEndian.PutUint64(msg, seq)
			r := pub.Offer(msg)
			if r > 0 {
				seq++
			} else if r == aeron.Closed || r == aeron.MaxPositionExceeded {
				return
			}
		}
	}()

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var next uint64
	var bad int
	onMsg := func(m []byte, _ *aeron.Header) {
		if binary.LittleEndian.Uint64(m) != next || len(m) != size {
			bad++
			next = binary.LittleEndian.Uint64(m)
		}
		next++
	}
	end := time.Now().Add(warmup)
	for time.Now().Before(end) {
		sub.Poll(onMsg, 256)
	}
	start, startCount := time.Now(), next
	end = start.Add(duration)
	var now time.Time
	for now = time.Now(); now.Before(end); now = time.Now() {
		for k := 0; k < 64; k++ { // read the clock less often than we poll
			sub.Poll(onMsg, 256)
		}
	}
	n := next - startCount
	stop.Store(true)
	<-pubDone
	if bad > 0 {
		b.Fatalf("%d sequence breaks in the throughput stream", bad)
	}
	return float64(n) / now.Sub(start).Seconds()
}

func BenchmarkThroughputIPC(b *testing.B) {
	warmup := time.Second
	duration := time.Duration(envInt("GOBLIN_TPUT_MS", 3000)) * time.Millisecond
	for _, size := range []int{32, 256} {
		b.Run("go/"+strconv.Itoa(size), func(b *testing.B) {
			d := benchDriver(b)
			c := connect(b, d, aeron.Options{})
			var rate float64
			b.ReportAllocs()
			for range b.N {
				rate += goThroughput(b, c, int32(4000+size), size, warmup, duration) / float64(b.N)
			}
			b.ReportMetric(rate, "msgs/s")
			b.ReportMetric(1e9/rate, "ns/op")
		})
		b.Run("java/"+strconv.Itoa(size), func(b *testing.B) {
			j := needJava(b)
			d := benchDriver(b)
			var rate float64
			for range b.N {
				rate += javaThroughput(b, j, d.Dir(), size, warmup, duration) / float64(b.N)
			}
			b.ReportMetric(rate, "msgs/s")
			b.ReportMetric(1e9/rate, "ns/op")
		})
	}
}

// TestPingPongDoesNotAllocate proves the Go round trip the benchmark times
// (offer, spin-poll, handler, pong's TryClaim) allocates nothing.
func TestPingPongDoesNotAllocate(t *testing.T) {
	needJava(t) // for the driver's jar
	d := startDriver(t, javadriver.Options{})
	c := connect(t, d, aeron.Options{})
	pp := newPingPong(t, c, 32, true)
	for range 100 { // warm up: first-touch of the log pages
		if pp.roundTrip() < 0 {
			t.Fatal("round trip failed")
		}
	}
	allocs := testing.AllocsPerRun(1000, func() {
		if pp.roundTrip() < 0 {
			t.Fatal("round trip failed")
		}
	})
	if allocs != 0 {
		t.Fatalf("a round trip allocates %.1f times", allocs)
	}
}

// BenchmarkGoVsJava alternates Go and Java rounds (GOBLIN_ROUNDS, default 3)
// of the ping-pong and throughput harnesses on the shared driver, so both
// sides see the same machine load, and reports each side's median and the
// ratios the Go client is held to: p50-go/java (target ≤ 1.1) and
// tput32-go/java, tput256-go/java (target ≥ 1.0), plus the same ratios over
// each side's best round. On a machine shared with other work these are the
// figures to trust over the separate benchmarks.
//
//	go test -run '^$' -bench GoVsJava -benchtime 1x ./aeron/interop/
func BenchmarkGoVsJava(b *testing.B) {
	j := needJava(b)
	d := benchDriver(b)
	rounds := envInt("GOBLIN_ROUNDS", 3)
	warmup := envInt("GOBLIN_PING_WARMUP", 10_000)
	count := envInt("GOBLIN_PING_COUNT", 100_000)
	tputWarm := time.Second
	tputDur := time.Duration(envInt("GOBLIN_TPUT_MS", 3000)) * time.Millisecond
	c := connect(b, d, aeron.Options{})
	var goP50, javaP50, goP99, javaP99 []float64
	goT, javaT := map[int][]float64{}, map[int][]float64{}
	samples := make([]int64, 0, count)
	for range b.N {
		for range rounds {
			pp := newPingPong(b, c, 32, false)
			var gr rttResult
			gr, samples = goPing(b, pp, warmup, count, samples)
			pp.close() // the pong goroutine must not spin during the Java round
			jr := javaPing(b, j, d.Dir(), 32, warmup, count)
			goP50, goP99 = append(goP50, gr.p50), append(goP99, gr.p99)
			javaP50, javaP99 = append(javaP50, jr.p50), append(javaP99, jr.p99)
			for _, size := range []int{32, 256} {
				goT[size] = append(goT[size], goThroughput(b, c, int32(4200+size), size, tputWarm, tputDur))
				javaT[size] = append(javaT[size], javaThroughput(b, j, d.Dir(), size, tputWarm, tputDur))
			}
		}
	}
	b.ReportMetric(median(goP50), "go-p50-ns")
	b.ReportMetric(median(javaP50), "java-p50-ns")
	b.ReportMetric(median(goP50)/median(javaP50), "p50-go/java")
	b.ReportMetric(median(goP99), "go-p99-ns")
	b.ReportMetric(median(javaP99), "java-p99-ns")
	for _, size := range []int{32, 256} {
		n := strconv.Itoa(size)
		b.ReportMetric(median(goT[size]), "go-tput"+n+"-msgs/s")
		b.ReportMetric(median(javaT[size]), "java-tput"+n+"-msgs/s")
		b.ReportMetric(median(goT[size])/median(javaT[size]), "tput"+n+"-go/java")
		// Best rounds: what each side does when the machine lets it.
		b.ReportMetric(slices.Max(goT[size])/slices.Max(javaT[size]), "best-tput"+n+"-go/java")
	}
	b.ReportMetric(slices.Min(goP50)/slices.Min(javaP50), "best-p50-go/java")
	b.Logf("rounds=%d p50 go %v java %v; tput32 go %v java %v; tput256 go %v java %v",
		rounds, goP50, javaP50, goT[32], javaT[32], goT[256], javaT[256])
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
