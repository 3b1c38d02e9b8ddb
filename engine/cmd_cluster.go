package engine

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/goblin-kv/goblin/cluster"
	"github.com/goblin-kv/goblin/cluster/member"
	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/argv"
	"github.com/goblin-kv/goblin/proto/resp"
)

// ClusterOptions put an engine in cluster mode (docs/cluster.md).
type ClusterOptions struct {
	// State is the node's view of the cluster; nil leaves the engine a
	// standalone server (CLUSTER answers "cluster support disabled").
	State *cluster.State
	// Reload reads the configuration file again (CLUSTER RELOAD and
	// RequestClusterReload); nil refuses.
	Reload func() (*cluster.Config, error)
	// Save writes a configuration to the file (CLUSTER SAVECONFIG); nil
	// refuses.
	Save func(*cluster.Config) error
	// Reloaded, when set, is told the outcome of a reload that
	// RequestClusterReload asked for (the server logs it).
	Reloaded func(epoch uint64, err error)
	// AllowReadsWhenDown is cluster-allow-reads-when-down: while the
	// cluster is down, commands that only read are still served (writes
	// get "-CLUSTERDOWN The cluster is down and only accepts read
	// commands").
	AllowReadsWhenDown bool
	// NoPubsubShardWhenDown is cluster-allow-pubsubshard-when-down no:
	// while the cluster is down, SSUBSCRIBE, SUNSUBSCRIBE and SPUBLISH get
	// -CLUSTERDOWN too (by default they are served, as Redis 7.0 does).
	NoPubsubShardWhenDown bool
	// Migrate carries MIGRATE's commands to the target server; nil uses a
	// cluster.Migrator of the engine's own.
	Migrate func(addr string, timeout time.Duration, cmds []byte, n int) ([]string, error)
}

// clusterMode is the engine's cluster state: nil in a standalone engine,
// so the request path pays one predictable branch for it.
type clusterMode struct {
	o         ClusterOptions
	st        *cluster.State
	endpoints []string // each node's "host:port", for redirects
	index     slotIndex
	migrator  cluster.Migrator
	reload    atomic.Bool     // RequestClusterReload asked; Tick does it
	keys      [][]byte        // the request's keys (route)
	bus       *member.Cluster // the cluster bus (--cluster-enabled); nil in file mode
	gen       uint64          // st.Gen() when endpoints were computed
	master    int             // my master's index in st.Nodes() when I am a replica, else -1
}

func newClusterMode(o ClusterOptions) *clusterMode {
	c := &clusterMode{o: o, st: o.State}
	c.refresh()
	if c.o.Migrate == nil {
		c.o.Migrate = c.migrator.Send
	}
	return c
}

func (c *clusterMode) refresh() {
	c.gen = c.st.Gen()
	c.endpoints = c.endpoints[:0]
	for _, n := range c.st.Nodes() {
		c.endpoints = append(c.endpoints, n.Endpoint())
	}
	c.master = -1
	if me := c.st.Me(); me >= 0 && c.st.Nodes()[me].Master != "" {
		c.master = c.st.Index(c.st.Nodes()[me].Master)
	}
}

// RequestClusterReload asks the engine to read the cluster configuration
// file again at its next Tick (SIGHUP). Any goroutine may call it; the
// loop goroutine does the reload and reports it to
// ClusterOptions.Reloaded.
func (e *Engine) RequestClusterReload() {
	if e.cl != nil {
		e.cl.reload.Store(true)
	}
}

// tickCluster runs a reload RequestClusterReload asked for.
func (e *Engine) tickCluster() {
	if !e.cl.reload.Swap(false) {
		return
	}
	err := e.reloadCluster()
	if e.cl.o.Reloaded != nil {
		e.cl.o.Reloaded(e.cl.st.Epoch(), err)
	}
}

