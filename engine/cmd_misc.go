package engine

import (
	"strconv"
	"strings"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/resp"
)

// time answers TIME: unix seconds and microseconds, as bulk strings.
func (e *Engine) time(*Session, *command.Request) {
	now := wallClock()
	e.begin(command.Array)
	e.addBulkInt(now.Unix())
	e.addBulkInt(int64(now.Nanosecond() / 1000))
	e.end()
}

// wait answers WAIT numreplicas timeout: no replica acknowledges anything,
// so 0, at once (Redis would wait out the timeout for numreplicas > 0).

func (e *Engine) functionFlush(*Session, *command.Request) { e.ok() }

// scriptKill answers SCRIPT KILL as an idle Redis does: goblin runs no
// scripts (redis-sentinel sends it to an instance that answered BUSY).
func (e *Engine) scriptKill(*Session, *command.Request) {
	e.errText(command.Err, "NOTBUSY No scripts in execution right now.")
}

// functionList answers FUNCTION LIST: no libraries.
func (e *Engine) functionList(*Session, *command.Request) {
	e.begin(command.Array)
	e.end()
}

// MONITOR: a monitoring session receives every command executed after
// it, as Redis prints them, through its transport's Conn.Push. With no
// monitor the cost per command is one length check (feedMonitors is not
// called).

func (e *Engine) monitor(s *Session, _ *command.Request) {
	if s.conn.Push == nil {
		e.errText(command.Err, "ERR MONITOR needs a socket connection (this transport cannot send to a client out of turn)")
		return
	}
	if !s.monitor {
		s.monitor = true
		e.monitors = append(e.monitors, s)
		e.rehot()
	}
	e.ok()
}

// stopMonitor takes s off the monitors (RESET, Close).
func (e *Engine) stopMonitor(s *Session) {
	if !s.monitor {
		return
	}
	s.monitor = false
	for i, m := range e.monitors {
		if m == s {
			e.monitors = append(e.monitors[:i], e.monitors[i+1:]...)
			e.rehot()
			break
		}
	}
}

// feedMonitors sends r, which session s just ran, to every monitor:
// +<unix seconds.micros> [<db> <addr>] "name" "arg" ..., each argument
// quoted as Redis quotes them. args are the command as the client sent it
// (RESP); without them (SBE) the request is shown in Redis syntax, its
// name in lower case. Admin commands are not shown, as in Redis.
func (e *Engine) feedMonitors(s *Session, r *command.Request, args [][]byte) {
	spec := command.Lookup(r.Op)
	if spec == nil || spec.Flags&command.Admin != 0 || r.Op == command.OpExec {
		return
	}
	words := args
	if words == nil {
		w, err := e.monEnc.Words(r)
		if err != nil {
			return
		}
		words = w
	}
	now := wallClock()
	b := append(e.monBuf[:0], '+')
	b = strconv.AppendInt(b, now.Unix(), 10)
	b = append(b, '.')
	us := now.Nanosecond() / 1000
	for d := 100000; d > 1; d /= 10 {
		if us < d {
			b = append(b, '0')
		}
	}
	b = strconv.AppendInt(b, int64(us), 10)
	b = append(b, " ["...)
	b = strconv.AppendInt(b, int64(s.db), 10)
	b = append(b, ' ')
	switch {
	case s.unix: // Redis names the server's socket
		b = append(b, "unix:"...)
		b = append(b, strings.TrimSuffix(s.conn.LocalAddr, ":0")...)
	case s.conn.Addr != "":
		b = append(b, s.conn.Addr...)
	default:
		b = append(b, "goblin"...)
	}
	b = append(b, ']')
	for i, w := range words {
		if args == nil && (i == 0 || (spec.Container != command.OpNone && i == 1)) {
			w = lowerWord(w)
		}
		b = append(b, ' ')
		b = resp.AppendQuoted(b, w)
	}
	b = append(b, '\r', '\n')
	e.monBuf = b
	for _, m := range e.monitors {
		if m != s {
			m.conn.Push(b)
		}
	}
}

// lowerWord lower-cases a command name for MONITOR (Redis shows the name
// as the client sent it; the request keeps no such spelling, so goblin
// shows it in lower case).
func lowerWord(w []byte) []byte {
	out := make([]byte, len(w))
	for i, c := range w {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}
