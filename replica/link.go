package replica

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/rdb"
	"github.com/goblin-kv/goblin/transport"
)

// Applier is what the link applies the primary's data to, on the loop
// goroutine: the command engine (engine.Engine implements it).
type Applier interface {
	// SetMasterLink records whether the link is up.
	SetMasterLink(up bool)
	// BeginFullSync empties the databases for a full resynchronisation.
	BeginFullSync()
	// Reserve sizes database db for keys more keys (the snapshot's
	// RESIZEDB hint), so the load does not grow its index step by step.
	Reserve(db, keys int)
	// LoadEntry stores one key of the primary's snapshot.
	LoadEntry(e *rdb.Entry) error
	// EndFullSync ends the load: loaded is true at the snapshot's end,
	// false for a sync given up part-way (abortSync).
	EndFullSync(loaded bool)
	// ApplyMaster applies whole commands of the stream in (at most
	// maxCmds), as the master client; see engine.Engine.ApplyMaster.
	ApplyMaster(in []byte, maxCmds int) (consumed, applied, getack int)
	// ResetMaster drops the master client's partial command and open
	// MULTI.
	ResetMaster()
}

// Options configure a Link. Apply is required; the zero value of the rest
// works.
type Options struct {
	Apply Applier
	// ListeningPort is sent in REPLCONF listening-port (the primary lists
	// the replica with it); 0 sends nothing.
	ListeningPort int
	// MasterUser and MasterAuth are masteruser and masterauth: AUTH
	// [user] password is sent when MasterAuth is set.
	MasterUser, MasterAuth string
	// Timeout is repl-timeout: the link is dropped when the primary is
	// silent this long (it PINGs every 10 s by default); default 60 s.
	Timeout time.Duration
	// RetryDelay is the wait before reconnecting after a link loss;
	// default 1 s, as Redis's replicationCron.
	RetryDelay time.Duration
	// AckEvery is how often REPLCONF ACK is sent; default 1 s.
	AckEvery time.Duration
	// SkipUnsupported lets the snapshot decoder skip streams and module
	// values (the Applier decides about the other types it cannot store).
	SkipUnsupported bool
	// ReadOnly is reported in INFO (slave_read_only); the engine enforces
	// it.
	ReadOnly bool
	// AnnounceIP and AnnouncePort are replica-announce-ip and
	// replica-announce-port: sent in REPLCONF ip-address and
	// listening-port instead of the address the primary sees and
	// ListeningPort (a replica behind NAT); empty and 0: not set.
	AnnounceIP   string
	AnnouncePort int
	// Priority is replica-priority, reported in INFO (slave_priority) for
	// Sentinel, which prefers the replica of lowest priority; 0 stands for
	// DefaultPriority. NeverPromote is replica-priority 0: Sentinel never
	// promotes this replica.
	Priority     int
	NeverPromote bool
	// Hidden is replica-announced no: INFO says replica_announced:0 and
	// Sentinel leaves the replica out of what it tells clients.
	Hidden bool
	// LoadSlice bounds the snapshot keys applied per poll (default 2048,
	// about 0.5 ms of work);
	// StreamSlice the stream commands (default 1024).
	LoadSlice, StreamSlice int
	// MaxInbox bounds the bytes the run may hand the loop ahead of it
	// (default 64 MiB).
	MaxInbox int
	// Feed, when set, receives the stream bytes as they are applied, in
	// order (the bytes a chained replica's backlog takes), on the loop.
	Feed func(applied []byte)
	// OnFullSync, when set, is called on the loop when a full
	// resynchronisation has been loaded, with the primary's replication
	// id and offset (a chained replica's backlog restarts there).
	OnFullSync func(replid string, offset int64)
	// OnContinue, when set, is called on the loop when the primary
	// accepted a partial resynchronisation under a new replication id
	// (+CONTINUE <id>: it was promoted), with that id.
	OnContinue func(replid string)
	// TLS, when set, is the client configuration the link dials the
	// primary with (tls-replication yes); nil dials plain TCP. SetTLS
	// changes it for the next connection.
	TLS *tls.Config
	// Logger receives replication events (connect, sync, loss); default
	// slog.Default().
	Logger *slog.Logger
}

