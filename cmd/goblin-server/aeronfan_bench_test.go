package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/idle"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/latency"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// BenchmarkAeronReplicationHosts measures replication over Aeron beside
// the Redis-protocol (TCP) replication, in one run, with a primary and up
// to 8 replicas each in its own network namespace on one bridged LAN
// (plain veth ports: no impairment), as hosts:
//
//   - for each path (tcp: one TCP stream per replica; multicast: one
//     Aeron publication to a multicast group; mdc: one Aeron publication,
//     control-mode=dynamic) and for 1, 2, 4 and 8 replicas (replicas are
//     added, not restarted, between the counts): 4 depth-one SET clients
//     on the primary's Unix socket for BENCH_SECONDS (default 3) after a
//     1 s warm-up; the primary's user+system CPU per SET from
//     /proc/PID/stat (its media driver's thread included) and the SET
//     latency;
//   - the primary's CPU per SET at a fixed offered rate (AERON_BENCH_RATE
//     SETs a second, default 10 000: 50 pipelined every 5 ms on one
//     connection, for BENCH_SECONDS): where the closed-loop figure above
//     divides the loop's idle time by however many SETs the load let
//     through, this one divides the same idle time by the same count for
//     every path and replica count, so what differs is what each write
//     costs to replicate; and the same less the CPU the primary spent
//     idle for as long just before (its loop's and media driver's own
//     polling), which leaves what the writes cost;
//   - the replication lag: a SET on the primary until the first replica
//     (host 1) returns the value to a client on its shared-memory ring
//     (read in a tight loop), 300 probes;
//   - beside it, the one-way Aeron UDP latency between the primary's and
//     that replica's namespaces: two aeronmd drivers (the defaults the
//     servers' private drivers run with), a ping-pong of 64-byte messages,
//     half of each round trip;
//   - GET p50 on the replica's ring and on the primary's ring, alternated
//     in blocks of 2,000.
//
// AERON_BENCH_PATHS (default tcp,multicast,mdc) and AERON_BENCH_REPLICAS
// (default 1,2,4,8) narrow it. Run it with
//
//	go test -run '^$' -bench AeronReplicationHosts -benchtime 1x -timeout 30m ./cmd/goblin-server/
func BenchmarkAeronReplicationHosts(b *testing.B) {
	secs := 3
	if v := os.Getenv("BENCH_SECONDS"); v != "" {
		secs, _ = strconv.Atoi(v)
	}
	paths := strings.Split(envOr("AERON_BENCH_PATHS", "tcp,multicast,mdc"), ",")
	rate, err := strconv.Atoi(envOr("AERON_BENCH_RATE", "10000"))
	if err != nil || rate < 200 {
		b.Fatalf("AERON_BENCH_RATE: %q is not a rate of at least 200 SETs a second", os.Getenv("AERON_BENCH_RATE"))
	}
	var counts []int
	for _, f := range strings.Split(envOr("AERON_BENCH_REPLICAS", "1,2,4,8"), ",") {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			b.Fatalf("AERON_BENCH_REPLICAS: %q is not a replica count", f)
		}
		counts = append(counts, n)
	}
	slices.Sort(counts)
	maxN := counts[len(counts)-1]
	a := newAeronLAN(b, maxN, nil)
	ping := startAeronPingPong(b, a, 0, 1)
	var rows []string
	for range b.N {
		for _, path := range paths {
			if err := a.usePath(path); err != nil {
				b.Fatalf("AERON_BENCH_PATHS: %v", err)
			}
			a.replicas = nil
			pring := benchRing(b)
			if a.channel == nil {
				a.primary = a.start(b, 0, "--listen", pring)
			} else {
				a.startPrimary(b, "--listen", pring)
			}
			primary := dialBench(b, "uds://"+a.primary.sock)
			primaryRing := dialBench(b, pring)
			var firstRing *client.Client
			oneWay := ping.oneWay(b, 2000)
			for _, n := range counts {
				for len(a.replicas) < n {
					h := len(a.replicas) + 1
					rring := benchRing(b)
					if a.channel == nil {
						a.replicas = append(a.replicas, a.start(b, h, "--listen", rring, "--replicaof", strings.Replace(a.primary.tcp, ":", " ", 1)))
					} else {
						a.startReplica(b, h, "--listen", rring)
					}
					if h == 1 {
						firstRing = dialBench(b, rring)
					}
				}
				for _, r := range a.replicas {
					if a.channel != nil {
						aeronLive(b, r.c)
					}
				}
				want := infoInt(b, a.primary.c, "replication", "master_repl_offset")
				for i, r := range a.replicas {
					testkit.Eventually(b, 60*time.Second, fmt.Sprintf("replica %d to reach the primary's offset %d", i+1, want), func() (bool, string) {
						got := infoInt(b, r.c, "replication", "slave_repl_offset")
						return got >= want, fmt.Sprintf("at %d", got)
					})
				}
				name := fmt.Sprintf("%s/replicas=%d", path, n)
				b.Run(name, func(b *testing.B) {
					benchSetLoad(b, "unix", a.primary.sock, time.Second) // warm-up
					pid := infoFieldCtx(context.Background(), a.primary.c, "server", "process_id")
					cpu0 := cpuTicks(b, pid)
					ops, set := benchSetLoad(b, "unix", a.primary.sock, time.Duration(secs)*time.Second)
					cpu := float64(cpuTicks(b, pid)-cpu0) * 1e4 / float64(ops)
					cpuI0 := cpuTicks(b, pid)
					time.Sleep(time.Duration(secs) * time.Second) // idle: the loop's and driver's own cost
					cpuIdle := cpuTicks(b, pid) - cpuI0
					cpuP0 := cpuTicks(b, pid)
					paced := pacedSets(b, a.primary.sock, rate, time.Duration(secs)*time.Second)
					cpuP := cpuTicks(b, pid) - cpuP0
					cpuPaced := float64(cpuP) * 1e4 / float64(paced)
					cpuMarginal := float64(cpuP-cpuIdle) * 1e4 / float64(paced)
					b.ReportMetric(cpuPaced, "primary-cpu-µs/set-paced")
					b.ReportMetric(cpuMarginal, "primary-cpu-µs/set-over-idle")
					lag := ringLag(b, primary, firstRing, 300)
					getR, getP := ringGets(b, firstRing, primaryRing, 10, 2000)
					b.ReportMetric(float64(ops)/float64(secs), "sets/s")
					b.ReportMetric(cpu, "primary-cpu-µs/set")
					report(b, "set", set)
					report(b, "lag", lag)
					b.ReportMetric(float64(oneWay.Quantile(0.5))/1e3, "aeron-oneway-p50-µs")
					b.ReportMetric(float64(getR.Quantile(0.5)), "replica-ring-get-p50-ns")
					b.ReportMetric(float64(getP.Quantile(0.5)), "primary-ring-get-p50-ns")
					row := fmt.Sprintf("| %d | %s | %.0f | %.1f | %.1f | %.1f | %s | %s | %s | %s | %s | %s | %s | %s |", n, path,
						float64(ops)/float64(secs), cpu, cpuPaced, cpuMarginal, us(set.Quantile(0.5)), us(set.Quantile(0.99)),
						us(lag.Quantile(0.5)), us(lag.Quantile(0.99)), us(oneWay.Quantile(0.5)), us(oneWay.Quantile(0.99)),
						ns(getR.Quantile(0.5)), ns(getP.Quantile(0.5)))
					rows = append(rows, row)
					b.Log(row)
				})
			}
			primary.Close()
			primaryRing.Close()
			if firstRing != nil {
				firstRing.Close()
			}
			for _, r := range a.replicas {
				r.p.Stop(10 * time.Second)
			}
			a.primary.p.Stop(10 * time.Second)
		}
	}
	fmt.Printf("\n| replicas | path | SET/s | primary CPU µs/SET | at %d SET/s | over idle | SET p50 | SET p99 | lag p50 | lag p99 | Aeron one-way p50 | p99 | replica ring GET p50 | primary ring GET p50 |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n%s",
		rate,
		strings.Join(rows, "\n"))
	fmt.Println()
}

