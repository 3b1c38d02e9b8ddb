package engine

import (
	"encoding/binary"
	"strconv"

	"github.com/goblin-kv/goblin/command"
)

// The CLIENT subcommands and RESET: every session is listed by the engine
// (Open/Close), whatever transport it came on; its addresses come from the
// transport when it offers them (Session.Attach).

func (e *Engine) clientID(s *Session, _ *command.Request) { e.integer(int64(s.ID)) }

// clientInfo answers CLIENT INFO: this connection's CLIENT LIST line.
func (e *Engine) clientInfo(s *Session, r *command.Request) {
	s.lastOp = r.Op // the command being run, as Redis shows it
	e.caller = s
	b := e.appendClientLine(e.scratch[:0], s)
	e.caller = nil
	b = append(b, '\n')
	e.scratch = b[:0]
	e.res.Kind, e.res.Value = command.Verbatim, b
}

// clientList answers CLIENT LIST [TYPE t] [ID id ...]. A goblin client is
// of type pubsub while it has subscriptions, normal otherwise.
func (e *Engine) clientList(caller *Session, r *command.Request) {
	caller.lastOp = r.Op // the command being run, as Redis shows it
	e.caller = caller
	defer func() { e.caller = nil }()
	b := e.scratch[:0]
	switch {
	case len(r.Args) > 0:
		for _, id := range r.Args {
			if s := e.sessionByID(binary.LittleEndian.Uint64(id)); s != nil {
				b = append(e.appendClientLine(b, s), '\n')
			}
		}
	case len(r.Value) == 0 || command.EqualFold(r.Value, "normal") || command.EqualFold(r.Value, "pubsub"):
		pubsub := command.EqualFold(r.Value, "pubsub")
		for _, s := range e.sessions {
			if len(r.Value) == 0 || s.pubsub == pubsub {
				b = append(e.appendClientLine(b, s), '\n')
			}
		}
	}
	e.scratch = b[:0]
	e.res.Kind, e.res.Value = command.Verbatim, b
}

func (e *Engine) sessionByID(id uint64) *Session {
	for _, s := range e.sessions {
		if s.ID == id {
			return s
		}
	}
	return nil
}

// appendClientLine appends s's CLIENT LIST line, with Redis 7's fields
// (those goblin has no use for are 0) and 7.2's lib-name and lib-ver.
func (e *Engine) appendClientLine(b []byte, s *Session) []byte {
	num := func(k string, v int64) {
		b = append(b, k...)
		b = strconv.AppendInt(b, v, 10)
	}
	num("id=", int64(s.ID))
	b = append(b, " addr="...)
	b = append(b, s.conn.Addr...)
	b = append(b, " laddr="...)
	b = append(b, s.conn.LocalAddr...)
	fd := int64(s.conn.FD)
	if s.conn.Addr == "" {
		fd = -1
	}
	num(" fd=", fd)
	b = append(b, " name="...)
	b = append(b, s.name...)
	num(" age=", max(e.now-s.createdAt, 0)/1000)
	num(" idle=", max(e.now-s.lastAt, 0)/1000)
	b = append(b, " flags="...)
	flags := len(b)
	if s.monitor {
		b = append(b, 'O')
	}
	if s.replica != nil {
		b = append(b, 'S')
	}
	if s.pubsub { // after O/S and M, as Redis's catClientInfoString
		b = append(b, 'P')
	}
	if s.tx.on {
		b = append(b, 'x')
	}
	if s.waiting { // blocked on keys or in WAIT
		b = append(b, 'b')
	}
	if s.tx.dirty {
		b = append(b, 'd')
	}
	if s.unix {
		b = append(b, 'U')
	}
	if s.noEvict {
		b = append(b, 'e')
	}
	if s.noTouch {
		b = append(b, 'T')
	}
	if len(b) == flags {
		b = append(b, 'N')
	}
	num(" db=", int64(s.db))
	if s.sub == nil {
		b = append(b, " sub=0 psub=0 ssub=0"...)
	} else {
		num(" sub=", int64(len(s.sub.channels.names)))
		num(" psub=", int64(len(s.sub.patterns.names)))
		num(" ssub=", int64(len(s.sub.shard.names)))
	}
	multi := int64(-1)
	if s.tx.on {
		multi = int64(s.tx.n)
	}
	num(" multi=", multi)
	// The buffers, as the transport holds them (nil for the message
	// transports, whose rings hold none per client); argv-mem is the
	// words of the command being run, the caller's own.
	var cb ConnBuffers
	cb.Reading = true
	if s.conn.Buffers != nil {
		s.conn.Buffers(&cb)
	} else {
		cb.Mem = s.Buffered()
		if s.conn.Queued != nil { // a transport that tells only what it queued
			cb.ReplyMem = s.conn.Queued()
		}
	}
	argvMem := 0
	if s == e.caller {
		for _, w := range e.argv {
			argvMem += len(w)
		}
	}
	num(" qbuf=", int64(cb.QueryLen))
	num(" qbuf-free=", int64(cb.QueryFree))
	num(" argv-mem=", int64(argvMem))
	num(" multi-mem=", int64(cap(s.tx.buf)))
	num(" rbs=", int64(cb.ReplyCap))
	num(" rbp=", int64(cb.ReplyPeak))
	num(" obl=", int64(cb.ReplyLen))
	num(" oll=", int64(cb.ReplyBlocks))
	num(" omem=", int64(cb.ReplyMem))
	num(" tot-mem=", int64(cb.Mem+argvMem+cap(s.tx.buf)+cap(s.tx.keys)))
	b = append(b, " events="...)
	if cb.Reading {
		b = append(b, 'r')
	}
	if cb.Writing {
		b = append(b, 'w')
	}
	b = append(b, " cmd="...)
	if s.lastOp == command.OpNone {
		b = append(b, "NULL"...)
	} else {
		b = append(b, command.Name(s.lastOp)...)
	}
	b = append(b, " user="...)
	b = append(b, e.userName(s)...)
	b = append(b, " redir=-1"...)
	num(" resp=", 2+b2i(s.resp3))
	b = append(b, " lib-name="...)
	b = append(b, s.libName...)
	b = append(b, " lib-ver="...)
	return append(b, s.libVer...)
}