// DefaultPriority is replica-priority's default, Redis's.
const DefaultPriority = 100

// Settings returns the options CONFIG SET may change (SetSettings).
func (l *Link) Settings() Options { return l.o }

// SetSettings changes the link's MasterUser, MasterAuth, AnnounceIP,
// AnnouncePort, Priority, NeverPromote, Hidden, ReadOnly and Timeout (CONFIG SET); the
// rest of o is ignored. INFO shows them at once; a connection uses the
// values it started with (the handshake reads a copy), so a new
// masterauth or announced address takes effect at the next connection, as
// in Redis; a new Timeout (repl-timeout) applies at once, to the next read
// of the running connection. Loop goroutine only.
func (l *Link) SetSettings(o Options) {
	l.o.MasterUser, l.o.MasterAuth = o.MasterUser, o.MasterAuth
	l.o.AnnounceIP, l.o.AnnouncePort = o.AnnounceIP, o.AnnouncePort
	l.o.Priority, l.o.NeverPromote, l.o.Hidden, l.o.ReadOnly = o.Priority, o.NeverPromote, o.Hidden, o.ReadOnly
	if o.Timeout > 0 {
		l.o.Timeout = o.Timeout
		l.timeout.Store(int64(o.Timeout))
	}
}

// Priority returns replica-priority as INFO shows it.
func (l *Link) Priority() int {
	switch {
	case l.o.NeverPromote:
		return 0
	case l.o.Priority <= 0:
		return DefaultPriority
	}
	return l.o.Priority
}

