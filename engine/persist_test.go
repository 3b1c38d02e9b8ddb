package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/snapshot"
)

func infoField(t *testing.T, e *Engine, s *Session, name string) string {
	t.Helper()
	info := do(t, e, s, "INFO", "persistence")
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
		if v, ok := strings.CutPrefix(line, "$# Persistence\r\n"+name+":"); ok {
			return v
		}
	}
	t.Fatalf("INFO persistence has no %s:\n%s", name, info)
	return ""
}

// finishSave ticks the engine until its background save is over.
func finishSave(t *testing.T, e *Engine) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for e.Saving() {
		e.Tick(32)
		if time.Now().After(deadline) {
			t.Fatal("the background save never finished")
		}
	}
}

// dbContents reads every key of database db of the engine.
func dbContents(t *testing.T, e *Engine, s *Session, db int) map[string]string {
	t.Helper()
	do(t, e, s, "SELECT", strconv.Itoa(db))
	m := map[string]string{}
	for _, k := range strings.Fields(strings.Trim(do(t, e, s, "KEYS", "*"), "[]")) {
		k = strings.TrimPrefix(k, "$")
		m[k] = do(t, e, s, "GET", k)
	}
	return m
}

// TestBgsaveCommands: BGSAVE answers as Redis's does (started, already in
// progress, scheduled, syntax), SAVE is refused while one runs, writes
// served during the save do not reach the file (a point-in-time image of
// both databases), INFO persistence, LASTSAVE and the dirty counter follow,
// and a scheduled save runs after the first.
func TestBgsaveCommands(t *testing.T) {
	dir := t.TempDir()
	e, clock := newEngine(t, Options{Persistence: Persistence{Dir: dir}})
	s := NewSession(proto.RESP, nil)
	for i := range 3000 {
		do(t, e, s, "SET", fmt.Sprintf("k%d", i), strconv.Itoa(i))
	}
	do(t, e, s, "SELECT", "2")
	do(t, e, s, "SET", "other", "db2")
	do(t, e, s, "SELECT", "0")
	want0, want2 := dbContents(t, e, s, 0), dbContents(t, e, s, 2)
	do(t, e, s, "SELECT", "0")
	if got := infoField(t, e, s, "rdb_changes_since_last_save"); got != "3001" {
		t.Errorf("rdb_changes_since_last_save = %s, want 3001", got)
	}
	if got := do(t, e, s, "BGSAVE", "now"); got != "-ERR syntax error" {
		t.Errorf("BGSAVE now: %s", got)
	}
	if got := do(t, e, s, "BGSAVE"); got != "+Background saving started" {
		t.Fatalf("BGSAVE: %s", got)
	}
	if got := infoField(t, e, s, "rdb_bgsave_in_progress"); got != "1" {
		t.Errorf("rdb_bgsave_in_progress = %s during the save", got)
	}
	for _, c := range [][]string{{"BGSAVE"}, {"SAVE"}} {
		if got := do(t, e, s, c...); got != "-ERR Background save already in progress" {
			t.Errorf("%v during a save: %s", c, got)
		}
	}
	if got := do(t, e, s, "BGSAVE", "SCHEDULE"); got != "+Background saving scheduled" {
		t.Errorf("BGSAVE SCHEDULE during a save: %s", got)
	}
	// Writes between the slices: none may reach the file.
	for i := 0; e.Saving(); i++ {
		do(t, e, s, "SET", fmt.Sprintf("k%d", (i*7)%3500), "new")
		do(t, e, s, "DEL", fmt.Sprintf("k%d", (i*13)%3000))
		if i == 5 {
			do(t, e, s, "FLUSHDB")
			do(t, e, s, "SELECT", "2")
			do(t, e, s, "RENAME", "other", "moved")
			do(t, e, s, "SELECT", "0")
		}
		e.Tick(1)
	}
	finishSave(t, e)
	if got := infoField(t, e, s, "rdb_last_bgsave_status"); got != "ok" {
		t.Fatalf("rdb_last_bgsave_status = %s", got)
	}
	if got := infoField(t, e, s, "goblin_rdb_last_cow_keys"); got == "0" {
		t.Error("no key was saved by copy-on-write: the writes did not land during the save")
	}
	if got := do(t, e, s, "LASTSAVE"); got == fmt.Sprintf(":%d", e.started.Unix()-1) {
		t.Errorf("LASTSAVE did not move: %s", got)
	}

	e2, _ := newEngine(t, Options{Persistence: Persistence{Dir: dir}})
	if _, found, err := e2.Load(snapshot.LoadOptions{}); err != nil || !found {
		t.Fatalf("load: %v, %v", found, err)
	}
	s2 := NewSession(proto.RESP, nil)
	if got := dbContents(t, e2, s2, 0); fmt.Sprint(got) != fmt.Sprint(want0) {
		t.Errorf("database 0 in the file is not the database at BGSAVE: %d keys, want %d", len(got), len(want0))
	}
	if got := dbContents(t, e2, s2, 2); fmt.Sprint(got) != fmt.Sprint(want2) {
		t.Errorf("database 2 in the file: %v, want %v", got, want2)
	}
	if got := infoField(t, e2, s2, "rdb_last_load_keys_loaded"); got != "3001" {
		t.Errorf("rdb_last_load_keys_loaded = %s", got)
	}

	// The scheduled save begins at the next policy check.
	clock.Advance(200 * time.Millisecond)
	e.Tick(1)
	if !e.Saving() {
		t.Fatal("the scheduled BGSAVE did not begin")
	}
	finishSave(t, e)
	if got := infoField(t, e, s, "rdb_saves"); got != "2" {
		t.Errorf("rdb_saves = %s, want 2", got)
	}
	if got := infoField(t, e, s, "rdb_changes_since_last_save"); got != "0" {
		t.Errorf("rdb_changes_since_last_save = %s after a save with no write during it", got)
	}
}

