package snapshot

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/goblin-kv/goblin/rdb"
	"github.com/goblin-kv/goblin/store"
)

// DB is one numbered database to save.
type DB struct {
	Index int
	Store *store.Store
}

// Options configure a save.
type Options struct {
	// Path is the file to write (Redis's dir + dbfilename).
	Path string
	// TempPath is the temporary file written first and renamed over Path;
	// default TempName(dir of Path, os.Getpid()).
	TempPath string
	// NoCompression turns LZF off (rdbcompression no); NoChecksum writes a
	// zero CRC (rdbchecksum no).
	NoCompression, NoChecksum bool
	// UsedMemory is the used-mem AUX field.
	UsedMemory int64
	// Now is the ctime AUX field; default time.Now().
	Now time.Time
	// Aux are AUX fields written after the standard ones (a full
	// resynchronisation's repl-stream-db, repl-id, repl-offset).
	Aux [][2]string
	// MaxBacklog bounds the bytes queued for the writer goroutine before
	// Step stops walking (copy-on-write goes on); default 4 MiB. A
	// background save's buffers (this and 512 KiB) are allocated when it
	// begins and reused until it ends.
	MaxBacklog int64
	// WriterPriority is the background writer's kernel priority; default
	// WriterIdle (writerprio.go).
	WriterPriority WriterPriority
}

// Job is one save in progress: the cuts of every database, the encoder,
// and where its bytes go. Its methods run on the goroutine that owns the
// stores.
type Job struct {
	o       Options
	enc     *rdb.Encoder
	cuts    []dbCut
	cur     int // the cut being walked
	encDB   int // the database of the last SELECTDB written, -1 before any
	val     rdb.Value
	err     error // the first encoding error: the save fails
	keys    int64 // keys written
	cowKeys int64 // of which by copy-on-write
	walking bool  // the walk, not a write, is handing keys over

	file    *os.File     // foreground: written by the loop itself
	pipe    *pipe        // background: written by the writer goroutine
	tmp     *os.File     // background, until its writer starts: the file
	queued  func() int64 // a stream's bytes not sent yet (BeginStream)
	encoded bool         // every key is encoded and the encoder closed
	started time.Time
	// pausedAt is when the loop began waiting for the writer (the walk
	// paused, or every key encoded and the file not finished), zero while
	// it walks; pausedFor sums the waits before it (watchWriter).
	pausedAt  time.Time
	pausedFor time.Duration
}

// RescueAfter and RescueShare decide when a background save whose writer
// runs at WriterIdle gets a rescuer at the process's priority: once the
// loop has waited for the writer RescueAfter at once, or at least
// RescueAfter in all and for at least 1/RescueShare of the save's time so
// far. A SCHED_IDLE writer gets the CPU time nothing else wants, and on a
// machine whose CPUs something else keeps busy (a spinning client,
// another process) that may be almost none; on an idle machine it keeps
// up and the loop never waits that long. (A disk slower than the walk
// makes the loop wait too, and gets a rescuer that cannot help it.)
const (
	RescueAfter = 50 * time.Millisecond
	RescueShare = 3
)

type dbCut struct {
	index      int
	cut        *store.Cut
	keys, ttls int64
	selected   bool // its SELECTDB (with the RESIZEDB hint) is written
}

// Begin starts a save of dbs as they are now. With background set, the
// file is written by a goroutine of its own and the caller advances the
// save with Step until Finished; otherwise Run does the whole save at once.
func Begin(dbs []DB, o Options, background bool) (*Job, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.MaxBacklog <= 0 {
		o.MaxBacklog = 4 << 20
	}
	if o.TempPath == "" {
		dir := "."
		if i := lastSlash(o.Path); i >= 0 {
			dir = o.Path[:i]
		}
		o.TempPath = TempName(dir, os.Getpid())
	}
	f, err := createTemp(o.TempPath)
	if err != nil {
		return nil, err
	}
	j := &Job{o: o, encDB: -1, started: time.Now()}
	var w io.Writer = f
	if background {
		j.pipe = newPipe(o.MaxBacklog)
		w = j.pipe
		j.tmp = f
	} else {
		j.file = f
	}
	if _, err := j.begin(dbs, w); err != nil {
		return nil, err
	}
	if background {
		// The writer starts once the cuts are taken: a save that cannot
		// begin (a cut already active) never waits for a new thread that
		// may be slow to get a CPU at WriterIdle.
		j.pipe.start(f, o.Path, o.WriterPriority)
		j.tmp = nil
	}
	return j, nil
}

