package member

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goblin-kv/goblin/cluster/bus"
)

// scanSlots is the header's slot bitmap computed the slow way.
func (c *Cluster) scanSlots(m *Node) (b bus.Slotmap) {
	for s := range bus.Slots {
		if c.owner[s] == m {
			b.Set(s)
		}
	}
	return b
}

// TestHeaderSlotsFollowOwners: the header's slot bitmap, every node's
// bitmap and count of owned slots, and the count of assigned slots
// (updateState's inputs) equal a fresh scan of the owners after
// each kind of change: ADDSLOTS, DELSLOTS, a claim from a peer with a
// higher epoch, SETSLOT NODE, random owner changes, becoming a replica
// (the master's slots), FLUSHSLOTS, FORGET and RESET.
func TestHeaderSlotsFollowOwners(t *testing.T) {
	c := newTestCluster(t, t.TempDir())
	defer c.Close()
	check := func(step string) {
		t.Helper()
		me := masterOf(c.myself)
		got := c.header(bus.Ping).Slots
		if want := c.scanSlots(me); got != want {
			t.Fatalf("after %s: header claims %d slots, the owners give %d", step, got.Count(), want.Count())
		}
		for _, n := range c.nodes {
			if want := c.scanSlots(n); n.owned != want {
				t.Fatalf("after %s: node %s's owned bitmap has %d slots, the owners give %d", step, n.ID(), n.owned.Count(), want.Count())
			} else if n.numSlots != want.Count() {
				t.Fatalf("after %s: node %s's slot count is %d, the owners give %d", step, n.ID(), n.numSlots, want.Count())
			}
		}
		assigned := 0
		for _, o := range c.owner {
			if o != nil {
				assigned++
			}
		}
		if c.assigned != assigned {
			t.Fatalf("after %s: %d slots counted as assigned, the owners give %d", step, c.assigned, assigned)
		}
		// The ranges view and nodes.conf use, and the engine's State
		// once flushed, against the owner table.
		for _, n := range c.nodes {
			want := c.scanSlots(n)
			var got bus.Slotmap
			last := -1
			for _, r := range c.slotRanges(n) {
				if int(r.First) <= last || r.Last < r.First {
					t.Fatalf("after %s: node %s's ranges out of order: %v", step, n.ID(), c.slotRanges(n))
				}
				for x := int(r.First); x <= int(r.Last); x++ {
					got.Set(x)
				}
				last = int(r.Last)
			}
			if got != want {
				t.Fatalf("after %s: node %s's ranges hold %d slots, the owners give %d", step, n.ID(), got.Count(), want.Count())
			}
		}
		c.changed = true
		c.flush()
		nodes := c.state.Nodes()
		for x := range bus.Slots {
			i, o := c.state.Owner(uint16(x)), c.owner[x]
			if (i < 0) != (o == nil) || i >= 0 && nodes[i].ID != o.ID() {
				t.Fatalf("after %s: the engine's State gives slot %d to node %d, the owners to %v", step, x, i, o)
			}
		}
	}
	check("start")
	if err := c.AddSlots([]int{0, 1, 2, 100, 16383}); err != nil {
		t.Fatal(err)
	}
	check("ADDSLOTS")
	if err := c.DelSlots([]int{1}); err != nil {
		t.Fatal(err)
	}
	check("DELSLOTS")
	peer := c.newNode(randomName(), bus.FlagMaster)
	peer.ip, peer.port, peer.cport = "127.0.0.1", 1, 2
	c.addNode(peer)
	var claim bus.Slotmap
	claim.Set(2)
	claim.Set(5)
	c.updateSlotsWith(peer, c.myself.configEpoch+1, &claim)
	check("a peer's claim with a higher epoch")
	if err := c.SetSlotNode(7, c.myself.ID(), false); err != nil {
		t.Fatal(err)
	}
	check("SETSLOT NODE myself")
	for range 200 { // random owner changes through setOwner
		s := rand.IntN(bus.Slots)
		c.setOwner(s, []*Node{nil, c.myself, peer}[rand.IntN(3)])
		check("a random owner change")
	}
	c.setMyMaster(peer)
	check("becoming the peer's replica")
	c.setNodeAsMaster(c.myself)
	c.FlushSlots()
	check("FLUSHSLOTS")
	forgotten := peer.owned.Count()
	c.delNode(peer)
	if peer.owned.Count() != 0 || forgotten == 0 {
		t.Fatalf("a deleted node kept %d of its %d slots in its owned bitmap", peer.owned.Count(), forgotten)
	}
	check("FORGET (delNode)")
	if err := c.Reset(true, true); err != nil {
		t.Fatal(err)
	}
	check("RESET HARD")
}

