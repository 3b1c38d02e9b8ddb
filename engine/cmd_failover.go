package engine

import (
	"strconv"
	"strings"
	"time"

	"github.com/goblin-kv/goblin/command"
)

// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms]: Redis 6.2's
// coordinated failover (replication.c failoverCommand,
// updateFailoverStatus, abortFailover). The primary pauses its clients'
// writes, waits until a replica (the one named, or the first whose
// acknowledged offset reaches master_repl_offset) has every byte of the
// stream, then follows it, sending PSYNC with a fourth argument FAILOVER:
// the replica promotes itself on it and answers +CONTINUE under its new
// id. The pause ends when the replica answered (the paused writes then
// meet a replica: READONLY), or when the failover is aborted (FAILOVER
// ABORT, the timeout without FORCE, the replica refusing the PSYNC). With
// FORCE the primary fails over to the named replica when the timeout
// passes, caught up or not.
//
// While the failover pauses writes no PING goes into the stream and no
// REPLCONF GETACK either: both advance master_repl_offset, which the
// replica's offset must reach. The replica's own ACK, every second, is
// what moves the failover on.

// The failover states, as INFO's master_failover_state names them.
const (
	foNone       = iota // no-failover
	foWaitSync          // waiting-for-sync: writes paused, waiting for a replica's ACK
	foInProgress        // failover-in-progress: following the replica, PSYNC FAILOVER sent
)

var foStateNames = [...]string{"no-failover", "waiting-for-sync", "failover-in-progress"}

// failoverHold is how long a paused write waits before it is offered
// again: the failover's end is not known in advance.
const failoverHold = 10 * time.Millisecond

// failoverState is FAILOVER's state; loop goroutine only.
type failoverState struct {
	state int
	host  string // the target replica, once known
	port  int64
	endAt int64 // unix ms when TIMEOUT passes, 0: no timeout
	force bool
}

// pausesWrites reports whether a failover holds writes back: from the
// command until it ends, both states.
func (f *failoverState) pausesWrites() bool { return f.state != foNone }

// FailoverControl is a ReplicaControl that can follow a primary for
// FAILOVER (package replica's Link): PSYNC carries the FAILOVER argument,
// and done is called on the loop when the new primary answered it (nil
// for +CONTINUE or +FULLRESYNC, the refusal otherwise). Connection
// failures are retried as for any link; the failover waits meanwhile.
type FailoverControl interface {
	FollowFailover(host string, port int, done func(error))
}

// failover answers FAILOVER, with Redis 7.0's checks in Redis's order and
// its error texts.
func (e *Engine) failover(_ *Session, r *command.Request) {
	if e.cl != nil {
		e.errText(command.Err, "ERR FAILOVER not allowed in cluster mode.")
		return
	}
	a := r.Args
	if len(a) == 1 && command.EqualFold(a[0], "abort") {
		if e.fo.state == foNone {
			e.errText(command.Err, "ERR No failover in progress.")
			return
		}
		e.abortFailover("Failover manually aborted")
		e.ok()
		return
	}
	var timeout, port int64
	var host []byte
	hasHost, force := false, false
	for j := 0; j < len(a); j++ {
		switch {
		case command.EqualFold(a[j], "timeout") && j+1 < len(a) && timeout == 0:
			n, err := strconv.ParseInt(string(a[j+1]), 10, 64)
			if err != nil {
				e.errText(command.NotInteger, "ERR value is not an integer or out of range")
				return
			}
			if n <= 0 {
				e.errText(command.Err, "ERR FAILOVER timeout must be greater than 0")
				return
			}
			timeout = n
			j++
		case command.EqualFold(a[j], "to") && j+2 < len(a) && !hasHost:
			n, err := strconv.ParseInt(string(a[j+2]), 10, 64)
			if err != nil {
				e.errText(command.NotInteger, "ERR value is not an integer or out of range")
				return
			}
			host, port, hasHost = a[j+1], n, true
			j += 2
		case command.EqualFold(a[j], "force") && !force:
			force = true
		default:
			e.errText(command.Syntax, "ERR syntax error")
			return
		}
	}
	switch {
	case e.fo.state != foNone:
		e.errText(command.Err, "ERR FAILOVER already in progress.")
		return
	case e.follow.on:
		e.errText(command.Err, "ERR FAILOVER is not valid when server is a replica.")
		return
	case len(e.repl.replicas) == 0:
		e.errText(command.Err, "ERR FAILOVER requires connected replicas.")
		return
	case force && (timeout == 0 || !hasHost):
		e.errText(command.Err, "ERR FAILOVER with force option requires both a timeout and target HOST and IP.")
		return
	}
	if hasHost {
		rp := e.findReplica(string(host), port)
		if rp == nil {
			e.errText(command.Err, "ERR FAILOVER target HOST and PORT is not a replica.")
			return
		}
		if rp.state != replOnline {
			e.errText(command.Err, "ERR FAILOVER target replica is not online.")
			return
		}
	}
	if _, ok := e.o.Replica.Control.(FailoverControl); !ok {
		e.errText(command.Err, "ERR FAILOVER needs the TCP replication link, which this server was started without")
		return
	}
	e.fo = failoverState{state: foWaitSync, force: force}
	if hasHost {
		e.fo.host, e.fo.port = string(host), port
		e.o.Persistence.Log.Info("FAILOVER requested", "to", e.fo.host, "port", port)
	} else {
		e.o.Persistence.Log.Info("FAILOVER requested to any replica")
	}
	if timeout > 0 {
		e.fo.endAt = e.clock.NowMillis() + timeout
	}
	e.refreshPause()
	e.ok()
}

