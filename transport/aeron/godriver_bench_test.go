package aeron_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/idle"
	"github.com/goblin-kv/goblin/internal/testkit/latency"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
	"github.com/goblin-kv/goblin/internal/testkit/wiretest"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/transport/aeron"
)

// BenchmarkPingInProcessDriver: goblin IPC PING (RESP) against a real
// goblin-server process (--idle spin) whose listener runs the Go media
// driver in-process, and against one that supervises the Java driver
// (driver=java, frugal profile), alternating GOBLIN_DRIVER_ROUNDS times
// (default 3) in the same run; the client here spins. Reports each side's
// p50/p99 (medians over rounds), the go/java ratios, and how many of
// goblin-server's threads spun (over half a core each) while measured:
//
//	go test -run '^$' -bench PingInProcessDriver -benchtime 100000x ./transport/aeron/
func BenchmarkPingInProcessDriver(b *testing.B) {
	needDriver(b)
	if b.N == 1 {
		return // the framework's probe run; the figures come from -benchtime Nx
	}
	bin := testproc.Build(b, "./cmd/goblin-server")
	rounds := 3
	if n, err := strconv.Atoi(os.Getenv("GOBLIN_DRIVER_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	type side struct {
		name, extra   string
		p50, p99, spn []float64
	}
	sides := []*side{{name: "java", extra: "|driver=java"}, {name: "go"}}
	for range rounds {
		for _, s := range sides {
			dir := shmDir(b)
			srv := testproc.Start(b, bin, "--metrics", "off", "--idle", "spin",
				"--listen", "aeron:ipc?proto=resp|dir="+dir+s.extra)
			srv.WaitLog(b, `msg=ready`, 120*time.Second)
			p50, p99, spinning := pingServer(b, dir, srv.PID)
			s.p50, s.p99, s.spn = append(s.p50, p50), append(s.p99, p99), append(s.spn, float64(spinning))
			srv.Stop(30 * time.Second)
		}
	}
	j, g := sides[0], sides[1]
	b.ReportMetric(median(j.p50), "java-p50-ns")
	b.ReportMetric(median(g.p50), "go-p50-ns")
	b.ReportMetric(median(g.p50)/median(j.p50), "p50-go/java")
	b.ReportMetric(median(g.p99)/median(j.p99), "p99-go/java")
	b.ReportMetric(median(g.spn), "go-server-spinning-threads")
	b.Logf("goblin IPC RESP PING, %d rounds: Java driver p50 %v p99 %v, server spinning threads %v; in-process Go driver p50 %v p99 %v, server spinning threads %v",
		rounds, j.p50, j.p99, j.spn, g.p50, g.p99, g.spn)
}

// pingServer times b.N PINGs (after the warm-up) against the server in
// dir and counts the server's threads that used over half a core meanwhile
// (warm-up included).
func pingServer(b *testing.B, dir string, pid int) (p50, p99 float64, spinning int) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := aeron.Dial(ctx, aeron.DialOptions{Media: "ipc", Proto: proto.RESP, Dir: dir, Wait: idle.Spin, Backoff: idle.Params{Spins: 1, Yields: 1}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Minute))
	buf := make([]byte, 0, 64)
	round := roundTripper(b, c, wiretest.Request(proto.RESP, "PING"), &buf)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before, start := threadTicks(pid), time.Now()
	measure(b, round, func(s latency.Summary) { p50, p99 = float64(s.P50), float64(s.P99) })
	el := time.Since(start).Seconds()
	after := threadTicks(pid)
	for tid, t := range after {
		if (t-before[tid])/100/el > 0.5 {
			spinning++
		}
	}
	wiretest.CheckReply(b, proto.RESP, "PING", buf)
	return p50, p99, spinning
}

// threadTicks reads utime+stime (clock ticks, 100 a second) of each of
// pid's threads.
func threadTicks(pid int) map[string]float64 {
	m := map[string]float64{}
	files, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/stat")
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s := string(raw)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		u, _ := strconv.ParseFloat(fields[11], 64)
		st, _ := strconv.ParseFloat(fields[12], 64)
		m[filepath.Base(filepath.Dir(f))] = u + st
	}
	return m
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}

// roundTripper returns one depth-one round trip on c: send req, read the
// reply into *reply (reusing its storage).
func roundTripper(b *testing.B, c *aeron.Conn, req []byte, reply *[]byte) func() {
	return func() {
		if err := c.Write(req); err != nil {
			b.Fatal(err)
		}
		var err error
		if *reply, err = c.ReadAppend((*reply)[:0]); err != nil {
			b.Fatal(err)
		}
	}
}
