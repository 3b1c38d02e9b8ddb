package member

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"net"
	"strconv"

	"github.com/goblin-kv/goblin/cluster/bus"
)

// handle runs one event from the I/O goroutines.
func (c *Cluster) handle(ev *event) {
	switch ev.kind {
	case evAccepted:
		if c.closed {
			ev.conn.Close()
			return
		}
		if tc, ok := ev.conn.(*net.TCPConn); ok {
			_ = tc.SetNoDelay(true)
		}
		l := c.newLink(ev.conn, true)
		l.start()
	case evConnected:
		l := ev.l
		if _, live := c.links[l]; !live || c.closed {
			ev.conn.Close()
			return
		}
		l.setConn(ev.conn)
		l.start()
		n := l.node
		if n == nil {
			return
		}
		old := n.pingSent
		typ := bus.Ping
		if n.is(bus.FlagMeet) {
			typ = bus.Meet
		}
		c.sendPing(l, typ)
		if old != 0 {
			n.pingSent = old // a reconnect must not reset PFAIL detection
		}
		n.flags &^= bus.FlagMeet
	case evClosed:
		if l := ev.l; l.conn == nil && l.node != nil && l.node.pingSent == 0 {
			// The dial failed: count it as a PING sent now, or failure
			// detection would never start (clusterNodeCronHandleReconnect).
			l.node.pingSent = c.now
		}
		c.freeLink(ev.l)
	case evMsg:
		if _, live := c.links[ev.l]; !live {
			return
		}
		c.process(ev.l, ev.msg)
	}
}

// process is clusterProcessPacket for one checked message.
func (c *Cluster) process(l *link, msg []byte) {
	if err := bus.Check(msg); err != nil {
		c.log.Debug("cluster bus message dropped", "err", err)
		return
	}
	h := &c.hdr
	_ = h.Decode(msg)
	if h.Type < bus.NumTypes {
		c.stats[1][h.Type]++
	}
	sender := c.nodes[h.Sender]
	if sender != nil && sender.is(bus.FlagHandshake) {
		sender = nil
	}
	if sender != nil {
		sender.dataRecv = c.now
		if l.inbound && sender.inLink != l {
			if sender.inLink != nil {
				c.freeLink(sender.inLink)
			}
			sender.inLink, l.node = l, sender
		}
		if h.CurrentEpoch > c.current {
			c.current = h.CurrentEpoch
			c.dirty = true
		}
		if h.ConfigEpoch > sender.configEpoch && h.SlaveOf.Zero() {
			sender.configEpoch = h.ConfigEpoch
			c.dirty = true
		}
		sender.offset = int64(h.Offset)
		c.noteMasterPaused(sender)
	}
	switch h.Type {
	case bus.Ping, bus.Pong, bus.Meet:
		c.processPing(l, msg, sender)
	case bus.Fail:
		if sender == nil {
			return
		}
		name := bus.FailName(msg)
		if f := c.nodes[name]; f != nil && f != c.myself && !f.is(bus.FlagFail) {
			c.log.Info("FAIL message received", "node", f.ID(), "from", sender.ID())
			f.flags |= bus.FlagFail
			f.flags &^= bus.FlagPFail
			f.failTime = c.now
			c.changed, c.dirty = true, true
		}
	case bus.Update:
		if sender == nil {
			return
		}
		var name bus.Name
		var slots bus.Slotmap
		epoch := bus.UpdateData(msg, &name, &slots)
		n := c.nodes[name]
		if n == nil || n.configEpoch >= epoch {
			return
		}
		if n.is(bus.FlagSlave) {
			c.setNodeAsMaster(n)
		}
		n.configEpoch = epoch
		c.updateSlotsWith(n, epoch, &slots)
	case bus.FailoverAuthRequest:
		if sender == nil {
			return
		}
		c.voteIfNeeded(sender)
	case bus.FailoverAuthAck:
		if sender == nil {
			return
		}
		c.authAck(sender)
		c.handleFailover() // a quorum is acted on at once, not at the next cron
	case bus.MFStart:
		c.mfStart(l, sender)
	case bus.Publish, bus.PublishShard:
		if sender != nil {
			c.processPublish(msg, h.Type == bus.PublishShard)
		}
	}
}