// TestSavePolicyAndConfig: CONFIG SET/GET of the persistence parameters
// with Redis's refusals; the policy begins a save once enough changes
// and seconds have passed.
func TestSavePolicyAndConfig(t *testing.T) {
	dir := t.TempDir()
	e, clock := newEngine(t, Options{Persistence: Persistence{Dir: dir}})
	s := NewSession(proto.RESP, nil)
	if got := do(t, e, s, "CONFIG", "SET", "dir", dir); got != "-ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected config" {
		t.Errorf("CONFIG SET dir without enable-protected-configs: %s", got)
	}
	e.o.Persistence.ProtectedConfig = true
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"CONFIG", "GET", "save"}, "[$save $]"},
		{[]string{"CONFIG", "SET", "save", "10 x"}, "-ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters"},
		{[]string{"CONFIG", "SET", "save", "10 1 20"}, "-ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters"},
		{[]string{"CONFIG", "SET", "save", "2 3"}, "+OK"},
		{[]string{"CONFIG", "GET", "save"}, "[$save $2 3]"},
		{[]string{"CONFIG", "SET", "dbfilename", "a/b.rdb"}, "-ERR CONFIG SET failed (possibly related to argument 'dbfilename') - dbfilename can't be a path, just a filename"},
		{[]string{"CONFIG", "SET", "dbfilename", "snap.rdb"}, "+OK"},
		{[]string{"CONFIG", "SET", "rdbcompression", "maybe"}, "-ERR CONFIG SET failed (possibly related to argument 'rdbcompression') - argument must be 'yes' or 'no'"},
		{[]string{"CONFIG", "SET", "rdbcompression", "no"}, "+OK"},
		{[]string{"CONFIG", "GET", "rdb*"}, "[$rdbcompression $no $rdbchecksum $yes]"},
		{[]string{"CONFIG", "GET", "stop-writes-on-bgsave-error"}, "[$stop-writes-on-bgsave-error $yes]"},
		{[]string{"CONFIG", "GET", "dir"}, "[$dir $" + dir + "]"},
		{[]string{"CONFIG", "GET", "bgsave-writer-priority"}, "[$bgsave-writer-priority $idle]"},
		{[]string{"CONFIG", "SET", "bgsave-writer-priority", "low"}, "-ERR CONFIG SET failed (possibly related to argument 'bgsave-writer-priority') - argument must be 'idle' or 'normal'"},
		{[]string{"CONFIG", "SET", "bgsave-writer-priority", "NORMAL"}, "+OK"},
		{[]string{"CONFIG", "GET", "bgsave-writer-priority"}, "[$bgsave-writer-priority $normal]"},
		{[]string{"CONFIG", "SET", "bgsave-writer-priority", "idle"}, "+OK"},
		{[]string{"CONFIG", "GET", "bgsave-loop-rest"}, "[$bgsave-loop-rest $always]"},
		{[]string{"CONFIG", "SET", "bgsave-loop-rest", "sometimes"}, "-ERR CONFIG SET failed (possibly related to argument 'bgsave-loop-rest') - argument must be 'requests', 'always' or 'no'"},
		{[]string{"CONFIG", "SET", "bgsave-loop-rest", "REQUESTS"}, "+OK"},
		{[]string{"CONFIG", "GET", "bgsave-loop-rest"}, "[$bgsave-loop-rest $requests]"},
	} {
		if got := do(t, e, s, c.args...); got != c.want {
			t.Errorf("%q: %s, want %s", c.args, got, c.want)
		}
	}
	do(t, e, s, "SET", "a", "1")
	do(t, e, s, "SET", "b", "1")
	clock.Advance(3 * time.Second)
	e.Tick(1)
	if e.Saving() {
		t.Fatal("the policy saved after 2 changes, want 3")
	}
	do(t, e, s, "SET", "c", "1")
	clock.Advance(200 * time.Millisecond)
	e.Tick(1)
	if !e.Saving() {
		t.Fatal("the policy did not save after 3 changes in more than 2 seconds")
	}
	finishSave(t, e)
	if _, err := os.Stat(filepath.Join(dir, "snap.rdb")); err != nil {
		t.Fatalf("the policy's save did not write dbfilename: %v", err)
	}
}

