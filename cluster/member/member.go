// Package member makes a goblin node a member of a Redis Cluster: it runs
// Redis 7.0's cluster bus (package cluster/bus) on the bus port, keeps the
// node table (ids, addresses, flags, epochs, slots, links), performs the
// MEET/PING/PONG handshake and gossip, detects failures (PFAIL, FAIL by a
// majority of masters' reports), resolves config epoch collisions, applies
// slot claims and UPDATE messages, and keeps nodes.conf in Redis's format.
// The engine's CLUSTER commands call it; it hands the engine's router a
// cluster.State rebuilt on every change.
//
// # Threads
//
// All protocol state lives on the server's loop goroutine, like the store:
// Cluster is a transport.Server the loop polls (Poll), and every CLUSTER
// command reaches it from the loop too. Sockets are not serviced on the
// loop, though: each link has a reader goroutine, which frames the stream
// (bus.Reader), copies each message into a recycled buffer and queues it
// in the Cluster's inbox (a mutex-guarded slice plus an eventfd the loop
// waits on), and a writer goroutine, which sends what the loop appended to
// the link's outbox. Dialling happens on a goroutine of its own. So the
// loop never waits on a peer (a slow or dead peer fills its outbox, which
// is capped and then drops the link, as Redis's link buffer limit does),
// and a resting node's loop pays for the bus only when a message arrives
// (roughly one PING and one PONG per peer per second) or the 100 ms cron
// is due. The alternative, nonblocking sockets read by the loop itself as
// package replica does for the replication stream, would save the
// goroutine hop, but the bus carries little traffic and no client waits
// on it, while the goroutines keep connect, partial writes and link
// teardown out of the loop's code.
//
// # Allocation
//
// Handling a PING or PONG decodes the header and gossip entries into
// values the Cluster keeps, finds nodes in a map keyed by the 40-byte id
// array, and appends the PONG into the link's outbox: nothing is
// allocated unless the membership changes.
package member

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/cluster"
	"github.com/goblin-kv/goblin/cluster/bus"
	"github.com/goblin-kv/goblin/transport"
)

// Errors of CLUSTER commands, worded as Redis words them (after "ERR ").
var (
	// ErrCommand wraps every refusal of a CLUSTER command.
	ErrCommand = errors.New("cluster")
)

func cmdErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrCommand, fmt.Sprintf(format, a...))
}

// Message returns the text a client sees for err: Redis's wording.
func Message(err error) string {
	return strings.TrimPrefix(err.Error(), ErrCommand.Error()+": ")
}

// Options configure a Cluster. Port is required.
type Options struct {
	// Port is the client port announced to peers.
	Port int
	// BusPort is the port the bus listens on: 0 means Port + 10000
	// (cluster-port).
	BusPort int
	// BindHost is the address the bus listens on; "" means all.
	BindHost string
	// ConfigFile is nodes.conf's path (cluster-config-file); "" keeps no
	// file (tests).
	ConfigFile string
	// NodeTimeout is cluster-node-timeout; 0 means 15 s.
	NodeTimeout time.Duration
	// AnnounceIP and AnnounceHostname are cluster-announce-ip and
	// cluster-announce-hostname.
	AnnounceIP, AnnounceHostname string
	// RequireFullCoverage is cluster-require-full-coverage (nil: yes).
	RequireFullCoverage *bool
	// Follow makes this node a replica of the master at host:port, and
	// Unfollow stops that (the engine's replication link); nil does
	// nothing.
	Follow   func(host string, port int)
	Unfollow func()
	// ValidityFactor is cluster-replica-validity-factor (Redis's default
	// is 10; 0 lets a replica with any data age stand in an election).
	// MasterDataAge says how long the link to the master has been silent
	// (since its last interaction, or since it went down), and
	// ReplPingPeriod is repl-ping-replica-period; nil/0 skip the check.
	ValidityFactor int
	MasterDataAge  func() time.Duration
	ReplPingPeriod func() time.Duration
	// MigrationBarrier is cluster-migration-barrier: a replica migrates
	// to an orphaned master only if its own master keeps more working
	// replicas than this. NoReplicaMigration is
	// cluster-allow-replica-migration no.
	MigrationBarrier   int
	NoReplicaMigration bool
	// DelSlotKeys deletes this node's keys in slot (a master that lost
	// the slot to a newer config epoch but stays a master) and returns
	// how many went; nil keeps them.
	DelSlotKeys func(slot int) int
	// Pause holds client writes back for d (a master during a replica's
	// manual failover); Pause(0) lets them go. nil does nothing.
	Pause func(d time.Duration)
	// ReplOffset returns the replication offset to announce: the master
	// offset of a master, the processed one of a replica.
	ReplOffset func() int64
	// Logger receives membership events; nil discards them.
	Logger *slog.Logger
	// TLS, when set, runs the bus's links over TLS (tls-cluster; tls.go).
	TLS *BusTLS
	// NoFailover is cluster-replica-no-failover; AnnouncePort,
	// AnnounceBusPort and AnnounceTLSPort are cluster-announce-port,
	// -bus-port and -tls-port (settings.go).
	NoFailover                                     bool
	AnnouncePort, AnnounceBusPort, AnnounceTLSPort int
	// Deliver hands a PUBLISH (shard false) or PUBLISHSHARD (true) from a
	// peer to this node's subscribers (publish.go); nil drops them. The
	// slices are valid during the call only.
	Deliver func(shard bool, channel, message []byte)
}

