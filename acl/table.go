package acl

import (
	"fmt"
	"strings"
	"sync"

	"github.com/goblin-kv/goblin/command"
)

// Command is what the acl package needs to know of one command: the
// engine builds a list of them from its command table and hands it to
// NewTable.
type Command struct {
	// Name is the command's name, in lower case ("get"); a subcommand
	// has its own name only ("list" under "client").
	Name string
	// Categories are the command's ACL categories (COMMAND INFO's).
	Categories command.Categories
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
	cats   []command.Categories
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
func (t *Table) Categories(id int) command.Categories { return t.cats[id] }

// CategoryCommands returns the full names of the commands and
// subcommands in category c, in table order (ACL CAT category).
func (t *Table) CategoryCommands(c command.Categories) []string {
	var out []string
	for id, cc := range t.cats {
		if cc&c != 0 {
			out = append(out, t.names[id])
		}
	}
	return out
}

func (t *Table) hasSubs(id int32) bool { return len(t.subs[id]) > 0 }

// categoryByName returns the category named name (any case, no '@'), as
// the rules +@name and -@name and ACL CAT name take it.
func categoryByName(name string) (command.Categories, bool) {
	for i, n := range command.ACLCategories() {
		if strings.EqualFold(n, name) {
			return 1 << i, true
		}
	}
	return 0, false
}

var commandTable = sync.OnceValue(func() *Table { return MustTable(commandList()) })

// commandList describes package command's table as Commands.
func commandList() []Command {
	var cmds []Command
	for _, op := range command.All() {
		s := command.Lookup(op)
		if s.Container != command.OpNone {
			continue
		}
		c := Command{Name: s.Name, Categories: s.ACL, NoAuth: s.Flags&command.NoAuthFlag != 0}
		for _, sub := range command.Subcommands(op) {
			ss := command.Lookup(sub)
			_, short, _ := strings.Cut(ss.Name, "|")
			c.Subcommands = append(c.Subcommands, Command{Name: short, Categories: ss.ACL, NoAuth: ss.Flags&command.NoAuthFlag != 0})
		}
		cmds = append(cmds, c)
	}
	return cmds
}

// CommandTable returns the Table of goblin's commands, built once from
// package command's table (names, ACL categories, the no_auth flag): its
// IDs follow command.All's order, each container before its
// subcommands.
func CommandTable() *Table { return commandTable() }