// usePath sets the replication channels of path: tcp (none: the
// Redis-protocol link), multicast (a fresh group) or mdc.
func (a *aeronLAN) usePath(path string) error {
	addr := func(h int) string { return a.lan.Addr[h].String() }
	a.status = fmt.Sprintf("aeron:udp?endpoint=%s:40458", addr(0))
	switch path {
	case "tcp":
		a.channel = nil
	case "multicast":
		group := fmt.Sprintf("239.255.%d.%d", 1+rand.IntN(250), 1+2*rand.IntN(120))
		a.channel = func(h int) string {
			return fmt.Sprintf("aeron:udp?endpoint=%s:40456|interface=%s", group, addr(h))
		}
	case "mdc":
		a.channel = func(h int) string {
			if h == 0 {
				return fmt.Sprintf("aeron:udp?control-mode=dynamic|control=%s:40457", addr(0))
			}
			return fmt.Sprintf("aeron:udp?endpoint=%s:40456|control=%s:40457|control-mode=dynamic", addr(h), addr(0))
		}
	default:
		return fmt.Errorf("unknown path %q (tcp, multicast, mdc)", path)
	}
	return nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func us(ns int64) string { return fmt.Sprintf("%.1f µs", float64(ns)/1e3) }
func ns(v int64) string  { return fmt.Sprintf("%d ns", v) }

// benchRing returns a ring listener target in a fresh directory under
// /dev/shm, removed at the end.
func benchRing(b *testing.B) string {
	dir, err := os.MkdirTemp("/dev/shm", "aeronfan-ring-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return "ring://" + filepath.Join(dir, "ring") + "?proto=sbe"
}

func dialBench(b *testing.B, target string) *client.Client {
	var c *client.Client
	testkit.Eventually(b, 30*time.Second, "a connection to "+target, func() (bool, string) {
		var err error
		c, err = client.Dial(context.Background(), target)
		return err == nil, fmt.Sprint(err)
	})
	return c
}

// benchSetLoad runs 4 depth-one SET clients for d and returns the SETs
// done and their latencies.
func benchSetLoad(b *testing.B, network, addr string, d time.Duration) (int64, *latency.Recorder) {
	return latency.SetLoad(b, network, addr, 4, d)
}

// pacedSets offers rate SETs a second to the server at sock for d: one
// connection, rate/200 SETs pipelined every 5 ms (a tick missed under load
// is made up on the next, so the count stays rate × d). It returns the
// SETs done.
func pacedSets(b *testing.B, sock string, rate int, d time.Duration) int64 {
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 1})
	defer c.Close()
	per := rate / 200
	start := time.Now()
	var done int64
	for i := 0; ; i++ {
		due := start.Add(time.Duration(i) * 5 * time.Millisecond)
		if due.Sub(start) >= d {
			break
		}
		time.Sleep(time.Until(due))
		pl := c.Pipeline()
		for j := range per {
			pl.Set(ctx, "paced:"+strconv.Itoa(j), "0123456789abcdef", 0)
		}
		if _, err := pl.Exec(ctx); err != nil {
			b.Fatalf("paced SETs: %v", err)
		}
		done += int64(per)
	}
	return done
}

