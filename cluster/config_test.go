package cluster

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	idA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1"
	idB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb2"
	idC = "ccccccccccccccccccccccccccccccccccccccc3"
)

var threeNodes = `# three nodes on one host
epoch 4
myself ` + idA + `
node ` + idA + ` uds:///tmp/a.sock tcp://127.0.0.1:7001 slots 0-5460
node ` + idB + ` tcp://127.0.0.1:7002 aeron:udp?endpoint=127.0.0.1:40002 slots 5461-10922
node ` + idC + ` tcp://127.0.0.1:7003 slots 10923-16383 # the rest
`

func TestParseConfig(t *testing.T) {
	c, err := Parse([]byte(threeNodes))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Epoch != 4 || c.Myself != idA || len(c.Nodes) != 3 {
		t.Fatalf("parsed %+v", c)
	}
	a := c.Nodes[0]
	if a.Host != "127.0.0.1" || a.Port != 7001 || a.Endpoint() != "127.0.0.1:7001" || len(a.Addrs) != 2 ||
		len(a.Slots) != 1 || a.Slots[0] != (Range{0, 5460}) {
		t.Fatalf("node a %+v", a)
	}
	again, err := Parse(c.Format())
	if err != nil || string(again.Format()) != string(c.Format()) {
		t.Fatalf("Format does not round-trip: %v\n%s", err, c.Format())
	}
}

// TestConfigErrors: each mistake is refused with a message naming it.
func TestConfigErrors(t *testing.T) {
	node := func(id, rest string) string { return "node " + id + " tcp://127.0.0.1:7001 " + rest + "\n" }
	for _, c := range []struct{ text, want string }{
		{"myself " + idA + "\n" + node(idA, ""), `no "epoch N" line`},
		{"epoch x\n", `epoch "x" is not`},
		{"epoch 1\nepoch 2\n", `line 2: want one "epoch N"`},
		{"epoch 1\nnodes x\n", `line 2: unknown keyword "nodes"`},
		{"epoch 1\nnode abc tcp://1.2.3.4:5\n", `node id "abc" is not 40 hexadecimal digits`},
		{"epoch 1\nnode " + idA + " uds:///x.sock\n", "has no RESP tcp://host:port address"},
		{"epoch 1\nnode " + idA + " tcp://127.0.0.1:7001?proto=sbe\n", "has no RESP tcp://host:port address"},
		{"epoch 1\nnode " + idA + " bogus://x\n", `address "bogus://x"`},
		{"epoch 1\n" + node(idA, "slots 5-3"), `slot range "5-3"`},
		{"epoch 1\n" + node(idA, "slots 16384"), `slot range "16384"`},
		{"epoch 1\n" + node(idA, "slots 0-10") + node(idB, "slots 10"), "slot 10 is given to node aaaaaaaa and node bbbbbbbb"},
		{"epoch 1\nmyself " + idC + "\n" + node(idA, ""), "is not one of the nodes"},
		{"epoch 1\n" + node(idA, ""), `no "myself ID" line`},
		{"epoch 1\nmyself " + idA + "\n" + node(idA, "") + node(idA, ""), "listed twice"},
	} {
		cfg, err := Parse([]byte(c.text))
		if err == nil {
			err = cfg.Validate()
		}
		if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.text, err, c.want)
		}
	}
}

func TestLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cluster.conf")
	if err := os.WriteFile(path, []byte(threeNodes), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path, idB)
	if err != nil || c.Myself != idB {
		t.Fatalf("Load with myself override: %v, %+v", err, c)
	}
	if _, err := Load(path, idC[:39]+"0"); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Load of an unknown myself: %v (want the path in the error)", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "none"), ""); !errors.Is(err, ErrConfig) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Load of a missing file: %v", err)
	}
}

func TestStateSetSlot(t *testing.T) {
	c, _ := Parse([]byte(threeNodes))
	s, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	if s.Owner(0) != 0 || s.Owner(5461) != 1 || s.Covered() != Slots || s.Me() != 0 {
		t.Fatal("owners not as the file says")
	}
	for _, bad := range []struct {
		slot          uint16
		how, id, want string
	}{
		{5461, "MIGRATING", idB, "not the owner"},
		{1, "IMPORTING", idB, "already the owner"},
		{1, "MIGRATING", idA, "to myself"},
		{1, "MIGRATING", strings.Repeat("d", 40), "don't know about node"},
		{1, "BOGUS", idB, "Invalid CLUSTER SETSLOT action"},
	} {
		if err := s.SetSlot(bad.slot, bad.how, bad.id); !errors.Is(err, ErrSetSlot) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("SETSLOT %d %s: %v, want %q", bad.slot, bad.how, err, bad.want)
		}
	}
	if err := s.SetSlot(1, "MIGRATING", idB); err != nil {
		t.Fatal(err)
	}
	if to, ok := s.Migrating(1); !ok || to != 1 || s.Open() != 1 {
		t.Fatalf("slot 1 migrating to %d %v, open %d", to, ok, s.Open())
	}
	if err := s.SetSlot(6000, "IMPORTING", idB); err != nil {
		t.Fatal(err)
	}
	if from, ok := s.Importing(6000); !ok || from != 1 || s.Open() != 2 {
		t.Fatalf("slot 6000 importing from %d %v", from, ok)
	}
	if err := s.SetSlot(1, "NODE", idB); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Migrating(1); ok || s.Owner(1) != 1 || s.Open() != 1 || s.Epoch() != 5 {
		t.Fatalf("after NODE: owner %d, open %d, epoch %d", s.Owner(1), s.Open(), s.Epoch())
	}
	if rs := s.Ranges(0); len(rs) != 2 || rs[0] != (Range{0, 0}) || rs[1] != (Range{2, 5460}) {
		t.Fatalf("ranges of a: %v", rs)
	}
	// The unedited file is now stale; the saved map, one epoch up, is not.
	if err := s.Reload(c); err == nil || !strings.Contains(err.Error(), "older than this node's 5: slots were moved") {
		t.Fatalf("reload of the stale file: %v", err)
	}
	saved, err := Parse(s.Config().Format())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(saved); err != nil || s.Owner(1) != 1 {
		t.Fatalf("reload of the saved map: %v, owner %d", err, s.Owner(1))
	}
	if _, ok := s.Importing(6000); !ok {
		t.Fatal("reload dropped an open IMPORTING slot")
	}
	if err := s.SetSlot(6000, "STABLE", ""); err != nil || s.Open() != 0 {
		t.Fatalf("STABLE: %v, open %d", err, s.Open())
	}
}
