package engine

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"

	"github.com/goblin-kv/goblin/acl"
	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/redisconf"
)

// Access control: Redis 7.0's ACL users (package acl) over every
// transport and protocol. Each session holds the *acl.User it
// authenticated as; execute asks the user's AllowsAll first, one load and
// one predictable branch. A restricted session goes to permit, whose fast
// path decides most allowed commands by a bit test and a key pattern match
// (aclShapes); an unauthenticated session, a refusal and the commands the
// fast path does not cover take permitSlow (NOAUTH, the command, key and
// channel rules, the ACL LOG).

// noUser is the user of a session that has not authenticated (or not yet
// been resolved to the default user): it allows nothing, so execute sends
// every command of such a session to permit.
var noUser = new(acl.User)

// aclIDs maps each Op to its command's ID in acl.CommandTable.
var aclIDs = func() (ids [command.NumOps]int32) {
	t := acl.CommandTable()
	for _, op := range command.All() {
		id, ok := t.ID(command.Name(op))
		if !ok {
			panic("engine: " + command.Name(op) + " is not in acl.CommandTable")
		}
		ids[op] = int32(id)
	}
	return ids
}()

// aclShape is what the permission check needs to know of a command
// before it sees a request: whether the fast checks (acl.User's
// AllowsCommand and AllowsKey) can decide it, and with which key
// permissions.
type aclShape struct {
	id    int32 // the command's ID in acl.CommandTable (aclIDs)
	kind  uint8 // shapeOther, shapeKeyless, shapeOneKey or shapeSet
	flags acl.KeyFlags
}

const (
	shapeOther   uint8 = iota // channels, several keys, flags that vary: the full check
	shapeKeyless              // no key and no channel (PING, INFO)
	shapeOneKey               // Request.Key only, with permissions its key spec fixes (GET, INCR)
	shapeSet                  // SET: Request.Key, read too with GET
)

// setFlags are SET's key permissions without and with GET.
var setFlags = [2]acl.KeyFlags{
	aclKeyFlags(variableFlags(command.OpSet, nil, false)),
	aclKeyFlags(variableFlags(command.OpSet, nil, true)),
}

// aclShapes holds each Op's shape, worked out once from its Spec as
// requestKeys would find its keys for any request.
var aclShapes = func() (shapes [command.NumOps]aclShape) {
	for _, op := range command.All() {
		spec := command.Lookup(op)
		shapes[op].id = aclIDs[op]
		switch {
		case spec.Flags&command.PubSub != 0:
		case len(spec.Keys) == 0:
			shapes[op].kind = shapeKeyless
		case spec.Keys[0].Flags&command.KeyNotKey != 0:
		case spec.ReqKeys.From < 0 && spec.ReqKeyFlags(0)&command.KeyVariableFlags == 0:
			shapes[op].kind, shapes[op].flags = shapeOneKey, aclKeyFlags(spec.ReqKeyFlags(0))
		case op == command.OpSet && spec.ReqKeys.From < 0:
			shapes[op].kind = shapeSet
		}
	}
	return shapes
}()

// aclPingID is PING's ID in acl.CommandTable, for plain.
var aclPingID = int(aclIDs[command.OpPing])

// GET's and SET's IDs and GET's key permissions (its shape is
// shapeOneKey, SET's shapeSet: TestACLShapesMatchRequestKeys), for
// hotPermit.
var (
	aclGetID, aclSetID = int(aclIDs[command.OpGet]), int(aclIDs[command.OpSet])
	aclGetFlags        = aclShapes[command.OpGet].flags
)

// hotPermit is permitFast for the hot path's requests (hotReady): a PING,
// a GET or a SET without options, whose shapes it knows, so it skips the
// shape lookup.
func hotPermit(u *acl.User, r *command.Request) bool {
	switch r.Op {
	case command.OpPing:
		return u.AllowsCommand(aclPingID)
	case command.OpGet:
		return u.AllowsKey(aclGetID, r.Key, aclGetFlags)
	}
	return u.AllowsKey(aclSetID, r.Key, setFlags[0])
}