func (o *Options) ensureDefaults() {
	if o.Timeout <= 0 {
		o.Timeout = 60 * time.Second
	}
	if o.RetryDelay <= 0 {
		o.RetryDelay = time.Second
	}
	if o.AckEvery <= 0 {
		o.AckEvery = time.Second
	}
	if o.LoadSlice <= 0 {
		o.LoadSlice = 2048
	}
	if o.StreamSlice <= 0 {
		o.StreamSlice = 1024
	}
	if o.MaxInbox <= 0 {
		o.MaxInbox = 64 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// The link states, as ROLE names them.
const (
	StateNone       = "none"
	StateConnect    = "connect"    // waiting to connect
	StateConnecting = "connecting" // dialling
	StateHandshake  = "handshake"  // PING, AUTH, REPLCONF, PSYNC
	StateSync       = "sync"       // receiving and loading the snapshot
	StateConnected  = "connected"  // following the stream
)

// NoID is the replication id that is not set: forty zeros.
const NoID = "0000000000000000000000000000000000000000"

// IDs are the replication ids and offsets (PSYNC2). A replica keeps its
// primary's id and its own applied offset; a promotion (Unfollow) makes a
// new id and keeps the old one as ID2, valid up to Offset2, so former
// siblings can PSYNC to the promoted node. The primary side of replication
// takes them over at the promotion.
type IDs struct {
	ID      string // master_replid
	Offset  int64  // master_repl_offset: stream bytes applied
	ID2     string // master_replid2 (NoID when unset)
	Offset2 int64  // second_repl_offset (-1 when unset)
}

// Stats are the link's counters for metrics. Loop goroutine.
type Stats struct {
	LinkUp       bool
	Syncing      bool
	Offset       int64 // applied
	ReadOffset   int64 // received
	FullSyncs    int64 // full resynchronisations loaded
	PartialSyncs int64 // +CONTINUE
	LinkLosses   int64
	BytesIn      int64
	LastIOMillis int64 // unix ms of the last byte from the primary; 0: never
	SyncMillis   int64 // the last full resynchronisation, transfer and load
}

// event kinds, from a run to the loop.
const (
	evState    = iota // text: a new link state
	evFull            // +FULLRESYNC: id, offset
	evEntries         // a batch of snapshot keys
	evFullDone        // the snapshot ended
	evContinue        // +CONTINUE [id]
	evDown            // the run ended: err
	evAttach          // the stream phase: the loop reads conn from now on; data is what was buffered
	evResize          // the snapshot's RESIZEDB hint: offset keys in database pos
)

type event struct {
	kind    int
	gen     uint64
	text    string
	offset  int64
	entries []rdb.Entry
	pos     int // entries applied so far
	data    []byte
	err     error
	conn    net.Conn
	size    int // bytes it holds, for MaxInbox
}

// Link is the replica's link to its primary. It is a transport.Server:
// every method but the run's must be called on the loop goroutine.
type Link struct {
	o   Options
	log *slog.Logger
	tls tlsHolder // tls-replication (tls.go)

	// Loop-owned.
	polledAt  int64 // the last Poll's now (Deadline)
	following bool
	host      string
	port      int
	gen       uint64
	cur       *run
	state     string
	ids       IDs
	linkUp    bool
	syncing   bool
	syncStart time.Time
	downSince time.Time // zero: never up
	queue     []event
	stream    []byte // received stream bytes; stream[head:] are not applied yet
	head      int
	consumed  int  // of stream[head:], handed to the engine (MULTI's bytes wait for EXEC)
	stalled   bool // stream ends in a partial command: wait for more bytes
	stats     Stats
	syncErr   error
	// foDone is FAILOVER's callback while this node fails over to the
	// primary it follows (FollowFailover): PSYNC carries FAILOVER, and
	// the primary's answer is reported once.
	foDone func(error)

	// The stream phase: the loop reads the primary's socket itself,
	// nonblocking, when its epoll set says it is readable.
	sock     syscall.RawConn
	sockFD   int
	hot      bool  // the last read found bytes, or CheckNow: read on the next Poll
	checked  int64 // the loop's clock at the last read (or attempt)
	lastRead int64 // the loop's clock at the last byte read
	rbuf     []byte
	events   []unix.EpollEvent

	// Shared with the runs.
	mu         sync.Mutex
	cond       *sync.Cond
	inbox      []event
	inboxBytes int
	closed     bool
	pending    atomic.Bool
	efd        int          // the runs ring it (eventfd)
	epfd       int          // WaitFD: efd and, in the stream phase, the primary's socket
	ackOffset  atomic.Int64 // the offset REPLCONF ACK sends
	// timeout is repl-timeout in nanoseconds: written by the loop (New,
	// SetSettings), read by the runs before each blocking read and
	// write, so CONFIG SET repl-timeout reaches a link in its handshake
	// or full sync too (the stream phase reads l.o.Timeout on the loop).
	timeout   atomic.Int64
	lastIO    atomic.Int64 // unix ms
	bytesIn   atomic.Int64
	syncTotal atomic.Int64 // -1: unknown ($EOF)
	syncRead  atomic.Int64
}

var _ transport.Server = (*Link)(nil)

// New returns a link that follows nothing yet (Follow starts it).
func New(o Options) (*Link, error) {
	o.ensureDefaults()
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("replica: eventfd: %w", err)
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		unix.Close(efd)
		return nil, fmt.Errorf("replica: epoll_create: %w", err)
	}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, efd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(efd)}); err != nil {
		unix.Close(efd)
		unix.Close(epfd)
		return nil, fmt.Errorf("replica: epoll_ctl: %w", err)
	}
	l := &Link{o: o, log: o.Logger, efd: efd, epfd: epfd, sockFD: -1, state: StateNone,
		ids: IDs{ID: "?", Offset: -1, ID2: NoID, Offset2: -1}, rbuf: make([]byte, 64<<10), events: make([]unix.EpollEvent, 2)}
	l.cond = sync.NewCond(&l.mu)
	l.timeout.Store(int64(o.Timeout))
	l.SetTLS(o.TLS)
	return l, nil
}

// Name implements transport.Server.
func (l *Link) Name() string { return "replica/resp" }

// Clients implements transport.Server: 1 while the primary is connected.
func (l *Link) Clients() int {
	if l.linkUp {
		return 1
	}
	return 0
}

// UpdateStats implements transport.Server.
func (l *Link) UpdateStats(st *transport.Stats) {
	st.Clients += int64(l.Clients())
	st.BytesIn += l.bytesIn.Load()
}

// WaitFD implements server.Waitable: an epoll set that polls readable when
// a run hands the loop something (its eventfd) or, in the stream phase,
// when the primary's socket has bytes.
func (l *Link) WaitFD() int { return l.epfd }

