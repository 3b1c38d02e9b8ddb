package engine

import (
	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/internal/glob"
	"github.com/goblin-kv/goblin/proto/argv"
)

// The COMMAND family answers from the command table (package command): the
// metadata is Redis 7.0's for the same commands, so redis-cli's hints and
// cluster clients' key extraction work as they do against Redis.

// commandInfo answers COMMAND and COMMAND INFO [name ...].
func (e *Engine) commandInfo(_ *Session, r *command.Request) {
	e.begin(command.Array)
	if len(r.Args) == 0 {
		for _, op := range command.All() {
			if command.Lookup(op).Container == command.OpNone {
				e.addCommandInfo(op)
			}
		}
	}
	for _, name := range r.Args {
		if op := e.lookupName(name); op != command.OpNone {
			e.addCommandInfo(op)
		} else {
			e.add(command.Nil, 0, nil)
		}
	}
	e.end()
}

// lookupName finds a command by the name COMMAND INFO and DOCS take: "get"
// or "client|list", any case.
func (e *Engine) lookupName(name []byte) command.Op {
	for i, c := range name {
		if c == '|' {
			if op := command.ByName(name[:i]); op != command.OpNone {
				return command.Subcommand(op, name[i+1:])
			}
			return command.OpNone
		}
	}
	return command.ByName(name)
}

func (e *Engine) addNames(k command.Kind, names []string) {
	e.push(k)
	for _, n := range names {
		e.add(command.Simple, 0, bs(n))
	}
	e.pop()
}

// addCommandInfo adds one command's COMMAND INFO entry: name, arity,
// flags, first key, last key, step, ACL categories, tips, key specs and
// subcommands.
func (e *Engine) addCommandInfo(op command.Op) {
	s := command.Lookup(op)
	e.push(command.Array)
	e.addBulkStr(s.Name)
	e.addInt(int64(s.Arity))
	e.addNames(command.Set, s.FlagNames())
	first, last, step := s.Legacy()
	e.addInt(int64(first))
	e.addInt(int64(last))
	e.addInt(int64(step))
	e.addNames(command.Set, s.CategoryNames())
	e.push(command.Set)
	for _, tip := range s.TipList() {
		e.addBulkStr(tip) // tips are bulk strings where flags are simple ones, as in Redis
	}
	e.pop()
	e.push(command.Set)
	for i := range s.Keys {
		k := &s.Keys[i]
		e.push(command.Map)
		if k.Notes != "" {
			e.addBulkStr("notes")
			e.addBulkStr(k.Notes)
		}
		e.addBulkStr("flags")
		e.addNames(command.Set, s.KeyFlagNames(i))
		e.addBulkStr("begin_search")
		if k.Unknown { // SORT's: "unknown" begin_search and find_keys, empty specs
			e.addUnknownSearch()
			e.addBulkStr("find_keys")
			e.addUnknownSearch()
			e.pop()
			continue
		}
		e.push(command.Map)
		e.addBulkStr("type")
		e.addBulkStr("index")
		e.addBulkStr("spec")
		e.push(command.Map)
		e.addBulkStr("index")
		e.addInt(int64(k.Index))
		e.pop()
		e.pop()
		e.addBulkStr("find_keys")
		e.push(command.Map)
		e.addBulkStr("type")
		if k.KeyNum {
			e.addBulkStr("keynum")
			e.addBulkStr("spec")
			e.push(command.Map)
			e.addBulkStr("keynumidx")
			e.addInt(int64(k.KeyNumIdx))
			e.addBulkStr("firstkey")
			e.addInt(int64(k.FirstKey))
			e.addBulkStr("keystep")
			e.addInt(int64(k.KeyStep))
		} else {
			e.addBulkStr("range")
			e.addBulkStr("spec")
			e.push(command.Map)
			e.addBulkStr("lastkey")
			e.addInt(int64(k.LastKey))
			e.addBulkStr("keystep")
			e.addInt(int64(k.KeyStep))
			e.addBulkStr("limit")
			e.addInt(int64(k.Limit))
		}
		e.pop()
		e.pop()
		e.pop()
	}
	e.pop()
	// Redis writes no subcommands as an empty set but a container's as an
	// array (RESP3 tells them apart).
	if subs := command.Subcommands(op); len(subs) == 0 {
		e.push(command.Set)
	} else {
		e.push(command.Array)
	}
	for _, sub := range command.Subcommands(op) {
		e.addCommandInfo(sub)
	}
	e.pop()
	e.pop()
}

