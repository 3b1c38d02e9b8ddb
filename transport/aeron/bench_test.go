package aeron_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ae "github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/javadriver"
	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/engine"
	"github.com/goblin-kv/goblin/idle"
	"github.com/goblin-kv/goblin/internal/testkit/latency"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
	"github.com/goblin-kv/goblin/internal/testkit/wiretest"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/server"
	"github.com/goblin-kv/goblin/store"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/aeron"
)

// The round-trip benchmarks: depth-one PING, SET (16-byte value) and GET
// through goblin over Aeron IPC and two-driver Aeron UDP, in RESP and SBE,
// beside a raw Aeron ping-pong (32-byte echo, no goblin) on the same
// driver(s) in the same run. RESP's PING (14 bytes, +PONG 7) and SBE's Ping
// and Pong (16 bytes each) fit one 64-byte frame, as the raw echo does. The client and the server loop both spin,
// each locked to an OS thread. Every case warms up with 10,000 round trips
// (GOBLIN_AERON_BENCH_WARMUP) and records b.N more; run 100,000 with
//
//	go test -run '^$' -bench RoundTrip -benchtime 100000x ./transport/aeron/
//
// and fewer in CI (-benchtime 2000x). transport-pong answers without the
// engine: the transport and the loop alone. Each case reports p50/p90/p99/p99.9/
// max/mean in ns; IPC PING adds p50-minus-raw-ns (target ≤ 150) and
// p99/raw-p99 (target ≤ 1.5 when spinning), UDP SET adds p99/ping-p99
// (target ≤ 2).
//
// Driver profiles: GOBLIN_AERON_BENCH_IPC_PROFILE (default frugal: IPC
// data never passes through the driver) and GOBLIN_AERON_BENCH_UDP_PROFILE
// (default spin-shared, continuous polling, on machines with 6 or more
// CPUs; frugal below that: two spinning drivers, a spinning client and a
// spinning loop on 2 cores wait for time slices, milliseconds per round
// trip). GOBLIN_AERON_BENCH_UDP_WAIT (spin, yield) sets how the UDP client
// and loop wait: spin with 6+ CPUs, else yield. Each case logs its choice.

// warmup is how many round trips each case makes before it measures.
func warmup() int {
	if n, err := strconv.Atoi(os.Getenv("GOBLIN_AERON_BENCH_WARMUP")); err == nil && n >= 0 {
		return n
	}
	return 10_000
}

