package server

import (
	"strconv"

	"github.com/goblin-kv/goblin/engine"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/replica/forward"
	"github.com/goblin-kv/goblin/replication/aeronfeed"
)

// Forwarded writes over Aeron (docs/replication-aeron.md, "Forwarded
// writes"): the primary runs the writes its Aeron replicas forward
// (aeronfeed.Inbox) on a session of its own per replica and protocol, as
// a fresh connection would (the default user: where it needs a password
// the writes get NOAUTH, and such replicas forward over TCP anyway, see
// aeronForwardPath).

type aeronFwdKey struct {
	sender uint64
	resp3  bool
}

type aeronFwdSession struct {
	s  *engine.Session
	db int
}

// aeronFwdRunner is the primary's aeronfeed.RunFunc. Its sessions live as
// long as the inbox remembers their replica: the inbox's bound
// (aeronfeed.InboxSenders, least recent forgotten) bounds them too, as it
// calls forget. Loop goroutine.
type aeronFwdRunner struct {
	e        *engine.Engine
	sessions map[aeronFwdKey]*aeronFwdSession
	scratch  []byte
}

func newAeronFwdRunner(e *engine.Engine) *aeronFwdRunner {
	return &aeronFwdRunner{e: e, sessions: make(map[aeronFwdKey]*aeronFwdSession)}
}

func (r *aeronFwdRunner) session(sender uint64, resp3 bool) *aeronFwdSession {
	k := aeronFwdKey{sender, resp3}
	if fs := r.sessions[k]; fs != nil {
		return fs
	}
	fs := &aeronFwdSession{s: r.e.Open(proto.RESP, nil)}
	if resp3 {
		r.scratch = resp.AppendCommandString(r.scratch[:0], "HELLO", "3")
		r.e.ServeStream(fs.s, r.scratch, nil)
	}
	r.sessions[k] = fs
	return fs
}

func (r *aeronFwdRunner) close(k aeronFwdKey) {
	if fs := r.sessions[k]; fs != nil {
		r.e.Close(fs.s)
		delete(r.sessions, k)
	}
}

// forget closes sender's sessions (the inbox forgot it).
func (r *aeronFwdRunner) forget(sender uint64) {
	r.close(aeronFwdKey{sender, false})
	r.close(aeronFwdKey{sender, true})
}

// run implements aeronfeed.RunFunc.
func (r *aeronFwdRunner) run(sender uint64, db int, resp3 bool, cmd, out []byte) ([]byte, bool) {
	fs := r.session(sender, resp3)
	if fs.db != db {
		r.scratch = resp.AppendCommandString(r.scratch[:0], "SELECT", strconv.Itoa(db))
		_, rep, _ := r.e.ServeStream(fs.s, r.scratch, nil)
		if string(rep) != "+OK\r\n" {
			return append(out, rep...), false
		}
		fs.db = db
	}
	n, rep, closeConn := r.e.ServeStream(fs.s, cmd, out)
	if n == 0 && !closeConn {
		return out, true // held: CLIENT PAUSE, FAILOVER
	}
	if closeConn || len(rep) == len(out) {
		// A malformed command, QUIT, or no reply at all: start afresh.
		r.close(aeronFwdKey{sender, resp3})
		if len(rep) == len(out) {
			rep = append(rep, "-ERR forwarded write: the primary gave no reply to it\r\n"...)
		}
	}
	return rep, false
}

// aeronForwardPath returns the Aeron path of forwarded writes for ctl: an
// Aeron source with a status channel, unless the link to the primary
// uses TLS or a password (requests over Aeron are neither encrypted nor
// authenticated: those deployments stay on TCP). nil: TCP only.
func (s *Server) aeronForwardPath(ctl engine.ReplicaControl, onAnswer func(seq uint64, offset int64, reply []byte)) forward.AeronPath {
	src := s.aeronSrc
	if src == nil || ctl != engine.ReplicaControl(src) || s.opts.AeronReplication.ReplicaStatusChannel == "" ||
		s.opts.TLSReplication || s.opts.MasterAuth != "" {
		return nil
	}
	if err := src.EnableForwarding(onAnswer); err != nil {
		s.log.Warn("aeron replica: forwarded writes go over TCP: the Aeron path could not be set up", "err", err)
		return nil
	}
	return src
}

var _ aeronfeed.RunFunc = (*aeronFwdRunner)(nil).run