// Node is one member of the node table.
type Node struct {
	name         bus.Name
	flags        uint16
	ip           string
	port, cport  int
	hostname     string
	master       *Node // for a replica
	replicas     []*Node
	slots        bus.Slotmap     // the slots it claimed last
	owned        bus.Slotmap     // the slots the owner table gives it (setOwner keeps it)
	claimEpoch   uint64          // the config epoch it claimed them with
	numSlots     int             // len(owned), kept by setOwner
	ranges       []cluster.Range // owned as ranges (slotRanges); nil: to build again
	configEpoch  uint64
	pingSent     int64 // ms, wall clock; 0: no ping pending
	pongRecv     int64 // ms
	dataRecv     int64 // ms
	failTime     int64 // ms
	ctime        int64 // ms: creation (handshake expiry)
	offset       int64
	voteTime     int64 // ms: last vote for a replica of this master
	orphanedTime int64 // ms: since when this master has had no working replica (migration.go)
	link         *link // outbound
	inLink       *link // inbound
	reports      []failReport
}

type failReport struct {
	by   *Node
	time int64
}

// ID returns the node's id as text.
func (n *Node) ID() string { return string(n.name[:]) }

func (n *Node) is(f uint16) bool { return n.flags&f != 0 }

// Cluster is this node's membership in a Redis Cluster. Every method is
// for the loop goroutine only, except WaitFD's descriptor.
type Cluster struct {
	o          Options
	log        *slog.Logger
	myself     *Node
	nodes      map[bus.Name]*Node
	owner      [bus.Slots]*Node
	assigned   int // slots with an owner, kept by setOwner
	state      *cluster.State
	current    uint64 // currentEpoch
	lastVote   uint64
	stateOK    bool
	minorityAt int64 // ms, wall clock: last time a majority of masters was unreachable
	now        int64 // ms, wall clock, set by Poll and by commands
	nextCron   int64 // loop clock
	cronRuns   int
	dirty      bool         // nodes.conf must be written
	synced     durableState // as of the last fsynced nodes.conf
	fsyncs     int          // nodes.conf writes waited for (tests)
	conf       *confWriter  // nil without a cluster-config-file
	changed    bool         // the engine's State must be rebuilt
	blacklist  map[bus.Name]int64
	stats      [2][bus.NumTypes]int64 // sent, received
	delivered  int                    // PUBLISH messages delivered since the last Poll returned

	ln      net.Listener
	efd     int
	mu      sync.Mutex // guards inbox, free
	inbox   []event
	free    [][]byte
	pending atomic.Bool // inbox not empty; written by I/O goroutines, read by Poll
	work    []event     // the loop's copy of the inbox
	links   map[*link]struct{}
	hdr     bus.Header // the message being handled
	gossip  bus.Gossip
	sendHdr bus.Header
	buf     []byte
	list    []*Node
	dirty16 []uint16 // slots lost by updateSlotsWith, whose keys must go
	// failover: this replica's election
	authTime, authSent int64
	authEpoch          uint64
	authCount          int
	authRank           int
	// manual failover (manual.go)
	mfEnd          int64 // ms: when the attempt expires; 0: none
	mfCanStart     bool  // replica: the election may start
	mfSlave        *Node // master: the replica failing over
	mfMasterOffset int64 // replica: the paused master's offset; -1: not yet
	tooOldLogged   int64 // ms: the last "data too old" log line
	closed         bool
	following      bool // the replication link follows myself.master
	wg             sync.WaitGroup
}

