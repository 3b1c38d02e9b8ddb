package member_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/cluster"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// haNode is a goblin node of the failover tests: it can be killed and
// started again on the same ports, directory and nodes.conf.
type haNode struct {
	addr          string
	port, busPort int
	args          []string
	bin           string
	proc          *testproc.Proc
	c             *redis.Client
	id            string
}

// startHANodes starts n goblin cluster nodes (cluster-node-timeout 2000
// unless extra says otherwise); a cleanup stops them.
func startHANodes(tb testing.TB, n int, extra ...string) []*haNode {
	tb.Helper()
	return startHANodesOf(tb, "goblin", n, extra...)
}

// startHANodesOf starts n cluster nodes of kind "goblin" or "redis"
// (redis-server 7.0, no persistence but nodes.conf).
func startHANodesOf(tb testing.TB, kind string, n int, extra ...string) []*haNode {
	tb.Helper()
	var bin string
	if kind == "redis" {
		bin = testkit.Need(tb, "redis-server", "the redis-server peer of the failover benchmark")
	} else {
		bin = testproc.Build(tb, "./cmd/goblin-server")
	}
	var ns []*haNode
	// configure gives x fresh free ports and the arguments naming them.
	configure := func(x *haNode) {
		ports := testproc.FreeTCPPorts(tb, 2)
		x.port, x.busPort, x.addr = ports[0], ports[1], "127.0.0.1:"+strconv.Itoa(ports[0])
		x.args = []string{"--listen", "tcp://" + x.addr, "--metrics", "off", "--dir", tb.TempDir(),
			"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(ports[1]), "--cluster-node-timeout", "2000"}
		if kind == "redis" {
			x.args = []string{"--port", strconv.Itoa(ports[0]), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
				"--cluster-port", strconv.Itoa(ports[1]), "--cluster-config-file", "nodes.conf", "--dir", tb.TempDir(),
				"--save", "", "--appendonly", "no", "--cluster-node-timeout", "2000", "--repl-diskless-sync-delay", "0"}
		}
		x.args = append(x.args, extra...)
	}
	for range n {
		x := &haNode{bin: bin}
		configure(x)
		x.start(tb)
		ns = append(ns, x)
	}
	tb.Cleanup(func() {
		for _, x := range ns {
			if x.c != nil {
				x.c.Close()
			}
			x.proc.Stop(10 * time.Second)
			if tb.Failed() {
				tb.Logf("log of %s:\n%s", x.addr, lastLines(x.proc.Log(), 200))
			}
		}
	})
	for _, x := range ns {
		// A free port can be taken by another process between the pick
		// and the bind (sixty servers start at once at 30 nodes): a node
		// that exited at start is started again on new ports.
		for try := 1; ; try++ {
			err := testkit.Poll(30*time.Second, "tcp "+x.addr+" to accept", func() (bool, string) {
				c, err := net.DialTimeout("tcp", x.addr, time.Second)
				if err == nil {
					c.Close()
					return true, ""
				}
				return x.proc.Exited(), err.Error()
			})
			if err == nil && !x.proc.Exited() {
				break
			}
			if !x.proc.Exited() || try == 3 {
				tb.Fatalf("%s node %s did not start (try %d): %v\n%s", kind, x.addr, try, err, lastLines(x.proc.Log(), 20))
			}
			tb.Logf("%s node %s exited at start (a port taken meanwhile?), starting it on new ports:\n%s", kind, x.addr, lastLines(x.proc.Log(), 5))
			configure(x)
			x.start(tb)
		}
		x.c = redis.NewClient(&redis.Options{Addr: x.addr, DialTimeout: time.Second, ReadTimeout: 2 * time.Second})
		id, err := x.c.ClusterMyID(context.Background()).Result()
		if err != nil || len(id) != 40 {
			tb.Fatalf("%s CLUSTER MYID: %q %v", x.addr, id, err)
		}
		x.id = id
	}
	return ns
}

func lastLines(s string, n int) string {
	l := strings.Split(s, "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// start (re)starts the node's process with its arguments.
func (x *haNode) start(tb testing.TB) {
	tb.Helper()
	p, err := testproc.StartCmd(exec.Command(x.bin, x.args...))
	if err != nil {
		tb.Fatal(err)
	}
	x.proc = p
}

// kill SIGKILLs the node and waits for it to be gone.
func (x *haNode) kill(tb testing.TB) {
	tb.Helper()
	if err := x.proc.Signal(syscall.SIGKILL); err != nil {
		tb.Fatal(err)
	}
	if _, err := x.proc.Wait(10 * time.Second); err != nil {
		tb.Fatal(err)
	}
}

// haCreate makes a cluster of the nodes with redis-cli --cluster create
// and one replica per master, and waits for cluster_state:ok on every
// node and for --cluster check to be clean.
func haCreate(tb testing.TB, ns []*haNode) {
	tb.Helper()
	var addrs []string
	for _, x := range ns {
		addrs = append(addrs, x.addr)
	}
	clusterCreate(tb, addrs, 1) // waits for cluster_state:ok on every node
	haCheckClean(tb, ns[0].addr)
}

// haCheckClean waits for redis-cli --cluster check at addr to report a
// clean cluster.
func haCheckClean(tb testing.TB, addr string) {
	tb.Helper()
	checkCleanAt(tb, addr, 120*time.Second)
}

// nodesLine is one parsed CLUSTER NODES line.
type nodesLine struct {
	id, addr, flags, master string
	slots                   []string
}

func (l nodesLine) has(flag string) bool { return strings.Contains(","+l.flags+",", ","+flag+",") }

// clusterNodes parses x's CLUSTER NODES.
func clusterNodes(x *haNode) (map[string]nodesLine, string, error) {
	out, err := x.c.ClusterNodes(context.Background()).Result()
	if err != nil {
		return nil, "", err
	}
	return parseNodes(out), out, nil
}

// replicaOf returns, as x sees it, the node among ns replicating m.
func replicaOf(x *haNode, m *haNode, ns []*haNode) *haNode {
	view, _, err := clusterNodes(x)
	if err != nil {
		return nil
	}
	for _, y := range ns {
		if l, ok := view[y.id]; ok && l.has("slave") && l.master == m.id {
			return y
		}
	}
	return nil
}

// slotsOf returns the slots x owns in view's eyes.
func slotsOf(view map[string]nodesLine, id string) map[int]bool {
	s := map[int]bool{}
	for _, r := range view[id].slots {
		if strings.HasPrefix(r, "[") {
			continue
		}
		a, b, isRange := strings.Cut(r, "-")
		lo, _ := strconv.Atoi(a)
		hi := lo
		if isRange {
			hi, _ = strconv.Atoi(b)
		}
		for k := lo; k <= hi; k++ {
			s[k] = true
		}
	}
	return s
}

// masterWithReplica finds a master of ns, its replica and its slots, as
// the master itself sees them.
func masterWithReplica(tb testing.TB, ns []*haNode, skip *haNode) (m, r *haNode, slots map[int]bool) {
	tb.Helper()
	testkit.Eventually(tb, 30*time.Second, "a master with slots listing a connected replica", func() (bool, string) {
		for _, x := range ns {
			if x == skip {
				continue
			}
			view, out, err := clusterNodes(x)
			if err != nil || !view[x.id].has("master") {
				continue
			}
			rep := replicaOf(x, x, ns)
			if rep == nil || len(view[x.id].slots) == 0 || view[rep.id].has("fail") || view[rep.id].has("fail?") {
				continue
			}
			// A replica that never synchronised cannot be elected
			// (redis-server's validity check).
			if info, _ := rep.c.Info(context.Background(), "replication").Result(); strings.Contains(info, "master_link_status:up") {
				m, r, slots = x, rep, slotsOf(view, x.id)
				_ = out
				return true, ""
			}
		}
		return false, "none yet (or its replica's link is not up)"
	})
	return m, r, slots
}

// A model of the values of a key set written by one worker each, which
// every read is checked against.
type keyModel struct {
	acked  string // the last acknowledged value ("" : none yet)
	ackAt  time.Time
	maybe  []string     // values of writes that failed after it: they may have been applied
	recent []ackedWrite // the last acknowledged writes, oldest first
	nacked int          // acknowledged writes in all
}

type ackedWrite struct {
	val string
	at  time.Time
}

// loadRun is the go-redis ClusterClient load of the failover tests: each
// worker owns keys, alternates SET (a fresh value) and GET, and checks
// every GET against its model.
type loadRun struct {
	cc        *redis.ClusterClient
	stop      atomic.Bool
	wg        sync.WaitGroup
	ops, errs atomic.Int64
	lastErr   atomic.Pointer[string]
	lastErrAt atomic.Int64 // unix ns

	mu         sync.Mutex
	violations []string
	lost       int // acknowledged writes the failover lost (asynchronous replication)
	killAt     time.Time
	deadAt     time.Time // the killed process reaped: a write issued later cannot reach it
	deadSlots  map[int]bool
	firstWrite time.Time // first acknowledged write to a dead slot issued after killAt
	seenAfter  map[string]bool
}

// newLoad makes the ClusterClient. go-redis v9 keeps sending a dead
// master's slots to it until it reloads the slot map, which it does on
// -MOVED or every ClusterStateReloadInterval (60 s by default): a
// failover needs a short interval, as Redis Cluster with go-redis does.
func newLoad(addrs []string) *loadRun {
	cc := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs: addrs, MaxRedirects: 4, DialTimeout: 300 * time.Millisecond, ReadTimeout: 500 * time.Millisecond,
		WriteTimeout: 500 * time.Millisecond, MaxRetries: 1, MinRetryBackoff: 10 * time.Millisecond,
		MaxRetryBackoff: 100 * time.Millisecond, PoolSize: 4, DialerRetries: 1,
		ClusterStateReloadInterval: 500 * time.Millisecond,
	})
	return &loadRun{cc: cc, seenAfter: map[string]bool{}}
}

// start runs workers goroutines, each over keysPer keys of its own.
func (lr *loadRun) start(workers, keysPer int) {
	for w := range workers {
		lr.wg.Add(1)
		go func() {
			defer lr.wg.Done()
			lr.worker(w, keysPer)
		}()
	}
}

func (lr *loadRun) violate(format string, a ...any) {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	if len(lr.violations) < 20 {
		lr.violations = append(lr.violations, fmt.Sprintf(format, a...))
	}
}

func (lr *loadRun) noteErr(err error) {
	lr.errs.Add(1)
	s := err.Error()
	lr.lastErr.Store(&s)
	lr.lastErrAt.Store(time.Now().UnixNano())
}

func (lr *loadRun) lastError() string {
	if p := lr.lastErr.Load(); p != nil {
		return *p
	}
	return "none"
}

func (lr *loadRun) worker(w, keysPer int) {
	ctx := context.Background()
	keys := make([]string, keysPer)
	models := make([]keyModel, keysPer)
	for i := range keys {
		keys[i] = fmt.Sprintf("ha:%d:%d", w, i)
	}
	seq := 0
	for i := 0; !lr.stop.Load(); i = (i + 1) % keysPer {
		k, m := keys[i], &models[i]
		seq++
		val := fmt.Sprintf("%d-%d", w, seq)
		issued := time.Now()
		err := lr.cc.Set(ctx, k, val, 0).Err()
		lr.ops.Add(1)
		if err != nil {
			lr.noteErr(err)
			m.maybe = append(m.maybe, val)
			time.Sleep(5 * time.Millisecond)
		} else {
			now := time.Now()
			m.acked, m.ackAt, m.maybe = val, now, m.maybe[:0]
			m.recent = append(m.recent, ackedWrite{val, now})
			m.nacked++
			if len(m.recent) > 16 {
				m.recent = m.recent[1:]
			}
			lr.mu.Lock()
			if !lr.deadAt.IsZero() && issued.After(lr.deadAt) && lr.deadSlots[int(cluster.Slot([]byte(k)))] && lr.firstWrite.IsZero() {
				lr.firstWrite = now
			}
			lr.mu.Unlock()
		}
		got, err := lr.cc.Get(ctx, k).Result()
		lr.ops.Add(1)
		if errors.Is(err, redis.Nil) {
			got, err = "", nil
		}
		if err != nil {
			lr.noteErr(err)
			time.Sleep(5 * time.Millisecond)
			continue
		}
		lr.check(k, m, got)
	}
}

// check is the model's rule for a read of k that returned got ("" for
// nil): the last acknowledged value, or a value of a write that failed
// after it (it may have been applied). On the first read of a key of the
// killed master's slots after the kill, a value acknowledged within the
// second before the kill is accepted and counted as lost: Redis Cluster's
// replication is asynchronous, so a master acknowledges writes its
// replica may not have received when it dies.
func (lr *loadRun) check(k string, m *keyModel, got string) {
	if got == m.acked {
		return
	}
	for j, v := range m.maybe {
		if got == v {
			m.acked, m.ackAt = got, time.Now()
			m.maybe = append(m.maybe[:0], m.maybe[j+1:]...)
			return
		}
	}
	lr.mu.Lock()
	killAt, dead := lr.killAt, lr.deadSlots[int(cluster.Slot([]byte(k)))]
	first := !lr.seenAfter[k]
	if !killAt.IsZero() {
		lr.seenAfter[k] = true
	}
	lr.mu.Unlock()
	if !killAt.IsZero() && dead && first {
		// got must be an earlier acknowledged value (or nil before the
		// key's first write), every later one acknowledged within the
		// second before the kill (or after it: the kill is not instant).
		j := -1
		for i, r := range m.recent {
			if r.val == got {
				j = i
			}
		}
		ok := j >= 0 || got == "" && m.nacked == len(m.recent)
		for _, r := range m.recent[j+1:] {
			ok = ok && r.at.After(killAt.Add(-time.Second))
		}
		if ok {
			lr.mu.Lock()
			lr.lost += len(m.recent) - 1 - j
			lr.mu.Unlock()
			m.acked, m.ackAt, m.maybe = got, time.Now(), m.maybe[:0]
			m.recent = m.recent[:j+1]
			return
		}
	}
	lr.violate("GET %s = %q, want the acknowledged %q (at %v) or one of the unacknowledged %q (kill at %v, slot dead %v)",
		k, got, m.acked, m.ackAt.Format("15:04:05.000"), m.maybe, killAt.Format("15:04:05.000"), dead)
}

// markKill records the kill time and the killed master's slots.
func (lr *loadRun) markKill(at time.Time, slots map[int]bool) {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	lr.killAt, lr.deadSlots, lr.firstWrite, lr.deadAt = at, slots, time.Time{}, time.Time{}
	clear(lr.seenAfter)
}

// markDead records that the killed process is gone. Only writes issued
// after it count as writes to the new owner: one issued between the kill
// and the process's end may have reached the old master, and its
// acknowledgement be read late on a loaded machine.
func (lr *loadRun) markDead() {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	lr.deadAt = time.Now()
}

// firstWriteAfterKill returns the time from the kill to the first
// acknowledged write to the killed master's slots (0: none yet).
func (lr *loadRun) firstWriteAfterKill() time.Duration {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	if lr.firstWrite.IsZero() {
		return 0
	}
	return lr.firstWrite.Sub(lr.killAt)
}

func (lr *loadRun) halt() {
	lr.stop.Store(true)
	lr.wg.Wait()
	lr.cc.Close()
}

// TestFailoverUnderClusterClientLoad: six goblin nodes (three masters,
// a replica each, cluster-node-timeout 2000) serve a go-redis v9
// ClusterClient whose workers write fresh values and read them back,
// every read checked against a model. One master is SIGKILLed: its
// replica must be elected and take its slots, the client must go on
// (writes to the dead master's slots succeed again, and in the last
// seconds of the run no command fails), and every read must follow the
// model (acknowledged writes lost to asynchronous replication are
// counted and reported, as Redis Cluster loses them too). The time from
// the kill to the first acknowledged write to the dead master's slots
// is logged. The killed node, started again, must come back as a
// replica of the winner with its replication link up.
func TestFailoverUnderClusterClientLoad(t *testing.T) {
	t.Parallel()
	ns := startHANodes(t, 6)
	haCreate(t, ns)
	var addrs []string
	for _, x := range ns {
		addrs = append(addrs, x.addr)
	}
	lr := newLoad(addrs)
	lr.start(8, 64)
	defer lr.halt()
	m, rep, slots := masterWithReplica(t, ns, nil)
	time.Sleep(2 * time.Second) // load on a healthy cluster first
	if e := lr.errs.Load(); e != 0 {
		// A loaded machine can delay a PING past the 2 s timeout.
		t.Logf("%d commands failed before the kill (last: %s)", e, lr.lastError())
	}
	before := lr.ops.Load()
	killAt := time.Now()
	lr.markKill(killAt, slots)
	m.kill(t)
	lr.markDead()
	var elected time.Duration
	testkit.Eventually(t, 30*time.Second, "the killed master's replica "+rep.addr+" elected master with its "+strconv.Itoa(len(slots))+" slots", func() (bool, string) {
		view, out, err := clusterNodes(rep)
		if err != nil {
			return false, err.Error()
		}
		if view[rep.id].has("master") && len(slotsOf(view, rep.id)) == len(slots) {
			elected = time.Since(killAt)
			return true, ""
		}
		return false, out
	})
	testkit.Eventually(t, 30*time.Second, "an acknowledged write to the dead master's slots after the kill", func() (bool, string) {
		return lr.firstWriteAfterKill() > 0, fmt.Sprintf("%d commands, %d errors, last %s", lr.ops.Load(), lr.errs.Load(), lr.lastError())
	})
	firstWrite := lr.firstWriteAfterKill()
	// The client goes on: two seconds with no failed command.
	testkit.Eventually(t, 30*time.Second, "two seconds of load without a failed command after the failover", func() (bool, string) {
		quiet := time.Since(time.Unix(0, lr.lastErrAt.Load()))
		return quiet > 2*time.Second, fmt.Sprintf("last error %v ago: %s", quiet, lr.lastError())
	})
	// The old master comes back as a replica of the winner.
	m.start(t)
	testproc.WaitDial(t, "tcp", m.addr, 30*time.Second)
	testkit.Eventually(t, 30*time.Second, "the restarted "+m.addr+" a replica of the winner "+rep.addr+" (both views) with master_link_status:up", func() (bool, string) {
		v1, o1, err1 := clusterNodes(m)
		v2, o2, err2 := clusterNodes(rep)
		if err1 != nil || err2 != nil {
			return false, fmt.Sprint(err1, err2)
		}
		info, _ := m.c.Info(context.Background(), "replication").Result()
		return v1[m.id].has("slave") && v1[m.id].master == rep.id && v2[m.id].has("slave") && v2[m.id].master == rep.id &&
			!v2[m.id].has("fail") && strings.Contains(info, "master_link_status:up"), o1 + "\n" + o2 + "\n" + info
	})
	haCheckClean(t, rep.addr)
	time.Sleep(time.Second)
	after := lr.ops.Load()
	lr.halt()
	t.Logf("failover (cluster-node-timeout 2000 ms): replica elected %v after SIGKILL, first acknowledged write to the dead slots %v after it; %d commands, %d failed, %d acknowledged writes lost",
		elected.Round(time.Millisecond), firstWrite.Round(time.Millisecond), after, lr.errs.Load(), lr.lost)
	if after-before < 1000 {
		t.Errorf("only %d commands after the kill: the client did not go on", after-before)
	}
	for _, v := range lr.violations {
		t.Error(v)
	}
	// Replicated writes make the loss rare; a large loss is a bug.
	if lr.lost > 64 {
		t.Errorf("%d acknowledged writes lost in the failover", lr.lost)
	}
}
