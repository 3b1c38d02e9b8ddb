package member

import (
	"time"

	"github.com/goblin-kv/goblin/cluster/bus"
)

// Manual failover (CLUSTER FAILOVER), after Redis 7.0's cluster.c
// (clusterCommand's FAILOVER branch, clusterHandleManualFailover, the
// MFSTART branch of clusterProcessPacket):
//
//  1. The replica gets CLUSTER FAILOVER: mfEnd = now + 5 s, and it sends
//     MFSTART to its master.
//  2. The master pauses client writes for 10 s (Options.Pause), remembers
//     the replica (mfSlave) and PINGs it at once and on every cron run;
//     while mfEnd is set every header it sends carries PAUSED and its
//     replication offset, which no longer moves.
//  3. The replica takes the offset of the first PAUSED message from its
//     master (mfMasterOffset); once its own processed offset equals it,
//     mfCanStart is set and handleFailover runs the election at once, rank
//     0, with FORCEACK so the masters vote though the master is up.
//  4. The winner takes the slots with its new config epoch and PONGs
//     everybody; the old master sees its slots claimed with a higher epoch
//     and becomes the winner's replica (setMyMaster), which ends its pause.
//
// FORCE skips 1-3's offset handshake (mfCanStart at once); TAKEOVER skips
// the election too: a config epoch without consensus, the slots taken.
// Any attempt not finished within 5 s is abandoned.

const (
	mfTimeout   = 5000 // ms, CLUSTER_MF_TIMEOUT
	mfPauseMult = 2    // CLUSTER_MF_PAUSE_MULT: the master's pause is twice the timeout
)

// resetManualFailover is resetManualFailover: a master that paused its
// clients for a replica's failover lets them go, whatever the outcome.
func (c *Cluster) resetManualFailover() {
	if c.mfSlave != nil && c.o.Pause != nil {
		c.o.Pause(0)
	}
	c.mfEnd, c.mfCanStart, c.mfSlave, c.mfMasterOffset = 0, false, nil, -1
}

// Failover is CLUSTER FAILOVER [FORCE|TAKEOVER] on a replica.
func (c *Cluster) Failover(force, takeover bool) error {
	c.touch()
	me := c.myself
	force = force || takeover
	switch {
	case me.is(bus.FlagMaster):
		return cmdErr("You should send CLUSTER FAILOVER to a replica")
	case me.master == nil:
		return cmdErr("I'm a replica but my master is unknown to me")
	case !force && (me.master.is(bus.FlagFail) || me.master.link == nil):
		return cmdErr("Master is down or failed, please use CLUSTER FAILOVER FORCE")
	}
	c.resetManualFailover()
	c.mfEnd = c.now + mfTimeout
	switch {
	case takeover:
		c.log.Warn("taking over the master (user request)")
		c.bumpWithoutConsensus()
		c.replaceMyMaster()
	case force:
		c.log.Warn("forced failover user request accepted")
		c.mfCanStart = true
		c.handleFailover()
	default:
		c.log.Warn("manual failover user request accepted", "linked", me.master.link.conn != nil)
		c.sendTo(me.master.link, bus.MFStart)
	}
	c.flush()
	return nil
}

// sendTo sends a header-only message (MFSTART, FAILOVER_AUTH_ACK) on l.
func (c *Cluster) sendTo(l *link, typ bus.Type) {
	if l == nil {
		return
	}
	b := c.header(typ).Append(c.buf[:0])
	b = bus.Finish(b, 0, 0)
	c.buf = b
	c.stats[0][typ]++
	l.send(b)
}

// mfStart is the master's side of MFSTART from one of its replicas.
func (c *Cluster) mfStart(l *link, sender *Node) {
	if sender == nil || sender.master != c.myself {
		var line []byte
		if sender != nil {
			line = c.appendNodeLine(nil, sender, false)
		}
		c.log.Warn("MFSTART ignored: the sender is not a replica of mine", "sender", string(line))
		return
	}
	c.resetManualFailover()
	c.mfEnd = c.now + mfTimeout
	c.mfSlave = sender
	if c.o.Pause != nil {
		c.o.Pause(mfTimeout * mfPauseMult * time.Millisecond)
	}
	c.log.Warn("manual failover requested by replica", "replica", sender.ID())
	// This PING carries PAUSED and the offset the replica must reach.
	c.sendPing(l, bus.Ping)
}

// noteMasterPaused is the replica's step 3: the first PAUSED message of
// its master during a manual failover fixes the offset to reach.
func (c *Cluster) noteMasterPaused(sender *Node) {
	me := c.myself
	if c.mfEnd == 0 || !me.is(bus.FlagSlave) || me.master != sender || c.hdr.MFlags[0]&bus.MFlagPaused == 0 || c.mfMasterOffset != -1 {
		return
	}
	c.mfMasterOffset = sender.offset
	c.log.Warn("received replication offset for paused master manual failover", "offset", c.mfMasterOffset)
	c.handleManualFailover()
	c.handleFailover()
}

// handleManualFailover is clusterHandleManualFailover: the election may
// start once this replica has processed its paused master's offset.
func (c *Cluster) handleManualFailover() {
	if c.mfEnd == 0 || c.mfCanStart || c.mfMasterOffset == -1 {
		return
	}
	if c.o.ReplOffset != nil && c.o.ReplOffset() == c.mfMasterOffset {
		c.mfCanStart = true
		c.log.Warn("all master replication stream processed, manual failover can start")
	}
}

// manualFailoverCheckTimeout abandons a manual failover past its time.
func (c *Cluster) manualFailoverCheckTimeout() {
	if c.mfEnd != 0 && c.mfEnd < c.now {
		c.log.Warn("manual failover timed out")
		c.resetManualFailover()
	}
}

// replaceMyMaster is clusterFailoverReplaceYourMaster: myself becomes a
// master holding every slot of my old master, stops replicating, saves
// nodes.conf and PONGs every node. The caller has given myself a new
// config epoch.
func (c *Cluster) replaceMyMaster() {
	me := c.myself
	old := me.master
	if me.is(bus.FlagMaster) || old == nil {
		return
	}
	c.setNodeAsMaster(me)
	c.following = false
	if c.o.Unfollow != nil {
		c.o.Unfollow()
	}
	for s := range bus.Slots {
		if c.owner[s] == old {
			c.setOwner(s, me)
		}
	}
	c.authTime = 0
	c.changed, c.dirty = true, true
	c.updateState()
	c.flush()
	c.broadcastPong()
	c.resetManualFailover()
}
