package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// BenchmarkIdleCost measures what a server at rest costs and what its
// first request after a long idle spell pays, for goblin-server with
// --idle backoff (the loop's default before doze), with --idle doze (the
// default now) and for redis-server 7.0, the three side by side in one
// run: the CPU each process uses over IDLE_WINDOW (default 30 s) with no
// client (/proc/PID/stat), then IDLE_PROBES (default 20) rounds of one
// depth-one PING over TCP to each, on connections opened before, after
// IDLE_GAP (default 2 s) of silence (the order rotated every round), then
// 8 rounds of 5,000 back-to-back depth-one PINGs, alternated, the loop's
// latency when it is busy. benchmarks/idlecost/run.sh runs it.
func BenchmarkIdleCost(b *testing.B) {
	window, gap := envDuration(b, "IDLE_WINDOW", 30*time.Second), envDuration(b, "IDLE_GAP", 2*time.Second)
	probes := 20
	if v := os.Getenv("IDLE_PROBES"); v != "" {
		var err error
		if probes, err = strconv.Atoi(v); err != nil || probes < 1 {
			b.Fatalf("IDLE_PROBES=%q: want a positive count", v)
		}
	}
	goblin := testproc.Build(b, "./cmd/goblin-server")
	redisBin := testkit.Need(b, "redis-server", "the redis-server peer")
	type server struct {
		name string
		pid  int
		addr string
	}
	var servers []server
	for _, idle := range []string{"backoff", "doze"} {
		port := testproc.FreeTCPPorts(b, 1)[0]
		addr := "127.0.0.1:" + strconv.Itoa(port)
		p := testproc.Start(b, goblin, "--listen", "tcp://"+addr, "--metrics", "off", "--dir", b.TempDir(), "--idle", idle)
		servers = append(servers, server{"goblin --idle " + idle, p.PID, addr})
	}
	port := testproc.FreeTCPPorts(b, 1)[0]
	p := testproc.Start(b, redisBin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", b.TempDir())
	servers = append(servers, server{"redis-server", p.PID, "127.0.0.1:" + strconv.Itoa(port)})
	conns := make([]*pinger, len(servers))
	for i, s := range servers {
		testproc.WaitDial(b, "tcp", s.addr, 30*time.Second)
		conns[i] = dialPinger(b, s.addr)
	}
	for range b.N {
		time.Sleep(2 * time.Second) // past the start's work
		cpu0 := make([]time.Duration, len(servers))
		for i, s := range servers {
			cpu0[i] = processCPU(s.pid)
		}
		start := time.Now()
		time.Sleep(window)
		secs := time.Since(start).Seconds()
		fmt.Printf("at rest for %.0f s, no client sending (CPU from /proc/PID/stat, 10 ms ticks):\n", secs)
		for i, s := range servers {
			ms := float64(processCPU(s.pid)-cpu0[i]) / float64(time.Millisecond) / secs
			fmt.Printf("  %-22s %6.1f ms of CPU per second\n", s.name, ms)
			b.ReportMetric(ms, strings.ReplaceAll(s.name, " ", "")+"-cpu-ms/s")
		}
		first := make([][]time.Duration, len(servers))
		for r := range probes {
			time.Sleep(gap)
			for k := range servers {
				i := (r + k) % len(servers)
				first[i] = append(first[i], conns[i].ping(b))
			}
		}
		fmt.Printf("the first PING after %v idle, %d probes each (p50, p90, max):\n", gap, probes)
		for i, s := range servers {
			v := first[i]
			slices.Sort(v)
			fmt.Printf("  %-22s %7.1f %7.1f %7.1f µs\n", s.name, micros(v[len(v)/2]), micros(v[len(v)*9/10]), micros(v[len(v)-1]))
		}
		p50s, p99s := make([][]float64, len(servers)), make([][]float64, len(servers))
		for range 8 {
			for i := range servers {
				lat := make([]time.Duration, 5000)
				for j := range 200 {
					_ = j
					conns[i].ping(b)
				}
				for j := range lat {
					lat[j] = conns[i].ping(b)
				}
				slices.Sort(lat)
				p50s[i] = append(p50s[i], micros(lat[len(lat)/2]))
				p99s[i] = append(p99s[i], micros(lat[len(lat)*99/100]))
			}
		}
		fmt.Printf("back-to-back depth-one PINGs, 8 rounds × 5,000 alternated (median of the rounds; p99 ratio to backoff's, median of the rounds' ratios):\n")
		for i, s := range servers {
			var r []float64
			for k := range p99s[i] {
				r = append(r, p99s[i][k]/p99s[0][k])
			}
			fmt.Printf("  %-22s p50 %6.1f µs  p99 %7.1f µs  p99/backoff %.2f\n", s.name, medianOf(p50s[i]), medianOf(p99s[i]), medianOf(r))
		}
	}
}

type pinger struct {
	c net.Conn
	r *bufio.Reader
}

func dialPinger(tb testing.TB, addr string) *pinger {
	tb.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return &pinger{c, bufio.NewReader(c)}
}

// ping sends one PING and returns how long its +PONG took.
func (p *pinger) ping(tb testing.TB) time.Duration {
	t := time.Now()
	if _, err := p.c.Write([]byte("PING\r\n")); err != nil {
		tb.Fatal(err)
	}
	if l, err := p.r.ReadString('\n'); err != nil || l != "+PONG\r\n" {
		tb.Fatalf("PING to %s: %q %v", p.c.RemoteAddr(), l, err)
	}
	return time.Since(t)
}

func envDuration(tb testing.TB, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		tb.Fatalf("%s=%q: want a positive duration", name, v)
	}
	return d
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
