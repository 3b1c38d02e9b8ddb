package engine

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/rdb"
	"github.com/goblin-kv/goblin/snapshot"
	"github.com/goblin-kv/goblin/store"
)

// TestFullSyncLoadsInBulkMode: a full resynchronisation loads the
// primary's snapshot with the databases in the store's bulk-load mode, as
// the load at start does, a database the snapshot creates included; a
// sync that completes ends the mode and starts the collapse into huge
// pages (snapshot.ReadCollapseStats), and one given up part-way (the link
// lost or a key refused: EndFullSync(false); a promotion, SetReplica(false)
// after the link's Unfollow; a new FULLRESYNC before the end) ends it without a collapse and leaves the
// databases serving.
func TestFullSyncLoadsInBulkMode(t *testing.T) {
	for _, end := range []string{"completed", "abandoned", "promoted", "resynced"} {
		t.Run(end, func(t *testing.T) {
			e, _ := newEngine(t, Options{Replica: ReplicaOptions{Control: &fakeLink{}}})
			c := e.Open(proto.RESP, nil)
			do(t, e, c, "REPLICAOF", "primary", "6379")
			before := snapshot.ReadCollapseStats()
			e.BeginFullSync()
			if e.dbs[0] == nil || !e.dbs[0].BulkLoading() {
				t.Fatal("database 0 is not in bulk-load mode after BeginFullSync")
			}
			loadSyncKeys(t, e, 0, 100_000) // ~11 MB: chunks beyond the arena's Go-heap ones
			e.Reserve(3, 10)
			loadSyncKeys(t, e, 3, 10)
			for _, db := range []int{0, 3} {
				if !e.dbs[db].BulkLoading() {
					t.Fatalf("database %d is not in bulk-load mode while the sync loads", db)
				}
			}
			switch end {
			case "completed":
				e.EndFullSync(true)
			case "abandoned":
				e.EndFullSync(false)
			case "promoted":
				// REPLICAOF NO ONE waits for the load's end, as Redis's
				// (LOADING); a won cluster election does not.
				if got := do(t, e, c, "REPLICAOF", "NO", "ONE"); got != "-"+txtLoading {
					t.Fatalf("REPLICAOF NO ONE during the load: %s", got)
				}
				e.ClusterUnfollow()
			case "resynced":
				e.BeginFullSync()
				for _, db := range []int{0, 3} {
					if !e.dbs[db].BulkLoading() {
						t.Fatalf("database %d is not in bulk-load mode in the second sync", db)
					}
				}
				if st := snapshot.ReadCollapseStats(); st.Started != before.Started {
					t.Fatalf("a sync given up for another started a collapse: %+v, before %+v", st, before)
				}
				loadSyncKeys(t, e, 0, 10)
				e.EndFullSync(false)
			}
			for i, st := range e.dbs {
				if st != nil && st.BulkLoading() {
					t.Fatalf("database %d is still in bulk-load mode after a sync %s", i, end)
				}
			}
			st := snapshot.ReadCollapseStats()
			if end != "completed" {
				if st.Started != before.Started {
					t.Fatalf("a sync %s started a collapse: %+v, before %+v", end, st, before)
				}
			} else {
				testkit.Eventually(t, 20*time.Second, "the collapse after a completed sync to end", func() (bool, string) {
					st = snapshot.ReadCollapseStats()
					return st.Started == before.Started+1 && st.Running == 0, fmt.Sprintf("collapse counts %+v (started before: %d)", st, before.Started)
				})
				if st.Collapsed+st.Failed == before.Collapsed+before.Failed {
					t.Fatalf("the collapse after a completed sync tried no region: %+v, before %+v", st, before)
				}
			}
			// The databases serve what was loaded, and take writes once
			// the replica is promoted.
			if end == "promoted" {
				if got := do(t, e, c, "SET", "k7", "new"); got != "+OK" {
					t.Fatalf("SET after REPLICAOF NO ONE mid-sync: %s", got)
				}
				if got := do(t, e, c, "GET", "k7"); got != "$new" {
					t.Fatalf("GET after the SET: %s", got)
				}
				return
			}
			if got := do(t, e, c, "GET", "k7"); got != "$"+syncValue(7) {
				t.Fatalf("GET k7 after a sync %s: %.40s", end, got)
			}
		})
	}
}

// syncValue is loadSyncKeys' value for key i: 100 bytes.
func syncValue(i int) string {
	v := strconv.Itoa(i)
	return v + string(bytes.Repeat([]byte("v"), 100-len(v)))
}

// loadSyncKeys loads keys k0..k(n-1) into database db as a full
// resynchronisation's LoadEntry.
func loadSyncKeys(t *testing.T, e *Engine, db, n int) {
	t.Helper()
	en := rdb.Entry{DB: db, Expiry: rdb.NoExpiry, Freq: -1, Idle: -1}
	for i := range n {
		en.Key = []byte("k" + strconv.Itoa(i))
		en.Value = rdb.Value{Kind: rdb.KindString, Str: []byte(syncValue(i))}
		if err := e.LoadEntry(&en); err != nil {
			t.Fatalf("LoadEntry %s into database %d: %v", en.Key, db, err)
		}
	}
}

