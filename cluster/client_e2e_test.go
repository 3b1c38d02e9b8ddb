package cluster_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/cluster"
	"github.com/goblin-kv/goblin/transport"
	// The nodes are reached over Aeron UDP too (TestGoblinClusterClientAeronUDP,
	// the two-host test): the client dials aeron: targets with this linked.
	_ "github.com/goblin-kv/goblin/transport/aeron"
)

// goblinKV adapts goblin's own cluster client to the reshard scenario.
type goblinKV struct{ c *client.Cluster }

func (g goblinKV) set(ctx context.Context, k, v string) error {
	return g.c.Set(ctx, k, []byte(v), client.SetOptions{})
}
func (g goblinKV) get(ctx context.Context, k string) (string, error) {
	v, err := g.c.Get(ctx, k)
	return string(v), err
}
func (g goblinKV) setMany(ctx context.Context, keys, vals []string) error {
	p := g.c.Pipeline()
	for i, k := range keys {
		p.Do("SET", k, vals[i])
	}
	vs, err := p.Exec(ctx)
	if err != nil {
		return err
	}
	for _, v := range vs {
		if v.Kind == client.KindError {
			return v.Err
		}
	}
	return nil
}
func (g goblinKV) getMany(ctx context.Context, keys []string) ([]string, error) {
	vs, err := g.c.MGet(ctx, keys...)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out, nil
}

// dialGoblinCluster connects goblin's cluster client preferring the
// transport of the given scheme, which the file lists beside the nodes'
// TCP ports.
func dialGoblinCluster(t *testing.T, c *testCluster, prefer transport.Scheme) *client.Cluster {
	t.Helper()
	gc, err := client.ClusterOptions{Seeds: []string{"tcp://" + c.addr(0)}, Prefer: []transport.Scheme{prefer}}.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gc.Close() })
	return gc
}

// TestGoblinClusterClient: client.DialCluster learns the map from one
// seed, reaches every node over the Unix socket (SBE) the node advertises,
// answers MGET across the three nodes in key order, and keeps a pipeline's
// replies in order.
func TestGoblinClusterClient(t *testing.T) {
	t.Parallel()
	c := startCluster(t, viaUDS)
	gc := dialGoblinCluster(t, c, transport.UDS)
	ctx := context.Background()
	var keys []string
	p := gc.Pipeline()
	for i := range 300 {
		k := "g:" + strconv.Itoa(i)
		keys = append(keys, k)
		p.Do("SET", k, "v"+strconv.Itoa(i))
	}
	if vs, err := p.Exec(ctx); err != nil || len(vs) != 300 {
		t.Fatalf("pipeline: %d replies, %v", len(vs), err)
	}
	for _, s := range []uint16{0, 6000, 16000} { // one slot of each node
		if tg := gc.Target(s); !strings.HasPrefix(tg, "uds://") || !strings.Contains(tg, "proto=sbe") {
			t.Errorf("slot %d's node is reached over %q, want its Unix socket in SBE", s, tg)
		}
	}
	vals, err := gc.MGet(ctx, append(keys, "g:missing")...)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		if string(vals[i]) != "v"+strconv.Itoa(i) {
			t.Fatalf("MGET %s = %q", k, vals[i])
		}
	}
	if vals[len(keys)] != nil {
		t.Fatalf("MGET of a missing key: %q", vals[len(keys)])
	}
	if _, err := gc.Get(ctx, "g:missing"); !errors.Is(err, client.ErrNil) {
		t.Fatalf("GET of a missing key: %v", err)
	}
	// A keyless command goes to some node; CLUSTER KEYSLOT agrees with the
	// client's own hash.
	if v, err := gc.Do(ctx, "CLUSTER", "KEYSLOT", "{user1000}.following"); err != nil || v.Int != int64(cluster.Slot([]byte("{user1000}.following"))) {
		t.Fatalf("CLUSTER KEYSLOT: %v %v", v, err)
	}
}

// TestGoblinClusterClientReshard is TestClusterReshard with goblin's own
// client reading and writing over the nodes' Unix sockets (SBE) during the
// move: it follows MOVED (refreshing its map) and ASK (ASKING over the
// node's RESP port) and loses nothing.
func TestGoblinClusterClientReshard(t *testing.T) {
	t.Parallel()
	c := startCluster(t, viaUDS)
	gc := dialGoblinCluster(t, c, transport.UDS)
	reshard(t, c, goblinKV{gc})
	moved, ask := gc.Redirects()
	t.Logf("the client followed %d MOVED and %d ASK", moved, ask)
	if moved == 0 {
		t.Error("the client never saw MOVED: the test did not exercise redirects")
	}
}

// TestGoblinClusterClientAeronUDP: goblin's cluster client reaches every
// node over the Aeron UDP target it advertises on loopback (SBE; the
// client's Go media driver talks to each node's), and MGET spans the
// three. TestGoblinClusterClientTwoHosts runs the reshard over Aeron UDP
// between two network namespaces.
func TestGoblinClusterClientAeronUDP(t *testing.T) {
	t.Parallel()
	c := startCluster(t, viaUDP)
	gc := dialGoblinCluster(t, c, transport.Aeron)
	ctx := context.Background()
	var keys []string
	for i := range 60 {
		k := "u:" + strconv.Itoa(i)
		keys = append(keys, k)
		if err := gc.Set(ctx, k, []byte(k), client.SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []uint16{0, 6000, 16000} {
		if tg := gc.Target(s); !strings.HasPrefix(tg, "aeron:udp") {
			t.Errorf("slot %d's node is reached over %q, want Aeron UDP", s, tg)
		}
	}
	vals, err := gc.MGet(ctx, keys...)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		if string(vals[i]) != k {
			t.Fatalf("MGET %s = %q", k, vals[i])
		}
	}
}
