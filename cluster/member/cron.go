package member

import (
	"github.com/goblin-kv/goblin/cluster/bus"
)

// cron is clusterCron, run every 100 ms on the loop.
func (c *Cluster) cron() {
	c.cronRuns++
	timeout := c.o.NodeTimeout.Milliseconds()
	handshakeTimeout := max(timeout, 1000)
	for _, n := range c.nodes {
		if n == c.myself || n.is(bus.FlagNoAddr) {
			continue
		}
		if n.is(bus.FlagHandshake) && c.now-n.ctime > handshakeTimeout {
			c.delNode(n)
			continue
		}
		if n.link == nil && n.ip != "" && n.cport > 0 {
			c.connect(n)
		}
	}
	// Every second, PING the node among 5 random ones whose PONG is oldest.
	if c.cronRuns%10 == 0 {
		all := c.nodeList()
		var best *Node
		for range 5 {
			if len(all) == 0 {
				break
			}
			n := all[c.rand(len(all))]
			if n.link == nil || n.link.conn == nil || n.pingSent != 0 || n == c.myself || n.is(bus.FlagHandshake) {
				continue
			}
			if best == nil || n.pongRecv < best.pongRecv {
				best = n
			}
		}
		if best != nil {
			c.sendPing(best.link, bus.Ping)
		}
	}
	for _, n := range c.nodes {
		if n == c.myself || n.is(bus.FlagNoAddr|bus.FlagHandshake) {
			continue
		}
		l := n.link
		// A link that is old, whose PING waits for half the timeout and
		// that brought nothing for as long, is reconnected.
		if l != nil && l.conn != nil && c.now-l.ctime > timeout && n.pingSent != 0 &&
			c.now-n.pingSent > timeout/2 && c.now-n.dataRecv > timeout/2 {
			c.freeLink(l)
		}
		if n.link != nil && n.link.conn != nil && n.pingSent == 0 && c.now-n.pongRecv > timeout/2 {
			c.sendPing(n.link, bus.Ping)
			continue
		}
		// A master paused for a replica's manual failover PINGs it on
		// every run: each PING carries PAUSED and the offset to reach.
		if c.mfEnd != 0 && c.myself.is(bus.FlagMaster) && c.mfSlave == n && n.link != nil && n.link.conn != nil {
			c.sendPing(n.link, bus.Ping)
			continue
		}
		if n.pingSent == 0 {
			continue
		}
		delay := min(c.now-n.pingSent, c.now-n.dataRecv)
		if delay > timeout && !n.is(bus.FlagPFail|bus.FlagFail) {
			c.log.Info("node possibly failing", "node", n.ID())
			n.flags |= bus.FlagPFail
			c.changed = true
		}
	}
	for _, n := range c.nodes {
		if n.is(bus.FlagPFail) {
			c.markFailingIfNeeded(n)
		}
	}
	// A replica whose master is not known as a replica's master yet
	// (REPLICATE before the handshake finished) follows it now.
	if c.myself.is(bus.FlagSlave) && c.myself.master != nil && !c.following && c.myself.master.ip != "" {
		c.follow(c.myself.master)
	}
	c.manualFailoverCheckTimeout()
	if c.myself.is(bus.FlagSlave) {
		c.handleManualFailover()
		c.handleFailover()
		c.checkMigration()
	}
	c.updateState()
}