// BeginStream starts a save of dbs as they are now into w instead of a
// file: a full resynchronisation's RDB, which the caller sends to a
// replica. The caller advances it with Step (or StepFor) until Finished,
// as a background save; queued reports the bytes written to w and not yet
// sent, and the walk pauses while they exceed Options.MaxBacklog (writes
// to keys not yet walked are still handed over). w is called on the
// caller's goroutine only. Options.Path and TempPath are not used.
func BeginStream(dbs []DB, o Options, w io.Writer, queued func() int64) (*Job, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.MaxBacklog <= 0 {
		o.MaxBacklog = 8 << 20
	}
	j := &Job{o: o, encDB: -1, started: time.Now(), queued: queued}
	return j.begin(dbs, w)
}

// begin takes the cuts and writes the header.
func (j *Job) begin(dbs []DB, w io.Writer) (*Job, error) {
	o := j.o
	j.enc = rdb.NewEncoder(w, rdb.EncoderOptions{NoCompression: o.NoCompression, NoChecksum: o.NoChecksum,
		UsedMemory: o.UsedMemory, Now: o.Now, Aux: o.Aux})
	for _, d := range dbs {
		if d.Store == nil || d.Store.Len() == 0 {
			continue
		}
		c := dbCut{index: d.Index}
		idx := len(j.cuts)
		cut, err := d.Store.NewCut(func(e *store.Entry) { j.write(idx, e) })
		if err != nil {
			j.abandon()
			return nil, err
		}
		c.cut = cut
		c.keys, c.ttls = cut.Counts()
		j.cuts = append(j.cuts, c)
	}
	if err := j.enc.WriteHeader(); err != nil {
		j.abandon()
		return nil, err
	}
	return j, nil
}

func lastSlash(p string) int {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return i
		}
	}
	return -1
}

// write encodes one key of cut idx: from the walk, or from a write about
// to change it.
func (j *Job) write(idx int, e *store.Entry) {
	if j.err != nil {
		return
	}
	c := &j.cuts[idx]
	if j.encDB != c.index {
		keys, ttls := uint64(0), uint64(0)
		if !c.selected { // the first SELECTDB of a database carries its RESIZEDB hint
			keys, ttls = uint64(c.keys), uint64(c.ttls)
			c.selected = true
		}
		if j.err = j.enc.SelectDB(c.index, keys, ttls); j.err != nil {
			return
		}
		j.encDB = c.index
	}
	if j.err = ValueOf(e, &j.val); j.err != nil {
		return
	}
	exp := int64(rdb.NoExpiry)
	if e.ExpireAt != 0 {
		exp = e.ExpireAt
	}
	if j.err = j.enc.WriteAccess(e.Key, &j.val, exp, e.Idle, e.Freq); j.err != nil {
		return
	}
	j.keys++
	if !j.walking {
		j.cowKeys++
	}
}

// StepFor walks the cuts for about d (16 slots at a time, so a slice
// overruns d by at most 16 keys' encoding) and reports whether every key
// has been encoded, as Step does.
func (j *Job) StepFor(d time.Duration) bool {
	start := time.Now()
	for {
		if j.Step(16) {
			return true
		}
		if j.behind() || time.Since(start) >= d {
			return false
		}
	}
}

// Step walks up to n slots of the cuts (none while the writer goroutine
// is more than MaxBacklog behind) and reports whether every key has been
// encoded; then wait for Finished. A failed save reports true at once.
func (j *Job) Step(n int) bool {
	if j.encoded || j.err != nil {
		return true
	}
	if j.pipe != nil {
		if done, err := j.pipe.Result(); done { // the writer failed before the end
			j.err = err
			if err == nil {
				j.err = errAborted
			}
			return true
		}
	}
	if j.behind() {
		if j.pipe != nil {
			// Buffers copy-on-write queued past the queue's room wait in
			// pending; only a flush moves them on, and with the walk paused
			// no push would: the writer would drain the queue, sleep, and
			// the save wait for the next write ahead of the walk.
			j.pipe.flush()
		}
		j.watchWriter()
		return false
	}
	if !j.pausedAt.IsZero() {
		j.pausedFor += time.Since(j.pausedAt)
		j.pausedAt = time.Time{}
	}
	j.walking = true
	for n > 0 && j.cur < len(j.cuts) && j.err == nil {
		c := j.cuts[j.cur]
		step := min(n, 1024)
		n -= step
		if c.cut.Step(step) {
			c.cut.Close()
			j.cur++
		}
	}
	j.walking = false
	if j.err == nil && j.cur == len(j.cuts) {
		j.err = j.enc.Close()
		j.encoded = true
		if j.pipe != nil && j.err == nil {
			j.pipe.Close()
		}
	}
	return j.encoded || j.err != nil
}

