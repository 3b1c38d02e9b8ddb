package member_test

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// TestReplicaMigration: a seventh goblin node joins a three-master,
// three-replica goblin cluster with redis-cli --cluster add-node
// --cluster-slave --cluster-master-id, so one master has two replicas.
// When another master's only replica is SIGKILLed (and marked FAIL),
// that master is orphaned: after Redis's 5 s delay one replica of the
// two-replica master migrates to it (cluster-migration-barrier 1 lets
// its master keep one), and --cluster check is clean.
func TestReplicaMigration(t *testing.T) {
	t.Parallel()
	nodes := createCluster(t)
	sh := shards(t, nodes)
	var masters []*node
	for m := range sh {
		masters = append(masters, m)
	}
	rich, poor := masters[0], masters[1]
	extra := startGoblin(t)
	out, err := redisCLI(t, "--cluster", "add-node", extra.addr, rich.addr, "--cluster-slave", "--cluster-master-id", rich.id(t))
	if err != nil || !strings.Contains(out, "[OK] New node added correctly.") {
		t.Fatalf("redis-cli --cluster add-node --cluster-slave: %v\n%s", err, out)
	}
	richID, poorID := rich.id(t), poor.id(t)
	testkit.Eventually(t, 30*time.Second, "the added node a replica of the chosen master, in its own view and its master's", func() (bool, string) {
		a := strings.Fields(extra.line(extra.id(t)) + " x x x x")
		b := strings.Fields(rich.line(extra.id(t)) + " x x x x")
		return a[3] == richID && b[3] == richID, strings.Join(a, " ") + " | " + strings.Join(b, " ")
	})
	checkClean(t, rich)
	victim := sh[poor][0]
	victimID := victim.id(t)
	if err := victim.proc.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	// One of rich's replicas now follows poor, in poor's view and its own.
	var moved *node
	testkit.Eventually(t, 40*time.Second, "a replica of the two-replica master migrating to the orphaned one", func() (bool, string) {
		for _, n := range append(sh[rich], extra) {
			f := strings.Fields(n.line(n.id(t)) + " x x x x")
			g := strings.Fields(poor.line(n.id(t)) + " x x x x")
			if f[3] == poorID && g[3] == poorID {
				moved = n
				return true, ""
			}
		}
		return false, poor.line(victimID)
	})
	t.Logf("replica %s migrated %v after the orphan's replica was killed", moved.addr, time.Since(killed).Round(time.Millisecond))
	var left []string
	for _, n := range append(sh[rich], extra) {
		if n != moved && strings.Fields(n.line(n.id(t)) + " x x x x")[3] == richID {
			left = append(left, n.addr)
		}
	}
	if len(left) != 1 {
		t.Errorf("the two-replica master kept %v, want one replica", left)
	}
	ctx := context.Background()
	key := keyOn(t, poor, "mig")
	testkit.Eventually(t, 20*time.Second, "the migrated replica holding the orphan's data", func() (bool, string) {
		a, _ := poor.c.DBSize(ctx).Result()
		b, _ := moved.c.DBSize(ctx).Result()
		return a == b && a > 0, key + ": " + strconv.FormatInt(a, 10) + " vs " + strconv.FormatInt(b, 10)
	})
}

// TestReplicaValidityFactor: with cluster-replica-validity-factor 1, a
// replica whose master has been silent for longer than
// repl-ping-replica-period (1 s, on the replica) + cluster-node-timeout ×
// 1 beyond the node timeout does not start an election when its master
// is SIGSTOPped and marked FAIL (the master sent nothing for 7 s
// before: no writes, its own replication PINGs set to once a minute);
// CLUSTER FAILOVER FORCE, which skips the check as in Redis, then
// promotes it.
func TestReplicaValidityFactor(t *testing.T) {
	t.Parallel()
	nodes := createCluster(t, "--cluster-replica-validity-factor", "1")
	sh := shards(t, nodes)
	var m *node
	for x := range sh {
		m = x
		break
	}
	rep := sh[m][0]
	mid, rid := m.id(t), rep.id(t)
	m.do(t, "CONFIG", "SET", "repl-ping-replica-period", "60")
	rep.do(t, "CONFIG", "SET", "repl-ping-replica-period", "1")
	time.Sleep(7 * time.Second) // nothing from the master to its replica meanwhile
	if err := m.proc.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.proc.Signal(syscall.SIGKILL) }()
	testkit.Eventually(t, 20*time.Second, "the replica seeing its stopped master fail", func() (bool, string) {
		l := rep.line(mid)
		return strings.Contains(","+strings.Fields(l + " x x x")[2]+",", ",fail,"), l
	})
	// Elections start within 1.5 s of FAIL (rank 0); give it 5.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if f := strings.Fields(rep.line(rid)); len(f) > 2 && strings.Contains(f[2], "master") {
			t.Fatalf("the replica with data too old was promoted: %s", rep.line(rid))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if log := rep.proc.Log(); !strings.Contains(log, "my data is too old") {
		t.Errorf("the replica's log does not say why it did not stand:\n%s", log)
	}
	rep.do(t, "CLUSTER", "FAILOVER", "FORCE")
	testkit.Eventually(t, 20*time.Second, "the replica promoted by CLUSTER FAILOVER FORCE", func() (bool, string) {
		l := rep.line(rid)
		f := strings.Fields(l)
		return len(f) > 2 && strings.Contains(f[2], "master") && countSlots(l) > 0, l
	})
}
