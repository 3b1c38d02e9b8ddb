package engine

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/goblin-kv/goblin/acl"
	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/rdb"
	"github.com/goblin-kv/goblin/snapshot"
	"github.com/goblin-kv/goblin/store"
)

// The replica side of replication: REPLICAOF, SLAVEOF and ROLE, the gate
// that refuses normal clients' writes on a read-only replica (READONLY),
// everything during the initial load (LOADING) and, with
// replica-serve-stale-data no, everything while the link is down
// (MASTERDOWN); and the hooks the link to the primary (package replica)
// calls on the loop to load the primary's snapshot and apply its command
// stream through a session marked as the master client.

// ReplicaControl is the link to a primary, as the engine drives it
// (package replica's Link implements it). Every method runs on the loop.
type ReplicaControl interface {
	// Follow starts following the primary at host:port (REPLICAOF host
	// port), dropping any link to another; it reports false, doing
	// nothing, when the link already follows that primary.
	Follow(host string, port int) (changed bool)
	// Unfollow stops following (REPLICAOF NO ONE): the link closes and
	// the replication ids shift as a promotion does.
	Unfollow()
	// Role returns ROLE's replica fields.
	Role() (host string, port int, state string, offset int64)
	// AppendInfo appends INFO replication's lines for a replica, after
	// "# Replication".
	AppendInfo(dst []byte) []byte
}

// ReplicaOptions configure the replica side (Options.Replica).
type ReplicaOptions struct {
	// Control is the link; nil: REPLICAOF answers an error.
	Control ReplicaControl
	// WritableReplica is replica-read-only no: normal clients may write.
	WritableReplica bool
	// NoStaleData is replica-serve-stale-data no: while the link is down
	// only the commands flagged stale run (MASTERDOWN).
	NoStaleData bool
	// SkipUnsupported skips the primary's keys of types goblin does not
	// store (sorted sets, streams) in a full resynchronisation instead of
	// failing it; they are counted (ReplicaSkipped).
	SkipUnsupported bool
}

// followState is the engine's replica state: the primary it follows. Loop goroutine only.
type followState struct {
	on       bool // following a primary: the gate runs
	applying bool // ApplyMaster is running: the stores are in a primary's expiry mode
	loading  bool // a full resynchronisation is being loaded
	// partial: the last full resynchronisation was given up part-way and
	// the databases hold the part loaded; no save writes them (savesHeld)
	// until a sync completes or a promotion makes them the server's own.
	partial bool
	linkUp  bool
	master  *Session // the master client: applies the primary's stream
	txBytes int      // stream bytes of an open MULTI, not yet applied
	skipped int64    // keys of unsupported types in the last full sync
	errors  int64    // stream commands that answered an error
	user    *acl.User
	// bulk is the databases a full resynchronisation loads, in the
	// store's bulk-load mode from BeginFullSync to EndFullSync, as the
	// load at start's (snapshot.Loader).
	bulk snapshot.BulkLoad
}

// The refusals, worded as Redis 7.0's.
const (
	txtReadOnly   = "READONLY You can't write against a read only replica."
	txtLoading    = "LOADING Redis is loading the dataset in memory"
	txtMasterDown = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
)

// replGate refuses r for a normal client of a replica: a write on a
// read-only replica, anything not flagged loading during the load,
// anything not flagged stale while the link is down under
// replica-serve-stale-data no. It reports whether it refused. A write it
// lets through (replica-read-only no) runs with the stores in a primary's
// expiry mode, restored by the next Tick.
func (e *Engine) replGate(s *Session, r *command.Request) bool {
	if s.master {
		return false
	}
	spec := command.Lookup(r.Op)
	if spec == nil {
		return false
	}
	switch {
	case spec.Flags&command.Write != 0 && !e.o.Replica.WritableReplica:
		if e.forward(s) { // forward.go: parked until the primary's answer is replicated here
			return true
		}
		e.errText(command.Err, txtReadOnly)
	case !e.follow.linkUp && e.o.Replica.NoStaleData && spec.Flags&command.Stale == 0:
		e.errText(command.Err, txtMasterDown)
	case e.follow.loading && spec.Flags&command.Loading == 0:
		e.errText(command.Err, txtLoading)
	default:
		if spec.Flags&command.Write != 0 {
			e.keepExpired(false)
		}
		return false
	}
	if s.tx.on {
		s.tx.abort = true
	}
	return true
}

