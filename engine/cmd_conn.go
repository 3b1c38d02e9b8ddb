package engine

import (
	"bytes"
	"crypto/subtle"

	"github.com/goblin-kv/goblin/command"
)

func (e *Engine) ping(_ *Session, r *command.Request) {
	if len(r.Args) == 0 {
		e.simple(txtPONG)
		return
	}
	e.pingArgs(r)
}

// pingArgs answers PING with a message, or with too many arguments.
func (e *Engine) pingArgs(r *command.Request) {
	if len(r.Args) == 1 {
		e.bulk(r.Args[0])
		return
	}
	e.wrongArgs(r.Op)
}

func (e *Engine) echo(_ *Session, r *command.Request) { e.bulk(r.Value) }

func (e *Engine) quit(s *Session, _ *command.Request) {
	s.quit = true
	e.ok()
}

func (e *Engine) authCmd(s *Session, r *command.Request) {
	if e.auth(s, r.Key, r.Value, true) {
		e.ok()
	}
}

// auth checks a password (and user, if given: an empty user means none) and marks the session
// authenticated; on failure it records the error reply.
func (e *Engine) auth(s *Session, user, pass []byte, plainAuth bool) bool {
	if e.o.RequirePass == "" {
		if len(user) == 0 && plainAuth {
			e.errText(command.Err, "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
			return false
		}
		if len(user) > 0 && !command.EqualFold(user, "default") {
			e.errText(command.WrongPass, "WRONGPASS invalid username-password pair or user is disabled.")
			return false
		}
		s.authed = true
		return true
	}
	if (len(user) > 0 && !bytes.Equal(user, []byte("default"))) ||
		subtle.ConstantTimeCompare(pass, e.pass()) != 1 {
		e.errText(command.WrongPass, "WRONGPASS invalid username-password pair or user is disabled.")
		s.authFails++
		s.failedAuth = true
		return false
	}
	s.authed = true
	return true
}

// DefaultUserNoPass reports whether the default user needs no password
// (protected mode's test). Loop goroutine.
func (e *Engine) DefaultUserNoPass() bool { return e.o.RequirePass == "" }

func (e *Engine) pass() []byte {
	if e.passBytes == nil {
		e.passBytes = []byte(e.o.RequirePass)
	}
	return e.passBytes
}

func (e *Engine) clientSetName(s *Session, r *command.Request) {
	if e.setName(s, r.Value) {
		e.ok()
	}
}

func (e *Engine) setName(s *Session, name []byte) bool {
	for _, c := range name {
		if c < '!' || c > '~' {
			e.errText(command.Err, "ERR Client names cannot contain spaces, newlines or special characters.")
			return false
		}
	}
	s.name = append(s.name[:0], name...)
	return true
}

func (e *Engine) clientGetName(s *Session, _ *command.Request) {
	if len(s.name) == 0 {
		e.null()
	} else {
		e.bulk(s.name)
	}
}

// hello answers HELLO [protover [AUTH user pass] [SETNAME name]]: HELLO 3
// switches the connection to RESP3 replies (maps, sets, nulls, doubles,
// verbatim strings), HELLO 2 back to RESP2.
func (e *Engine) hello(s *Session, r *command.Request) {
	if r.Amount != 0 && r.Amount != 2 && r.Amount != 3 {
		e.errText(command.NoProto, "NOPROTO unsupported protocol version")
		return
	}
	if r.Flags&command.FlagHelloAuth != 0 && !e.auth(s, r.Key, r.Value, false) {
		return
	}
	if e.o.RequirePass != "" && !s.authed {
		e.errText(command.NoAuth, "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return
	}
	if r.Flags&command.FlagHelloSetName != 0 && len(r.Args) == 1 && !e.setName(s, r.Args[0]) {
		return
	}
	if e.version == nil {
		e.version = []byte(e.o.Version)
	}
	if r.Amount != 0 {
		s.resp3 = r.Amount == 3
	}
	e.begin(command.Map)
	e.addBulkStr("server")
	e.addBulkStr("goblin")
	e.addBulkStr("version")
	e.addBulk(e.version)
	e.addBulkStr("proto")
	e.addInt(2 + b2i(s.resp3))
	e.addBulkStr("id")
	e.addInt(int64(s.ID))
	e.addBulkStr("mode")
	e.addBulkStr("standalone")
	e.addBulkStr("role")
	e.addBulkStr("master")
	e.addBulkStr("modules")
	e.push(command.Array)
	e.pop()
	e.end()
}