func benchProfile(b *testing.B, env string, def javadriver.Profile) javadriver.Profile {
	if s := os.Getenv(env); s != "" {
		p, err := javadriver.ParseProfile(s)
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
	return def
}

// streams gives every case its own stream ids.
var streams atomic.Int32

func nextStreams() (int32, int32) {
	s := 5000 + 2*streams.Add(1)
	return s, s + 1
}

// ref holds figures measured earlier in the same run.
type ref struct{ rawP50, rawP99, pingP99 map[string]float64 }

func BenchmarkRoundTrip(b *testing.B) {
	needDriver(b)
	r := ref{rawP50: map[string]float64{}, rawP99: map[string]float64{}, pingP99: map[string]float64{}}
	b.Run("ipc", func(b *testing.B) {
		p := benchProfile(b, "GOBLIN_AERON_BENCH_IPC_PROFILE", javadriver.Frugal)
		b.Logf("IPC driver profile %s, client and loop spinning, GOMAXPROCS %d, %d CPUs", p, runtime.GOMAXPROCS(0), runtime.NumCPU())
		d := startDriver(b, javadriver.Options{Profile: p})
		b.Run("raw-pingpong", func(b *testing.B) { rawPingPong(b, &r, "ipc", d.Dir(), d.Dir(), "aeron:ipc", "aeron:ipc", true, 32) })
		b.Run("transport-pong", func(b *testing.B) {
			goblinRoundTrip(b, &r, aeron.Options{Media: "ipc", Dir: d.Dir(), Handler: wiretest.Pong{}}, "", proto.RESP, "PING", true)
		})
		for _, pr := range []proto.Protocol{proto.RESP, proto.SBE} {
			for _, op := range []string{"PING", "SET", "GET"} {
				b.Run(pr.String()+"/"+op, func(b *testing.B) {
					goblinRoundTrip(b, &r, aeron.Options{Media: "ipc", Dir: d.Dir()}, "", pr, op, true)
				})
			}
		}
	})
	b.Run("udp", func(b *testing.B) {
		def, wait := javadriver.SpinShared, "spin"
		if runtime.NumCPU() < 6 {
			def, wait = javadriver.Frugal, "yield"
		}
		p := benchProfile(b, "GOBLIN_AERON_BENCH_UDP_PROFILE", def)
		if w := os.Getenv("GOBLIN_AERON_BENCH_UDP_WAIT"); w != "" {
			wait = w
		}
		spin := wait == "spin"
		b.Logf("UDP drivers' profile %s (two drivers), client and loop wait=%s, GOMAXPROCS %d, %d CPUs", p, wait, runtime.GOMAXPROCS(0), runtime.NumCPU())
		sd := startDriver(b, javadriver.Options{Profile: p})
		cd := startDriver(b, javadriver.Options{Profile: p})
		b.Run("raw-pingpong", func(b *testing.B) {
			ping, pong := loopback(freeUDPPort(b)), loopback(freeUDPPort(b))
			rawPingPong(b, &r, "udp", cd.Dir(), sd.Dir(), "aeron:udp?endpoint="+ping, "aeron:udp?endpoint="+pong, spin, 32)
		})
		for _, pr := range []proto.Protocol{proto.RESP, proto.SBE} {
			for _, op := range []string{"PING", "SET", "GET"} {
				b.Run(pr.String()+"/"+op, func(b *testing.B) {
					o := aeron.Options{Media: "udp", Dir: sd.Dir(), Endpoint: loopback(freeUDPPort(b)), Control: loopback(freeUDPPort(b))}
					goblinRoundTrip(b, &r, o, cd.Dir(), pr, op, spin)
				})
			}
		}
	})
}

// rawPingPong: the pinger (on pingDir's driver) offers 32 bytes on
// pingCh; the ponger (on pongDir's driver) echoes each on pongCh.
func rawPingPong(b *testing.B, r *ref, media, pingDir, pongDir, pingCh, pongCh string, spin bool, size int) {
	pause := func() {
		if !spin {
			runtime.Gosched()
		}
	}
	pingC, err := ae.Connect(ae.Options{Dir: pingDir})
	if err != nil {
		b.Fatal(err)
	}
	defer pingC.Close()
	pongC, err := ae.Connect(ae.Options{Dir: pongDir})
	if err != nil {
		b.Fatal(err)
	}
	defer pongC.Close()
	s1, s2 := nextStreams()
	pongSub, err := pongC.AddSubscription(pingCh, s1)
	if err != nil {
		b.Fatal(err)
	}
	pingSub, err := pingC.AddSubscription(pongCh, s2)
	if err != nil {
		b.Fatal(err)
	}
	pingPub, err := pingC.AddExclusivePublication(pingCh, s1)
	if err != nil {
		b.Fatal(err)
	}
	pongPub, err := pongC.AddExclusivePublication(pongCh, s2)
	if err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for pongSub.ImageCount() == 0 || pingSub.ImageCount() == 0 || !pingPub.IsConnected() || !pongPub.IsConnected() {
		if time.Now().After(deadline) {
			b.Fatal("raw ping-pong streams did not connect")
		}
		time.Sleep(time.Millisecond)
	}
	pongImg, pingImg := pongSub.Images()[0], pingSub.Images()[0]
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		buf := make([]byte, 0, 64)
		for !stop.Load() {
			m, ok := pongImg.NextMessage(buf[:0])
			if !ok {
				pause()
				continue
			}
			for pongPub.Offer(m) < 0 && !stop.Load() {
				pause()
			}
		}
	}()
	defer func() { stop.Store(true); wg.Wait() }()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	msg := make([]byte, size)
	buf := make([]byte, 0, 64)
	round := func() {
		for pingPub.Offer(msg) < 0 {
			pause()
		}
		for {
			var ok bool
			if buf, ok = pingImg.NextMessage(buf[:0]); ok {
				return
			}
			pause()
		}
	}
	measure(b, round, func(s latency.Summary) {
		r.rawP50[media], r.rawP99[media] = float64(s.P50), float64(s.P99)
	})
}

