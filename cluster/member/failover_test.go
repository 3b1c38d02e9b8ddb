package member_test

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// TestFailoverSIGKILL: in a six-node goblin cluster with a replica per
// master (cluster-node-timeout 2000), SIGKILL of a master makes the other
// masters mark it FAIL and its replica win the election and take its
// slots; cluster_state returns to ok. The time from the kill to the
// replica serving as master is logged. The killed node, restarted from
// its nodes.conf, comes back as a replica of the winner.
func TestFailoverSIGKILL(t *testing.T) {
	t.Parallel()
	var nodes []*node
	var addrs []string
	for range 6 {
		n := startGoblin(t)
		nodes = append(nodes, n)
		addrs = append(addrs, n.addr)
	}
	clusterCreate(t, addrs, 1)
	checkClean(t, nodes[0])
	ctx := context.Background()
	// A master and its replica, as the master sees it.
	var m, rep *node
	testkit.Eventually(t, 20*time.Second, "a master listing its replica", func() (bool, string) {
		for _, x := range nodes {
			xid := x.id(t)
			info, _ := x.c.ClusterNodes(ctx).Result()
			for _, l := range strings.Split(info, "\n") {
				f := strings.Fields(l)
				if len(f) < 4 || f[3] != xid {
					continue
				}
				for _, r := range nodes {
					if strings.Contains(f[1], ":"+strconv.Itoa(r.port)+"@") {
						m, rep = x, r
						return true, ""
					}
				}
			}
		}
		return false, "none yet"
	})
	mid, rid := m.id(t), rep.id(t)
	slots := countSlots(m.line(mid))
	// Let every node see every other as healthy for a moment.
	time.Sleep(3 * time.Second)
	args := m.proc.Cmd.Args[1:]
	killed := time.Now()
	if err := m.proc.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "the replica promoted to master with the dead master's slots", func() (bool, string) {
		l := rep.line(rid)
		f := strings.Fields(l)
		return len(f) > 2 && strings.Contains(f[2], "master") && countSlots(l) == slots, l
	})
	took := time.Since(killed)
	t.Logf("failover: replica serving as master %v after SIGKILL (cluster-node-timeout 2000 ms)", took.Round(time.Millisecond))
	for _, n := range nodes {
		if n == m {
			continue
		}
		testkit.Eventually(t, 20*time.Second, n.name+" "+n.addr+" seeing cluster_state:ok and the dead master as fail", func() (bool, string) {
			info, _ := n.c.ClusterInfo(ctx).Result()
			l := n.line(mid)
			return strings.Contains(info, "cluster_state:ok") && strings.Contains(strings.Fields(l + " x x")[2], "fail"), info + l
		})
	}
	// The old master comes back as a replica of the winner.
	p, err := testproc.StartCmd(exec.Command(m.proc.Cmd.Path, args...))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		p.Stop(10 * time.Second)
		if t.Failed() {
			t.Logf("restarted node's log:\n%s", p.Log())
		}
	}()
	testproc.WaitDial(t, "tcp", m.addr, 30*time.Second)
	testkit.Eventually(t, 30*time.Second, "the restarted master listed as a replica of the winner", func() (bool, string) {
		l := m.line(mid)
		f := strings.Fields(l)
		l2 := rep.line(mid)
		f2 := strings.Fields(l2)
		return len(f) > 3 && strings.Contains(f[2], "slave") && f[3] == rid && len(f2) > 3 && f2[3] == rid && !strings.Contains(f2[2], "fail"), l + " | " + l2
	})
	checkClean(t, rep)
}
