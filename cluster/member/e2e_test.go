package member_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

func TestMain(m *testing.M) { testproc.Main(m) }

// node is one cluster member under test, goblin-server or redis-server.
type node struct {
	name          string
	port, busPort int
	addr, dir     string
	proc          *testproc.Proc
	c             *redis.Client
}

func startGoblin(t *testing.T, extra ...string) *node {
	t.Helper()
	bin := testproc.Build(t, "./cmd/goblin-server")
	var n *node
	// A free port can be taken by another process between the pick and
	// the bind (many tests start servers at once): a node that could not
	// bind is started again on new ports, rather than its address
	// reaching someone else's server.
	for try := 0; ; try++ {
		ports := testproc.FreeTCPPorts(t, 2)
		dir := t.TempDir()
		n = &node{name: "goblin", port: ports[0], busPort: ports[1], addr: "127.0.0.1:" + strconv.Itoa(ports[0]), dir: dir}
		args := []string{"--listen", "tcp://" + n.addr, "--metrics", "off", "--dir", dir, "--cluster-enabled", "yes",
			"--cluster-port", strconv.Itoa(n.busPort), "--cluster-node-timeout", "2000"}
		n.proc = testproc.Start(t, bin, append(args, extra...)...)
		deadline := time.Now().Add(30 * time.Second)
		for !n.proc.Exited() && !strings.Contains(n.proc.Log(), "msg=ready") && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if !n.proc.Exited() || try == 2 {
			break
		}
		t.Logf("goblin-server on %s exited at start (a port taken meanwhile?), starting it again", n.addr)
	}
	testproc.WaitDial(t, "tcp", n.addr, 30*time.Second)
	n.c = redis.NewClient(&redis.Options{Addr: n.addr})
	t.Cleanup(func() { n.c.Close() })
	return n
}

func startRedis(t *testing.T, extra ...string) *node {
	t.Helper()
	r := testproc.StartRedisClusterNode(t, append([]string{"--cluster-node-timeout", "2000"}, extra...)...)
	n := &node{name: "redis", port: r.Port, busPort: r.BusPort, addr: r.Addr, dir: r.Dir, proc: r.Proc}
	n.c = redis.NewClient(&redis.Options{Addr: n.addr})
	t.Cleanup(func() { n.c.Close() })
	return n
}

func (n *node) id(t *testing.T) string {
	t.Helper()
	id, err := n.c.ClusterMyID(context.Background()).Result()
	if err != nil || len(id) != 40 {
		t.Fatalf("%s CLUSTER MYID: %q %v", n.name, id, err)
	}
	return id
}

func (n *node) do(t *testing.T, args ...any) any {
	t.Helper()
	v, err := n.c.Do(context.Background(), args...).Result()
	if err != nil {
		t.Fatalf("%s %v: %v", n.name, args, err)
	}
	return v
}

func (n *node) meet(t *testing.T, o *node) {
	t.Helper()
	n.do(t, "CLUSTER", "MEET", "127.0.0.1", o.port, o.busPort)
}

// line returns n's CLUSTER NODES line about id.
func (n *node) line(id string) string {
	out, err := n.c.ClusterNodes(context.Background()).Result()
	if err != nil {
		return "error: " + err.Error()
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, id+" ") {
			return l
		}
	}
	return "no line for " + id + " in:\n" + out
}

// sees reports whether n lists id with the flag and connected.
func sees(n *node, id, flag string) (bool, string) {
	l := n.line(id)
	f := strings.Fields(l)
	if len(f) < 8 {
		return false, n.name + ": " + l
	}
	flags := "," + f[2] + ","
	return strings.Contains(flags, ","+flag+",") && !strings.Contains(flags, "handshake") && f[7] == "connected", n.name + ": " + l
}