// Deadline implements server.Deadliner: with events or stream commands
// left past a Poll's slice (LoadSlice, StreamSlice), which no epoll event
// announces, it is the last Poll's now, so the loop neither parks nor rests
// (server.Loop.Rest) before applying them; else never (math.MaxInt64).
// Loop goroutine only.
func (l *Link) Deadline() int64 {
	if l.backlogged() {
		return l.polledAt
	}
	return math.MaxInt64
}

// backlogged reports whether events or whole stream commands wait to be
// applied (a stalled stream waits for the rest of a command: not work).
func (l *Link) backlogged() bool {
	return len(l.queue) > 0 || (!l.stalled && l.head+l.consumed != len(l.stream))
}

// Dormant implements server.Dormant: without a primary's socket to read
// (not following, or between connections) the link has nothing for a
// spinning loop to check; what its runs hand over, Poll sees on every
// call (pending). Loop goroutine only, like sock.
func (l *Link) Dormant() bool { return l.sock == nil }

// CheckNow implements server.Waitable: the next Poll reads the socket
// whatever checkEvery says.
func (l *Link) CheckNow() { l.hot = true }

// checkEvery is how long (on the loop's clock) a busy loop goes between
// two reads of a quiet primary socket: a read that finds nothing costs a
// system call (about a microsecond), which a loop busy with other clients
// should not pay every cycle, and a write of the primary must not wait
// long behind them either. An idle loop reads at once (CheckNow), as does
// a Poll after one that found bytes. It was 16 Polls: with a client
// polling the replica in a tight loop, 16 of its round trips (300-400 µs
// on a loaded machine) passed before the stream was read.
const checkEvery = 50 * time.Microsecond

// maxUnapplied bounds the stream bytes the loop reads ahead of what it has
// applied.
const maxUnapplied = 1 << 20

// Stats returns the link's counters.
func (l *Link) Stats() Stats {
	st := l.stats
	st.LinkUp, st.Syncing = l.linkUp, l.syncing
	st.Offset = l.ids.Offset
	st.ReadOffset = l.readOffset()
	st.BytesIn = l.bytesIn.Load()
	st.LastIOMillis = l.lastIO.Load()
	return st
}

// IDs returns the replication ids and offset.
func (l *Link) IDs() IDs { return l.ids }

// SetHistory sets the replication ids and offset the next PSYNC offers: a
// primary that starts following another offers its own history (Redis's
// replicationCacheMasterUsingMyself), so a promoted sibling that shares it
// can answer +CONTINUE. It does nothing while the link follows a primary.
// Loop goroutine.
func (l *Link) SetHistory(id string, offset int64, id2 string, offset2 int64) {
	if l.following {
		return
	}
	l.ids = IDs{ID: id, Offset: offset, ID2: id2, Offset2: offset2}
}

// Following reports whether the link follows a primary, and which.
func (l *Link) Following() (host string, port int, ok bool) { return l.host, l.port, l.following }

// Follow starts following host:port, dropping the link to another
// primary. It keeps the replication id and offset, so the new primary may
// answer +CONTINUE (a promoted sibling). It reports false when it already
// follows host:port.
func (l *Link) Follow(host string, port int) bool {
	if l.following && l.host == host && l.port == port {
		return false
	}
	l.foDone = nil
	l.follow(host, port)
	return true
}

// FollowFailover follows host:port for a FAILOVER of this node (see
// engine.FailoverControl): each attempt's PSYNC carries a fourth argument
// FAILOVER, by which the replica there promotes itself, until it
// answers. done then gets nil (+CONTINUE or +FULLRESYNC) or the refusal
// (an error wrapping ErrFailoverRefused), once, on the loop. A connection
// that fails before the answer is retried as any link's.
func (l *Link) FollowFailover(host string, port int, done func(error)) {
	l.foDone = done
	l.follow(host, port)
}

func (l *Link) follow(host string, port int) {
	l.stopRun()
	l.following, l.host, l.port = true, host, port
	l.setLinkDown()
	l.log.Info("replica: following a primary", "host", host, "port", port, "failover", l.foDone != nil)
	l.startRun(0)
}