// processPing handles PING, PONG and MEET.
func (c *Cluster) processPing(l *link, msg []byte, sender *Node) {
	h := &c.hdr
	if h.Type == bus.Meet || h.Type == bus.Ping {
		// Learn my own address from the connection a peer reached me on.
		if c.o.AnnounceIP == "" && (h.Type == bus.Meet || c.myself.ip == "") && l.localIP != "" && c.myself.ip != l.localIP {
			c.myself.ip = l.localIP
			c.log.Info("IP address for this node updated", "ip", l.localIP)
			c.changed, c.dirty = true, true
		}
		if sender == nil && h.Type == bus.Meet {
			n := c.newNode(randomName(), bus.FlagHandshake)
			n.ip = c.senderIP(l)
			n.port, n.cport = int(h.Port), int(h.CPort)
			c.addNode(n)
			c.processGossip(msg, nil)
		}
		c.sendPing(l, bus.Pong)
	}
	if !l.inbound && l.node != nil {
		n := l.node
		if n.is(bus.FlagHandshake) {
			if sender != nil {
				// A node we know already, met again at a new address.
				c.updateAddress(sender, l)
				c.delNode(n)
				return
			}
			c.renameNode(n, h.Sender)
			n.flags &^= bus.FlagHandshake
			n.flags |= h.Flags & (bus.FlagMaster | bus.FlagSlave)
			c.log.Info("handshake completed", "node", n.ID())
			c.changed, c.dirty = true, true
			sender = n
			sender.dataRecv = c.now
		} else if n.name != h.Sender {
			// The address now answers with another id.
			n.flags |= bus.FlagNoAddr
			n.ip, n.port, n.cport = "", 0, 0
			c.freeLink(l)
			c.changed, c.dirty = true, true
			return
		}
	}
	if sender != nil && h.Type == bus.Ping && l.inbound {
		c.updateAddress(sender, l)
	}
	if !l.inbound && l.node != nil && h.Type == bus.Pong {
		n := l.node
		n.pongRecv = c.now
		n.pingSent = 0
		if n.is(bus.FlagPFail) {
			n.flags &^= bus.FlagPFail
			c.changed = true
		} else if n.is(bus.FlagFail) {
			c.clearFailureIfNeeded(n)
		}
	}
	if sender == nil {
		return
	}
	// Hostname: the extension replaces it, its absence clears it.
	var host []byte
	x := bus.Extensions(msg)
	var e bus.Ext
	for x.Next(&e) {
		if e.Type == bus.ExtHostname {
			host = e.Hostname()
		}
	}
	if string(host) != sender.hostname { // no allocation unless it changed
		sender.hostname = string(host)
		c.dirty = true
	}
	// The sender's NOFAILOVER flag is taken from its header.
	if nf := h.Flags & bus.FlagNoFailover; sender.flags&bus.FlagNoFailover != nf {
		sender.flags = sender.flags&^bus.FlagNoFailover | nf
		c.dirty = true
	}
	// Role.
	if h.SlaveOf.Zero() {
		if sender.is(bus.FlagSlave) {
			c.setNodeAsMaster(sender)
		} else if !sender.is(bus.FlagMaster) {
			sender.flags |= bus.FlagMaster
			c.changed, c.dirty = true, true
		}
	} else {
		m := c.nodes[h.SlaveOf]
		if sender.is(bus.FlagMaster) {
			c.delSlotsOf(sender)
			sender.flags &^= bus.FlagMaster | bus.FlagMigrateTo
			sender.flags |= bus.FlagSlave
			c.changed, c.dirty = true, true
		}
		if m != nil && sender.master != m {
			if sender.master != nil {
				sender.master.removeReplica(sender)
			}
			m.addReplica(sender)
			sender.master = m
			c.changed, c.dirty = true, true
		}
	}
	// Slots: a master's claims, weighed by config epoch.
	senderMaster := masterOf(sender)
	// The same claims with a new config epoch are weighed again: a claim
	// that lost to an older owner may win now (SETSLOT NODE, then
	// BUMPEPOCH).
	if sender.is(bus.FlagMaster) && (senderMaster.slots != h.Slots || senderMaster.claimEpoch != h.ConfigEpoch) {
		senderMaster.slots, senderMaster.claimEpoch = h.Slots, h.ConfigEpoch
		c.updateSlotsWith(sender, h.ConfigEpoch, &h.Slots)
	} else if sender.is(bus.FlagMaster) {
		// Same claims as last time: still check for slots whose owner
		// changed since (a claim lost to a higher epoch).
		c.checkStaleClaims(sender, &h.Slots)
	}
	if sender.is(bus.FlagMaster) && c.myself.is(bus.FlagMaster) && h.ConfigEpoch == c.myself.configEpoch && sender != c.myself {
		c.handleEpochCollision(sender)
	}
	c.processGossip(msg, sender)
}