func (e *Engine) reloadCluster() error {
	if e.cl.o.Reload == nil {
		return errors.New("this server cannot reload its cluster configuration")
	}
	c, err := e.cl.o.Reload()
	if err != nil {
		return err
	}
	if err := e.cl.st.Reload(c); err != nil {
		return err
	}
	e.cl.refresh()
	return nil
}

// route decides whether this node serves r, in cluster mode: it answers
// -CROSSSLOT, -MOVED, -ASK, -TRYAGAIN or -CLUSTERDOWN (and returns true)
// when not, following Redis Cluster's rules. Keyless commands and MIGRATE
// (whose keys are checked by existence) are always served.
func (e *Engine) route(s *Session, r *command.Request) bool {
	c := e.cl
	asking := s.asking
	s.asking = false
	spec := command.Lookup(r.Op)
	if len(spec.Keys) == 0 || r.Op == command.OpMigrate || r.Op == command.OpSUnsubscribe && r.Key == nil {
		return false // keyless, or SUNSUBSCRIBE of every shard channel
	}
	c.keys = append(c.keys[:0], r.Key)
	from, end, step := spec.ArgKeys(r)
	for i := from; i < end; i += step {
		c.keys = append(c.keys, r.Args[i])
	}
	slot := cluster.Slot(c.keys[0])
	for _, k := range c.keys[1:] {
		if cluster.Slot(k) != slot {
			e.errText(command.Err, "CROSSSLOT Keys in request don't hash to the same slot")
			return true
		}
	}
	owner, st := c.st.Owner(slot), c.st
	if c.gen != st.Gen() {
		c.refresh() // the cluster bus changed the membership
	}
	if st.Down() {
		switch {
		case spec.Flags&command.PubSub != 0: // shard channels (getNodeByQuery's is_pubsubshard)
			if c.o.NoPubsubShardWhenDown {
				e.errText(command.Err, "CLUSTERDOWN The cluster is down")
				return true
			}
		case !c.o.AllowReadsWhenDown:
			e.errText(command.Err, "CLUSTERDOWN The cluster is down")
			return true
		case spec.Flags&command.Write != 0:
			e.errText(command.Err, "CLUSTERDOWN The cluster is down and only accepts read commands")
			return true
		}
	}
	if owner == st.Me() {
		// A shard channel stays with its slot's owner until the slot
		// has moved (Redis: no existence check for shard channels).
		if to, ok := st.Migrating(slot); ok && spec.Flags&command.PubSub == 0 {
			switch missing := e.missingKeys(); {
			case missing == len(c.keys):
				e.redirect("ASK ", slot, to)
				return true
			case missing > 0:
				e.errText(command.Err, "TRYAGAIN Multiple keys request during rehashing of slot")
				return true
			}
		}
		e.noteWrite(spec, slot)
		return false
	}
	if _, ok := st.Importing(slot); ok && (asking || spec.Flags&command.Asking != 0) {
		if len(c.keys) > 1 && e.missingKeys() > 0 {
			e.errText(command.Err, "TRYAGAIN Multiple keys request during rehashing of slot")
			return true
		}
		e.noteWrite(spec, slot)
		return false
	}
	if owner < 0 {
		e.errText(command.Err, "CLUSTERDOWN Hash slot not served")
		return true
	}
	// A replica serves a READONLY client's reads (and shard channels) of
	// its master's slots, as Redis's getNodeByQuery.
	if (s.readOnly || spec.Flags&command.PubSub != 0) && owner == c.master && spec.Flags&command.Write == 0 {
		return false
	}
	e.redirect("MOVED ", slot, owner)
	return true
}

// missingKeys counts the request's keys this node does not hold.
func (e *Engine) missingKeys() int {
	n := 0
	for _, k := range e.cl.keys {
		if !e.st.Exists(k) {
			n++
		}
	}
	return n
}

// redirect answers "MOVED slot host:port" or "ASK slot host:port".
func (e *Engine) redirect(kind string, slot uint16, node int) {
	b := append(e.errBuf[:0], kind...)
	b = strconv.AppendUint(b, uint64(slot), 10)
	b = append(b, ' ')
	b = append(b, e.cl.endpoints[node]...)
	e.errBuf = b
	e.setError(command.Err, b)
}

