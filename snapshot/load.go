package snapshot

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/goblin-kv/goblin/rdb"
	"github.com/goblin-kv/goblin/store"
)

// ErrLoad wraps every reason Load refuses a file that is not an
// *rdb.Error (those carry the byte offset themselves): a duplicate key, a
// database out of range, a store that refused a key.
var ErrLoad = errors.New("snapshot: cannot load")

// ErrUnsupported is what Insert returns for a value of a type goblin does
// not store (sorted sets for now, streams, module values).
var ErrUnsupported = errors.New("a type goblin does not store yet")

// ErrDuplicate is what Insert returns for a key the store already holds.
var ErrDuplicate = errors.New("duplicate key")

// Insert stores one decoded key in s, as Load does: a string, hash, set or
// list with its expiry (an expiry already past is stored as it is; Load's
// decoder drops such keys before). A key s already holds is refused with
// ErrDuplicate, a value of another type with ErrUnsupported. A replica
// loading its primary's snapshot uses it key by key.
func Insert(s *store.Store, e *rdb.Entry) error {
	exp := int64(0)
	if e.Expiry != rdb.NoExpiry {
		exp = e.Expiry
	}
	switch e.Kind {
	case rdb.KindHash, rdb.KindSet, rdb.KindList, rdb.KindZSet:
		if s.TypeOf(e.Key) != store.TypeNone {
			return ErrDuplicate
		}
		return s.ImportCollection(e.Key, &e.Value, exp)
	case rdb.KindString:
		added, err := s.LoadString(s.LoadHash(e.Key), e.Key, e.Str, exp)
		if err == nil && !added {
			return ErrDuplicate
		}
		return err
	}
	return fmt.Errorf("%w: %s", ErrUnsupported, rdb.TypeName(e.Type))
}

// LoadOptions configure Load. The zero value refuses types goblin does not
// store and reports no progress.
type LoadOptions struct {
	// SkipUnsupported skips keys of types goblin does not store (streams,
	// module values) and
	// functions instead of refusing the file; LoadStats.Skipped counts them.
	SkipUnsupported bool
	// Now is the time keys already expired are dropped against; default
	// time.Now().
	Now time.Time
	// Progress, when set, is called about every ProgressEvery with what
	// has been loaded so far.
	Progress      func(LoadStats)
	ProgressEvery time.Duration
	// Size is the input's size, reported in LoadStats.Size (LoadFile sets
	// it from the file).
	Size int64
}

// LoadStats count what Load did.
type LoadStats struct {
	Keys    int64 // keys stored
	Expired int64 // keys dropped because their expiry had passed
	Skipped int64 // values skipped by SkipUnsupported
	Bytes   int64 // bytes of the file read
	Size    int64 // the file's size, when known (LoadFile)
	Version int   // the file's RDB version
	UsedMem int64 // the memory its writer used (the used-mem AUX field), 0 if not read yet or absent
}

// DBFunc returns database i, creating it if need be; an error refuses the
// file (a database the server does not have).
type DBFunc func(i int) (*store.Store, error)