// keepExpired switches every database between a replica's expiry mode
// (on) and a primary's (see store.Store.SetKeepExpired).
func (e *Engine) keepExpired(on bool) {
	for _, st := range e.dbs {
		if st != nil && st.KeepExpired() != on {
			st.SetKeepExpired(on)
		}
	}
}

// noExpiry switches every database in (on) and out of the mode the
// primary's stream is applied in: no key's time has passed, whatever this
// server's clock says, as for Redis's master client (store.Store.SetNoExpiry).
func (e *Engine) noExpiry(on bool) {
	for _, st := range e.dbs {
		if st != nil {
			st.SetNoExpiry(on)
		}
	}
}

// replicaOf is REPLICAOF host port, REPLICAOF NO ONE and SLAVEOF.
func (e *Engine) replicaOf(_ *Session, r *command.Request) {
	if e.cl != nil {
		e.errText(command.Err, "ERR REPLICAOF not allowed in cluster mode.")
		return
	}
	if e.fo.state != foNone {
		e.errText(command.Err, "ERR REPLICAOF not allowed while failing over.")
		return
	}
	ctl := e.o.Replica.Control
	if ctl == nil {
		e.errText(command.Err, "ERR this server cannot follow a primary (no replication link)")
		return
	}
	host, port := r.Args[0], r.Args[1]
	if bytes.EqualFold(host, []byte("no")) && bytes.EqualFold(port, []byte("one")) {
		if e.follow.on {
			ctl.Unfollow()
			e.SetReplica(false)
		}
		e.ok()
		return
	}
	p, err := strconv.ParseInt(string(port), 10, 64)
	if err != nil || p < 0 || p > 65535 {
		e.errText(command.Err, "ERR Invalid master port")
		return
	}
	if h, ok := ctl.(historySetter); ok && !e.follow.on {
		// A primary that starts following offers its own history, so a
		// promoted former replica of it can continue (PSYNC2).
		st := e.repl.hist
		h.SetHistory(st.ID, st.Offset, st.ID2, st.SecondOffset)
	}
	if !ctl.Follow(string(host), int(p)) {
		e.simple(txtAlreadyConnected)
		return
	}
	e.SetReplica(true)
	e.ok()
}

var txtAlreadyConnected = []byte("OK Already connected to specified master")

// historySetter is a ReplicaControl that can be told which replication
// history to offer its next primary (replica.Link).
type historySetter interface {
	SetHistory(id string, offset int64, id2 string, offset2 int64)
}

// roleReplica answers ROLE for a replica: slave, its primary, the link's
// state and the offset applied; false when this node follows no primary
// (role, cmd_repl.go, answers the master form then).
func (e *Engine) roleReplica() bool {
	if !e.follow.on || e.o.Replica.Control == nil {
		return false
	}
	host, port, state, off := e.o.Replica.Control.Role()
	e.begin(command.Array)
	e.addBulkStr("slave")
	e.addBulkStr(host)
	e.addInt(int64(port))
	e.addBulkStr(state)
	e.addInt(off)
	e.end()
	return true
}

// infoReplica appends INFO replication's lines for a replica and reports
// whether it did (false: the server is a primary).
func (e *Engine) infoReplica(w *infoWriter) bool {
	if !e.follow.on || e.o.Replica.Control == nil {
		return false
	}
	start := len(w.b)
	w.b = e.o.Replica.Control.AppendInfo(w.b)
	if fi, ok := e.fwd.f.(tapInfo); ok { // the forwarder of writes (forward.go)
		w.b = fi.AppendInfo(w.b)
	}
	e.chainedInfo(w, start)
	if e.fo.state != foNone { // a primary failing over follows its target already
		w.b = append(w.b[:start], strings.Replace(string(w.b[start:]), "master_failover_state:no-failover",
			"master_failover_state:"+e.failoverInfo(), 1)...)
	}
	return true
}