type eventKind uint8

const (
	evMsg eventKind = iota
	evConnected
	evClosed
	evAccepted
)

type event struct {
	kind eventKind
	l    *link
	msg  []byte
	conn net.Conn
}

// New starts the bus listener and loads nodes.conf (or creates this
// node with a fresh random id). st is the State the engine routes with;
// the Cluster replaces its view on every change.
func New(o Options, st *cluster.State) (*Cluster, error) {
	if o.NodeTimeout <= 0 {
		o.NodeTimeout = 15 * time.Second
	}
	if o.BusPort == 0 {
		o.BusPort = o.Port + bus.PortIncr
	}
	if o.Port <= 0 || o.Port > 65535 || o.BusPort > 65535 {
		return nil, fmt.Errorf("cluster: client port %d and bus port %d must be 1 to 65535 (a default bus port is the client port + 10000)", o.Port, o.BusPort)
	}
	c := &Cluster{o: o, log: o.Logger, nodes: map[bus.Name]*Node{}, blacklist: map[bus.Name]int64{}, state: st,
		links: map[*link]struct{}{}, now: time.Now().UnixMilli(), mfMasterOffset: -1}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	loaded, err := c.load()
	if err != nil {
		return nil, err
	}
	if !loaded {
		c.myself = c.newNode(randomName(), bus.FlagMyself|bus.FlagMaster)
		c.addNode(c.myself)
		c.log.Info("no cluster configuration found", "myself", c.myself.ID())
	}
	c.applyMyself()
	c.efd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("cluster: eventfd: %w", err)
	}
	c.ln, err = c.listen(net.JoinHostPort(o.BindHost, strconv.Itoa(o.BusPort)))
	if err != nil {
		unix.Close(c.efd)
		return nil, fmt.Errorf("cluster: bus port: %w", err)
	}
	c.wg.Add(1)
	go c.accept()
	if o.ConfigFile != "" {
		c.conf = newConfWriter(o.ConfigFile, c.log)
	}
	c.dirty, c.changed = true, true
	c.updateState()
	c.flush()
	return c, nil
}

func randomName() (n bus.Name) {
	var raw [20]byte
	_, _ = rand.Read(raw[:])
	hex.Encode(n[:], raw[:])
	return n
}

func (c *Cluster) newNode(name bus.Name, flags uint16) *Node {
	return &Node{name: name, flags: flags, ctime: c.now}
}

func (c *Cluster) addNode(n *Node) { c.nodes[n.name] = n; c.changed, c.dirty = true, true }

// delNode removes n: its slots become unassigned, its links close, its
// failure reports vanish.
func (c *Cluster) delNode(n *Node) {
	c.unassignAll(n)
	for _, o := range c.nodes {
		c.removeReport(o, n)
	}
	if n.master != nil {
		n.master.removeReplica(n)
	}
	for _, r := range n.replicas {
		if r.master == n {
			r.master = nil
		}
	}
	c.freeLink(n.link)
	c.freeLink(n.inLink)
	delete(c.nodes, n.name)
	c.changed, c.dirty = true, true
}

func (n *Node) removeReplica(r *Node) {
	for i, x := range n.replicas {
		if x == r {
			n.replicas = append(n.replicas[:i], n.replicas[i+1:]...)
			if len(n.replicas) == 0 {
				n.flags &^= bus.FlagMigrateTo
			}
			return
		}
	}
}

