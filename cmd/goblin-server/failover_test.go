package main

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// FAILOVER (Redis 6.2's coordinated failover) between real processes:
// goblin → goblin, goblin → redis-server and redis-server → goblin, and
// its error replies byte for byte beside redis-server's.

// hostPort splits a "host:port" address.
func hostPort(t testing.TB, addr string) (string, int) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return h, n
}

// roleIs waits until ROLE's first element is want.
func roleIs(t testing.TB, c *redis.Client, name, want string) {
	t.Helper()
	testkit.Eventually(t, 30*time.Second, name+"'s ROLE to say "+want, func() (bool, string) {
		v, err := c.Do(context.Background(), "ROLE").Slice()
		if err != nil || len(v) == 0 {
			return false, fmt.Sprint(err)
		}
		return v[0] == want, fmt.Sprint(v)
	})
}

// failoverStateIs waits until INFO's master_failover_state is want.
func failoverStateIs(t testing.TB, c *redis.Client, name, want string) {
	t.Helper()
	testkit.Eventually(t, 30*time.Second, name+"'s master_failover_state:"+want, func() (bool, string) {
		got := infoField(t, c, "replication", "master_failover_state")
		return got == want, "master_failover_state:" + got
	})
}

// TestFailoverErrorsAsRedis: FAILOVER's refusals, each sent to a
// redis-server 7.0 pair (primary and replica) and to a goblin pair in the
// same state, answer the same bytes.
func TestFailoverErrorsAsRedis(t *testing.T) {
	ctx := context.Background()
	// Alone first: no replica.
	rport, rc, _ := redisPrimary(t)
	g := startServer(t)
	gc := redis.NewClient(goblinOpts(g))
	defer gc.Close()
	same := func(stage string, red, gob *redis.Client, args ...any) {
		t.Helper()
		want := fmt.Sprint(red.Do(ctx, args...).Err())
		got := fmt.Sprint(gob.Do(ctx, args...).Err())
		if got != want {
			t.Errorf("%s %v: goblin %q, redis %q", stage, args, got, want)
		}
	}
	alone := [][]any{
		{"FAILOVER"}, {"FAILOVER", "ABORT"}, {"FAILOVER", "TO"}, {"FAILOVER", "TIMEOUT", "0"},
		{"FAILOVER", "TIMEOUT", "-5"}, {"FAILOVER", "TIMEOUT", "x"}, {"FAILOVER", "FORCE"},
		{"FAILOVER", "TO", "h", "x"}, {"FAILOVER", "ABORT", "x"}, {"FAILOVER", "FORCE", "FORCE"},
		{"FAILOVER", "TIMEOUT", "10", "TIMEOUT", "5"}, {"FAILOVER", "TO", "h", "1", "FORCE", "TIMEOUT", "5"},
		{"FAILOVER", "TO", "h", "1", "TO", "h", "2"}, {"FAILOVER", "BOGUS"},
	}
	for _, a := range alone {
		same("no replica", rc, gc, a...)
	}

	// With a replica: the target checks, and FAILOVER on the replica.
	_, rrc, _ := redisPrimary(t, "--replicaof", "127.0.0.1", strconv.Itoa(rport))
	gr := startServer(t, "--replicaof", strings.Replace(g.tcp, ":", " ", 1))
	grc := redis.NewClient(goblinOpts(gr))
	defer grc.Close()
	for name, c := range map[string]*redis.Client{"redis": rrc, "goblin": grc} {
		testkit.Eventually(t, 30*time.Second, name+" replica's master_link_status:up", func() (bool, string) {
			st := infoField(t, c, "replication", "master_link_status")
			return st == "up", st
		})
	}
	testkit.Eventually(t, 30*time.Second, "both primaries to list their replica online", func() (bool, string) {
		a, b := infoField(t, rc, "replication", "slave0"), infoField(t, gc, "replication", "slave0")
		return strings.Contains(a, "state=online") && strings.Contains(b, "state=online"), a + " | " + b
	})
	withReplica := [][]any{
		{"FAILOVER", "TO", "127.0.0.1", "1"}, {"FAILOVER", "TO", "10.9.9.9", "6379", "TIMEOUT", "100"},
		{"FAILOVER", "TO", "127.0.0.1", "1", "FORCE"}, {"FAILOVER", "FORCE", "TIMEOUT", "100"},
		{"FAILOVER", "ABORT"},
	}
	for _, a := range withReplica {
		same("with a replica", rc, gc, a...)
	}
	for _, a := range [][]any{{"FAILOVER"}, {"FAILOVER", "ABORT"}, {"FAILOVER", "TIMEOUT", "0"}} {
		same("on the replica", rrc, grc, a...)
	}
	// Nothing above started a failover.
	for name, c := range map[string]*redis.Client{"redis": rc, "goblin": gc} {
		if st := infoField(t, c, "replication", "master_failover_state"); st != "no-failover" {
			t.Errorf("%s primary: master_failover_state:%s after refusals", name, st)
		}
	}
}