// chainedInfo puts into the link's INFO lines (w.b[start:]) what only the
// engine knows: connected_slaves and the lines of this replica's own
// replicas, and the backlog it keeps for them (repl_backlog_*: a replica
// keeps one from its first sync, as Redis's does).
func (e *Engine) chainedInfo(w *infoWriter, start int) {
	link := string(w.b[start:])
	cs := strings.Index(link, "connected_slaves:")
	bl := strings.Index(link, "repl_backlog_active:")
	if cs < 0 || bl < cs {
		return
	}
	csEnd := cs + strings.Index(link[cs:], "\r\n") + 2
	w.b = append(w.b[:start], link[:cs]...)
	e.infoReplicas(w)
	w.b = append(w.b, link[csEnd:bl]...)
	hist := e.repl.hist.AppendInfo(nil)
	if i := bytes.Index(hist, []byte("repl_backlog_active:")); i >= 0 {
		w.b = append(w.b, hist[i:]...)
	}
	// What the control writes after its backlog lines (the Aeron source's
	// aeron_* lines) stays, after the engine's backlog.
	if h := strings.Index(link[bl:], "repl_backlog_histlen:"); h >= 0 {
		end := bl + h
		if n := strings.Index(link[end:], "\r\n"); n >= 0 {
			w.b = append(w.b, link[end+n+2:]...)
		}
	}
}

// SetReplicaControl hands the engine the link to a primary (the server
// makes it after the engine).
func (e *Engine) SetReplicaControl(c ReplicaControl) { e.o.Replica.Control = c }

// SetReplicaReadOnly is replica-read-only at run time (CONFIG SET): off
// lets normal clients write on a replica.
func (e *Engine) SetReplicaReadOnly(on bool) { e.o.Replica.WritableReplica = !on }

// SetReplicaServeStale is replica-serve-stale-data at run time: off
// answers MASTERDOWN while the link is down.
func (e *Engine) SetReplicaServeStale(on bool) { e.o.Replica.NoStaleData = !on }

// IsReplica reports whether the engine follows a primary.
func (e *Engine) IsReplica() bool { return e.follow.on }

// Replicating reports whether the engine follows a primary or has
// replicas of its own (the server's loop then parks at once when idle:
// server.LoopConfig.ParkAtOnce). Loop goroutine only.
func (e *Engine) Replicating() bool { return e.follow.on || len(e.repl.replicas) > 0 }

// replQuietMillis is how long the replication stream must stand still
// before ReplStreaming says it is at rest: longer than the gaps of a
// stream of writes, far shorter than repl-ping-replica-period's PINGs.
const replQuietMillis = 100

// ReplStreaming reports whether replication is moving data: Replicating,
// and the stream's offset moved within the last replQuietMillis, or a
// sync is under way (a replica not yet in the stream phase, a replica of
// this primary not yet online). The server's loop parks at once only then
// (server.LoopConfig.ParkAtOnce): at rest a node that replicates spins
// before it parks as a standalone server does, so its clients' latency is
// a standalone server's, and a write stream, whose other end needs the CPU
// the spins would take, makes it park at once again within one write.
// Loop goroutine only; called on the loop's idle cycles.
func (e *Engine) ReplStreaming() bool {
	if !e.Replicating() {
		return false
	}
	off := e.ClusterReplOffset()
	if off < 0 { // a replica not connected, or in its full sync
		return true
	}
	for _, r := range e.repl.replicas {
		if r.state != replOnline {
			return true
		}
	}
	if off != e.repl.seenOff {
		e.repl.seenOff, e.repl.seenAt = off, e.now
		return true
	}
	return e.now-e.repl.seenAt < replQuietMillis
}

// SetReplica makes the engine a replica (on: the gate, a replica's expiry
// mode) or a primary again (off: writable, keys expire on their own; the
// master client is closed). The link calls it; so does REPLICAOF.
func (e *Engine) SetReplica(on bool) {
	if e.follow.on == on {
		return
	}
	e.follow.on = on
	e.rehot()
	e.keepExpired(on)
	e.syncPauseExpiry() // a primary again during a pause: expiry stays held (pauseexpiry.go)
	e.SetUpstream(on)   // the primary side: relay the primary's stream, or start a history of its own
	if !on {
		e.follow.bulk.End(false) // a full sync given up by a promotion: no collapse
		if e.follow.loading || e.follow.partial {
			e.o.Persistence.Log.Warn("promoted with part of the primary's snapshot loaded: the databases are this server's own now, and saves resume")
		}
		e.follow.loading, e.follow.linkUp, e.follow.partial = false, false, false
		e.ResetMaster()
	}
}

// SetMasterLink records whether the link to the primary is up (for
// replica-serve-stale-data).
func (e *Engine) SetMasterLink(up bool) {
	e.follow.linkUp = up
	e.SetUpstreamLink(up) // chained replicas may sync only while it is up
}

