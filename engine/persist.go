package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/snapshot"
)

// Persistence: RDB snapshots (package snapshot) of every database. SAVE
// writes one on the loop; BGSAVE, BGSAVE SCHEDULE and the save policy
// begin one that Tick advances in bounded steps while requests are served
// (snapshot.Job, store.Cut); SHUTDOWN and a signal's shutdown save last.
// docs/persistence.md has the whole story.

// SavePoint is one "seconds changes" pair of a save policy: save when at
// least Changes changes happened and Seconds passed since the last save.
type SavePoint struct {
	Seconds, Changes int64
}

// errInvalidSave is CONFIG SET save's refusal, in Redis's words.
//
//lint:ignore ST1005 Redis's exact text, capital included
var errInvalidSave = errors.New("Invalid save parameters")

// ParseSavePolicy reads a save policy as Redis's save directive has it:
// "3600 1 300 100 60 10000", pairs of seconds and changes; "" is no
// policy (nil).
func ParseSavePolicy(v string) ([]SavePoint, error) {
	f := strings.Fields(v)
	if len(f)%2 != 0 {
		return nil, errInvalidSave
	}
	var out []SavePoint
	for i := 0; i < len(f); i += 2 {
		s, err1 := strconv.ParseInt(f[i], 10, 64)
		c, err2 := strconv.ParseInt(f[i+1], 10, 64)
		if err1 != nil || err2 != nil || s < 0 || c < 0 {
			return nil, errInvalidSave
		}
		out = append(out, SavePoint{Seconds: s, Changes: c})
	}
	return out, nil
}

// FormatSavePolicy writes a policy as CONFIG GET save shows it.
func FormatSavePolicy(p []SavePoint) string {
	var b []byte
	for i, sp := range p {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, sp.Seconds, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, sp.Changes, 10)
	}
	return string(b)
}

// Persistence configures snapshots. The zero value saves to ./dump.rdb
// on SAVE and BGSAVE only, compressed and checksummed, and stops writes
// when a background save fails while a policy is set (Redis's defaults
// but the policy).
type Persistence struct {
	// Dir and DBFilename name the RDB file (Redis's dir and dbfilename);
	// defaults "." and "dump.rdb".
	Dir, DBFilename string
	// Save is the save policy; nil saves only when asked.
	Save []SavePoint
	// NoCompression (rdbcompression no) and NoChecksum (rdbchecksum no).
	NoCompression, NoChecksum bool
	// KeepWritingOnError is stop-writes-on-bgsave-error no: a failed
	// background save does not make writes fail with MISCONF.
	KeepWritingOnError bool
	// ProtectedConfig is enable-protected-configs yes: CONFIG SET may
	// change dir and dbfilename. Off by default, as in Redis 7.0, because
	// a client that can point the snapshot anywhere can write files
	// anywhere the server may.
	ProtectedConfig bool
	// SaveSlice is how long a background save works per Tick (default
	// DefaultSaveSlice): the longest a request waits for it.
	SaveSlice time.Duration
	// WriterPriority is the kernel priority of a background save's writer
	// thread (bgsave-writer-priority); default snapshot.WriterIdle.
	WriterPriority snapshot.WriterPriority
	// LoopRest is when the loop rests between a background save's slices
	// (bgsave-loop-rest; see SaveRest); default RestAlways.
	LoopRest LoopRest
	// Shutdown stops the server (SHUTDOWN, after its save); it runs on the
	// loop and must not wait for it. nil: SHUTDOWN is refused.
	Shutdown func()
	// Log receives the saves' events (started, done, failed); default
	// discard.
	Log *slog.Logger
}

// DefaultSaveSlice is Persistence.SaveSlice's default: a background save
// walks the keyspace 20 µs at a time, then the loop serves what came in.
const DefaultSaveSlice = 20 * time.Microsecond

// LoopRest says when the loop rests (parks for a slice's length, waking at
// once for a request) between a background save's slices, so that the
// threads a save shares the CPUs with get one: the clients the loop has
// just answered, and the writer.
type LoopRest uint8

