package acl

import (
	"bytes"
	"encoding/binary"

	"github.com/goblin-kv/goblin/internal/glob"
)

// Reason is why a check failed, as ACL LOG names it. The order is
// Redis's: when no selector allows a command, the failure reported is
// the one with the highest Reason.
type Reason uint8

// The reasons.
const (
	ReasonNone    Reason = iota // allowed
	ReasonCommand               // the command (or subcommand) is not allowed
	ReasonKey                   // a key matches no pattern with the permission needed
	ReasonAuth                  // a failed AUTH or HELLO AUTH
	ReasonChannel               // a channel matches no channel pattern
)

var reasonNames = [...]string{"", "command", "key", "auth", "channel"}

// String returns the reason as ACL LOG prints it ("command", "key"...).
func (r Reason) String() string { return reasonNames[r] }

// Key is one key a command touches, with what the command does to it.
type Key struct {
	Name  []byte
	Flags KeyFlags
}

// Channel is one Pub/Sub channel a command publishes or subscribes to;
// Pattern marks PSUBSCRIBE's patterns, which must equal a channel rule
// exactly rather than match it.
type Channel struct {
	Name    []byte
	Pattern bool
}

// Result is the answer of a permission check: Reason is ReasonNone when
// the command may run; otherwise Index is the position, in the keys or
// channels given, of the key or channel that failed (Redis reports the
// last one no selector allowed).
type Result struct {
	Reason Reason
	Index  int
}

// OK reports whether the check passed.
func (r Result) OK() bool { return r.Reason == ReasonNone }

// Allowed checks whether the user may run command id (a Table ID; a
// subcommand's own ID) touching keys and channels. firstArg is the
// command's first argument (after the subcommand name for a
// subcommand), nil if none: it matters only for rules such as
// +select|0. Keys and channels must be in argument order.
//
// A user whose root selector allows everything costs one predictable
// branch; a user with a command bitmap and all keys costs a bit test.
// Allowed allocates nothing.
func (u *User) Allowed(id int, firstArg []byte, keys []Key, channels []Channel) Result {
	if u.all {
		return Result{}
	}
	if len(channels) == 0 && u.keys == keysAll && u.AllowsCommand(id) {
		return Result{} // one selector, all keys: its allowed bitmap is cmds
	}
	return u.check(id, firstArg, keys, channels)
}

// AllowsCommand is Allowed's fast path for a command that names no key
// and no channel: one bit test in the union of the user's selectors. It
// reports true exactly when Allowed(id, nil, nil, nil) would; false means
// ask Allowed, which also knows the first-argument rules (+select|0) and
// says why it refuses. It allocates nothing.
func (u *User) AllowsCommand(id int) bool {
	w := uint(id) / 64
	return w < uint(len(u.cmds)) && u.cmds[w]&(1<<(uint(id)%64)) != 0
}

// AllowsKey is Allowed's fast path for a command with one key and no
// channel: a bit test, then (unless the selector allows all keys) the
// key against the selector's patterns, the literal prefix first, for
// each selector until one allows both. It reports true exactly when
// Allowed(id, nil, []Key{{key, flags}}, nil) would; false means ask
// Allowed. It allocates nothing.
func (u *User) AllowsKey(id int, key []byte, flags KeyFlags) bool {
	w, bit := uint(id)/64, uint64(1)<<(uint(id)%64)
	if w >= uint(len(u.cmds)) || u.cmds[w]&bit == 0 {
		return false // no selector allows the command
	}
	switch u.keys {
	case keysAll:
		return true
	case keysRoot: // keyMatch's loop, here to save a call per request
		for i := range u.rootKeys {
			p := &u.rootKeys[i]
			if p.flags&flags != flags || len(key) < p.prefix {
				continue
			}
			if p.prefix <= 8 && len(key) >= 8 {
				if (binary.LittleEndian.Uint64(key)^p.head)&p.headMask != 0 {
					continue
				}
			} else if string(key[:p.prefix]) != string(p.pattern[:p.prefix]) {
				continue
			}
			if p.prefixStar && len(key) > p.prefix || glob.Match(p.pattern, key) {
				return true
			}
		}
		return false
	}
	for i := range u.sels {
		s := &u.sels[i]
		if s.allowed[w]&bit == 0 {
			continue
		}
		if s.flags&selAllKeys != 0 || s.keyMatch(key, flags) {
			return true
		}
	}
	return false
}