// hotCheck is hotReady's check of a restricted user: r (a PING, GET or
// plain SET) passes when the user's precomputed check for its command
// (acl.KeyCheck, kept in the user's slot hotCheckSlot(r.Op)) passes its
// key: a branch, or (for a pattern "~prefix:*") a few and one 8-byte load,
// inlined into hotReady (go build -gcflags=-m ./engine
// says so). false means ask hotPermitSlow, which works a slot out when
// the user's rules changed since (acl.User.Checks: every change empties
// them, so a live session sees ACL SETUSER at once) and decides as
// hotPermit does.
func hotCheck(u *acl.User, r *command.Request) bool {
	return u.Checks().Passes(hotCheckSlot(r.Op), r.Key)
}

// hotCheckSlot is the slot of an Op's check in acl.User.Checks: its low
// bits, which differ for the hot path's PING, GET and SET (checked when
// the engine package starts); other Ops share the slots but are never
// asked for theirs.
func hotCheckSlot(op command.Op) int { return int(op) & (acl.CheckSlots - 1) }

func init() {
	p, g, s := hotCheckSlot(command.OpPing), hotCheckSlot(command.OpGet), hotCheckSlot(command.OpSet)
	if p == g || g == s || p == s {
		panic("engine: PING, GET and SET share a slot of acl.User.Checks; change hotCheckSlot")
	}
}

// pingCheck is plain's check of a restricted user: hotCheck for a PING,
// whose slot the compiler knows, so one bit test. The slot is filled at
// AUTH and, after a change to the user's rules empties it, by the next
// PING, which goes the general way meanwhile (permit).
func pingCheck(u *acl.User) bool {
	return u.Checks().PassesNoKey(hotCheckSlot(command.OpPing))
}

// hotPermitSlow is hotReady's check of a restricted session when
// hotCheck did not pass r: it works out the user's check for r's command
// if the slot is empty (never for noUser, shared by every engine), then
// decides as hotPermit does.
func (e *Engine) hotPermitSlow(s *Session, r *command.Request) bool {
	u := s.user
	if slot := hotCheckSlot(r.Op); !u.Checks().Known(slot) && fillHotChecks(u) && u.Checks().Passes(slot, r.Key) {
		return true
	}
	return hotPermit(u, r)
}

// fillHotChecks works out u's checks for the hot path's PING, GET and
// plain SET (acl.User.Checks, hotCheck) and reports whether it did: not
// for noUser, shared by every engine, whose checks stay empty.
func fillHotChecks(u *acl.User) bool {
	if u == noUser {
		return false
	}
	c := u.Checks()
	c.Set(hotCheckSlot(command.OpPing), u.CommandCheck(aclPingID))
	c.Set(hotCheckSlot(command.OpGet), u.KeyCheck(aclGetID, aclGetFlags))
	c.Set(hotCheckSlot(command.OpSet), u.KeyCheck(aclSetID, setFlags[0]))
	return true
}

// initACL makes the users of a fresh engine: default, with requirepass as
// its password when set.
func (e *Engine) initACL() {
	e.users = acl.NewUsers(acl.CommandTable())
	e.defUser = e.users.Get("default")
	maxLen := e.o.ACLLogMaxLen
	if maxLen <= 0 {
		maxLen = acl.DefaultLogMaxLen
	}
	e.aclLog = acl.NewLog(maxLen)
	e.setRequirePass(e.o.RequirePass)
}

// setRequirePass sets the default user's password as Redis's requirepass
// does: resetpass then >pass, or nopass for "".
func (e *Engine) setRequirePass(pass string) {
	e.o.RequirePass = pass
	rules := []string{"nopass"}
	if pass != "" {
		rules = []string{"resetpass", ">" + pass}
	}
	if _, err := e.users.SetUser("default", rules...); err != nil {
		panic(err) // these rules are always valid
	}
}