func (n *Node) addReplica(r *Node) {
	for _, x := range n.replicas {
		if x == r {
			return
		}
	}
	n.replicas = append(n.replicas, r)
	n.flags |= bus.FlagMigrateTo // it had a replica: a migration target once orphaned
}

// Myself returns this node's id.
func (c *Cluster) Myself() string { return c.myself.ID() }

// WaitFD implements server.Waitable: the eventfd the I/O goroutines ring.
func (c *Cluster) WaitFD() int { return c.efd }

// CheckNow implements server.Waitable.
func (c *Cluster) CheckNow() {}

// Dormant implements server.Dormant, always true: Poll notices all the
// bus's work through the pending flag the I/O goroutines set, so a
// spinning loop need not look at the eventfd. Without it a cluster node's
// loop has two awake waitables (the client listener and the bus), and
// every spin would make an epoll_wait on the loop's nested set where a
// standalone server's checks its one listener directly: a system call on
// every idle cycle of a node at rest, and a longer path for every request.
// The eventfd stays in the park set, so a message still wakes a parked
// loop.
func (c *Cluster) Dormant() bool { return true }

// Deadline implements server.Deadliner: the next cron run (loop clock).
func (c *Cluster) Deadline() int64 { return c.nextCron }

// Name implements transport.Server.
func (c *Cluster) Name() string { return "cluster-bus" }

// Clients implements transport.Server: the open links.
func (c *Cluster) Clients() int { return len(c.links) }

// UpdateStats implements transport.Server.
func (c *Cluster) UpdateStats(*transport.Stats) {}

var _ transport.Server = (*Cluster)(nil)

// cronEvery is clusterCron's period.
const cronEvery = 100 * time.Millisecond

// Poll implements transport.Server: it handles the messages and link
// events the I/O goroutines queued and runs the cron when due. It reports
// as work only the PUBLISH messages it delivered to this node's
// subscribers (a transport may send what the engine pushed on its next
// Poll): the loop's idle strategy spins after work to catch a client's
// next request at once, and no client waits on the rest of the bus.
// Counting the bus's messages and its cron (a timer: the loop parks no
// later than Deadline for it) would start the strategy over some twenty
// times a second on a node at rest, each time 200 spins and 20 yields
// before the next park, where a standalone server dozes: it cost a 6-node
// cluster's members 10 ms of CPU a second. Nothing the bus does waits for
// the loop's next cycle: its messages go out on the links' goroutines, and
// a bus message changes for the engine (slots, roles, a pause) takes
// effect on its next request.
func (c *Cluster) Poll(now int64) int {
	work := 0
	if c.pending.Load() {
		c.mu.Lock()
		c.work, c.inbox = c.inbox, c.work[:0]
		c.pending.Store(false)
		var b [8]byte
		_, _ = unix.Read(c.efd, b[:])
		c.mu.Unlock()
		c.now = time.Now().UnixMilli()
		for i := range c.work {
			c.handle(&c.work[i])
			work++
		}
		c.mu.Lock()
		for i := range c.work {
			if m := c.work[i].msg; m != nil && cap(m) <= 8192 && len(c.free) < 256 {
				c.free = append(c.free, m[:0])
			}
			c.work[i] = event{}
		}
		c.mu.Unlock()
		c.work = c.work[:0]
	}
	if now >= c.nextCron {
		c.nextCron = now + int64(cronEvery)
		c.now = time.Now().UnixMilli()
		c.cron()
		work++
	}
	if work > 0 {
		c.flush()
	}
	delivered := c.delivered
	c.delivered = 0
	return delivered
}

// flush rebuilds the engine's State and writes nodes.conf when needed.
func (c *Cluster) flush() {
	if c.changed {
		c.changed = false
		c.updateState()
		c.state.Replace(c.view())
	}
	if c.dirty {
		c.dirty = false
		if err := c.save(false); err != nil {
			c.log.Error("cluster: nodes.conf not saved", "file", c.o.ConfigFile, "err", err)
		}
	}
	c.state.SetDown(!c.stateOK)
}

