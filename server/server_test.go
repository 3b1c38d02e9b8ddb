package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/idle"
	"github.com/goblin-kv/goblin/internal/testkit/wiretest"
	"github.com/goblin-kv/goblin/transport"
)

func TestOptionsZeroValueWorks(t *testing.T) {
	var o Options
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(o.Listen) != fmt.Sprint(DefaultListen()) || o.Idle != IdleDoze || o.SocketMode != 0o660 {
		t.Fatalf("defaults: %+v", o)
	}
	if def := transport.DefaultTarget(); !strings.HasPrefix(o.Listen[0], "uds://"+def.Path) {
		t.Fatalf("default listen %q does not start with the default socket %s", o.Listen[0], def.Path)
	}
}

func TestOptionsValidate(t *testing.T) {
	for name, o := range map[string]Options{
		"idle":      {Idle: "nap"},
		"target":    {Listen: []string{"ftp://x"}},
		"scheme":    {Listen: []string{"ring:///dev/shm/x"}},
		"cpu":       {CPUs: []int{-1}},
		"maxmemory": {MaxMemory: -1},
		"mode":      {SocketMode: 0o1777},
		"park":      {Backoff: idle.Params{MinPark: time.Second, MaxPark: time.Millisecond}},
	} {
		t.Run(name, func(t *testing.T) {
			if name == "scheme" {
				// A valid scheme with no transport in the build: this
				// build has them all, so take the ring out for the test.
				unregister(t, transport.Ring)
			}
			o.EnsureDefaults()
			if err := o.Validate(); !errors.Is(err, ErrOptions) {
				t.Fatalf("Validate = %v, want ErrOptions", err)
			}
			if _, err := New(o); !errors.Is(err, ErrOptions) {
				t.Fatalf("New = %v, want ErrOptions", err)
			}
		})
	}
}

func newTestServer(t testing.TB, extra ...string) (*Server, string) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "g.sock")
	s, err := New(Options{Listen: append([]string{"uds://" + sock, "tcp://127.0.0.1:0"}, extra...)})
	if err != nil {
		t.Fatal(err)
	}
	return s, sock
}

func expectReply(t *testing.T, c net.Conn, r *bufio.Reader, cmd, want string) {
	t.Helper()
	fmt.Fprintf(c, "%s\r\n", cmd)
	got := make([]byte, len(want))
	if _, err := io.ReadFull(r, got); err != nil || string(got) != want {
		t.Fatalf("%s: %q, %v; want %q", cmd, got, err, want)
	}
}