// authRequired reports whether a client that has not authenticated must
// (Redis's authRequired: the default user has a password or is off).
func (e *Engine) authRequired() bool { return !e.defUser.NoPass() || !e.defUser.Enabled() }

// DefaultUserNoPass reports whether the default user needs no password
// (protected mode's test). Loop goroutine.
func (e *Engine) DefaultUserNoPass() bool { return e.defUser.NoPass() }

// LoadACLFile reads Options.ACLFile (aclfile) into the users, all or
// none, as Redis does at start; without an aclfile it does nothing.
func (e *Engine) LoadACLFile() error {
	if e.o.ACLFile == "" {
		return nil
	}
	return e.loadACL()
}

func (e *Engine) loadACL() error {
	f, err := os.Open(e.o.ACLFile)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := e.users.Load(bufio.NewReader(f), e.o.ACLFile); err != nil {
		return err
	}
	// The default user is kept in place (its rules replaced), the others
	// are new: clients authenticated as a replaced user are disconnected.
	e.defUser = e.users.Get("default")
	e.disconnectUsers(func(u *acl.User) bool { return u != e.defUser })
	return nil
}

// disconnectUsers closes the clients authenticated as a user gone for
// which gone reports true, as CLIENT KILL closes one: at once for the
// engine, through the transport when it can, else at the client's next
// request; the client running the command (e.cur) gets its reply first.
func (e *Engine) disconnectUsers(gone func(*acl.User) bool) {
	for i := len(e.sessions) - 1; i >= 0; i-- { // backwards: Close moves the last session into i
		c := e.sessions[i]
		if c.user == noUser || !gone(c.user) {
			continue
		}
		if c == e.cur {
			c.quit = true // after this reply
			continue
		}
		c.killed, c.quit = true, true
		if c.conn.Kill != nil {
			c.conn.Kill()
		}
		e.Close(c)
	}
}

// resolve gives a session that has not authenticated the default user
// when no password is needed (as Redis authenticates every new client
// then); it reports whether the session is authenticated.
func (e *Engine) resolve(s *Session) bool {
	if s.user == noUser && !e.authRequired() {
		s.user, s.authed = e.defUser, true
	}
	return s.user != noUser
}

// permit is execute's check for a session whose user is not allowed
// everything. A command with no key and no channel, or only Request.Key
// with fixed permissions (most commands), the user allows is passed by
// one bit test and at most one pattern match per key pattern (aclShapes,
// acl.User.AllowsCommand and AllowsKey); an unauthenticated session and
// everything else take permitSlow.
func (e *Engine) permit(s *Session, r *command.Request) bool {
	if r.Op == command.OpPing && !s.user.Checks().Known(hotCheckSlot(command.OpPing)) {
		fillHotChecks(s.user) // for plain (pingCheck)
	}
	return permitFast(s.user, r) || e.permitSlow(s, r)
}

// permitFast is permit's fast checks: true when they pass r, false when
// permitSlow must decide. The hot path asks the same of its three
// commands (hotPermit).
func permitFast(u *acl.User, r *command.Request) bool {
	switch sh := &aclShapes[r.Op]; sh.kind {
	case shapeKeyless:
		return u.AllowsCommand(int(sh.id))
	case shapeOneKey:
		return u.AllowsKey(int(sh.id), r.Key, sh.flags)
	case shapeSet:
		return u.AllowsKey(int(sh.id), r.Key, setFlags[b2i(r.Flags&command.FlagGet != 0)])
	}
	return false
}