// goblinRoundTrip runs a goblin server (store, engine, Aeron transport,
// spinning loop) on the server driver and a spinning Conn on clientDir's
// driver (the server's for IPC).
func goblinRoundTrip(b *testing.B, r *ref, o aeron.Options, clientDir string, pr proto.Protocol, op string, spin bool) {
	loopIdle, wait := server.IdleSpin, idle.Spin
	if !spin {
		loopIdle, wait = server.IdleYield, idle.Yield
	}
	st, err := store.New(store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	o.Proto, o.External = pr, true
	o.Stream, o.ReplyStream = nextStreams()
	if o.Handler == nil {
		o.Handler = server.NewEngineHandler(engine.NewEngine(st, engine.Options{}), new(engine.Stats), "aeron")
	}
	srv, err := aeron.Listen(o)
	if err != nil {
		b.Fatal(err)
	}
	loop, err := server.NewLoop(server.LoopConfig{Transports: []transport.Server{srv}, Idle: loopIdle, Tick: st.Tick})
	if err != nil {
		srv.Close()
		b.Fatal(err)
	}
	go loop.Run()
	defer func() { loop.Stop(); <-loop.Done() }()
	if clientDir == "" {
		clientDir = o.Dir
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := aeron.Dial(ctx, aeron.DialOptions{Media: o.Media, Endpoint: o.Endpoint, Control: o.Control, Proto: pr,
		Stream: o.Stream, ReplyStream: o.ReplyStream, Dir: clientDir, Wait: wait, Backoff: idle.Params{Spins: 1, Yields: 1}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Minute))
	buf := make([]byte, 0, 256)
	if err := c.Write(wiretest.Request(pr, "SET")); err != nil { // GET reads what SET wrote
		b.Fatal(err)
	}
	if _, err := c.ReadAppend(buf); err != nil {
		b.Fatal(err)
	}
	round := roundTripper(b, c, wiretest.Request(pr, op), &buf)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	measure(b, round, func(s latency.Summary) {
		switch {
		case op == "PING" && o.Media == "ipc" && r.rawP50["ipc"] > 0:
			raw := "ipc"
			b.ReportMetric(float64(s.P50)-r.rawP50[raw], "p50-minus-raw-ns")
			b.ReportMetric(float64(s.P99)/r.rawP99[raw], "p99/raw-p99")
		case op == "PING":
			r.pingP99[o.Media+pr.String()] = float64(s.P99)
		case op == "SET" && o.Media == "udp" && r.pingP99["udp"+pr.String()] > 0:
			b.ReportMetric(float64(s.P99)/r.pingP99["udp"+pr.String()], "p99/ping-p99")
		}
		if op == "PING" && o.Media == "udp" {
			r.pingP99["udp"+pr.String()] = float64(s.P99)
		}
	})
	wiretest.CheckReply(b, pr, op, buf)
}

// measure warms up, then times b.N round trips into an HDR histogram and
// reports its percentiles.
func measure(b *testing.B, round func(), report func(latency.Summary)) {
	for range warmup() {
		round()
	}
	rec := latency.New()
	b.ReportAllocs()
	b.ResetTimer()
	rec.Rounds(b.N, round)
	b.StopTimer()
	rec.Report(b)
	report(rec.Summary())
}

// BenchmarkLargeValue: SET then GET of one large value through the real
// goblin-server (started with --proto-max-bulk-len large enough) and the
// client library, over IPC and two-driver UDP in both protocols, with the
// default 4 MiB terms (the value goes in 512 KiB chunks both ways). The
// size is GOBLIN_AERON_VALUE bytes (default 16 MiB; 536870910, 512 MiB
// less the 2 bytes the store reserves, for the largest value it takes, with
// --proto-max-bulk-len 512mb):
//
//	GOBLIN_AERON_VALUE=536870910 go test -run '^$' -bench LargeValue -benchtime 2x ./transport/aeron/
//
// Each op is one SET and one GET, checked byte for byte; set-ms and get-ms
// are their mean times.
func BenchmarkLargeValue(b *testing.B) {
	needDriver(b)
	n := 16 << 20
	if v, err := strconv.Atoi(os.Getenv("GOBLIN_AERON_VALUE")); err == nil && v > 0 {
		n = v
	}
	bulk := strconv.Itoa(max(n, 16<<20))
	val := make([]byte, n)
	for i := range val {
		val[i] = byte(i*131 + i>>8)
	}
	for _, media := range []string{"ipc", "udp"} {
		b.Run(media, func(b *testing.B) {
			dir := shmDir(b)
			var srvT, clientDir string
			switch media {
			case "ipc":
				srvT = "aeron:ipc?dir=" + dir
			default:
				srvT = fmt.Sprintf("aeron:udp?endpoint=%s|control=%s|dir=%s", loopback(freeUDPPort(b)), loopback(freeUDPPort(b)), dir)
				clientDir = startDriver(b, javadriver.Options{}).Dir()
			}
			bin := testproc.Build(b, "./cmd/goblin-server")
			respT, sbeT := srvT+"|proto=resp", srvT+"|proto=sbe|stream=2001|reply-stream=2002"
			if media == "udp" {
				sbeT = fmt.Sprintf("aeron:udp?endpoint=%s|control=%s|dir=%s|proto=sbe|stream=2001|reply-stream=2002",
					loopback(freeUDPPort(b)), loopback(freeUDPPort(b)), dir)
			}
			p := testproc.Start(b, bin, "--metrics", "off", "--proto-max-bulk-len", bulk,
				"--listen", respT, "--listen", sbeT+"|driver=external")
			p.WaitLog(b, `msg=ready`, 120*time.Second)
			for _, tgt := range []string{respT, sbeT} {
				if clientDir != "" {
					tgt = strings.Replace(tgt, "|dir="+dir, "|dir="+clientDir, 1)
				}
				name := "resp"
				if strings.Contains(tgt, "proto=sbe") {
					name = "sbe"
				}
				b.Run(name, func(b *testing.B) {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
					defer cancel()
					c, err := client.Options{DialTimeout: time.Minute}.Dial(ctx, tgt)
					if err != nil {
						b.Fatal(err)
					}
					defer c.Close()
					var set, get time.Duration
					b.ResetTimer()
					for range b.N {
						t0 := time.Now()
						if err := c.Set(ctx, "large", val, client.SetOptions{}); err != nil {
							b.Fatal(err)
						}
						t1 := time.Now()
						got, err := c.Get(ctx, "large")
						set, get = set+t1.Sub(t0), get+time.Since(t1)
						if err != nil || !bytes.Equal(got, val) {
							b.Fatalf("GET of %d bytes: %d bytes, %v", n, len(got), err)
						}
					}
					b.ReportMetric(float64(set.Milliseconds())/float64(b.N), "set-ms")
					b.ReportMetric(float64(get.Milliseconds())/float64(b.N), "get-ms")
					b.ReportMetric(float64(n), "value-bytes")
				})
			}
		})
	}
}
