package engine

import (
	"github.com/goblin-kv/goblin/acl"
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

// auth checks a user's password (an empty user means default) and
// authenticates the session as that user; on failure it records the
// error reply and an ACL LOG entry (reason auth, the user name tried).
func (e *Engine) auth(s *Session, user, pass []byte, plainAuth bool) bool {
	name := "default"
	if len(user) > 0 {
		name = string(user)
	} else if plainAuth && e.defUser.NoPass() {
		e.errText(command.Err, "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
		return false
	}
	u := e.users.Get(name)
	if u == nil || !u.CheckPassword(string(pass)) {
		e.errText(command.WrongPass, "WRONGPASS invalid username-password pair or user is disabled.")
		e.curOp = command.OpAuth
		obj := "AUTH"
		if !plainAuth {
			e.curOp, obj = command.OpHello, "HELLO"
		}
		if len(e.argv) > 0 {
			obj = string(e.argv[0]) // the command as typed, as Redis logs it
		}
		e.logDenial(s, acl.ReasonAuth, obj, name)
		if e.authRequired() { // a guess worth slowing down (AuthFailures)
			s.authFails++
			s.failedAuth = true
		}
		return false
	}
	s.user, s.authed = u, true
	fillHotChecks(u) // for plain's PING (pingCheck), which never fills them
	return true
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
	if !e.resolve(s) {
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