// clientKill answers CLIENT KILL addr (OK, or "No such client") and CLIENT
// KILL with filters (how many clients matched). Another client is closed
// through its transport when it can be, else when it next sends a request;
// the caller, when it matches, gets its reply first.
func (e *Engine) clientKill(s *Session, r *command.Request) {
	var id uint64
	var addr, laddr []byte
	skipMe := true
	ofType := 0 // TYPE: 1 normal, 2 pubsub, 3 replica (Redis's getClientType)
	if r.Flags&command.FlagKillAddr != 0 {
		addr, skipMe = r.Value, false
	}
	for i := 0; i+1 < len(r.Args); i += 2 {
		f, v := r.Args[i], r.Args[i+1]
		switch {
		case command.EqualFold(f, "id"):
			n, _ := strconv.ParseUint(string(v), 10, 64)
			id = n
		case command.EqualFold(f, "addr"):
			addr = v
		case command.EqualFold(f, "laddr"):
			laddr = v
		case command.EqualFold(f, "skipme"):
			skipMe = command.EqualFold(v, "yes")
		case command.EqualFold(f, "type"):
			switch {
			case command.EqualFold(v, "normal"):
				ofType = 1
			case command.EqualFold(v, "pubsub"):
				ofType = 2
			case command.EqualFold(v, "replica"), command.EqualFold(v, "slave"):
				ofType = 3
			default:
				id = ^uint64(0) // no master clients here: none matches
			}
		}
	}
	killed := 0
	for i := len(e.sessions) - 1; i >= 0; i-- { // backwards: Close moves the last session into i
		c := e.sessions[i]
		switch {
		case id != 0 && c.ID != id, addr != nil && string(addr) != c.conn.Addr,
			laddr != nil && string(laddr) != c.conn.LocalAddr, c == s && skipMe,
			ofType == 1 && (c.pubsub || c.replica != nil), ofType == 2 && !c.pubsub, ofType == 3 && c.replica == nil:
			continue
		}
		killed++
		if c == s {
			s.quit = true // after this reply
			continue
		}
		// Gone for the engine at once (CLIENT LIST, a second KILL), as in
		// Redis; the transport closes the connection when it can, else
		// the session refuses its next request.
		c.killed, c.quit = true, true // quit: the session serves nothing more
		if c.conn.Kill != nil {
			c.conn.Kill()
		}
		e.Close(c)
	}
	if r.Flags&command.FlagKillAddr != 0 {
		if killed == 0 {
			e.errText(command.Err, "ERR No such client")
			return
		}
		e.ok()
		return
	}
	e.integer(int64(killed))
}

