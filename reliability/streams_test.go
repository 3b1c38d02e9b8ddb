package reliability

// Hostile clients of the socket listeners (Unix and TCP): the attacks of
// issue 13 on the stream transports, each with the figure it measures.

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testproc"
)

// goblin is one goblin-server process with a RESP Unix socket and a TCP
// port.
type goblin struct {
	p    *testproc.Proc
	dir  string
	sock string // Unix socket path (RESP)
	tcp  string // host:port (RESP)
}

// startGoblin starts goblin-server on a private socket and port with extra
// flags and waits until it is ready.
func startGoblin(t *testing.T, extra ...string) *goblin {
	t.Helper()
	bin := testproc.Build(t, "./cmd/goblin-server")
	g := &goblin{dir: t.TempDir()}
	g.sock = filepath.Join(g.dir, "goblin.sock")
	args := append([]string{"--metrics", "off", "--listen", "uds://" + g.sock + ",tcp://127.0.0.1:0"}, extra...)
	g.p = testproc.Start(t, bin, args...)
	g.tcp = g.p.WaitLog(t, `msg=listening target="?tcp://([^?"]+)`, 60*time.Second)
	g.p.WaitLog(t, `msg=ready`, 60*time.Second)
	return g
}

// dialRESP connects to the server's Unix socket.
func (g *goblin) dial(t testing.TB) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("unix", g.sock, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// cpuTicks returns the process's user+system CPU time in clock ticks
// (1/100 s on Linux).
func cpuTicks(t testing.TB, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The fields after the command name (which is in parentheses and may
	// hold spaces): state is field 3, utime 14, stime 15.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

// latencies are round-trip times, sorted.
type latencies []time.Duration

func (l latencies) pct(p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	return l[min(len(l)-1, int(float64(len(l))*p))]
}

func (l latencies) String() string {
	return fmt.Sprintf("p50 %v p99 %v max %v (%d PINGs)", l.pct(0.5), l.pct(0.99), l.pct(1), len(l))
}

// pings sends PINGs on c one at a time for d and returns their round trips.
func pings(t testing.TB, c net.Conn, d time.Duration) latencies {
	t.Helper()
	r := bufio.NewReader(c)
	var out latencies
	for end := time.Now().Add(d); time.Now().Before(end); {
		start := time.Now()
		c.SetDeadline(start.Add(30 * time.Second))
		if _, err := c.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
			t.Fatalf("PING: %v", err)
		}
		line, err := r.ReadString('\n')
		if err != nil || line != "+PONG\r\n" {
			t.Fatalf("PING: %q %v", line, err)
		}
		out = append(out, time.Since(start))
		time.Sleep(time.Millisecond) // a client doing something else between requests
	}
	slices.Sort(out)
	return out
}

// bigRequest is the attack's request: a multibulk of count one-byte
// arguments.
func bigRequest(count int) []byte {
	b := []byte("*" + strconv.Itoa(count) + "\r\n")
	for i := 0; i < count; i++ {
		b = append(b, "$1\r\nx\r\n"...)
	}
	return b
}

// TestTrickledRequestDoesNotStallOthers reproduces issue 13 item 2: four
// clients each pre-send all but the last 1,000 bytes of a 1,048,575-argument
// request (7 MB) and then trickle the rest 7 bytes every 20 ms. Before the
// parser resumed, every trickle re-parsed the whole request: the loop ran
// at 100 % and another client's PING p50 went from 0.15 ms to 22 ms. The
// test measures another client's PING round trips before and during the
// attack and the server's CPU during it.
func TestTrickledRequestDoesNotStallOthers(t *testing.T) {
	g := startGoblin(t)
	pinger := g.dial(t)
	pings(t, pinger, 200*time.Millisecond) // warm up
	base := pings(t, pinger, time.Second)
	t.Logf("PING before the attack: %v", base)

	const attackers = 4
	req := bigRequest(1048575)
	head, tail := req[:len(req)-1000], req[len(req)-1000:]
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var sent sync.WaitGroup
	for i := 0; i < attackers; i++ {
		c := g.dial(t)
		wg.Add(1)
		sent.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Write(head); err != nil {
				t.Errorf("attacker: pre-send: %v", err)
				sent.Done()
				return
			}
			sent.Done()
			for rest := tail; len(rest) > 7; rest = rest[7:] {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
				if _, err := c.Write(rest[:7]); err != nil {
					t.Errorf("attacker: trickle: %v", err)
					return
				}
			}
		}()
	}
	sent.Wait()
	ticks := cpuTicks(t, g.p.PID)
	start := time.Now()
	during := pings(t, pinger, 2*time.Second)
	cpu := float64(cpuTicks(t, g.p.PID)-ticks) / 100 / time.Since(start).Seconds()
	close(stop)
	wg.Wait()
	t.Logf("PING during the attack (%d clients trickling a 7 MB request): %v; server CPU %.0f%% of a core", attackers, during, 100*cpu)
	if limit := max(2*time.Millisecond, 4*base.pct(0.5)); during.pct(0.5) > limit {
		t.Errorf("PING p50 %v during the attack, want at most %v (4x the p50 before it, or 2 ms)", during.pct(0.5), limit)
	}
	if cpu > 0.5 {
		t.Errorf("the server used %.0f%% of a core serving PINGs and trickles, want under 50%%", 100*cpu)
	}
	// The attackers' requests were parsed as they came and are answered
	// once complete.
	c := g.dial(t)
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(60 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "-ERR unknown command 'x'") {
		t.Fatalf("reply to the completed 1M-argument request: %q %v", line, err)
	}
}