// TestNoSaveDuringFullSync: while a replica loads its primary's snapshot,
// and after it gave one up part-way until a sync completes, no save
// writes the databases: the save policy (after a writable replica's
// write) starts none, SAVE and BGSAVE refuse with the reason, INFO says
// goblin_rdb_saves_held:1, and a SHUTDOWN (the command, or SIGTERM's
// ShutdownSave) exits without one; the last whole snapshot stays, byte for
// byte. A sync that completes, or a promotion (REPLICAOF NO ONE, a won
// cluster election), lets saves resume; a background save running when a
// sync begins stops, keeping the last whole file.
func TestNoSaveDuringFullSync(t *testing.T) {
	held := func(t *testing.T, e *Engine, c *Session, want string) {
		t.Helper()
		if got := infoField(t, e, c, "goblin_rdb_saves_held"); got != want {
			t.Fatalf("goblin_rdb_saves_held:%s, want %s", got, want)
		}
	}
	// start returns a writable replica with a whole snapshot of 5 keys
	// saved in dir, and that file's bytes.
	start := func(t *testing.T, dir string) (*Engine, *store.FakeClock, *Session, []byte) {
		e, clock := newEngine(t, Options{Replica: ReplicaOptions{Control: &fakeLink{}},
			Persistence: Persistence{Dir: dir, Save: []SavePoint{{1, 1}}, Shutdown: func() {}}})
		c := e.Open(proto.RESP, nil)
		for i := range 5 {
			do(t, e, c, "SET", "whole"+strconv.Itoa(i), "v")
		}
		if got := do(t, e, c, "SAVE"); got != "+OK" {
			t.Fatalf("SAVE: %s", got)
		}
		file, err := os.ReadFile(e.RDBPath())
		if err != nil {
			t.Fatal(err)
		}
		do(t, e, c, "REPLICAOF", "primary", "6379")
		e.SetReplicaReadOnly(false)
		return e, clock, c, file
	}
	for _, stage := range []string{"loading", "given up", "given up, SHUTDOWN SAVE"} {
		t.Run(stage, func(t *testing.T) {
			dir := t.TempDir()
			e, clock, c, file := start(t, dir)
			e.BeginFullSync()
			loadSyncKeys(t, e, 0, 1000)
			if stage != "loading" {
				e.EndFullSync(false)
				for _, cmd := range []string{"SAVE", "BGSAVE"} {
					if got := do(t, e, c, cmd); !strings.HasPrefix(got, "-ERR not saving: the databases hold part of the primary's snapshot") {
						t.Fatalf("%s after a given-up sync: %s", cmd, got)
					}
				}
				if got := do(t, e, c, "SET", "written", "1"); got != "+OK" {
					t.Fatalf("SET on the writable replica: %s", got)
				}
				held(t, e, c, "1")
			}
			clock.Advance(3 * time.Second)
			e.Tick(1)
			if e.Saving() {
				t.Fatal("the save policy started a save of part of the primary's snapshot")
			}
			if stage == "given up, SHUTDOWN SAVE" {
				s := NewSession(proto.RESP, nil)
				if _, out, closeConn := e.ServeStream(s, []byte("*2\r\n$8\r\nSHUTDOWN\r\n$4\r\nSAVE\r\n"), nil); len(out) != 0 || !closeConn {
					t.Fatalf("SHUTDOWN SAVE: reply %q, close %v; want the server to stop", out, closeConn)
				}
			} else if err := e.ShutdownSave(); err != nil {
				t.Fatal(err)
			}
			if got, err := os.ReadFile(e.RDBPath()); err != nil || !bytes.Equal(got, file) {
				t.Fatalf("the last whole snapshot changed (%d bytes, was %d; %v)", len(got), len(file), err)
			}
		})
	}
	for _, end := range []string{"completed", "REPLICAOF NO ONE", "cluster election"} {
		t.Run("saves after "+end, func(t *testing.T) {
			e, clock, c, _ := start(t, t.TempDir())
			e.BeginFullSync()
			loadSyncKeys(t, e, 0, 10)
			e.EndFullSync(false)
			switch end {
			case "completed":
				e.BeginFullSync()
				loadSyncKeys(t, e, 0, 1000)
				e.EndFullSync(true)
				do(t, e, c, "SET", "written", "1")
			case "REPLICAOF NO ONE":
				do(t, e, c, "REPLICAOF", "NO", "ONE")
				do(t, e, c, "SET", "written", "1")
			case "cluster election":
				e.ClusterUnfollow()
				do(t, e, c, "SET", "written", "1")
			}
			held(t, e, c, "0")
			clock.Advance(3 * time.Second)
			e.Tick(1)
			if !e.Saving() {
				t.Fatalf("after %s the save policy does not save", end)
			}
			finishSave(t, e)
			if got := do(t, e, c, "SAVE"); got != "+OK" {
				t.Fatalf("SAVE after %s: %s", end, got)
			}
		})
	}
	t.Run("a running BGSAVE stops", func(t *testing.T) {
		e, _, c, file := start(t, t.TempDir())
		for i := range 20000 {
			do(t, e, c, "SET", "more"+strconv.Itoa(i), "v")
		}
		if got := do(t, e, c, "BGSAVE"); got != "+Background saving started" {
			t.Fatalf("BGSAVE: %s", got)
		}
		e.BeginFullSync()
		if e.Saving() {
			t.Fatal("a background save goes on through a full resynchronisation's flush")
		}
		if got, err := os.ReadFile(e.RDBPath()); err != nil || !bytes.Equal(got, file) {
			t.Fatalf("the last whole snapshot changed (%d bytes, was %d; %v)", len(got), len(file), err)
		}
		e.EndFullSync(true)
	})
}
