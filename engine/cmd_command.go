package engine

import (
	"github.com/goblin-kv/goblin/glob"
	"github.com/goblin-kv/goblin/proto/argv"
	"github.com/goblin-kv/goblin/reply"
	"github.com/goblin-kv/goblin/request"
)

// The COMMAND family answers from the command table (package request): the
// metadata is Redis 7.0's for the same commands, so redis-cli's hints and
// cluster clients' key extraction work as they do against Redis.

// commandInfo answers COMMAND and COMMAND INFO [name ...].
func (e *Engine) commandInfo(_ *Session, r *request.Request) {
	e.begin(reply.Array)
	if len(r.Args) == 0 {
		for _, op := range request.All() {
			if request.Lookup(op).Container == request.OpNone {
				e.addCommandInfo(op)
			}
		}
	}
	for _, name := range r.Args {
		if op := e.lookupName(name); op != request.OpNone {
			e.addCommandInfo(op)
		} else {
			e.add(reply.Nil, 0, nil)
		}
	}
	e.end()
}

// lookupName finds a command by the name COMMAND INFO and DOCS take: "get"
// or "client|list", any case.
func (e *Engine) lookupName(name []byte) request.Op {
	for i, c := range name {
		if c == '|' {
			if op := request.ByName(name[:i]); op != request.OpNone {
				return request.Subcommand(op, name[i+1:])
			}
			return request.OpNone
		}
	}
	return request.ByName(name)
}

func (e *Engine) addNames(k reply.Kind, names []string) {
	e.push(k)
	for _, n := range names {
		e.add(reply.Simple, 0, bs(n))
	}
	e.pop()
}

// addCommandInfo adds one command's COMMAND INFO entry: name, arity,
// flags, first key, last key, step, ACL categories, tips, key specs and
// subcommands.
func (e *Engine) addCommandInfo(op request.Op) {
	s := request.Lookup(op)
	e.push(reply.Array)
	e.addBulkStr(s.Name)
	e.addInt(int64(s.Arity))
	e.addNames(reply.Set, s.FlagNames())
	first, last, step := s.Legacy()
	e.addInt(int64(first))
	e.addInt(int64(last))
	e.addInt(int64(step))
	e.addNames(reply.Set, s.CategoryNames())
	e.push(reply.Set)
	for _, tip := range s.TipList() {
		e.addBulkStr(tip) // tips are bulk strings where flags are simple ones, as in Redis
	}
	e.pop()
	e.push(reply.Set)
	for i := range s.Keys {
		k := &s.Keys[i]
		e.push(reply.Map)
		e.addBulkStr("flags")
		e.addNames(reply.Set, s.KeyFlagNames(i))
		e.addBulkStr("begin_search")
		e.push(reply.Map)
		e.addBulkStr("type")
		e.addBulkStr("index")
		e.addBulkStr("spec")
		e.push(reply.Map)
		e.addBulkStr("index")
		e.addInt(int64(k.Index))
		e.pop()
		e.pop()
		e.addBulkStr("find_keys")
		e.push(reply.Map)
		e.addBulkStr("type")
		e.addBulkStr("range")
		e.addBulkStr("spec")
		e.push(reply.Map)
		e.addBulkStr("lastkey")
		e.addInt(int64(k.LastKey))
		e.addBulkStr("keystep")
		e.addInt(int64(k.KeyStep))
		e.addBulkStr("limit")
		e.addInt(int64(k.Limit))
		e.pop()
		e.pop()
		e.pop()
	}
	e.pop()
	// Redis writes no subcommands as an empty set but a container's as an
	// array (RESP3 tells them apart).
	if subs := request.Subcommands(op); len(subs) == 0 {
		e.push(reply.Set)
	} else {
		e.push(reply.Array)
	}
	for _, sub := range request.Subcommands(op) {
		e.addCommandInfo(sub)
	}
	e.pop()
	e.pop()
}

func (e *Engine) commandCount(*Session, *request.Request) { e.integer(int64(request.Count())) }

// commandDocs answers COMMAND DOCS [name ...]: a map from each command's
// name to its documentation. Unknown names are left out, as Redis does.
func (e *Engine) commandDocs(_ *Session, r *request.Request) {
	e.begin(reply.Map)
	if len(r.Args) == 0 {
		for _, op := range request.All() {
			if request.Lookup(op).Container == request.OpNone {
				e.addCommandDocs(op)
			}
		}
	}
	for _, name := range r.Args {
		if op := e.lookupName(name); op != request.OpNone {
			e.addCommandDocs(op)
		}
	}
	e.end()
}