// failoverAnswered reports the primary's answer to PSYNC FAILOVER, once.
func (l *Link) failoverAnswered(err error) {
	if done := l.foDone; done != nil {
		l.foDone = nil
		done(err)
	}
}

// Unfollow stops following (REPLICAOF NO ONE) and shifts the replication
// ids as a promotion does: the old id becomes ID2, valid up to
// offset+1, and a new random id is made.
func (l *Link) Unfollow() {
	if !l.following {
		return
	}
	l.stopRun()
	l.following, l.foDone = false, nil
	l.setLinkDown()
	l.state = StateNone
	if l.ids.ID != "?" {
		l.ids.ID2, l.ids.Offset2 = l.ids.ID, l.ids.Offset+1
	} else {
		l.ids.Offset = 0
	}
	l.ids.ID = newID()
	l.log.Info("replica: stopped following; the replication id is new", "replid", l.ids.ID, "replid2", l.ids.ID2, "offset", l.ids.Offset)
}

// Role implements engine.ReplicaControl.
func (l *Link) Role() (host string, port int, state string, offset int64) {
	off := l.ids.Offset
	if l.state != StateConnected {
		off = -1
	}
	return l.host, l.port, l.state, off
}

func newID() string {
	var b [20]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (l *Link) setLinkDown() {
	if l.linkUp {
		l.downSince = time.Now()
	}
	l.linkUp = false
	l.o.Apply.SetMasterLink(false)
}

// startRun starts a connection attempt after delay, resuming from the
// current id and offset.
func (l *Link) startRun(delay time.Duration) {
	l.gen++
	l.state = StateConnect
	r := &run{l: l, o: l.o, gen: l.gen, host: l.host, port: l.port, delay: delay, failover: l.foDone != nil,
		replid: l.ids.ID, offset: l.ids.Offset, quit: make(chan struct{}), poke: make(chan struct{}, 1)}
	l.cur = r
	go r.main()
}

// stopRun ends the current run (its events are dropped: they carry an
// old generation) and forgets the stream read so far.
func (l *Link) stopRun() {
	l.detach()
	if l.cur != nil {
		l.cur.stop()
		l.cur = nil
	}
	l.gen++
	if l.syncing {
		l.abortSync()
	}
	l.o.Apply.ResetMaster()
	l.stream, l.head, l.consumed, l.stalled = l.stream[:0], 0, 0, false
	l.queue = l.queue[:0]
}

// abortSync ends a full resynchronisation that did not complete: the
// databases hold part of the snapshot, so the next attempt must be a full
// one.
func (l *Link) abortSync() {
	l.syncing = false
	l.o.Apply.EndFullSync(false)
	l.ids.ID, l.ids.Offset = "?", -1
}

// post hands ev to the loop, waiting while the inbox is full (unless the
// run was stopped). Any goroutine.
func (l *Link) post(r *run, ev event) {
	ev.gen = r.gen
	l.mu.Lock()
	for l.inboxBytes > l.o.MaxInbox && !l.closed && !r.stopped.Load() {
		l.cond.Wait()
	}
	if l.closed {
		l.mu.Unlock()
		return
	}
	if ev.kind == evAttach {
		ev.data = append([]byte(nil), ev.data...)
	}
	l.inbox = append(l.inbox, ev)
	l.inboxBytes += ev.size
	if !l.pending.Swap(true) {
		var one = [8]byte{1}
		_, _ = unix.Write(l.efd, one[:])
	}
	l.mu.Unlock()
}

// Poll implements transport.Server: it takes the runs' events and applies
// a bounded slice of them.
func (l *Link) Poll(now int64) int {
	l.polledAt = now
	if l.pending.Load() {
		l.mu.Lock()
		l.queue = append(l.queue, l.inbox...)
		clear(l.inbox)
		l.inbox = l.inbox[:0]
		l.inboxBytes = 0
		l.pending.Store(false)
		var b [8]byte
		_, _ = unix.Read(l.efd, b[:])
		l.cond.Broadcast()
		l.mu.Unlock()
	}
	work := 0
	// A loop that falls behind stops reading (the primary's socket and TCP
	// hold the rest) unless it waits for the end of a long command.
	if l.sock != nil && len(l.queue) == 0 && (l.stalled || len(l.stream)-l.head < maxUnapplied) {
		if l.hot || now-l.checked >= int64(checkEvery) {
			l.checked = now
			n, err := l.readStream(now)
			work += n
			if err != nil {
				l.linkLost(err)
				return work + 1
			}
		}
	}
	if !l.backlogged() {
		return work
	}
	loadLeft, cmdsLeft := l.o.LoadSlice, l.o.StreamSlice
	for len(l.queue) > 0 && loadLeft > 0 && cmdsLeft > 0 {
		ev := &l.queue[0]
		if ev.gen != l.gen {
			l.popEvent()
			continue
		}
		work++
		switch ev.kind {
		case evState:
			l.state = ev.text
		case evFull:
			l.log.Info("replica: full resynchronisation", "replid", ev.text, "offset", ev.offset)
			l.syncing, l.syncStart, l.syncErr = true, time.Now(), nil
			l.state = StateSync
			l.o.Apply.BeginFullSync()
			l.failoverAnswered(nil)
		case evResize:
			l.o.Apply.Reserve(ev.pos, int(ev.offset))
		case evEntries:
			n := min(loadLeft, len(ev.entries)-ev.pos)
			for i := ev.pos; i < ev.pos+n && l.syncErr == nil; i++ {
				if err := l.o.Apply.LoadEntry(&ev.entries[i]); err != nil {
					l.syncErr = err
				}
			}
			ev.pos += n
			loadLeft -= n
			work += n
			if l.syncErr != nil {
				l.log.Error("replica: cannot load the primary's snapshot; retrying with another full resynchronisation", "err", l.syncErr)
				l.abortSync()
				l.restart()
				return work
			}
			if ev.pos < len(ev.entries) {
				continue // the rest on the next poll
			}
		case evFullDone:
			l.syncing = false
			l.o.Apply.EndFullSync(true)
			l.ids = IDs{ID: ev.text, Offset: ev.offset, ID2: NoID, Offset2: -1}
			l.ackOffset.Store(ev.offset)
			l.stats.FullSyncs++
			l.stats.SyncMillis = time.Since(l.syncStart).Milliseconds()
			l.log.Info("replica: snapshot loaded; following the stream", "duration", time.Since(l.syncStart), "offset", ev.offset)
			if l.o.OnFullSync != nil {
				l.o.OnFullSync(ev.text, ev.offset)
			}
			l.up()
		case evContinue:
			if ev.text != "" && ev.text != l.ids.ID {
				l.ids.ID2, l.ids.Offset2, l.ids.ID = l.ids.ID, l.ids.Offset+1, ev.text
				l.log.Info("replica: the primary's replication id changed", "replid", ev.text, "replid2", l.ids.ID2)
				if l.o.OnContinue != nil {
					l.o.OnContinue(ev.text)
				}
			}
			l.stats.PartialSyncs++
			l.log.Info("replica: partial resynchronisation accepted", "offset", l.ids.Offset)
			l.up()
			l.failoverAnswered(nil)
		case evDown:
			l.linkLost(ev.err)
			l.popEvent()
			return work
		case evAttach:
			l.stream = append(l.stream, ev.data...)
			l.stalled = false
			l.attach(ev.conn, now)
		}
		l.popEvent()
		if l.head+l.consumed < len(l.stream) && !l.stalled {
			cmdsLeft -= l.applyStream(cmdsLeft)
		}
	}
	if len(l.queue) == 0 && l.head+l.consumed < len(l.stream) && !l.stalled && cmdsLeft > 0 {
		work += l.applyStream(cmdsLeft)
	}
	return work
}

// attach starts the stream phase: the loop reads c from now on.
func (l *Link) attach(c net.Conn, now int64) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		l.linkLost(fmt.Errorf("replica: the connection to the primary is a %T, not a socket", c))
		return
	}
	// The handshake's reads set a read deadline on c (timeoutConn); the
	// loop's raw reads would still honour it and fail with "i/o timeout"
	// once it passed, however much the primary sent since. The loop keeps
	// repl-timeout itself (readStream), so the deadline goes.
	err := c.SetReadDeadline(time.Time{})
	var rc syscall.RawConn
	if err == nil {
		rc, err = sc.SyscallConn()
	}
	if err == nil {
		err = rc.Control(func(fd uintptr) { l.sockFD = int(fd) })
	}
	if err == nil {
		err = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, l.sockFD, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(l.sockFD)})
	}
	if err != nil {
		l.sockFD = -1
		l.linkLost(fmt.Errorf("replica: watching the primary's socket: %w", err))
		return
	}
	l.sock, l.hot, l.lastRead = rc, true, now
}

