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
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/cluster"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
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

// The extra transport startCluster gives each node besides loopback TCP
// (RESP), listed first in the file: none, a Unix socket, or Aeron UDP on
// loopback (the node's Go media driver inside goblin-server; a client
// dialling the target without dir= runs its own), each speaking SBE.
const (
	tcpOnly = ""
	viaUDS  = "uds"
	viaUDP  = "udp"
)

// startCluster starts three nodes owning 0-5460, 5461-10922 and
// 10923-16383, listening on loopback TCP (RESP) and on the extra
// transport named.
func startCluster(t *testing.T, extra string) *testCluster {
	t.Helper()
	bin := testproc.Build(t, "./cmd/goblin-server")
	dir := t.TempDir()
	c := &testCluster{ports: freeTCPPorts(t, 3), conf: filepath.Join(dir, "cluster.conf")}
	ranges := []string{"0-5460", "5461-10922", "10923-16383"}
	var b strings.Builder
	b.WriteString("# the e2e test's cluster\nepoch 1\n")
	listen := make([][]string, 3)
	for i, id := range ids {
		tcp := "tcp://127.0.0.1:" + strconv.Itoa(c.ports[i])
		listen[i] = []string{"--listen", tcp}
		targets := tcp
		switch extra {
		case viaUDS:
			sock := "uds://" + filepath.Join(dir, "n"+strconv.Itoa(i+1)+".sock") + "?proto=sbe"
			listen[i] = append(listen[i], "--listen", sock)
			targets = sock + " " + tcp
		case viaUDP:
			ports := testproc.FreeUDPPorts(t, 2)
			udp := fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d|control=127.0.0.1:%d|proto=sbe", ports[0], ports[1])
			listen[i] = append(listen[i], "--listen", udp+"|dir="+filepath.Join(dir, "aeron"+strconv.Itoa(i+1)))
			targets = udp + " " + tcp
		}
		fmt.Fprintf(&b, "node %s %s slots %s\n", id, targets, ranges[i])
	}
	if err := os.WriteFile(c.conf, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		args := append([]string{"--metrics", "off", "--cluster-config", c.conf, "--cluster-node", id}, listen[i]...)
		p := testproc.Start(t, bin, args...)
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
	t.Parallel()
	c := startCluster(t, tcpOnly)
	cc := c.client(t)

	t.Run("go-redis", func(t *testing.T) {
		ops := 1_000_000
		if raceEnabled {
			ops = 50_000
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

	cli := testkit.Need(t, "redis-cli", "the cluster end-to-end test")
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
	t.Run("goblin-client --cluster", func(t *testing.T) {
		gcli := testproc.Build(t, "./cmd/goblin-client")
		seed := "tcp://" + c.addr(0)
		if out := run(t, gcli, "--cluster", "--target", seed, "set", "{user1000}.following", "7"); out != "OK" {
			t.Fatalf("SET: %q", out)
		}
		if out := run(t, gcli, "--cluster", "--target", seed, "get", "{user1000}.following"); out != `"7"` {
			t.Fatalf("GET: %q", out)
		}
		// Without --cluster the seed answers MOVED for a slot it does not own.
		if out, _ := exec.Command(gcli, "--target", "tcp://"+c.addr(2), "get", "{user1000}.following").CombinedOutput(); !strings.Contains(string(out), "MOVED 3443 "+c.addr(0)) {
			t.Fatalf("GET without --cluster: %q", out)
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
		bench := testkit.Need(t, "redis-benchmark", "redis-benchmark --cluster")
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

// kv is what the reshard scenario needs of a cluster client: go-redis's
// ClusterClient or goblin's own.
// loadKeys writes nkeys keys "r:N" that fall in slots below slots, each
// with the value "v0:" + key, in pipelines of 1000, and returns the keys
// and the model of what they hold.
func loadKeys(ctx context.Context, t *testing.T, c kv, nkeys int, slots uint16) ([]string, map[string]string) {
	t.Helper()
	keys := make([]string, 0, nkeys)
	model := make(map[string]string, nkeys)
	for i := 0; len(keys) < nkeys; i++ {
		if k := "r:" + strconv.Itoa(i); cluster.Slot([]byte(k)) < slots {
			keys = append(keys, k)
		}
	}
	for i := 0; i < len(keys); i += 1000 {
		batch := keys[i:min(i+1000, len(keys))]
		vals := make([]string, len(batch))
		for j, k := range batch {
			vals[j] = "v0:" + k
			model[k] = vals[j]
		}
		if err := c.setMany(ctx, batch, vals); err != nil {
			t.Fatal(err)
		}
	}
	return keys, model
}

type kv interface {
	set(ctx context.Context, k, v string) error
	get(ctx context.Context, k string) (string, error)
	setMany(ctx context.Context, keys, vals []string) error // one pipeline
	getMany(ctx context.Context, keys []string) ([]string, error)
}

type goRedisKV struct{ cc *redis.ClusterClient }

func (g goRedisKV) set(ctx context.Context, k, v string) error { return g.cc.Set(ctx, k, v, 0).Err() }
func (g goRedisKV) get(ctx context.Context, k string) (string, error) {
	return g.cc.Get(ctx, k).Result()
}
func (g goRedisKV) setMany(ctx context.Context, keys, vals []string) error {
	p := g.cc.Pipeline()
	for i, k := range keys {
		p.Set(ctx, k, vals[i], 0)
	}
	_, err := p.Exec(ctx)
	return err
}
func (g goRedisKV) getMany(ctx context.Context, keys []string) ([]string, error) {
	p := g.cc.Pipeline()
	cmds := make([]*redis.StringCmd, len(keys))
	for i, k := range keys {
		cmds[i] = p.Get(ctx, k)
	}
	if _, err := p.Exec(ctx); err != nil {
		return nil, err
	}
	out := make([]string, len(keys))
	for i, c := range cmds {
		out[i] = c.Val()
	}
	return out, nil
}

// TestClusterReshard: redis-cli --cluster reshard moves 1,000 slots
// holding 100,000 keys from node 1 to node 2 while a go-redis client
// writes and reads those keys; afterwards every key is on exactly one
// node, the one owning its slot, with the last value written, and the
// client saw no error (redirects are followed inside go-redis).
func TestClusterReshard(t *testing.T) {
	t.Parallel()
	c := startCluster(t, tcpOnly)
	reshard(t, c, goRedisKV{c.client(t)})
}

// reshard is TestClusterReshard's scenario with any client.
func reshard(t *testing.T, c *testCluster, client kv) {
	cli := testkit.Need(t, "redis-cli", "redis-cli --cluster reshard")
	ctx := context.Background()
	t0 := time.Now()
	const slots = 1000
	nkeys := 100_000
	if raceEnabled {
		nkeys = 20_000
	}
	// Keys in slots 0-999: the slots reshard takes first from node 1.
	keys, model := loadKeys(ctx, t, client, nkeys, slots)
	t.Logf("loaded %d keys at %v", nkeys, time.Since(t0).Round(time.Millisecond))

	// The client: SET a new value, then GET it back, over random keys,
	// until the reshard is done.
	stop := make(chan struct{})
	clientErr := make(chan error, 1)
	var ops int
	go func() {
		rng := rand.New(rand.NewPCG(1, 2))
		for n := 1; ; n++ {
			select {
			case <-stop:
				clientErr <- nil
				return
			default:
			}
			k := keys[rng.IntN(len(keys))]
			v := "v" + strconv.Itoa(n) + ":" + k
			if err := client.set(ctx, k, v); err != nil {
				clientErr <- fmt.Errorf("SET %s: %w", k, err)
				return
			}
			model[k] = v
			if got, err := client.get(ctx, k); err != nil || got != v {
				clientErr <- fmt.Errorf("GET %s after SET: %q, %v; want %q", k, got, err, v)
				return
			}
			ops = n
		}
	}()
	start := time.Now()
	cmd := exec.Command(cli, "--cluster", "reshard", c.addr(0), "--cluster-from", ids[0], "--cluster-to", ids[1],
		"--cluster-slots", strconv.Itoa(slots), "--cluster-yes")
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	close(stop)
	if cerr := <-clientErr; cerr != nil {
		t.Errorf("the client during the reshard: %v", cerr)
	}
	if err != nil {
		t.Fatalf("redis-cli --cluster reshard: %v\n%s", err, tail(string(out), 40))
	}
	t.Logf("reshard of %d slots holding %d keys took %v; the client made %d SET+GET pairs meanwhile", slots, nkeys, took.Round(time.Millisecond), ops)

	// Every node now says node 2 owns 0-999.
	for i := range 3 {
		rc := redis.NewClient(&redis.Options{Addr: c.addr(i)})
		defer rc.Close()
		shards, err := rc.ClusterShards(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		owner := map[int64]string{}
		for _, sh := range shards {
			for _, r := range sh.Slots {
				for s := r.Start; s <= r.End; s++ {
					owner[s] = sh.Nodes[0].ID
				}
			}
		}
		if owner[0] != ids[1] || owner[999] != ids[1] || owner[1000] != ids[0] || len(owner) != 16384 {
			t.Errorf("node %d's map after the reshard: slot 0 %s, 999 %s, 1000 %s, %d slots owned", i+1, owner[0], owner[999], owner[1000], len(owner))
		}
	}
	// Every key exactly once, on its slot's owner, with its last value.
	where := map[string]int{}
	for i := range 3 {
		rc := redis.NewClient(&redis.Options{Addr: c.addr(i)})
		defer rc.Close()
		iter := rc.Scan(ctx, 0, "r:*", 1000).Iterator()
		for iter.Next(ctx) {
			k := iter.Val()
			if j, dup := where[k]; dup && j != i {
				t.Fatalf("key %s is on node %d and node %d", k, j+1, i+1)
			}
			where[k] = i
		}
		if err := iter.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if len(where) != len(keys) {
		t.Errorf("%d keys after the reshard, want %d", len(where), len(keys))
	}
	for _, k := range keys {
		if n, ok := where[k]; !ok || n != 1 {
			t.Fatalf("key %s (slot %d) is on node %d (present %v), want node 2", k, cluster.Slot([]byte(k)), n+1, ok)
		}
	}
	got, err := client.getMany(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		if got[i] != model[k] {
			t.Fatalf("key %s = %q after the reshard, want %q", k, got[i], model[k])
		}
	}
	t.Logf("verified at %v", time.Since(t0).Round(time.Millisecond))
	if out := run(t, cli, "--cluster", "check", c.addr(2)); !strings.Contains(out, "[OK] All nodes agree about slots configuration.") ||
		!strings.Contains(out, "[OK] All 16384 slots covered.") {
		t.Errorf("check after the reshard:\n%s", out)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// TestClusterReload: an edited file takes effect on SIGHUP (logged), a
// stale one (lower epoch) is refused on SIGHUP (logged) and by CLUSTER
// RELOAD (answered), and SAVECONFIG writes the map a SETSLOT changed.
func TestClusterReload(t *testing.T) {
	t.Parallel()
	c := startCluster(t, tcpOnly)
	rc := redis.NewClient(&redis.Options{Addr: c.addr(0)})
	defer rc.Close()
	ctx := context.Background()
	data, err := os.ReadFile(c.conf)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(strings.Replace(string(data), "epoch 1", "epoch 2", 1), "slots 0-5460", "slots 0-5459", 1)
	edited = strings.Replace(edited, "slots 5461-10922", "slots 5460-10922", 1)
	if err := os.WriteFile(c.conf, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := c.procs[0].Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	c.procs[0].WaitLog(t, `cluster configuration reloaded.*epoch=2`, 30*time.Second)
	if got := rc.Do(ctx, "CLUSTER", "NODES").String(); !strings.Contains(got, ids[0]+" "+c.addr(0)+"@") || !strings.Contains(got, "connected 0-5459") {
		t.Fatalf("CLUSTER NODES after the reload: %s", got)
	}
	// The file goes back to epoch 1, with comments: refused.
	commented := "# three local nodes share this file\n\n" + strings.Replace(string(data), "epoch 1", "epoch 1 # raise it on every edit", 1)
	if err := os.WriteFile(c.conf, []byte(commented), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := c.procs[0].Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	c.procs[0].WaitLog(t, `cluster configuration not reloaded.*epoch 1 is older than this node's 2`, 30*time.Second)
	if err := rc.Do(ctx, "CLUSTER", "RELOAD").Err(); err == nil || !strings.Contains(err.Error(), "a stale file") {
		t.Fatalf("CLUSTER RELOAD of a stale file: %v", err)
	}
	// SETSLOT moves slot 0 in memory; SAVECONFIG writes it, one epoch up,
	// without a myself line (the nodes share the file).
	if err := rc.Do(ctx, "CLUSTER", "SETSLOT", "0", "NODE", ids[2]).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Do(ctx, "CLUSTER", "SAVECONFIG").Err(); err != nil {
		t.Fatal(err)
	}
	saved, err := cluster.Load(c.conf, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if saved.Epoch != 3 || saved.Nodes[2].Slots[0] != (cluster.Range{First: 0, Last: 0}) || strings.Contains(mustRead(t, c.conf), "myself") {
		t.Fatalf("saved configuration:\n%s", mustRead(t, c.conf))
	}
	// The file's comments stay where they were.
	if got := mustRead(t, c.conf); !strings.HasPrefix(got, "# three local nodes share this file\n\n# the e2e test's cluster\nepoch 3 # raise it on every edit\n") {
		t.Fatalf("SAVECONFIG lost the file's comments:\n%s", got)
	}
	if err := rc.Do(ctx, "CLUSTER", "RELOAD").Err(); err != nil {
		t.Fatalf("CLUSTER RELOAD of the saved file: %v", err)
	}
}

func mustRead(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
