package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// TestSentinelFailover: redis-sentinel 7.0 (redis-server --sentinel, three
// of them, quorum 2) monitors a goblin primary with two goblin replicas. A
// go-redis FailoverClient writes and reads in a loop; the primary is
// SIGKILLed; the sentinels promote a replica, point the other one at it,
// and the client goes on. The test reports the time from the kill to the
// first write acknowledged after it, and the writes acknowledged before the
// kill that the new primary lacks. With WAIT 1 after each write (an
// acknowledgement only once a replica has the write) none may be lost.
func TestSentinelFailover(t *testing.T) {
	t.Parallel() // its own processes and sentinels; it reports the failover time, asserts none
	bin := testkit.Need(t, "redis-server", "redis-sentinel 7.0 (redis-server --sentinel) driving goblin's failover")
	for _, wait := range []bool{false, true} {
		name := "async"
		if wait {
			name = "wait1"
		}
		t.Run(name, func(t *testing.T) { sentinelFailover(t, bin, wait) })
	}
}

func sentinelFailover(t *testing.T, bin string, wait bool) {
	ctx := context.Background()
	primary := startServer(t)
	replicas := []*srv{
		startServer(t, "--replicaof", strings.Replace(primary.tcp, ":", " ", 1)),
		startServer(t, "--replicaof", strings.Replace(primary.tcp, ":", " ", 1)),
	}
	for _, r := range replicas {
		c := redis.NewClient(goblinOpts(r))
		linkUp(t, c)
		c.Close()
	}
	var sentinels []string
	var sentinelProcs []*testproc.Proc
	for range 3 {
		addr, p := startSentinel(t, bin, primary.tcp)
		sentinels, sentinelProcs = append(sentinels, addr), append(sentinelProcs, p)
	}
	for _, addr := range sentinels {
		sentinelSeesAll(t, addr, primary.tcp, replicas)
	}

	fc := redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName:    "m",
		SentinelAddrs: sentinels,
		DialTimeout:   300 * time.Millisecond,
		ReadTimeout:   500 * time.Millisecond,
		WriteTimeout:  500 * time.Millisecond,
		MaxRetries:    -1, // the loop retries, and counts
		PoolSize:      2,
	})
	defer fc.Close()
	w := &failoverWriter{c: fc, wait: wait}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); w.run(stop) }()
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		<-done
	}()

	// The load runs for 2 s (and at least 200 writes) before the kill.
	loadStart := time.Now()
	testkit.Eventually(t, 30*time.Second, "200 writes acknowledged and 2 s of load before the kill", func() (bool, string) {
		n, _, last := w.stats()
		return n >= 200 && time.Since(loadStart) >= 2*time.Second, fmt.Sprintf("%d acknowledged, last error %v", n, last)
	})
	killed := time.Now()
	w.markKill(killed)
	if err := primary.p.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL the primary: %v", err)
	}

	// A replica promoted, as every sentinel reports it, and the other one
	// following it. One condition, re-read on each poll: should the
	// sentinels fail over a second time, it follows them.
	clients := map[*srv]*redis.Client{}
	for _, r := range replicas {
		clients[r] = redis.NewClient(goblinOpts(r))
		defer clients[r].Close()
	}
	var promoted, other *srv
	settled := func() (bool, string) {
		var addrs []string
		for _, s := range sentinels {
			// Not settled while a sentinel sees the primary down or a
			// failover under way: under load a second failover can start
			// just after the first, and the replica that follows now
			// may be the primary a second later.
			if f := sentinelMasterFlags(s); f != "master" {
				return false, fmt.Sprintf("sentinel %s flags m %q", s, f)
			}
			addrs = append(addrs, sentinelMasterAddr(s))
		}
		promoted, other = nil, nil
		for i, r := range replicas {
			if !slices.ContainsFunc(addrs, func(a string) bool { return a != r.tcp }) {
				promoted, other = r, replicas[1-i]
			}
		}
		if promoted == nil {
			return false, fmt.Sprintf("the sentinels answer %v (old primary %s)", addrs, primary.tcp)
		}
		pc, oc := clients[promoted], clients[other]
		if role, err := pc.Do(ctx, "ROLE").Slice(); err != nil || len(role) == 0 || role[0] != "master" {
			return false, fmt.Sprintf("the sentinels name %s; its ROLE %v %v", promoted.tcp, role, err)
		}
		_, pport, _ := net.SplitHostPort(promoted.tcp)
		role, _ := oc.Do(ctx, "ROLE").Slice()
		host := infoField(t, oc, "replication", "master_host")
		port := infoField(t, oc, "replication", "master_port")
		link := infoField(t, oc, "replication", "master_link_status")
		return host == "127.0.0.1" && port == pport && link == "up", fmt.Sprintf("the sentinels name %s, a master; the other replica %s: ROLE %v, master %s:%s link %s",
			promoted.tcp, other.tcp, role, host, port, link)
	}
	testkit.Eventually(t, 60*time.Second, "every sentinel to name a former replica as the primary of m, its ROLE to say master, and the other replica to follow it with its link up", settled)
	testkit.Eventually(t, 60*time.Second, "the FailoverClient's first write acknowledged after the kill", func() (bool, string) {
		_, first, last := w.stats()
		return !first.IsZero(), fmt.Sprintf("last error %v", last)
	})
	// A few more rounds through the new primary, then stop and count.
	_, first, _ := w.stats()
	for n0, _, _ := w.stats(); ; {
		n, _, _ := w.stats()
		if n >= n0+100 {
			break
		}
		if time.Since(first) > 30*time.Second {
			t.Fatalf("the client wrote %d times in 30 s after the failover, want 100", n-n0)
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	<-done
	if w.readErr != nil {
		t.Fatal(w.readErr)
	}

	// Settled again (a second failover in between would have moved it).
	testkit.Eventually(t, 60*time.Second, "the sentinels, the promoted replica and the other replica to agree again after the load", settled)
	pc, oc := clients[promoted], clients[other]
	switches := 0
	for _, p := range sentinelProcs {
		switches = max(switches, strings.Count(p.Log(), "+switch-master"))
	}
	acked := w.ackedKeys()
	var lost []string
	for _, k := range acked {
		n, err := pc.Exists(ctx, k).Result()
		if err != nil {
			t.Fatalf("EXISTS %s on the new primary: %v", k, err)
		}
		if n == 0 {
			lost = append(lost, k)
		}
	}
	// The other replica has them as well, once it caught up.
	caughtUp(t, pc, oc)
	sameData(t, pc, oc)
	rate := float64(w.beforeKill) / killed.Sub(w.started).Seconds()
	t.Logf("WAIT 1 after each write: %v; one writer, SET then GET per key, %.0f writes/s before the kill; %d writes acknowledged (%d before the kill), %d lost %v; kill → first acknowledged write sent after it %v; promoted %s, other replica %s; failovers (+switch-master) %d",
		wait, rate, len(acked), w.beforeKill, len(lost), lost, first.Sub(killed).Round(time.Millisecond), promoted.tcp, other.tcp, switches)
	if wait && len(lost) > 0 {
		t.Fatalf("%d writes acknowledged after WAIT 1 are missing on the new primary: %v", len(lost), lost)
	}
}

// failoverWriter writes k:<n> = n through a FailoverClient in a loop and
// reads each key back; a write counts as acknowledged when SET answered
// OK (and, with wait, WAIT 1 answered at least 1).
type failoverWriter struct {
	c    *redis.Client
	wait bool

	mu         sync.Mutex
	acked      []string
	kill       time.Time // zero until the primary is killed
	beforeKill int       // acknowledged before kill
	first      time.Time // when the first write sent after kill was acknowledged
	started    time.Time // the loop's start
	lastErr    error
	readErr    error // a key read back with a value other than the one written
}

func (w *failoverWriter) run(stop chan struct{}) {
	ctx := context.Background()
	w.mu.Lock()
	w.started = time.Now()
	w.mu.Unlock()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		k, v := "k:"+strconv.Itoa(i), strconv.Itoa(i)
		start := time.Now()
		err := w.c.Set(ctx, k, v, 0).Err()
		if err == nil && w.wait {
			var n int64
			n, err = w.c.Do(ctx, "WAIT", 1, 1000).Int64()
			if err == nil && n < 1 {
				err = errors.New("WAIT 1: no replica acknowledged")
			}
		}
		if err == nil {
			got, gerr := w.c.Get(ctx, k).Result()
			if gerr == nil && got != v {
				w.mu.Lock()
				w.readErr = fmt.Errorf("GET %s = %q right after SET %s %s", k, got, k, v)
				w.mu.Unlock()
				return
			}
		}
		w.mu.Lock()
		if err != nil {
			w.lastErr = err
		} else {
			w.acked = append(w.acked, k)
			if w.kill.IsZero() || start.Before(w.kill) {
				w.beforeKill++
			} else if w.first.IsZero() {
				w.first = time.Now()
			}
		}
		w.mu.Unlock()
		if err != nil {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func (w *failoverWriter) markKill(t time.Time) {
	w.mu.Lock()
	w.kill = t
	w.mu.Unlock()
}

func (w *failoverWriter) stats() (acked int, first time.Time, lastErr error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked), w.first, w.lastErr
}

func (w *failoverWriter) ackedKeys() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.acked)
}