const (
	// RestAlways rests after every slice: the walk's duty cycle is about one
	// half, and a save took ~20 % longer at 10 M keys while a depth-one
	// client's p99.9 during it fell from 3.4–4.5× its idle one to 2.2–2.3×
	// (docs/persistence.md (a)). The default.
	RestAlways LoopRest = iota
	// RestAfterRequests rests after a slice whose cycle served requests
	// (the clients it woke get the loop's CPU at once, instead of after the
	// kernel's time slice) and while the writer is behind (the walk would
	// only spin).
	RestAfterRequests
	// RestNever walks in every cycle (and spins while the writer is
	// behind), the loop's way before bgsave-loop-rest.
	RestNever
)

var loopRestNames = [...]string{RestAfterRequests: "requests", RestAlways: "always", RestNever: "no"}

func (r LoopRest) String() string { return loopRestNames[r] }

// ParseLoopRest parses a bgsave-loop-rest value.
func ParseLoopRest(v string) (LoopRest, error) {
	for i, n := range loopRestNames {
		if strings.EqualFold(v, n) {
			return LoopRest(i), nil
		}
	}
	return 0, errors.New("argument must be 'requests', 'always' or 'no'")
}

// Saving reports whether a background save is running (the server then
// checks its sockets every loop cycle, so a request never waits behind
// more than one slice).
func (e *Engine) Saving() bool { return e.snap.job != nil }

// persistState is the engine's persistence state; loop goroutine only.
type persistState struct {
	job        *snapshot.Job
	scheduled  bool  // BGSAVE SCHEDULE while one ran
	lastSave   int64 // unix s of the last successful save
	lastTry    int64 // unix s of the last background save begun
	lastOK     bool  // rdb_last_bgsave_status
	lastErr    string
	lastSecs   int64 // rdb_last_bgsave_time_sec
	saves      int64
	dirtyBase  uint64        // Mods() sum at the last successful save
	dirtyStart uint64        // Mods() sum when the running save began
	lastCron   int64         // unix ms of the last policy check
	lastCOW    int64         // keys the last background save took by copy-on-write
	rest       time.Duration // how long the loop may rest after this cycle's slice (SaveRest)
	walking    bool          // the last slice left keys to encode (StepFor returned false)
	slack      int           // the loop thread's timer slack before the save (ns), restored at its end
	loaded     snapshot.LoadStats
	shutdown   bool      // SHUTDOWN ran its save (or NOSAVE): a signal's shutdown saves no more
	probe      saveProbe // what the running background save does to the loop (saveprobe.go)
}

func (e *Engine) initPersist() {
	p := &e.o.Persistence
	if p.Dir == "" {
		p.Dir = "."
	}
	if p.DBFilename == "" {
		p.DBFilename = "dump.rdb"
	}
	if p.SaveSlice <= 0 {
		p.SaveSlice = DefaultSaveSlice
	}
	if p.Log == nil {
		p.Log = slog.New(slog.DiscardHandler)
	}
	e.snap.lastSave = e.clock.NowMillis() / 1000
	e.snap.lastOK = true
	e.snap.lastSecs = -1
	e.snap.dirtyBase = e.mods() // a new store's first counter is no change
}

// RDBPath returns the snapshot file's path: dir and dbfilename.
func (e *Engine) RDBPath() string {
	return filepath.Join(e.o.Persistence.Dir, e.o.Persistence.DBFilename)
}

// mods sums the change counters of every database.
func (e *Engine) mods() uint64 {
	var n uint64
	for _, st := range e.dbs {
		if st != nil {
			n += st.Mods()
		}
	}
	return n
}

// Dirty returns the changes since the last successful save
// (rdb_changes_since_last_save).
func (e *Engine) Dirty() int64 { return int64(e.mods() - e.snap.dirtyBase) }

// Load reads the snapshot file into the databases (at start, before the
// server serves). A missing file loads nothing (found false). Keys already
// expired are dropped; a corrupt file, a duplicate key, a database beyond
// Options.Databases or a type goblin does not store (unless o skips them)
// fail with the reason and the byte offset.
func (e *Engine) Load(o snapshot.LoadOptions) (st snapshot.LoadStats, found bool, err error) {
	st, found, err = snapshot.LoadFile(e.RDBPath(), e.loadDB, o)
	e.snap.loaded = st
	e.snap.dirtyBase = e.mods()
	return st, found, err
}

// saveOptions are the snapshot options of a save now.
func (e *Engine) saveOptions() snapshot.Options {
	p := &e.o.Persistence
	var used int64
	for _, st := range e.dbs {
		if st != nil {
			st.Stats(&e.stats)
			used += e.stats.UsedMemory
		}
	}
	return snapshot.Options{Path: e.RDBPath(), NoCompression: p.NoCompression, NoChecksum: p.NoChecksum, UsedMemory: used,
		WriterPriority: p.WriterPriority}
}

