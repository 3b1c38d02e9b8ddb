package engine

import (
	"bytes"
	"strconv"
	"strings"
	"time"

	"github.com/goblin-kv/goblin/cluster"
	"github.com/goblin-kv/goblin/cluster/member"
	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/internal/glob"
)

// Cluster mode with the cluster bus (--cluster-enabled yes): membership,
// slots and epochs belong to package cluster/member, which the server
// polls like a transport on the loop goroutine; the CLUSTER commands
// below call it directly (same goroutine) and route() keeps using the
// cluster.State it rebuilds.

// SetClusterBus hands the engine the cluster bus (the server makes it
// once its listeners know the client port). Loop goroutine, before
// serving.
func (e *Engine) SetClusterBus(b *member.Cluster) {
	if e.cl != nil {
		e.cl.bus = b
	}
}

// ClusterState returns the State cluster mode routes with (nil outside
// cluster mode).
func (e *Engine) ClusterState() *cluster.State {
	if e.cl == nil {
		return nil
	}
	return e.cl.st
}

// ClusterFollow makes this node replicate host:port for the cluster bus
// (CLUSTER REPLICATE, a lost slot claim): REPLICAOF's path without its
// cluster-mode refusal.
func (e *Engine) ClusterFollow(host string, port int) {
	ctl := e.o.Replica.Control
	if ctl == nil {
		return
	}
	if h, ok := ctl.(historySetter); ok && !e.follow.on {
		st := e.repl.hist
		h.SetHistory(st.ID, st.Offset, st.ID2, st.SecondOffset)
	}
	ctl.Follow(host, port)
	e.SetReplica(true)
}

// ClusterUnfollow stops replicating (a won election, CLUSTER RESET).
func (e *Engine) ClusterUnfollow() {
	if ctl := e.o.Replica.Control; ctl != nil && e.follow.on {
		ctl.Unfollow()
		e.SetReplica(false)
	}
}

// ClusterReplOffset is the replication offset the bus announces: the
// processed offset of a replica, the master offset of a master.
func (e *Engine) ClusterReplOffset() int64 {
	if e.follow.on && e.o.Replica.Control != nil {
		_, _, _, off := e.o.Replica.Control.Role()
		return off
	}
	return e.repl.hist.Offset
}

// ClusterPause holds client writes back for d while a replica fails
// over manually (the bus's MFSTART); 0 lets them go at once. It is a pause
// of its own beside CLIENT PAUSE (which CLIENT UNPAUSE does not end), as
// Redis's PAUSE_DURING_FAILOVER is.
func (e *Engine) ClusterPause(d time.Duration) {
	e.mfUntil = 0
	if d > 0 {
		e.mfUntil = e.clock.NowMillis() + d.Milliseconds()
	}
	e.refreshPause()
}

// clusterFailover answers CLUSTER FAILOVER [FORCE|TAKEOVER].
func (e *Engine) clusterFailover(b *member.Cluster, r *command.Request) {
	if len(r.Args) > 1 {
		sub := []byte("failover")
		if len(e.argv) > 1 {
			sub = e.argv[1]
		}
		e.fail(command.Err, "ERR unknown subcommand or wrong number of arguments for '", sub, "'. Try CLUSTER HELP.")
		return
	}
	force, takeover := false, false
	if len(r.Args) == 1 {
		switch {
		case bytes.EqualFold(r.Args[0], []byte("force")):
			force = true
		case bytes.EqualFold(r.Args[0], []byte("takeover")):
			takeover = true
		default:
			e.errText(command.Err, "ERR syntax error")
			return
		}
	}
	if !e.busErr(b.Failover(force, takeover)) {
		e.ok()
	}
}

// ReplPingPeriod is repl-ping-replica-period, for the cluster bus's
// cluster-replica-validity-factor.
func (e *Engine) ReplPingPeriod() time.Duration {
	return time.Duration(e.o.Replication.PingPeriod) * time.Second
}

// ClusterDelSlotKeys deletes the keys of slot (database 0), as Redis's
// delKeysInSlot when this master lost the slot to a node with a newer
// config epoch but keeps others: each deletion goes to replicas as DEL.
// It returns how many keys went.
func (e *Engine) ClusterDelSlotKeys(slot int) int {
	if e.cl == nil {
		return 0
	}
	keys := e.slotKeys(uint16(slot), e.cl.keys[:0])
	st := e.dbs[0]
	n := 0
	for _, k := range keys {
		k = append([]byte(nil), k...) // the index's bytes change as keys go
		if !st.Del(k) {
			continue
		}
		n++
		if e.repl.feed && !e.repl.upstream {
			e.repl.words = append(e.repl.words[:0], wDel, k)
			e.appendOp(0, e.repl.words)
			if e.repl.depth == 0 {
				e.flushUnit()
			}
		}
	}
	e.cl.keys = keys[:0]
	return n
}

