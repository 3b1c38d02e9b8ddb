package acl

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Users is the set of ACL users, with the default user always present.
// It is not safe for concurrent use: the engine owns it.
type Users struct {
	table *Table
	users map[string]*User
	// AllChannels is acl-pubsub-default: when set, new users and
	// selectors start with allchannels instead of resetchannels.
	AllChannels bool
}

// NewUsers returns the users of a fresh server: only "default", on, with
// no password, allowed everything.
func NewUsers(t *Table) *Users {
	s := &Users{table: t, users: map[string]*User{}}
	s.users["default"] = defaultUser(t)
	return s
}

func defaultUser(t *Table) *User {
	u := newUser("default", t)
	for _, op := range []string{"+@all", "~*", "&*", "on", "nopass"} {
		if err := u.applyOp(op, false); err != nil {
			panic(err)
		}
	}
	u.settle()
	return u
}

// Table returns the command table the users' rules refer to.
func (s *Users) Table() *Table { return s.table }

// Get returns the user named name, or nil.
func (s *Users) Get(name string) *User { return s.users[name] }

// SetUser is ACL SETUSER: it creates the user if needed and applies ops
// in order, all or none (the rules are applied to a copy, which then
// takes the place of the user's state, so a *User a client holds sees
// the new rules at once, as in Redis).
func (s *Users) SetUser(name string, ops ...string) (*User, error) {
	if hasSpace(name) {
		return nil, ErrBadUsername
	}
	merged, err := mergeSelectors(ops)
	if err != nil {
		return nil, err
	}
	var u *User
	if old := s.users[name]; old != nil {
		u = old.clone()
	} else {
		u = newUser(name, s.table)
		if s.AllChannels {
			u.sels[0].flags |= selAllChannels
		}
	}
	for _, op := range merged {
		if err := u.applyOp(op, s.AllChannels); err != nil {
			var re RuleError
			errors.As(err, &re)
			return nil, &ModifierError{Modifier: op, Err: re}
		}
	}
	u.settle()
	if old := s.users[name]; old != nil {
		// Clients authenticated as the user hold *old: as in Redis,
		// the new rules apply to them at once.
		*old = *u
		return old, nil
	}
	s.users[name] = u
	return u, nil
}

// errDefaultUser is Redis's reply to ACL DELUSER default.
type defaultUserError struct{}

func (defaultUserError) Error() string { return "The 'default' user cannot be removed" }

// ErrDeleteDefault is returned by DelUser for the default user.
var ErrDeleteDefault error = defaultUserError{}

// DelUser is ACL DELUSER: it removes the named users and returns how many
// existed. It refuses, removing none, if "default" is among them.
func (s *Users) DelUser(names ...string) (int, error) {
	for _, n := range names {
		if n == "default" {
			return 0, ErrDeleteDefault
		}
	}
	n := 0
	for _, name := range names {
		if _, ok := s.users[name]; ok {
			delete(s.users, name)
			n++
		}
	}
	return n, nil
}