// senderIP is the peer's announced IP, or the address it connected from.
func (c *Cluster) senderIP(l *link) string {
	if ip := c.hdr.IP.Bytes(); len(ip) > 0 {
		return string(ip)
	}
	return l.peerIP
}

// updateAddress takes the header's address for n when it changed.
func (c *Cluster) updateAddress(n *Node, l *link) {
	if n == c.myself {
		return
	}
	ip := c.hdr.IP.Bytes()
	if len(ip) == 0 {
		ip = []byte(l.peerIP)
	}
	if string(ip) == n.ip && n.port == int(c.hdr.Port) && n.cport == int(c.hdr.CPort) {
		return
	}
	n.ip, n.port, n.cport = string(ip), int(c.hdr.Port), int(c.hdr.CPort)
	n.flags &^= bus.FlagNoAddr
	if n.link != nil {
		c.freeLink(n.link)
	}
	c.changed, c.dirty = true, true
}

func (c *Cluster) renameNode(n *Node, name bus.Name) {
	delete(c.nodes, n.name)
	n.name = name
	c.nodes[name] = n
}

// setNodeAsMaster turns a replica into a master.
func (c *Cluster) setNodeAsMaster(n *Node) {
	if n.is(bus.FlagMaster) && !n.is(bus.FlagSlave) {
		return
	}
	if n.master != nil {
		n.master.removeReplica(n)
		if n != c.myself {
			n.flags |= bus.FlagMigrateTo
		}
	}
	n.flags &^= bus.FlagSlave
	n.flags |= bus.FlagMaster
	n.master = nil
	c.changed, c.dirty = true, true
}

func (c *Cluster) delSlotsOf(n *Node) {
	c.unassignAll(n)
	c.changed, c.dirty = true, true
}