// keyspaceEmpty reports whether no database holds a key.
func (e *Engine) keyspaceEmpty() bool {
	for _, db := range e.dbs {
		if db.Len() > 0 {
			return false
		}
	}
	return true
}

// parseSlots reads slot numbers (ranges: pairs) as Redis's getSlotOrReply.
func (e *Engine) parseSlots(args [][]byte, ranges bool) ([]int, bool) {
	var out []int
	if ranges && len(args)%2 != 0 {
		e.errText(command.Err, "ERR wrong number of arguments for 'cluster|addslotsrange' command")
		return nil, false
	}
	nums := make([]int, len(args))
	for i, a := range args {
		v, err := strconv.Atoi(string(a))
		if err != nil || v < 0 || v >= 16384 {
			e.errText(command.Err, "ERR Invalid or out of range slot")
			return nil, false
		}
		nums[i] = v
	}
	if !ranges {
		return nums, true
	}
	for i := 0; i < len(nums); i += 2 {
		if nums[i] > nums[i+1] {
			e.errText(command.Err, "ERR start slot number "+strconv.Itoa(nums[i])+" is greater than end slot number "+strconv.Itoa(nums[i+1]))
			return nil, false
		}
		for s := nums[i]; s <= nums[i+1]; s++ {
			out = append(out, s)
		}
	}
	return out, true
}

func (e *Engine) busErr(err error) bool {
	if err != nil {
		e.errText(command.Err, "ERR "+oneLine(member.Message(err)))
		return true
	}
	return false
}

// clusterBusCmd answers the CLUSTER subcommands the bus owns; false for
// those clusterCmd answers from the State as in file mode.
func (e *Engine) clusterBusCmd(r *command.Request) bool {
	b := e.cl.bus
	switch r.Op {
	case command.OpClusterMyID:
		e.addBulkReply(b.Myself())
	case command.OpClusterMeet:
		port, err1 := strconv.Atoi(string(r.Args[1]))
		cport := port + 10000
		var err2 error
		if len(r.Args) > 2 {
			cport, err2 = strconv.Atoi(string(r.Args[2]))
		}
		if len(r.Args) > 3 {
			e.errText(command.Err, "ERR syntax error")
			return true
		}
		if err1 != nil || err2 != nil {
			e.errText(command.Err, "ERR Invalid base port specified: "+string(r.Args[1]))
			return true
		}
		if !e.busErr(b.Meet(string(r.Args[0]), port, cport)) {
			e.ok()
		}
	case command.OpClusterForget:
		if !e.busErr(b.Forget(string(r.Value))) {
			e.ok()
		}
	case command.OpClusterAddSlots, command.OpClusterAddSlotsRange, command.OpClusterDelSlots, command.OpClusterDelSlotsRange:
		slots, ok := e.parseSlots(r.Args, r.Op == command.OpClusterAddSlotsRange || r.Op == command.OpClusterDelSlotsRange)
		if !ok {
			return true
		}
		var err error
		if r.Op == command.OpClusterAddSlots || r.Op == command.OpClusterAddSlotsRange {
			err = b.AddSlots(slots)
		} else {
			err = b.DelSlots(slots)
		}
		if !e.busErr(err) {
			e.ok()
		}
	case command.OpClusterFlushSlots:
		if !e.keyspaceEmpty() {
			e.errText(command.Err, "ERR DB must be empty to perform CLUSTER FLUSHSLOTS.")
			return true
		}
		b.FlushSlots()
		e.ok()
	case command.OpClusterSetSlot:
		if !strings.EqualFold(string(r.Value), "node") {
			return false // MIGRATING, IMPORTING, STABLE: the State's own rules
		}
		slot := int(r.Amount)
		hasKeys := len(e.slotKeys(uint16(slot), e.cl.keys[:0])) > 0
		if !e.busErr(b.SetSlotNode(slot, string(r.Key), hasKeys)) {
			e.ok()
		}
	case command.OpClusterNodes:
		out := b.Nodes(e.scratch[:0])
		e.scratch = out[:0]
		e.res.Kind, e.res.Value = command.Verbatim, out
	case command.OpClusterInfo:
		out := b.Info(e.scratch[:0])
		e.scratch = out[:0]
		e.res.Kind, e.res.Value = command.Verbatim, out
	case command.OpClusterCountFailureReports:
		n, err := b.CountFailureReports(string(r.Value))
		if !e.busErr(err) {
			e.integer(int64(n))
		}
	case command.OpClusterReplicate:
		if !e.busErr(b.Replicate(string(r.Value), e.keyspaceEmpty())) {
			e.ok()
		}
	case command.OpClusterReset:
		hard := false
		if len(r.Args) > 1 {
			e.errText(command.Err, "ERR syntax error")
			return true
		}
		if len(r.Args) == 1 {
			switch {
			case bytes.EqualFold(r.Args[0], []byte("hard")):
				hard = true
			case bytes.EqualFold(r.Args[0], []byte("soft")):
			default:
				e.errText(command.Err, "ERR syntax error")
				return true
			}
		}
		wasReplica := b.IsReplica()
		if !e.busErr(b.Reset(hard, e.keyspaceEmpty())) {
			if wasReplica {
				e.emptyAll() // as clusterReset's emptyData: the master's data is no longer ours
			}
			e.ok()
		}
	case command.OpClusterSetConfigEpoch:
		v, err := strconv.ParseInt(string(r.Value), 10, 64)
		if err != nil || v < 0 {
			e.errText(command.Err, "ERR Invalid config epoch specified: "+string(r.Value))
			return true
		}
		if !e.busErr(b.SetConfigEpoch(uint64(v))) {
			e.ok()
		}
	case command.OpClusterBumpEpoch:
		e.simple([]byte(b.BumpEpoch()))
	case command.OpClusterSaveConfig:
		if !e.busErr(b.SaveConfig()) {
			e.ok()
		}
	case command.OpClusterReplicas, command.OpClusterSlaves:
		lines, err := b.Replicas(string(r.Value))
		if e.busErr(err) {
			return true
		}
		e.begin(command.Array)
		for _, l := range lines {
			e.addBulkStr(l)
		}
		e.end()
	case command.OpClusterLinks:
		e.begin(command.Array)
		for _, l := range b.Links() {
			e.push(command.Map)
			e.addBulkStr("direction")
			e.addBulkStr(l.Dir)
			e.addBulkStr("node")
			e.addBulkStr(l.Node)
			e.addBulkStr("create-time")
			e.addInt(l.CreateMs)
			e.addBulkStr("events")
			e.addBulkStr(l.Events)
			e.addBulkStr("send-buffer-allocated")
			e.addInt(int64(l.SendBuf))
			e.addBulkStr("send-buffer-used")
			e.addInt(int64(l.SendBuf))
			e.pop()
		}
		e.end()
	case command.OpClusterReload, command.OpClusterTargets:
		e.errText(command.Err, "ERR this node runs the cluster bus (--cluster-enabled): there is no cluster configuration file to reload or list")
	case command.OpClusterFailover:
		e.clusterFailover(b, r)
	default:
		return false
	}
	return true
}

