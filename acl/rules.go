package acl

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strings"

	"github.com/goblin-kv/goblin/command"
)

// RuleError is a rule that could not be applied; its text is Redis's,
// which ACL SETUSER puts after "Error in ACL SETUSER modifier '...': ".
type RuleError uint8

// The rule errors, in the words of Redis 7.0's ACLSetUserStringError.
const (
	ErrWrongFormat      RuleError = iota // an op that fits no other error
	ErrUnknownName                       // +nosuch, +@nosuch
	ErrSyntax                            // an unknown op, a pattern with spaces, %~x
	ErrKeysAfterAll                      // ~x after allkeys
	ErrChannelsAfterAll                  // &x after allchannels
	ErrNoSuchPassword                    // <pass or !hash the user does not have
	ErrBadHash                           // #hash that is not 64 lower-case hex digits
	ErrDuplicateUser                     // a user twice in an aclfile
	ErrFirstArgOfSub                     // +config|get|x
)

var ruleErrorText = [...]string{
	ErrWrongFormat:      "Wrong format",
	ErrUnknownName:      "Unknown command or category name in ACL",
	ErrSyntax:           "Syntax error",
	ErrKeysAfterAll:     "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns",
	ErrChannelsAfterAll: "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels",
	ErrNoSuchPassword:   "The password you are trying to remove from the user does not exist",
	ErrBadHash:          "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters",
	ErrDuplicateUser:    "Duplicate user found. A user can only be defined once in config files",
	ErrFirstArgOfSub:    "Allowing first-arg of a subcommand is not supported",
}

func (e RuleError) Error() string { return ruleErrorText[e] }

// ModifierError is a rule ACL SETUSER refused: its Error is Redis's reply
// without the "ERR " prefix.
type ModifierError struct {
	Modifier string // the rule as given (a selector as merged: "(+get ~x)")
	Err      RuleError
}

func (e *ModifierError) Error() string {
	return "Error in ACL SETUSER modifier '" + e.Modifier + "': " + e.Err.Error()
}

func (e *ModifierError) Unwrap() error { return e.Err }

// UnmatchedError is a selector whose '(' has no ')'.
type UnmatchedError struct{ Start string }

func (e *UnmatchedError) Error() string {
	return "Unmatched parenthesis in acl selector starting at '" + e.Start + "'."
}

// errBadUsername is Redis's reply to a user name with a space or a NUL.
type usernameError struct{}

func (usernameError) Error() string { return "Usernames can't contain spaces or null characters" }

// ErrBadUsername is returned for a user name with white space or a NUL.
var ErrBadUsername error = usernameError{}

// KeyFlags say what a command does with a key: read it, write it, or both.
// A key with neither (TYPE, EXISTS look at no value) passes any pattern.
type KeyFlags uint8

// The key permissions (%R~, %W~; ~ is both).
const (
	KeyRead  KeyFlags = 1 << iota // the key spec's access flag
	KeyWrite                      // the key spec's insert, update or delete flag
	keyAll   = KeyRead | KeyWrite
)

type keyPattern struct {
	pattern []byte
	flags   KeyFlags
	// prefix is the length of the pattern's literal start (before any
	// of * ? [ \); a key that does not start with it cannot match, which
	// is the usual answer when a user has many patterns.
	prefix int
	// prefixStar marks a pattern that is its literal prefix and one *
	// ("tenant:*"): any key longer than the prefix that starts with it
	// matches, with no glob to run.
	prefixStar bool
	// head and headMask are the prefix's bytes as a little-endian word
	// and the mask of those bytes, for a prefix of at most 8 bytes: a key
	// of 8 bytes or more is tested with one load, xor and and, no call.
	head, headMask uint64
}

func newKeyPattern(p string, flags KeyFlags) keyPattern {
	n := strings.IndexAny(p, "*?[\\")
	if n < 0 {
		n = len(p)
	}
	kp := keyPattern{pattern: []byte(p), flags: flags, prefix: n, prefixStar: n == len(p)-1 && p[n] == '*'}
	if n <= 8 {
		var b [8]byte
		copy(b[:], p[:n])
		kp.head = binary.LittleEndian.Uint64(b[:])
		kp.headMask = ^uint64(0) >> (64 - 8*n) // n 0: a shift by 64 gives 0, and every key passes
	}
	return kp
}