// updateSlotsWith is clusterUpdateSlotsConfigWith: every slot sender
// claims moves to it when unassigned or held by a lower config epoch,
// except slots this node is importing. If this node (or its master) ends
// up without slots, it becomes a replica of sender.
func (c *Cluster) updateSlotsWith(sender *Node, epoch uint64, slots *bus.Slotmap) {
	if sender == c.myself {
		return
	}
	curMaster := masterOf(c.myself)
	hadSlots := curMaster.numSlots > 0
	lostMine, claimed := 0, 0
	for s := range bus.Slots {
		if !slots.Has(s) {
			continue
		}
		claimed++
		o := c.owner[s]
		if o == sender {
			continue
		}
		if id, imp := c.state.MovingID(s); id != "" && imp {
			continue
		}
		if o == nil || o.configEpoch < epoch {
			if o == curMaster {
				lostMine++
			}
			if o == c.myself {
				c.dirty16 = append(c.dirty16, uint16(s))
			}
			c.setOwner(s, sender)
			c.changed, c.dirty = true, true
		} else if o.configEpoch > epoch {
			c.sendUpdate(sender, o)
		}
	}
	lost := c.dirty16
	c.dirty16 = c.dirty16[:0]
	if lostMine == 0 {
		return
	}
	c.updateState()
	// With cluster-allow-replica-migration no, only a sender that took
	// nothing but our slots (our failover winner) makes us its replica.
	if hadSlots && curMaster.numSlots == 0 && (!c.o.NoReplicaMigration || claimed == lostMine) {
		c.log.Info("configuration change detected: reconfiguring myself as a replica", "master", sender.ID())
		c.setMyMaster(sender) // the full resync replaces every key
		return
	}
	// Still a master: the keys of the slots I lost must go, or a later
	// claim of those slots would serve stale data (delKeysInSlot).
	if c.myself.is(bus.FlagMaster) && len(lost) > 0 && c.o.DelSlotKeys != nil {
		n := 0
		for _, s := range lost {
			n += c.o.DelSlotKeys(int(s))
		}
		if n > 0 {
			c.log.Warn("deleted the keys of slots this node lost", "slots", len(lost), "keys", n, "to", sender.ID())
		}
	}
}

// checkStaleClaims sends sender an UPDATE for a slot it claims that a
// node with a higher config epoch owns. Every PING and PONG of a master
// comes here, so it looks only at the claimed slots the sender does not
// own (its owned bitmap masked out, eight bytes at a time): at rest, with
// claims and owners agreeing, none, where checking each claimed slot's
// owner cost some 70,000 instructions a message for a master of 2,730
// slots.
func (c *Cluster) checkStaleClaims(sender *Node, slots *bus.Slotmap) {
	for i := 0; i < bus.SlotBytes; i += 8 {
		w := binary.LittleEndian.Uint64(slots[i:]) &^ binary.LittleEndian.Uint64(sender.owned[i:])
		for ; w != 0; w &= w - 1 {
			s := i*8 + bits.TrailingZeros64(w)
			if o := c.owner[s]; o != nil && o != sender && o.configEpoch > sender.configEpoch {
				c.sendUpdate(sender, o)
				return
			}
		}
	}
}

// handleEpochCollision is clusterHandleConfigEpochCollision: of two
// masters with one config epoch, the one with the lower id takes a new
// one.
func (c *Cluster) handleEpochCollision(sender *Node) {
	if bytes.Compare(sender.name[:], c.myself.name[:]) <= 0 {
		return
	}
	c.current++
	c.myself.configEpoch = c.current
	c.dirty = true
	c.log.Info("config epoch collision resolved", "with", sender.ID(), "configEpoch", c.current)
}

// processGossip is clusterProcessGossipSection.
func (c *Cluster) processGossip(msg []byte, sender *Node) {
	count := int(c.hdr.Count)
	g := &c.gossip
	for i := range count {
		bus.GossipAt(msg, i, g)
		n := c.nodes[g.Name]
		if n != nil {
			if sender != nil && sender.is(bus.FlagMaster) && n != c.myself {
				if g.Flags&(bus.FlagFail|bus.FlagPFail) != 0 {
					if c.addReport(n, sender) {
						c.log.Debug("failure report", "node", n.ID(), "by", sender.ID())
					}
					c.markFailingIfNeeded(n)
				} else {
					c.removeReport(n, sender)
				}
			}
			if g.Flags&(bus.FlagFail|bus.FlagPFail) == 0 && n.pingSent == 0 && len(n.reports) == 0 {
				if pong := int64(g.PongReceived) * 1000; pong <= c.now+500 && pong > n.pongRecv {
					n.pongRecv = pong
				}
			}
			if n.is(bus.FlagFail|bus.FlagPFail) && n.link == nil && g.Flags&bus.FlagNoAddr == 0 {
				ip := g.IP.Bytes()
				if string(ip) != n.ip || int(g.Port) != n.port || int(g.CPort) != n.cport {
					n.ip, n.port, n.cport = string(ip), int(g.Port), int(g.CPort)
					n.flags &^= bus.FlagNoAddr
					c.changed, c.dirty = true, true
				}
			}
			continue
		}
		if sender == nil || g.Flags&bus.FlagNoAddr != 0 {
			continue
		}
		if t, ok := c.blacklist[g.Name]; ok && t > c.now {
			continue
		}
		n = c.newNode(g.Name, g.Flags&^bus.FlagMyself)
		n.ip = g.IP.String()
		n.port, n.cport = int(g.Port), int(g.CPort)
		c.addNode(n)
		c.log.Info("node learned by gossip", "node", n.ID(), "addr", net.JoinHostPort(n.ip, strconv.Itoa(n.port)))
	}
}