// TestFailoverGoblinToGoblin: a goblin primary hands over to its goblin
// replica.
//   - FAILOVER with no argument: the replica is promoted by PSYNC
//     FAILOVER and answers the old primary with +CONTINUE (a partial
//     resync, no full one); the old primary follows it; the data is the
//     same; writes to the old primary answer READONLY, writes to the new
//     one reach the old.
//   - FAILOVER TIMEOUT against a replica that cannot catch up (SIGSTOP):
//     master_failover_state:waiting-for-sync, a write waits (is not
//     answered) until the timeout aborts the failover, then succeeds.
//   - FAILOVER then FAILOVER ABORT: writes resume at once.
//   - FAILOVER TO … FORCE TIMEOUT: after the timeout the primary goes to
//     failover-in-progress although the replica is behind, and completes
//     once the replica runs again (it promotes itself; the old primary
//     takes a full resync from it).
func TestFailoverGoblinToGoblin(t *testing.T) {
	t.Parallel() // its own processes; its one time check is a lower bound (a held write waits for the timeout), which load cannot break
	ctx := context.Background()
	p := startServer(t)
	pc := redis.NewClient(goblinOpts(p))
	defer pc.Close()
	fill(t, pc, 2000)
	r := startServer(t, "--replicaof", strings.Replace(p.tcp, ":", " ", 1))
	rc := redis.NewClient(goblinOpts(r))
	defer rc.Close()
	linkUp(t, rc)
	caughtUp(t, pc, rc)
	oldID := infoField(t, pc, "replication", "master_replid")

	if err := pc.Do(ctx, "FAILOVER").Err(); err != nil {
		t.Fatalf("FAILOVER: %v", err)
	}
	roleIs(t, rc, "the replica", "master")
	roleIs(t, pc, "the old primary", "slave")
	linkUp(t, pc)
	failoverStateIs(t, pc, "the old primary", "no-failover")
	rHost, rPort := hostPort(t, r.tcp)
	if h, port := infoField(t, pc, "replication", "master_host"), infoInt(t, pc, "replication", "master_port"); h != rHost || int(port) != rPort {
		t.Fatalf("the old primary follows %s:%d, want the replica %s", h, port, r.tcp)
	}
	if id2 := infoField(t, rc, "replication", "master_replid2"); id2 != oldID {
		t.Fatalf("the new primary's master_replid2 %q, want the old primary's id %q", id2, oldID)
	}
	if ok, full := infoInt(t, rc, "stats", "sync_partial_ok"), infoInt(t, rc, "stats", "sync_full"); ok != 1 || full != 0 {
		t.Fatalf("the new primary served sync_partial_ok:%d sync_full:%d, want one partial resync and no full one", ok, full)
	}
	if err := pc.Set(ctx, "k", "v", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
		t.Fatalf("SET on the old primary: %v, want READONLY", err)
	}
	if err := rc.Set(ctx, "after", "failover", 0).Err(); err != nil {
		t.Fatalf("SET on the new primary: %v", err)
	}
	caughtUp(t, rc, pc)
	sameData(t, rc, pc)
	if v := pc.Get(ctx, "after").Val(); v != "failover" {
		t.Fatalf("the old primary reads %q for the new primary's write", v)
	}

	// Roles now: r primary, p replica. A replica that cannot catch up.
	pHost, pPort := hostPort(t, p.tcp)
	stopped := func(f func()) {
		t.Helper()
		if err := p.p.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		defer p.p.Signal(syscall.SIGCONT)
		if err := rc.Set(ctx, "behind", "1", 0).Err(); err != nil { // the stopped replica cannot acknowledge it
			t.Fatal(err)
		}
		f()
	}
	stopped(func() {
		if err := rc.Do(ctx, "FAILOVER", "TIMEOUT", "1500").Err(); err != nil {
			t.Fatalf("FAILOVER TIMEOUT 1500: %v", err)
		}
		if st := infoField(t, rc, "replication", "master_failover_state"); st != "waiting-for-sync" {
			t.Fatalf("master_failover_state:%s, want waiting-for-sync", st)
		}
		w := redis.NewClient(&redis.Options{Addr: r.tcp, PoolSize: 1})
		defer w.Close()
		start := time.Now()
		done := make(chan error, 1)
		go func() { done <- w.Set(ctx, "held", "1", 0).Err() }()
		select {
		case err := <-done:
			t.Fatalf("a write during the failover was answered after %v (%v), want it held", time.Since(start), err)
		case <-time.After(500 * time.Millisecond):
		}
		if err := <-done; err != nil {
			t.Fatalf("the held write after the aborted failover: %v", err)
		}
		if d := time.Since(start); d < 900*time.Millisecond {
			t.Fatalf("the held write was answered after %v, before the 1.5 s timeout", d)
		}
		failoverStateIs(t, rc, "the primary", "no-failover")
		if v, _ := rc.Do(ctx, "ROLE").Slice(); len(v) == 0 || v[0] != "master" {
			t.Fatalf("ROLE after the aborted failover: %v", v)
		}
		r.p.WaitLog(t, `Replica never caught up before timeout`, 10*time.Second)

		// FAILOVER, then ABORT.
		if err := rc.Do(ctx, "FAILOVER").Err(); err != nil {
			t.Fatal(err)
		}
		if err := rc.Do(ctx, "FAILOVER").Err(); err == nil || err.Error() != "ERR FAILOVER already in progress." {
			t.Fatalf("a second FAILOVER: %v", err)
		}
		if err := rc.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err == nil || err.Error() != "ERR REPLICAOF not allowed while failing over." {
			t.Fatalf("REPLICAOF during a failover: %v", err)
		}
		if err := rc.Do(ctx, "FAILOVER", "ABORT").Err(); err != nil {
			t.Fatalf("FAILOVER ABORT: %v", err)
		}
		if err := rc.Set(ctx, "after-abort", "1", 0).Err(); err != nil {
			t.Fatalf("a write after FAILOVER ABORT: %v", err)
		}

		// FORCE: the timeout passes, the primary follows the replica anyway.
		if err := rc.Do(ctx, "FAILOVER", "TO", pHost, pPort, "FORCE", "TIMEOUT", "300").Err(); err != nil {
			t.Fatalf("FAILOVER TO %s %d FORCE TIMEOUT 300: %v", pHost, pPort, err)
		}
		failoverStateIs(t, rc, "the primary", "failover-in-progress")
	})
	// The replica runs again: it takes PSYNC FAILOVER and is promoted.
	roleIs(t, pc, "the forced target", "master")
	failoverStateIs(t, rc, "the forcing primary", "no-failover")
	roleIs(t, rc, "the forcing primary", "slave")
	linkUp(t, rc)
	if err := pc.Set(ctx, "forced", "1", 0).Err(); err != nil {
		t.Fatalf("SET on the forced target: %v", err)
	}
	caughtUp(t, pc, rc)
	sameData(t, pc, rc)
}