// TestFailedSaveStopsWrites: a background save that cannot write leaves
// the engine serving, says why in INFO, and with a policy refuses writes
// and PING with Redis's MISCONF (reads go on) until
// stop-writes-on-bgsave-error is turned off.
func TestFailedSaveStopsWrites(t *testing.T) {
	dir := t.TempDir()
	gone := filepath.Join(dir, "gone")
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	e, _ := newEngine(t, Options{Persistence: Persistence{Dir: gone, Save: []SavePoint{{3600, 1}}}})
	s := NewSession(proto.RESP, nil)
	do(t, e, s, "SET", "k", "v")
	os.Remove(gone)
	if got := do(t, e, s, "BGSAVE"); !strings.HasPrefix(got, "-ERR Background saving failed: ") {
		t.Fatalf("BGSAVE into a removed directory: %s", got)
	}
	if got := do(t, e, s, "SAVE"); !strings.Contains(got, "no such file or directory") {
		t.Errorf("SAVE into a removed directory: %s", got)
	}
	if got := infoField(t, e, s, "rdb_last_bgsave_status"); got != "err" {
		t.Errorf("rdb_last_bgsave_status = %s", got)
	}
	if got := infoField(t, e, s, "goblin_rdb_last_error"); !strings.Contains(got, "no such file") {
		t.Errorf("goblin_rdb_last_error = %s", got)
	}
	for _, c := range [][]string{{"SET", "k", "w"}, {"PING"}, {"DEL", "k"}} {
		if got := do(t, e, s, c...); !strings.HasPrefix(got, "-MISCONF Redis is configured to save RDB snapshots") {
			t.Errorf("%q after a failed save: %s", c, got)
		}
	}
	if got := do(t, e, s, "GET", "k"); got != "$v" {
		t.Errorf("GET after a failed save: %s", got)
	}
	do(t, e, s, "CONFIG", "SET", "stop-writes-on-bgsave-error", "no")
	if got := do(t, e, s, "SET", "k", "w"); got != "+OK" {
		t.Errorf("SET with stop-writes-on-bgsave-error no: %s", got)
	}
}

