package acl

import "encoding/binary"

// KeyCheck is AllowsKey (or AllowsCommand) for one command and one user
// worked out in advance, in a form that passes the usual requests with a
// branch or two and one 8-byte load: the command with any key or none
// (allkeys, or a command with no key), or the keys of 8 bytes or more
// that start with a literal prefix of at most 7 bytes (a pattern
// "prefix*", the usual "app:*"; "*" too). A caller that checks a few
// commands on every request keeps one per command in the user's
// KeyChecks (User.Checks), works it out once (User.KeyCheck,
// CommandCheck) and asks KeyChecks.Passes first, AllowsKey only when it
// says no.
//
// A key a KeyCheck passes is one AllowsKey allows; the converse does not
// hold (a key of under 8 bytes for a pattern, a second pattern, a longer
// prefix, a glob: AllowsKey decides those). The zero KeyCheck passes
// nothing.
type KeyCheck struct {
	any bool // every key passes, and no key
	// A key of 8 bytes or more passes when its first 8, little-endian,
	// &mask, equal ^notHead: mask covers the prefix's bytes, notHead is
	// the prefix complemented (all ones beyond it). Complemented, so
	// that the zero KeyCheck passes nothing: 0 ^ 0 is not all ones.
	mask, notHead uint64
}

// Passes reports whether the check passes key (nil for a command with no
// key); see KeyChecks.Passes.
func (k KeyCheck) Passes(key []byte) bool {
	return len(key) >= 8 && binary.LittleEndian.Uint64(key)&k.mask^k.notHead == ^uint64(0) || k.any
}

// CheckSlots is how many KeyChecks a user keeps (User.Checks).
const CheckSlots = 8

// KeyChecks are a user's KeyChecks, in CheckSlots slots its owner
// numbers as it likes, laid out field by field so that Passes, inlined,
// costs a dozen instructions or so: a key compared with one load, and, xor
// and compare, each operand read with one scaled load; a command with no
// key with one bit test. The zero KeyChecks passes nothing and knows
// nothing.
type KeyChecks struct {
	any, known    uint64 // bit i: slot i
	mask, notHead [CheckSlots]uint64
}

// Passes reports whether the check in slot (taken modulo CheckSlots)
// passes key (nil for a command with no key): then the user may run the
// command on it, AllowsKey or AllowsCommand would say so too. false says
// nothing: ask them. It is small enough to be inlined.
func (c *KeyChecks) Passes(slot int, key []byte) bool {
	i := slot & (CheckSlots - 1)
	return len(key) >= 8 && binary.LittleEndian.Uint64(key)&c.mask[i]^c.notHead[i] == ^uint64(0) || c.any&(1<<i) != 0
}

// PassesNoKey is Passes(slot, nil), cheaper to inline: a bit test.
func (c *KeyChecks) PassesNoKey(slot int) bool { return c.any&(1<<(slot&(CheckSlots-1))) != 0 }

// Known reports whether the check in slot was Set since the user's rules
// last changed.
func (c *KeyChecks) Known(slot int) bool { return c.known&(1<<(slot&(CheckSlots-1))) != 0 }

// Set keeps k in slot (taken modulo CheckSlots), Known from now on.
func (c *KeyChecks) Set(slot int, k KeyCheck) {
	i := slot & (CheckSlots - 1)
	bit := uint64(1) << i
	c.any, c.known, c.mask[i], c.notHead[i] = c.any&^bit, c.known|bit, k.mask, k.notHead
	if k.any {
		c.any |= bit
	}
}

// Checks returns the user's room for the KeyChecks its owner works out
// (User.KeyCheck, CommandCheck) for the commands it checks most. Every
// change to the user's rules (SetUser, Load) empties it, so a check can
// never outlive the rules it was worked out from; the owner sets a slot
// again when it finds it not Known. Like the rest of the User, it belongs
// to the goroutine that owns the Users.
func (u *User) Checks() *KeyChecks { return &u.checks }

// CommandCheck works out the KeyCheck of command id (a Table ID) with no
// key: it passes a nil key when AllowsCommand(id) is true, else nothing.
func (u *User) CommandCheck(id int) KeyCheck {
	return KeyCheck{any: u.AllowsCommand(id)}
}

// KeyCheck works out the KeyCheck of command id (a Table ID) touching one
// key with permissions flags, as AllowsKey(id, key, flags) checks it:
// any key when a selector that allows the command allows all keys; else
// the keys of 8 bytes or more that start with the shortest literal
// prefix, of at most 7 bytes, of the patterns "prefix*" with those
// permissions in such selectors; else none.
func (u *User) KeyCheck(id int, flags KeyFlags) KeyCheck {
	w, bit := uint(id)/64, uint64(1)<<(uint(id)%64)
	if w >= uint(len(u.cmds)) || u.cmds[w]&bit == 0 {
		return KeyCheck{}
	}
	prefix, ok := []byte(nil), false
	for i := range u.sels {
		s := &u.sels[i]
		if s.allowed[w]&bit == 0 {
			continue
		}
		if s.flags&selAllKeys != 0 {
			return KeyCheck{any: true}
		}
		for j := range s.keys {
			if p := &s.keys[j]; p.prefixStar && p.flags&flags == flags && (!ok || p.prefix < len(prefix)) {
				prefix, ok = p.pattern[:p.prefix], true
			}
		}
	}
	if !ok || len(prefix) > 7 { // "prefix*" matches keys longer than prefix: 8 bytes pass with 7 at most
		return KeyCheck{}
	}
	var b [8]byte
	copy(b[:], prefix)
	return KeyCheck{mask: 1<<(8*len(prefix)) - 1, notHead: ^binary.LittleEndian.Uint64(b[:])}
}
