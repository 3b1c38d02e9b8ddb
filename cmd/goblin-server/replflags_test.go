package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// TestReplicaSettingsFromFlagsAndFile: the replica-side settings that
// were CONFIG SET only are goblin-server flags and configuration-file
// directives (Redis's names, the slave-* aliases too): CONFIG GET shows
// them, INFO reports slave_priority and replica_announced, and the
// primary lists the replica by its announced address and port.
func TestReplicaSettingsFromFlagsAndFile(t *testing.T) {
	ctx := context.Background()
	p := startServer(t)
	pc := redis.NewClient(goblinOpts(p))
	defer pc.Close()
	conf := filepath.Join(t.TempDir(), "goblin.conf")
	text := "replicaof " + strings.Replace(p.tcp, ":", " ", 1) + "\nslave-priority 42\nreplica-announce-ip 10.9.8.7\n" +
		"repl-backlog-ttl 120\nlazyfree-lazy-expire yes\n"
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	r := startServerConf(t, conf, "--replica-announce-port", "7002", "--replica-announced", "no",
		"--repl-diskless-sync-delay", "2", "--lazyfree-lazy-eviction", "yes", "--replica-read-only", "no",
		"--replica-serve-stale-data", "no", "--repl-timeout", "45", "--repl-ping-replica-period", "3",
		"--repl-backlog-size", "64kb", "--min-replicas-max-lag", "9")
	rc := redis.NewClient(goblinOpts(r))
	defer rc.Close()
	linkUp(t, rc)
	want := map[string]string{"replica-priority": "42", "replica-announce-ip": "10.9.8.7", "replica-announce-port": "7002",
		"replica-announced": "no", "repl-diskless-sync-delay": "2", "repl-backlog-ttl": "120", "lazyfree-lazy-expire": "yes",
		"lazyfree-lazy-eviction": "yes", "replica-read-only": "no", "replica-serve-stale-data": "no", "repl-timeout": "45",
		"repl-ping-replica-period": "3", "repl-backlog-size": "65536", "min-replicas-max-lag": "9"}
	for k, v := range want {
		if got, err := rc.ConfigGet(ctx, k).Result(); err != nil || got[k] != v {
			t.Errorf("CONFIG GET %s: %v %v, want %s", k, got, err, v)
		}
	}
	if got := infoField(t, rc, "replication", "slave_priority") + " " + infoField(t, rc, "replication", "replica_announced") +
		" " + infoField(t, rc, "replication", "slave_read_only"); got != "42 0 0" {
		t.Errorf("slave_priority, replica_announced, slave_read_only: %s, want 42 0 0", got)
	}
	testkit.Eventually(t, 30*time.Second, "the primary to list the replica as ip=10.9.8.7,port=7002", func() (bool, string) {
		info := pc.Info(ctx, "replication").Val()
		return strings.Contains(info, "slave0:ip=10.9.8.7,port=7002,state=online"), info
	})
	// replica-priority 0 from a flag: never promoted.
	z := startServer(t, "--replicaof", strings.Replace(p.tcp, ":", " ", 1), "--replica-priority", "0")
	zc := redis.NewClient(goblinOpts(z))
	defer zc.Close()
	if got := infoField(t, zc, "replication", "slave_priority"); got != "0" {
		t.Errorf("--replica-priority 0: slave_priority:%s", got)
	}
	for _, bad := range [][]string{{"--replica-priority", "-1"}, {"--replica-announce-port", "70000"},
		{"--replica-announced", "maybe"}, {"--lazyfree-lazy-expire", "1"}, {"--repl-backlog-ttl", "-3"}} {
		out, err := runServerOnce(t, bad...)
		if err == nil || !strings.Contains(out, bad[0]) {
			t.Errorf("goblin-server %v: %v, output %q; want a refusal naming the flag", bad, err, out)
		}
	}
}