// ringLag SETs a key on the primary n times and each time reads the
// replica's ring until it returns the new value.
func ringLag(b *testing.B, primary, replica *client.Client, n int) *latency.Recorder {
	rec := latency.New()
	p := newLagProbe(primary, replica)
	for range n {
		rec.Record(p.once(b))
		time.Sleep(time.Millisecond) // one probe at a time, as a client would write
	}
	return rec
}

// lagProbe times one write on the primary until the replica's ring
// returns it.
type lagProbe struct {
	primary, replica *client.Client
	// conn, when set, is a connection to the primary's Unix socket the
	// SET is written on without waiting for its reply, which is read once
	// the replica returned the value (newWriteLagProbe).
	conn net.Conn
	rd   *bufio.Reader
	cmd  []byte
	key  string
	i    int
	got  []byte
	// start and end of the last probe, on latency.Now's clock.
	start, end int64
	// yield: give the CPU up (sched_yield) between GETs that do not
	// return the value yet, as aeronPingPong's reader does between polls
	// when its yield is set: on two shared cores a reader that spins
	// keeps the threads that carry the write (the replica's media driver
	// and loop) waiting for the end of its time slice.
	yield bool
}

func newLagProbe(primary, replica *client.Client) *lagProbe {
	return &lagProbe{primary: primary, replica: replica, key: "lag:" + strconv.Itoa(rand.IntN(1<<30))}
}