func TestServerServesAndShutsDown(t *testing.T) {
	s, sock := newTestServer(t)
	if len(s.Targets()) != 2 || s.Targets()[1].Address == "127.0.0.1:0" {
		t.Fatalf("targets %v: want the real tcp port", s.Targets())
	}
	errc := make(chan error, 1)
	go func() { errc <- s.Run() }()
	for _, tg := range s.Targets() {
		network, addr := "unix", tg.Path
		if tg.Scheme == transport.TCP {
			network, addr = "tcp", tg.Address
		}
		c, err := net.Dial(network, addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(30 * time.Second))
		r := bufio.NewReader(c)
		expectReply(t, c, r, "PING", "+PONG\r\n")
		expectReply(t, c, r, "SET "+network+" v", "+OK\r\n")
		expectReply(t, c, r, "GET "+network, "$1\r\nv\r\n")
		expectReply(t, c, r, "INFO clients", "$")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatalf("socket file after shutdown: %v", err)
	}
	// The final publish happened: the scrape shows both SETs.
	rec := httptest.NewRecorder()
	s.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{
		`goblin_requests_total{command="set",protocol="resp",transport="uds"} 1`,
		`goblin_requests_total{command="set",protocol="resp",transport="tcp"} 1`,
		`goblin_keys 2`,
		`goblin_connected_clients{protocol="resp",transport="uds"} 0`,
	} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// TestShutdownAnswersWhatWasSent pipelines 1,000 PINGs, shuts the server
// down as soon as the write returns, and gets all 1,000 answers before EOF.
func TestShutdownAnswersWhatWasSent(t *testing.T) {
	s, sock := newTestServer(t)
	errc := make(chan error, 1)
	go func() { errc <- s.Run() }()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(c)
	expectReply(t, c, r, "PING", "+PONG\r\n") // accepted
	if _, err := c.Write([]byte(strings.Repeat("PING\r\n", 1000))); err != nil {
		t.Fatal(err)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Repeat("+PONG\r\n", 1000); string(rest) != want {
		t.Fatalf("got %d bytes of answers, want %d", len(rest), len(want))
	}
}

func TestShutdownWithoutRun(t *testing.T) {
	s, sock := newTestServer(t)
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatalf("socket file left: %v", err)
	}
	if err := s.Run(); !errors.Is(err, ErrRunning) {
		t.Fatalf("Run after Shutdown: %v", err)
	}
}

// TestTwoListenersOfOneKind listens on two Unix sockets speaking RESP:
// their metrics share one series set, summed.
func TestTwoListenersOfOneKind(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.sock"), filepath.Join(dir, "b.sock")
	s, err := New(Options{Listen: []string{"uds://" + a, "uds://" + b}})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- s.Run() }()
	for _, sock := range []string{a, b} {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		expectReply(t, c, bufio.NewReader(c), "SET "+sock+" v", "+OK\r\n")
		c.Close()
	}
	s.Shutdown(context.Background())
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{
		`goblin_requests_total{command="set",protocol="resp",transport="uds"} 2`,
		`goblin_accepted_clients_total{protocol="resp",transport="uds"} 2`,
	} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %q:\n%s", want, rec.Body.String())
		}
	}
}