// permitSlow is permit's full check: NOAUTH before authentication (but
// for AUTH, HELLO...), then the user's rules with every key and channel.
// A denial records its error reply and an ACL LOG entry, and permitSlow
// reports false.
func (e *Engine) permitSlow(s *Session, r *command.Request) bool {
	spec := command.Lookup(r.Op)
	if !e.resolve(s) {
		if spec.Flags&command.NoAuthFlag != 0 {
			return true
		}
		e.errText(command.NoAuth, "NOAUTH Authentication required.")
		return false
	}
	u := s.user
	if u.AllowsAll() {
		return true
	}
	e.curOp = r.Op
	keys := e.requestKeys(r, spec)
	id := int(aclIDs[r.Op])
	var chans []acl.Channel
	if spec.Flags&command.PubSub != 0 {
		chans = e.pubsubChannelsOf(r)
	}
	res := u.Allowed(id, e.firstArg(spec), keys, chans)
	if res.OK() {
		return true
	}
	var object []byte
	switch res.Reason {
	case acl.ReasonKey:
		object = keys[res.Index].Name
	case acl.ReasonChannel:
		object = chans[res.Index].Name
	}
	e.denied(s, u, id, res, object)
	return false
}

// denied answers a refused command with Redis's NOPERM text and logs it.
func (e *Engine) denied(s *Session, u *acl.User, id int, res acl.Result, object []byte) {
	e.errText(command.Err, u.NoPermError(id, res))
	obj := acl.CommandTable().Name(id)
	if object != nil {
		obj = string(object)
	}
	e.logDenial(s, res.Reason, obj, u.Name())
}

// logDenial adds an ACL LOG entry for session s, whose current command
// is the one denied.
func (e *Engine) logDenial(s *Session, reason acl.Reason, object, user string) {
	s.lastOp = e.curOp // CLIENT INFO's cmd=: the command denied, as Redis shows it
	ctx := acl.ContextTopLevel
	if s.tx.on || e.inExec {
		ctx = acl.ContextMulti
	}
	e.aclLog.Add(acl.LogEntry{Reason: reason, Context: ctx, Object: object, Username: user,
		ClientInfo: string(e.appendClientLine(nil, s)), Time: wallClock()})
}

// firstArg returns the argument after a command's name (after a
// subcommand's), for rules such as +select|0; nil when the request came
// without its words (SBE).
func (e *Engine) firstArg(spec *command.Spec) []byte {
	i := 1
	if spec.Container != command.OpNone {
		i = 2
	}
	if i < len(e.argv) {
		return e.argv[i]
	}
	return nil
}

// requestKeys lists r's keys (Spec.ReqKeys) with what the command does to
// each: read for a key spec's access flag, write for insert, update or
// delete. Key i takes key spec i's flags, the last spec's for the rest.
func (e *Engine) requestKeys(r *command.Request, spec *command.Spec) []acl.Key {
	keys := e.aclKeys[:0]
	if len(spec.Keys) == 0 || spec.Keys[0].Flags&command.KeyNotKey != 0 {
		return keys // no keys, or shard channels (checked as channels)
	}
	keys = append(keys, acl.Key{Name: r.Key, Flags: e.keyFlags(r, spec, 0)})
	from, end, step := spec.ArgKeys(r)
	for i := from; i < end; i += step {
		keys = append(keys, acl.Key{Name: r.Args[i], Flags: e.keyFlags(r, spec, len(keys))})
	}
	e.aclKeys = keys
	return keys
}

func (e *Engine) keyFlags(r *command.Request, spec *command.Spec, i int) acl.KeyFlags {
	f := spec.ReqKeyFlags(i)
	if f&command.KeyVariableFlags != 0 {
		switch {
		case r.Op == command.OpSet:
			f = variableFlags(r.Op, nil, r.Flags&command.FlagGet != 0)
		case e.argv != nil:
			f = variableFlags(r.Op, e.argv, false)
		}
	}
	return aclKeyFlags(f)
}

