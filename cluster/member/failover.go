package member

import (
	"github.com/goblin-kv/goblin/cluster/bus"
)

// follow starts replicating m.
func (c *Cluster) follow(m *Node) {
	if c.o.Follow != nil && m.ip != "" && m.port > 0 {
		c.o.Follow(m.ip, m.port)
		c.following = true
	}
}

// setMyMaster makes myself a replica of m (clusterSetMaster): slots
// dropped, replication pointed at m.
func (c *Cluster) setMyMaster(m *Node) {
	me := c.myself
	if me.is(bus.FlagMaster) {
		me.flags &^= bus.FlagMaster | bus.FlagMigrateTo
		me.flags |= bus.FlagSlave
		c.delSlotsOf(me)
	}
	if me.master != nil {
		me.master.removeReplica(me)
	}
	me.master = m
	m.addReplica(me)
	c.following = false
	c.follow(m)
	c.changed, c.dirty = true, true
	c.authTime = 0
	c.resetManualFailover()
}

// rank is clusterGetSlaveRank: sibling replicas with a larger offset.
func (c *Cluster) rank() int {
	m := c.myself.master
	if m == nil {
		return 0
	}
	my := int64(0)
	if c.o.ReplOffset != nil {
		my = c.o.ReplOffset()
	}
	r := 0
	for _, s := range m.replicas {
		if s != c.myself && !s.is(bus.FlagNoFailover) && s.offset > my {
			r++
		}
	}
	return r
}

// handleFailover is clusterHandleSlaveFailover: a replica of a FAIL
// master (or one whose manual failover may start) waits 500 ms + random
// 0-499 ms + 1 s per rank (a manual failover: not at all), asks the
// masters for votes with a new epoch, and with a majority takes its
// master's slots.
func (c *Cluster) handleFailover() {
	me := c.myself
	m := me.master
	manual := c.mfEnd != 0 && c.mfCanStart
	if !me.is(bus.FlagSlave) || m == nil || (!m.is(bus.FlagFail) && !manual) || m.numSlots == 0 || (c.o.NoFailover && !manual) {
		c.authTime = 0
		return
	}
	timeout := c.o.NodeTimeout.Milliseconds()
	if !manual && c.tooOld() {
		return
	}
	authTimeout := max(2*timeout, 2000)
	retry := 2 * authTimeout
	if c.authTime != 0 && c.now-c.authTime > retry {
		c.authTime = 0 // a new attempt
	}
	if c.authTime == 0 {
		c.authRank = c.rank()
		c.authTime = c.now + 500 + int64(c.rand(500)) + int64(c.authRank)*1000
		if c.mfEnd != 0 {
			c.authTime, c.authRank = c.now, 0
		}
		c.authSent, c.authCount = 0, 0
		c.log.Info("start of election delayed", "ms", c.authTime-c.now, "rank", c.authRank)
		// Let siblings know my offset at once.
		for _, s := range m.replicas {
			if s != me && s.link != nil {
				c.sendPing(s.link, bus.Pong)
			}
		}
		if c.mfEnd == 0 {
			return
		}
	}
	if c.authSent == 0 && c.mfEnd == 0 {
		if r := c.rank(); r > c.authRank {
			c.authTime += int64(r-c.authRank) * 1000
			c.authRank = r
		}
	}
	if c.now < c.authTime || c.now-c.authTime > authTimeout {
		return
	}
	if c.authSent == 0 {
		c.current++
		c.authEpoch = c.current
		c.authSent = c.now
		c.log.Info("starting a failover election", "epoch", c.current, "manual", c.mfEnd != 0)
		c.broadcast(bus.FailoverAuthRequest, nil)
		c.dirty = true
		return
	}
	if c.authCount >= c.size()/2+1 {
		c.log.Info("failover election won: I'm the new master", "epoch", c.authEpoch)
		if me.configEpoch < c.authEpoch {
			me.configEpoch = c.authEpoch
		}
		c.replaceMyMaster()
	}
}

// authAck counts a vote for my election.
func (c *Cluster) authAck(sender *Node) {
	if sender.is(bus.FlagMaster) && sender.numSlots > 0 && c.hdr.CurrentEpoch >= c.authEpoch && c.authSent != 0 {
		c.authCount++
	}
}

// voteIfNeeded is clusterSendFailoverAuthIfNeeded: a master with slots
// votes once per epoch for a replica of a FAIL master whose claimed slots
// carry epochs no newer than the request's.
func (c *Cluster) voteIfNeeded(req *Node) {
	h := &c.hdr
	me := c.myself
	if !me.is(bus.FlagMaster) || me.numSlots == 0 {
		return
	}
	deny := func(why string, a ...any) {
		c.log.Warn("failover auth denied", append([]any{"to", req.ID(), "why", why}, a...)...)
	}
	if h.CurrentEpoch < c.current {
		deny("request epoch below mine", "reqEpoch", h.CurrentEpoch, "curEpoch", c.current)
		return
	}
	if c.lastVote == c.current {
		deny("already voted for this epoch", "epoch", c.current)
		return
	}
	m := c.nodes[h.SlaveOf]
	switch {
	case !req.is(bus.FlagSlave):
		deny("it is a master")
		return
	case m == nil:
		deny("I don't know its master")
		return
	case !m.is(bus.FlagFail) && h.MFlags[0]&bus.MFlagForceAck == 0:
		deny("its master is up")
		return
	}
	timeout := c.o.NodeTimeout.Milliseconds()
	if c.now-m.voteTime < 2*timeout {
		deny("voted for a replica of this master less than twice the node timeout ago")
		return
	}
	for s := range bus.Slots {
		if !h.Slots.Has(s) {
			continue
		}
		if o := c.owner[s]; o != nil && o.configEpoch > h.ConfigEpoch {
			deny("a claimed slot has a newer owner", "slot", s, "ownerEpoch", o.configEpoch, "reqEpoch", h.ConfigEpoch)
			return
		}
	}
	c.lastVote = c.current
	m.voteTime = c.now
	c.dirty = true
	c.flush() // the vote is on disk before the ACK leaves
	c.sendTo(req.link, bus.FailoverAuthAck)
	c.log.Info("failover auth granted", "to", req.ID(), "epoch", c.current, "forced", h.MFlags[0]&bus.MFlagForceAck != 0)
}
