package member

import (
	"math/rand/v2"
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

// TestHeaderSlotsFollowOwners: the header's cached slot bitmap equals a
// fresh scan of the owners after each kind of change: ADDSLOTS, DELSLOTS,
// a claim from a peer with a higher epoch, SETSLOT NODE, becoming a
// replica (the master's slots), FLUSHSLOTS and RESET.
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
	if err := c.Reset(true, true); err != nil {
		t.Fatal(err)
	}
	check("RESET HARD")
}

// BenchmarkHeader: building a message header, with the cached slot
// bitmap (cached) and with the scan of every slot's owner it replaces
// (scan), for a node owning a third of the slots.
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
	b.Run("scan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h := c.header(bus.Ping)
			h.Slots = c.scanSlots(c.myself)
		}
	})
}