// BenchmarkHeader: building a message header, with the node's owned-slot
// bitmap kept by setOwner (cached) and with the scan of every slot's
// owner it replaces (scan), for a node owning a third of the slots; and
// after-owner-change: the header after one slot changed owner, as on
// every SETSLOT NODE and claim during a reshard.
func BenchmarkHeader(b *testing.B) {
	c := newTestCluster(b, b.TempDir())
	defer c.Close()
	var slots []int
	for s := range bus.Slots / 3 {
		slots = append(slots, s*3)
	}
	if err := c.AddSlots(slots); err != nil {
		b.Fatal(err)
	}
	b.Run("cached", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c.header(bus.Ping)
		}
	})
	b.Run("after-owner-change", func(b *testing.B) { // as during a reshard: a slot changes owner between headers
		b.ReportAllocs()
		var owners = [2]*Node{c.myself, nil}
		i := 0
		for b.Loop() {
			i++
			c.setOwner(1, owners[i&1])
			c.header(bus.Ping)
		}
	})
	b.Run("scan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h := c.header(bus.Ping)
			h.Slots = c.scanSlots(c.myself)
		}
	})
}

// TestPublishAllocs: sending a PUBLISH and a PUBLISHSHARD to a linked
// peer, and delivering a received one, allocate nothing once the
// buffers have grown.
func TestPublishAllocs(t *testing.T) {
	var got int
	c := newTestCluster(t, t.TempDir())
	defer c.Close()
	c.o.Deliver = func(shard bool, channel, message []byte) { got += len(channel) + len(message) }
	peer := c.newNode(randomName(), bus.FlagSlave)
	peer.ip, peer.port, peer.cport = "127.0.0.1", 1, 2
	c.addNode(peer)
	peer.master = c.myself
	c.myself.addReplica(peer)
	l := c.newLink(nil, false)
	peer.link = l
	c.flush()
	channel, message := []byte("news"), []byte("hello")
	c.Publish(channel, message)
	c.PublishShard(channel, message)
	if n := len(l.out); n != 2*(bus.HeaderSize+8+len(channel)+len(message)) {
		t.Fatalf("queued %d bytes, want a PUBLISH and a PUBLISHSHARD", n)
	}
	msg := append([]byte(nil), l.out[:bus.HeaderSize+8+len(channel)+len(message)]...)
	allocs := testing.AllocsPerRun(200, func() {
		l.out = l.out[:0]
		c.Publish(channel, message)
		c.PublishShard(channel, message)
	})
	if allocs != 0 {
		t.Errorf("PUBLISH + PUBLISHSHARD: %v allocations", allocs)
	}
	// The peer's own message, delivered here.
	const senderOffset = 40 // the header's sender id (docs: redis-interop.md 5.2)
	copy(msg[senderOffset:], peer.name[:])
	in := c.newLink(nil, true)
	c.process(in, msg)
	if got != len(channel)+len(message) {
		t.Fatalf("delivered %d bytes, want %d", got, len(channel)+len(message))
	}
	if allocs := testing.AllocsPerRun(200, func() { c.process(in, msg) }); allocs != 0 {
		t.Errorf("a received PUBLISH: %v allocations", allocs)
	}
}