const (
	selAllKeys uint8 = 1 << iota
	selAllChannels
	selAllCommands
)

// selector is one set of permissions: the root one every user has and
// those added with (...).
type selector struct {
	flags uint8
	// future is Redis's reserved command bit: set by +@all, cleared only
	// by -@all, it decides whether the rules start with +@all.
	future bool
	cmds   []uint64 // allowed command IDs
	// allowed is cmds with every command for selAllCommands and the
	// commands every user may run (Table's noAuth), made by User.settle:
	// the fast checks' bitmap.
	allowed   []uint64
	firstArgs [][]string   // by ID: first arguments allowed of a denied command (nil: none)
	keys      []keyPattern // unless selAllKeys
	channels  [][]byte     // unless selAllChannels
}

func newSelector(t *Table, allChannels bool) selector {
	s := selector{cmds: make([]uint64, t.words)}
	if allChannels {
		s.flags |= selAllChannels
	}
	return s
}

func (s *selector) clone() selector {
	c := *s
	c.cmds = append([]uint64(nil), s.cmds...)
	c.allowed = nil // settle remakes it
	if s.firstArgs != nil {
		c.firstArgs = make([][]string, len(s.firstArgs))
		for i, a := range s.firstArgs {
			c.firstArgs[i] = append([]string(nil), a...)
		}
	}
	c.keys = append([]keyPattern(nil), s.keys...)
	c.channels = append([][]byte(nil), s.channels...)
	return c
}

func (s *selector) bit(id int32) bool { return s.cmds[id/64]&(1<<(id%64)) != 0 }

func (s *selector) setBit(id int32, allow bool) {
	if allow {
		s.cmds[id/64] |= 1 << (id % 64)
	} else {
		s.cmds[id/64] &^= 1 << (id % 64)
		s.flags &^= selAllCommands
	}
}

// changePerm is Redis's ACLChangeSelectorPerm: a command and all its
// subcommands, forgetting the command's allowed first arguments.
func (s *selector) changePerm(t *Table, id int32, allow bool) {
	s.setBit(id, allow)
	if s.firstArgs != nil {
		s.firstArgs[id] = nil
	}
	for _, sub := range t.subs[id] {
		s.setBit(sub, allow)
	}
}

func (s *selector) setCategory(t *Table, c command.Categories, allow bool) {
	for id, cc := range t.cats {
		if cc&c != 0 {
			s.changePerm(t, int32(id), allow)
		}
	}
}

func (s *selector) setAll(allow bool) {
	var w uint64
	if allow {
		w = ^uint64(0)
		s.flags |= selAllCommands
	} else {
		s.flags &^= selAllCommands
	}
	for i := range s.cmds {
		s.cmds[i] = w
	}
	s.future = allow
	s.firstArgs = nil
}

func hasSpace(b string) bool {
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case ' ', '\t', '\n', '\v', '\f', '\r', 0:
			return true
		}
	}
	return false
}