// view is the State the engine routes with: every known node but those
// in handshake, with the slots each owns.
func (c *Cluster) view() *cluster.Config {
	cfg := &cluster.Config{Epoch: c.current, Myself: c.myself.ID()}
	for _, n := range c.sorted() {
		if n.is(bus.FlagHandshake) {
			continue
		}
		nd := cluster.Node{ID: n.ID(), Host: n.ip, Port: n.port, Failed: n.is(bus.FlagFail), Offset: n.offset}
		if nd.Host == "" {
			nd.Host = "127.0.0.1"
		}
		nd.Addrs = []string{"tcp://" + net.JoinHostPort(nd.Host, strconv.Itoa(n.port))}
		if n.master != nil {
			nd.Master = n.master.ID()
		}
		if n.numSlots > 0 {
			nd.Slots = c.slotRanges(n) // the same slice while n's slots stay: Replace skips it
		}
		cfg.Nodes = append(cfg.Nodes, nd)
	}
	return cfg
}

// sorted returns the nodes, myself first, then by id.
func (c *Cluster) sorted() []*Node {
	ns := make([]*Node, 0, len(c.nodes))
	for _, n := range c.nodes {
		ns = append(ns, n)
	}
	sort.Slice(ns, func(i, j int) bool {
		if ns[i] == c.myself || ns[j] == c.myself {
			return ns[i] == c.myself
		}
		return bytes.Compare(ns[i].name[:], ns[j].name[:]) < 0
	})
	return ns
}

// Close stops the listener and every link.
func (c *Cluster) Close() error {
	c.closed = true
	err := c.ln.Close()
	for l := range c.links {
		l.close()
	}
	c.wg.Wait()
	if c.dirty {
		_ = c.save(false)
	}
	if c.conf != nil {
		c.conf.close() // what save handed to the writer is on disk
	}
	unix.Close(c.efd)
	return err
}

// masterOf returns n's master, or n itself for a master.
func masterOf(n *Node) *Node {
	if n.is(bus.FlagSlave) && n.master != nil {
		return n.master
	}
	return n
}

// size is the number of masters serving at least one slot.
func (c *Cluster) size() int {
	k := 0
	for _, n := range c.nodes {
		if n.is(bus.FlagMaster) && n.numSlots > 0 {
			k++
		}
	}
	return k
}

// updateState recounts slots and decides cluster_state as
// clusterUpdateState does: fail when a slot is unassigned or owned by a
// FAIL node (under full coverage), or when fewer than a majority of
// slot-owning masters are reachable; a master back from a minority stays
// fail for the rejoin delay. (Redis's 2 s writable delay after start is
// not copied: a restarted node's slots are its nodes.conf's.)
//
// It runs on every cron (ten times a second) and after every change, so it
// reads the slot counts setOwner keeps and looks at each node once: it
// costs the number of nodes, not 16,384 slots.
func (c *Cluster) updateState() {
	full := c.o.RequireFullCoverage == nil || *c.o.RequireFullCoverage
	ok := !full || c.assigned == bus.Slots
	size, reachable := 0, 0
	for _, n := range c.nodes {
		if full && n.numSlots > 0 && n.is(bus.FlagFail) {
			ok = false
		}
		if n.is(bus.FlagMaster) && n.numSlots > 0 {
			size++
			if !n.is(bus.FlagFail | bus.FlagPFail) {
				reachable++
			}
		}
	}
	if reachable < size/2+1 {
		ok = false
		// Redis counts a node that knows no slot owner (size 0) as in a
		// minority too, so a node given slots within 2 s of its start
		// would wait; goblin starts the wait only from a real minority.
		if size > 0 {
			c.minorityAt = c.now
		}
	}
	// A master that was in a minority waits before it takes writes
	// again, so the majority's configuration (an UPDATE, a new owner of
	// its slots) reaches it first (rejoin_delay).
	if ok && !c.stateOK && c.myself.is(bus.FlagMaster) && c.now-c.minorityAt < c.rejoinDelay() {
		return
	}
	if ok != c.stateOK {
		c.log.Info("cluster state changed", "ok", ok)
	}
	c.stateOK = ok
}

// rejoinDelay is how long a master that was in a minority stays fail:
// cluster-node-timeout within 500 ms to 5 s.
func (c *Cluster) rejoinDelay() int64 {
	return min(max(c.o.NodeTimeout.Milliseconds(), 500), 5000)
}