// TestMeetRedisServer: a goblin node and a redis-server 7.0 node MEET
// (each way round), and each then lists the other, under its real id, as
// a connected master at its address; slots each adds show up on the
// other's CLUSTER NODES, carried by the bus's slot bitmap.
func TestMeetRedisServer(t *testing.T) {
	t.Parallel()
	for _, who := range []string{"goblin-meets", "redis-meets"} {
		t.Run(who, func(t *testing.T) {
			g, r := startGoblin(t), startRedis(t)
			gid, rid := g.id(t), r.id(t)
			g.do(t, "CLUSTER", "ADDSLOTSRANGE", 0, 99)
			r.do(t, "CLUSTER", "ADDSLOTSRANGE", 100, 16383)
			if who == "goblin-meets" {
				g.meet(t, r)
			} else {
				r.meet(t, g)
			}
			testkit.Eventually(t, 20*time.Second, "goblin and redis-server each listing the other as a connected master", func() (bool, string) {
				ok1, s1 := sees(g, rid, "master")
				ok2, s2 := sees(r, gid, "master")
				return ok1 && ok2, s1 + " | " + s2
			})
			testkit.Eventually(t, 20*time.Second, "redis-server listing goblin at its address with slots 0-99", func() (bool, string) {
				l := r.line(gid)
				return strings.Contains(l, "127.0.0.1:"+strconv.Itoa(g.port)+"@"+strconv.Itoa(g.busPort)) && strings.HasSuffix(l, " 0-99"), l
			})
			testkit.Eventually(t, 20*time.Second, "goblin listing redis-server's slots 100-16383 and cluster_state:ok on both", func() (bool, string) {
				l := g.line(rid)
				gi, _ := g.c.ClusterInfo(context.Background()).Result()
				ri, _ := r.c.ClusterInfo(context.Background()).Result()
				return strings.HasSuffix(l, " 100-16383") && strings.Contains(gi, "cluster_state:ok") && strings.Contains(ri, "cluster_state:ok"), l + "\n" + gi + "\n" + ri
			})
			// Epochs: both started at config epoch 0; the collision rule
			// gives them distinct ones.
			testkit.Eventually(t, 20*time.Second, "distinct config epochs after the collision rule", func() (bool, string) {
				a, b := strings.Fields(g.line(gid)), strings.Fields(g.line(rid))
				return len(a) > 6 && len(b) > 6 && a[6] != b[6], g.line(gid) + " | " + g.line(rid)
			})
			// Keys route by the shared map: a slot-0 key on goblin, the
			// rest redirected to redis-server.
			ctx := context.Background()
			if err := g.c.Set(ctx, "{06S}a", "1", 0).Err(); err != nil { // slot 0
				t.Errorf("SET in goblin's slot: %v", err)
			}
			if err := g.c.Set(ctx, "foo", "1", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "MOVED 12182 127.0.0.1:"+strconv.Itoa(r.port)) {
				t.Errorf("SET foo on goblin: %v, want MOVED 12182 to redis-server", err)
			}
		})
	}
}

// TestNodesConfRestart: nodes.conf is written in Redis's format and read
// back at start: a restarted goblin node keeps its id, epochs and slots
// and rejoins.
func TestNodesConfRestart(t *testing.T) {
	t.Parallel()
	g := startGoblin(t)
	id := g.id(t)
	g.do(t, "CLUSTER", "ADDSLOTS", 5, 6, 7, 100)
	g.do(t, "CLUSTER", "BUMPEPOCH")
	conf := filepath.Join(g.dir, "nodes.conf")
	testkit.Eventually(t, 10*time.Second, "nodes.conf holding the myself line with slots 5-7 100", func() (bool, string) {
		b, _ := os.ReadFile(conf)
		s := string(b)
		return strings.Contains(s, id+" ") && strings.Contains(s, "myself,master - 0 0 1 connected 5-7 100") && strings.Contains(s, "vars currentEpoch 1 lastVoteEpoch 0"), s
	})
	// redis-server reads goblin's nodes.conf as its own.
	rdir := t.TempDir()
	b, _ := os.ReadFile(conf)
	ports := testproc.FreeTCPPorts(t, 2)
	_ = os.WriteFile(filepath.Join(rdir, "nodes.conf"), []byte(strings.Replace(string(b), ":"+strconv.Itoa(g.port)+"@"+strconv.Itoa(g.busPort), ":"+strconv.Itoa(ports[0])+"@"+strconv.Itoa(ports[1]), 1)), 0o644)
	rp := testproc.Start(t, testkit.Need(t, "redis-server", "reading goblin's nodes.conf"), "--port", strconv.Itoa(ports[0]), "--cluster-port", strconv.Itoa(ports[1]),
		"--bind", "127.0.0.1", "--cluster-enabled", "yes", "--dir", rdir, "--save", "", "--appendonly", "no")
	testproc.WaitDial(t, "tcp", "127.0.0.1:"+strconv.Itoa(ports[0]), 20*time.Second)
	rc := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(ports[0])})
	defer rc.Close()
	if rid := rc.ClusterMyID(context.Background()).Val(); rid != id {
		t.Errorf("redis-server loaded goblin's nodes.conf as id %q, want %s (log: %s)", rid, id, rp.Log())
	}
	g.proc.Stop(10 * time.Second)
	args := g.proc.Cmd.Args[1:]
	g2 := exec.Command(g.proc.Cmd.Path, args...)
	p2, err := testproc.StartCmd(g2)
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Stop(10 * time.Second)
	testproc.WaitDial(t, "tcp", g.addr, 30*time.Second)
	if got := g.id(t); got != id {
		t.Errorf("restarted node's id %s, want %s", got, id)
	}
	if l := g.line(id); !strings.HasSuffix(l, " 1 connected 5-7 100") {
		t.Errorf("restarted node's line %q, want config epoch 1 and slots 5-7 100", l)
	}
}