// runServerOnce runs goblin-server with args expecting it to refuse them
// at once; it returns the output and the exit error.
func runServerOnce(t *testing.T, args ...string) (string, error) {
	t.Helper()
	bin := testproc.Build(t, "./cmd/goblin-server")
	p := testproc.Start(t, bin, append([]string{"--listen", "tcp://127.0.0.1:0", "--metrics", "off", "--dir", t.TempDir()}, args...)...)
	code, err := p.Wait(10 * time.Second)
	if err != nil {
		return p.Log(), err
	}
	if code == 0 {
		return p.Log(), nil
	}
	return p.Log(), fmt.Errorf("exit status %d", code)
}

// TestConfigSetReplTimeoutReachesTheLink: CONFIG SET repl-timeout on a
// replica applies to its running link. The primary is stopped (SIGSTOP),
// so it sends nothing; with repl-timeout 60 the link would stay up a
// minute, after CONFIG SET repl-timeout 2 it drops within seconds and the
// log says why; the primary continued, the link comes back.
func TestConfigSetReplTimeoutReachesTheLink(t *testing.T) {
	t.Parallel() // its own processes; it logs how long the link took to drop, asserts no bound
	ctx := context.Background()
	p := startServer(t, "--repl-ping-replica-period", "1")
	r := startServer(t, "--replicaof", strings.Replace(p.tcp, ":", " ", 1), "--repl-timeout", "60")
	rc := redis.NewClient(goblinOpts(r))
	defer rc.Close()
	linkUp(t, rc)
	if err := p.p.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer p.p.Signal(syscall.SIGCONT)
	time.Sleep(3 * time.Second) // longer than the new timeout: the old one still holds the link up
	if st := infoField(t, rc, "replication", "master_link_status"); st != "up" {
		t.Fatalf("master_link_status:%s 3 s after the primary stopped, with repl-timeout 60", st)
	}
	set := time.Now()
	if err := rc.ConfigSet(ctx, "repl-timeout", "2").Err(); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, "master_link_status:down after CONFIG SET repl-timeout 2", func() (bool, string) {
		st := infoField(t, rc, "replication", "master_link_status")
		return st == "down", "master_link_status:" + st
	})
	t.Logf("link dropped %v after CONFIG SET repl-timeout 2", time.Since(set).Round(100*time.Millisecond))
	r.p.WaitLog(t, `silent for longer than repl-timeout \(2s\)`, 5*time.Second)
	p.p.Signal(syscall.SIGCONT)
	linkUp(t, rc)
}

