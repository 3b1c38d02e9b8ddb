package member_test

import (
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// cliOK runs redis-cli with args and fails the test unless it exits 0,
// prints no [ERR] and prints want.
func cliOK(t *testing.T, want string, args ...string) string {
	t.Helper()
	out, err := redisCLI(t, args...)
	if err != nil || strings.Contains(out, "[ERR]") || !strings.Contains(out, want) {
		t.Fatalf("redis-cli %s: %v, want %q in:\n%s", strings.Join(args, " "), err, want, out)
	}
	return out
}

// infoLine matches a line of redis-cli --cluster info.
var infoLine = regexp.MustCompile(`(?m)^(\S+) \(\w+\.\.\.\) -> (\d+) keys \| (\d+) slots \| (\d+) slaves\.$`)

// clusterInfo runs --cluster info and returns keys, slots and replicas per
// master address.
func clusterInfo(t *testing.T, addr string) map[string][3]int {
	t.Helper()
	out := cliOK(t, "keys in", "--cluster", "info", addr)
	res := map[string][3]int{}
	for _, m := range infoLine.FindAllStringSubmatch(out, -1) {
		k, _ := strconv.Atoi(m[2])
		s, _ := strconv.Atoi(m[3])
		r, _ := strconv.Atoi(m[4])
		res[m[1]] = [3]int{k, s, r}
	}
	return res
}

// TestRedisCLIClusterOps drives redis-cli --cluster's operator commands
// against goblin nodes and checks each outcome: info (keys, slots and
// replicas per master add up), add-node of an empty master, rebalance
// with --cluster-use-empty-masters and a weight of 0.1 (the new master
// ends with its share of the slots, keys moved with it), add-node --cluster-slave
// without a master id (it follows a master), del-node of that replica,
// rebalance with weight 0 then del-node of the added master (it leaves
// every node's table), and fix of a slot left MIGRATING/IMPORTING and of
// a slot nobody owns. --cluster check is clean after each step and every
// key reads back at the end.
func TestRedisCLIClusterOps(t *testing.T) {
	t.Parallel()
	// Nothing here needs failure detection, and rebalance's MIGRATEs keep
	// a node's loop busy: a node timeout three times the package's 2 s
	// keeps a starved machine from failing a healthy master mid-step.
	slow := []string{"--cluster-node-timeout", "6000"}
	var nodes []*node
	var addrs []string
	for range 3 {
		n := startGoblin(t, slow...)
		nodes = append(nodes, n)
		addrs = append(addrs, n.addr)
	}
	clusterCreate(t, addrs, 0)
	checkClean(t, nodes[0])
	ctx := context.Background()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRedirects: 16})
	defer cc.Close()
	const keys = 600
	for i := range keys {
		if err := cc.Set(ctx, "op:"+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatalf("SET op:%d: %v", i, err)
		}
	}
	readBack := func(when string) {
		t.Helper()
		// A fresh client: a deleted node, reset, answers -CLUSTERDOWN
		// to a client whose slot map still names it, as Redis's would.
		rc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRedirects: 16})
		defer rc.Close()
		for i := range keys {
			if v, err := rc.Get(ctx, "op:"+strconv.Itoa(i)).Result(); err != nil || v != strconv.Itoa(i) {
				t.Fatalf("%s: GET op:%d = %q %v", when, i, v, err)
			}
		}
	}

	// info: three masters, every slot and key counted once.
	sum := func(info map[string][3]int) (k, s int) {
		for _, v := range info {
			k += v[0]
			s += v[1]
		}
		return
	}
	info := clusterInfo(t, nodes[0].addr)
	if k, s := sum(info); len(info) != 3 || k != keys || s != 16384 {
		t.Errorf("--cluster info: %v, want 3 masters, %d keys, 16384 slots", info, keys)
	}

	// add-node (a master) and rebalance onto it.
	added := startGoblin(t, slow...)
	cliOK(t, "[OK] New node added correctly.", "--cluster", "add-node", added.addr, nodes[0].addr)
	addedID := added.id(t)
	testkit.Eventually(t, 30*time.Second, "every node knowing the added master", func() (bool, string) {
		for _, n := range nodes {
			if ok, l := sees(n, addedID, "master"); !ok {
				return false, l
			}
		}
		return true, ""
	})
	checkClean(t, added)
	// Coverage cut: the number of slots moved. An even rebalance moved
	// 4,096 slots onto the added master and the weight-0 one below 4,096
	// back, each slot a chain of redis-cli requests (SETSLOT on both
	// ends, COUNTKEYSINSLOT, GETKEYSINSLOT, MIGRATE): 102-127 s of a CI
	// run. A weight of 0.1 against the others' 1 (redis-cli reads weights
	// as floats) gives the added master 16384*0.1/3.1, some 528 slots, and
	// about 19 of the 600 keys: the same steps, every slot and key still
	// counted, an eighth of the moves.
	cliOK(t, "", "--cluster", "rebalance", nodes[0].addr, "--cluster-use-empty-masters", "--cluster-weight", addedID+"=0.1")
	checkClean(t, nodes[0])
	info = clusterInfo(t, nodes[0].addr)
	if got := info[added.addr]; got[1] < 450 || got[1] > 600 || got[0] == 0 {
		t.Errorf("after rebalance with weight 0.1 the added master has %v (keys, slots, replicas), want about 528 slots and some keys", got)
	}
	if k, s := sum(info); k != keys || s != 16384 {
		t.Errorf("after rebalance: %v, want %d keys, 16384 slots", info, keys)
	}
	readBack("after rebalance")

	// add-node --cluster-slave without a master id, then del-node it.
	rep := startGoblin(t, slow...)
	cliOK(t, "[OK] New node added correctly.", "--cluster", "add-node", rep.addr, nodes[0].addr, "--cluster-slave")
	repID := rep.id(t)
	testkit.Eventually(t, 30*time.Second, "the added replica following a master", func() (bool, string) {
		f := strings.Fields(rep.line(repID) + " x x x x")
		return strings.Contains(f[2], "slave") && f[3] != "-", strings.Join(f, " ")
	})
	testkit.Eventually(t, 30*time.Second, "every node knowing the added replica", func() (bool, string) {
		for _, n := range append([]*node{added}, nodes...) {
			if ok, l := sees(n, repID, "slave"); !ok {
				return false, l
			}
		}
		return true, ""
	})
	checkClean(t, nodes[0])
	cliOK(t, "Sending CLUSTER RESET SOFT to the deleted node.", "--cluster", "del-node", nodes[0].addr, repID)
	if out, _ := rep.c.ClusterNodes(ctx).Result(); strings.Count(out, "\n") != 1 {
		t.Errorf("the deleted replica, reset, still knows other nodes:\n%s", out)
	}
	// A master with slots cannot go.
	if out, err := redisCLI(t, "--cluster", "del-node", nodes[0].addr, addedID); err == nil || !strings.Contains(out, "is not empty! Reshard data away and try again.") {
		t.Errorf("del-node of a master with slots: %v\n%s", err, out)
	}
	// Weight 0 empties the added master; then it can be deleted.
	cliOK(t, "", "--cluster", "rebalance", nodes[0].addr, "--cluster-weight", addedID+"=0")
	if got := countSlots(nodes[0].line(addedID)); got != 0 {
		t.Fatalf("after rebalance with weight 0 the added master still has %d slots", got)
	}
	cliOK(t, "Sending CLUSTER RESET SOFT to the deleted node.", "--cluster", "del-node", nodes[0].addr, addedID)
	for _, gone := range []string{repID, addedID} {
		for _, n := range nodes {
			if l := n.line(gone); !strings.HasPrefix(l, "no line") {
				t.Errorf("%s still lists a deleted node: %s", n.addr, l)
			}
		}
	}
	checkClean(t, nodes[0])
	readBack("after del-node")

	// fix: a slot left open (MIGRATING on its owner, IMPORTING on another).
	src, dst := nodes[0], nodes[1]
	srcID, dstID := src.id(t), dst.id(t)
	key := keyOn(t, src, "open")
	slot := int(src.c.ClusterKeySlot(ctx, key).Val())
	dst.do(t, "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID)
	src.do(t, "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID)
	if out, _ := redisCLI(t, "--cluster", "check", src.addr); !strings.Contains(out, "[WARNING]") {
		t.Errorf("check with an open slot reports no warning:\n%s", out)
	}
	cliOK(t, "", "--cluster", "fix", src.addr, "--cluster-yes")
	checkClean(t, src)
	// fix moved the slot to the importing node; the key went with it.
	if v, err := dst.c.Get(ctx, key).Result(); err != nil || v != "x" {
		t.Errorf("GET %s on the importing node after fix: %q %v", key, v, err)
	}

	// fix: a slot nobody owns.
	owner := nodes[2]
	k2 := keyOn(t, owner, "lost")
	s2 := int(owner.c.ClusterKeySlot(ctx, k2).Val())
	owner.do(t, "DEL", k2)
	for _, n := range nodes {
		n.do(t, "CLUSTER", "DELSLOTS", s2)
	}
	if out, _ := redisCLI(t, "--cluster", "check", owner.addr); !strings.Contains(out, "[ERR] Not all 16384 slots are covered") {
		t.Errorf("check with an unowned slot:\n%s", out)
	}
	// 7.0's coverage fix asks on stdin even with --cluster-yes.
	bin := testkit.Need(t, "redis-cli", "redis-cli --cluster fix")
	fix := exec.Command(bin, "--cluster", "fix", owner.addr, "--cluster-yes")
	fix.Stdin = strings.NewReader("yes\n")
	if out, err := fix.CombinedOutput(); err != nil || !strings.Contains(string(out), "Covering slot "+strconv.Itoa(s2)) {
		t.Fatalf("redis-cli --cluster fix of an unowned slot: %v\n%s", err, out)
	}
	checkClean(t, owner)
	readBack("after fix")
}