// CLUSTER COUNTKEYSINSLOT and GETKEYSINSLOT need a slot's keys, which the
// store does not index. slotIndex keeps them, built on first use by one
// scan of the store (O(N) keys, on the loop goroutine) and kept current
// after that by every write command the node serves appending its keys
// (route knows their slot already). Entries are candidates: a key deleted,
// expired, evicted or moved since stays listed until a query of its slot
// checks each entry against the store and drops it (and duplicates). So
// a query costs O(entries in the slot), and the index, which holds a copy
// of every key, is dropped once writes have appended more than it held at
// its build (plus 64 Ki), so a write-heavy node pays memory bounded by
// twice its keys, and the next query builds it again.
type slotIndex struct {
	built    bool
	slots    [cluster.Slots][]byte // keys, each a uvarint length then its bytes
	appended int                   // entries added since the build
	limit    int
}

// noteWrite lists a write command's keys in the slot index, when built.
func (e *Engine) noteWrite(spec *command.Spec, slot uint16) {
	ix := &e.cl.index
	if !ix.built || spec.Flags&command.Write == 0 {
		return
	}
	for _, k := range e.cl.keys {
		ix.slots[slot] = binary.AppendUvarint(ix.slots[slot], uint64(len(k)))
		ix.slots[slot] = append(ix.slots[slot], k...)
	}
	if ix.appended += len(e.cl.keys); ix.appended > ix.limit {
		*ix = slotIndex{}
	}
}

// slotKeys returns slot's keys present in database 0, building or
// compacting the index as needed; the slices are the index's.
func (e *Engine) slotKeys(slot uint16, dst [][]byte) [][]byte {
	ix := &e.cl.index
	db := e.dbs[0]
	if !ix.built {
		n, cursor := 0, uint64(0)
		for {
			cursor = db.Scan(cursor, 1024, func(k []byte) {
				x := cluster.Slot(k)
				ix.slots[x] = binary.AppendUvarint(ix.slots[x], uint64(len(k)))
				ix.slots[x] = append(ix.slots[x], k...)
				n++
			})
			if cursor == 0 {
				break
			}
		}
		ix.built, ix.appended, ix.limit = true, 0, n+64<<10
	}
	list := ix.slots[slot]
	seen := make(map[string]bool)
	kept := list[:0]
	for len(list) > 0 {
		n, w := binary.Uvarint(list)
		k := list[w : w+int(n)]
		list = list[w+int(n):]
		if seen[string(k)] || !db.Exists(k) {
			continue
		}
		seen[string(k)] = true
		kept = binary.AppendUvarint(kept, n) // never overtakes the read position
		kept = append(kept, k...)
	}
	ix.slots[slot] = kept
	for list = kept; len(list) > 0; {
		n, w := binary.Uvarint(list)
		dst = append(dst, list[w:w+int(n)])
		list = list[w+int(n):]
	}
	return dst
}

// notCluster answers a cluster command on a standalone server.
func (e *Engine) notCluster() bool {
	if e.cl == nil {
		e.errText(command.Err, "ERR This instance has cluster support disabled")
		return true
	}
	return false
}