func (c *Cluster) addReport(n, by *Node) bool {
	for i := range n.reports {
		if n.reports[i].by == by {
			n.reports[i].time = c.now
			return false
		}
	}
	n.reports = append(n.reports, failReport{by, c.now})
	return true
}

func (c *Cluster) removeReport(n, by *Node) {
	for i := range n.reports {
		if n.reports[i].by == by {
			n.reports = append(n.reports[:i], n.reports[i+1:]...)
			return
		}
	}
}

// validReports drops reports older than twice the node timeout and
// counts the rest.
func (c *Cluster) validReports(n *Node) int {
	maxAge := 2 * c.o.NodeTimeout.Milliseconds()
	k := 0
	for _, r := range n.reports {
		if c.now-r.time <= maxAge {
			n.reports[k] = r
			k++
		}
	}
	n.reports = n.reports[:k]
	return k
}

// markFailingIfNeeded is markNodeAsFailingIfNeeded: PFAIL becomes FAIL
// when a majority of slot-owning masters report it, counting myself.
func (c *Cluster) markFailingIfNeeded(n *Node) {
	need := c.size()/2 + 1
	if !n.is(bus.FlagPFail) || n.is(bus.FlagFail) {
		return
	}
	k := c.validReports(n)
	if c.myself.is(bus.FlagMaster) {
		k++
	}
	if k < need {
		return
	}
	c.log.Info("marking node as failing (quorum reached)", "node", n.ID(), "reports", k)
	n.flags &^= bus.FlagPFail
	n.flags |= bus.FlagFail
	n.failTime = c.now
	c.sendFail(n)
	c.changed, c.dirty = true, true
}

// clearFailureIfNeeded is clearNodeFailureIfNeeded.
func (c *Cluster) clearFailureIfNeeded(n *Node) {
	if n.is(bus.FlagSlave) || n.numSlots == 0 || c.now-n.failTime > 2*c.o.NodeTimeout.Milliseconds() {
		c.log.Info("clear FAIL state", "node", n.ID())
		n.flags &^= bus.FlagFail
		c.changed, c.dirty = true, true
	}
}

// header fills c.sendHdr for a message of typ from myself.
func (c *Cluster) header(typ bus.Type) *bus.Header {
	h := &c.sendHdr
	me := c.myself
	master := masterOf(me)
	*h = bus.Header{Ver: bus.ProtoVer, Type: typ, Port: uint16(me.port), CPort: uint16(me.cport), Sender: me.name,
		Flags: me.flags, CurrentEpoch: c.current, ConfigEpoch: master.configEpoch}
	if c.o.AnnounceIP != "" {
		h.IP.SetString(c.o.AnnounceIP)
	}
	h.Slots = *c.headerSlots(master)
	if me.is(bus.FlagSlave) && me.master != nil {
		h.SlaveOf = me.master.name
	}
	if !c.stateOK {
		h.State = bus.StateFail
	}
	if c.o.ReplOffset != nil {
		h.Offset = uint64(max(c.o.ReplOffset(), 0))
	}
	if c.mfEnd != 0 {
		if me.is(bus.FlagMaster) {
			h.MFlags[0] |= bus.MFlagPaused
		}
		if typ == bus.FailoverAuthRequest {
			h.MFlags[0] |= bus.MFlagForceAck
		}
	}
	return h
}