// TestFailoverWithRedis: FAILOVER across implementations. A goblin
// primary hands over to a redis-server 7.0 replica (which promotes itself
// on goblin's PSYNC FAILOVER and continues it: sync_partial_ok), and a
// redis-server primary hands over to a goblin replica (goblin promotes
// itself on redis's PSYNC FAILOVER and continues it). Data is the same
// afterwards and the new primary's writes reach the old one.
func TestFailoverWithRedis(t *testing.T) {
	t.Parallel() // its own processes and directories; it times nothing
	ctx := context.Background()
	t.Run("goblin-to-redis", func(t *testing.T) {
		g := startServer(t)
		gc := redis.NewClient(goblinOpts(g))
		defer gc.Close()
		fill(t, gc, 1000)
		gHost, gPort := hostPort(t, g.tcp)
		rport, rc, _ := redisPrimary(t, "--replicaof", gHost, strconv.Itoa(gPort))
		testkit.Eventually(t, 60*time.Second, "redis replica's master_link_status:up", func() (bool, string) {
			st := infoField(t, rc, "replication", "master_link_status")
			return st == "up", st
		})
		testkit.Eventually(t, 30*time.Second, "goblin to list redis online", func() (bool, string) {
			s := infoField(t, gc, "replication", "slave0")
			return strings.Contains(s, "state=online"), s
		})
		if err := gc.Do(ctx, "FAILOVER", "TO", "127.0.0.1", rport, "TIMEOUT", "10000").Err(); err != nil {
			t.Fatalf("FAILOVER TO redis: %v", err)
		}
		roleIs(t, rc, "redis", "master")
		roleIs(t, gc, "goblin", "slave")
		failoverStateIs(t, gc, "goblin", "no-failover")
		linkUp(t, gc)
		if ok, full := infoInt(t, rc, "stats", "sync_partial_ok"), infoInt(t, rc, "stats", "sync_full"); ok != 1 || full != 0 {
			t.Fatalf("redis served sync_partial_ok:%d sync_full:%d, want goblin's partial resync only", ok, full)
		}
		if err := rc.Set(ctx, "from-redis", "1", 0).Err(); err != nil {
			t.Fatal(err)
		}
		caughtUp(t, rc, gc)
		sameData(t, rc, gc)
	})
	t.Run("redis-to-goblin", func(t *testing.T) {
		rport, rc, _ := redisPrimary(t)
		fill(t, rc, 1000)
		g := startServer(t, "--replicaof", "127.0.0.1 "+strconv.Itoa(rport))
		gc := redis.NewClient(goblinOpts(g))
		defer gc.Close()
		linkUp(t, gc)
		testkit.Eventually(t, 30*time.Second, "redis to list goblin online", func() (bool, string) {
			s := infoField(t, rc, "replication", "slave0")
			return strings.Contains(s, "state=online"), s
		})
		if err := rc.Do(ctx, "FAILOVER").Err(); err != nil {
			t.Fatalf("FAILOVER on redis: %v", err)
		}
		roleIs(t, gc, "goblin", "master")
		roleIs(t, rc, "redis", "slave")
		failoverStateIs(t, rc, "redis", "no-failover")
		testkit.Eventually(t, 30*time.Second, "redis's master_link_status:up", func() (bool, string) {
			st := infoField(t, rc, "replication", "master_link_status")
			return st == "up", st
		})
		if ok, full := infoInt(t, gc, "stats", "sync_partial_ok"), infoInt(t, gc, "stats", "sync_full"); ok != 1 || full != 0 {
			t.Fatalf("goblin served sync_partial_ok:%d sync_full:%d, want redis's partial resync only", ok, full)
		}
		g.p.WaitLog(t, `MASTER MODE enabled \(failover request\)`, 10*time.Second)
		if err := gc.Set(ctx, "from-goblin", "1", 0).Err(); err != nil {
			t.Fatal(err)
		}
		caughtUp(t, gc, rc)
		sameData(t, gc, rc)
	})
}