// startSentinel runs redis-server --sentinel monitoring the goblin at
// primary as "m" (quorum 2) and returns its address and process.
func startSentinel(t *testing.T, bin, primary string) (string, *testproc.Proc) {
	t.Helper()
	dir := t.TempDir()
	port := freeTCPPort(t)
	host, pport, _ := net.SplitHostPort(primary)
	conf := filepath.Join(dir, "sentinel.conf")
	text := fmt.Sprintf(`port %d
bind 127.0.0.1
daemonize no
dir %s
loglevel verbose
sentinel monitor m %s %s 2
sentinel down-after-milliseconds m 1000
sentinel failover-timeout m 5000
sentinel parallel-syncs m 1
`, port, dir, host, pport)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p := testproc.Start(t, bin, conf, "--sentinel")
	p.WaitLog(t, `\+monitor master m `, startTimeout)
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), p
}

// sentinelSeesAll waits until the sentinel at addr knows the primary, both
// replicas (flags exactly "slave": connected, not down) and the two other
// sentinels.
func sentinelSeesAll(t *testing.T, addr, primary string, replicas []*srv) {
	t.Helper()
	c := redis.NewSentinelClient(&redis.Options{Addr: addr})
	defer c.Close()
	ctx := context.Background()
	testkit.Eventually(t, 60*time.Second, "sentinel "+addr+" to see the primary "+primary+", both replicas and two other sentinels", func() (bool, string) {
		m, err := c.Master(ctx, "m").Result()
		if err != nil {
			return false, "SENTINEL MASTER m: " + err.Error()
		}
		if net.JoinHostPort(m["ip"], m["port"]) != primary || m["flags"] != "master" {
			return false, fmt.Sprintf("SENTINEL MASTER m: %s:%s flags %s", m["ip"], m["port"], m["flags"])
		}
		reps, err := c.Replicas(ctx, "m").Result()
		if err != nil {
			return false, "SENTINEL REPLICAS m: " + err.Error()
		}
		var seen []string
		for _, r := range reps {
			if r["flags"] == "slave" && r["master-link-status"] == "ok" {
				seen = append(seen, net.JoinHostPort(r["ip"], r["port"]))
			}
		}
		for _, r := range replicas {
			if !slices.Contains(seen, r.tcp) {
				return false, fmt.Sprintf("replicas up: %v of %v", seen, reps)
			}
		}
		sens, err := c.Sentinels(ctx, "m").Result()
		if err != nil {
			return false, "SENTINEL SENTINELS m: " + err.Error()
		}
		if len(sens) != 2 {
			return false, fmt.Sprintf("%d other sentinels: %v", len(sens), sens)
		}
		return true, ""
	})
}

