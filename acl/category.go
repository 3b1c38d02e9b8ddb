package acl

import (
	"fmt"
	"strings"
)

// Category is a set of ACL command categories, one bit each, in the order
// Redis 7.0 lists them (ACL CAT).
type Category uint32

// The categories of Redis 7.0.
const (
	CatKeyspace Category = 1 << iota
	CatRead
	CatWrite
	CatSet
	CatSortedSet
	CatList
	CatHash
	CatString
	CatBitmap
	CatHyperLogLog
	CatGeo
	CatStream
	CatPubSub
	CatAdmin
	CatFast
	CatSlow
	CatBlocking
	CatDangerous
	CatConnection
	CatTransaction
	CatScripting
)

var categoryNames = [...]string{"keyspace", "read", "write", "set", "sortedset", "list", "hash",
	"string", "bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow",
	"blocking", "dangerous", "connection", "transaction", "scripting"}

// CategoryNames returns the category names without the '@', in ACL CAT's
// order. The slice is shared: do not modify it.
func CategoryNames() []string { return categoryNames[:] }

// CategoryByName returns the category named name ("read", any case; no
// '@').
func CategoryByName(name string) (Category, bool) {
	for i, n := range categoryNames {
		if strings.EqualFold(n, name) {
			return 1 << i, true
		}
	}
	return 0, false
}

// Names returns the names of the categories in c, in ACL CAT's order.
func (c Category) Names() []string {
	var out []string
	for i, n := range categoryNames {
		if c&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// Command is what the acl package needs to know of one command: the
// engine builds a list of them from its command table and hands it to
// NewTable.
type Command struct {
	// Name is the command's name, in lower case ("get"); a subcommand
	// has its own name only ("list" under "client").
	Name string
	// Categories are the command's ACL categories (COMMAND INFO's).
	Categories Category
	// NoAuth marks a command every user may run whatever its rules
	// (Redis's no_auth flag: AUTH, HELLO).
	NoAuth bool
	// Subcommands are a container's subcommands (CONFIG GET...).
	Subcommands []Command
}

// Table is the command table the rules refer to. Each command and each
// subcommand gets an ID, 0 up, in the order NewTable was given them (a
// container before its subcommands); the engine keeps that ID beside its
// own command record and passes it to User.Allowed. A Table is read-only
// once made and may be shared.
type Table struct {
	names  []string // full names ("config|get") by ID
	cats   []Category
	parent []int32 // -1 for a top-level command
	subs   [][]int32
	noAuth []uint64 // bitmap by ID
	byName map[string]int32
	words  int // bitmap words a selector needs
}

// NewTable numbers cmds and their subcommands. It fails on an empty or
// repeated name.
func NewTable(cmds []Command) (*Table, error) {
	t := &Table{byName: map[string]int32{}}
	var add func(c *Command, parent int32, prefix string) error
	add = func(c *Command, parent int32, prefix string) error {
		name := strings.ToLower(c.Name)
		if name == "" || strings.ContainsAny(name, "| \t\r\n") {
			return fmt.Errorf("acl: bad command name %q", prefix+c.Name)
		}
		full := prefix + name
		if _, dup := t.byName[full]; dup {
			return fmt.Errorf("acl: command %q twice in the table", full)
		}
		id := int32(len(t.names))
		t.names = append(t.names, full)
		t.cats = append(t.cats, c.Categories)
		t.parent = append(t.parent, parent)
		t.subs = append(t.subs, nil)
		t.byName[full] = id
		if parent >= 0 {
			t.subs[parent] = append(t.subs[parent], id)
		}
		if c.NoAuth {
			for int(id)/64 >= len(t.noAuth) {
				t.noAuth = append(t.noAuth, 0)
			}
			t.noAuth[id/64] |= 1 << (id % 64)
		}
		if parent < 0 {
			for i := range c.Subcommands {
				if err := add(&c.Subcommands[i], id, full+"|"); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for i := range cmds {
		if err := add(&cmds[i], -1, ""); err != nil {
			return nil, err
		}
	}
	t.words = (len(t.names) + 63) / 64
	for len(t.noAuth) < t.words {
		t.noAuth = append(t.noAuth, 0)
	}
	return t, nil
}

// MustTable is NewTable for a table known to be good; it panics on error.
func MustTable(cmds []Command) *Table {
	t, err := NewTable(cmds)
	if err != nil {
		panic(err)
	}
	return t
}

// Len returns the number of commands and subcommands.
func (t *Table) Len() int { return len(t.names) }

// ID returns the ID of the command or subcommand named name ("get",
// "config|get"; any case).
func (t *Table) ID(name string) (int, bool) {
	id, ok := t.byName[name]
	if !ok {
		id, ok = t.byName[strings.ToLower(name)]
	}
	return int(id), ok
}

// Name returns the full name of command id ("config|get").
func (t *Table) Name(id int) string { return t.names[id] }

// Categories returns the categories of command id.
func (t *Table) Categories(id int) Category { return t.cats[id] }

// CategoryCommands returns the full names of the commands and
// subcommands in category c, in table order (ACL CAT category).
func (t *Table) CategoryCommands(c Category) []string {
	var out []string
	for id, cc := range t.cats {
		if cc&c != 0 {
			out = append(out, t.names[id])
		}
	}
	return out
}

func (t *Table) hasSubs(id int32) bool { return len(t.subs[id]) > 0 }