// variableFlags are the key flags of a command whose key spec says they
// vary with its arguments, as Redis's getkeys procedures give them: SET
// reads its key only with GET; BITFIELD writes only with SET or INCRBY.
// words are the command's words (nil for SET, whose get says).
func variableFlags(op command.Op, words [][]byte, get bool) command.KeyFlags {
	switch op {
	case command.OpSet:
		if words != nil {
			for _, w := range words[min(3, len(words)):] {
				get = get || command.EqualFold(w, "get")
			}
		}
		if get {
			return command.KeyRW | command.KeyAccess | command.KeyUpdate
		}
		return command.KeyOW | command.KeyUpdate
	case command.OpBitField:
		for i := 2; i < len(words); i++ {
			rem := len(words) - i - 1
			switch {
			case command.EqualFold(words[i], "get") && rem >= 2:
				i += 2
			case (command.EqualFold(words[i], "set") || command.EqualFold(words[i], "incrby")) && rem >= 3:
				return command.KeyRW | command.KeyAccess | command.KeyUpdate
			}
		}
		return command.KeyRO | command.KeyAccess
	}
	return command.KeyRW | command.KeyAccess | command.KeyUpdate
}

func aclKeyFlags(f command.KeyFlags) acl.KeyFlags {
	var k acl.KeyFlags
	if f&command.KeyAccess != 0 {
		k |= acl.KeyRead
	}
	if f&(command.KeyInsert|command.KeyUpdate|command.KeyDelete) != 0 {
		k |= acl.KeyWrite
	}
	return k
}

// The ACL subcommands.

// subcommandError answers ACL <sub> with the wrong number of arguments
// in Redis's words, naming the subcommand as typed.
func (e *Engine) subcommandError(r *command.Request) {
	sub := []byte(strings.ToUpper(command.Name(r.Op)[strings.IndexByte(command.Name(r.Op), '|')+1:]))
	if len(e.argv) > 1 {
		sub = e.argv[1]
	}
	e.fail(command.Err, "ERR unknown subcommand or wrong number of arguments for '", sub, "'. Try ACL HELP.")
}

func (e *Engine) aclCat(_ *Session, r *command.Request) {
	if len(r.Args) > 1 {
		e.subcommandError(r)
		return
	}
	e.begin(command.Array)
	if len(r.Args) == 0 {
		for _, n := range command.ACLCategories() {
			e.addBulkStr(n)
		}
		e.end()
		return
	}
	c, ok := command.CategoryByName(string(r.Args[0]))
	if !ok || bytes.HasPrefix(r.Args[0], []byte("@")) {
		e.fail(command.Err, "ERR Unknown category '", r.Args[0], "'")
		return
	}
	for _, n := range acl.CommandTable().CategoryCommands(c) {
		e.addBulkStr(n)
	}
	e.end()
}

func (e *Engine) aclDelUser(s *Session, r *command.Request) {
	e.cur = s
	defer func() { e.cur = nil }()
	names := make([]string, len(r.Args))
	for i, a := range r.Args {
		names[i] = string(a)
	}
	var gone []*acl.User
	for _, n := range names {
		if u := e.users.Get(n); u != nil {
			gone = append(gone, u)
		}
	}
	n, err := e.users.DelUser(names...)
	if err != nil {
		e.errText(command.Err, "ERR "+err.Error())
		return
	}
	e.disconnectUsers(func(u *acl.User) bool { // as Redis, disconnect their clients
		for _, g := range gone {
			if u == g {
				return true
			}
		}
		return false
	})
	e.integer(int64(n))
}