func (e *Engine) commandCount(*Session, *command.Request) { e.integer(int64(command.Count())) }

// commandDocs answers COMMAND DOCS [name ...]: a map from each command's
// name to its documentation. Unknown names are left out, as Redis does.
func (e *Engine) commandDocs(_ *Session, r *command.Request) {
	e.begin(command.Map)
	if len(r.Args) == 0 {
		for _, op := range command.All() {
			if command.Lookup(op).Container == command.OpNone {
				e.addCommandDocs(op)
			}
		}
	}
	for _, name := range r.Args {
		if op := e.lookupName(name); op != command.OpNone {
			e.addCommandDocs(op)
		}
	}
	e.end()
}

// addCommandDocs adds name → {summary, since, group, complexity,
// arguments, subcommands}.
func (e *Engine) addCommandDocs(op command.Op) {
	s := command.Lookup(op)
	e.addBulkStr(s.Name)
	e.push(command.Map)
	e.addBulkStr("summary")
	e.addBulkStr(s.Summary)
	e.addBulkStr("since")
	e.addBulkStr(s.Since)
	e.addBulkStr("group")
	e.addBulkStr(s.Group)
	e.addBulkStr("complexity")
	e.addBulkStr(s.Complexity)
	if args := s.Args(); len(args) > 0 {
		e.addBulkStr("arguments")
		e.addArgs(args)
	}
	if subs := command.Subcommands(op); len(subs) > 0 {
		e.addBulkStr("subcommands")
		e.push(command.Map)
		for _, sub := range subs {
			e.addCommandDocs(sub)
		}
		e.pop()
	}
	e.pop()
}

func (e *Engine) addArgs(args []command.Arg) {
	e.push(command.Array)
	for i := range args {
		a := &args[i]
		e.push(command.Map)
		e.addBulkStr("name")
		e.addBulkStr(a.Name)
		e.addBulkStr("type")
		e.addBulkStr(a.Type)
		if a.Type == "key" || a.Type == "pattern" && a.KeySpec > 0 { // SORT's patterns name keys too
			e.addBulkStr("key_spec_index")
			e.addInt(int64(a.KeySpec))
		}
		if a.Token != "" {
			e.addBulkStr("token")
			e.addBulkStr(a.Token)
		}
		if a.Optional || a.Multiple || a.MultipleToken {
			e.addBulkStr("flags")
			e.push(command.Set)
			if a.Optional {
				e.addSimpleStr("optional")
			}
			if a.Multiple {
				e.addSimpleStr("multiple")
			}
			if a.MultipleToken {
				e.addSimpleStr("multiple_token")
			}
			e.pop()
		}
		if len(a.Args) > 0 {
			e.addBulkStr("arguments")
			e.addArgs(a.Args)
		}
		e.pop()
	}
	e.pop()
}

// commandList answers COMMAND LIST [FILTERBY ...]: every command and
// subcommand name, or those in an ACL category or matching a pattern
// (goblin has no modules, so FILTERBY MODULE lists nothing).
func (e *Engine) commandList(_ *Session, r *command.Request) {
	var cat command.Categories
	if r.Amount == argv.ListACLCat {
		cat, _ = command.CategoryByName(string(r.Value))
	}
	e.begin(command.Array)
	for _, op := range command.All() {
		s := command.Lookup(op)
		switch r.Amount {
		case argv.ListModule:
			continue
		case argv.ListACLCat:
			if s.ACL&cat == 0 {
				continue
			}
		case argv.ListMatch:
			if !glob.MatchFold(r.Value, bs(s.Name)) {
				continue
			}
		}
		e.addBulkStr(s.Name)
	}
	e.end()
}

