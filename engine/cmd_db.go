package engine

import (
	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/store"
)

// Databases: Redis's numbered keyspaces. Each is a store; all share the
// first one's memory cap (store.Sibling). A database is created the first
// time a command names it, so e.dbs[i] is set for every database a
// session has selected.

// db returns database i, creating it on first use; nil and an error
// reply when i is out of range or the store cannot be made.
func (e *Engine) db(i int64) *store.Store {
	if i < 0 || i >= int64(e.o.Databases) {
		e.errText(command.OutOfRange, "ERR DB index is out of range")
		return nil
	}
	for int64(len(e.dbs)) <= i {
		e.dbs = append(e.dbs, nil)
	}
	if e.dbs[i] == nil {
		st, err := e.dbs[0].Sibling()
		if err != nil {
			e.storeError(err)
			return nil
		}
		e.dbs[i] = st
		e.watchRemovals(st)
		st.SetKeepExpired(e.follow.on)
		st.SetNoExpiry(e.follow.applying)
		// A new database's first change counter is no change to save.
		e.snap.dirtyBase += st.Mods()
		e.snap.dirtyStart += st.Mods()
	}
	return e.dbs[i]
}

// Tick does up to budget units of every database's background work
// (store.Store.Tick), the selected ones first in turn, and returns the
// work done. The loop calls it in place of the store's Tick.
func (e *Engine) Tick(budget int) int {
	e.now = e.clock.NowMillis()
	e.tickPause()
	if sec := e.now / 1000; sec != e.lruSec { // the stores' LRU clock, once a second (store/access.go)
		e.lruSec = sec
		for _, st := range e.dbs {
			if st != nil {
				st.SetLRUClock(e.now)
			}
		}
	}
	e.sampleOps()
	if e.loading != nil { // the load at start: nothing else runs on the stores meanwhile
		return e.tickLoad()
	}
	if e.follow.on {
		e.keepExpired(true) // after a writable replica's write (replGate)
	}
	var t0 int64
	if e.lat.threshold > 0 { // the latency monitor times the loop's own work
		t0 = e.mono()
	}
	if e.batch.n != 0 && (t0 != 0 || e.snap.job != nil || len(e.repl.replicas) > 0 || e.dbs[0].MaxMemory() > 0) {
		// The loop's own work that can take long (a save's or a full
		// sync's slice, eviction, what the latency monitor watches)
		// is not the hot requests' (batchtime.go): their batch ends
		// before it. Otherwise the batch runs to the next cycle's
		// start, and Tick's short sweep is counted in it, which saves
		// a ping-pong its second clock reading a cycle.
		if t0 == 0 {
			t0 = e.mono()
		}
		e.closeBatch(t0)
		e.mark = t0
	}
	work := 0
	for i := range e.dbs {
		j := (e.tickNext + i) % len(e.dbs)
		if st := e.dbs[j]; st != nil && work < budget {
			work += st.Tick(budget - work)
		}
	}
	if e.lat.threshold > 0 && work > 0 {
		t0 = e.latencyEnd(EventStoreCycle, t0)
	}
	e.tickNext = (e.tickNext + 1) % len(e.dbs)
	if e.cl != nil {
		e.tickCluster()
	}
	saving := e.snap.job != nil
	if e.lat.threshold > 0 && saving {
		t0 = e.mono()
	}
	work += e.tickPersist()
	if e.lat.threshold > 0 && saving {
		e.latencyEnd(EventBgsaveSlice, t0)
	}
	if e.repl.feed || len(e.repl.waiters) > 0 || len(e.repl.replicas) > 0 || e.fo.state != foNone {
		work += e.tickRepl()
	}
	if len(e.blocked) > 0 {
		work += e.tickBlocked()
	}
	return work
}

func (e *Engine) selectDB(s *Session, r *command.Request) {
	if e.cl != nil && r.Amount != 0 {
		e.errText(command.Err, "ERR SELECT is not allowed in cluster mode")
		return
	}
	if e.db(r.Amount) == nil {
		return
	}
	s.db = int(r.Amount)
	e.ok()
}

// swapDB answers SWAPDB a b: the two databases exchange their contents
// for every client (a pointer exchange).
func (e *Engine) swapDB(_ *Session, r *command.Request) {
	a, b := e.db(r.Amount), e.db(r.Amount2)
	if a == nil || b == nil {
		return
	}
	if len(e.watchers) > 0 { // a watched key that exists on either side changes
		for _, i := range [2]int64{r.Amount, r.Amount2} {
			e.touchExisting(int(i), a)
			e.touchExisting(int(i), b)
		}
	}
	e.dbs[r.Amount], e.dbs[r.Amount2] = b, a
	e.ok()
}