// watchWriter counts the loop's wait for a background save's writer and
// starts a rescuer once the waits pass RescueAfter and RescueShare (loop
// side, in each cycle the loop waits).
func (j *Job) watchWriter() {
	p := j.pipe
	if p == nil || !p.idleFirst || p.rescued {
		return
	}
	now := time.Now()
	if j.pausedAt.IsZero() {
		j.pausedAt = now
		return
	}
	wait := now.Sub(j.pausedAt)
	waited := j.pausedFor + wait
	if wait >= RescueAfter || waited >= RescueAfter && waited*RescueShare >= now.Sub(j.started) {
		p.rescue()
	}
}

// Rescued reports whether a rescuer took the writing over (watchWriter).
func (j *Job) Rescued() bool { return j.pipe != nil && j.pipe.Rescued() }

// Behind reports whether the walk waits for the bytes not yet written out
// (more than MaxBacklog): a Step would encode nothing.
func (j *Job) Behind() bool { return !j.encoded && j.err == nil && j.behind() }

// behind reports whether the bytes not yet written out exceed MaxBacklog.
func (j *Job) behind() bool {
	switch {
	case j.pipe != nil:
		return j.pipe.Backlog() > j.o.MaxBacklog
	case j.queued != nil:
		return j.queued() > j.o.MaxBacklog
	}
	return false
}

// Finished reports whether the save is over and how it ended; it never
// blocks. A failed save has removed its temporary file and left the
// previous file at Path as it was.
func (j *Job) Finished() (bool, error) {
	if j.err != nil {
		j.Abort()
		if j.pipe != nil {
			// Prompt once aborted: at most one write in flight, and a writer
			// at WriterIdle, which may wait long for a CPU, gets a rescuer
			// that ends the save at once.
			j.pipe.rescue()
			<-j.pipe.done
			j.pipe.release()
		}
		return true, j.fail(j.err)
	}
	if !j.encoded {
		return false, nil
	}
	if j.pipe == nil {
		return true, nil
	}
	j.pipe.flush() // buffers the queue had no room for, and the close after them
	done, err := j.pipe.Result()
	if !done {
		j.watchWriter()
		return false, nil
	}
	j.pipe.release() // the cuts are closed: nothing writes to the pipe any more
	if err != nil {
		return true, j.fail(err)
	}
	return true, nil
}

func (j *Job) fail(err error) error {
	return fmt.Errorf("snapshot: saving %s: %w", j.o.Path, err)
}

// Run does a whole save on the calling goroutine (SAVE): walk, encode,
// write, fsync, rename.
func (j *Job) Run() error {
	for !j.Step(1 << 20) {
	}
	if j.err != nil {
		_, err := j.Finished()
		return err
	}
	if j.pipe != nil {
		for {
			if done, err := j.Finished(); done { // flushes what the queue had no room for
				return err
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	f := j.file
	j.file = nil
	if err := commit(f, j.o.Path); err != nil {
		return j.fail(err)
	}
	return nil
}

// abandon gives up a save that failed to begin (before a background
// save's writer starts): its file is removed and its buffers freed when
// it returns.
func (j *Job) abandon() {
	j.Abort()
	if j.pipe != nil {
		if j.tmp != nil {
			discard(j.tmp)
			j.tmp = nil
		}
		j.pipe.release()
	}
}

// Abort gives the save up: the cuts end, the temporary file is removed,
// the previous file stays. Safe to call more than once.
func (j *Job) Abort() {
	for i := j.cur; i < len(j.cuts); i++ {
		j.cuts[i].cut.Close()
	}
	j.cur = len(j.cuts)
	if j.pipe != nil {
		j.pipe.Abort()
	}
	if j.file != nil {
		discard(j.file)
		j.file = nil
	}
	if j.err == nil && (!j.encoded || j.pipe != nil && !j.pipe.finished()) {
		// Also once the walk has encoded everything but the writer still
		// writes or commits: Finished must then wait for it, or a
		// SHUTDOWN's save would open the same temporary file while the
		// writer still writes, removes or renames it.
		j.err = errAborted
	}
}

// Keys returns the keys written so far and how many of them a write
// handed over before the walk reached them (copy-on-write).
func (j *Job) Keys() (keys, copied int64) { return j.keys, j.cowKeys }

// Started returns when the save began.
func (j *Job) Started() time.Time { return j.started }

// Overflow returns how many buffers a background save allocated beyond
// those it began with, because copy-on-write found them all queued for a
// disk that was behind (0 for other saves).
func (j *Job) Overflow() int64 {
	if j.pipe == nil {
		return 0
	}
	return j.pipe.Overflow()
}
