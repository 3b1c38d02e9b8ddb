package cluster_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testproc"
)

func TestMain(m *testing.M) { testproc.Main(m) }

// node ids of the three-node test cluster.
var ids = []string{
	"1111111111111111111111111111111111111111",
	"2222222222222222222222222222222222222222",
	"3333333333333333333333333333333333333333",
}

// testCluster is three goblin-server processes on loopback sharing one
// configuration file.
type testCluster struct {
	ports []int
	conf  string
	procs []*testproc.Proc
}

// freeTCPPorts returns n loopback ports free a moment ago: the cluster
// file must name each node's port before the node starts.
func freeTCPPorts(t *testing.T, n int) []int {
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// startCluster starts three nodes owning 0-5460, 5461-10922 and
// 10923-16383.
func startCluster(t *testing.T) *testCluster {
	t.Helper()
	bin := testproc.Build(t, "./cmd/goblin-server")
	c := &testCluster{ports: freeTCPPorts(t, 3), conf: filepath.Join(t.TempDir(), "cluster.conf")}
	ranges := []string{"0-5460", "5461-10922", "10923-16383"}
	var b strings.Builder
	b.WriteString("# the e2e test's cluster\nepoch 1\n")
	for i, id := range ids {
		fmt.Fprintf(&b, "node %s tcp://127.0.0.1:%d slots %s\n", id, c.ports[i], ranges[i])
	}
	if err := os.WriteFile(c.conf, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		p := testproc.Start(t, bin, "--metrics", "off", "--listen", "tcp://127.0.0.1:"+strconv.Itoa(c.ports[i]),
			"--cluster-config", c.conf, "--cluster-node", id)
		c.procs = append(c.procs, p)
	}
	for _, p := range c.procs {
		p.WaitLog(t, `msg=ready`, 60*time.Second)
	}
	return c
}

func (c *testCluster) addr(i int) string { return "127.0.0.1:" + strconv.Itoa(c.ports[i]) }

func (c *testCluster) client(t *testing.T) *redis.ClusterClient {
	cc := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs: []string{c.addr(0), c.addr(1), c.addr(2)}, MaxRedirects: 16,
		ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second,
	})
	t.Cleanup(func() { cc.Close() })
	return cc
}

