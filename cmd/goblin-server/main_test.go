package main

// End-to-end tests: they build the real goblin-server, start it as a
// process on a private socket and port, and talk to it with Debian's
// redis-cli and redis-benchmark and with go-redis, over the Unix socket
// and TCP.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
	"github.com/goblin-kv/goblin/proto/sbe"
	"github.com/goblin-kv/goblin/redisconf"
	"github.com/goblin-kv/goblin/server"
	"github.com/goblin-kv/goblin/store"
)

func TestMain(m *testing.M) { testproc.Main(m) }

const startTimeout = 60 * time.Second

// srv is one running goblin-server.
type srv struct {
	p       *testproc.Proc
	sock    string // Unix socket path
	tcp     string // host:port
	metrics string // http://host:port/metrics
}

func startServer(t *testing.T, args ...string) *srv {
	t.Helper()
	return startServerArgs(t, nil, args)
}

// startServerTB is startServer for tests and benchmarks alike.
func startServerTB(t testing.TB, args ...string) *srv {
	t.Helper()
	return startServerArgs(t, nil, args)
}

// startServerArgs is startServer with lead (a configuration file) before
// the flags. Unless args name one, the server gets a temporary --dir:
// tests never load from or save to the default state directory.
func startServerArgs(t testing.TB, lead, args []string) *srv {
	t.Helper()
	return startServerBin(t, testproc.Build(t, "./cmd/goblin-server"), lead, args)
}

// startServerBin is startServerArgs with a goblin-server binary built
// elsewhere (a benchmark's peer built from another commit).
func startServerBin(t testing.TB, bin string, lead, args []string) *srv {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "goblin.sock")
	tcp, metrics := "127.0.0.1:0", "127.0.0.1:0"
	if _, ok := testproc.PortRange(t); ok { // GOBLIN_TEST_PORTS: no port the kernel picks
		p := testproc.FreeTCPPorts(t, 2)
		tcp, metrics = "127.0.0.1:"+strconv.Itoa(p[0]), "127.0.0.1:"+strconv.Itoa(p[1])
	}
	all := append(lead, "--listen", "uds://"+sock+",tcp://"+tcp, "--metrics", metrics, "--log-level", "debug")
	if !slices.ContainsFunc(args, func(a string) bool { return a == "--dir" || strings.HasPrefix(a, "--dir=") }) {
		all = append(all, "--dir", t.TempDir()) // never the default state directory: tests load nothing and save nothing there
	}
	all = append(all, args...)
	s := &srv{p: testproc.Start(t, bin, all...), sock: sock}
	s.tcp = s.p.WaitLog(t, `msg=listening target="?tcp://([^?"]+)`, startTimeout)
	s.metrics = s.p.WaitLog(t, `msg="metrics listening" url=(\S+)`, startTimeout)
	s.p.WaitLog(t, `msg=ready`, startTimeout)
	return s
}

func buildServer(t *testing.T) string { return testproc.Build(t, "./cmd/goblin-server") }

func startProc(t *testing.T, bin string, args ...string) *testproc.Proc {
	t.Helper()
	return testproc.Start(t, bin, args...)
}

// endpoints returns the redis-cli/redis-benchmark arguments for each
// transport.
func (s *srv) endpoints() []struct{ name, args string } {
	host, port, _ := net.SplitHostPort(s.tcp)
	return []struct{ name, args string }{{"unix", "-s " + s.sock}, {"tcp", "-h " + host + " -p " + port}}
}

func needTool(t *testing.T, name string) string {
	t.Helper()
	return testkit.Need(t, name, "driving goblin-server as Redis tools do")
}

