package server

import (
	"log/slog"
	"time"
)

// Throttling password guesses. The engine counts a session's wrong
// passwords and returns after each (engine.Session.AuthFailures); the
// guard turns the count into a delay that the socket transport applies to
// that client alone (its further requests wait, the loop serves everyone
// else), and logs the failures.
//
// A client gets authFreeFailures wrong passwords without delay (a typo, a
// stale configuration), then waits authFirstDelay before its next request
// is served, doubling with each failure up to authMaxDelay. Because a
// guesser could open a new connection for every few guesses, the guard
// also counts failures across all clients: past authBurst in one second,
// every failing client waits at least a second whatever its own count.
const (
	authFreeFailures = 3
	authFirstDelay   = 100 * time.Millisecond
	authMaxDelay     = 5 * time.Second
	authBurst        = 20
	// authLogBurst is the most failures logged one by one per second; the
	// rest are summed up in one line per second.
	authLogBurst = 10
)

// authGuard is shared by every session of one server; the loop goroutine
// owns it.
type authGuard struct {
	log    *slog.Logger
	window time.Time // start of the current one-second window
	fails  int       // failures in the window, all clients
	logged int       // of which logged one by one
	total  int64     // failures since the start (metrics)
}

// failed records one more wrong password from a client of transport at
// addr ("" when the transport knows none; failures so far on its
// connection) and returns how long that client must wait before its next
// request is served.
func (g *authGuard) failed(transport, addr string, failures uint64) time.Duration {
	now := time.Now()
	if now.Sub(g.window) >= time.Second {
		if g.fails > g.logged {
			g.log.Warn("authentication failures not logged one by one", "count", g.fails-g.logged, "per_second_limit", authLogBurst)
		}
		g.window, g.fails, g.logged = now, 0, 0
	}
	g.fails++
	g.total++
	var delay time.Duration
	if failures > authFreeFailures {
		delay = min(authFirstDelay<<min(failures-authFreeFailures-1, 16), authMaxDelay)
	}
	if g.fails > authBurst {
		delay = max(delay, time.Second)
	}
	if g.logged < authLogBurst {
		g.logged++
		g.log.Warn("authentication failed: wrong password", "transport", transport, "client", addr, "failures_on_connection", failures, "delay", delay)
	}
	return delay
}