// BeginFullSync empties every database before a full resynchronisation
// loads the primary's snapshot and puts it in the store's bulk-load mode,
// as the load at start does (snapshot.BulkLoad: the chunks the load maps
// are faulted in whole, on small pages, until EndFullSync); a database
// the snapshot creates joins the mode in Reserve or LoadEntry. Until
// EndFullSync normal clients get LOADING. The link (package replica)
// calls it when the primary answers FULLRESYNC.
func (e *Engine) BeginFullSync() {
	e.follow.bulk.End(false) // a sync begun again before the last one ended: no collapse of a load to be flushed
	e.follow.loading = true
	e.follow.skipped = 0
	e.abortLoad() // the primary's snapshot replaces the file's
	// A background save under way stops, as Redis's readSyncBulkPayload
	// kills its child: the flush below would hand every key its walk has
	// not reached to it at once, on the loop, and its cut would keep the
	// load off the store's bulk path. A BGSAVE SCHEDULE stays scheduled
	// (it runs once the sync completes; savesHeld).
	e.stopBackground("a full resynchronisation")
	e.DropReplicas() // chained replicas resync from the new history, as Redis's
	e.ResetMaster()
	for i, st := range e.dbs {
		if st == nil {
			continue
		}
		if len(e.watchers) > 0 {
			e.touchExisting(i, st)
		}
		st.Flush()
		e.follow.bulk.Add(st)
	}
	e.keepExpired(true)
}

// syncStore returns database db for a full resynchronisation's Reserve or
// LoadEntry, in bulk-load mode while the sync runs (a database the
// snapshot creates joins it here); nil, with the reason in e.res, for a
// database the server cannot have.
func (e *Engine) syncStore(db int) *store.Store {
	st := e.db(int64(db))
	if st != nil && e.follow.loading {
		e.follow.bulk.Add(st)
	}
	return st
}

// LoadEntry stores one key of the primary's snapshot. A key of a type
// goblin does not store fails the sync unless ReplicaOptions skips it.
func (e *Engine) LoadEntry(en *rdb.Entry) error {
	if en.DB < 0 || en.DB >= e.o.Databases {
		return fmt.Errorf("the primary's snapshot selects database %d but this server has %d (--databases)", en.DB, e.o.Databases)
	}
	st := e.syncStore(en.DB)
	if st == nil {
		return errors.New(string(e.res.Value))
	}
	st.SetKeepExpired(true)
	// A key whose time has passed is loaded, as by a Redis replica's
	// rdbLoad: the primary still holds it and sends its DEL (or goes on
	// writing it) in the stream.
	st.SetNoExpiry(true)
	err := snapshot.Insert(st, en)
	st.SetNoExpiry(false)
	if errors.Is(err, snapshot.ErrUnsupported) && e.o.Replica.SkipUnsupported {
		e.follow.skipped++
		return nil
	}
	if err == nil {
		// The key's access record, as the load at start applies it (and
		// a Redis replica's rdbLoad, objectSetLRUOrLFU): the LFU counter
		// under an LFU policy, the idle time under any other; -1 is none.
		if en.Freq >= 0 {
			st.SetFreq(en.Key, en.Freq)
		}
		if en.Idle >= 0 {
			st.SetIdleTime(en.Key, en.Idle)
		}
	}
	return err
}

// Reserve sizes database db for keys more keys (the primary's snapshot
// says how many it holds), as the load at start does.
func (e *Engine) Reserve(db, keys int) {
	if db < 0 || db >= e.o.Databases {
		return // LoadEntry refuses the keys with the reason
	}
	if st := e.syncStore(db); st != nil {
		st.Reserve(keys)
	}
}

// EndFullSync ends the load: normal clients are served again, and the
// databases leave bulk-load mode. loaded says the whole snapshot was
// loaded (the link calls it so at the snapshot's end): a thread of low
// priority then collapses the chunks it mapped into huge pages, as after
// the load at start (snapshot.BulkLoad.End; INFO persistence's
// goblin_load_collapse_* lines count both), until done or a flush. A sync
// given up part-way (the link lost, the primary's error, a key refused,
// a promotion's Unfollow, the server closing the link at shutdown) passes
// false: no collapse, the databases keep what was loaded and serve as
// usual. (REPLICAOF NO ONE answers LOADING until the load ends.)
func (e *Engine) EndFullSync(loaded bool) {
	e.follow.bulk.End(loaded)
	e.follow.loading = false
	if !loaded && !e.follow.partial {
		e.o.Persistence.Log.Warn("full resynchronisation given up part-way: no save until one completes or a promotion", "reason", "the databases hold part of the primary's snapshot")
	}
	e.follow.partial = !loaded
	e.snap.dirtyBase = e.mods()
}