// Names returns the user names in byte order (ACL USERS).
func (s *Users) Names() []string {
	out := make([]string, 0, len(s.users))
	for n := range s.users {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// List returns ACL LIST's lines: "user <name> <rules>", by name.
func (s *Users) List() []string {
	names := s.Names()
	for i, n := range names {
		names[i] = "user " + n + " " + s.users[n].Describe()
	}
	return names
}

// Save writes the users in the aclfile format: ACL LIST's lines.
func (s *Users) Save(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, l := range s.List() {
		bw.WriteString(l)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// Load replaces the users with those of an aclfile (ACL LOAD): one
// "user <name> <rules...>" per line, split at spaces; blank lines are
// skipped (as in Redis 7.0 there are no comments: a '#' line is an
// error). filename names the file in errors, which are Redis 7.0's, each
// with its line number, all in one LoadError; on any error nothing
// changes. A file without a default user gets the fresh one.
func (s *Users) Load(r io.Reader, filename string) error {
	next := &Users{table: s.table, users: map[string]*User{}, AllChannels: s.AllChannels}
	var errs strings.Builder
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.Trim(sc.Text(), " \t\r\n")
		if text == "" {
			continue
		}
		var argv []string
		for _, f := range strings.Split(text, " ") {
			if f != "" {
				argv = append(argv, f)
			}
		}
		if len(argv) < 2 || argv[0] != "user" {
			fmt.Fprintf(&errs, "%s:%d should start with user keyword followed by the username. ", filename, line)
			continue
		}
		name := argv[1]
		if hasSpace(name) {
			fmt.Fprintf(&errs, "'%s:%d: username '%s' contains invalid characters. ", filename, line, name)
			continue
		}
		if next.users[name] != nil {
			fmt.Fprintf(&errs, "WARNING: Duplicate user '%s' found on line %d. ", name, line)
			continue
		}
		u := newUser(name, s.table)
		if s.AllChannels {
			u.sels[0].flags |= selAllChannels
		}
		merged, err := mergeSelectors(argv[2:])
		if err != nil {
			var ue *UnmatchedError
			errors.As(err, &ue)
			fmt.Fprintf(&errs, "%s:%d: Unmatched parenthesis in acl selector starting at '%s'. ", filename, line, ue.Start)
			continue
		}
		syntaxErr := false
		for _, op := range merged {
			op = strings.Trim(op, "\t\r\n")
			err := u.applyOp(op, s.AllChannels)
			switch {
			case err == nil:
			case err == ErrUnknownName:
				// Naming the rule is safe only when it names no secret.
				fmt.Fprintf(&errs, "%s:%d: Error in applying operation '%s': %s. ", filename, line, op, err)
			case !syntaxErr:
				// Only the first other error: it may explain the rest.
				fmt.Fprintf(&errs, "%s:%d: %s. ", filename, line, err)
				syntaxErr = true
			}
		}
		u.settle()
		next.users[name] = u
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if errs.Len() > 0 {
		errs.WriteString("WARNING: ACL errors detected, no change to the previously active ACL rules was performed")
		return &LoadError{Text: errs.String()}
	}
	if next.users["default"] == nil {
		next.users["default"] = defaultUser(s.table)
	}
	// The default user keeps its identity, with the file's rules, as
	// Redis copies them into its DefaultUser: clients authenticated as
	// default stay so.
	if old := s.users["default"]; old != nil {
		*old = *next.users["default"]
		next.users["default"] = old
	}
	s.users = next.users
	return nil
}

// LoadError holds every error an aclfile had, each "file:line: text.".
type LoadError struct{ Text string }

func (e *LoadError) Error() string { return e.Text }

// genPassError is Redis's reply to a bad ACL GENPASS argument.
type genPassError struct{}

func (genPassError) Error() string {
	return "ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096"
}

// ErrGenPassBits is GenPass's error for bits outside 1..4096.
var ErrGenPassBits error = genPassError{}

// GenPass is ACL GENPASS: bits of crypto randomness (256 by default)
// as (bits+3)/4 lower-case hex digits.
func GenPass(bits int) (string, error) {
	if bits <= 0 || bits > 4096 {
		return "", ErrGenPassBits
	}
	chars := (bits + 3) / 4
	b := make([]byte, (chars+1)/2)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b)[:chars], nil
}

// DenyMessage is ACL DRYRUN's answer for a failed check (and the text
// of the verbose NOPERM): object is the key or channel that failed.
func (u *User) DenyMessage(id int, r Result, object []byte) string {
	switch r.Reason {
	case ReasonNone:
		return "OK"
	case ReasonKey:
		return "This user has no permissions to access the '" + string(object) + "' key"
	case ReasonChannel:
		return "This user has no permissions to access the '" + string(object) + "' channel"
	}
	return "This user has no permissions to run the '" + u.table.names[id] + "' command"
}

// NoPermError returns the error a denied command gets (without the
// leading '-'): Redis 7.0 names the command but not the key or channel.
func (u *User) NoPermError(id int, r Result) string {
	switch r.Reason {
	case ReasonKey:
		return "NOPERM this user has no permissions to access one of the keys used as arguments"
	case ReasonChannel:
		return "NOPERM this user has no permissions to access one of the channels used as arguments"
	}
	return "NOPERM this user has no permissions to run the '" + u.table.names[id] + "' command"
}
