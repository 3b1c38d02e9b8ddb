package engine

import (
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
)

// Forwarded writes (docs/replication-aeron.md, "Forwarded writes"): with a
// WriteForwarder installed, a write that a read-only replica would refuse
// with READONLY is handed to it instead, as the RESP command the client
// sent, and the client is parked as WAIT parks one (its reply muted, its
// further requests waiting their turn) until ForwardDone pushes the
// answer. Only a client that can be answered later is forwarded: one on a
// transport with Conn.Push (the sockets), speaking RESP, outside MULTI;
// every other write is refused with READONLY as before.

// WriteForwarder sends a replica's client's write to the primary. Every
// method runs on the loop goroutine.
type WriteForwarder interface {
	// Forward queues cmd (one RESP command, a copy the forwarder keeps)
	// for the primary, to run in database db and be answered in RESP3 if
	// resp3; the answer comes back through Engine.ForwardDone with s and
	// token. false: it cannot take it now (the client gets READONLY).
	Forward(s *Session, token uint64, db int, resp3 bool, cmd []byte) bool
}

// forwardState is the engine's side of forwarded writes. Loop goroutine
// only.
type forwardState struct {
	f      WriteForwarder
	next   uint64              // the last token handed out
	parked map[*Session]uint64 // parked clients and their token
	cmd    []byte              // scratch: the command re-encoded
}

// SetWriteForwarder installs f (nil removes it: writes to a read-only
// replica get READONLY again). Loop goroutine, or before the loop runs.
func (e *Engine) SetWriteForwarder(f WriteForwarder) {
	e.fwd.f = f
	if e.fwd.parked == nil {
		e.fwd.parked = make(map[*Session]uint64)
	}
}

// forward hands the RESP command being served (e.argv) to the forwarder
// and parks s; false when s's write cannot be forwarded.
func (e *Engine) forward(s *Session) bool {
	if e.fwd.f == nil || s.tx.on || e.inExec || s.conn.Push == nil || s.Protocol == proto.SBE ||
		len(e.argv) == 0 || s.waiting {
		return false
	}
	e.fwd.cmd = resp.AppendCommand(e.fwd.cmd[:0], e.argv...)
	e.fwd.next++
	if !e.fwd.f.Forward(s, e.fwd.next, s.db, s.resp3, e.fwd.cmd) {
		return false
	}
	e.fwd.parked[s] = e.fwd.next
	s.waiting, s.failedAuth = true, true // as WAIT: end this batch; the push of the answer offers the rest again
	e.muteReply(s)
	return true
}

// ForwardDone answers a forwarded write: reply (a whole RESP reply) goes
// to s's client and s is unparked, if s still waits for token (a client
// that closed meanwhile is forgotten). Loop goroutine.
func (e *Engine) ForwardDone(s *Session, token uint64, reply []byte) {
	if t, ok := e.fwd.parked[s]; !ok || t != token {
		return
	}
	delete(e.fwd.parked, s)
	s.waiting = false
	s.conn.Push(reply)
}

// dropForwarded forgets a parked client that closes.
func (e *Engine) dropForwarded(s *Session) {
	if _, ok := e.fwd.parked[s]; ok {
		delete(e.fwd.parked, s)
		s.waiting = false
	}
}

// forwarding reports whether s is parked on a forwarded write (CLIENT
// UNBLOCK leaves it: its answer is the primary's).
func (e *Engine) forwarding(s *Session) bool {
	_, ok := e.fwd.parked[s]
	return ok
}