// apply is Redis's ACLSetSelector: one rule about commands, keys or
// channels.
func (s *selector) apply(t *Table, op string) error {
	switch {
	case strings.EqualFold(op, "allkeys") || op == "~*":
		s.flags |= selAllKeys
		s.keys = nil
	case strings.EqualFold(op, "resetkeys"):
		s.flags &^= selAllKeys
		s.keys = nil
	case strings.EqualFold(op, "allchannels") || op == "&*":
		s.flags |= selAllChannels
		s.channels = nil
	case strings.EqualFold(op, "resetchannels"):
		s.flags &^= selAllChannels
		s.channels = nil
	case strings.EqualFold(op, "allcommands") || strings.EqualFold(op, "+@all"):
		s.setAll(true)
	case strings.EqualFold(op, "nocommands") || strings.EqualFold(op, "-@all"):
		s.setAll(false)
	case op != "" && (op[0] == '~' || op[0] == '%'):
		if s.flags&selAllKeys != 0 {
			return ErrKeysAfterAll
		}
		var flags KeyFlags
		off := 1
		if op[0] == '%' {
			for ; off < len(op); off++ {
				c := op[off] &^ 0x20
				switch {
				case c == 'R' && flags&KeyRead == 0:
					flags |= KeyRead
					continue
				case c == 'W' && flags&KeyWrite == 0:
					flags |= KeyWrite
					continue
				case op[off] == '~':
					off++
				default:
					return ErrSyntax
				}
				break
			}
			if flags == 0 {
				return ErrSyntax
			}
		} else {
			flags = keyAll
		}
		p := op[off:]
		if hasSpace(p) {
			return ErrSyntax
		}
		for i := range s.keys {
			if string(s.keys[i].pattern) == p {
				s.keys[i].flags |= flags
				return nil
			}
		}
		s.keys = append(s.keys, newKeyPattern(p, flags))
	case op != "" && op[0] == '&':
		if s.flags&selAllChannels != 0 {
			return ErrChannelsAfterAll
		}
		p := op[1:]
		if hasSpace(p) {
			return ErrSyntax
		}
		for _, c := range s.channels {
			if string(c) == p {
				return nil
			}
		}
		s.channels = append(s.channels, []byte(p))
	case len(op) > 1 && (op[0] == '+' || op[0] == '-') && op[1] == '@':
		c, ok := categoryByName(op[2:])
		if !ok {
			return ErrUnknownName
		}
		s.setCategory(t, c, op[0] == '+')
	case len(op) > 0 && op[0] == '+':
		return s.allow(t, op[1:])
	case len(op) > 0 && op[0] == '-':
		id, ok := t.ID(op[1:])
		if !ok {
			return ErrUnknownName
		}
		s.changePerm(t, int32(id), false)
	default:
		return ErrSyntax
	}
	return nil
}

// allow is +name: a command, a subcommand, or a first argument of a
// command without subcommands (+select|0).
func (s *selector) allow(t *Table, name string) error {
	if id, ok := t.ID(name); ok {
		s.changePerm(t, int32(id), true)
		return nil
	}
	i := strings.LastIndexByte(name, '|')
	if i < 0 {
		return ErrUnknownName
	}
	base, ok := t.ID(name[:i])
	if !ok {
		return ErrUnknownName
	}
	if t.parent[base] >= 0 {
		return ErrFirstArgOfSub
	}
	arg := name[i+1:]
	if arg == "" {
		return ErrSyntax
	}
	if t.hasSubs(int32(base)) {
		return ErrUnknownName
	}
	if s.firstArgs == nil {
		s.firstArgs = make([][]string, len(t.names))
	}
	for _, a := range s.firstArgs[base] {
		if strings.EqualFold(a, arg) {
			return nil
		}
	}
	s.firstArgs[base] = append(s.firstArgs[base], arg)
	return nil
}

// hashPassword returns the SHA-256 of pass in lower-case hex, the form
// users keep passwords in.
func hashPassword(pass string) string {
	sum := sha256.Sum256([]byte(pass))
	return hex.EncodeToString(sum[:])
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if (c < 'a' || c > 'f') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// splitArgs splits a selector's inside at white space, honouring
// double and single quotes as Redis's sdssplitargs does for the common
// cases (no escapes).
func splitArgs(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
			i++
		}
		if i == len(s) {
			break
		}
		var b strings.Builder
		for i < len(s) && s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r' {
			if q := s[i]; q == '"' || q == '\'' {
				j := strings.IndexByte(s[i+1:], q)
				if j >= 0 {
					b.WriteString(s[i+1 : i+1+j])
					i += j + 2
					continue
				}
			}
			b.WriteByte(s[i])
			i++
		}
		out = append(out, b.String())
	}
	return out
}

// mergeSelectors joins the arguments of a selector written over several
// arguments ("(+get", "~x)") into one, as Redis's
// ACLMergeSelectorArguments does.
func mergeSelectors(ops []string) ([]string, error) {
	out := make([]string, 0, len(ops))
	open := -1
	var sel string
	for j, op := range ops {
		if op != "" && op[0] == '(' && op[len(op)-1] != ')' {
			sel, open = op, j
			continue
		}
		if open >= 0 {
			sel += " " + op
			if op != "" && op[len(op)-1] == ')' {
				open = -1
				out = append(out, sel)
			}
			continue
		}
		out = append(out, op)
	}
	if open >= 0 {
		return nil, &UnmatchedError{Start: ops[open]}
	}
	return out, nil
}