func runTool(t *testing.T, stdin []byte, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(needTool(t, name), args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\nstdout: %.2000s\nstderr: %.2000s", name, strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return out
}

func TestRedisBenchmark(t *testing.T) {
	// Serial: a load generator that wants the machine to itself. 20,000
	// requests of each test per run (400 for each of the 50 clients) show
	// that every test and pipeline works and gives a figure; the figures
	// themselves come from the benchmarks, not from here.
	const requests = 20000
	s := startServer(t)
	for _, ep := range s.endpoints() {
		for _, pipeline := range []string{"1", "16"} {
			t.Run(ep.name+"/P"+pipeline, func(t *testing.T) {
				args := append(strings.Fields(ep.args), "-t", "ping,set,get", "-n", strconv.Itoa(requests), "-c", "50", "-P", pipeline, "-q")
				// -q still draws progress lines ending in \r: keep what follows.
				var results []string
				for _, l := range strings.Split(strings.ReplaceAll(string(runTool(t, nil, "redis-benchmark", args...)), "\r", "\n"), "\n") {
					if strings.Contains(l, "requests per second") || strings.Contains(strings.ToLower(l), "err") {
						results = append(results, strings.TrimSpace(l))
					}
				}
				out := strings.Join(results, "\n")
				t.Logf("redis-benchmark %s:\n%s", strings.Join(args, " "), out)
				if strings.Contains(strings.ToLower(out), "error") {
					t.Fatalf("errors in the output")
				}
				for _, test := range []string{"PING_INLINE", "PING_MBULK", "SET", "GET"} {
					if !regexp.MustCompile(`(?m)^` + test + `: [0-9.]+ requests per second`).MatchString(out) {
						t.Errorf("no result line for %s", test)
					}
				}
			})
		}
	}
	// Every SET redis-benchmark sent was executed: requests per run. The
	// loop publishes its counters every metrics interval, so the last
	// requests can take one interval to show.
	sets := func() float64 {
		return scrapeOK(s, `goblin_requests_total{command="set",protocol="resp",transport="uds"}`) +
			scrapeOK(s, `goblin_requests_total{command="set",protocol="resp",transport="tcp"}`)
	}
	deadline := time.Now().Add(30 * time.Second)
	const runs = 4 // two endpoints, two pipeline depths
	for sets() < runs*requests && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := sets(); n < runs*requests {
		t.Fatalf("server counted %v SETs, want at least %d (the metrics were published every interval but the SETs never all showed)", n, runs*requests)
	}
}

func TestRedisCLIBinarySafeAndLargeValues(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	binary := []byte("a\r\nb\x00c\r\n\x00\xff$3\r\n*1\r\n")
	large := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	large[12345] = 0
	copy(large[500000:], "\r\n")
	for _, ep := range s.endpoints() {
		t.Run(ep.name, func(t *testing.T) {
			for name, v := range map[string][]byte{"binary": binary, "1MiB": large} {
				key := ep.name + "-" + name
				// -x takes the last argument from stdin, byte for byte.
				if out := runTool(t, v, "redis-cli", append(strings.Fields(ep.args), "-x", "SET", key)...); string(out) != "OK\n" {
					t.Fatalf("SET %s: %q", key, out)
				}
				got := runTool(t, nil, "redis-cli", append(strings.Fields(ep.args), "--raw", "GET", key)...)
				// --raw prints the value and a newline.
				if !bytes.Equal(got, append(append([]byte{}, v...), '\n')) {
					t.Fatalf("GET %s: %d bytes back, want %d equal bytes", key, len(got), len(v)+1)
				}
			}
			if out := runTool(t, nil, "redis-cli", append(strings.Fields(ep.args), "PING")...); string(out) != "PONG\n" {
				t.Fatalf("PING: %q", out)
			}
		})
	}
}

func TestGoRedis(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := context.Background()
	for _, ep := range []struct{ name, network, addr string }{{"unix", "unix", s.sock}, {"tcp", "tcp", s.tcp}} {
		t.Run(ep.name, func(t *testing.T) {
			// go-redis defaults: it tries HELLO 3 and falls back to RESP2.
			rdb := redis.NewClient(&redis.Options{Network: ep.network, Addr: ep.addr, PoolSize: 8})
			defer rdb.Close()
			if err := rdb.Ping(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			k := func(s string) string { return ep.name + ":" + s }
			v := "x\r\ny\x00z"
			if err := rdb.Set(ctx, k("k"), v, 0).Err(); err != nil {
				t.Fatal(err)
			}
			if got, err := rdb.Get(ctx, k("k")).Result(); err != nil || got != v {
				t.Fatalf("GET = %q, %v", got, err)
			}
			if _, err := rdb.Get(ctx, k("missing")).Result(); !errors.Is(err, redis.Nil) {
				t.Fatalf("GET missing: %v, want redis.Nil", err)
			}
			if err := rdb.Set(ctx, k("ttl"), "v", time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
			if ttl, err := rdb.TTL(ctx, k("ttl")).Result(); err != nil || ttl <= 0 || ttl > time.Minute {
				t.Fatalf("TTL = %v, %v", ttl, err)
			}
			if n, err := rdb.IncrBy(ctx, k("n"), 5).Result(); err != nil || n != 5 {
				t.Fatalf("INCRBY = %d, %v", n, err)
			}
			// Pipelined and concurrent.
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for g := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					pipe := rdb.Pipeline()
					for i := range 500 {
						pipe.Set(ctx, k(fmt.Sprintf("g%d-%d", g, i)), i, 0)
					}
					gets := make([]*redis.StringCmd, 500)
					for i := range 500 {
						gets[i] = pipe.Get(ctx, k(fmt.Sprintf("g%d-%d", g, i)))
					}
					if _, err := pipe.Exec(ctx); err != nil {
						errs <- err
						return
					}
					for i, c := range gets {
						if c.Val() != strconv.Itoa(i) {
							errs <- fmt.Errorf("pipelined GET %d = %q", i, c.Val())
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if n, err := rdb.Del(ctx, k("k"), k("missing")).Result(); err != nil || n != 1 {
				t.Fatalf("DEL = %d, %v", n, err)
			}
		})
	}
}

func TestRequirePass(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--requirepass", "s3cret")
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: s.sock, Protocol: 2})
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Fatalf("PING without AUTH: %v, want NOAUTH", err)
	}
	authed := redis.NewClient(&redis.Options{Network: "tcp", Addr: s.tcp, Password: "s3cret", Protocol: 2})
	defer authed.Close()
	if err := authed.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING with the password: %v", err)
	}
	host, port, _ := net.SplitHostPort(s.tcp)
	if out := runTool(t, nil, "redis-cli", "-h", host, "-p", port, "--no-auth-warning", "-a", "s3cret", "PING"); string(out) != "PONG\n" {
		t.Fatalf("redis-cli -a: %q", out)
	}
}

// TestBadClientsNoLeaks runs every misbehaving client the issue lists,
// twice, and checks that the server keeps answering a well-behaved client
// and ends each round with the descriptors it started with and no growing
// resident memory.
func TestBadClientsNoLeaks(t *testing.T) {
	// Serial: counts the server's descriptors and memory over a run of bad clients.
	raiseNoFile(t, 4096)
	s := startServer(t, "--client-output-limit", "4mb", "--client-stall-timeout", "1s")
	good := redis.NewClient(&redis.Options{Network: "unix", Addr: s.sock, Protocol: 2, PoolSize: 1})
	defer good.Close()
	ctx := context.Background()
	if err := good.Set(ctx, "v4k", strings.Repeat("v", 4096), 0).Err(); err != nil {
		t.Fatal(err)
	}
	fdsBase, rssBase := fdsAndRSS(t, s)
	t.Logf("baseline: %d fds, RSS %d KiB", fdsBase, rssBase>>10)
	var rssAfter []int64
	for round := range 3 {
		hugeBulk(t, s)
		halfFrameThenVanish(t, s)
		neverReads(t, s, good)
		concurrentClients(t, s, 1000)
		if got, err := good.Get(ctx, "v4k").Result(); err != nil || len(got) != 4096 {
			t.Fatalf("round %d: well-behaved client: %d bytes, %v", round, len(got), err)
		}
		// Descriptors: the server must get back to its baseline.
		var fds int
		testkit.Eventually(t, 30*time.Second, "the server's fds to return to baseline", func() (bool, string) {
			fds, _ = s.p.FDs()
			return fds == fdsBase, ""
		})
		_, rss := fdsAndRSS(t, s)
		rssAfter = append(rssAfter, rss)
		t.Logf("after round %d: %d fds, RSS %d KiB", round, fds, rss>>10)
	}
	// Memory: the last round must not add what the earlier ones added
	// (buffers are released, not accumulated). Allow 32 MiB of slack for
	// the Go heap's own sizing and the garbage collector's timing.
	if grow := rssAfter[2] - max(rssAfter[0], rssAfter[1]); grow > 32<<20 {
		t.Fatalf("RSS grew by %d KiB in the third identical round", grow>>10)
	}
	testkit.Eventually(t, 30*time.Second, "the metrics to count 3 slow consumers and 3 protocol errors", func() (bool, string) {
		return scrapeOK(s, `goblin_disconnects_total{protocol="resp",reason="slow_consumer",transport="uds"}`) == 3 &&
			scrapeOK(s, `goblin_protocol_errors_total{protocol="resp",transport="tcp"}`) == 3, ""
	})
}

func fdsAndRSS(t *testing.T, s *srv) (int, int64) {
	fds, err := s.p.FDs()
	if err != nil {
		t.Fatal(err)
	}
	rss, err := s.p.RSS()
	if err != nil {
		t.Fatal(err)
	}
	return fds, rss
}

// hugeBulk announces a 1 TB bulk string: the server must refuse it at
// once, not wait for it or allocate it.
func hugeBulk(t *testing.T, s *srv) {
	c, err := net.Dial("tcp", s.tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(c, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1000000000000\r\nabc")
	reply, err := io.ReadAll(c)
	if err != nil || !strings.HasPrefix(string(reply), "-ERR Protocol error") {
		t.Fatalf("huge bulk length: %q, %v", reply, err)
	}
}

// halfFrameThenVanish sends half a command on 50 connections and closes
// them.
func halfFrameThenVanish(t *testing.T, s *srv) {
	for range 50 {
		c, err := net.Dial("unix", s.sock)
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("*3\r\n$3\r\nSET\r\n$3\r\nke"))
		c.Close()
	}
}

// neverReads pipelines 100,000 GETs of a 4 KiB value and never reads a
// reply: the server must disconnect it once its queued replies pass the
// limit, and go on answering others meanwhile.
func neverReads(t *testing.T, s *srv, good *redis.Client) {
	c, err := net.Dial("unix", s.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := bytes.Repeat([]byte("*2\r\n$3\r\nGET\r\n$3\r\nv4k\r\n"), 1000)
	done := make(chan error, 1)
	go func() {
		c.SetWriteDeadline(time.Now().Add(60 * time.Second))
		for range 100 {
			if _, err := c.Write(req); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	// Meanwhile the well-behaved client is answered.
	for i := range 20 {
		if err := good.Ping(context.Background()).Err(); err != nil {
			t.Fatalf("PING %d while a client does not read: %v", i, err)
		}
	}
	if err := <-done; err == nil {
		t.Fatal("the non-reading client wrote 100,000 requests without being disconnected")
	} else if !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("non-reading client: %v, want a broken connection", err)
	}
}

// concurrentClients connects n clients at once, each doing a SET and a GET.
func concurrentClients(t *testing.T, s *srv, n int) {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	conns := make([]net.Conn, n)
	for i := range n {
		network, addr := "unix", s.sock
		if i%2 == 1 {
			network, addr = "tcp", s.tcp
		}
		c, err := net.Dial(network, addr)
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		conns[i] = c
	}
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.SetDeadline(time.Now().Add(60 * time.Second))
			k := fmt.Sprintf("c%d", i)
			fmt.Fprintf(c, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", len(k), k, len(k), k, len(k), k)
			r := bufio.NewReader(c)
			want := fmt.Sprintf("+OK\r\n$%d\r\n%s\r\n", len(k), k)
			got := make([]byte, len(want))
			if _, err := io.ReadFull(r, got); err != nil || string(got) != want {
				errs <- fmt.Errorf("client %d: %q, %v", i, got, err)
			}
		}()
	}
	wg.Wait()
	for _, c := range conns {
		c.Close()
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func raiseNoFile(t *testing.T, n uint64) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur >= n {
		return
	}
	if lim.Max < n {
		t.Skipf("RLIMIT_NOFILE hard limit %d < %d", lim.Max, n)
	}
	old := lim
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
}

func TestMetricsScrapedOverHTTP(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: s.sock, Protocol: 2, PoolSize: 1})
	defer rdb.Close()
	for i := range 25 {
		if err := rdb.Set(ctx, fmt.Sprint("m", i), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for range 7 {
		rdb.Get(ctx, "m1")
	}
	rdb.Do(ctx, "NOSUCHCOMMAND")
	testkit.Eventually(t, 30*time.Second, "the metrics to show the requests", func() (bool, string) {
		return scrapeOK(s, `goblin_requests_total{command="set",protocol="resp",transport="uds"}`) == 25 &&
			scrapeOK(s, `goblin_requests_total{command="get",protocol="resp",transport="uds"}`) == 7, ""
	})
	for series, want := range map[string]float64{
		`goblin_keys`: 25,
		`goblin_connected_clients{protocol="resp",transport="uds"}`: 1,
		`goblin_connected_clients{protocol="resp",transport="tcp"}`: 0,
		`goblin_errors_total{protocol="resp",transport="uds"}`:      1,
	} {
		if got := scrape(t, s, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	// A command's series appears once the command is first seen: the
	// commands sent here, and no zeros (there were 1,224 of them).
	var seen []string
	for series, v := range scrapeAll(t, s) {
		if strings.HasPrefix(series, "goblin_requests_total{") {
			seen = append(seen, series)
			if v == 0 {
				t.Errorf("%s = 0: a command not seen has a series", series)
			}
		}
	}
	if len(seen) > 8 {
		t.Errorf("%d goblin_requests_total series after SET, GET and an unknown command (and the client's handshake): %v", len(seen), seen)
	}
	if _, ok := scrapeAll(t, s)[`goblin_requests_total{command="set",protocol="resp",transport="tcp"}`]; ok {
		t.Error("the TCP listener, which saw no SET, has a SET series")
	}
	for _, series := range []string{`goblin_loop_iterations_total`, `goblin_loop_idle_seconds_total`, `goblin_loop_rests_total`, `goblin_arena_live_bytes`,
		`goblin_arena_dead_bytes`, `goblin_arena_reclaim_steps_total`, `goblin_expired_keys_total`, `goblin_evicted_keys_total`} {
		if _, ok := scrapeAll(t, s)[series]; !ok {
			t.Errorf("no series %s", series)
		}
	}
	if scrape(t, s, `goblin_loop_iterations_total`) <= 0 {
		t.Error("loop iterations not counted")
	}
}

func scrapeAll(t *testing.T, s *srv) map[string]float64 {
	t.Helper()
	m, err := scrapeMap(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func scrapeMap(s *srv) (map[string]float64, error) {
	resp, err := http.Get(s.metrics)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", s.metrics, resp.Status)
	}
	m := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil {
			m[line[:i]] = v
		}
	}
	return m, sc.Err()
}

func scrape(t *testing.T, s *srv, series string) float64 {
	t.Helper()
	v, ok := scrapeAll(t, s)[series]
	if !ok {
		t.Fatalf("metrics have no series %s", series)
	}
	return v
}

func scrapeOK(s *srv, series string) float64 {
	m, err := scrapeMap(s)
	if err != nil {
		return -1
	}
	return m[series]
}

func TestGracefulShutdownAndStaleSocket(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	// A second server on the same socket refuses to start.
	bin := testproc.Build(t, "./cmd/goblin-server")
	second := testproc.Start(t, bin, "--listen", "uds://"+s.sock, "--metrics", "off")
	if code, err := second.Wait(startTimeout); err != nil || code != exitFailure {
		t.Fatalf("second server: exit %d, %v\n%s", code, err, second.Log())
	}
	if !strings.Contains(second.Log(), "address in use") {
		t.Fatalf("second server's log does not say address in use:\n%s", second.Log())
	}
	// SIGTERM: clean exit, socket file removed, connected clients closed.
	c, err := net.Dial("unix", s.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "PING\r\n")
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "+PONG\r\n" {
		t.Fatalf("PING: %q, %v", line, err)
	}
	if code := s.p.Stop(30 * time.Second); code != exitOK {
		t.Fatalf("exit code %d after SIGTERM\n%s", code, s.p.Log())
	}
	if _, err := os.Stat(s.sock); !os.IsNotExist(err) {
		t.Fatalf("socket file left after shutdown: %v", err)
	}
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("connected client: %v, want EOF after shutdown", err)
	}
	// A server killed with SIGKILL leaves its socket file; the next one
	// replaces it.
	killed := testproc.Start(t, bin, "--listen", "uds://"+s.sock, "--metrics", "off")
	killed.WaitLog(t, "msg=ready", startTimeout)
	killed.Signal(syscall.SIGKILL)
	killed.Wait(startTimeout)
	if _, err := os.Stat(s.sock); err != nil {
		t.Fatalf("expected a stale socket file: %v", err)
	}
	next := testproc.Start(t, bin, "--listen", "uds://"+s.sock, "--metrics", "off")
	next.WaitLog(t, "msg=ready", startTimeout)
	if out := runTool(t, nil, "redis-cli", "-s", s.sock, "PING"); string(out) != "PONG\n" {
		t.Fatalf("PING after replacing a stale socket: %q", out)
	}
}

func TestFlagsAndConfigFile(t *testing.T) {
	var help bytes.Buffer
	if code := run([]string{"--help"}, io.Discard, &help); code != exitOK {
		t.Fatalf("--help exit %d", code)
	}
	var c config
	flags(&c, io.Discard).VisitAll(func(f *flag.Flag) {
		if !strings.Contains(help.String(), "-"+f.Name) {
			t.Errorf("--help does not list -%s", f.Name)
		}
	})
	for _, bad := range [][]string{{"--nope"}, {"--idle", "nap"}, {"--maxmemory", "lots"}, {"--maxmemory-policy", "random"}, {"--listen", "ftp://x"}, {"extra"}} {
		if code := run(bad, io.Discard, io.Discard); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", bad, code, exitUsage)
		}
	}
	// A config file (redis.conf syntax) sets what the command line does not.
	dir := t.TempDir()
	conf := filepath.Join(dir, "goblin.conf")
	os.WriteFile(conf, []byte("# test\nidle spin\nmaxmemory 64mb\nrequirepass \"p w\"\nmaxclients 7\ntimeout 30\nloglevel warning\n"), 0o600)
	fs := flags(&c, io.Discard)
	if err := fs.Parse([]string{"--config", conf, "--maxclients", "9"}); err != nil {
		t.Fatal(err)
	}
	if _, err := applyConfigFile(fs, conf, false); err != nil {
		t.Fatal(err)
	}
	o, err := options(&c)
	if err != nil {
		t.Fatal(err)
	}
	if o.Idle != "spin" || o.MaxMemory != 64<<20 || o.RequirePass != "p w" || o.MaxClients != 9 || o.IdleTimeout != 30*time.Second || c.logLevel != "warn" {
		t.Fatalf("options from file and flags: %+v", o)
	}
	// Every flag is a directive of the same name (server.md says so), but
	// the three about the file or the binary itself.
	flags(&c, io.Discard).VisitAll(func(f *flag.Flag) {
		if f.Name == "config" || f.Name == "ignore-unsupported" || f.Name == "version" {
			return
		}
		if spec, ok := redisconf.Lookup(f.Name); !ok || spec.Goblin != f.Name {
			t.Errorf("--%s has no configuration file directive of its name (%+v)", f.Name, spec)
		}
	})
	// The loop's default idle strategy and the flags that are Go bools.
	os.WriteFile(conf, []byte("idle doze\nbgsave-writer-priority normal\nrdb-skip-unsupported yes\n"), 0o600)
	c = config{}
	fs = flags(&c, io.Discard)
	if err := fs.Parse([]string{"--config", conf}); err != nil {
		t.Fatal(err)
	}
	if _, err := applyConfigFile(fs, conf, false); err != nil {
		t.Fatal(err)
	}
	if c.idle != "doze" || c.writerPriority != "normal" || !c.rdbSkipUnsupported { // normal: idle is the default
		t.Errorf("from the file: idle %q, bgsave-writer-priority %q, rdb-skip-unsupported %v", c.idle, c.writerPriority, c.rdbSkipUnsupported)
	}
	for _, bad := range []struct{ file, want string }{
		{"bogus 1\n", "goblin.conf:1: >>> 'bogus 1' Bad directive or wrong number of arguments"},
		{"# ok\nmaxmemory lots\n", "goblin.conf:2: >>> 'maxmemory lots' argument must be a memory value"},
		{"maxclients 5\nappendonly yes\nsave 900 1\nrdb-del-sync-files no\n", "goblin.conf:2: >>> 'appendonly yes' Redis directive not supported by goblin\n" + conf + ":4: >>> 'rdb-del-sync-files no' Redis directive not supported by goblin"},
	} {
		os.WriteFile(conf, []byte(bad.file), 0o600)
		var stderr bytes.Buffer
		if code := run([]string{"--config", conf}, io.Discard, &stderr); code != exitUsage || !strings.Contains(stderr.String(), bad.want) {
			t.Errorf("config %q: exit %d, stderr %q; want exit %d naming %q", bad.file, code, stderr.String(), exitUsage, bad.want)
		}
	}
}

// TestFlagDefaultsAreTheOptionsDefaults: with no flags, goblin-server
// asks for what a zero server.Options defaults to, so the flags' defaults
// (taken from the packages' constants) and the library's cannot drift.
func TestFlagDefaultsAreTheOptionsDefaults(t *testing.T) {
	var c config
	if err := flags(&c, io.Discard).Parse(nil); err != nil {
		t.Fatal(err)
	}
	got, err := options(&c)
	if err != nil {
		t.Fatal(err)
	}
	var want server.Options
	want.EnsureDefaults()
	if want.Databases == 0 {
		want.Databases = server.DefaultDatabases // what 0 means
	}
	type limits struct {
		Idle                                                     string
		MaxClients, MaxOutput, MaxInput, PassOutput, MaxValueLen int
		SocketCheckEvery, Databases                              int
		MaxClientMemory                                          int64
		StallTimeout                                             time.Duration
		SocketMode                                               os.FileMode
		MaxMemoryPolicy                                          store.EvictionPolicy
	}
	pick := func(o server.Options) limits {
		return limits{o.Idle, o.MaxClients, o.MaxOutput, o.MaxInput, o.PassOutput, o.MaxValueLen,
			o.SocketCheckEvery, o.Databases, o.MaxClientMemory, o.StallTimeout, o.SocketMode, o.MaxMemoryPolicy}
	}
	if g, w := pick(got), pick(want); g != w {
		t.Errorf("flag defaults give %+v; server.Options defaults to %+v", g, w)
	}
}

// TestSizeText: a size default reads back as the bytes it stands for.
func TestSizeText(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 1000: "1000", 256 << 10: "256kb", 32 << 20: "32mb", 1 << 30: "1gb", 3 << 29: "1536mb"} {
		got := sizeText(n)
		if got != want {
			t.Errorf("sizeText(%d) = %q, want %q", n, got, want)
		}
		if back, err := parseBytes("x", got); err != nil || back != n {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", got, back, err, n)
		}
	}
}

// TestIdleServerDoesNotBurnACore checks the default idle strategy: over
// two idle seconds the server must use well under a core (spin would use
// all of it). Not a timing assertion: scheduling noise only lowers it.
func TestIdleServerDoesNotBurnACore(t *testing.T) {
	// Serial: measures the server's CPU time.
	s := startServer(t)
	cpu := func() int64 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.p.PID))
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		return utime + stime // clock ticks, 100 per second
	}
	time.Sleep(500 * time.Millisecond) // let start-up work finish
	before, start := cpu(), time.Now()
	time.Sleep(2 * time.Second)
	used := float64(cpu()-before) / 100 / time.Since(start).Seconds()
	t.Logf("idle server used %.1f%% of a core", used*100)
	if used > 0.25 {
		t.Fatalf("idle server used %.0f%% of a core with the default idle strategy", used*100)
	}
}