// TestShutdownCommand: SHUTDOWN's syntax and refusals as Redis's; a
// successful one saves (SAVE, or a policy), calls the server's Shutdown
// and closes the connection without a reply; a failing save refuses it
// unless FORCE.
func TestShutdownCommand(t *testing.T) {
	dir := t.TempDir()
	stopped := 0
	e, _ := newEngine(t, Options{Persistence: Persistence{Dir: dir, Shutdown: func() { stopped++ }}})
	s := NewSession(proto.RESP, nil)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"SHUTDOWN", "ABORT"}, "-ERR No shutdown in progress."},
		{[]string{"SHUTDOWN", "NOSAVE", "SAVE"}, "-ERR syntax error"},
		{[]string{"SHUTDOWN", "NOW", "ABORT"}, "-ERR syntax error"},
		{[]string{"SHUTDOWN", "LATER"}, "-ERR syntax error"},
	} {
		if got := do(t, e, s, c.args...); got != c.want {
			t.Errorf("%q: %s, want %s", c.args, got, c.want)
		}
	}
	do(t, e, s, "SET", "k", "v")
	in := []byte("*2\r\n$8\r\nSHUTDOWN\r\n$4\r\nSAVE\r\n")
	_, out, closeConn := e.ServeStream(s, in, nil)
	if len(out) != 0 || !closeConn || stopped != 1 {
		t.Fatalf("SHUTDOWN SAVE: reply %q, close %v, stopped %d", out, closeConn, stopped)
	}
	if _, err := os.Stat(filepath.Join(dir, "dump.rdb")); err != nil {
		t.Fatalf("SHUTDOWN SAVE wrote no snapshot: %v", err)
	}

	e, _ = newEngine(t, Options{Persistence: Persistence{Dir: filepath.Join(dir, "missing"), Shutdown: func() { stopped++ }}})
	s = NewSession(proto.RESP, nil)
	if got := do(t, e, s, "SHUTDOWN", "SAVE"); got != "-ERR Errors trying to SHUTDOWN. Check logs." {
		t.Errorf("SHUTDOWN SAVE that cannot save: %s", got)
	}
	_, _, closeConn = e.ServeStream(s, []byte("*3\r\n$8\r\nSHUTDOWN\r\n$4\r\nSAVE\r\n$5\r\nFORCE\r\n"), nil)
	if !closeConn || stopped != 2 {
		t.Errorf("SHUTDOWN SAVE FORCE did not stop: close %v, stopped %d", closeConn, stopped)
	}
	e, _ = newEngine(t, Options{})
	if got := do(t, e, NewSession(proto.RESP, nil), "SHUTDOWN"); !strings.HasPrefix(got, "-ERR SHUTDOWN is not available") {
		t.Errorf("SHUTDOWN without a server: %s", got)
	}
}

// TestInfoCountsTheLoadCollapse: a load at start large enough to map
// chunks off the Go heap starts a collapse into huge pages once it has
// ended, whose thread ends and whose counts INFO persistence shows.
func TestInfoCountsTheLoadCollapse(t *testing.T) {
	dir := t.TempDir()
	e, _ := newEngine(t, Options{Persistence: Persistence{Dir: dir}})
	s := NewSession(proto.RESP, nil)
	val := strings.Repeat("v", 200)
	for i := range 40000 { // ~9 MB of chunks: beyond the arena's Go-heap ones
		do(t, e, s, "SET", fmt.Sprintf("key:%d", i), val)
	}
	if got := do(t, e, s, "SAVE"); got != "+OK" {
		t.Fatalf("SAVE = %s", got)
	}
	num := func(e *Engine, name string) int64 {
		n, err := strconv.ParseInt(infoField(t, e, s, name), 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return n
	}
	started, tried := num(e, "goblin_load_collapse_started"), num(e, "goblin_load_collapse_regions")+num(e, "goblin_load_collapse_failed")
	e2, _ := newEngine(t, Options{Persistence: Persistence{Dir: dir}})
	var endErr error
	if found, err := e2.BeginLoad(snapshot.LoadOptions{}, func(_ snapshot.LoadStats, err error) { endErr = err }); err != nil || !found {
		t.Fatalf("BeginLoad: found %v, %v", found, err)
	}
	for !e2.StepLoad(snapshot.StepLimit{}) {
	}
	if endErr != nil {
		t.Fatal(endErr)
	}
	testkit.Eventually(t, 20*time.Second, "the collapse after the load to start and end", func() (bool, string) {
		st, run := num(e2, "goblin_load_collapse_started"), num(e2, "goblin_load_collapse_running")
		return st > started && run == 0, fmt.Sprintf("goblin_load_collapse_started %d (before the load %d), running %d", st, started, run)
	})
	if now := num(e2, "goblin_load_collapse_regions") + num(e2, "goblin_load_collapse_failed"); now <= tried {
		t.Errorf("the collapse tried no region: collapsed+failed %d, before the load %d", now, tried)
	}
}

// TestStopLoadReleasesTheLoader: a shutdown while the load at start runs
// stops the decoder's goroutine and closes the file; LOADING stays (the
// databases hold part of the file) and nothing is saved.
func TestStopLoadReleasesTheLoader(t *testing.T) {
	dir := t.TempDir()
	e, _ := newEngine(t, Options{Persistence: Persistence{Dir: dir}})
	s := NewSession(proto.RESP, nil)
	val := strings.Repeat("v", 200)
	for i := range 40000 {
		do(t, e, s, "SET", fmt.Sprintf("key:%d", i), val)
	}
	if got := do(t, e, s, "SAVE"); got != "+OK" {
		t.Fatalf("SAVE = %s", got)
	}
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd")
		}
		return len(ents)
	}
	goroutines, files := runtime.NumGoroutine(), fds()

	e2, _ := newEngine(t, Options{Persistence: Persistence{Dir: dir}})
	ended := false
	if found, err := e2.BeginLoad(snapshot.LoadOptions{}, func(snapshot.LoadStats, error) { ended = true }); err != nil || !found {
		t.Fatalf("BeginLoad: found %v, %v", found, err)
	}
	if e2.StepLoad(snapshot.StepLimit{Bytes: 64 << 10}) {
		t.Fatal("the load ended in its first 64 KiB step: the file is too small for the test")
	}
	if fds() <= files {
		t.Fatal("BeginLoad opened no file")
	}
	e2.StopLoad()
	testkit.Eventually(t, 10*time.Second, "the loader's goroutines to end and its file to close", func() (bool, string) {
		g, f := runtime.NumGoroutine(), fds()
		return g <= goroutines && f <= files, fmt.Sprintf("goroutines %d (before the load %d), open files %d (before %d)", g, goroutines, f, files)
	})
	s2 := NewSession(proto.RESP, nil)
	if !e2.Loading() || ended {
		t.Fatalf("after StopLoad: Loading %v (want true: part of the file is loaded), end called %v (want false)", e2.Loading(), ended)
	}
	if got := do(t, e2, s2, "GET", "key:1"); !strings.HasPrefix(got, "ERR LOADING") && !strings.Contains(got, "LOADING") {
		t.Fatalf("GET after a stopped load = %s, want LOADING", got)
	}
	e2.StopLoad() // a second call does nothing
}