// LoadFile loads the RDB file at path with Load. A missing file is not an
// error: it loads nothing and reports found false.
func LoadFile(path string, db DBFunc, o LoadOptions) (st LoadStats, found bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return st, false, nil
	}
	if err != nil {
		return st, false, fmt.Errorf("%w: %w", ErrLoad, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil {
		o.Size = fi.Size()
	}
	st, err = Load(bufio.NewReaderSize(f, 1<<20), db, o)
	return st, true, err
}

// Load reads an RDB file from r into the databases db returns, with bulk
// inserts: each store's index is sized from the file's RESIZEDB hint
// first, and a string key goes in with one probe of the index
// (store.LoadString). Keys already expired are dropped, SELECTDB is
// honoured. On an error the stores hold what was read before it: the
// caller refuses to start rather than serve half a file.
//
// The file is decoded on a goroutine of its own, which hands the entries
// over in batches (copies, in a few buffers that go round) to the
// goroutine that called Load, which alone touches the stores and calls db
// and o.Progress. Load returns after that goroutine has stopped reading r.
// Load is a Loader stepped to the end; a server that goes on serving while
// it loads steps one itself.
func Load(r io.Reader, db DBFunc, o LoadOptions) (LoadStats, error) {
	l := NewLoader(r, db, o)
	defer l.Close()
	for {
		done, err := l.Step(StepLimit{})
		if done || err != nil {
			return l.Stats(), err
		}
	}
}

// StepLimit bounds one Loader.Step. A Step stops after the batch (up to
// 4096 keys or 1 MiB of them) in which it passed either bound; the zero
// value runs to the end of the file.
type StepLimit struct {
	// Bytes of the file a Step reads at most (Redis's
	// loading-process-events-interval-bytes, 2 MiB, is a fair figure);
	// 0: no bound.
	Bytes int64
	// Until is when a Step gives up, even while it waits for the decoder;
	// zero: no bound.
	Until time.Time
}

// A Loader is a load (see Load) in steps, for a server that answers its
// clients between them (Redis's -LOADING): NewLoader starts decoding, each
// Step stores what was decoded up to a bound, Close stops the decoder.
// Only the goroutine that calls Step touches the stores; a Loader is not
// safe for concurrent use.
type Loader struct {
	p    *loadPipe
	db   DBFunc
	o    LoadOptions
	st   LoadStats
	done bool
	err  error

	cur          *store.Store
	curDB        int
	skipped      int64
	lastProgress time.Time
	last         decoded // the decoder's counts after the last batch taken
	e            rdb.Entry
	wait         *time.Timer // Step's bound on waiting for the decoder; made on first use
	bulk         BulkLoad    // the stores db returned, in bulk-load mode until Close
}

// store returns database i (db), in bulk-load mode (store.BeginBulkLoad)
// until Close.
func (l *Loader) store(i int) (*store.Store, error) {
	s, err := l.db(i)
	if err == nil {
		l.bulk.Add(s)
	}
	return s, err
}

// NewLoader starts decoding r (on a goroutine of its own) into the
// databases db returns; nothing is stored before the first Step.
func NewLoader(r io.Reader, db DBFunc, o LoadOptions) *Loader {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = time.Second
	}
	return &Loader{p: startDecoding(r, o), db: db, o: o, st: LoadStats{Size: o.Size}, curDB: -1, lastProgress: time.Now()}
}

// Stats returns what the load has done so far.
func (l *Loader) Stats() LoadStats {
	l.st.Expired, l.st.Skipped, l.st.Bytes, l.st.Version = l.last.stats.Expired, l.last.stats.Skipped+l.skipped, l.last.stats.Bytes, l.last.version
	l.st.UsedMem = l.last.usedMem
	return l.st
}

// Close stops the decoder (at once if the load has not ended) and waits
// until it no longer reads r, and ends the stores' bulk-load mode
// (store.BeginBulkLoad). After a load that completed without error a
// thread of low priority then collapses the chunks loaded into huge pages
// (arena.Collapse), until done or until a flush of the store frees them
// (ReadCollapseStats counts what it did). It may be called more than once.
func (l *Loader) Close() {
	if l.p != nil {
		l.p.stop()
		l.p = nil
	}
	// Only a load that completed is worth its collapse (BulkLoad.End).
	l.bulk.End(l.done && l.err == nil)
	if l.wait != nil {
		l.wait.Stop()
	}
}

