package request

import (
	"fmt"
	"strings"
)

var (
	byName      = map[string]Op{} // "get", "client|list"
	parsedArgs  [NumOps][]Arg
	subcommands [NumOps][]Op
	ordered     []Op // top-level commands, then each container's subcommands after it
	lists       [NumOps]specLists
)

// specLists are a spec's name lists, made once so replies built from them
// allocate nothing.
type specLists struct {
	flags, acl, tips []string
	keyFlags         [][]string
}

func init() {
	for i := range specs {
		s := &specs[i]
		if s.Name == "" {
			continue
		}
		s.op = Op(i)
		if s.ReqKeys == (ArgRange{}) && (len(s.Keys) == 0 || s.ReqKeys.Step == 0) {
			s.ReqKeys = NoArgs
		}
		if _, dup := byName[s.Name]; dup {
			panic(fmt.Sprintf("request: command %q twice in the table", s.Name))
		}
		byName[s.Name] = Op(i)
		args, err := ParseSyntax(s.Syntax)
		if err != nil {
			panic(err)
		}
		parsedArgs[i] = args
		l := &lists[i]
		l.flags, l.acl, l.tips = s.Flags.Names(), s.ACL.Names(), strings.Fields(s.Tips)
		for _, k := range s.Keys {
			l.keyFlags = append(l.keyFlags, k.Flags.Names())
		}
		if s.Container != OpNone {
			subcommands[s.Container] = append(subcommands[s.Container], Op(i))
		}
	}
	for i := range specs {
		if specs[i].Name != "" && specs[i].Container == OpNone {
			ordered = append(ordered, Op(i))
			ordered = append(ordered, subcommands[i]...)
		}
	}
}

// Lookup returns op's spec, or nil for an Op goblin does not know.
func Lookup(op Op) *Spec {
	if s := &specs[op]; s.Name != "" {
		return s
	}
	return nil
}

// Name returns op's lower-case Redis name ("get", "client|list"), or "" for
// an unknown Op.
func Name(op Op) string { return specs[op].Name }

// maxName bounds the length of a command name (and of "container|sub").
const maxName = 40

// ByName returns the top-level command named name (any case), or OpNone.
// It does not allocate.
func ByName(name []byte) Op {
	var buf [maxName]byte
	n, ok := lower(buf[:], name)
	if !ok {
		return OpNone
	}
	op := byName[string(buf[:n])]
	if specs[op].Container != OpNone {
		return OpNone // "client|list" is not a name a client sends
	}
	return op
}

// Subcommand returns container's subcommand named sub (any case), or
// OpNone. It does not allocate.
func Subcommand(container Op, sub []byte) Op {
	var buf [maxName]byte
	n := copy(buf[:], specs[container].Name)
	if n == len(buf) {
		return OpNone
	}
	buf[n] = '|'
	m, ok := lower(buf[n+1:], sub)
	if !ok {
		return OpNone
	}
	op := byName[string(buf[:n+1+m])]
	if specs[op].Container != container {
		return OpNone
	}
	return op
}

// ByFullName returns the command or subcommand named name ("get",
// "client|list"; any case), or OpNone.
func ByFullName(name string) Op {
	var buf [maxName]byte
	n, ok := lower(buf[:], []byte(name))
	if !ok {
		return OpNone
	}
	return byName[string(buf[:n])]
}

func lower(dst, name []byte) (int, bool) {
	if len(name) > len(dst) {
		return 0, false
	}
	for i, c := range name {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst[i] = c
	}
	return len(name), true
}

// Subcommands returns a container's subcommands in table order.
func Subcommands(container Op) []Op { return subcommands[container] }

// All returns every command, each top-level command followed by its
// subcommands, in table order. The slice is shared: do not modify it.
func All() []Op { return ordered }

// Count returns the number of top-level commands (COMMAND COUNT).
func Count() int {
	n := 0
	for _, op := range ordered {
		if specs[op].Container == OpNone {
			n++
		}
	}
	return n
}

// Args returns the parsed Syntax of op (COMMAND DOCS's arguments).
func (s *Spec) Args() []Arg { return parsedArgs[s.op] }

// Usage returns the command's usage line: "SET key value [NX|XX] ...",
// "CLIENT SETNAME connection-name".
func (s *Spec) Usage() string {
	u := s.DisplayName()
	if a := Usage(parsedArgs[s.op]); a != "" {
		u += " " + a
	}
	return u
}

// DisplayName returns the name as typed, in upper case: "GET",
// "CLIENT SETNAME".
func (s *Spec) DisplayName() string {
	b := []byte(s.Name)
	for i, c := range b {
		switch {
		case c == '|':
			b[i] = ' '
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// EqualFold reports whether b equals the lower-case ASCII word s, ignoring
// case. It does not allocate.
func EqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// FlagNames returns the command's flags' names, in COMMAND INFO's order.
func (s *Spec) FlagNames() []string { return lists[s.op].flags }

// CategoryNames returns the command's ACL categories ("@read"...).
func (s *Spec) CategoryNames() []string { return lists[s.op].acl }

// TipList returns the command's tips.
func (s *Spec) TipList() []string { return lists[s.op].tips }

// KeyFlagNames returns the flags' names of key spec i.
func (s *Spec) KeyFlagNames(i int) []string { return lists[s.op].keyFlags[i] }