// TestShutdownDropsScheduledSave: SHUTDOWN while a BGSAVE SCHEDULE waits
// gives the scheduled save up with the running one, so that the policy
// check of the cycle that runs the shutdown does not start it (a writer
// left running at exit, and ShutdownSave would skip it).
func TestShutdownDropsScheduledSave(t *testing.T) {
	stopped := 0
	e, clock := newEngine(t, Options{Persistence: Persistence{Dir: t.TempDir(), Shutdown: func() { stopped++ }}})
	s := NewSession(proto.RESP, nil)
	for i := range 3000 {
		do(t, e, s, "SET", fmt.Sprintf("k%d", i), strconv.Itoa(i))
	}
	if got := do(t, e, s, "BGSAVE"); got != "+Background saving started" {
		t.Fatalf("BGSAVE: %s", got)
	}
	if got := do(t, e, s, "BGSAVE", "SCHEDULE"); got != "+Background saving scheduled" {
		t.Fatalf("BGSAVE SCHEDULE: %s", got)
	}
	in := []byte("*2\r\n$8\r\nSHUTDOWN\r\n$6\r\nNOSAVE\r\n")
	if _, out, closeConn := e.ServeStream(s, in, nil); len(out) != 0 || !closeConn || stopped != 1 {
		t.Fatalf("SHUTDOWN NOSAVE: reply %q, close %v, stopped %d", out, closeConn, stopped)
	}
	clock.Advance(200 * time.Millisecond)
	e.Tick(1)
	if e.Saving() {
		finishSave(t, e)
		t.Fatal("the scheduled BGSAVE began after SHUTDOWN")
	}
	// Another client's BGSAVE in the same cycle is refused: it would
	// outlive the server (ShutdownSave skips a shutdown SHUTDOWN began).
	s2 := NewSession(proto.RESP, nil)
	if got := do(t, e, s2, "BGSAVE"); !strings.Contains(got, "shutting down") || e.Saving() {
		if e.Saving() {
			finishSave(t, e)
		}
		t.Fatalf("BGSAVE after SHUTDOWN: %s, want it refused", got)
	}
}