// detach ends the stream phase (before the run closes the socket).
func (l *Link) detach() {
	if l.sock == nil {
		return
	}
	_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, l.sockFD, nil)
	l.sock, l.sockFD = nil, -1
}

// readStream reads what the primary's socket holds, without waiting, into
// the stream; an error is the link's end (EOF, a reset, repl-timeout).
func (l *Link) readStream(now int64) (int, error) {
	work := 0
	for i := 0; i < 4; i++ { // bounded: 256 KiB per Poll
		var n int
		var rerr error
		err := l.sock.Read(func(fd uintptr) bool {
			n, rerr = unix.Read(int(fd), l.rbuf)
			return true // never wait: the loop polls
		})
		if err == nil {
			err = rerr
		}
		switch {
		case n > 0:
			l.stream = append(l.stream, l.rbuf[:n]...)
			l.stalled = false
			l.lastRead = now
			l.lastIO.Store(time.Now().UnixMilli())
			l.bytesIn.Add(int64(n))
			work++
			l.hot = true
			if n < len(l.rbuf) {
				return work, nil
			}
			continue
		case err == unix.EAGAIN || err == unix.EINTR:
			l.hot = false
			if now-l.lastRead > int64(l.o.Timeout) {
				return work, fmt.Errorf("replica: the primary was silent for longer than repl-timeout (%v)", l.o.Timeout)
			}
			return work, nil
		case err != nil:
			return work, fmt.Errorf("replica: reading the stream: %w", err)
		default:
			return work, fmt.Errorf("replica: reading the stream: %w", io.EOF)
		}
	}
	return work, nil
}

