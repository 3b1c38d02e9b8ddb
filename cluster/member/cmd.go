package member

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/goblin-kv/goblin/cluster/bus"
)

// The CLUSTER commands, run on the loop goroutine. Each returns nil or an
// error whose Message is Redis's text (after "ERR ").

func (c *Cluster) touch() { c.now = time.Now().UnixMilli() }

func (c *Cluster) lookup(id string) *Node {
	if len(id) != bus.NameLen {
		return nil
	}
	var n bus.Name
	copy(n[:], id)
	return c.nodes[n]
}

// Meet is CLUSTER MEET ip port [cport]: a handshake node the cron dials.
func (c *Cluster) Meet(ip string, port, cport int) error {
	c.touch()
	if net.ParseIP(ip) == nil || port <= 0 || port > 65535 || cport <= 0 || cport > 65535 {
		return cmdErr("Invalid node address specified: %s:%d", ip, port)
	}
	for _, n := range c.nodes {
		if n.is(bus.FlagHandshake) && n.ip == ip && n.port == port && n.cport == cport {
			return nil // a handshake is in progress already
		}
	}
	n := c.newNode(randomName(), bus.FlagHandshake|bus.FlagMeet)
	n.ip, n.port, n.cport = ip, port, cport
	c.addNode(n)
	c.flush()
	return nil
}

// Forget is CLUSTER FORGET id.
func (c *Cluster) Forget(id string) error {
	c.touch()
	n := c.lookup(id)
	switch {
	case n == nil:
		return cmdErr("Unknown node %s", id)
	case n == c.myself:
		return cmdErr("I tried hard but I can't forget myself...")
	case c.myself.is(bus.FlagSlave) && c.myself.master == n:
		return cmdErr("Can't forget my master!")
	}
	c.blacklist[n.name] = c.now + 60_000
	c.delNode(n)
	c.updateState()
	c.flush()
	return nil
}

// AddSlots is CLUSTER ADDSLOTS / ADDSLOTSRANGE: the slots become mine.
func (c *Cluster) AddSlots(slots []int) error {
	c.touch()
	seen := map[int]bool{}
	for _, s := range slots {
		if c.owner[s] != nil {
			return cmdErr("Slot %d is already busy", s)
		}
		if seen[s] {
			return cmdErr("Slot %d specified multiple times", s)
		}
		seen[s] = true
	}
	for _, s := range slots {
		c.setOwner(s, c.myself)
		if id, imp := c.state.MovingID(s); id != "" && imp {
			_ = c.state.SetSlot(uint16(s), "STABLE", "")
		}
	}
	c.changed, c.dirty = true, true
	c.flush()
	return nil
}

// DelSlots is CLUSTER DELSLOTS / DELSLOTSRANGE.
func (c *Cluster) DelSlots(slots []int) error {
	c.touch()
	seen := map[int]bool{}
	for _, s := range slots {
		if c.owner[s] == nil {
			return cmdErr("Slot %d is already unassigned", s)
		}
		if seen[s] {
			return cmdErr("Slot %d specified multiple times", s)
		}
		seen[s] = true
	}
	for _, s := range slots {
		c.setOwner(s, nil)
		_ = c.state.SetSlot(uint16(s), "STABLE", "")
	}
	c.changed, c.dirty = true, true
	c.flush()
	return nil
}

// FlushSlots is CLUSTER FLUSHSLOTS; the engine checks the keyspace is
// empty.
func (c *Cluster) FlushSlots() {
	c.touch()
	c.delSlotsOf(c.myself)
	c.flush()
}