func (e *Engine) clientNoEvict(s *Session, r *command.Request) {
	s.noEvict = r.Amount == 1
	e.ok()
}

func (e *Engine) clientNoTouch(s *Session, r *command.Request) {
	s.noTouch = r.Amount == 1
	s.recold()
	e.ok()
}

// clientPause answers CLIENT PAUSE timeout [WRITE|ALL]: socket clients'
// commands (every one, or those that write) wait until the timeout or
// CLIENT UNPAUSE, held by their transport (see Session.Hold).
func (e *Engine) clientPause(_ *Session, r *command.Request) {
	until := e.clock.NowMillis() + r.Amount
	if until > e.clientUntil || (e.pauseWrites && r.Flags&command.FlagPauseWrite == 0) {
		e.clientUntil = until
	}
	e.pauseWrites = r.Flags&command.FlagPauseWrite != 0
	e.refreshPause()
	e.ok()
}

// clientUnpause ends CLIENT PAUSE; a FAILOVER's pause of writes goes on
// (Redis keeps the two apart too).
func (e *Engine) clientUnpause(*Session, *command.Request) {
	e.clientUntil, e.pauseWrites = 0, false
	e.refreshPause()
	e.ok()
}

// clientReply answers CLIENT REPLY ON|OFF|SKIP: only ON is answered.
func (e *Engine) clientReply(s *Session, r *command.Request) {
	switch r.Amount {
	case command.ReplyOn:
		s.mute = 0
		e.ok()
	case command.ReplyOff:
		s.mute = -1
	case command.ReplySkip:
		s.mute = 2 // this command's reply and the next one's
	}
	s.recold()
}

func (e *Engine) clientGetRedir(*Session, *command.Request) { e.integer(-1) }

// clientTrackingInfo answers CLIENT TRACKINGINFO: tracking is always off.
func (e *Engine) clientTrackingInfo(*Session, *command.Request) {
	e.begin(command.Map)
	e.addBulkStr("flags")
	e.push(command.Set)
	e.addBulkStr("off")
	e.pop()
	e.addBulkStr("redirect")
	e.addInt(-1)
	e.addBulkStr("prefixes")
	e.push(command.Array)
	e.pop()
	e.end()
}

// clientTracking answers CLIENT TRACKING: goblin sends no invalidation
// messages, so ON is refused; OFF (its state already) is accepted.
func (e *Engine) clientTracking(_ *Session, r *command.Request) {
	if r.Amount == 1 {
		e.errText(command.Err, "ERR goblin does not support client-side caching (CLIENT TRACKING ON)")
		return
	}
	e.ok()
}

func (e *Engine) clientCaching(*Session, *command.Request) {
	e.errText(command.Err, "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled")
}

func (e *Engine) clientUnblock(_ *Session, r *command.Request) {
	for _, t := range e.sessions {
		if t.ID == uint64(r.Amount) && r.Amount > 0 {
			if e.unblockClient(t, command.EqualFold(r.Value, "error")) {
				e.integer(1)
				return
			}
			break
		}
	}
	e.integer(0)
}

func (e *Engine) clientSetInfo(s *Session, r *command.Request) {
	switch {
	case command.EqualFold(r.Key, "lib-name"):
		s.libName = append(s.libName[:0], r.Value...)
	case command.EqualFold(r.Key, "lib-ver"):
		s.libVer = append(s.libVer[:0], r.Value...)
	default:
		e.fail(command.Syntax, "ERR Unrecognized option '", r.Key, "'")
		return
	}
	e.ok()
}

var txtReset = []byte("RESET")

// reset answers RESET: the connection as it was on connecting (no
// transaction or watched keys, database 0, RESP2, no name, replies on, no
// MONITOR, and not authenticated when a password is required).
func (e *Engine) reset(s *Session, _ *command.Request) {
	e.endTx(s)
	e.stopMonitor(s)
	e.dropSubscriptions(s)
	s.db, s.resp3, s.name = 0, false, s.name[:0]
	s.mute, s.noTouch, s.readOnly = 0, false, false
	s.recold()
	s.user, s.authed = noUser, false
	e.resolve(s)
	e.simple(txtReset)
}