// TestSBEListeners serves SBE (SOFH-framed) on a Unix socket and on TCP and
// pipelines framed SET, GET and PING requests, checking each reply's
// correlation id, status and value.
func TestSBEListeners(t *testing.T) {
	t.Parallel()
	bin := testproc.Build(t, "./cmd/goblin-server")
	sock := filepath.Join(t.TempDir(), "sbe.sock")
	p := testproc.Start(t, bin, "--listen", "uds://"+sock+"?proto=sbe,tcp://127.0.0.1:0?proto=sbe", "--metrics", "off")
	tcp := p.WaitLog(t, `msg=listening target="?tcp://([^?"]+)\?proto=sbe`, startTimeout)
	p.WaitLog(t, `msg=ready`, startTimeout)
	for _, ep := range []struct{ network, addr string }{{"unix", sock}, {"tcp", tcp}} {
		t.Run(ep.network, func(t *testing.T) {
			c, err := net.Dial(ep.network, ep.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(30 * time.Second))
			var codec sbe.Codec
			value := []byte("sbe\r\n\x00value")
			var req []byte
			req = codec.AppendFramedRequest(req, &command.Request{CorrelationID: 1, Op: command.OpSet, Key: []byte("sk"), Value: value})
			req = codec.AppendFramedRequest(req, &command.Request{CorrelationID: 2, Op: command.OpGet, Key: []byte("sk")})
			req = codec.AppendFramedRequest(req, &command.Request{CorrelationID: 3, Op: command.OpPing})
			if _, err := c.Write(req); err != nil {
				t.Fatal(err)
			}
			var buf []byte
			chunk := make([]byte, 4096)
			for id := uint64(1); id <= 3; {
				msg, n, err := sbe.ReadFrame(buf, 0)
				if err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					m, err := c.Read(chunk)
					if err != nil {
						t.Fatalf("reading reply %d: %v", id, err)
					}
					buf = append(buf, chunk[:m]...)
					continue
				}
				var r command.Reply
				if err := codec.DecodeReply(msg, &r); err != nil {
					t.Fatal(err)
				}
				if r.CorrelationID != id || r.Status != command.OK {
					t.Fatalf("reply %d: %+v", id, r)
				}
				if id == 2 && !bytes.Equal(r.Value, value) {
					t.Fatalf("GET over SBE: %q", r.Value)
				}
				buf = buf[n:]
				id++
			}
		})
	}
}