func (e *Engine) clusterCmd(_ *Session, r *command.Request) {
	if e.notCluster() {
		return
	}
	st := e.cl.st
	if e.cl.bus != nil && e.clusterBusCmd(r) {
		return
	}
	switch r.Op {
	case command.OpClusterMyID, command.OpClusterMyShardID:
		e.addBulkReply(st.Nodes()[st.Me()].ID)
	case command.OpClusterKeySlot:
		e.integer(int64(cluster.Slot(r.Value)))
	case command.OpClusterCountKeysInSlot:
		e.integer(int64(len(e.slotKeys(uint16(r.Amount), e.cl.keys[:0]))))
	case command.OpClusterGetKeysInSlot:
		keys := e.slotKeys(uint16(r.Amount), e.cl.keys[:0])
		e.begin(command.Array)
		for _, k := range keys[:min(len(keys), int(r.Amount2))] {
			e.addBulk(k)
		}
		e.end()
	case command.OpClusterCountFailureReports:
		if st.Index(string(r.Value)) < 0 {
			e.fail(command.Err, "ERR Unknown node ", r.Value, "")
			return
		}
		e.integer(0)
	case command.OpClusterInfo:
		e.clusterInfo()
	case command.OpClusterNodes:
		e.clusterNodes()
	case command.OpClusterSlots:
		e.clusterSlots()
	case command.OpClusterShards:
		e.clusterShards()
	case command.OpClusterSetSlot:
		how := strings.ToUpper(string(r.Value))
		if err := st.SetSlot(uint16(r.Amount), how, string(r.Key)); err != nil {
			e.errText(command.Err, "ERR "+strings.TrimPrefix(err.Error(), cluster.ErrSetSlot.Error()+": "))
			return
		}
		e.ok()
	case command.OpClusterReload:
		if err := e.reloadCluster(); err != nil {
			e.errText(command.Err, "ERR "+oneLine(err.Error()))
			return
		}
		e.ok()
	case command.OpClusterSaveConfig:
		if e.cl.o.Save == nil {
			e.errText(command.Err, "ERR this server has no cluster configuration file to save to")
			return
		}
		if err := e.cl.o.Save(st.Config()); err != nil {
			e.errText(command.Err, "ERR "+oneLine(err.Error()))
			return
		}
		e.ok()
	case command.OpClusterMeet:
		e.clusterMeet(r)
	case command.OpClusterTargets:
		e.begin(command.Array)
		for _, n := range st.Nodes() {
			e.push(command.Array)
			e.addBulkStr(n.ID)
			e.push(command.Array)
			for _, a := range n.Addrs {
				e.addBulkStr(a)
			}
			e.pop()
			e.pop()
		}
		e.end()
	case command.OpClusterAddSlots, command.OpClusterAddSlotsRange, command.OpClusterDelSlots, command.OpClusterForget,
		command.OpClusterReset, command.OpClusterDelSlotsRange, command.OpClusterFlushSlots,
		command.OpClusterSetConfigEpoch, command.OpClusterBumpEpoch:
		e.errText(command.Err, "ERR goblin's cluster is configured by its file: give slots to nodes there and reload (CLUSTER RELOAD or SIGHUP), or move them with CLUSTER SETSLOT; see docs/cluster.md")
	case command.OpClusterReplicate, command.OpClusterFailover, command.OpClusterReplicas, command.OpClusterSlaves:
		e.errText(command.Err, "ERR a cluster configured by its file (--cluster-config) has no replicas: replicas and failover need the cluster bus (--cluster-enabled yes); see docs/cluster.md")
	case command.OpClusterLinks:
		e.errText(command.Err, "ERR a cluster configured by its file (--cluster-config) has no cluster bus, so no links (the bus is --cluster-enabled yes); see docs/cluster.md")
	default:
		// Every CLUSTER subcommand of the table is answered above or by
		// the bus; one added to the table and to neither gets an error
		// rather than no reply.
		e.errText(command.Err, "ERR CLUSTER "+strings.ToUpper(strings.TrimPrefix(command.Name(r.Op), "cluster|"))+" is not answered by a cluster configured by its file (--cluster-config); see docs/cluster.md")
	}
}

// oneLine keeps an error text on one line, as a RESP error must be.
func oneLine(s string) string { return strings.NewReplacer("\r", " ", "\n", " ").Replace(s) }

func (e *Engine) addBulkReply(v string) {
	e.scratch = append(e.scratch[:0], v...)
	e.bulk(e.scratch)
}