// newWriteLagProbe is a lagProbe that times from the SET's write on the
// primary's Unix socket sock, not from a client call that waits for the
// reply: the probe starts reading the replica's ring at once, so the
// lag holds no wake-up of the probe's own (its goroutine parked in the
// netpoller until the primary's reply came) and no reply path, only the
// write's way to the primary and on to the replica.
func newWriteLagProbe(b *testing.B, sock string, replica *client.Client) *lagProbe {
	c, err := net.Dial("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return &lagProbe{conn: c, rd: bufio.NewReader(c), replica: replica, key: "lagw:" + strconv.Itoa(rand.IntN(1<<30))}
}

// once SETs the key to a new value and reads the replica's ring in a
// tight loop until it returns it; it returns the nanoseconds that took.
func (p *lagProbe) once(b *testing.B) int64 {
	ctx := context.Background()
	p.i++
	want := []byte(strconv.Itoa(p.i))
	var start int64
	if p.conn != nil {
		p.cmd = append(p.cmd[:0], "*3\r\n$3\r\nSET\r\n$"...)
		p.cmd = strconv.AppendInt(p.cmd, int64(len(p.key)), 10)
		p.cmd = append(append(append(p.cmd, "\r\n"...), p.key...), "\r\n$"...)
		p.cmd = strconv.AppendInt(p.cmd, int64(len(want)), 10)
		p.cmd = append(append(append(p.cmd, "\r\n"...), want...), "\r\n"...)
		start = latency.Now()
		if _, err := p.conn.Write(p.cmd); err != nil {
			b.Fatal(err)
		}
	} else {
		start = latency.Now()
		if err := p.primary.Set(ctx, p.key, want, client.SetOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for spins := 0; ; spins++ {
		var err error
		p.got, err = p.replica.GetAppend(ctx, p.got[:0], p.key)
		if err == nil && string(p.got) == string(want) {
			break
		}
		if err != nil && !errors.Is(err, client.ErrNil) {
			b.Fatalf("GET on the replica's ring: %v", err)
		}
		if p.yield {
			idle.ThreadYield()
		}
		if spins&1023 == 1023 && time.Now().After(deadline) {
			b.Fatalf("the replica's ring never returned %s=%s", p.key, want)
		}
	}
	end := latency.Now()
	p.start, p.end = start, end
	if p.conn != nil {
		if line, err := p.rd.ReadString('\n'); err != nil || line != "+OK\r\n" {
			b.Fatalf("the primary answered the SET %q, %v", line, err)
		}
	}
	return end - start
}

// ringGets measures GET of one present key on the replica's ring and on
// the primary's, alternating rounds blocks of n each.
func ringGets(b *testing.B, replica, primary *client.Client, rounds, n int) (r, p *latency.Recorder) {
	ctx := context.Background()
	key := "ringget"
	if err := primary.Set(ctx, key, []byte("0123456789abcdef"), client.SetOptions{}); err != nil {
		b.Fatal(err)
	}
	testkit.Eventually(b, 10*time.Second, "the replica to hold "+key, func() (bool, string) {
		v, err := replica.Get(ctx, key)
		return err == nil && string(v) == "0123456789abcdef", fmt.Sprint(string(v), err)
	})
	r, p = latency.New(), latency.New()
	var buf []byte
	for round := range rounds {
		for k, c := range []*client.Client{replica, primary} {
			rec := []*latency.Recorder{r, p}[k]
			for i := range n + 200 {
				start := latency.Now()
				var err error
				if buf, err = c.GetAppend(ctx, buf[:0], key); err != nil {
					b.Fatal(err)
				}
				if i >= 200 || round > 0 { // the first 200 of the first round warm up
					rec.Record(latency.Now() - start)
				}
			}
		}
	}
	return r, p
}

// aeronPingPong is two aeronmd drivers, one in each of two hosts'
// namespaces, and the clients of a ping-pong over UDP between them.
type aeronPingPong struct {
	ping, pong       *aeron.Publication
	pingSub, pongSub *aeron.Subscription
	pids             [2]int // the two aeronmd processes
	msg              [64]byte
	buf              []byte // timedOnce's receive buffer
	// yield: timedOnce's reader gives the CPU up (sched_yield) between
	// polls that find nothing, as lagProbe's does when its yield is set.
	yield bool
}

func startAeronPingPong(b *testing.B, a *aeronLAN, h0, h1 int) *aeronPingPong {
	bin := testproc.Build(b, "./aeron/cmd/aeronmd")
	var cl [2]*aeron.Client
	var pids [2]int
	for k, h := range []int{h0, h1} {
		dir, err := os.MkdirTemp("/dev/shm", "aeronfan-md-")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
		p, err := testproc.StartCmd(a.lan.Command(h, bin, "-Daeron.dir="+dir, "-Daeron.dir.delete.on.start=true"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { p.Stop(10 * time.Second) })
		pids[k] = p.PID
		c, err := aeron.Connect(aeron.Options{Dir: dir, DriverTimeout: 10 * time.Second})
		if err != nil {
			b.Fatalf("connecting to aeronmd on host %d: %v\n%s", h, err, p.Log())
		}
		b.Cleanup(func() { c.Close() })
		cl[k] = c
	}
	pp := &aeronPingPong{pids: pids}
	var err error
	toPong := fmt.Sprintf("aeron:udp?endpoint=%s:40470", a.lan.Addr[h1])
	toPing := fmt.Sprintf("aeron:udp?endpoint=%s:40471", a.lan.Addr[h0])
	if pp.ping, err = cl[0].AddPublication(toPong, 1001); err == nil {
		if pp.pingSub, err = cl[1].AddSubscription(toPong, 1001); err == nil {
			if pp.pong, err = cl[1].AddPublication(toPing, 1002); err == nil {
				pp.pongSub, err = cl[0].AddSubscription(toPing, 1002)
			}
		}
	}
	if err != nil {
		b.Fatal(err)
	}
	testkit.Eventually(b, 20*time.Second, "the ping-pong publications to connect", func() (bool, string) {
		return pp.ping.IsConnected() && pp.pong.IsConnected(), fmt.Sprint(pp.ping.IsConnected(), pp.pong.IsConnected())
	})
	return pp
}

// timedOnce sends one message from host h0's driver to host h1's and
// returns the nanoseconds from the Offer to its arrival at the subscriber,
// which polls in a tight loop: one process holds both clients, so one
// monotonic clock times both ends. Unlike half a round trip, it counts the
// sender's driver waking to a message offered while it parks (the pong of
// a round trip finds its driver awake, just woken by the ping's arrival).
func (pp *aeronPingPong) timedOnce(b *testing.B) int64 {
	start := latency.Now()
	for pp.ping.Offer(pp.msg[:]) < 0 {
		runtime.Gosched()
	}
	deadline := time.Now().Add(5 * time.Second)
	for spins := 0; ; spins++ {
		m, _, ok := pp.pingSub.NextMessage(pp.buf[:0])
		if ok {
			pp.buf = m
			return latency.Now() - start
		}
		if pp.yield {
			idle.ThreadYield()
		}
		if spins&1023 == 1023 && time.Now().After(deadline) {
			b.Fatal("the Aeron one-way message between the namespaces did not arrive in 5 s")
		}
	}
}

// oneWay runs n ping-pongs (after 200 to warm up) and returns half of
// each round trip. The echo runs on a goroutine of this process only
// while it measures.
func (pp *aeronPingPong) oneWay(b *testing.B, n int) *latency.Recorder {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var buf []byte
		for {
			select {
			case <-done:
				return
			default:
			}
			msg, _, ok := pp.pingSub.NextMessage(buf[:0])
			if !ok {
				runtime.Gosched()
				continue
			}
			buf = msg
			for pp.pong.Offer(msg) < 0 {
				runtime.Gosched()
			}
		}
	}()
	defer func() { close(done); wg.Wait() }()
	rec := latency.New()
	msg := make([]byte, 64)
	var buf []byte
	for i := range n + 200 {
		start := latency.Now()
		for pp.ping.Offer(msg) < 0 {
			runtime.Gosched()
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			m, _, ok := pp.pongSub.NextMessage(buf[:0])
			if ok {
				buf = m
				break
			}
			if time.Now().After(deadline) {
				b.Fatal("the Aeron ping-pong between the namespaces lost a message for 5 s")
			}
			runtime.Gosched()
		}
		if i >= 200 {
			rec.Record((latency.Now() - start) / 2)
		}
		time.Sleep(time.Millisecond) // as the lag probes: one at a time, drivers idle between
	}
	return rec
}
