package replbench

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/netns"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

func TestMain(m *testing.M) { testproc.Main(m) }

const startTimeout = 60 * time.Second

// server is one goblin-server or redis-server process. The harness talks
// to it over its Unix socket, which works from this process whatever
// network namespace the server runs in; replicas reach it at addr (TCP).
type server struct {
	kind string // "goblin" or "redis"
	addr string // host:port replicas dial
	sock string
	p    *testproc.Proc
	c    *redis.Client
}

// place says where a server runs: on loopback (link nil), or in namespace
// k of link at its address.
type place struct {
	link *netns.Link
	k    int
}

func (pl place) host() string {
	if pl.link == nil {
		return "127.0.0.1"
	}
	return pl.link.Addr[pl.k].String()
}

// port picks the TCP port: a free loopback one, or in a namespace (which
// this run owns whole) 6400 and up.
var nsPorts atomic.Int32

func (pl place) port(tb testing.TB) int {
	if pl.link != nil {
		return 6400 + int(nsPorts.Add(1))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func (pl place) start(tb testing.TB, bin string, args ...string) *testproc.Proc {
	if pl.link == nil {
		return testproc.Start(tb, bin, args...)
	}
	w := pl.link.Wrap(pl.k)
	return testproc.Start(tb, w[0], append(append(w[1:], bin), args...)...)
}

// startGoblin starts goblin-server at pl; of is the primary to follow.
func startGoblin(tb testing.TB, pl place, of *server, extra ...string) *server {
	tb.Helper()
	bin := testproc.Build(tb, "./cmd/goblin-server")
	dir := tb.TempDir()
	s := &server{kind: "goblin", sock: filepath.Join(dir, "goblin.sock")}
	s.addr = net.JoinHostPort(pl.host(), strconv.Itoa(pl.port(tb)))
	args := []string{"--listen", "uds://" + s.sock + ",tcp://" + s.addr, "--metrics", "off", "--dir", dir,
		"--protected-mode", "no", "--log-level", "info"}
	if of != nil {
		args = append(args, "--replicaof", strings.Replace(of.addr, ":", " ", 1))
	}
	s.p = pl.start(tb, bin, append(args, extra...)...)
	s.client(tb)
	return s
}

// startRedis starts redis-server 7.0 at pl; of is the primary to follow.
func startRedis(tb testing.TB, pl place, of *server, extra ...string) *server {
	tb.Helper()
	bin := testkit.Need(tb, "redis-server", "the Redis 7.0 peer of every figure")
	dir := tb.TempDir()
	s := &server{kind: "redis", sock: filepath.Join(dir, "redis.sock")}
	port := pl.port(tb)
	s.addr = net.JoinHostPort(pl.host(), strconv.Itoa(port))
	args := []string{"--port", strconv.Itoa(port), "--bind", pl.host(), "--unixsocket", s.sock, "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--protected-mode", "no", "--repl-diskless-sync-delay", "0"}
	if of != nil {
		h, p, _ := net.SplitHostPort(of.addr)
		args = append(args, "--replicaof", h, p)
	}
	s.p = pl.start(tb, bin, append(args, extra...)...)
	s.client(tb)
	return s
}

func (s *server) client(tb testing.TB) {
	tb.Helper()
	s.c = redis.NewClient(&redis.Options{Network: "unix", Addr: s.sock, PoolSize: 4})
	tb.Cleanup(func() { s.c.Close() })
	testkit.Eventually(tb, startTimeout, s.kind+" at "+s.sock+" answering PING", func() (bool, string) {
		err := s.c.Ping(context.Background()).Err()
		return err == nil, fmt.Sprint(err)
	})
}

// info returns one INFO field ("" when absent).
func (s *server) info(section, field string) string {
	v, err := s.c.Info(context.Background(), section).Result()
	if err != nil {
		return "error: " + err.Error()
	}
	for _, l := range strings.Split(v, "\r\n") {
		if k, x, ok := strings.Cut(l, ":"); ok && k == field {
			return x
		}
	}
	return ""
}

// synced waits until the replica's link is up and no sync is running.
func synced(tb testing.TB, r *server, timeout time.Duration) {
	tb.Helper()
	testkit.Eventually(tb, timeout, r.kind+" replica's master_link_status:up with no sync in progress", func() (bool, string) {
		st, sp := r.info("replication", "master_link_status"), r.info("replication", "master_sync_in_progress")
		return st == "up" && sp == "0", "master_link_status:" + st + " master_sync_in_progress:" + sp
	})
}

// onlineReplicas waits until the primary lists n replicas online.
func onlineReplicas(tb testing.TB, p *server, n int) {
	tb.Helper()
	testkit.Eventually(tb, 2*startTimeout, fmt.Sprintf("%s primary to list %d replicas online", p.kind, n), func() (bool, string) {
		v := p.c.Info(context.Background(), "replication").Val()
		return strings.Count(v, "state=online") == n, v
	})
}

// fill writes n keys (strings of 16 bytes under 15-byte names, one in
// ten a 4-field hash) in pipelines of 10 000.
func fill(tb testing.TB, s *server, n int) { fillShape(tb, s, n, false) }

// fillShape is fill, or with stringsOnly n strings of 16 bytes under
// 16-byte names.
func fillShape(tb testing.TB, s *server, n int, stringsOnly bool) {
	tb.Helper()
	ctx := context.Background()
	for base := 0; base < n; base += 10000 {
		p := s.c.Pipeline()
		for i := base; i < min(base+10000, n); i++ {
			if stringsOnly {
				p.Set(ctx, fmt.Sprintf("key:%012d", i), fmt.Sprintf("%016d", i), 0)
				continue
			}
			if i%10 == 0 {
				p.HSet(ctx, fmt.Sprintf("hash:%010d", i), "a", i, "b", "bee", "c", "sea", "d", "dee")
			} else {
				p.Set(ctx, fmt.Sprintf("key:%011d", i), fmt.Sprintf("%016d", i), 0)
			}
		}
		if _, err := p.Exec(ctx); err != nil {
			tb.Fatal(err)
		}
	}
}

// steadyWriter writes 20 000 SETs a second to s (100 pipelined every
// 5 ms) until the returned stop is called.
func steadyWriter(tb testing.TB, s *server) (stop func() int64) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	var written atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		ctx := context.Background()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-t.C:
			}
			p := s.c.Pipeline()
			for j := range 100 {
				p.Set(ctx, "load:"+strconv.Itoa((i*100+j)%50000), i, 0)
			}
			if _, err := p.Exec(ctx); err != nil {
				tb.Error(err)
				return
			}
			written.Add(100)
		}
	}()
	return func() int64 { close(done); wg.Wait(); return written.Load() }
}