// ClusterBus returns the cluster bus (nil outside --cluster-enabled or
// before SetClusterBus).
func (e *Engine) ClusterBus() *member.Cluster {
	if e.cl == nil {
		return nil
	}
	return e.cl.bus
}

// ClusterDownPolicy returns cluster-allow-reads-when-down and
// cluster-allow-pubsubshard-when-down (false, true outside cluster mode:
// Redis's defaults).
func (e *Engine) ClusterDownPolicy() (reads, pubsubShard bool) {
	if e.cl == nil {
		return false, true
	}
	return e.cl.o.AllowReadsWhenDown, !e.cl.o.NoPubsubShardWhenDown
}

// SetClusterDownPolicy sets them (CONFIG SET, loop goroutine); outside
// cluster mode it does nothing.
func (e *Engine) SetClusterDownPolicy(reads, pubsubShard bool) {
	if e.cl != nil {
		e.cl.o.AllowReadsWhenDown, e.cl.o.NoPubsubShardWhenDown = reads, !pubsubShard
	}
}

// ClusterDeliver hands a PUBLISH (shard false) or PUBLISHSHARD from a
// cluster bus peer to this node's subscribers, as Redis's
// clusterProcessPublishPacket: channel and pattern subscribers, or
// shard-channel subscribers. The reply counts are nobody's. Loop
// goroutine (the bus is polled there).
func (e *Engine) ClusterDeliver(shard bool, channel, message []byte) {
	if shard {
		e.deliver(nil, e.ps.shard[string(channel)], "smessage", channel, message)
	} else {
		e.deliver(nil, e.ps.channels[string(channel)], "message", channel, message)
		for _, p := range e.ps.patterns {
			if glob.Match(p.name, channel) {
				e.deliverPattern(nil, p, channel, message)
			}
		}
	}
	e.cutSlow()
}

// emptyAll deletes every key of every database (CLUSTER RESET of a
// replica), telling WATCHers as FLUSHALL does.
func (e *Engine) emptyAll() {
	for i, st := range e.dbs {
		if st == nil {
			continue
		}
		if len(e.watchers) > 0 {
			e.touchExisting(i, st)
		}
		st.Flush()
	}
}