// move answers MOVE key db.
func (e *Engine) move(s *Session, r *command.Request) {
	dst := e.db(r.Amount)
	if dst == nil {
		return
	}
	if dst == e.st {
		e.errText(command.Err, "ERR source and destination objects are the same")
		return
	}
	// Redis looks the key up for writing (an access) and moves the object
	// itself: its idle time or LFU counter goes with it.
	e.st.Touch(r.Key)
	w, _ := e.st.AccessWord(r.Key)
	if e.transfer(dst, r.Key, r.Key, false) {
		dst.SetAccessWord(r.Key, w)
		e.st.Del(r.Key)
		e.touchKey(int(r.Amount), r.Key)
		e.integer(1)
	}
}

// transfer copies key's value, type and expiry from the selected database
// into dst as dstKey (replacing one there only when replace), MOVE's and
// COPY's common step. When nothing was copied it has answered: 0 for a
// missing source or an existing destination, or the store's error.
func (e *Engine) transfer(dst *store.Store, key, dstKey []byte, replace bool) bool {
	val, kind, at, ok := e.st.Export(e.scratch[:0], key)
	e.scratch = val[:0]
	if !ok && e.st.Collections() > 0 {
		return e.transferCollection(dst, key, dstKey, replace)
	}
	if !ok {
		e.integer(0)
		return false
	}
	done, err := dst.Import(dstKey, val, kind, at, replace)
	switch {
	case err != nil:
		e.storeError(err)
	case !done:
		e.integer(0)
	}
	return err == nil && done
}

// copyKey answers COPY source destination [DB db] [REPLACE].
func (e *Engine) copyKey(s *Session, r *command.Request) {
	dst := e.st
	if r.Flags&command.FlagDB != 0 {
		if dst = e.db(r.Amount); dst == nil {
			return
		}
	}
	if dst == e.st && string(r.Key) == string(r.Args[0]) {
		e.errText(command.Err, "ERR source and destination objects are the same")
		return
	}
	e.st.Touch(r.Key) // Redis reads the source with lookupKeyRead: an access
	if !e.transfer(dst, r.Key, r.Args[0], r.Flags&command.FlagReplace != 0) {
		return
	}
	if dst != e.st {
		e.touchKey(int(r.Amount), r.Args[0])
	}
	e.integer(1)
}

func (e *Engine) flush(s *Session, r *command.Request) {
	for i, st := range e.dbs {
		if st == nil || (r.Op == command.OpFlushDB && i != s.db) {
			continue
		}
		if len(e.watchers) > 0 {
			e.touchExisting(i, st)
		}
		st.Flush()
	}
	e.ok()
}

// opsSample is the command count at one moment, for INFO's
// instantaneous_ops_per_sec.
type opsSample struct {
	at    int64 // unix ms
	total uint64
}

// sampleOps records the command count every 100 ms.
func (e *Engine) sampleOps() {
	last := &e.opsAt[(e.opsNext+len(e.opsAt)-1)%len(e.opsAt)]
	if e.now-last.at < 100 {
		return
	}
	e.opsAt[e.opsNext] = opsSample{at: e.now, total: e.processed()}
	e.opsNext = (e.opsNext + 1) % len(e.opsAt)
}

// opsPerSec is the command rate over the samples kept (about 1.6 s).
func (e *Engine) opsPerSec() int64 {
	newest := e.opsAt[(e.opsNext+len(e.opsAt)-1)%len(e.opsAt)]
	oldest := e.opsAt[e.opsNext]
	if oldest.at == 0 {
		oldest = e.opsAt[0]
	}
	if newest.at <= oldest.at || newest.total < oldest.total { // none yet, or a CONFIG RESETSTAT between
		return 0
	}
	return int64(float64(newest.total-oldest.total) * 1000 / float64(newest.at-oldest.at))
}

// notePeak keeps the highest memory use seen (INFO's used_memory_peak).
func (e *Engine) notePeak(used int64) { e.peakUsed = max(e.peakUsed, used) }

// transferCollection is transfer for a hash, set or list: its items are
// copied out and written into dst (O(N), where Redis's MOVE is O(1): each
// database has its own arena).
func (e *Engine) transferCollection(dst *store.Store, key, dstKey []byte, replace bool) bool {
	buf, at, ok := e.st.ExportCollection(key, &e.dumpVal, e.dumpBuf[:0])
	defer func() {
		clear(e.dumpVal.Items)
		e.dumpVal.Items = e.dumpVal.Items[:0]
		e.dumpBuf = buf[:0]
	}()
	switch {
	case !ok:
		e.integer(0)
		return false
	case dst.Exists(dstKey) && !replace:
		e.integer(0)
		return false
	}
	dst.Del(dstKey)
	if err := dst.ImportCollection(dstKey, &e.dumpVal, at); err != nil {
		e.collError(err)
		return false
	}
	return true
}