// lag measures n probes: SET a fresh value on the primary, then GET it on
// the replica in a tight loop until it is there; one probe every 2 ms.
func lag(tb testing.TB, primary, replica *server, n int) []time.Duration {
	tb.Helper()
	ctx := context.Background()
	pc := redis.NewClient(&redis.Options{Network: "unix", Addr: primary.sock, PoolSize: 1})
	rc := redis.NewClient(&redis.Options{Network: "unix", Addr: replica.sock, PoolSize: 1})
	defer pc.Close()
	defer rc.Close()
	out := make([]time.Duration, 0, n)
	for i := range n {
		v := strconv.Itoa(i)
		start := time.Now()
		if err := pc.Set(ctx, "probe", v, 0).Err(); err != nil {
			tb.Fatal(err)
		}
		for {
			if got, _ := rc.Get(ctx, "probe").Result(); got == v {
				break
			}
			if time.Since(start) > 10*time.Second {
				tb.Fatalf("the %s replica never showed probe=%s", replica.kind, v)
			}
		}
		out = append(out, time.Since(start))
		time.Sleep(2*time.Millisecond - min(time.Since(start), 2*time.Millisecond))
	}
	return out
}

// pct returns the q quantile of ds (sorted in place).
func pct(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[min(int(float64(len(ds))*q), len(ds)-1)]
}

// newLink builds two namespaces with "repl" in their names, removed at the
// end of the test.
func newLink(tb testing.TB) *netns.Link {
	tb.Helper()
	l, err := netns.New(netns.Options{Prefix: "repl"})
	testkit.Require(tb, "two network namespaces joined by a veth pair", err)
	tb.Cleanup(func() {
		if err := l.Close(); err != nil {
			tb.Errorf("removing the namespaces: %v", err)
		}
	})
	return l
}

func us(d time.Duration) string { return fmt.Sprintf("%.0f µs", float64(d)/1e3) }

// ringDir makes a directory for a ring listener on /dev/shm when there is
// one (removed at the end).
func ringDir(tb testing.TB) string {
	tb.Helper()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		d, err := os.MkdirTemp("/dev/shm", "goblin-replbench-")
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { os.RemoveAll(d) })
		return d
	}
	return tb.TempDir()
}