func (e *Engine) saveDBs() []snapshot.DB {
	dbs := make([]snapshot.DB, 0, len(e.dbs))
	for i, st := range e.dbs {
		if st != nil {
			dbs = append(dbs, snapshot.DB{Index: i, Store: st})
		}
	}
	return dbs
}

// saveNow writes a snapshot on the loop (SAVE, SHUTDOWN, a signal's
// shutdown).
func (e *Engine) saveNow() error {
	p := &e.snap
	start := time.Now()
	before := e.mods()
	j, err := snapshot.Begin(e.saveDBs(), e.saveOptions(), false)
	if err == nil {
		err = j.Run()
	}
	if err != nil {
		p.lastErr = err.Error()
		e.o.Persistence.Log.Error("save failed", "err", err)
		return err
	}
	p.dirtyBase = before
	p.lastSave = e.clock.NowMillis() / 1000
	p.lastOK, p.lastErr = true, ""
	e.rehot()
	p.saves++
	e.o.Persistence.Log.Info("DB saved on disk", "path", e.RDBPath(), "duration", time.Since(start))
	return nil
}

// startBackground begins a background save.
func (e *Engine) startBackground() error {
	p := &e.snap
	if p.shutdown {
		// SHUTDOWN ran in this cycle: a save begun now (another client's
		// BGSAVE, the policy's check) would outlive the server.
		return errShuttingDown
	}
	p.lastTry = e.clock.NowMillis() / 1000
	p.dirtyStart = e.mods()
	cpu := threadCPU()
	j, err := snapshot.Begin(e.saveDBs(), e.saveOptions(), true)
	if err != nil {
		p.lastOK, p.lastErr = false, err.Error()
		e.rehot()
		e.o.Persistence.Log.Error("background saving failed to start", "err", err)
		return err
	}
	p.job = j
	p.probe.begin(cpu)
	p.slack = setTimerSlack(restSlack)
	e.o.Persistence.Log.Info("background saving started", "path", e.RDBPath())
	return nil
}

// errShuttingDown refuses a background save once SHUTDOWN has run.
var errShuttingDown = errors.New("the server is shutting down")

// abortBackground gives a running background save up (SHUTDOWN), and a
// scheduled one: it would otherwise start at the next policy check, in
// the cycle that runs the shutdown, and outlive it.
func (e *Engine) abortBackground() {
	e.snap.scheduled = false
	e.stopBackground("shutdown")
}

// stopBackground gives a running background save up, for why; the
// previous file stays.
func (e *Engine) stopBackground(why string) {
	p := &e.snap
	if p.job != nil {
		p.job.Abort()
		p.job.Finished() // waits for the writer to remove its file
		p.job = nil
		p.probe.end()
		setTimerSlack(p.slack)
		e.o.Persistence.Log.Warn("background save aborted by " + why)
	}
}

// tickPersist advances a background save and applies the save policy.
func (e *Engine) tickPersist() int {
	p := &e.snap
	work := 0
	p.rest = 0
	if p.job != nil {
		t := p.probe.slice()
		p.walking = !p.job.StepFor(e.o.Persistence.SaveSlice)
		if p.walking {
			work = 1
			switch e.o.Persistence.LoopRest {
			case RestAlways:
				p.rest = e.o.Persistence.SaveSlice
			case RestAfterRequests:
				if p.job.Behind() {
					p.rest = e.o.Persistence.SaveSlice
				}
			}
		}
		p.probe.sliceEnd(t)
		if done, err := p.job.Finished(); done {
			e.backgroundDone(err)
			p.rest = 0
		}
	}
	if e.now-p.lastCron < 100 {
		return work
	}
	p.lastCron = e.now
	if p.job != nil {
		return work
	}
	if e.savesHeld() != "" {
		// A replica's full resynchronisation loading or given up part-way:
		// the stores hold part of the primary's snapshot, which a save
		// would put in place of the last whole one (Redis runs no save
		// while it loads). The policy and a BGSAVE SCHEDULE wait.
		return work
	}
	if p.scheduled {
		p.scheduled = false
		e.startBackground()
		return 1
	}
	if len(e.o.Persistence.Save) == 0 {
		return work
	}
	now := e.now / 1000
	dirty := e.Dirty()
	for _, sp := range e.o.Persistence.Save {
		// After a failure, retry no sooner than 5 s later, as Redis.
		if dirty >= sp.Changes && now-p.lastSave > sp.Seconds && (p.lastOK || now-p.lastTry > 5) && dirty > 0 {
			e.o.Persistence.Log.Info("saving by policy", "changes", dirty, "seconds", sp.Seconds)
			e.startBackground()
			return 1
		}
	}
	return work
}

