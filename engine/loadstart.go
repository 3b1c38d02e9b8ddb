package engine

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/snapshot"
	"github.com/goblin-kv/goblin/store"
)

// The load of the snapshot file at start, as Redis 7.0 does it: the
// listeners are open and the loop runs while the file is read, a bounded
// step per loop cycle (Tick); a client gets "-LOADING Redis is loading the
// dataset in memory" for every command not flagged loading (PING, GET, SET
// and SAVE included; INFO, CONFIG GET, AUTH, HELLO, SHUTDOWN and the
// client commands run), and INFO persistence shows loading:1 with
// Redis's loading_* lines. Nothing is saved while the load runs (SHUTDOWN
// and a signal's shutdown save nothing, as Redis: the file would be
// overwritten with half of it), and a load that fails stops the server.

// LoadStepBytes and LoadStepTime bound one loop cycle's share of the load:
// LoadStepBytes of the file (Redis's loading-process-events-interval-bytes)
// or LoadStepTime, whichever comes first, then the loop serves what came
// in. The first step, before the loop runs, is bounded by bytes alone.
const (
	LoadStepBytes = 2 << 20
	LoadStepTime  = 2 * time.Millisecond
)

// startLoad is a load at start that is running (or failed). Loop goroutine
// only.
type startLoad struct {
	l      *snapshot.Loader
	f      *os.File
	start  time.Time
	size   int64
	end    func(snapshot.LoadStats, error)
	failed bool // the load ended with an error: LOADING stays, the server stops
}

// runningLoad returns the load at start while it runs (nil when there is
// none or it failed).
func (e *Engine) runningLoad() *startLoad {
	if ld := e.loading; ld != nil && !ld.failed {
		return ld
	}
	return nil
}

// close stops the decoder and closes the file.
func (ld *startLoad) close() {
	ld.l.Close()
	ld.f.Close()
}

// loadDB is the load's snapshot.DBFunc: database i of the server.
func (e *Engine) loadDB(i int) (*store.Store, error) {
	if i < 0 || i >= e.o.Databases {
		return nil, fmt.Errorf("the file selects database %d but the server has %d (--databases)", i, e.o.Databases)
	}
	s := e.db(int64(i))
	if s == nil {
		return nil, errors.New(string(e.res.Value))
	}
	return s, nil
}

// BeginLoad opens the snapshot file and starts loading it; the loop's
// Ticks then load it in steps (StepLoad) while clients get LOADING. A
// missing file loads nothing (found false); a file that cannot be opened
// is an error. end is called on the loop when the load ends: with a nil
// error the server serves normally from then on; with an error the
// databases hold part of the file, LOADING goes on and nothing may be
// saved: the caller stops the server.
func (e *Engine) BeginLoad(o snapshot.LoadOptions, end func(snapshot.LoadStats, error)) (found bool, err error) {
	f, err := os.Open(e.RDBPath())
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%w: %w", snapshot.ErrLoad, err)
	}
	if fi, err := f.Stat(); err == nil {
		o.Size = fi.Size()
	}
	e.loading = &startLoad{f: f, start: time.Now(), size: o.Size, end: end,
		l: snapshot.NewLoader(bufio.NewReaderSize(f, 1<<20), e.loadDB, o)}
	e.rehot()
	return true, nil
}

// Loading reports whether a load at start is running or failed (clients
// get LOADING).
func (e *Engine) Loading() bool { return e.loading != nil }

// StepLoad runs one step of the load at start within lim and reports
// whether it has ended (then end has been called).
func (e *Engine) StepLoad(lim snapshot.StepLimit) bool {
	ld := e.loading
	if ld == nil || ld.failed {
		return true
	}
	done, err := ld.l.Step(lim)
	if !done {
		return false
	}
	ld.close()
	st := ld.l.Stats()
	e.snap.loaded = st
	e.snap.dirtyBase = e.mods()
	if err != nil {
		ld.failed = true
	} else {
		e.loading = nil
		e.rehot()
	}
	if ld.end != nil {
		ld.end(st, err)
	}
	return true
}

// StopLoad stops a load at start that is still running, as the server
// shuts down: the decoder's goroutine ends and the file is closed. The
// databases keep what was loaded and LOADING stays (nothing may be saved
// from part of the file); end is not called. Without a running load it
// does nothing. Loop goroutine.
func (e *Engine) StopLoad() {
	if ld := e.runningLoad(); ld != nil {
		ld.close()
		ld.failed = true
	}
}

// ErrLoadGivenUp is what the load at start ends with (BeginLoad's end)
// when a full resynchronisation from a primary replaces it: the server
// serves, with the primary's data.
var ErrLoadGivenUp = errors.New("the load of the snapshot file was given up for a full resynchronisation with the primary")

// abortLoad gives the load at start up (a full resynchronisation from a
// primary replaces what it would have loaded).
func (e *Engine) abortLoad() {
	ld := e.runningLoad()
	if ld == nil {
		return
	}
	ld.close()
	e.loading = nil
	e.rehot()
	if ld.end != nil {
		ld.end(ld.l.Stats(), ErrLoadGivenUp)
	}
}

// tickLoad is Tick while the load at start runs: one step, and work
// reported so the loop does not park while there is more to load.
func (e *Engine) tickLoad() int {
	if e.loading.failed {
		return 0
	}
	e.StepLoad(snapshot.StepLimit{Bytes: LoadStepBytes, Until: time.Now().Add(LoadStepTime)})
	return 1
}

// loadGate refuses r with LOADING while the load at start runs, unless it
// is flagged loading, and reports whether it refused.
func (e *Engine) loadGate(s *Session, r *command.Request) bool {
	spec := command.Lookup(r.Op)
	if spec == nil || spec.Flags&command.Loading != 0 {
		return false
	}
	e.errText(command.Err, txtLoading)
	if s.tx.on {
		s.tx.abort = true
	}
	return true
}

// infoLoading writes INFO persistence's loading_* lines, as Redis 7.0's
// genRedisInfoString does while it loads (after module_fork_last_cow_size).
func (e *Engine) infoLoading(w *infoWriter) {
	ld := e.loading
	st := ld.l.Stats()
	perc, remaining := 0.0, int64(1)
	switch {
	case ld.size > 0:
		perc = float64(st.Bytes) / float64(ld.size) * 100
		remaining = ld.size - st.Bytes
	case st.UsedMem > 0:
		perc = min(float64(st.Bytes)/float64(st.UsedMem)*100, 99.99)
		remaining = max(st.UsedMem-st.Bytes, 1)
	}
	eta := int64(1) // Redis's figure while less than a second has passed
	if elapsed := time.Now().Unix() - ld.start.Unix(); elapsed != 0 {
		eta = elapsed * remaining / (st.Bytes + 1)
	}
	w.int("loading_start_time", ld.start.Unix())
	w.int("loading_total_bytes", ld.size)
	w.int("loading_rdb_used_mem", st.UsedMem)
	w.int("loading_loaded_bytes", st.Bytes)
	w.str("loading_loaded_perc", strconv.FormatFloat(perc, 'f', 2, 64))
	w.int("loading_eta_seconds", eta)
}

// HandOffStores gives every database's store to the next goroutine that
// uses it (store.HandOff): the server's constructor configures the stores
// and may load the file's first step on its caller's goroutine, and the
// loop's goroutine takes them over. It matters only in builds that check
// the stores' single owner (-race, -tags invariants).
func (e *Engine) HandOffStores() {
	for _, st := range e.dbs {
		if st != nil {
			st.HandOff()
		}
	}
}