// aclDryRun answers ACL DRYRUN user command [arg...]: OK, or the verbose
// denial as a bulk string. Keys are found by the command's key specs in
// the words given, as Redis finds them.
func (e *Engine) aclDryRun(_ *Session, r *command.Request) {
	u := e.users.Get(string(r.Args[0]))
	if u == nil {
		e.fail(command.Err, "ERR User '", r.Args[0], "' not found")
		return
	}
	words := r.Args[1:]
	op := command.ByName(words[0])
	if op != command.OpNone && len(words) > 1 && len(command.Subcommands(op)) > 0 {
		if sub := command.Subcommand(op, words[1]); sub != command.OpNone {
			op = sub
		}
	}
	spec := command.Lookup(op)
	if spec == nil {
		e.fail(command.Err, "ERR Command '", words[0], "' not found")
		return
	}
	if n := spec.Arity; (n > 0 && len(words) != n) || (n < 0 && len(words) < -n) {
		e.errBuf = command.AppendWrongArgs(e.errBuf[:0], spec.Name)
		e.setError(command.WrongArgs, e.errBuf)
		return
	}
	var keys []acl.Key
	for i := range spec.Keys {
		f := spec.Keys[i].Flags
		if f&command.KeyNotKey != 0 {
			continue // a shard channel, checked as a channel
		}
		if f&command.KeyVariableFlags != 0 {
			f = variableFlags(op, words, false)
		}
		pos, _ := spec.Keys[i].Positions(nil, len(words), func(i int) []byte { return words[i] })
		for _, p := range pos {
			keys = append(keys, acl.Key{Name: words[p], Flags: aclKeyFlags(f)})
		}
	}
	var first []byte
	if i := 1 + b2i(spec.Container != command.OpNone); int(i) < len(words) {
		first = words[i]
	}
	id := int(aclIDs[op])
	var chans []acl.Channel
	if spec.Flags&command.PubSub != 0 {
		var req command.Request
		if e.dec.Decode(&req, words) {
			chans = e.pubsubChannelsOf(&req)
		}
	}
	res := u.Allowed(id, first, keys, chans)
	if res.OK() {
		e.ok()
		return
	}
	var object []byte
	switch res.Reason {
	case acl.ReasonKey:
		object = keys[res.Index].Name
	case acl.ReasonChannel:
		object = chans[res.Index].Name
	}
	e.res.Kind, e.res.Value = command.Bulk, []byte(u.DenyMessage(id, res, object))
}

func (e *Engine) aclGenPass(_ *Session, r *command.Request) {
	bits := int64(256)
	if len(r.Args) > 1 {
		e.subcommandError(r)
		return
	}
	if len(r.Args) == 1 {
		v, ok := resp.ParseInt(r.Args[0])
		if !ok {
			e.errText(command.NotInteger, "ERR value is not an integer or out of range")
			return
		}
		bits = v
	}
	if bits <= 0 || bits > 4096 {
		e.errText(command.Err, "ERR "+acl.ErrGenPassBits.Error())
		return
	}
	p, err := acl.GenPass(int(bits))
	if err != nil {
		e.errText(command.Err, "ERR "+err.Error())
		return
	}
	e.res.Kind, e.res.Value = command.Bulk, []byte(p)
}

func (e *Engine) aclGetUser(_ *Session, r *command.Request) {
	u := e.users.Get(string(r.Args[0]))
	if u == nil {
		e.null()
		return
	}
	in := u.Info()
	e.begin(command.Map)
	e.addBulkStr("flags")
	e.push(command.Set)
	for _, f := range in.Flags {
		e.addCopy(command.Bulk, []byte(f))
	}
	e.pop()
	e.addBulkStr("passwords")
	e.push(command.Array)
	for _, p := range in.Passwords {
		e.addCopy(command.Bulk, []byte(p))
	}
	e.pop()
	sel := func(si acl.SelectorInfo) {
		e.addBulkStr("commands")
		e.addCopy(command.Bulk, []byte(si.Commands))
		e.addBulkStr("keys")
		e.addCopy(command.Bulk, []byte(si.Keys))
		e.addBulkStr("channels")
		e.addCopy(command.Bulk, []byte(si.Channels))
	}
	sel(in.SelectorInfo)
	e.addBulkStr("selectors")
	e.push(command.Array)
	for _, si := range in.Selectors {
		e.push(command.Map)
		sel(si)
		e.pop()
	}
	e.pop()
	e.end()
}