// durableState is what nodes.conf must not lose in a crash: the epochs
// and the vote (a node that forgot them could vote twice in one epoch or
// claim slots with a stale config epoch) and the node's id.
type durableState struct {
	current, lastVote, configEpoch uint64
	name                           bus.Name
}

// save writes nodes.conf atomically (temporary file, rename). It waits
// for the write, fsynced, when sync is set or the durable state changed
// since the last fsynced write, as Redis 7.0 asks for an fsync only with
// epoch and vote changes (CLUSTER_TODO_FSYNC_CONFIG), CLUSTER SAVECONFIG
// and RESET. Any other change (a slot's owner on every SETSLOT NODE of a
// reshard, a flag) is handed to the config writer's goroutine and not
// waited for: a crash may lose it, and the cluster's gossip gives it back
// at the restart, as with Redis. Only a waited-for write's error is
// returned; the goroutine logs its own.
func (c *Cluster) save(sync bool) error {
	if c.o.ConfigFile == "" {
		return nil
	}
	var b []byte
	for _, n := range c.sorted() {
		if n.is(bus.FlagHandshake) {
			continue
		}
		b = c.appendNodeLine(b, n, true)
		b = append(b, '\n')
	}
	b = fmt.Appendf(b, "vars currentEpoch %d lastVoteEpoch %d\n", c.current, c.lastVote)
	durable := durableState{c.current, c.lastVote, c.myself.configEpoch, c.myself.name}
	if !sync && durable == c.synced && c.conf != nil {
		c.conf.writeLater(b)
		return nil
	}
	var err error
	if c.conf != nil {
		err = c.conf.writeNow(b, true)
	} else {
		err = writeConf(c.o.ConfigFile, b, true)
	}
	c.fsyncs++
	if err == nil {
		c.synced = durable
	}
	return err
}

var flagNames = []struct {
	f    uint16
	name string
}{
	{bus.FlagMyself, "myself"}, {bus.FlagMaster, "master"}, {bus.FlagSlave, "slave"}, {bus.FlagPFail, "fail?"},
	{bus.FlagFail, "fail"}, {bus.FlagHandshake, "handshake"}, {bus.FlagNoAddr, "noaddr"}, {bus.FlagNoFailover, "nofailover"},
}

// appendNodeLine appends n's CLUSTER NODES line (nodes.conf's format).
func (c *Cluster) appendNodeLine(b []byte, n *Node, conf bool) []byte {
	b = append(b, n.name[:]...)
	b = append(b, ' ')
	b = append(b, n.ip...)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(n.port), 10)
	b = append(b, '@')
	b = strconv.AppendInt(b, int64(n.cport), 10)
	if n.hostname != "" {
		b = append(b, ',')
		b = append(b, n.hostname...)
	}
	b = append(b, ' ')
	first := true
	for _, f := range flagNames {
		if n.flags&f.f != 0 {
			if !first {
				b = append(b, ',')
			}
			b = append(b, f.name...)
			first = false
		}
	}
	if first {
		b = append(b, "noflags"...)
	}
	b = append(b, ' ')
	if n.master != nil && n.is(bus.FlagSlave) {
		b = append(b, n.master.name[:]...)
	} else {
		b = append(b, '-')
	}
	b = append(b, ' ')
	b = strconv.AppendInt(b, n.pingSent, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, n.pongRecv, 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, masterOf(n).configEpoch, 10)
	if n.link != nil || n == c.myself {
		b = append(b, " connected"...)
	} else {
		b = append(b, " disconnected"...)
	}
	if n.numSlots > 0 {
		for _, r := range c.slotRanges(n) {
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(r.First), 10)
			if r.Last != r.First {
				b = append(b, '-')
				b = strconv.AppendInt(b, int64(r.Last), 10)
			}
		}
	}
	if n == c.myself && c.state.Open() > 0 {
		for s := range bus.Slots {
			id, imp := c.state.MovingID(s)
			if id == "" {
				continue
			}
			arrow := "->-"
			if imp {
				arrow = "-<-"
			}
			b = fmt.Appendf(b, " [%d%s%s]", s, arrow, id)
		}
	}
	_ = conf
	return b
}