// savesHeld says why no save may write the databases now, or "": while a
// replica loads its primary's snapshot, and after it gave one up
// part-way until a sync completes (or a promotion), the databases hold
// part of the primary's data, which a save would put in place of the last
// whole snapshot (Redis saves nothing while it loads, and empties the
// databases after a failed load).
func (e *Engine) savesHeld() string {
	switch {
	case e.follow.loading:
		return "the primary's snapshot is loading"
	case e.follow.partial:
		return "the databases hold part of the primary's snapshot (its full resynchronisation was given up); a save would replace the last whole snapshot"
	}
	return ""
}

// ReplicaSkipped returns the keys the last full resynchronisation skipped
// (types goblin does not store) and the stream commands that answered an
// error.
func (e *Engine) ReplicaSkipped() (keys, streamErrors int64) {
	return e.follow.skipped, e.follow.errors
}

// ResetMaster drops the master client: its partial command and an open
// MULTI (a new link resumes at the last whole command outside one).
func (e *Engine) ResetMaster() {
	if e.follow.master != nil {
		e.Close(e.follow.master)
		e.follow.master = nil
	}
	e.follow.txBytes = 0
}

// ApplyMaster applies the primary's command stream in as the master
// client: no replies, writes allowed, SELECT honoured, MULTI/EXEC applied
// at EXEC as one unit. It applies at most maxCmds commands (0: no bound)
// and stops after a REPLCONF GETACK, which it answers by returning its
// length in getack (the ACK must carry the offset before it).
//
// consumed is the bytes of whole commands read from in (the rest is a
// partial command to offer again, from its first byte, with more bytes);
// applied is the bytes that advance the replication offset: a command
// inside MULTI advances it only once its EXEC has run, as in Redis.
func (e *Engine) ApplyMaster(in []byte, maxCmds int) (consumed, applied, getack int) {
	s := e.follow.master
	if s == nil {
		s = e.Open(proto.RESP, new(Stats))
		s.master, s.authed = true, true
		if e.follow.user == nil {
			// A private user allowed everything: the primary's stream is
			// not subject to this server's ACL rules.
			e.follow.user = acl.NewUsers(acl.CommandTable()).Get("default")
		}
		s.user = e.follow.user
		s.mute = -1 // CLIENT REPLY OFF: the master client gets no replies
		s.recold()
		e.follow.master = s
	}
	// NoExpiry alone decides while the stream applies: under it no read
	// of the replica's mode (keepExpired) can tell (store's
	// TestNoExpiryMakesKeepExpiredMoot). After it, a writable replica's
	// write in this cycle (replGate) has its primary mode ended early.
	e.follow.applying = true
	e.noExpiry(true)
	defer func() {
		e.follow.applying = false
		e.noExpiry(false)
		e.keepExpired(true)
	}()
	e.trimScratch()
	s.lastAt = e.now
	for n := 0; consumed < len(in) && (maxCmds <= 0 || n < maxCmds); n++ {
		args, k, err := s.parser.ReadCommand(in[consumed:], e.args, &e.o.Limits)
		e.args = args[:0]
		if err != nil {
			// The primary sent what is not RESP: skip it rather than stop
			// the link for ever; the offset still counts the bytes.
			e.follow.errors++
			s.parser = resp.Parser{}
			applied += e.follow.txBytes + len(in) - consumed
			e.follow.txBytes = 0
			return len(in), applied, 0
		}
		if k == 0 {
			break
		}
		consumed += k
		if len(args) == 0 {
			applied += k
			continue
		}
		if isGetAck(args) {
			applied += k
			getack = k
			break
		}
		e.serveRESP(s, args, nil) // muted: no reply is encoded
		if e.res.Kind == command.Error {
			e.follow.errors++
		}
		if s.tx.on {
			e.follow.txBytes += k
			continue
		}
		applied += e.follow.txBytes + k
		e.follow.txBytes = 0
	}
	return consumed, applied, getack
}

// isGetAck reports whether args is REPLCONF GETACK.
func isGetAck(args [][]byte) bool {
	return len(args) >= 2 && bytes.EqualFold(args[0], []byte("replconf")) && bytes.EqualFold(args[1], []byte("getack"))
}