// TestSentinelSkipsPriorityZero: redis-sentinel 7.0 reads goblin's
// replica-priority and announced address. A goblin primary has two goblin
// replicas, both started with --replica-priority 0, one also with
// --replica-announce-port naming a second TCP listener of its own.
//   - The sentinels list that replica at its announced port, and both
//     with slave-priority 0.
//   - The primary is SIGKILLed: no replica may be promoted; every
//     sentinel still names the dead primary and the log says
//     -failover-abort-no-good-slave.
//   - CONFIG SET replica-priority 100 on the other replica: the next
//     attempt promotes it, never the priority-0 one, which follows it.
func TestSentinelSkipsPriorityZero(t *testing.T) {
	t.Parallel() // its own processes and sentinels; it times nothing
	bin := testkit.Need(t, "redis-server", "redis-sentinel 7.0 (redis-server --sentinel) choosing which goblin to promote")
	ctx := context.Background()
	primary := startServer(t)
	of := strings.Replace(primary.tcp, ":", " ", 1)
	announced := freeTCPPort(t)
	a := startServer(t, "--replicaof", of, "--replica-priority", "0", "--listen", "tcp://127.0.0.1:"+strconv.Itoa(announced),
		"--replica-announce-port", strconv.Itoa(announced))
	aAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(announced))
	b := startServer(t, "--replicaof", of, "--replica-priority", "0")
	ac, bc := redis.NewClient(goblinOpts(a)), redis.NewClient(goblinOpts(b))
	defer ac.Close()
	defer bc.Close()
	linkUp(t, ac)
	linkUp(t, bc)
	var sentinels []string
	var procs []*testproc.Proc
	for range 3 {
		addr, p := startSentinelTimeout(t, bin, primary.tcp, 3000)
		sentinels, procs = append(sentinels, addr), append(procs, p)
	}
	for _, s := range sentinels {
		sentinelSeesAll(t, s, primary.tcp, []*srv{{tcp: aAddr}, b})
		c := redis.NewSentinelClient(&redis.Options{Addr: s})
		reps, err := c.Replicas(ctx, "m").Result()
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range reps {
			if r["slave-priority"] != "0" {
				t.Fatalf("sentinel %s lists %s:%s with slave-priority %s, want 0", s, r["ip"], r["port"], r["slave-priority"])
			}
			if r["port"] == strconv.Itoa(hostPortOf(a.tcp)) {
				t.Fatalf("sentinel %s lists the announcing replica at its first listener %s, not the announced port %d", s, a.tcp, announced)
			}
		}
	}

	if err := primary.p.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 60*time.Second, "a sentinel to log -failover-abort-no-good-slave", func() (bool, string) {
		for _, p := range procs {
			if strings.Contains(p.Log(), "-failover-abort-no-good-slave") {
				return true, ""
			}
		}
		return false, "no sentinel gave up the failover yet"
	})
	for _, s := range sentinels {
		if got := sentinelMasterAddr(s); got != primary.tcp {
			t.Fatalf("sentinel %s names %s as the primary with only priority-0 replicas", s, got)
		}
	}
	for name, c := range map[string]*redis.Client{"A": ac, "B": bc} {
		if v, _ := c.Do(ctx, "ROLE").Slice(); len(v) == 0 || v[0] != "slave" {
			t.Fatalf("replica %s after the aborted failover: ROLE %v", name, v)
		}
	}

	if err := bc.ConfigSet(ctx, "replica-priority", "100").Err(); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 90*time.Second, "every sentinel to name B ("+b.tcp+") the primary", func() (bool, string) {
		var got []string
		for _, s := range sentinels {
			addr := sentinelMasterAddr(s)
			if addr == aAddr || addr == a.tcp {
				t.Fatalf("sentinel %s promoted the priority-0 replica %s", s, addr)
			}
			got = append(got, addr)
		}
		return !slices.ContainsFunc(got, func(x string) bool { return x != b.tcp }), fmt.Sprint(got)
	})
	roleIs(t, bc, "B", "master")
	testkit.Eventually(t, 60*time.Second, "A to follow B with its link up", func() (bool, string) {
		port := infoInt(t, ac, "replication", "master_port")
		st := infoField(t, ac, "replication", "master_link_status")
		return int(port) == hostPortOf(b.tcp) && st == "up", fmt.Sprintf("master_port:%d master_link_status:%s", port, st)
	})
	if v, _ := ac.Do(ctx, "ROLE").Slice(); len(v) == 0 || v[0] != "slave" {
		t.Fatalf("A's ROLE %v, want slave", v)
	}
}

func hostPortOf(addr string) int {
	_, p, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(p)
	return n
}

// startSentinelTimeout is startSentinel with failover-timeout ms (a
// failed attempt is retried after twice that).
func startSentinelTimeout(t *testing.T, bin, primary string, failoverTimeout int) (string, *testproc.Proc) {
	t.Helper()
	dir := t.TempDir()
	port := freeTCPPort(t)
	host, pport, _ := net.SplitHostPort(primary)
	conf := filepath.Join(dir, "sentinel.conf")
	text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndaemonize no\ndir %s\nloglevel verbose\nsentinel monitor m %s %s 2\n"+
		"sentinel down-after-milliseconds m 1000\nsentinel failover-timeout m %d\nsentinel parallel-syncs m 1\n",
		port, dir, host, pport, failoverTimeout)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p := testproc.Start(t, bin, conf, "--sentinel")
	p.WaitLog(t, `\+monitor master m `, startTimeout)
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), p
}