// findReplica returns the replica known by host and port (REPLCONF
// ip-address or its connection's address, and REPLCONF listening-port),
// nil when none is.
func (e *Engine) findReplica(host string, port int64) *replica {
	for _, rp := range e.repl.replicas {
		if strings.EqualFold(host, replicaIP(rp.s)) && port == rp.s.rconf.port {
			return rp
		}
	}
	return nil
}

// updateFailover moves a waiting failover on (Tick): it aborts it or,
// with FORCE, fails over when the timeout passed, and fails over as soon
// as the target (or, without one, any online replica) acknowledged
// master_repl_offset.
func (e *Engine) updateFailover() {
	f := &e.fo
	if f.state != foWaitSync {
		return
	}
	now := e.clock.NowMillis()
	if f.endAt != 0 && f.endAt <= now {
		if f.force {
			e.o.Persistence.Log.Info("FAILOVER time out exceeded, failing over", "to", f.host, "port", f.port)
			e.failoverTo()
			return
		}
		e.abortFailover("Replica never caught up before timeout")
		return
	}
	off := e.repl.hist.Offset
	var rp *replica
	if f.host != "" {
		rp = e.findReplica(f.host, f.port)
	} else {
		for _, x := range e.repl.replicas {
			if x.state == replOnline && x.ackOff == off {
				rp = x
				f.host, f.port = replicaIP(x.s), x.s.rconf.port
				break
			}
		}
	}
	if rp != nil && rp.state == replOnline && rp.ackOff == off {
		e.o.Persistence.Log.Info("failover target is synced, failing over", "to", f.host, "port", f.port, "offset", off)
		e.failoverTo()
	}
}

// failoverTo follows the target with PSYNC FAILOVER, offering this
// node's own history so the promoted replica answers +CONTINUE.
func (e *Engine) failoverTo() {
	f := &e.fo
	f.state = foInProgress
	ctl := e.o.Replica.Control
	if h, ok := ctl.(historySetter); ok {
		st := e.repl.hist
		h.SetHistory(st.ID, st.Offset, st.ID2, st.SecondOffset)
	}
	ctl.(FailoverControl).FollowFailover(f.host, int(f.port), e.failoverDone)
	e.SetReplica(true)
}

// failoverDone is the target's answer to PSYNC FAILOVER (the link calls
// it on the loop): the failover ends, or is aborted when refused.
func (e *Engine) failoverDone(err error) {
	if e.fo.state != foInProgress {
		return
	}
	if err != nil {
		e.o.Persistence.Log.Warn("failover target refused the PSYNC", "err", err)
		e.abortFailover("Failover target rejected psync request")
		return
	}
	e.o.Persistence.Log.Info("failover succeeded: following the new primary", "host", e.fo.host, "port", e.fo.port)
	e.clearFailover()
}

// abortFailover ends a failover that did not complete: a node already
// following its target becomes a primary again (under a new replication
// id, as REPLICAOF NO ONE), and writes resume.
func (e *Engine) abortFailover(reason string) {
	if e.fo.state == foNone {
		return
	}
	e.o.Persistence.Log.Warn("FAILOVER aborted", "to", e.fo.host, "port", e.fo.port, "reason", reason)
	if e.fo.state == foInProgress && e.follow.on {
		if ctl := e.o.Replica.Control; ctl != nil {
			ctl.Unfollow()
		}
		e.SetReplica(false)
	}
	e.clearFailover()
}

func (e *Engine) clearFailover() {
	e.fo = failoverState{}
	e.refreshPause()
}

// failoverInfo is INFO's master_failover_state value.
func (e *Engine) failoverInfo() string { return foStateNames[e.fo.state] }

// psyncFailover handles PSYNC's fourth argument FAILOVER on this node:
// its primary hands it the primary role (Redis's syncCommand). The id
// must be this node's; then it stops following (its ids shift as a
// promotion's) and the PSYNC goes on as from any replica. It reports
// false after answering an error.
func (e *Engine) psyncFailover(s *Session, id []byte) bool {
	if string(id) != e.repl.hist.ID {
		e.errText(command.Err, "ERR PSYNC FAILOVER replid must match my replid.")
		return false
	}
	if e.follow.on {
		if ctl := e.o.Replica.Control; ctl != nil {
			ctl.Unfollow()
		}
		e.SetReplica(false)
		e.o.Persistence.Log.Info("MASTER MODE enabled (failover request)", "from", s.conn.Addr)
	}
	return true
}

func init() { handlers[command.OpFailover] = (*Engine).failover }
