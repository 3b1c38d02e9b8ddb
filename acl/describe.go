package acl

import (
	"strings"

	"github.com/goblin-kv/goblin/command"
)

// Describe returns the user's rules as ACL LIST prints them after
// "user <name> " (and the aclfile stores them): flags, password hashes,
// the root selector's keys, channels and commands, then each other
// selector in parentheses. Commands are described as Redis 7.0 does:
// +@all or -@all, then the categories that best fit the allowed
// commands, then single commands and first arguments; single commands
// come in table order where Redis uses its hash table's order.
func (u *User) Describe() string {
	var b strings.Builder
	for i, n := range userFlagNames {
		if u.flags&(1<<i) != 0 {
			b.WriteString(n)
			b.WriteByte(' ')
		}
	}
	for _, p := range u.passwords {
		b.WriteByte('#')
		b.WriteString(p)
		b.WriteByte(' ')
	}
	for i := range u.sels {
		if i == 0 {
			u.sels[i].describe(&b, u.table)
			continue
		}
		b.WriteString(" (")
		u.sels[i].describe(&b, u.table)
		b.WriteByte(')')
	}
	return b.String()
}

// Flags returns the user's flags as ACL GETUSER lists them.
func (u *User) Flags() []string {
	var out []string
	for i, n := range userFlagNames {
		if u.flags&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// SelectorInfo is one selector as ACL GETUSER shows it.
type SelectorInfo struct {
	Commands string // "-@all +get"
	Keys     string // "~a* %R~b", "~*" for all keys, "" for none
	Channels string // "&c*", "&*" for all channels, "" for none
}

// Info is a user as ACL GETUSER shows it: the root selector's fields,
// then the other selectors.
type Info struct {
	Flags     []string
	Passwords []string
	SelectorInfo
	Selectors []SelectorInfo
}

// Info returns the user as ACL GETUSER shows it.
func (u *User) Info() Info {
	in := Info{Flags: u.Flags(), Passwords: u.Passwords(), SelectorInfo: u.sels[0].info(u.table)}
	for i := 1; i < len(u.sels); i++ {
		in.Selectors = append(in.Selectors, u.sels[i].info(u.table))
	}
	return in
}

func (s *selector) info(t *Table) SelectorInfo {
	var in SelectorInfo
	in.Commands = s.commandRules(t)
	if s.flags&selAllKeys != 0 {
		in.Keys = "~*"
	} else {
		var b strings.Builder
		for i := range s.keys {
			if i > 0 {
				b.WriteByte(' ')
			}
			s.keys[i].describe(&b)
		}
		in.Keys = b.String()
	}
	if s.flags&selAllChannels != 0 {
		in.Channels = "&*"
	} else {
		var b strings.Builder
		for i, c := range s.channels {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteByte('&')
			b.Write(c)
		}
		in.Channels = b.String()
	}
	return in
}

func (p *keyPattern) describe(b *strings.Builder) {
	switch p.flags {
	case keyAll:
		b.WriteByte('~')
	case KeyRead:
		b.WriteString("%R~")
	case KeyWrite:
		b.WriteString("%W~")
	}
	b.Write(p.pattern)
}

// describe is Redis's ACLDescribeSelector.
func (s *selector) describe(b *strings.Builder, t *Table) {
	if s.flags&selAllKeys != 0 {
		b.WriteString("~* ")
	} else {
		for i := range s.keys {
			s.keys[i].describe(b)
			b.WriteByte(' ')
		}
	}
	if s.flags&selAllChannels != 0 {
		b.WriteString("&* ")
	} else {
		b.WriteString("resetchannels ")
		for _, c := range s.channels {
			b.WriteByte('&')
			b.Write(c)
			b.WriteByte(' ')
		}
	}
	b.WriteString(s.commandRules(t))
}

// commandRules is Redis 7.0's ACLDescribeSelectorCommandRules: start
// from +@all or -@all, add the categories that fit best one at a time,
// then fix the difference command by command.
func (s *selector) commandRules(t *Table) string {
	var b strings.Builder
	fake := selector{cmds: make([]uint64, len(s.cmds))}
	additive := !s.future
	if additive {
		b.WriteString("-@all ")
	} else {
		b.WriteString("+@all ")
		fake.setAll(true)
	}
	temp := selector{cmds: append([]uint64(nil), s.cmds...)}
	var applied [command.NumCategories]bool
	for {
		best, minDiff, maxSame := -1, int(^uint(0)>>1), 0
		for j := range command.NumCategories {
			if applied[j] {
				continue
			}
			on, off := temp.count(t, 1<<j)
			diff, same := off, on
			if !additive {
				diff, same = on, off
			}
			if same > diff && (diff < minDiff || (diff == minDiff && same > maxSame)) {
				best, minDiff, maxSame = j, diff, same
			}
		}
		if best < 0 {
			break
		}
		c := command.Categories(1) << best
		fake.setCategory(t, c, additive)
		temp.setCategory(t, c, !additive)
		if additive {
			b.WriteString("+@")
		} else {
			b.WriteString("-@")
		}
		b.WriteString(command.ACLCategories()[best])
		b.WriteByte(' ')
		applied[best] = true
	}
	for id := range t.names {
		if t.parent[id] >= 0 {
			continue
		}
		s.singles(&b, t, &fake, int32(id))
		for _, sub := range t.subs[id] {
			s.singles(&b, t, &fake, sub)
		}
	}
	out := b.String()
	return out[:len(out)-1]
}

func (s *selector) singles(b *strings.Builder, t *Table, fake *selector, id int32) {
	user := s.bit(id)
	if user != fake.bit(id) {
		if user {
			b.WriteByte('+')
		} else {
			b.WriteByte('-')
		}
		b.WriteString(t.names[id])
		b.WriteByte(' ')
		fake.changePerm(t, id, user)
	}
	if !user && s.firstArgs != nil {
		for _, a := range s.firstArgs[id] {
			b.WriteByte('+')
			b.WriteString(t.names[id])
			b.WriteByte('|')
			b.WriteString(a)
			b.WriteByte(' ')
		}
	}
}

// count returns how many commands and subcommands of category c the
// selector allows and denies.
func (s *selector) count(t *Table, c command.Categories) (on, off int) {
	for id, cc := range t.cats {
		if cc&c != 0 {
			if s.bit(int32(id)) {
				on++
			} else {
				off++
			}
		}
	}
	return on, off
}
