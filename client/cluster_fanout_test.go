package client

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/cluster"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

func dialClusterT(t *testing.T, seeds ...string) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := DialCluster(ctx, seeds...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// nodeOf returns which of the test cluster's nodes (0, 1, 2) owns key.
func nodeOf(key string) int {
	s := cluster.Slot([]byte(key))
	switch {
	case s <= 5460:
		return 0
	case s <= 10922:
		return 1
	}
	return 2
}

// TestClusterKeylessAndCrossSlot: keyless data commands reach every
// primary (FLUSHALL empties all three nodes, DBSIZE and KEYS count all of
// them), multi-key commands across slots are split per slot, and commands
// that would answer for one node are refused.
func TestClusterKeylessAndCrossSlot(t *testing.T) {
	tc := testproc.StartGoblinCluster(t)
	ctx := ctxT(t)
	c := dialClusterT(t, "tcp://"+tc.Addrs[0])
	perNode := [3]int{}
	p := c.Pipeline()
	for i := range 90 {
		k := "k" + strconv.Itoa(i)
		perNode[nodeOf(k)]++
		p.Do("SET", k, k)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if perNode[0] == 0 || perNode[1] == 0 || perNode[2] == 0 {
		t.Fatalf("keys per node %v: the test needs keys on every node", perNode)
	}
	if v, err := c.Do(ctx, "DBSIZE"); err != nil || v.Int != 90 {
		t.Fatalf("DBSIZE = %v, %v; want 90 (all nodes)", v, err)
	}
	if v, err := c.Do(ctx, "KEYS", "*"); err != nil || len(v.Array) != 90 {
		t.Fatalf("KEYS * = %d keys, %v; want 90", len(v.Array), err)
	}
	v, err := c.Do(ctx, "MGET", "k1", "missing", "k2", "k3")
	if err != nil || v.Kind != KindArray || len(v.Array) != 4 || string(v.Array[0].Str) != "k1" ||
		v.Array[1].Kind != KindNil || string(v.Array[2].Str) != "k2" || string(v.Array[3].Str) != "k3" {
		t.Fatalf("MGET across slots = %v, %v", v, err)
	}
	if v, err := c.Do(ctx, "MSET", "a1", "x", "a2", "y", "a3", "z"); err != nil || string(v.Str) != "OK" {
		t.Fatalf("MSET across slots = %v, %v", v, err)
	}
	if n, err := c.Exists(ctx, "a1", "a2", "a3", "nope"); err != nil || n != 3 {
		t.Fatalf("EXISTS across slots = %d, %v", n, err)
	}
	if n, err := c.Del(ctx, "a1", "a2", "a3", "nope"); err != nil || n != 3 {
		t.Fatalf("DEL across slots = %d, %v", n, err)
	}
	for _, args := range [][]any{{"SCAN", 0}, {"RANDOMKEY"}, {"SELECT", 1}} {
		if _, err := c.Do(ctx, args...); !errors.Is(err, ErrClusterCommand) {
			t.Errorf("%v = %v, want ErrClusterCommand", args, err)
		}
	}
	if v, err := c.Do(ctx, "FLUSHALL"); err != nil || string(v.Str) != "OK" {
		t.Fatalf("FLUSHALL = %v, %v", v, err)
	}
	for i, addr := range tc.Addrs {
		one := dialT(t, "tcp://"+addr)
		if n, err := one.DBSize(ctx); err != nil || n != 0 {
			t.Errorf("after FLUSHALL node %d holds %d keys (%v)", i, n, err)
		}
	}
	if len(c.NodeTargets()) != 3 {
		t.Errorf("NodeTargets = %q, want three", c.NodeTargets())
	}
}

// TestClusterTypedCalls: Set with a TTL, TTL, Expire, Incr, IncrBy, Del.
func TestClusterTypedCalls(t *testing.T) {
	tc := testproc.StartGoblinCluster(t)
	ctx := ctxT(t)
	c := dialClusterT(t, "tcp://"+tc.Addrs[1])
	if err := c.Set(ctx, "t1", []byte("v"), SetOptions{TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if d, err := c.TTL(ctx, "t1"); err != nil || d <= 50*time.Second || d > time.Minute {
		t.Fatalf("TTL after Set with a minute = %v, %v", d, err)
	}
	if err := c.Set(ctx, "t1", []byte("w"), SetOptions{NX: true}); !errors.Is(err, ErrNil) {
		t.Fatalf("Set NX of an existing key = %v, want ErrNil", err)
	}
	if ok, err := c.Expire(ctx, "t1", 2*time.Hour); err != nil || !ok {
		t.Fatalf("Expire = %v, %v", ok, err)
	}
	if d, _ := c.TTL(ctx, "t1"); d < time.Hour {
		t.Fatalf("TTL after Expire 2h = %v", d)
	}
	if _, err := c.TTL(ctx, "nope"); !errors.Is(err, ErrNil) {
		t.Fatalf("TTL of a missing key = %v, want ErrNil", err)
	}
	if n, err := c.Incr(ctx, "n"); err != nil || n != 1 {
		t.Fatalf("Incr = %d, %v", n, err)
	}
	if n, err := c.IncrBy(ctx, "n", 41); err != nil || n != 42 {
		t.Fatalf("IncrBy = %d, %v", n, err)
	}
	if n, err := c.Del(ctx, "n", "t1"); err != nil || n != 2 {
		t.Fatalf("Del = %d, %v", n, err)
	}
}

// TestClusterDeadNodeFailsOnlyItsCommands: with one node killed, a
// pipeline and MGet still answer the keys of the live nodes; each key of
// the dead node gets its own error (a *BatchError).
func TestClusterDeadNodeFailsOnlyItsCommands(t *testing.T) {
	tc := testproc.StartGoblinCluster(t)
	ctx := ctxT(t)
	c := dialClusterT(t, "tcp://"+tc.Addrs[0])
	var keys []string
	p := c.Pipeline()
	for i := range 30 {
		k := "d" + strconv.Itoa(i)
		keys = append(keys, k)
		p.Do("SET", k, k)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tc.Procs[2].Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, err := tc.Procs[2].Wait(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	check := func(what string, vals []string, err error, errOf func(i int) error) {
		t.Helper()
		var be *BatchError
		if !errors.As(err, &be) {
			t.Fatalf("%s with a node down: %v, want a *BatchError", what, err)
		}
		for i, k := range keys {
			if nodeOf(k) == 2 {
				if errOf(i) == nil {
					t.Errorf("%s: %s is on the dead node but has no error", what, k)
				}
			} else if errOf(i) != nil || vals[i] != k {
				t.Errorf("%s: %s on a live node = %q, error %v", what, k, vals[i], errOf(i))
			}
		}
	}
	p = c.Pipeline()
	for _, k := range keys {
		p.Do("GET", k)
	}
	vs, err := p.Exec(ctx)
	vals := make([]string, len(keys))
	for i := range vs {
		vals[i] = string(vs[i].Str)
	}
	var be *BatchError
	errors.As(err, &be)
	check("Pipeline.Exec", vals, err, func(i int) error { return be.Errs[i] })
	bs, err := c.MGet(ctx, keys...)
	errors.As(err, &be)
	for i := range bs {
		vals[i] = string(bs[i])
	}
	check("MGet", vals, err, func(i int) error { return be.Errs[i] })
}

// TestClusterSeedOnUnixSocket: a seed may be a Unix socket (or any target
// the client dials); it was dialled as tcp://<path>.
func TestClusterSeedOnUnixSocket(t *testing.T) {
	tc := testproc.StartGoblinCluster(t)
	ctx := ctxT(t)
	c := dialClusterT(t, tc.Socks[0])
	if err := c.Set(ctx, "s", []byte("1"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(ctx, "s"); err != nil || string(v) != "1" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	if !slices.ContainsFunc(c.NodeTargets(), func(s string) bool { return s == tc.Socks[nodeOf("s")] }) {
		t.Errorf("NodeTargets %q lacks the node's socket %s", c.NodeTargets(), tc.Socks[nodeOf("s")])
	}
}