// TestFailoverFromAeronPublisher: FAILOVER works on a primary that also
// publishes its stream over Aeron (--repl-aeron-channel): the Aeron
// publication does not hide the TCP link's failover from the engine, and
// once the old primary follows the new one its publication stands by (it
// would otherwise publish the new primary's stream again).
func TestFailoverFromAeronPublisher(t *testing.T) {
	t.Parallel() // its own processes and ports; it times nothing
	ctx := context.Background()
	ctl := freeUDPPort(t, "127.0.0.1")
	p := startServer(t, "--repl-aeron-channel", fmt.Sprintf("aeron:udp?control-mode=dynamic|control=127.0.0.1:%d", ctl))
	pc := redis.NewClient(goblinOpts(p))
	defer pc.Close()
	fill(t, pc, 200)
	r := startServer(t, "--replicaof", strings.Replace(p.tcp, ":", " ", 1))
	rc := redis.NewClient(goblinOpts(r))
	defer rc.Close()
	linkUp(t, rc)
	caughtUp(t, pc, rc)
	if err := pc.Do(ctx, "FAILOVER").Err(); err != nil {
		t.Fatalf("FAILOVER on a primary publishing over Aeron: %v", err)
	}
	roleIs(t, rc, "the replica", "master")
	roleIs(t, pc, "the old primary", "slave")
	p.p.WaitLog(t, `the publication stands by`, startTimeout)
	sameData(t, rc, pc)
}