// TestCPUPinning starts the server with --cpu 0 and finds the loop's
// thread among the process's threads: the only one allowed on CPU 0 alone.
func TestCPUPinning(t *testing.T) {
	// Serial: needs the CPUs to itself to tell a pinned thread apart.
	if runtime.NumCPU() < 2 {
		t.Skip("needs two CPUs to tell a pinned thread from the others")
	}
	s := startServer(t, "--cpu", "0")
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", s.p.PID))
	if err != nil || len(tasks) == 0 {
		t.Fatalf("no threads: %v", err)
	}
	pinned := 0
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			continue // the thread exited
		}
		if regexp.MustCompile(`(?m)^Cpus_allowed_list:\s*0$`).Match(b) {
			pinned++
		}
	}
	if pinned != 1 {
		t.Fatalf("%d of %d threads pinned to CPU 0, want exactly the loop's", pinned, len(tasks))
	}
}

// TestEveryFlagDocumented keeps docs/server.md's flag table in step with
// the flags.
func TestEveryFlagDocumented(t *testing.T) {
	root, err := testproc.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "server.md"))
	if err != nil {
		t.Fatal(err)
	}
	var c config
	flags(&c, io.Discard).VisitAll(func(f *flag.Flag) {
		if !bytes.Contains(doc, []byte("`--"+f.Name)) {
			t.Errorf("docs/server.md does not document --%s", f.Name)
		}
	})
}

