package command

import (
	"encoding/binary"
	"fmt"
	"strings"
)

var (
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
	seen := map[string]bool{}
	for i := range specs {
		s := &specs[i]
		if s.Name == "" {
			continue
		}
		s.op = Op(i)
		if s.ReqKeys == (ArgRange{}) && (len(s.Keys) == 0 || s.ReqKeys.Step == 0) {
			s.ReqKeys = NoArgs
		}
		if seen[s.Name] {
			panic(fmt.Sprintf("request: command %q twice in the table", s.Name))
		}
		seen[s.Name] = true
		addName(Op(i))
		args, err := ParseSyntax(s.Syntax)
		if err != nil {
			panic(err)
		}
		if Op(i) == OpSort || Op(i) == OpSortRO {
			sortArgKeySpecs(args)
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

// Names are found through an open-addressed table keyed by the container
// (OpNone for a top-level command) and the name packed into two words in
// lower case, so a lookup folds and packs the name once and compares two
// words with each candidate: no copy, no allocation, no Go map. Every name
// a client types (a command, or a subcommand after its container) is at
// most 16 bytes.
const (
	nameBits = 10
	nameMask = 1<<nameBits - 1
	maxName  = 16
)

type nameKey struct {
	lo, hi    uint64
	n         uint8
	container Op
}

type nameSlot struct {
	key nameKey
	op  Op
}

var names [1 << nameBits]nameSlot

// pack folds name to lower case into a key; ok is false for a name longer
// than any goblin knows.
func pack(container Op, name []byte) (k nameKey, ok bool) {
	if len(name) > maxName || len(name) == 0 {
		return k, false
	}
	k.lo = lowerWord(load8(name))
	if len(name) > 8 {
		k.hi = lowerWord(load8(name[8:]))
	}
	k.n, k.container = uint8(len(name)), container
	return k, true
}

// load8 reads up to the first 8 bytes of b as a little-endian word, zero
// above len(b). A name decoded from a request usually has more of the
// request after it, so when b's capacity allows, the word is read in one
// load (the bytes past len(b) are in b's own array) and masked.
func load8(b []byte) uint64 {
	switch n := len(b); {
	case n >= 8:
		return binary.LittleEndian.Uint64(b)
	case cap(b) >= 8:
		return binary.LittleEndian.Uint64(b[:8]) & (1<<(8*n) - 1)
	}
	var buf [8]byte
	copy(buf[:], b)
	return binary.LittleEndian.Uint64(buf[:])
}

// lowerWord lowers the ASCII capitals among eight bytes at once: a byte's
// high bit marks it as 'A'..'Z' (at least 'A', not above 'Z', high bit
// clear), and that bit shifted to 0x20 is what lowers it.
func lowerWord(w uint64) uint64 {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	seven := w &^ high
	atLeastA := seven + (0x80-'A')*ones
	aboveZ := seven + (0x80-'Z'-1)*ones
	capital := atLeastA &^ aboveZ &^ w & high
	return w | capital>>2
}

func (k *nameKey) slot() uint64 {
	h := (k.lo ^ k.hi*0x9e3779b97f4a7c15 ^ uint64(k.n)<<56 ^ uint64(k.container)<<48) * 0xff51afd7ed558ccd
	return h >> (64 - nameBits)
}

func addName(op Op) {
	name := specs[op].Name
	if c := specs[op].Container; c != OpNone {
		name = name[len(specs[c].Name)+1:]
	}
	k, ok := pack(specs[op].Container, []byte(name))
	if !ok {
		longNames = append(longNames, op)
		return
	}
	for i := k.slot(); ; i++ {
		if s := &names[i&nameMask]; s.op == OpNone {
			*s = nameSlot{k, op}
			return
		}
	}
}

// longNames are the few names longer than maxName (CLUSTER
// COUNT-FAILURE-REPORTS), found by comparison off the packed table's path.
var longNames []Op

func find(container Op, name []byte) Op {
	k, ok := pack(container, name)
	if !ok {
		return findLong(container, name)
	}
	for i := k.slot(); ; i++ {
		s := &names[i&nameMask]
		if s.op == OpNone || s.key == k {
			return s.op
		}
	}
}

// ByName returns the top-level command named name (any case), or OpNone.
// It does not allocate.
func ByName(name []byte) Op {
	// GET, SET and PING, the commonest requests, skip the hash table: with
	// 0x20 set in every byte, only the letters' two cases give these
	// words, so the test is exact.
	switch len(name) {
	case 3:
		switch uint32(name[0]) | uint32(name[1])<<8 | uint32(name[2])<<16 | 0x202020 {
		case 'g' | 'e'<<8 | 't'<<16:
			return OpGet
		case 's' | 'e'<<8 | 't'<<16:
			return OpSet
		}
	case 4:
		if binary.LittleEndian.Uint32(name)|0x20202020 == 'p'|'i'<<8|'n'<<16|'g'<<24 {
			return OpPing
		}
	}
	return find(OpNone, name)
}

// Subcommand returns container's subcommand named sub (any case), or
// OpNone. It does not allocate.
func Subcommand(container Op, sub []byte) Op {
	if container == OpNone {
		return OpNone
	}
	return find(container, sub)
}

// ByFullName returns the command or subcommand named name ("get",
// "client|list"; any case), or OpNone.
func ByFullName(name string) Op {
	c, sub, ok := strings.Cut(name, "|")
	if !ok {
		return ByName([]byte(name))
	}
	return Subcommand(ByName([]byte(c)), []byte(sub))
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

// findLong finds a name longer than maxName among longNames.
func findLong(container Op, name []byte) Op {
	for _, op := range longNames {
		s := &specs[op]
		n := s.Name
		if s.Container != OpNone {
			n = n[len(specs[s.Container].Name)+1:]
		}
		if s.Container == container && len(n) == len(name) && strings.EqualFold(n, string(name)) {
			return op
		}
	}
	return OpNone
}