// Step stores decoded batches until lim is reached or the file ends, and
// reports whether the load is over: done with a nil error at the file's
// clean end, or the error that ended it (then every later Step returns it
// too). A Step that finds no batch decoded waits for one, until lim.Until.
func (l *Loader) Step(lim StepLimit) (done bool, err error) {
	if l.done || l.err != nil {
		return true, l.err
	}
	from := l.last.stats.Bytes
	for {
		var b *loadBatch
		var ok bool
		select {
		case b, ok = <-l.p.full:
		default:
			if lim.Until.IsZero() {
				b, ok = <-l.p.full
				break
			}
			d := time.Until(lim.Until)
			if d <= 0 {
				return false, nil
			}
			if l.wait == nil {
				l.wait = time.NewTimer(d)
			} else {
				l.wait.Reset(d)
			}
			select {
			case b, ok = <-l.p.full:
				l.wait.Stop()
			case <-l.wait.C:
				return false, nil
			}
		}
		if !ok { // the decoder ended after its final batch (not reached here) or was stopped
			l.done = true
			return true, l.err
		}
		if err := l.batch(b); err != nil {
			l.err = err
			return true, err
		}
		if l.last.final {
			l.done = true
			return true, nil
		}
		if o := &l.o; o.Progress != nil && time.Since(l.lastProgress) >= o.ProgressEvery {
			l.lastProgress = time.Now()
			o.Progress(l.Stats())
		}
		l.p.free <- b
		if lim.Bytes > 0 && l.last.stats.Bytes-from >= lim.Bytes || !lim.Until.IsZero() && !time.Now().Before(lim.Until) {
			return false, nil
		}
	}
}

// batch stores the keys of b.
func (l *Loader) batch(b *loadBatch) error {
	ahead := 0 // items before this were hashed ahead, or could not be
	for i := range b.items {
		it := &b.items[i]
		if l.cur != nil {
			// Hash the string keys of the current database up to
			// loadAhead items on: their index buckets are read together.
			for ahead = max(ahead, i); ahead < min(i+loadAhead, len(b.items)); ahead++ {
				if a := &b.items[ahead]; !a.resize && a.kind == rdb.KindString && a.db == l.curDB {
					a.hash, a.hashed = l.cur.LoadHash(b.key(a)), true
				}
			}
		}
		if it.resize {
			s, err := l.store(it.db)
			if err != nil {
				l.last = b.decoded
				return fmt.Errorf("%w: offset %d: RESIZEDB: %w", ErrLoad, it.off, err)
			}
			s.Reserve(int(min(it.keys, 1<<31)))
			continue
		}
		if it.db != l.curDB || l.cur == nil {
			s, err := l.store(it.db)
			if err != nil {
				l.last = b.decoded
				return fmt.Errorf("%w: offset %d: key %q: database %d: %w", ErrLoad, it.off, b.key(it), it.db, err)
			}
			l.cur, l.curDB = s, it.db
		}
		var err error
		if it.kind == rdb.KindString {
			var added bool
			exp := int64(0)
			if it.exp != rdb.NoExpiry {
				exp = it.exp
			}
			h := it.hash
			if !it.hashed {
				h = l.cur.LoadHash(b.key(it))
			}
			if added, err = l.cur.LoadString(h, b.key(it), b.str(it), exp); err == nil && !added {
				err = ErrDuplicate
			}
		} else {
			b.entry(it, &l.e)
			err = Insert(l.cur, &l.e)
		}
		switch {
		case err == nil:
		case errors.Is(err, ErrUnsupported) && l.o.SkipUnsupported:
			l.skipped++
			continue
		case errors.Is(err, ErrUnsupported):
			l.last = b.decoded
			return fmt.Errorf("%w: offset %d: key %q in database %d holds a %s, a type goblin does not store yet (--rdb-skip-unsupported skips such keys)",
				ErrLoad, it.off, b.key(it), it.db, rdb.TypeName(it.typ))
		case errors.Is(err, ErrDuplicate):
			l.last = b.decoded
			return fmt.Errorf("%w: offset %d: duplicate key %q in database %d", ErrLoad, it.off, b.key(it), it.db)
		default:
			l.last = b.decoded
			return fmt.Errorf("%w: offset %d: key %q in database %d: %w", ErrLoad, it.off, b.key(it), it.db, err)
		}
		// The access record, as Redis's objectSetLRUOrLFU: the counter
		// under an LFU policy, the idle time under any other (each setter
		// ignores the other kind of policy).
		if it.freq >= 0 {
			l.cur.SetFreq(b.key(it), it.freq)
		}
		if it.idle >= 0 {
			l.cur.SetIdleTime(b.key(it), it.idle)
		}
		l.st.Keys++
	}
	l.last = b.decoded
	return l.last.err
}
