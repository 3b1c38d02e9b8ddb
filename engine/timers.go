package engine

import (
	"math"
	"time"
)

// TimerSlack says how long, up to max, the server's loop may stay parked
// without delaying a timer of the engine's (server.LoopConfig.Timers, for
// the doze idle strategy's long parks): until the first blocked client's
// or WAIT's timeout, the end of a pause, or the next pass of a store's
// expiry sweep over its keys with a TTL (it rests 100 ms after each); 0
// (the loop keeps to its backoff's parks) while a sweep's pass is under
// way, a snapshot runs or is scheduled, or a FAILOVER is under way.
// The engine's other periodic work (the ops/sec sample, the save points'
// check, replication's PINGs and timeouts, the LRU clock) has a resolution
// of 100 ms or more, which a doze no longer than that keeps. Loop
// goroutine only; called before a long park, not on the request path.
func (e *Engine) TimerSlack(max time.Duration) time.Duration {
	if e.snap.job != nil || e.snap.scheduled || e.fo.state != foNone {
		return 0
	}
	now := e.clock.NowMillis()
	d := max
	for _, st := range e.dbs {
		if st == nil {
			continue
		}
		at := st.SweepAt()
		if at <= now {
			return 0 // a pass is under way
		}
		if at != math.MaxInt64 {
			d = min(d, time.Duration(at-now)*time.Millisecond)
		}
	}
	until := func(at int64) {
		if at != 0 && at != math.MaxInt64 {
			d = min(d, time.Duration(at-now)*time.Millisecond)
		}
	}
	until(e.pauseUntil)
	for _, s := range e.blocked {
		if s.block != nil {
			until(s.block.deadline)
		}
	}
	for _, s := range e.repl.waiters {
		until(s.waitUntil)
	}
	return d
}