func (e *Engine) backgroundDone(err error) {
	defer e.rehot() // lastOK, on either path
	p := &e.snap
	j := p.job
	p.job = nil
	p.probe.end()
	setTimerSlack(p.slack)
	p.probe.last.overflow = j.Overflow()
	p.probe.last.rescued = 0
	if j.Rescued() {
		p.probe.last.rescued = 1
		e.o.Persistence.Log.Warn("background saving: the writer at idle priority fell behind (too little CPU time, or a slow disk), one at the process's priority took over")
	}
	p.lastSecs = int64(time.Since(j.Started()).Round(time.Second) / time.Second)
	keys, cow := j.Keys()
	p.lastCOW = cow
	if err != nil {
		p.lastOK, p.lastErr = false, err.Error()
		e.o.Persistence.Log.Error("background saving failed", "err", err)
		return
	}
	p.dirtyBase = p.dirtyStart
	p.lastSave = e.clock.NowMillis() / 1000
	p.lastOK, p.lastErr = true, ""
	p.saves++
	e.o.Persistence.Log.Info("background saving terminated with success", "path", e.RDBPath(), "keys", keys,
		"copied_on_write", cow, "duration", time.Since(j.Started()))
}

// SaveRest returns how long the loop should rest (park, waking at once for
// a request or a transport's deadline) after this cycle's work, or 0: while
// a background save walks the keyspace and bgsave-loop-rest allows, after
// a cycle that served requests (served) or while the writer is behind. The
// loop, walking in every cycle of a save, would otherwise keep its CPU
// until the kernel's time slice ends, and a client it has just answered
// (woken on the loop's CPU: a socket's wake-up is a synchronous one) or the
// writer would wait for it: with two CPUs, the loop, the writer and a
// client are three runnable threads. Once the walk has encoded every key
// and only the writer's tail remains, the loop no longer competes and does
// not rest. Loop goroutine only, after Tick; the loop calls SaveRested
// when it did rest.
func (e *Engine) SaveRest(served bool) time.Duration {
	p := &e.snap
	if p.job == nil {
		return 0
	}
	d := p.rest
	if d == 0 && served && p.walking && e.o.Persistence.LoopRest == RestAfterRequests {
		d = e.o.Persistence.SaveSlice
	}
	return d
}

// SaveRested counts a rest the loop took after SaveRest asked for one
// (goblin_bgsave_loop_rests): the loop may decline one (server.Loop.Rest).
// Loop goroutine only.
func (e *Engine) SaveRested() { e.snap.probe.rests++ }

// writesDenied reports whether writes fail with MISCONF: a background
// save failed and stop-writes-on-bgsave-error is on with a save policy.
func (e *Engine) writesDenied() bool {
	return e.repl.gate || !e.snap.lastOK && !e.o.Persistence.KeepWritingOnError && len(e.o.Persistence.Save) > 0
}

// misconf answers a write (or PING, as Redis) refused after a failed
// background save.
func (e *Engine) misconf(r *command.Request) bool {
	if !(!e.snap.lastOK && !e.o.Persistence.KeepWritingOnError && len(e.o.Persistence.Save) > 0) {
		return e.noReplicas(r) // min-replicas-to-write
	}
	if r.Op != command.OpPing && command.Lookup(r.Op).Flags&command.Write == 0 {
		return false
	}
	e.errText(command.Err, "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error.")
	return true
}

func (e *Engine) save(*Session, *command.Request) {
	if e.snap.job != nil {
		e.errText(command.Err, "ERR Background save already in progress")
		return
	}
	if why := e.savesHeld(); why != "" {
		e.errText(command.Err, "ERR not saving: "+why)
		return
	}
	if err := e.saveNow(); err != nil {
		e.errText(command.Err, "ERR "+err.Error())
		return
	}
	e.ok()
}