// workload runs ops operations from each of workers goroutines, each over
// its own keys (so it knows every value), pipelined in batches of 64:
// SET, GET, INCRBY, DEL, EXISTS, MSET and MGET on hash-tagged keys of one
// slot, APPEND and GETRANGE. Every reply is checked against the model.
func workload(t *testing.T, cc *redis.ClusterClient, workers, ops int) {
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- runWorker(ctx, cc, w, ops)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func runWorker(ctx context.Context, cc *redis.ClusterClient, w, ops int) error {
	rng := rand.New(rand.NewPCG(uint64(w), 42))
	model := map[string]string{}
	type check struct {
		cmd  redis.Cmder
		want func(redis.Cmder) error
	}
	key := func() string { return fmt.Sprintf("w%d:k%d", w, rng.IntN(2000)) }
	val := func() string { return strconv.FormatUint(rng.Uint64(), 36) }
	eqStr := func(want string, found bool) func(redis.Cmder) error {
		return func(c redis.Cmder) error {
			got, err := c.(*redis.StringCmd).Result()
			switch {
			case !found && err == redis.Nil:
				return nil
			case err != nil:
				return err
			case !found || got != want:
				return fmt.Errorf("got %q, want %q (present %v)", got, want, found)
			}
			return nil
		}
	}
	done := 0
	for done < ops {
		p := cc.Pipeline()
		var checks []check
		for range min(64, ops-done) {
			done++
			k := key()
			switch op := rng.IntN(10); op {
			case 0, 1, 2:
				v := val()
				model[k] = v
				checks = append(checks, check{p.Set(ctx, k, v, 0), nil})
			case 3, 4, 5:
				v, ok := model[k]
				checks = append(checks, check{p.Get(ctx, k), eqStr(v, ok)})
			case 6:
				delete(model, k)
				checks = append(checks, check{p.Del(ctx, k), nil})
			case 7:
				_, ok := model[k]
				n := int64(0)
				if ok {
					n = 1
				}
				checks = append(checks, check{p.Exists(ctx, k), func(c redis.Cmder) error {
					if got := c.(*redis.IntCmd).Val(); got != n {
						return fmt.Errorf("EXISTS %d, want %d", got, n)
					}
					return nil
				}})
			case 8: // multi-key, one slot through a hash tag
				tag := fmt.Sprintf("{w%d:t%d}", w, rng.IntN(200))
				a, b, va, vb := tag+"a", tag+"b", val(), val()
				model[a], model[b] = va, vb
				checks = append(checks, check{p.MSet(ctx, a, va, b, vb), nil})
				checks = append(checks, check{p.MGet(ctx, a, b, tag+"none"), func(c redis.Cmder) error {
					got := c.(*redis.SliceCmd).Val()
					if len(got) != 3 || got[0] != va || got[1] != vb || got[2] != nil {
						return fmt.Errorf("MGET %v, want [%s %s <nil>]", got, va, vb)
					}
					return nil
				}})
			case 9:
				v := val()
				model[k] += v
				want := model[k]
				checks = append(checks, check{p.Append(ctx, k, v), nil})
				checks = append(checks, check{p.GetRange(ctx, k, 0, -1), eqStr(want, true)})
			}
		}
		if _, err := p.Exec(ctx); err != nil && err != redis.Nil {
			return fmt.Errorf("worker %d: pipeline: %w", w, err)
		}
		for _, c := range checks {
			if err := c.cmd.Err(); err != nil && err != redis.Nil {
				return fmt.Errorf("worker %d: %v: %w", w, c.cmd.Args(), err)
			}
			if c.want != nil {
				if err := c.want(c.cmd); err != nil {
					return fmt.Errorf("worker %d: %v: %w", w, c.cmd.Args(), err)
				}
			}
		}
	}
	// Every key the model holds reads back at the end.
	for k, v := range model {
		if got, err := cc.Get(ctx, k).Result(); err != nil || got != v {
			return fmt.Errorf("worker %d: final GET %s = %q, %v; want %q", w, k, got, err, v)
		}
	}
	return nil
}

// TestClusterE2E: three goblin-server processes as a Redis Cluster, driven
// by go-redis's ClusterClient, redis-cli -c, redis-cli --cluster check and
// redis-benchmark --cluster.
func TestClusterE2E(t *testing.T) {
	c := startCluster(t)
	cc := c.client(t)

	t.Run("go-redis", func(t *testing.T) {
		ops := 1_000_000
		if raceEnabled {
			ops = 100_000
		}
		start := time.Now()
		workload(t, cc, 8, ops/8)
		t.Logf("%d operations, every reply checked, in %v", ops, time.Since(start).Round(time.Millisecond))
		// The keys really are spread: every node holds some.
		for i := range 3 {
			n, err := redis.NewClient(&redis.Options{Addr: c.addr(i)}).DBSize(context.Background()).Result()
			if err != nil || n == 0 {
				t.Errorf("node %d holds %d keys (%v)", i, n, err)
			}
		}
	})

	cli := testproc.LookPath(t, "redis-cli", "the cluster end-to-end test")
	t.Run("redis-cli -c", func(t *testing.T) {
		// foo hashes to 12182, node 3's: asked of node 1, redis-cli follows.
		if out := run(t, cli, "-c", "-p", strconv.Itoa(c.ports[0]), "set", "foo", "bar"); out != "OK" {
			t.Fatalf("SET through node 1: %q", out)
		}
		if out := run(t, cli, "-c", "-p", strconv.Itoa(c.ports[1]), "get", "foo"); out != "bar" {
			t.Fatalf("GET through node 2: %q", out)
		}
		if out := run(t, cli, "-p", strconv.Itoa(c.ports[0]), "get", "foo"); out != "MOVED 12182 "+c.addr(2) {
			t.Fatalf("GET without -c: %q", out)
		}
	})
	t.Run("redis-cli --cluster check", func(t *testing.T) {
		out := run(t, cli, "--cluster", "check", c.addr(0))
		for _, want := range []string{"[OK] All nodes agree about slots configuration.", "[OK] All 16384 slots covered."} {
			if !strings.Contains(out, want) {
				t.Errorf("check does not say %q:\n%s", want, out)
			}
		}
	})
	t.Run("redis-benchmark --cluster", func(t *testing.T) {
		bench := testproc.LookPath(t, "redis-benchmark", "redis-benchmark --cluster")
		out := run(t, bench, "--cluster", "-h", "127.0.0.1", "-p", strconv.Itoa(c.ports[0]), "-t", "set,get", "-n", "20000", "-c", "8", "-q")
		for _, want := range []string{"SET: ", "GET: ", "requests per second"} {
			if !strings.Contains(out, want) {
				t.Errorf("redis-benchmark --cluster output lacks %q:\n%s", want, out)
			}
		}
	})
}

// run runs a tool and returns its trimmed output; a failure fails the test.
func run(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", filepath.Base(bin), args, err, out)
	}
	return strings.TrimSpace(string(out))
}