// clusterMeet answers OK for a node already in the file (so tools that
// introduce nodes keep going) and refuses any other.
func (e *Engine) clusterMeet(r *command.Request) {
	host, port := string(r.Args[0]), string(r.Args[1])
	for _, n := range e.cl.st.Nodes() {
		if strconv.Itoa(n.Port) == port && (n.Host == host || (host == "127.0.0.1" && n.Host == "localhost")) {
			e.ok()
			return
		}
	}
	e.errText(command.Err, "ERR "+host+":"+port+" is not in the cluster configuration file: add it there and reload (docs/cluster.md); a node of a cluster configured by its file speaks no cluster bus (that is --cluster-enabled yes)")
}

// clusterInfo answers CLUSTER INFO.
func (e *Engine) clusterInfo() {
	st := e.cl.st
	covered := st.Covered()
	w := infoWriter{b: e.scratch[:0]}
	state := "ok"
	if covered < cluster.Slots {
		state = "fail"
	}
	w.str("cluster_state", state)
	w.int("cluster_slots_assigned", int64(covered))
	w.int("cluster_slots_ok", int64(covered))
	w.int("cluster_slots_pfail", 0)
	w.int("cluster_slots_fail", 0)
	w.int("cluster_known_nodes", int64(len(st.Nodes())))
	size := 0
	for i := range st.Nodes() {
		if len(st.Ranges(i)) > 0 {
			size++
		}
	}
	w.int("cluster_size", int64(size))
	w.int("cluster_current_epoch", int64(st.Epoch()))
	w.int("cluster_my_epoch", int64(st.Epoch()))
	w.int("cluster_stats_messages_sent", 0)
	w.int("cluster_stats_messages_received", 0)
	w.int("total_cluster_links_buffer_limit_exceeded", 0)
	e.scratch = w.b[:0]
	e.res.Kind, e.res.Value = command.Verbatim, w.b
}

// clusterNodes answers CLUSTER NODES in Redis's nodes.conf line format:
// id ip:port@cport flags master ping-sent pong-recv config-epoch
// link-state slot... and, on this node's line, [slot->-id] for slots
// migrating and [slot-<-id] for slots importing. The bus port is the
// RESP port plus 10000, as in Redis, though goblin listens on no bus.
func (e *Engine) clusterNodes() {
	st := e.cl.st
	b := e.scratch[:0]
	for i, n := range st.Nodes() {
		b = append(b, n.ID...)
		b = append(b, ' ')
		b = append(b, e.cl.endpoints[i]...)
		b = append(b, '@')
		b = strconv.AppendInt(b, int64(n.Port+10000), 10)
		if i == st.Me() {
			b = append(b, " myself,master"...)
		} else {
			b = append(b, " master"...)
		}
		b = append(b, " - 0 0 "...)
		b = strconv.AppendUint(b, st.Epoch(), 10)
		b = append(b, " connected"...)
		for _, r := range st.Ranges(i) {
			b = append(b, ' ')
			b = strconv.AppendUint(b, uint64(r.First), 10)
			if r.Last != r.First {
				b = append(b, '-')
				b = strconv.AppendUint(b, uint64(r.Last), 10)
			}
		}
		if i == st.Me() && st.Open() > 0 {
			for x := range cluster.Slots {
				if to, ok := st.Migrating(uint16(x)); ok {
					b = append(b, " ["...)
					b = strconv.AppendInt(b, int64(x), 10)
					b = append(b, "->-"...)
					b = append(b, st.Nodes()[to].ID...)
					b = append(b, ']')
				} else if from, ok := st.Importing(uint16(x)); ok {
					b = append(b, " ["...)
					b = strconv.AppendInt(b, int64(x), 10)
					b = append(b, "-<-"...)
					b = append(b, st.Nodes()[from].ID...)
					b = append(b, ']')
				}
			}
		}
		b = append(b, '\n')
	}
	e.scratch = b[:0]
	e.res.Kind, e.res.Value = command.Verbatim, b
}