// slowShutdown starts a server with a client that has 8 MiB of replies
// queued and unread, so a shutdown spends its drain period (up to a second)
// writing them, and returns the client.
func slowShutdown(t *testing.T) (*srv, net.Conn, int) {
	t.Helper()
	s := startServer(t)
	c, err := net.Dial("unix", s.sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	const n = 8
	value := strings.Repeat("v", 1<<20)
	fmt.Fprintf(c, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n%s\r\n", len(value), value)
	r := bufio.NewReader(c)
	if line, err := r.ReadString('\n'); err != nil || line != "+OK\r\n" {
		t.Fatalf("SET: %q %v", line, err)
	}
	for i := 0; i < n; i++ {
		fmt.Fprintf(c, "GET k\r\n")
	}
	// Wait until the server has read the GETs and queued their replies.
	testkit.Eventually(t, 30*time.Second, "replies to be queued", func() (bool, string) {
		return scrapeOK(s, `goblin_requests_total{command="get",protocol="resp",transport="uds"}`) >= n, ""
	})
	return s, c, n
}

// readReplies reads n replies to GET k (1 MiB each) and returns how many
// arrived whole.
func readReplies(c net.Conn, n int) int {
	c.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(c)
	for i := 0; i < n; i++ {
		line, err := r.ReadString('\n')
		if err != nil || line != "$1048576\r\n" {
			return i
		}
		if _, err := io.CopyN(io.Discard, r, 1<<20+2); err != nil {
			return i
		}
	}
	return n
}

// TestSecondSIGTERMDoesNotCutShutdownShort is the regression test for a
// shutdown cut short: GNU timeout and process managers send SIGTERM to the
// process and to its group, so it arrives twice; the server used to exit 1
// on the second without writing the replies it owed.
func TestSecondSIGTERMDoesNotCutShutdownShort(t *testing.T) {
	// Serial: times a graceful shutdown.
	s, c, n := slowShutdown(t)
	s.p.Signal(syscall.SIGTERM)
	time.Sleep(2 * groupEcho) // a second request, not the process group's copy
	s.p.Signal(syscall.SIGTERM)
	if got := readReplies(c, n); got != n {
		t.Errorf("the client got %d of its %d replies", got, n)
	}
	if code, err := s.p.Wait(30 * time.Second); err != nil || code != exitOK {
		t.Fatalf("exit code %d (%v) after two SIGTERMs, want %d\n%s", code, err, exitOK, s.p.Log())
	}
	if !strings.Contains(s.p.Log(), "already shutting down") {
		t.Errorf("the log does not mention the ignored SIGTERM:\n%s", s.p.Log())
	}
}

// TestSecondSIGINTForcesExit: a second Ctrl-C during a shutdown exits at
// once, with exit code 1; a SIGINT right after the first (a copy sent to
// the process group) does not.
func TestSecondSIGINTForcesExit(t *testing.T) {
	// Serial: times a forced exit.
	s, _, _ := slowShutdown(t)
	s.p.Signal(syscall.SIGINT)
	s.p.Signal(syscall.SIGINT) // the group's copy: ignored
	time.Sleep(400 * time.Millisecond)
	if s.p.Exited() {
		t.Fatalf("exited before the second interrupt, with replies unwritten\n%s", s.p.Log())
	}
	s.p.Signal(syscall.SIGINT)
	if code, err := s.p.Wait(30 * time.Second); err != nil || code != exitFailure {
		t.Fatalf("exit code %d (%v) after a second interrupt, want %d\n%s", code, err, exitFailure, s.p.Log())
	}
	if !strings.Contains(s.p.Log(), "second interrupt") {
		t.Errorf("the log does not say why it exited:\n%s", s.p.Log())
	}
}

// TestProtocolMismatchJustWorks is the socket side of protocol
// mismatches: a
// client speaking SBE to a listener announced as RESP (tcp://…?proto=sbe
// against the default port) hung for its 10 s timeout; a RESP client
// against an SBE listener got nothing it understood. A socket listener
// now recognises each connection's protocol from its first bytes and
// serves it, so both work, at once.
func TestProtocolMismatchJustWorks(t *testing.T) {
	// Serial: measures how long the mismatch takes to answer.
	bin := testproc.Build(t, "./cmd/goblin-server")
	sock := filepath.Join(t.TempDir(), "sbe.sock")
	p := testproc.Start(t, bin, "--metrics", "off", "--listen", "tcp://127.0.0.1:0?proto=resp,uds://"+sock+"?proto=sbe")
	tcp := p.WaitLog(t, `msg=listening target="?tcp://([^?"]+)`, startTimeout)
	p.WaitLog(t, `msg=ready`, startTimeout)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	sbe, err := client.Dial(ctx, "tcp://"+tcp+"?proto=sbe")
	if err != nil {
		t.Fatal(err)
	}
	defer sbe.Close()
	if err := sbe.Set(ctx, "k", []byte("over sbe"), client.SetOptions{}); err != nil {
		t.Fatalf("SBE SET on the RESP listener: %v", err)
	}
	took := time.Since(start)
	// And RESP (redis-cli) on the SBE listener reads it back.
	if out := runTool(t, nil, "redis-cli", "-s", sock, "GET", "k"); string(out) != "over sbe\n" {
		t.Fatalf("redis-cli GET on the SBE listener: %q", out)
	}
	t.Logf("an SBE client on a RESP listener: dial and SET in %v", took)
}

// TestProtoMaxBulkLen: --proto-max-bulk-len sets the longest value the
// store takes and the RESP bulk limit: at the default (16 MiB) a 20 MiB SET
// is refused as Redis refuses a bulk over proto-max-bulk-len; with 64mb it
// round-trips; 512mb (Redis's ceiling) is accepted and more is a usage
// error.
func TestProtoMaxBulkLen(t *testing.T) {
	t.Parallel()
	value := bytes.Repeat([]byte("v"), 20<<20)
	set := func(s *srv) (string, net.Conn) {
		c, err := net.Dial("unix", s.sock)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			fmt.Fprintf(c, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n", len(value))
			c.Write(value)
			c.Write([]byte("\r\n"))
		}()
		c.SetDeadline(time.Now().Add(60 * time.Second))
		line, _ := bufio.NewReader(c).ReadString('\n')
		return line, c
	}
	line, c := set(startServer(t))
	c.Close()
	if line != "-ERR Protocol error: invalid bulk length\r\n" {
		t.Fatalf("20 MiB SET at the default limit: %q", line)
	}
	s := startServer(t, "--proto-max-bulk-len", "64mb")
	line, c = set(s)
	if line != "+OK\r\n" {
		t.Fatalf("20 MiB SET with --proto-max-bulk-len 64mb: %q", line)
	}
	fmt.Fprintf(c, "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n")
	r := bufio.NewReader(c)
	if hdr, err := r.ReadString('\n'); err != nil || hdr != fmt.Sprintf("$%d\r\n", len(value)) {
		t.Fatalf("GET: %q %v", hdr, err)
	}
	got := make([]byte, len(value))
	if _, err := io.ReadFull(r, got); err != nil || !bytes.Equal(got, value) {
		t.Fatalf("GET returned a different value: %v", err)
	}
	c.Close()
	for _, c := range []struct {
		arg  string
		code int
	}{{"512mb", exitOK}, {"513mb", exitUsage}, {"0", exitUsage}, {"lots", exitUsage}} {
		var cfg config
		fs := flags(&cfg, io.Discard)
		if err := fs.Parse([]string{"--proto-max-bulk-len", c.arg}); err != nil {
			t.Fatal(err)
		}
		_, err := options(&cfg)
		if (err == nil) != (c.code == exitOK) {
			t.Errorf("--proto-max-bulk-len %s: %v", c.arg, err)
		}
	}
}

// TestHealthEndpoints: the metrics listener answers /healthz and /readyz
// (200 "ok" on a running server).
func TestHealthEndpoints(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	base := strings.TrimSuffix(s.metrics, "/metrics")
	for _, path := range []string{"/healthz", "/readyz"} {
		testkit.Eventually(t, 30*time.Second, path+" to answer 200 ok", func() (bool, string) {
			resp, err := http.Get(base + path)
			if err != nil {
				return false, ""
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return resp.StatusCode == http.StatusOK && string(body) == "ok\n", ""
		})
	}
}
