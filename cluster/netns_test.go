package cluster_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/netns"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
	"github.com/goblin-kv/goblin/transport"
)

// The environment of TestGoblinClusterClientTwoHosts's client process.
const (
	netnsRoleEnv = "GOBLIN_CLUSTER_NETNS_ROLE"
	netnsSeedEnv = "GOBLIN_CLUSTER_NETNS_SEED"
	netnsKeysEnv = "GOBLIN_CLUSTER_NETNS_KEYS"
	netnsHostEnv = "GOBLIN_CLUSTER_NETNS_HOST"
)

// TestGoblinClusterClientTwoHosts is the reshard across two network
// namespaces joined by a veth pair (two hosts in miniature, as the Aeron
// UDP transport's two-host test): the three nodes run in the first, at
// its address, each serving Aeron UDP (SBE) beside TCP; goblin's cluster
// client runs in the second as a process of its own (this test binary
// again), reaching every node over Aeron UDP with its own media driver
// while redis-cli --cluster reshard moves 1,000 slots between the nodes.
// Afterwards the client checks every key is on exactly one node, its new
// owner, with the last value it wrote. Needs root and ip(8).
func TestGoblinClusterClientTwoHosts(t *testing.T) {
	t.Parallel()
	if os.Getenv(netnsRoleEnv) == "client" {
		twoHostsClient(t)
		return
	}
	testkit.NeedRoot(t, "the cluster two-host test's network namespaces")
	cli := testkit.Need(t, "redis-cli", "redis-cli --cluster reshard")
	l, err := netns.New(netns.Options{Prefix: "gcl"})
	testkit.Require(t, "the cluster two-host test's network namespaces", err)
	t.Cleanup(func() { l.Close() })
	host := l.Addr[0].String()
	bin := testproc.Build(t, "./cmd/goblin-server")
	dir := t.TempDir()
	conf := filepath.Join(dir, "cluster.conf")
	ranges := []string{"0-5460", "5461-10922", "10923-16383"}
	var b strings.Builder
	b.WriteString("epoch 1\n")
	for i, id := range ids {
		// The namespace is the test's own: fixed ports cannot collide.
		fmt.Fprintf(&b, "node %s aeron:udp?endpoint=%s:%d|control=%s:%d|proto=sbe tcp://%s:%d slots %s\n",
			id, host, 40101+2*i, host, 40102+2*i, host, 7001+i, ranges[i])
	}
	if err := os.WriteFile(conf, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	var nodes []*testproc.Proc
	for i, id := range ids {
		args := append(l.Wrap(0)[1:], bin, "--metrics", "off", "--cluster-config", conf, "--cluster-node", id,
			"--protected-mode", "no", "--dir", t.TempDir(), // listening on the namespaces' addresses, no password
			"--listen", fmt.Sprintf("tcp://%s:%d", host, 7001+i),
			"--listen", fmt.Sprintf("aeron:udp?endpoint=%s:%d|control=%s:%d|proto=sbe|dir=%s", host, 40101+2*i, host, 40102+2*i,
				filepath.Join(dir, "aeron"+strconv.Itoa(i))))
		nodes = append(nodes, testproc.Start(t, l.Wrap(0)[0], args...))
	}
	for _, p := range nodes {
		p.WaitLog(t, `msg=ready`, 120*time.Second)
	}

	nkeys := 100_000
	if raceEnabled {
		nkeys = 20_000
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := l.Command(1, self, "-test.run", "^TestGoblinClusterClientTwoHosts$", "-test.v")
	child.Env = append(os.Environ(), netnsRoleEnv+"=client", netnsSeedEnv+"=tcp://"+host+":7001",
		netnsKeysEnv+"="+strconv.Itoa(nkeys), netnsHostEnv+"="+host)
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = child.Stdout
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	var log strings.Builder
	lines := bufio.NewScanner(stdout)
	for lines.Scan() && !strings.Contains(lines.Text(), "CLIENT LOADED") {
		log.WriteString(lines.Text() + "\n")
	}
	if lines.Err() != nil || !strings.Contains(lines.Text(), "CLIENT LOADED") {
		child.Wait()
		t.Fatalf("the client process did not load its keys:\n%s", log.String())
	}
	start := time.Now()
	out, err := l.Command(0, cli, "--cluster", "reshard", host+":7001", "--cluster-from", ids[0], "--cluster-to", ids[1],
		"--cluster-slots", "1000", "--cluster-yes").CombinedOutput()
	took := time.Since(start)
	stdin.Close() // the client stops writing and verifies
	for lines.Scan() {
		log.WriteString(lines.Text() + "\n")
	}
	werr := child.Wait()
	if err != nil {
		t.Fatalf("redis-cli --cluster reshard: %v\n%s", err, tail(string(out), 40))
	}
	if werr != nil {
		t.Fatalf("the client process in the second namespace failed (%v):\n%s", werr, log.String())
	}
	t.Logf("reshard of 1000 slots holding %d keys across the veth pair took %v; the client:\n%s", nkeys, took.Round(time.Millisecond), tail(log.String(), 8))
}

// twoHostsClient is the client process: load the keys, write and read them
// until stdin closes, then verify.
func twoHostsClient(t *testing.T) {
	ctx := context.Background()
	nkeys, _ := strconv.Atoi(os.Getenv(netnsKeysEnv))
	gc, err := client.ClusterOptions{Seeds: []string{os.Getenv(netnsSeedEnv)}, Prefer: []transport.Scheme{transport.Aeron}}.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer gc.Close()
	kv := goblinKV{gc}
	keys, model := loadKeys(ctx, t, kv, nkeys, 1000)
	if tg := gc.Target(0); !strings.HasPrefix(tg, "aeron:udp") {
		t.Fatalf("slot 0's node is reached over %q, want Aeron UDP", tg)
	}
	fmt.Println("CLIENT LOADED")
	done := make(chan struct{})
	go func() {
		bufio.NewReader(os.Stdin).ReadString('\n')
		close(done)
	}()
	rng := rand.New(rand.NewPCG(3, 4))
	ops := 0
	for n := 1; ; n++ {
		select {
		case <-done:
		default:
			k := keys[rng.IntN(len(keys))]
			v := "v" + strconv.Itoa(n) + ":" + k
			if err := kv.set(ctx, k, v); err != nil {
				t.Fatalf("SET %s: %v", k, err)
			}
			model[k] = v
			if got, err := kv.get(ctx, k); err != nil || got != v {
				t.Fatalf("GET %s after SET: %q, %v; want %q", k, got, err, v)
			}
			ops = n
			continue
		}
		break
	}
	moved, ask := gc.Redirects()
	fmt.Printf("%d SET+GET pairs during the reshard over Aeron UDP; %d MOVED and %d ASK followed\n", ops, moved, ask)
	if moved == 0 {
		t.Error("the client never saw MOVED")
	}
	got, err := kv.getMany(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		if got[i] != model[k] {
			t.Fatalf("key %s = %q after the reshard, want %q", k, got[i], model[k])
		}
	}
	// Every key once, on node 2.
	host := os.Getenv(netnsHostEnv)
	where := map[string]int{}
	for i := range 3 {
		c, err := client.Dial(ctx, fmt.Sprintf("tcp://%s:%d", host, 7001+i))
		if err != nil {
			t.Fatal(err)
		}
		cursor := "0"
		for {
			v, err := c.Do(ctx, "SCAN", cursor, "MATCH", "r:*", "COUNT", 1000)
			if err != nil || len(v.Array) != 2 {
				t.Fatalf("SCAN node %d: %v %v", i+1, v, err)
			}
			for _, k := range v.Array[1].Array {
				if j, dup := where[string(k.Str)]; dup && j != i {
					t.Fatalf("key %s on node %d and node %d", k.Str, j+1, i+1)
				}
				where[string(k.Str)] = i
			}
			if cursor = string(v.Array[0].Str); cursor == "0" {
				break
			}
		}
		c.Close()
	}
	var wrong error
	for _, k := range keys {
		if n, ok := where[k]; !ok || n != 1 {
			wrong = errors.Join(wrong, fmt.Errorf("key %s on node %d (present %v)", k, n+1, ok))
			break
		}
	}
	if wrong != nil || len(where) != len(keys) {
		t.Fatalf("%d keys after the reshard, want %d: %v", len(where), len(keys), wrong)
	}
	fmt.Printf("every one of the %d keys is on node 2 once, with its last value\n", len(keys))
}