// commandGetKeys answers COMMAND GETKEYS and GETKEYSANDFLAGS command
// [arg ...] from the command's key specs.
func (e *Engine) commandGetKeys(_ *Session, r *command.Request) {
	args := r.Args
	op := command.ByName(args[0])
	if op != command.OpNone && len(args) > 1 && len(command.Subcommands(op)) > 0 {
		op = command.Subcommand(op, args[1])
	}
	s := command.Lookup(op)
	switch {
	case s == nil:
		e.errText(command.Err, "ERR Invalid command specified")
		return
	case len(s.Keys) == 0:
		e.errText(command.Err, "ERR The command has no key arguments")
		return
	case (s.Arity > 0 && s.Arity != len(args)) || len(args) < -s.Arity:
		e.errText(command.Err, "ERR Invalid number of arguments specified for command")
		return
	}
	if op == command.OpSort || op == command.OpSortRO {
		e.sortGetKeys(r.Op == command.OpCommandGetKeys, op, args)
		return
	}
	e.ints = e.ints[:0]
	e.begin(command.Array)
	for i := range s.Keys {
		start := len(e.ints)
		var ok bool
		if e.ints, ok = s.Keys[i].Positions(e.ints, len(args), func(i int) []byte { return args[i] }); !ok {
			e.resetResult()
			e.errText(command.Err, "ERR Invalid arguments specified for command")
			return
		}
		for _, pos := range e.ints[start:] {
			if r.Op == command.OpCommandGetKeys {
				e.addBulk(args[pos])
				continue
			}
			e.push(command.Array)
			e.addBulk(args[pos])
			e.addNames(command.Set, resolvedKeyFlags(s, i, args))
			e.pop()
		}
	}
	if len(e.ints) == 0 { // a keynum command given no keys
		e.resetResult()
		e.errText(command.Err, "ERR Invalid arguments specified for command")
		return
	}
	e.end()
}

// The key flags a variable_flags key spec resolves to for one call, as
// Redis's GETKEYSANDFLAGS reports them.
var (
	flagsOverwrite  = []string{"OW", "update"}
	flagsReadWrite  = []string{"RW", "access", "update"}
	flagsReadAccess = []string{"RO", "access"}
)

// resolvedKeyFlags returns the flags of s's key spec i for the call args
// (the command's name first): a spec marked variable_flags says what this
// call does. SET without GET overwrites, with GET (anywhere among its
// options) reads too; BITFIELD is read-only while it has only whole GET
// and OVERFLOW operations.
func resolvedKeyFlags(s *command.Spec, i int, args [][]byte) []string {
	if s.Keys[i].Flags&command.KeyVariableFlags == 0 {
		return s.KeyFlagNames(i)
	}
	switch s.Op() {
	case command.OpSet:
		for _, a := range args[min(3, len(args)):] {
			if command.EqualFold(a, "get") {
				return flagsReadWrite
			}
		}
		return flagsOverwrite
	case command.OpBitField:
		for j := 2; j < len(args); j++ {
			left := len(args) - j - 1
			switch {
			case command.EqualFold(args[j], "get") && left >= 2:
				j += 2
			case command.EqualFold(args[j], "overflow") && left >= 1:
				j++
			default:
				return flagsReadWrite
			}
		}
		return flagsReadAccess
	}
	return s.KeyFlagNames(i)
}

// help answers the HELP subcommand of a container (CLIENT HELP, CONFIG
// HELP, COMMAND HELP...) with one line per subcommand, from the table.
func (e *Engine) help(_ *Session, r *command.Request) {
	container := command.Lookup(r.Op).Container
	c := command.Lookup(container)
	e.begin(command.Array)
	e.scratch = append(e.scratch, c.DisplayName()...)
	e.scratch = append(e.scratch, " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"...)
	e.fixes = append(e.fixes, fixup{item: 0, start: 0, end: len(e.scratch)})
	e.add(command.Simple, 0, nil)
	prefix := len(c.DisplayName()) + 1
	for _, op := range command.Subcommands(container) {
		s := command.Lookup(op)
		e.addCopy(command.Simple, []byte(s.Usage()[prefix:]))
		e.addCopy(command.Simple, append([]byte("    "), s.Summary...))
	}
	e.end()
}

// addUnknownSearch appends an "unknown" begin_search or find_keys map.
func (e *Engine) addUnknownSearch() {
	e.push(command.Map)
	e.addBulkStr("type")
	e.addBulkStr("unknown")
	e.addBulkStr("spec")
	e.push(command.Map)
	e.pop()
	e.pop()
}

// sortGetKeys answers COMMAND GETKEYS and GETKEYSANDFLAGS for SORT and
// SORT_RO, whose keys no key spec finds: the sorted key, then SORT's
// STORE destination (command.SortKeys), as Redis's sortGetKeys gives them.
func (e *Engine) sortGetKeys(namesOnly bool, op command.Op, args [][]byte) {
	e.begin(command.Array)
	e.getKey(namesOnly, args[1], flagsReadAccess)
	if op == command.OpSort {
		if i := command.SortKeys(args); i > 0 {
			e.getKey(namesOnly, args[i], flagsOverwrite)
		}
	}
	e.end()
}

func (e *Engine) getKey(namesOnly bool, key []byte, flags []string) {
	if namesOnly {
		e.addBulk(key)
		return
	}
	e.push(command.Array)
	e.addBulk(key)
	e.addNames(command.Set, flags)
	e.pop()
}