// load reads nodes.conf; false when there is none (or it is empty).
func (c *Cluster) load() (bool, error) {
	if c.o.ConfigFile == "" {
		return false, nil
	}
	data, err := os.ReadFile(c.o.ConfigFile)
	if errors.Is(err, os.ErrNotExist) || err == nil && len(bytes.TrimSpace(data)) == 0 {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("cluster: %w", err)
	}
	fail := func(line int, format string, a ...any) (bool, error) {
		return false, fmt.Errorf("cluster: %s line %d: %s", c.o.ConfigFile, line, fmt.Sprintf(format, a...))
	}
	type pending struct {
		n      *Node
		master string
	}
	var ps []pending
	for i, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if f[0] == "vars" {
			for j := 1; j+1 < len(f); j += 2 {
				v, err := strconv.ParseUint(f[j+1], 10, 64)
				if err != nil {
					return fail(i+1, "%s %q is not a number", f[j], f[j+1])
				}
				switch f[j] {
				case "currentEpoch":
					c.current = v
				case "lastVoteEpoch":
					c.lastVote = v
				}
			}
			continue
		}
		if len(f) < 8 {
			return fail(i+1, "want at least 8 fields, have %d", len(f))
		}
		if !cluster.ValidID(f[0]) {
			return fail(i+1, "node id %q is not 40 lower-case hex digits", f[0])
		}
		var name bus.Name
		copy(name[:], f[0])
		n := c.newNode(name, 0)
		addr, host, _ := strings.Cut(f[1], ",")
		n.hostname = host
		hp, cp, hasC := strings.Cut(addr, "@")
		h, p, err := net.SplitHostPort(hp)
		if err != nil {
			return fail(i+1, "address %q: %v", f[1], err)
		}
		n.ip = h
		if n.port, err = strconv.Atoi(p); err != nil {
			return fail(i+1, "port %q", p)
		}
		n.cport = n.port + bus.PortIncr
		if hasC {
			if n.cport, err = strconv.Atoi(cp); err != nil {
				return fail(i+1, "bus port %q", cp)
			}
		}
		for _, fl := range strings.Split(f[2], ",") {
			found := fl == "noflags"
			for _, x := range flagNames {
				if x.name == fl {
					n.flags |= x.f
					found = true
				}
			}
			if !found {
				return fail(i+1, "unknown flag %q", fl)
			}
		}
		if n.is(bus.FlagMyself) {
			c.myself = n
		}
		if f[4] != "0" {
			n.pingSent = c.now
		}
		if f[5] != "0" {
			n.pongRecv = c.now
		}
		if n.configEpoch, err = strconv.ParseUint(f[6], 10, 64); err != nil {
			return fail(i+1, "config epoch %q", f[6])
		}
		c.current = max(c.current, n.configEpoch)
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") {
				continue // importing/migrating: not persisted across restarts here
			}
			a, b, isRange := strings.Cut(r, "-")
			lo, err1 := strconv.Atoi(a)
			hi := lo
			var err2 error
			if isRange {
				hi, err2 = strconv.Atoi(b)
			}
			if err1 != nil || err2 != nil || lo < 0 || hi >= bus.Slots || lo > hi {
				return fail(i+1, "slot range %q", r)
			}
			for s := lo; s <= hi; s++ {
				c.setOwner(s, n)
			}
		}
		c.nodes[name] = n
		ps = append(ps, pending{n, f[3]})
	}
	for _, p := range ps {
		if p.master == "-" {
			continue
		}
		var mn bus.Name
		copy(mn[:], p.master)
		m := c.nodes[mn]
		if m == nil {
			m = c.newNode(mn, bus.FlagMaster)
			c.nodes[mn] = m
		}
		p.n.master = m
		m.addReplica(p.n)
		p.n.configEpoch = 0
	}
	if c.myself == nil {
		return fail(0, "no line with the myself flag")
	}
	c.log.Info("cluster configuration loaded", "file", c.o.ConfigFile, "myself", c.myself.ID(), "nodes", len(c.nodes), "currentEpoch", c.current)
	return true, nil
}

func (c *Cluster) rand(n int) int { return mrand.IntN(n) }
