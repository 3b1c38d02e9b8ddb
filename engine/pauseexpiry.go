package engine

import "math"

// No key expiry while clients are paused, as Redis 7.0's
// checkClientPauseTimeoutAndReturnIfPaused in activeExpireCycle and
// expireIfNeeded: during CLIENT PAUSE (WRITE or ALL), FAILOVER's pause and
// a cluster manual failover's pause of a master (ClusterPause), a key
// whose time has passed reads as missing but is not deleted, and the
// active sweep rests. A deletion would change the data set (and the
// replication offset a manual failover's replica waits to reach) while
// writes are held. The stores' replica mode (store.SetKeepExpired) does
// exactly this, so a pause switches it on for a primary and the end of
// the pause puts back what replication wants.

// syncPauseExpiry follows pauseUntil: refreshPause calls it whenever a
// pause starts or ends.
func (e *Engine) syncPauseExpiry() {
	held := e.pauseUntil != 0 && !e.follow.on // a replica keeps expired keys anyway
	if held == e.expiryHeld {
		return
	}
	e.expiryHeld = held
	if held {
		e.keepExpired(true)
	} else {
		e.keepExpired(e.follow.on)
	}
}

// tickPause ends a pause whose time has passed when no request came to
// notice (held does it on the request path), so expiry resumes on time.
// Tick calls it once e.now is set.
func (e *Engine) tickPause() {
	if e.pauseUntil == 0 || e.pauseUntil == math.MaxInt64 || e.now < e.pauseUntil {
		return
	}
	e.endPauses(e.now)
}

// endPauses ends the pauses (CLIENT PAUSE's, a manual failover's) whose
// time has passed at now, for held and tickPause.
func (e *Engine) endPauses(now int64) {
	if now >= e.clientUntil {
		e.clientUntil, e.pauseWrites = 0, false
	}
	if now >= e.mfUntil {
		e.mfUntil = 0
	}
	e.refreshPause()
}