func (e *Engine) bgsave(_ *Session, r *command.Request) {
	schedule := false
	switch {
	case len(r.Args) == 1 && command.EqualFold(r.Args[0], "schedule"):
		schedule = true
	case len(r.Args) > 0:
		e.errText(command.Syntax, "ERR syntax error")
		return
	}
	if e.snap.job != nil {
		if schedule {
			e.snap.scheduled = true
			e.simple(bs("Background saving scheduled"))
			return
		}
		e.errText(command.Err, "ERR Background save already in progress")
		return
	}
	if why := e.savesHeld(); why != "" {
		e.errText(command.Err, "ERR not saving: "+why)
		return
	}
	if err := e.startBackground(); err != nil {
		e.errText(command.Err, "ERR Background saving failed: "+err.Error())
		return
	}
	e.simple(bs("Background saving started"))
}

func (e *Engine) lastSave(*Session, *command.Request) { e.integer(e.snap.lastSave) }

// shutdown answers SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]. There
// are no replicas to wait for, so NOW changes nothing and no shutdown is
// ever pending for ABORT to cancel.
func (e *Engine) shutdown(s *Session, r *command.Request) {
	var nosave, save, abort, force bool
	for _, a := range r.Args {
		switch {
		case command.EqualFold(a, "nosave"):
			nosave = true
		case command.EqualFold(a, "save"):
			save = true
		case command.EqualFold(a, "now"):
		case command.EqualFold(a, "force"):
			force = true
		case command.EqualFold(a, "abort"):
			abort = true
		default:
			e.errText(command.Syntax, "ERR syntax error")
			return
		}
	}
	if (nosave && save) || (abort && len(r.Args) > 1) {
		e.errText(command.Syntax, "ERR syntax error")
		return
	}
	if abort {
		e.errText(command.Err, "ERR No shutdown in progress.")
		return
	}
	if e.o.Persistence.Shutdown == nil {
		e.errText(command.Err, "ERR SHUTDOWN is not available: this engine has no server to stop")
		return
	}
	if err := e.shutdownSave(save, nosave); err != nil && !force {
		e.errText(command.Err, "ERR Errors trying to SHUTDOWN. Check logs.")
		return
	}
	e.snap.shutdown = true
	e.o.Persistence.Shutdown()
	// Redis closes the connection without a reply.
	s.quit = true
	s.mute = 1
	s.recold()
	e.ok()
}

// shutdownSave aborts a background save and saves on the loop when a
// policy is set or save asks (not with nosave).
func (e *Engine) shutdownSave(save, nosave bool) error {
	e.abortBackground()
	if e.loading != nil {
		// As Redis's prepareForShutdown ("never save on shutdown when
		// loading"): a save now would replace the file with the part
		// loaded so far.
		nosave = true
	}
	if why := e.savesHeld(); why != "" && !nosave && (save || len(e.o.Persistence.Save) > 0) {
		e.o.Persistence.Log.Warn("not saving before exiting", "reason", why)
		nosave = true
	}
	if nosave || (!save && len(e.o.Persistence.Save) == 0) {
		return nil
	}
	e.o.Persistence.Log.Info("saving the final RDB snapshot before exiting")
	return e.saveNow()
}

// ShutdownSave is the save of a shutdown the server began (SIGTERM): with
// a save policy set, a running background save is given up and a
// foreground save written, unless SHUTDOWN already did. Loop goroutine
// only.
func (e *Engine) ShutdownSave() error {
	if e.snap.shutdown {
		e.abortBackground() // none can have begun since; held here all the same
		return nil
	}
	e.snap.shutdown = true
	return e.shutdownSave(false, false)
}