// sendPing sends a PING, PONG or MEET with gossip on l.
func (c *Cluster) sendPing(l *link, typ bus.Type) {
	n := len(c.nodes)
	wanted := max(3, n/10)
	fresh := n - 2
	wanted = min(wanted, fresh)
	if typ == bus.Ping && l.node != nil {
		l.node.pingSent = c.now
	}
	b := c.header(typ).Append(c.buf[:0])
	count := 0
	var picked [64]*Node
	tries := wanted * 3
	if wanted > 0 {
		all := c.nodeList()
		for tries > 0 && count < wanted && count < len(picked) {
			tries--
			x := all[c.rand(len(all))]
			if x == c.myself || x.is(bus.FlagPFail|bus.FlagHandshake|bus.FlagNoAddr) || (x.link == nil && x.numSlots == 0) {
				continue
			}
			dup := false
			for _, p := range picked[:count] {
				dup = dup || p == x
			}
			if dup {
				continue
			}
			picked[count] = x
			count++
			b = c.appendGossip(b, x)
		}
	}
	for _, x := range c.nodes {
		if x.is(bus.FlagPFail) && !x.is(bus.FlagHandshake|bus.FlagNoAddr) {
			b = c.appendGossip(b, x)
			count++
		}
	}
	ext := 0
	if c.o.AnnounceHostname != "" {
		b = bus.AppendHostnameExt(b, c.o.AnnounceHostname)
		ext = 1
	}
	b = bus.Finish(b, count, ext)
	c.buf = b
	c.stats[0][typ]++
	l.send(b)
}

func (c *Cluster) nodeList() []*Node {
	// The map's iteration order is random already; a slice makes the
	// draws uniform.
	c.list = c.list[:0]
	for _, n := range c.nodes {
		c.list = append(c.list, n)
	}
	return c.list
}

func (c *Cluster) appendGossip(b []byte, n *Node) []byte {
	g := bus.Gossip{Name: n.name, PingSent: uint32(n.pingSent / 1000), PongReceived: uint32(n.pongRecv / 1000),
		Port: uint16(n.port), CPort: uint16(n.cport), Flags: n.flags}
	g.IP.SetString(n.ip)
	return g.Append(b)
}

// broadcast sends a message built by fill to every node with a link,
// myself and handshake nodes excepted.
func (c *Cluster) broadcast(typ bus.Type, body func([]byte) []byte) {
	b := c.header(typ).Append(c.buf[:0])
	if body != nil {
		b = body(b)
	}
	b = bus.Finish(b, 0, 0)
	c.buf = b
	for _, n := range c.nodes {
		if n.link == nil || n == c.myself || n.is(bus.FlagHandshake) {
			continue
		}
		c.stats[0][typ]++
		n.link.send(b)
	}
}

func (c *Cluster) sendFail(n *Node) {
	c.broadcast(bus.Fail, func(b []byte) []byte { return bus.AppendFail(b, &n.name) })
}

// sendUpdate tells to that owner holds its slots with a higher epoch.
func (c *Cluster) sendUpdate(to, owner *Node) {
	if to.link == nil {
		return
	}
	b := c.header(bus.Update).Append(c.buf[:0])
	b = bus.AppendUpdate(b, owner.configEpoch, &owner.name, &owner.owned)
	b = bus.Finish(b, 0, 0)
	c.buf = b
	c.stats[0][bus.Update]++
	to.link.send(b)
}

// broadcastPong PONGs every linked node (after a configuration change).
func (c *Cluster) broadcastPong() {
	for _, n := range c.nodes {
		if n.link == nil || n == c.myself || n.is(bus.FlagHandshake) {
			continue
		}
		c.sendPing(n.link, bus.Pong)
	}
}
