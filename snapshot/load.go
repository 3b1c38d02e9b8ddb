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
func Load(r io.Reader, db DBFunc, o LoadOptions) (LoadStats, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = time.Second
	}
	st := LoadStats{Size: o.Size}
	p := startDecoding(r, o)
	defer p.stop()
	var (
		cur          *store.Store
		curDB        = -1
		skipped      int64
		lastProgress = time.Now()
		last         decoded // the decoder's counts after the last batch taken
		e            rdb.Entry
	)
	stats := func() LoadStats {
		st.Expired, st.Skipped, st.Bytes, st.Version = last.stats.Expired, last.stats.Skipped+skipped, last.stats.Bytes, last.version
		return st
	}
	for b := range p.full {
		ahead := 0 // items before this were hashed ahead, or could not be
		for i := range b.items {
			it := &b.items[i]
			if cur != nil {
				// Hash the string keys of the current database up to
				// loadAhead items on: their index buckets are read together.
				for ahead = max(ahead, i); ahead < min(i+loadAhead, len(b.items)); ahead++ {
					if a := &b.items[ahead]; !a.resize && a.kind == rdb.KindString && a.db == curDB {
						a.hash, a.hashed = cur.LoadHash(b.key(a)), true
					}
				}
			}
			if it.resize {
				s, err := db(it.db)
				if err != nil {
					last = b.decoded
					return stats(), fmt.Errorf("%w: offset %d: RESIZEDB: %w", ErrLoad, it.off, err)
				}
				s.Reserve(int(min(it.keys, 1<<31)))
				continue
			}
			if it.db != curDB || cur == nil {
				s, err := db(it.db)
				if err != nil {
					last = b.decoded
					return stats(), fmt.Errorf("%w: offset %d: key %q: database %d: %w", ErrLoad, it.off, b.key(it), it.db, err)
				}
				cur, curDB = s, it.db
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
					h = cur.LoadHash(b.key(it))
				}
				if added, err = cur.LoadString(h, b.key(it), b.str(it), exp); err == nil && !added {
					err = ErrDuplicate
				}
			} else {
				b.entry(it, &e)
				err = Insert(cur, &e)
			}
			switch {
			case err == nil:
			case errors.Is(err, ErrUnsupported) && o.SkipUnsupported:
				skipped++
				continue
			case errors.Is(err, ErrUnsupported):
				last = b.decoded
				return stats(), fmt.Errorf("%w: offset %d: key %q in database %d holds a %s, a type goblin does not store yet (--rdb-skip-unsupported skips such keys)",
					ErrLoad, it.off, b.key(it), it.db, rdb.TypeName(it.typ))
			case errors.Is(err, ErrDuplicate):
				last = b.decoded
				return stats(), fmt.Errorf("%w: offset %d: duplicate key %q in database %d", ErrLoad, it.off, b.key(it), it.db)
			default:
				last = b.decoded
				return stats(), fmt.Errorf("%w: offset %d: key %q in database %d: %w", ErrLoad, it.off, b.key(it), it.db, err)
			}
			st.Keys++
		}
		last = b.decoded
		if last.err != nil {
			return stats(), last.err
		}
		if o.Progress != nil && !last.final && time.Since(lastProgress) >= o.ProgressEvery {
			lastProgress = time.Now()
			o.Progress(stats())
		}
		p.free <- b
	}
	return stats(), nil
}