func TestRequirePass(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "g.sock")
	s, err := New(Options{Listen: []string{"uds://" + sock}, RequirePass: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	go s.Run()
	defer s.Shutdown(context.Background())
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	expectReply(t, c, r, "GET k", "-NOAUTH")
	r.ReadString('\n')
	expectReply(t, c, r, "AUTH pw", "+OK\r\n")
	expectReply(t, c, r, "GET k", "$-1\r\n")
}

func cycleRoundTrip(l *Loop, fd int, req, buf []byte) int {
	unix.Write(fd, req)
	for {
		l.cycle()
		if n, err := unix.Read(fd, buf); err == nil && n > 0 {
			return n
		}
	}
}

func spinLoopServer(t testing.TB) (*Server, int) {
	sock := filepath.Join(t.TempDir(), "g.sock")
	s, err := New(Options{Listen: []string{"uds://" + sock}, Idle: IdleSpin, SocketCheckEvery: 1})
	if err != nil {
		t.Fatal(err)
	}
	return s, wiretest.RawUnix(t, sock)
}

// TestRequestPathDoesNotAllocate drives GET round trips through the whole
// server path (socket, engine, store, metrics counters, loop cycle) on
// one goroutine and counts allocations.
func TestRequestPathDoesNotAllocate(t *testing.T) {
	s, fd := spinLoopServer(t)
	defer s.loop.shutdown()
	defer unix.Close(fd)
	buf := make([]byte, 256)
	cycleRoundTrip(s.loop, fd, []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$16\r\n0123456789abcdef\r\n"), buf)
	get := []byte("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n")
	if n := cycleRoundTrip(s.loop, fd, get, buf); string(buf[:n]) != "$16\r\n0123456789abcdef\r\n" {
		t.Fatalf("GET: %q", buf[:n])
	}
	if a := testing.AllocsPerRun(1000, func() { cycleRoundTrip(s.loop, fd, get, buf) }); a != 0 {
		t.Fatalf("%v allocations per GET round trip", a)
	}
}

// BenchmarkServerRoundTrip is one GET through the socket, the engine and
// the store, with the client on the loop's goroutine: server cost plus
// four syscalls.
func BenchmarkServerRoundTrip(b *testing.B) {
	s, fd := spinLoopServer(b)
	defer s.loop.shutdown()
	defer unix.Close(fd)
	buf := make([]byte, 256)
	cycleRoundTrip(s.loop, fd, []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$16\r\n0123456789abcdef\r\n"), buf)
	get := []byte("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n")
	b.ReportAllocs()
	for b.Loop() {
		cycleRoundTrip(s.loop, fd, get, buf)
	}
}

// BenchmarkMetricsPerRequest is what metrics cost the loop per request:
// the engine's plain counter increment, plus the loop's publish check, plus
// a full Publish (every series of two transports and the store) each time
// the 100ms interval passes on the real clock. Target: ≤ 5 ns.
func BenchmarkMetricsPerRequest(b *testing.B) {
	for _, withMetrics := range []bool{false, true} {
		name := "baseline"
		if withMetrics {
			name = "counters+publish"
		}
		b.Run(name, func(b *testing.B) {
			s, _ := newTestServer(b)
			defer s.loop.shutdown()
			st := s.streams[0].stats
			interval := int64(s.opts.MetricsInterval)
			start := time.Now()
			var last, now int64
			publishes := 0
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if withMetrics {
					st.Commands[command.OpGet]++ // what the engine does per request
				}
				if i&63 == 0 {
					now = int64(time.Since(start)) // the loop reads the clock once per cycle anyway
				}
				i++
				if withMetrics && now-last >= interval {
					last = now
					s.metrics.Publish()
					publishes++
				}
			}
			b.ReportMetric(float64(publishes), "publishes")
		})
	}
}

// BenchmarkMetricsPublish is one Publish of every series of a server with
// two socket transports.
func BenchmarkMetricsPublish(b *testing.B) {
	s, _ := newTestServer(b)
	defer s.loop.shutdown()
	b.ReportAllocs()
	for b.Loop() {
		s.metrics.Publish()
	}
	b.ReportMetric(float64(len(s.metrics.series)), "series")
}

// unregister takes scheme's transport out of the table until t ends.
func unregister(t *testing.T, scheme transport.Scheme) {
	b, ok := builders[scheme]
	if !ok {
		t.Fatalf("no %s transport to take out", scheme)
	}
	delete(builders, scheme)
	t.Cleanup(func() { builders[scheme] = b })
}

// The server's --idle names are package idle's but doze, the loop's own default.
func TestIdleNames(t *testing.T) {
	for name, s := range map[string]idle.Strategy{IdleSpin: idle.Spin, IdleYield: idle.Yield, IdleBackoff: idle.Backoff} {
		if s.String() != name {
			t.Errorf("%q is %q in package idle", name, s.String())
		}
	}
	// The loop's default is its own doze (backoff that dozes at rest);
	// the clients' stays idle.Default, which it is built on.
	if DefaultIdle != IdleDoze || idle.Default != idle.Backoff {
		t.Errorf("DefaultIdle %q, idle.Default %v; want doze over backoff", DefaultIdle, idle.Default)
	}
	for _, name := range []string{"", IdleDoze} {
		s, err := NewIdleStrategy(name, &Options{}, nil)
		if _, ok := s.(*idle.Dozer); !ok || err != nil {
			t.Errorf("--idle %q: %T, %v; want an idle.Dozer", name, s, err)
		}
	}
	o := Options{Idle: "park"} // the clients' older spelling of backoff
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		t.Errorf("--idle park: %v", err)
	}
}

// An options error keeps its cause for errors.Is: the listen target's
// syntax error as well as ErrOptions.
func TestOptionsErrorKeepsCause(t *testing.T) {
	_, err := New(Options{Listen: []string{"uds://x?proto=nope"}})
	if !errors.Is(err, ErrOptions) || !errors.Is(err, transport.ErrTargetSyntax) {
		t.Fatalf("New = %v: want both ErrOptions and transport.ErrTargetSyntax", err)
	}
}