func (l *Link) popEvent() {
	l.queue[0] = event{}
	l.queue = l.queue[1:]
	if len(l.queue) == 0 {
		l.queue = l.queue[:0:0]
	}
}

// up marks the link up after a sync.
func (l *Link) up() {
	l.linkUp = true
	l.state = StateConnected
	l.o.Apply.SetMasterLink(true)
	if l.cur != nil {
		l.cur.ack()
	}
}

// applyStream applies up to max whole commands of the stream and returns
// how many units of work it did.
func (l *Link) applyStream(max int) int {
	consumed, applied, getack := l.o.Apply.ApplyMaster(l.stream[l.head+l.consumed:], max)
	if consumed == 0 {
		l.stalled = true
		return 0
	}
	// applied counts from stream[head], the first byte not yet applied:
	// the bytes of an open MULTI stay there until its EXEC.
	l.consumed += consumed
	if applied > 0 {
		if l.o.Feed != nil {
			l.o.Feed(l.stream[l.head : l.head+applied])
		}
		l.ids.Offset += int64(applied)
		l.head += applied
		l.consumed -= applied
		l.ackOffset.Store(l.ids.Offset)
	}
	if getack > 0 && l.cur != nil {
		l.ackOffset.Store(l.ids.Offset - int64(getack))
		l.cur.ack()
	}
	switch {
	case l.head == len(l.stream):
		l.stream, l.head = l.stream[:0], 0
		if cap(l.stream) > 1<<20 {
			l.stream = nil // do not keep a burst's buffer
		}
	case l.head >= 64<<10 && l.head >= len(l.stream)/2:
		// Compact once the applied part is the larger: each byte is
		// copied a bounded number of times.
		n := copy(l.stream, l.stream[l.head:])
		l.stream, l.head = l.stream[:n], 0
	}
	return 1 + consumed/4096
}