// clusterSlots answers CLUSTER SLOTS: per range, first, last, then the
// owner's ip, port, id and (Redis 7) a map of further endpoint metadata,
// empty here.
func (e *Engine) clusterSlots() {
	st := e.cl.st
	e.begin(command.Array)
	for i, n := range st.Nodes() {
		for _, r := range st.Ranges(i) {
			e.push(command.Array)
			e.addInt(int64(r.First))
			e.addInt(int64(r.Last))
			e.slotNode(&n)
			for j := range st.Nodes() {
				if r := &st.Nodes()[j]; r.Master == n.ID && !r.Failed && e.nodeOffset(j) != 0 {
					e.slotNode(r)
				}
			}
			e.pop()
		}
	}
	e.end()
}

// nodeOffset is node i's replication offset: gossiped by the node
// itself, or this node's own (which the bus's view does not follow), as
// Redis's isReplicaAvailable.
func (e *Engine) nodeOffset(i int) int64 {
	if e.cl.bus != nil {
		if i == e.cl.st.Me() {
			return e.ClusterReplOffset()
		}
		return e.cl.bus.NodeOffset(e.cl.st.Nodes()[i].ID) // the view is rebuilt on membership changes only
	}
	return e.cl.st.Nodes()[i].Offset
}

// slotNode appends one node of a CLUSTER SLOTS entry.
func (e *Engine) slotNode(n *cluster.Node) {
	e.push(command.Array)
	e.addBulkStr(n.Host)
	e.addInt(int64(n.Port))
	e.addBulkStr(n.ID)
	e.push(command.Map)
	e.pop()
	e.pop()
}

// clusterShards answers CLUSTER SHARDS: one shard per node (no replicas),
// each a map of its slot ranges (first, last, ... as integers) and its one
// node.
func (e *Engine) clusterShards() {
	st := e.cl.st
	e.begin(command.Array)
	for i, n := range st.Nodes() {
		if n.Master != "" {
			continue // listed in its master's shard
		}
		e.push(command.Map)
		e.addBulkStr("slots")
		e.push(command.Array)
		for _, r := range st.Ranges(i) {
			e.addInt(int64(r.First))
			e.addInt(int64(r.Last))
		}
		e.pop()
		e.addBulkStr("nodes")
		e.push(command.Array)
		e.shardNode(&n, "master", e.nodeOffset(i))
		for j := range st.Nodes() {
			if r := &st.Nodes()[j]; r.Master == n.ID {
				e.shardNode(r, "replica", e.nodeOffset(j))
			}
		}
		e.pop()
		e.pop()
	}
	e.end()
}

// shardNode appends one node's map of a CLUSTER SHARDS entry.
func (e *Engine) shardNode(n *cluster.Node, role string, offset int64) {
	health := "online"
	switch {
	case n.Failed:
		health = "fail"
	case role == "replica" && offset == 0:
		health = "loading"
	}
	e.push(command.Map)
	e.addBulkStr("id")
	e.addBulkStr(n.ID)
	e.addBulkStr("port")
	e.addInt(int64(n.Port))
	e.addBulkStr("ip")
	e.addBulkStr(n.Host)
	e.addBulkStr("endpoint")
	e.addBulkStr(n.Host)
	e.addBulkStr("role")
	e.addBulkStr(role)
	e.addBulkStr("replication-offset")
	e.addInt(offset)
	e.addBulkStr("health")
	e.addBulkStr(health)
	e.pop()
}

// asking answers ASKING: the next command may reach a slot this node is
// importing.
func (e *Engine) asking(s *Session, _ *command.Request) {
	if e.notCluster() {
		return
	}
	s.asking = true
	e.ok()
}

// readOnly answers READONLY and READWRITE: with READONLY a cluster
// replica serves the client's reads of its master's slots instead of
// answering -MOVED (route); READWRITE ends that.
func (e *Engine) readOnly(s *Session, r *command.Request) {
	if e.notCluster() {
		return
	}
	s.readOnly = r.Op == command.OpReadOnly
	e.ok()
}