func (e *Engine) aclList(*Session, *command.Request) {
	e.begin(command.Array)
	for _, l := range e.users.List() {
		e.addCopy(command.Bulk, []byte(l))
	}
	e.end()
}

const errNoACLFile = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration."

func (e *Engine) aclLoad(s *Session, _ *command.Request) {
	e.cur = s
	if e.o.ACLFile == "" {
		e.errText(command.Err, errNoACLFile)
		return
	}
	err := e.loadACL()
	e.cur = nil
	if err != nil {
		var le *acl.LoadError
		if errors.As(err, &le) {
			e.errText(command.Err, "ERR "+le.Text)
			return
		}
		e.errText(command.Err, "ERR Error loading ACLs, opening file '"+e.o.ACLFile+"': "+err.Error())
		return
	}
	e.ok()
}

func (e *Engine) aclSave(*Session, *command.Request) {
	if e.o.ACLFile == "" {
		e.errText(command.Err, errNoACLFile)
		return
	}
	var b bytes.Buffer
	if err := e.users.Save(&b); err != nil {
		e.errText(command.Err, "ERR There was an error trying to save the ACLs. Please check the server logs for more information")
		return
	}
	if err := redisconf.WriteFileAtomic(e.o.ACLFile, b.Bytes()); err != nil {
		e.errText(command.Err, "ERR There was an error trying to save the ACLs. Please check the server logs for more information")
		return
	}
	e.ok()
}

func (e *Engine) aclLogCmd(_ *Session, r *command.Request) {
	n := int64(10)
	switch {
	case len(r.Args) > 1:
		e.subcommandError(r)
		return
	case len(r.Args) == 1 && command.EqualFold(r.Args[0], "reset"):
		e.aclLog.Reset()
		e.ok()
		return
	case len(r.Args) == 1:
		v, ok := resp.ParseInt(r.Args[0])
		if !ok {
			e.errText(command.NotInteger, "ERR value is not an integer or out of range")
			return
		}
		n = max(v, 0)
	}
	now := wallClock()
	e.begin(command.Array)
	for _, le := range e.aclLog.Entries(int(min(n, int64(e.aclLog.Len())))) {
		e.push(command.Map)
		e.addBulkStr("count")
		e.addInt(int64(le.Count))
		e.addBulkStr("reason")
		e.addBulkStr(le.Reason.String())
		e.addBulkStr("context")
		e.addBulkStr(le.Context.String())
		e.addBulkStr("object")
		e.addCopy(command.Bulk, []byte(le.Object))
		e.addBulkStr("username")
		e.addCopy(command.Bulk, []byte(le.Username))
		e.addBulkStr("age-seconds")
		e.addCopy(command.Double, strconv.AppendFloat(nil, le.AgeSeconds(now), 'g', 17, 64))
		e.addBulkStr("client-info")
		e.addCopy(command.Bulk, []byte(le.ClientInfo))
		e.pop()
	}
	e.end()
}

func (e *Engine) aclSetUser(_ *Session, r *command.Request) {
	rules := make([]string, len(r.Args)-1)
	for i, a := range r.Args[1:] {
		rules[i] = string(a)
	}
	if _, err := e.users.SetUser(string(r.Args[0]), rules...); err != nil {
		e.errText(command.Err, "ERR "+err.Error())
		return
	}
	e.ok()
}

func (e *Engine) aclUsers(*Session, *command.Request) {
	e.begin(command.Array)
	for _, n := range e.users.Names() {
		e.addCopy(command.Bulk, []byte(n))
	}
	e.end()
}

func (e *Engine) aclWhoAmI(s *Session, _ *command.Request) {
	e.resolve(s)
	name := "default"
	if s.user != noUser {
		name = s.user.Name()
	}
	e.bulk(bs(name))
}

// userName is the user CLIENT LIST shows for s.
func (e *Engine) userName(s *Session) string {
	if s.user == noUser || s.user == nil {
		return "default"
	}
	return s.user.Name()
}