// sentinelMasterAddr is SENTINEL GET-MASTER-ADDR-BY-NAME m, or the error.
// sentinelMasterFlags returns the flags the sentinel at addr keeps for
// master m ("master" when it sees it up and no failover is under way; it
// adds s_down, o_down, failover_in_progress...), or the error.
func sentinelMasterFlags(addr string) string {
	c := redis.NewSentinelClient(&redis.Options{Addr: addr, DialTimeout: time.Second, ReadTimeout: time.Second})
	defer c.Close()
	m, err := c.Master(context.Background(), "m").Result()
	if err != nil {
		return err.Error()
	}
	return m["flags"]
}

func sentinelMasterAddr(addr string) string {
	c := redis.NewSentinelClient(&redis.Options{Addr: addr, DialTimeout: time.Second, ReadTimeout: time.Second})
	defer c.Close()
	a, err := c.GetMasterAddrByName(context.Background(), "m").Result()
	if err != nil || len(a) != 2 {
		return fmt.Sprint(a, err)
	}
	return net.JoinHostPort(a[0], a[1])
}

// TestCommandAfterWaitIsServedAtOnce: a client whose WAIT was parked until
// a replica acknowledged gets its next command served at once, not when
// the transport's next periodic scan comes round (it was ~100 ms, which
// capped a WAIT-per-write client such as TestSentinelFailover's at about
// ten writes a second).
func TestCommandAfterWaitIsServedAtOnce(t *testing.T) {
	ctx := context.Background()
	p := startServer(t)
	r := startServer(t, "--replicaof", strings.Replace(p.tcp, ":", " ", 1))
	rc := redis.NewClient(goblinOpts(r))
	defer rc.Close()
	linkUp(t, rc)
	c := redis.NewClient(&redis.Options{Addr: p.tcp, PoolSize: 1})
	defer c.Close()
	var gets []time.Duration
	for i := range 15 {
		k := "w:" + strconv.Itoa(i)
		if err := c.Set(ctx, k, i, 0).Err(); err != nil {
			t.Fatal(err)
		}
		if n, err := c.Do(ctx, "WAIT", 1, 2000).Int64(); err != nil || n != 1 {
			t.Fatalf("WAIT 1 2000: %d, %v; want the replica's acknowledgement", n, err)
		}
		start := time.Now()
		if err := c.Get(ctx, k).Err(); err != nil {
			t.Fatal(err)
		}
		gets = append(gets, time.Since(start))
	}
	slices.Sort(gets)
	if med := gets[len(gets)/2]; med > 40*time.Millisecond {
		t.Fatalf("a GET right after an answered WAIT took %v (median of %d; all %v), want a round trip", med, len(gets), gets)
	}
}
