package member

import (
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSaveSyncsDurableState: nodes.conf is written on every change, but
// waited for (fsync) only when what must survive a crash changed — the
// epochs, the vote, the node's id — or on CLUSTER SAVECONFIG, as Redis
// 7.0 does: the SETSLOT NODE of every slot of a reshard writes the file
// without an fsync.
func TestSaveSyncsDurableState(t *testing.T) {
	dir := t.TempDir()
	c := newTestCluster(t, dir)
	defer c.Close()
	conf := filepath.Join(dir, "nodes.conf")
	step := func(what string, wantSync bool, do func() error) {
		t.Helper()
		before := c.fsyncs
		if err := do(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if synced := c.fsyncs > before; synced != wantSync {
			t.Errorf("%s: fsynced %v, want %v", what, synced, wantSync)
		}
	}
	step("ADDSLOTS 0-99", false, func() error {
		slots := make([]int, 100)
		for i := range slots {
			slots[i] = i
		}
		return c.AddSlots(slots)
	})
	step("SETSLOT 5 NODE myself", false, func() error { return c.SetSlotNode(5, c.myself.ID(), false) })
	step("BUMPEPOCH", true, func() error { c.BumpEpoch(); return nil })
	step("DELSLOTS 7", false, func() error { return c.DelSlots([]int{7}) })
	step("SAVECONFIG", true, c.SaveConfig)
	b, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), " connected 0-6 8-99\n") || !strings.Contains(string(b), "vars currentEpoch 1 ") {
		t.Errorf("nodes.conf after the steps:\n%s", b)
	}
}

// BenchmarkSetSlotNode: CLUSTER SETSLOT NODE of a slot to its owner, the
// last command of every slot a reshard moves (nodes.conf written, the
// engine's State rebuilt, a PONG to every peer), on a node owning the
// first third of the slots.
func BenchmarkSetSlotNode(b *testing.B) {
	c := newTestCluster(b, b.TempDir())
	defer c.Close()
	var slots []int
	for s := range 16384 / 3 {
		slots = append(slots, s)
	}
	if err := c.AddSlots(slots); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.SetSlotNode(3, c.myself.ID(), false); err != nil {
			b.Fatal(err)
		}
	}
}

// TestConfWriterOrder: writes handed to the goroutine land in order, the
// newest last; a writeNow is not overwritten by an older pending write;
// close writes what is pending.
func TestConfWriterOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nodes.conf")
	w := newConfWriter(path, slog.New(slog.DiscardHandler))
	read := func() string {
		b, _ := os.ReadFile(path)
		return string(b)
	}
	for i := range 200 {
		w.writeLater([]byte("later " + strconv.Itoa(i)))
		if i%50 == 49 {
			if err := w.writeNow([]byte("now "+strconv.Itoa(i)), i%100 == 99); err != nil {
				t.Fatal(err)
			}
			if got := read(); got != "now "+strconv.Itoa(i) {
				t.Fatalf("after writeNow %d the file holds %q", i, got)
			}
		}
	}
	w.writeLater([]byte("last"))
	w.close()
	if got := read(); got != "last" {
		t.Fatalf("after close the file holds %q, want the last write", got)
	}
	w.writeLater([]byte("after close"))
	if got := read(); got != "after close" {
		t.Fatalf("a write after close: the file holds %q", got)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
}