// addCommandDocs adds name → {summary, since, group, complexity,
// arguments, subcommands}.
func (e *Engine) addCommandDocs(op request.Op) {
	s := request.Lookup(op)
	e.addBulkStr(s.Name)
	e.push(reply.Map)
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
	if subs := request.Subcommands(op); len(subs) > 0 {
		e.addBulkStr("subcommands")
		e.push(reply.Map)
		for _, sub := range subs {
			e.addCommandDocs(sub)
		}
		e.pop()
	}
	e.pop()
}

func (e *Engine) addArgs(args []request.Arg) {
	e.push(reply.Array)
	for i := range args {
		a := &args[i]
		e.push(reply.Map)
		e.addBulkStr("name")
		e.addBulkStr(a.Name)
		e.addBulkStr("type")
		e.addBulkStr(a.Type)
		if a.Type == "key" {
			e.addBulkStr("key_spec_index")
			e.addInt(int64(a.KeySpec))
		}
		if a.Token != "" {
			e.addBulkStr("token")
			e.addBulkStr(a.Token)
		}
		if a.Optional || a.Multiple || a.MultipleToken {
			e.addBulkStr("flags")
			e.push(reply.Set)
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
func (e *Engine) commandList(_ *Session, r *request.Request) {
	var cat request.Categories
	if r.Amount == argv.ListACLCat {
		cat, _ = request.CategoryByName(string(r.Value))
	}
	e.begin(reply.Array)
	for _, op := range request.All() {
		s := request.Lookup(op)
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
func (e *Engine) commandGetKeys(_ *Session, r *request.Request) {
	args := r.Args
	op := request.ByName(args[0])
	if op != request.OpNone && len(args) > 1 && len(request.Subcommands(op)) > 0 {
		op = request.Subcommand(op, args[1])
	}
	s := request.Lookup(op)
	switch {
	case s == nil:
		e.errText(reply.Err, "ERR Invalid command specified")
		return
	case len(s.Keys) == 0:
		e.errText(reply.Err, "ERR The command has no key arguments")
		return
	case (s.Arity > 0 && s.Arity != len(args)) || len(args) < -s.Arity:
		e.errText(reply.Err, "ERR Invalid number of arguments specified for command")
		return
	}
	e.ints = e.ints[:0]
	e.begin(reply.Array)
	for i := range s.Keys {
		start := len(e.ints)
		var ok bool
		if e.ints, ok = s.Keys[i].Positions(e.ints, len(args)); !ok {
			e.resetResult()
			e.errText(reply.Err, "ERR Invalid arguments specified for command")
			return
		}
		for _, pos := range e.ints[start:] {
			if r.Op == request.OpCommandGetKeys {
				e.addBulk(args[pos])
				continue
			}
			e.push(reply.Array)
			e.addBulk(args[pos])
			e.addNames(reply.Set, resolvedKeyFlags(s, i, args))
			e.pop()
		}
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
func resolvedKeyFlags(s *request.Spec, i int, args [][]byte) []string {
	if s.Keys[i].Flags&request.KeyVariableFlags == 0 {
		return s.KeyFlagNames(i)
	}
	switch s.Op() {
	case request.OpSet:
		for _, a := range args[min(3, len(args)):] {
			if request.EqualFold(a, "get") {
				return flagsReadWrite
			}
		}
		return flagsOverwrite
	case request.OpBitField:
		for j := 2; j < len(args); j++ {
			left := len(args) - j - 1
			switch {
			case request.EqualFold(args[j], "get") && left >= 2:
				j += 2
			case request.EqualFold(args[j], "overflow") && left >= 1:
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
func (e *Engine) help(_ *Session, r *request.Request) {
	container := request.Lookup(r.Op).Container
	c := request.Lookup(container)
	e.begin(reply.Array)
	e.scratch = append(e.scratch, c.DisplayName()...)
	e.scratch = append(e.scratch, " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"...)
	e.fixes = append(e.fixes, fixup{item: 0, start: 0, end: len(e.scratch)})
	e.add(reply.Simple, 0, nil)
	prefix := len(c.DisplayName()) + 1
	for _, op := range request.Subcommands(container) {
		s := request.Lookup(op)
		e.addCopy(reply.Simple, []byte(s.Usage()[prefix:]))
		e.addCopy(reply.Simple, append([]byte("    "), s.Summary...))
	}
	e.end()
}