func (u *User) check(id int, firstArg []byte, keys []Key, channels []Channel) Result {
	if len(u.sels) == 1 {
		return u.sels[0].check(u.table, id, firstArg, keys, channels)
	}
	best := Result{Reason: ReasonCommand}
	for i := range u.sels {
		r := u.sels[i].check(u.table, id, firstArg, keys, channels)
		if r.Reason == ReasonNone {
			return r
		}
		if r.Reason > best.Reason || (r.Reason == best.Reason && r.Index > best.Index) {
			best = r
		}
	}
	return best
}

// check is Redis's ACLSelectorCheckCmd.
func (s *selector) check(t *Table, id int, firstArg []byte, keys []Key, channels []Channel) Result {
	if s.flags&selAllCommands == 0 {
		if uint(id) >= uint(len(t.names)) {
			return Result{Reason: ReasonCommand}
		}
		if s.cmds[id/64]&(1<<(id%64)) == 0 && t.noAuth[id/64]&(1<<(id%64)) == 0 && !s.firstArgAllowed(id, firstArg) {
			return Result{Reason: ReasonCommand}
		}
	}
	if s.flags&selAllKeys == 0 {
		for i := range keys {
			if !s.keyAllowed(&keys[i]) {
				return Result{Reason: ReasonKey, Index: i}
			}
		}
	}
	if s.flags&selAllChannels == 0 {
		for i := range channels {
			if !s.channelAllowed(&channels[i]) {
				return Result{Reason: ReasonChannel, Index: i}
			}
		}
	}
	return Result{}
}

func (s *selector) firstArgAllowed(id int, arg []byte) bool {
	if arg == nil || s.firstArgs == nil {
		return false
	}
	for _, a := range s.firstArgs[id] {
		if len(a) == len(arg) && bytes.EqualFold([]byte(a), arg) {
			return true
		}
	}
	return false
}

func (s *selector) keyAllowed(k *Key) bool { return s.keyMatch(k.Name, k.Flags) }

// keyMatch reports whether one of the selector's key patterns with
// permissions flags matches name.
func (s *selector) keyMatch(name []byte, flags KeyFlags) bool {
	for i := range s.keys {
		p := &s.keys[i]
		if p.flags&flags != flags {
			continue
		}
		if len(name) < p.prefix {
			continue
		}
		if p.prefix <= 8 && len(name) >= 8 {
			if (binary.LittleEndian.Uint64(name)^p.head)&p.headMask != 0 {
				continue
			}
		} else if string(name[:p.prefix]) != string(p.pattern[:p.prefix]) {
			continue
		}
		if p.prefixStar && len(name) > p.prefix || glob.Match(p.pattern, name) {
			return true
		}
	}
	return false
}

func (s *selector) channelAllowed(c *Channel) bool {
	for _, p := range s.channels {
		if c.Pattern {
			if bytes.Equal(p, c.Name) {
				return true
			}
		} else if glob.Match(p, c.Name) {
			return true
		}
	}
	return false
}

// AnyKey reports whether one of the user's selectors both allows command
// id with keys and may touch any key with flags: it allows all keys, or
// has the pattern "*" with those permissions. It is Redis's
// ACLUserCheckCmdWithUnrestrictedKeyAccess, which SORT asks before it
// reads keys named by its BY and GET patterns.
func (u *User) AnyKey(id int, firstArg []byte, keys []Key, flags KeyFlags) bool {
	if u.all {
		return true
	}
	for i := range u.sels {
		s := &u.sels[i]
		if s.check(u.table, id, firstArg, keys, nil).OK() && s.anyKey(flags) {
			return true
		}
	}
	return false
}

func (s *selector) anyKey(flags KeyFlags) bool {
	if s.flags&selAllKeys != 0 {
		return true
	}
	for i := range s.keys {
		if p := &s.keys[i]; p.flags&flags == flags && string(p.pattern) == "*" {
			return true
		}
	}
	return false
}