// SetSlotNode is CLUSTER SETSLOT slot NODE id; hasKeys says whether this
// node holds keys in slot.
func (c *Cluster) SetSlotNode(slot int, id string, hasKeys bool) error {
	c.touch()
	n := c.lookup(id)
	if n == nil {
		return cmdErr("Unknown node %s", id)
	}
	if n.is(bus.FlagSlave) {
		return cmdErr("Target node is not a master")
	}
	if c.owner[slot] == c.myself && n != c.myself && hasKeys {
		return cmdErr("Can't assign hashslot %d to a different node while I still hold keys for this hash slot.", slot)
	}
	mig, imp := c.state.MovingID(slot)
	if mig != "" && !imp && !hasKeys && n != c.myself {
		_ = c.state.SetSlot(uint16(slot), "STABLE", "")
	}
	if mig != "" && imp && n == c.myself {
		_ = c.state.SetSlot(uint16(slot), "STABLE", "")
		// Importing finished: take the slot with a new epoch, without
		// waiting for a consensus (clusterBumpConfigEpochWithoutConsensus).
		c.bumpWithoutConsensus()
	}
	c.setOwner(slot, n)
	c.changed, c.dirty = true, true
	c.flush()
	c.broadcastPong()
	return nil
}

func (c *Cluster) maxEpoch() uint64 {
	m := c.current
	for _, n := range c.nodes {
		m = max(m, n.configEpoch)
	}
	return m
}

func (c *Cluster) bumpWithoutConsensus() bool {
	if c.myself.configEpoch == 0 || c.myself.configEpoch != c.maxEpoch() {
		c.current++
		c.myself.configEpoch = c.current
		c.dirty = true
		return true
	}
	return false
}

// BumpEpoch is CLUSTER BUMPEPOCH: "BUMPED n" or "STILL n".
func (c *Cluster) BumpEpoch() string {
	c.touch()
	word := "STILL"
	if c.bumpWithoutConsensus() {
		word = "BUMPED"
	}
	c.flush()
	return word + " " + strconv.FormatUint(c.myself.configEpoch, 10)
}

// SetConfigEpoch is CLUSTER SET-CONFIG-EPOCH.
func (c *Cluster) SetConfigEpoch(e uint64) error {
	c.touch()
	switch {
	case len(c.nodes) > 1:
		return cmdErr("The user can assign a config epoch only when the node does not know any other node.")
	case c.myself.configEpoch != 0:
		return cmdErr("Node config epoch is already non-zero")
	}
	c.myself.configEpoch = e
	c.current = max(c.current, e)
	c.dirty = true
	c.flush()
	return nil
}

// CountFailureReports is CLUSTER COUNT-FAILURE-REPORTS.
func (c *Cluster) CountFailureReports(id string) (int, error) {
	c.touch()
	n := c.lookup(id)
	if n == nil {
		return 0, cmdErr("Unknown node %s", id)
	}
	return c.validReports(n), nil
}

// Replicate is CLUSTER REPLICATE id; empty says the keyspace is empty.
func (c *Cluster) Replicate(id string, empty bool) error {
	c.touch()
	n := c.lookup(id)
	switch {
	case n == nil:
		return cmdErr("Unknown node %s", id)
	case n == c.myself:
		return cmdErr("Can't replicate myself")
	case n.is(bus.FlagSlave):
		return cmdErr("I can only replicate a master, not a replica.")
	case c.myself.is(bus.FlagMaster) && (c.myself.numSlots != 0 || !empty):
		return cmdErr("To set a master the node must be empty and without assigned slots.")
	}
	c.setMyMaster(n)
	c.updateState()
	c.flush()
	return nil
}

// Reset is CLUSTER RESET [HARD]; empty says the keyspace is empty.
func (c *Cluster) Reset(hard, empty bool) error {
	c.touch()
	me := c.myself
	if me.is(bus.FlagMaster) && !empty {
		return cmdErr("CLUSTER RESET can't be called with master nodes containing keys")
	}
	if me.is(bus.FlagSlave) {
		c.setNodeAsMaster(me)
		if c.o.Unfollow != nil {
			c.o.Unfollow()
		}
		c.following = false
	}
	for s := range bus.Slots {
		c.setOwner(s, nil)
		_ = c.state.SetSlot(uint16(s), "STABLE", "")
	}
	for _, n := range c.nodeList() {
		if n != me {
			c.delNode(n)
		}
	}
	if hard {
		c.current, c.lastVote, me.configEpoch = 0, 0, 0
		delete(c.nodes, me.name)
		me.name = randomName()
		c.nodes[me.name] = me
	}
	c.changed, c.dirty = true, true
	c.updateState()
	c.flush()
	return nil
}

