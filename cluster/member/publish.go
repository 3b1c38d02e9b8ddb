package member

import (
	"math/bits"

	"github.com/goblin-kv/goblin/cluster"
	"github.com/goblin-kv/goblin/cluster/bus"
)

// Pub/Sub across the cluster (clusterPropagatePublish,
// clusterPropagatePublishShard, clusterProcessPublishPacket): PUBLISH
// goes to every node as a PUBLISH message, SPUBLISH to the other nodes
// of my shard (my master or me, and its replicas) as PUBLISHSHARD; a
// node receiving either from a known sender delivers it to its own
// subscribers (Options.Deliver) and sends it on to no one.

// Publish sends channel/message to every linked node (PUBLISH). Loop
// goroutine; nothing is allocated once c.buf has grown.
func (c *Cluster) Publish(channel, message []byte) {
	c.broadcast(bus.Publish, func(b []byte) []byte { return bus.AppendPublish(b, channel, message) })
}

// PublishShard sends channel/message to the other nodes serving my
// master's slots (SPUBLISH).
func (c *Cluster) PublishShard(channel, message []byte) {
	m := masterOf(c.myself)
	b := c.header(bus.PublishShard).Append(c.buf[:0])
	b = bus.AppendPublish(b, channel, message)
	b = bus.Finish(b, 0, 0)
	c.buf = b
	send := func(n *Node) {
		if n != c.myself && n.link != nil && !n.is(bus.FlagHandshake) {
			c.stats[0][bus.PublishShard]++
			n.link.send(b)
		}
	}
	send(m)
	for _, r := range m.replicas {
		send(r)
	}
}

// processPublish delivers a PUBLISH or PUBLISHSHARD from a known sender.
func (c *Cluster) processPublish(msg []byte, shard bool) {
	if c.o.Deliver == nil {
		return
	}
	channel, message := bus.PublishData(msg)
	c.o.Deliver(shard, channel, message)
	c.delivered++
}

// setOwner makes n the owner of slot s (nil: unassigned), in the owner
// table, in the old and new owners' bitmaps of owned slots and slot
// counts, and in the count of assigned slots: updateState then needs no
// scan of the 16,384 slots (clusterNodeAddSlot/DelSlot keep numslots so).
func (c *Cluster) setOwner(s int, n *Node) {
	o := c.owner[s]
	if o == n {
		return
	}
	if o != nil {
		o.owned.Clear(s)
		o.numSlots--
		o.ranges = nil
		c.assigned--
	}
	if n != nil {
		n.owned.Set(s)
		n.numSlots++
		n.ranges = nil
		c.assigned++
	}
	c.owner[s] = n
}

// slotRanges returns n's slots as ranges in slot order: built from its
// owned bitmap after a change, else the slice built last, which view
// hands to the engine's State again (State.Replace skips a node whose
// ranges are the same slice) and nodes.conf's lines reuse. The slice is
// never modified once built: a change builds a new one.
func (c *Cluster) slotRanges(n *Node) []cluster.Range {
	if n.ranges == nil {
		n.ranges = ownedRanges(&n.owned)
	}
	return n.ranges
}

// ownedRanges turns a slot bitmap into ranges, stepping over whole empty
// and whole full bytes; never nil.
func ownedRanges(m *bus.Slotmap) []cluster.Range {
	rs := []cluster.Range{}
	for s := 0; s < bus.Slots; {
		for s < bus.Slots && !m.Has(s) {
			if s&7 == 0 && m[s>>3] == 0 {
				s += 8
			} else {
				s++
			}
		}
		if s == bus.Slots {
			break
		}
		first := s
		for s < bus.Slots && m.Has(s) {
			if s&7 == 0 && m[s>>3] == 0xff {
				s += 8
			} else {
				s++
			}
		}
		rs = append(rs, cluster.Range{First: uint16(first), Last: uint16(s - 1)})
	}
	return rs
}

// headerSlots returns the bitmap of m's slots for a header: m's owned
// bitmap, which setOwner keeps in step with the owner table. A header is
// built for every PING, PONG and PUBLISH, and scanning 16,384 owners each
// time cost tens of microseconds on the loop.
func (c *Cluster) headerSlots(m *Node) *bus.Slotmap { return &m.owned }

// unassignAll unassigns every slot n owns, found in its owned bitmap.
func (c *Cluster) unassignAll(n *Node) {
	for i, b := range n.owned {
		for ; b != 0; b &= b - 1 {
			c.setOwner(i*8+bits.TrailingZeros8(b), nil)
		}
	}
}
