package acl

import (
	"crypto/subtle"
	"strings"
)

const (
	userOn uint8 = 1 << iota
	userOff
	userNoPass
	userSkipSanitize
	userSanitize
)

var userFlagNames = [...]string{"on", "off", "nopass", "skip-sanitize-payload", "sanitize-payload"}

// User is one ACL user: its flags, its passwords (SHA-256 hex) and its
// selectors, the first of which is the root one the plain rules change.
// A User is changed only through Users.SetUser, which builds a new User,
// so a User a connection holds stays consistent; the engine, which owns
// the Users, is the only goroutine that reads or replaces them.
type User struct {
	name      string
	table     *Table
	flags     uint8
	passwords []string
	sels      []selector // sels[0] is the root selector
	// all is set when the root selector allows every command, key and
	// channel: Allowed's first and usually only test.
	all bool
	// cmds is the union of the selectors' allowed bitmaps: a command
	// that names no key and no channel is allowed when its bit is set
	// (AllowsCommand).
	cmds []uint64
	// keys says how AllowsKey checks a key once cmds allows the command;
	// rootKeys are sels[0].keys for keysRoot.
	keys     uint8
	rootKeys []keyPattern
	// checks are the owner's KeyChecks (Checks), emptied by settle.
	checks KeyChecks
}

// User.keys: with one selector, whose allowed bitmap is then cmds,
// either any key passes or the key must match its patterns; with
// several, each selector allowing the command is asked in turn.
const (
	keysSelectors uint8 = iota
	keysAll
	keysRoot
)

func newUser(name string, t *Table) *User {
	u := &User{name: name, table: t, flags: userOff}
	u.sels = []selector{newSelector(t, false)}
	return u
}

func (u *User) clone() *User {
	c := *u
	c.passwords = append([]string(nil), u.passwords...)
	c.sels = make([]selector, len(u.sels))
	for i := range u.sels {
		c.sels[i] = u.sels[i].clone()
	}
	return &c
}

// AllowsAll reports whether the user may run every command on every key
// and channel: the permission check's first test, which the engine makes
// itself before calling Allowed so an unrestricted user costs one load
// and one branch. The zero User allows nothing.
func (u *User) AllowsAll() bool { return u.all }

// Name returns the user's name.
func (u *User) Name() string { return u.name }

// Enabled reports whether the user is on (may authenticate).
func (u *User) Enabled() bool { return u.flags&userOn != 0 }

// NoPass reports whether any password authenticates the user.
func (u *User) NoPass() bool { return u.flags&userNoPass != 0 }

// CheckPassword reports whether pass authenticates the user: it is on
// and either nopass or one of its passwords is pass. The comparison of
// hashes takes constant time.
func (u *User) CheckPassword(pass string) bool {
	if u.flags&userOn == 0 {
		return false
	}
	if u.flags&userNoPass != 0 {
		return true
	}
	h := hashPassword(pass)
	ok := 0
	for _, p := range u.passwords {
		ok |= subtle.ConstantTimeCompare([]byte(p), []byte(h))
	}
	return ok == 1
}

// Passwords returns the SHA-256 hex hashes of the user's passwords, in
// the order they were added.
func (u *User) Passwords() []string { return append([]string(nil), u.passwords...) }

// applyOp is Redis's ACLSetUser: one rule, user-level or for the root
// selector.
func (u *User) applyOp(op string, allChannels bool) error {
	switch {
	case strings.EqualFold(op, "on"):
		u.flags = u.flags&^userOff | userOn
	case strings.EqualFold(op, "off"):
		u.flags = u.flags&^userOn | userOff
	case strings.EqualFold(op, "skip-sanitize-payload"):
		u.flags = u.flags&^userSanitize | userSkipSanitize
	case strings.EqualFold(op, "sanitize-payload"):
		u.flags = u.flags&^userSkipSanitize | userSanitize
	case strings.EqualFold(op, "nopass"):
		u.flags |= userNoPass
		u.passwords = nil
	case strings.EqualFold(op, "resetpass"):
		u.flags &^= userNoPass
		u.passwords = nil
	case op != "" && op[0] == '>':
		u.addPassword(hashPassword(op[1:]))
	case op != "" && op[0] == '#':
		if !validHash(op[1:]) {
			return ErrBadHash
		}
		u.addPassword(op[1:])
	case op != "" && (op[0] == '<' || op[0] == '!'):
		h := op[1:]
		if op[0] == '<' {
			h = hashPassword(h)
		} else if !validHash(h) {
			return ErrBadHash
		}
		i := indexOf(u.passwords, h)
		if i < 0 {
			return ErrNoSuchPassword
		}
		u.passwords = append(u.passwords[:i:i], u.passwords[i+1:]...)
		u.flags &^= userNoPass
	case len(op) >= 2 && op[0] == '(' && op[len(op)-1] == ')':
		s := newSelector(u.table, allChannels)
		for _, a := range splitArgs(op[1 : len(op)-1]) {
			if err := s.apply(u.table, a); err != nil {
				return err
			}
		}
		u.sels = append(u.sels, s)
	case strings.EqualFold(op, "clearselectors"):
		u.sels = u.sels[:1]
	case strings.EqualFold(op, "reset"):
		u.passwords = nil
		u.flags = userOff | userSanitize
		root := newSelector(u.table, allChannels)
		u.sels = []selector{root}
	default:
		return u.sels[0].apply(u.table, op)
	}
	return nil
}

func (u *User) addPassword(h string) {
	if indexOf(u.passwords, h) < 0 {
		u.passwords = append(u.passwords, h)
	}
	u.flags &^= userNoPass
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// settle recomputes what the permission check precomputes: each
// selector's allowed bitmap (its commands, every command for allcommands,
// and those every user may run), their union, and the shortcuts above.
// Every change to a user ends with settle.
func (u *User) settle() {
	r := &u.sels[0]
	u.all = r.flags&(selAllCommands|selAllKeys|selAllChannels) == selAllCommands|selAllKeys|selAllChannels
	u.cmds = make([]uint64, u.table.words)
	for i := range u.sels {
		s := &u.sels[i]
		s.allowed = make([]uint64, u.table.words)
		for w := range s.allowed {
			a := s.cmds[w] | u.table.noAuth[w]
			if s.flags&selAllCommands != 0 {
				a = ^uint64(0)
			}
			s.allowed[w] = a
			u.cmds[w] |= a
		}
	}
	u.keys = keysSelectors
	u.rootKeys = r.keys
	u.checks = KeyChecks{} // worked out from the rules before this change
	if len(u.sels) == 1 {
		u.keys = keysRoot
		if r.flags&selAllKeys != 0 {
			u.keys = keysAll
		}
	}
}