// migrate answers MIGRATE: each key present is sent to the target as
// RESTORE key ttl payload [REPLACE] (Redis's DUMP format), after AUTH when
// asked and SELECT, and deleted here once the target accepted it (kept
// with COPY). The loop waits for the target, up to the timeout, as Redis
// does.
func (e *Engine) migrate(_ *Session, r *command.Request) {
	mig := e.migrateFunc()
	host, port := r.Args[argv.MigrateHost], r.Args[argv.MigratePort]
	user, pass := r.Args[argv.MigrateUser], r.Args[argv.MigratePassword]
	keys := r.Args[argv.MigrateKeys:]
	var cmds []byte
	n := 0
	if len(pass) > 0 {
		if len(user) > 0 {
			cmds = resp.AppendCommand(cmds, []byte("AUTH"), user, pass)
		} else {
			cmds = resp.AppendCommand(cmds, []byte("AUTH"), pass)
		}
		n++
	}
	// SELECT even database 0 outside a cluster: the connection to the
	// target is cached between MIGRATEs, and the previous one may have
	// left it on another database (Redis's migrateCachedSocket remembers
	// its last dbid for the same reason). A cluster has database 0 alone.
	if r.Amount != 0 || e.cl == nil {
		cmds = resp.AppendCommand(cmds, []byte("SELECT"), strconv.AppendInt(nil, r.Amount, 10))
		n++
	}
	first := n
	restore := []byte("RESTORE")
	if e.cl != nil {
		restore = []byte("RESTORE-ASKING") // reaches the target's importing slot, as Redis's MIGRATE
	}
	var sent [][]byte
	for _, k := range keys {
		p, ttl, ok := e.dumpPayload(k)
		if !ok {
			continue
		}
		ttlText := strconv.AppendInt(nil, max(ttl, 0), 10)
		if r.Flags&command.FlagReplace != 0 {
			cmds = resp.AppendCommand(cmds, restore, k, ttlText, p, []byte("REPLACE"))
		} else {
			cmds = resp.AppendCommand(cmds, restore, k, ttlText, p)
		}
		sent = append(sent, k)
		n++
	}
	if len(sent) == 0 {
		e.simple(bs("NOKEY"))
		return
	}
	timeout := time.Duration(r.Amount2) * time.Millisecond
	if timeout <= 0 {
		timeout = time.Second
	}
	replies, err := mig(string(host)+":"+string(port), timeout, cmds, n)
	if err != nil {
		e.errText(command.Err, "IOERR error or timeout on target instance: "+oneLine(err.Error()))
		return
	}
	for i := range first {
		if replies[i] != "" {
			e.errText(command.Err, "ERR Target instance replied with error: "+replies[i])
			return
		}
	}
	var failed string
	for i, k := range sent {
		if rep := replies[first+i]; rep != "" {
			if failed == "" {
				failed = rep
			}
			continue
		}
		if r.Flags&command.FlagCopy == 0 {
			e.st.Del(k)
		}
	}
	if failed != "" {
		e.errText(command.Err, "ERR Target instance replied with error: "+failed)
		return
	}
	e.ok()
}

// dumpPayload returns key's DUMP payload (a copy) and its time to live in
// ms (0: none); ok is false for a missing or just-expired key.
func (e *Engine) dumpPayload(key []byte) (payload []byte, ttl int64, ok bool) {
	p, at, ok := e.appendDump(nil, key)
	if !ok {
		return nil, 0, false
	}
	if at != 0 {
		if ttl = at - e.clock.NowMillis(); ttl <= 0 {
			return nil, 0, false
		}
	}
	return p, ttl, true
}

func (e *Engine) migrateFunc() func(string, time.Duration, []byte, int) ([]string, error) {
	if e.cl != nil {
		return e.cl.o.Migrate
	}
	if e.migrator == nil {
		e.migrator = new(cluster.Migrator)
	}
	return e.migrator.Send
}

// redisMode is INFO's redis_mode.
func (e *Engine) redisMode() string {
	if e.cl != nil {
		return "cluster"
	}
	return "standalone"
}
