package command

import (
	"bytes"
	"sort"
	"testing"

	"github.com/goblin-kv/goblin/request"
)

// notInRedis70 are the commands goblin answers that Redis 7.0 does not
// have (they came with Redis 7.2): COMMAND INFO on Redis gives nil for
// them. docs/commands.md lists them.
var notInRedis70 = map[string]bool{"client|setinfo": true}

// pendingContainers are containers whose subcommands goblin does not all
// answer yet, so their COMMAND INFO cannot match Redis's.
var pendingContainers = map[string]bool{"client": true, "config": true}

// normCommandInfo makes COMMAND INFO replies comparable: Redis lists a
// container's subcommands in hash order, and some key specs carry "notes"
// (prose goblin does not copy).
func normCommandInfo(n *node) {
	for i := range n.elems {
		normInfoEntry(&n.elems[i])
	}
}

func normInfoEntry(e *node) {
	if e.null || len(e.elems) != 10 {
		return
	}
	specs := &e.elems[8]
	for i := range specs.elems {
		m := &specs.elems[i]
		var kept []node
		for j := 0; j+1 < len(m.elems); j += 2 {
			if string(m.elems[j].str) != "notes" {
				kept = append(kept, m.elems[j], m.elems[j+1])
			}
		}
		if m.typ == '*' { // RESP2: the map is a flat array
			m.elems = kept
		} else {
			m.elems = kept
		}
	}
	subs := &e.elems[9]
	for i := range subs.elems {
		normInfoEntry(&subs.elems[i])
	}
	sort.Slice(subs.elems, func(i, j int) bool {
		return bytes.Compare(subs.elems[i].elems[0].str, subs.elems[j].elems[0].str) < 0
	})
}

// TestCommandInfoAgainstRedis compares COMMAND INFO of every command in
// goblin's table with Redis 7.0's: name, arity, flags, key range, ACL
// categories, tips, key specs and subcommands, in RESP2 and RESP3.
func TestCommandInfoAgainstRedis(t *testing.T) {
	var script []oracleCase
	for _, op := range request.All() {
		s := request.Lookup(op)
		if notInRedis70[s.Name] || pendingContainers[s.Name] {
			continue
		}
		script = append(script, oracleCase{args: []string{"COMMAND", "INFO", s.Name}, norm: normCommandInfo})
	}
	script = append(script, oracleCase{args: []string{"COMMAND", "INFO", "get", "nosuchcommand", "CLIENT|GETNAME"}, norm: normCommandInfo})
	compareWithRedis(t, script, false)
}

// TestGoblinOnlyCommands: the commands listed as newer than Redis 7.0 are
// really unknown to it (so the list in the docs stays honest).
func TestGoblinOnlyCommands(t *testing.T) {
	var script []oracleCase
	for name := range notInRedis70 {
		script = append(script, oracleCase{args: []string{"COMMAND", "INFO", name}})
	}
	for i, r := range runRedis(t, script, false) {
		if string(r) != "*1\r\n$-1\r\n" {
			t.Errorf("redis knows %q: %q", script[i].args[2], r)
		}
	}
}

// TestCommandCountAgrees: COMMAND COUNT is the number of entries COMMAND
// lists, and COMMAND LIST names every command and subcommand once.
func TestCommandCountAgrees(t *testing.T) {
	e, _ := newEngine(t, Options{})
	s := NewSession(0, nil)
	count := do(t, e, s, "COMMAND", "COUNT")
	all := runGoblin(t, cases([]string{"COMMAND"}, []string{"COMMAND", "LIST"}), false, Options{})
	n, _, err := parseNode(all[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := ":" + itoa(len(n.elems)); count != want {
		t.Fatalf("COMMAND COUNT %s, COMMAND lists %d", count, len(n.elems))
	}
	l, _, _ := parseNode(all[1])
	if len(l.elems) != len(request.All()) {
		t.Fatalf("COMMAND LIST has %d names, the table %d", len(l.elems), len(request.All()))
	}
}

func itoa(n int) string { return string(bytesInt(n)) }

func bytesInt(n int) []byte {
	var b []byte
	if n == 0 {
		return []byte("0")
	}
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return b
}