// linkLost handles the end of a run: a reconnect after RetryDelay, with
// PSYNC from the offset applied.
func (l *Link) linkLost(err error) {
	l.detach()
	if l.cur != nil {
		l.cur.stop()
		l.cur = nil
	}
	l.gen++ // what the run may still post is stale
	if l.syncing {
		l.abortSync()
	}
	l.o.Apply.ResetMaster()
	l.stream, l.head, l.consumed, l.stalled = l.stream[:0], 0, 0, false
	if l.linkUp {
		l.stats.LinkLosses++
	}
	l.setLinkDown()
	l.log.Warn("replica: link to the primary lost; reconnecting", "host", l.host, "port", l.port, "err", err, "retry_in", l.o.RetryDelay)
	var refused func(error)
	if errors.Is(err, ErrFailoverRefused) {
		refused, l.foDone = l.foDone, nil // the next attempt is a plain PSYNC, unless refused stops the link
	}
	if l.following {
		l.startRun(l.o.RetryDelay)
	}
	if refused != nil {
		refused(err)
	}
}

// restart drops the current run and starts another after RetryDelay.
func (l *Link) restart() {
	l.stopRun()
	l.setLinkDown()
	l.startRun(l.o.RetryDelay)
}

func (l *Link) readOffset() int64 {
	return l.ids.Offset + int64(len(l.stream)-l.head)
}

// Close implements transport.Server: the run stops, the eventfd closes.
func (l *Link) Close() error {
	l.stopRun()
	l.mu.Lock()
	l.closed = true
	l.cond.Broadcast()
	l.mu.Unlock()
	unix.Close(l.epfd)
	return unix.Close(l.efd)
}

// AppendInfo implements engine.ReplicaControl: INFO replication's lines
// for a replica, in Redis 7.0's order.
func (l *Link) AppendInfo(b []byte) []byte {
	now := time.Now()
	line := func(k, v string) { b = append(append(append(append(b, k...), ':'), v...), "\r\n"...) }
	num := func(k string, v int64) { line(k, strconv.FormatInt(v, 10)) }
	line("role", "slave")
	line("master_host", l.host)
	num("master_port", int64(l.port))
	if l.linkUp {
		line("master_link_status", "up")
	} else {
		line("master_link_status", "down")
	}
	lastIO := int64(-1)
	if ms := l.lastIO.Load(); ms > 0 && (l.linkUp || l.syncing) {
		lastIO = (now.UnixMilli() - ms) / 1000
	}
	num("master_last_io_seconds_ago", lastIO)
	num("master_sync_in_progress", b2i(l.syncing))
	num("slave_read_repl_offset", l.readOffset())
	num("slave_repl_offset", l.ids.Offset)
	if l.syncing {
		total, read := l.syncTotal.Load(), l.syncRead.Load()
		num("master_sync_total_bytes", total)
		num("master_sync_read_bytes", read)
		left := int64(0)
		perc := 0.0
		if total > 0 {
			left = total - read
			perc = 100 * float64(read) / float64(total)
		}
		num("master_sync_left_bytes", left)
		line("master_sync_perc", strconv.FormatFloat(perc, 'f', 2, 64))
		num("master_sync_last_io_seconds_ago", lastIO)
	}
	if !l.linkUp {
		down := int64(-1)
		if !l.downSince.IsZero() {
			down = int64(now.Sub(l.downSince) / time.Second)
		}
		num("master_link_down_since_seconds", down)
	}
	num("slave_priority", int64(l.Priority()))
	num("slave_read_only", b2i(l.o.ReadOnly))
	num("replica_announced", b2i(!l.o.Hidden))
	num("connected_slaves", 0)
	line("master_failover_state", "no-failover")
	id := l.ids.ID
	if id == "?" {
		id = NoID
	}
	line("master_replid", id)
	line("master_replid2", l.ids.ID2)
	num("master_repl_offset", max(l.ids.Offset, 0))
	num("second_repl_offset", l.ids.Offset2)
	num("repl_backlog_active", 0)
	num("repl_backlog_size", 1<<20)
	num("repl_backlog_first_byte_offset", 0)
	num("repl_backlog_histlen", 0)
	return b
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