// TestStaleClaimUpdate: a master whose PING claims a slot that a node
// with a higher config epoch owns gets an UPDATE naming that owner; a
// PING whose claims are all the sender's own gets none (checkStaleClaims
// looks only past the sender's owned slots).
func TestStaleClaimUpdate(t *testing.T) {
	c := newTestCluster(t, t.TempDir())
	defer c.Close()
	owner, sender := c.newNode(randomName(), bus.FlagMaster), c.newNode(randomName(), bus.FlagMaster)
	owner.ip, owner.port, owner.cport = "127.0.0.1", 1, 2
	sender.ip, sender.port, sender.cport = "127.0.0.1", 3, 4
	owner.configEpoch, sender.configEpoch = 5, 3
	c.addNode(owner)
	c.addNode(sender)
	for s := range 100 {
		c.setOwner(s, sender)
	}
	c.setOwner(9000, owner)
	c.flush()
	out := c.newLink(nil, false) // sender's link: what we send it stays in its outbox
	out.node, sender.link = sender, out
	in := c.newLink(nil, true)
	in.peerIP = "127.0.0.1"
	ping := func(claims *bus.Slotmap) []byte {
		h := bus.Header{Ver: 1, Type: bus.Ping, Sender: sender.name, Port: 3, CPort: 4, Flags: bus.FlagMaster | bus.FlagMyself,
			ConfigEpoch: 3, Slots: *claims}
		return bus.Finish(h.Append(nil), 0, 0)
	}
	own := sender.owned
	c.process(in, ping(&own))
	c.process(in, ping(&own)) // the same claims again: the stale-claim check
	if len(out.out) != 0 {
		t.Fatalf("claims all the sender's own: %d bytes sent to it (type %v), want none", len(out.out), bus.PeekType(out.out))
	}
	stale := own
	stale.Set(9000)
	sender.slots, sender.claimEpoch = stale, 3 // claimed before: only the stale-claim check runs
	c.process(in, ping(&stale))
	if len(out.out) == 0 || bus.PeekType(out.out) != bus.Update {
		t.Fatalf("a claim of a slot a newer epoch owns: sent %d bytes, want an UPDATE", len(out.out))
	}
	var name bus.Name
	var slots bus.Slotmap
	if epoch := bus.UpdateData(out.out, &name, &slots); epoch != 5 || name != owner.name || !slots.Has(9000) {
		t.Fatalf("UPDATE for epoch %d, node %s, slot 9000 %v; want 5, the owner, yes", epoch, name[:], slots.Has(9000))
	}
}

// TestPollWork: the bus's Poll reports as work only the PUBLISH messages
// it delivered, not a PING it answered nor its cron, so a node at rest
// does not restart the loop's idle strategy on every bus message; the
// PING is still handled (its PONG queued) and the cron still runs.
func TestPollWork(t *testing.T) {
	c := newTestCluster(t, t.TempDir())
	defer c.Close()
	var delivered [][]byte
	c.o.Deliver = func(shard bool, channel, message []byte) { delivered = append(delivered, slices.Clone(message)) }
	peer := c.newNode(randomName(), bus.FlagMaster)
	peer.ip, peer.port, peer.cport = "127.0.0.1", 1, 2
	c.addNode(peer)
	c.flush()
	l := c.newLink(nil, true)
	l.peerIP = "127.0.0.1"
	h := bus.Header{Ver: 1, Type: bus.Ping, Sender: peer.name, Port: 1, CPort: 2, Flags: bus.FlagMaster | bus.FlagMyself}
	runs := c.cronRuns
	c.post(event{kind: evMsg, l: l, msg: bus.Finish(h.Append(nil), 0, 0)})
	if w := c.Poll(c.nextCron); w != 0 {
		t.Fatalf("a PING and the cron: Poll reported %d work, want 0", w)
	}
	if c.cronRuns != runs+1 || len(l.out) == 0 || bus.PeekType(l.out) != bus.Pong {
		t.Fatalf("cron runs %d -> %d, %d bytes queued; want the cron run and a PONG", runs, c.cronRuns, len(l.out))
	}
	h.Type = bus.Publish
	c.post(event{kind: evMsg, l: l, msg: bus.Finish(bus.AppendPublish(h.Append(nil), []byte("ch"), []byte("hello")), 0, 0)})
	if w := c.Poll(c.nextCron - 1); w != 1 || len(delivered) != 1 || string(delivered[0]) != "hello" {
		t.Fatalf("a PUBLISH: Poll reported %d work, delivered %q; want 1, [hello]", w, delivered)
	}
	if w := c.Poll(c.nextCron - 1); w != 0 {
		t.Fatalf("nothing queued: Poll reported %d work", w)
	}
}
