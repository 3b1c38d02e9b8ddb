package member_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// TestClusterPublish: PUBLISH on any node of a cluster reaches the
// channel and pattern subscribers of every node, over the bus's PUBLISH
// message, goblin to goblin and both ways between goblin and
// redis-server 7.0; SPUBLISH reaches the shard's other nodes (the
// SSUBSCRIBE clients of a goblin and a redis-server replica) as
// PUBLISHSHARD, from a goblin master and from a redis-server replica.
func TestClusterPublish(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b, r := startGoblin(t), startGoblin(t), startRedis(t)
	a.do(t, "CLUSTER", "ADDSLOTSRANGE", 0, 16383)
	a.meet(t, b)
	a.meet(t, r)
	aid := a.id(t)
	// Every node linked to every other: a PUBLISH goes only over a
	// node's own (outbound) links, in Redis as in goblin.
	three := []*node{a, b, r}
	for _, x := range three {
		for _, y := range three {
			if x != y {
				id := y.id(t)
				testkit.Eventually(t, 20*time.Second, x.name+" "+x.addr+" seeing "+y.addr+" connected", func() (bool, string) { return sees(x, id, "master") })
			}
		}
	}
	b.do(t, "CLUSTER", "REPLICATE", aid)
	bid := b.id(t)
	testkit.Eventually(t, 20*time.Second, "the owner listing the second goblin node as its replica", func() (bool, string) { return sees(a, bid, "slave") })
	// A redis-server replica of the goblin owner: in the shard too.
	r2 := startRedis(t)
	a.meet(t, r2)
	testkit.Eventually(t, 20*time.Second, "the second redis-server node seeing the owner connected", func() (bool, string) { return sees(r2, aid, "master") })
	r2.do(t, "CLUSTER", "REPLICATE", aid)
	r2id := r2.id(t)
	for _, n := range []*node{a, b} {
		testkit.Eventually(t, 20*time.Second, n.name+" "+n.addr+" listing the redis-server replica", func() (bool, string) { return sees(n, r2id, "slave") })
	}
	testkit.Eventually(t, 20*time.Second, "the redis-server replica listing the goblin replica", func() (bool, string) { return sees(r2, bid, "slave") })

	subscribe := func(n *node, shard bool, chans ...string) *redis.PubSub {
		var ps *redis.PubSub
		if shard {
			ps = n.c.SSubscribe(ctx, chans...)
		} else {
			ps = n.c.Subscribe(ctx, chans...)
		}
		if _, err := ps.Receive(ctx); err != nil {
			t.Fatalf("%s subscribe %v: %v", n.name, chans, err)
		}
		t.Cleanup(func() { ps.Close() })
		return ps
	}
	// expect reads the next message, passing over any whose payload is
	// in skip (a message sent before the subscriber subscribed, whose
	// arrival races the subscription).
	expect := func(ps *redis.PubSub, who, channel, payload string, skip ...string) {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		for {
			m, err := ps.ReceiveMessage(c)
			if err != nil {
				t.Fatalf("%s waiting for %q on %s: %v", who, payload, channel, err)
			}
			if m.Channel == channel && slices.Contains(skip, m.Payload) {
				continue
			}
			if m.Channel != channel || m.Payload != payload {
				t.Fatalf("%s got %q on %s, want %q on %s", who, m.Payload, m.Channel, payload, channel)
			}
			return
		}
	}
	subA := subscribe(a, false, "news")
	subAp := a.c.PSubscribe(ctx, "ne*")
	if _, err := subAp.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	defer subAp.Close()
	subR := subscribe(r, false, "news")
	subB := subscribe(b, false, "news")

	// goblin → goblin and redis-server; the reply counts local receivers.
	if n := b.do(t, "PUBLISH", "news", "from-b"); n != int64(1) {
		t.Errorf("PUBLISH on b: %v receivers, want 1 (its own subscriber)", n)
	}
	expect(subA, "goblin a's subscriber", "news", "from-b")
	expect(subAp, "goblin a's pattern subscriber", "news", "from-b")
	expect(subR, "redis-server's subscriber", "news", "from-b")
	expect(subB, "goblin b's own subscriber", "news", "from-b")
	// redis-server → goblin.
	r.do(t, "PUBLISH", "news", "from-redis")
	expect(subA, "goblin a's subscriber", "news", "from-redis")
	expect(subAp, "goblin a's pattern subscriber", "news", "from-redis")
	expect(subB, "goblin b's subscriber", "news", "from-redis")
	expect(subR, "redis-server's own subscriber", "news", "from-redis")

	// SPUBLISH on the shard's master reaches its replica's subscriber.
	shardB := subscribe(b, true, "orders")
	if n := a.do(t, "SPUBLISH", "orders", "o0"); n != int64(0) {
		t.Errorf("SPUBLISH on a: %v receivers, want 0 (none local)", n)
	}
	// r2 subscribes while o0 may still be on its way over the bus from
	// a: its client may or may not see o0, and passes over it.
	shardR2 := subscribe(r2, true, "orders")
	a.do(t, "SPUBLISH", "orders", "o1")
	expect(shardB, "the goblin replica's SSUBSCRIBE client", "orders", "o0")
	expect(shardB, "the goblin replica's SSUBSCRIBE client", "orders", "o1")
	expect(shardR2, "the redis-server replica's SSUBSCRIBE client", "orders", "o1", "o0")
	// From the redis-server replica to the goblin replica (PUBLISHSHARD
	// sent by redis-server to its shard).
	r2.do(t, "SPUBLISH", "orders", "o2")
	expect(shardB, "the goblin replica's SSUBSCRIBE client", "orders", "o2")
	expect(shardR2, "the redis-server replica's own SSUBSCRIBE client", "orders", "o2")
	// redis-server serves no slot: it is not in the shard, and it sends
	// SPUBLISH to the owner.
	if v, err := r.c.Do(ctx, "SPUBLISH", "orders", "x").Result(); err == nil || !strings.HasPrefix(err.Error(), "MOVED") {
		t.Errorf("SPUBLISH on a node outside the shard: %v %v, want -MOVED", v, err)
	}
	// goblin's bus counters show the messages.
	info := a.do(t, "CLUSTER", "INFO").(string)
	for _, k := range []string{"cluster_stats_messages_publish_received:", "cluster_stats_messages_publishshard_sent:"} {
		if !strings.Contains(info, k) {
			t.Errorf("CLUSTER INFO on a lacks %s\n%s", k, info)
		}
	}
}