// SaveConfig is CLUSTER SAVECONFIG.
func (c *Cluster) SaveConfig() error {
	if err := c.save(true); err != nil {
		return cmdErr("error saving the cluster node config: %v", err)
	}
	return nil
}

// Nodes appends CLUSTER NODES's text.
func (c *Cluster) Nodes(b []byte) []byte {
	c.touch()
	for _, n := range c.sorted() {
		b = c.appendNodeLine(b, n, false)
		b = append(b, '\n')
	}
	return b
}

// Replicas appends the NODES lines of id's replicas, one string each.
func (c *Cluster) Replicas(id string) ([]string, error) {
	n := c.lookup(id)
	if n == nil {
		return nil, cmdErr("Unknown node %s", id)
	}
	if !n.is(bus.FlagMaster) {
		return nil, cmdErr("The specified node is not a master")
	}
	var out []string
	for _, r := range n.replicas {
		out = append(out, string(c.appendNodeLine(nil, r, false)))
	}
	return out, nil
}

// Info appends CLUSTER INFO's text.
func (c *Cluster) Info(b []byte) []byte {
	c.touch()
	assigned, ok, pfail, fail := 0, 0, 0, 0
	for _, o := range c.owner {
		if o == nil {
			continue
		}
		assigned++
		switch {
		case o.is(bus.FlagFail):
			fail++
		case o.is(bus.FlagPFail):
			pfail++
		default:
			ok++
		}
	}
	state := "ok"
	if !c.stateOK {
		state = "fail"
	}
	line := func(k string, v any) { b = fmt.Appendf(b, "%s:%v\r\n", k, v) }
	line("cluster_state", state)
	line("cluster_slots_assigned", assigned)
	line("cluster_slots_ok", ok)
	line("cluster_slots_pfail", pfail)
	line("cluster_slots_fail", fail)
	line("cluster_known_nodes", len(c.nodes))
	line("cluster_size", c.size())
	line("cluster_current_epoch", c.current)
	line("cluster_my_epoch", masterOf(c.myself).configEpoch)
	var total [2]int64
	for dir, name := range []string{"sent", "received"} {
		for t := range bus.Type(bus.NumTypes) {
			if v := c.stats[dir][t]; v > 0 {
				line("cluster_stats_messages_"+t.String()+"_"+name, v)
				total[dir] += v
			}
		}
		line("cluster_stats_messages_"+name, total[dir])
	}
	line("total_cluster_links_buffer_limit_exceeded", 0)
	return b
}

// LinkInfo is one entry of CLUSTER LINKS.
type LinkInfo struct {
	Dir      string // "to" or "from"
	Node     string
	CreateMs int64
	Events   string
	SendBuf  int
}

// Links lists the links for CLUSTER LINKS.
func (c *Cluster) Links() []LinkInfo {
	var out []LinkInfo
	for _, n := range c.sorted() {
		for _, l := range []*link{n.link, n.inLink} {
			if l == nil || l.conn == nil {
				continue
			}
			dir, ev := "to", "rw"
			if l.inbound {
				dir, ev = "from", "r"
			}
			l.mu.Lock()
			pend := len(l.out)
			l.mu.Unlock()
			out = append(out, LinkInfo{Dir: dir, Node: n.ID(), CreateMs: l.ctime, Events: ev, SendBuf: pend})
		}
	}
	return out
}

// NodeOffset is the replication offset node id last announced (0 for an
// unknown node).
func (c *Cluster) NodeOffset(id string) int64 {
	if n := c.lookup(id); n != nil {
		return n.offset
	}
	return 0
}

// IsReplica reports whether this node is a replica in the cluster.
func (c *Cluster) IsReplica() bool { return c.myself.is(bus.FlagSlave) }

// OwnsSlots reports whether this node owns any slot.
func (c *Cluster) OwnsSlots() bool {
	for _, o := range c.owner {
		if o == c.myself {
			return true
		}
	}
	return false
}