// persistParams are the persistence parameters of CONFIG GET and SET.
func (e *Engine) persistParams() []Param {
	p := &e.o.Persistence
	comp := YesNoParam("rdbcompression", func() bool { return !p.NoCompression }, func(b bool) { p.NoCompression = !b })
	sum := YesNoParam("rdbchecksum", func() bool { return !p.NoChecksum }, func(b bool) { p.NoChecksum = !b })
	stop := YesNoParam("stop-writes-on-bgsave-error", func() bool { return !p.KeepWritingOnError }, func(b bool) { p.KeepWritingOnError = !b })
	return []Param{
		{Name: "dir", Get: func() string {
			if abs, err := filepath.Abs(p.Dir); err == nil {
				return abs
			}
			return p.Dir
		}, Set: func(v string) error {
			if !p.ProtectedConfig {
				return errProtected
			}
			fi, err := os.Stat(v)
			if err != nil {
				return err
			}
			if !fi.IsDir() {
				return fmt.Errorf("%s is not a directory", v)
			}
			p.Dir = v
			return nil
		}},
		{Name: "dbfilename", Get: func() string { return p.DBFilename }, Set: func(v string) error {
			if !p.ProtectedConfig {
				return errProtected
			}
			if v == "" || strings.ContainsRune(v, '/') {
				return errors.New("dbfilename can't be a path, just a filename")
			}
			p.DBFilename = v
			return nil
		}},
		comp, sum, stop,
		{Name: "bgsave-loop-rest", Get: func() string { return p.LoopRest.String() }, Set: func(v string) error {
			r, err := ParseLoopRest(v)
			if err == nil {
				p.LoopRest = r // from the next slice on
			}
			return err
		}},
		{Name: "bgsave-writer-priority", Get: func() string { return p.WriterPriority.String() }, Set: func(v string) error {
			w, err := snapshot.ParseWriterPriority(v)
			if err != nil {
				return errors.New("argument must be 'idle' or 'normal'")
			}
			p.WriterPriority = w // the next save's writer
			return nil
		}},
	}
}

// errProtected refuses CONFIG SET of dir and dbfilename unless
// enable-protected-configs, in Redis's words.
var errProtected = errors.New("can't set protected config")

// saveParam is the "save" parameter.
func (e *Engine) saveParam() Param {
	return Param{Name: "save", Get: func() string { return FormatSavePolicy(e.o.Persistence.Save) },
		Set: func(v string) error {
			sp, err := ParseSavePolicy(v)
			if err == nil {
				e.o.Persistence.Save = sp
			}
			return err
		}}
}

// infoPersistence writes INFO persistence's RDB lines, as Redis 7.0 orders
// them (the AOF lines follow in info.go).
func (e *Engine) infoPersistence(w *infoWriter) {
	p := &e.snap
	loaded := p.loaded
	if e.loading != nil {
		w.int("loading", 1)
		loaded = e.loading.l.Stats()
	} else {
		w.int("loading", 0)
	}
	w.int("async_loading", 0)
	w.int("current_cow_peak", 0)
	w.int("current_cow_size", 0)
	w.int("current_cow_size_age", 0)
	w.str("current_fork_perc", "0.00")
	var done, total, inProgress, cur int64 = 0, 0, 0, -1
	if p.job != nil {
		done, _ = p.job.Keys()
		for _, st := range e.dbs {
			if st != nil {
				total += int64(st.Len())
			}
		}
		inProgress = 1
		cur = int64(time.Since(p.job.Started()) / time.Second)
	}
	w.int("current_save_keys_processed", done)
	w.int("current_save_keys_total", total)
	w.int("rdb_changes_since_last_save", e.Dirty())
	w.int("rdb_bgsave_in_progress", inProgress)
	w.int("rdb_last_save_time", p.lastSave)
	status := "ok"
	if !p.lastOK {
		status = "err"
	}
	w.str("rdb_last_bgsave_status", status)
	w.int("rdb_last_bgsave_time_sec", p.lastSecs)
	w.int("rdb_current_bgsave_time_sec", cur)
	w.int("rdb_saves", p.saves)
	w.int("rdb_last_cow_size", 0)
	w.int("rdb_last_load_keys_expired", loaded.Expired)
	w.int("rdb_last_load_keys_loaded", loaded.Keys)
}

// infoCollapse writes INFO persistence's goblin_load_collapse_* lines: what
// the collapse into huge pages after the load at start or a replica's full
// resynchronisation has done (snapshot.ReadCollapseStats; its
// low-priority thread logs nothing).
func infoCollapse(w *infoWriter) {
	c := snapshot.ReadCollapseStats()
	w.int("goblin_load_collapse_started", c.Started)
	w.int("goblin_load_collapse_running", c.Running)
	w.int("goblin_load_collapse_regions", c.Collapsed)
	w.int("goblin_load_collapse_failed", c.Failed)
	w.int("goblin_load_collapse_stopped", c.Stopped)
	w.int("goblin_load_collapse_last_errno", c.LastErrno)
}
