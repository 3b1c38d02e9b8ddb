package server

import (
	"fmt"
	"net/http"
	"time"
)

// The health endpoints the metrics listener serves beside /metrics
// (docs/metrics.md): /healthz says whether the process should be left
// running, /readyz whether it should be sent requests. Both read atomics
// the loop and Shutdown write; neither touches the loop.

// stallAfter is how long the loop may go without a publish (it publishes
// every MetricsInterval, idle or busy) before /healthz calls it stalled.
func (s *Server) stallAfter() time.Duration {
	return max(2*time.Second, 20*s.opts.MetricsInterval)
}

// health reports the loop's state: ok, and a short reason for the body.
func (s *Server) health() (ok bool, why string) {
	last := s.lastPublish.Load()
	switch {
	case s.stopping.Load():
		return true, "shutting down"
	case last == 0:
		return true, "starting"
	}
	if age := time.Since(time.Unix(0, last)); age > s.stallAfter() {
		return false, fmt.Sprintf("the store loop has not completed a cycle for %v", age.Round(time.Millisecond))
	}
	return true, "ok"
}

// Healthy is /healthz's verdict for callers in the same process (the
// service manager's watchdog): false, with the reason, once the loop has
// stalled.
func (s *Server) Healthy() (ok bool, why string) { return s.health() }

// HealthHandler serves /healthz: 200 while the store loop cycles (or is
// starting or shutting down), 503 when it has stalled (a command or the
// machine holding it for longer than max(2s, 20 metrics intervals)).
func (s *Server) HealthHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok, why := s.health()
		reply(w, ok, why)
	})
}

// ReadyHandler serves /readyz: 200 once the listeners are bound and the
// loop cycles, 503 before that, during a shutdown, and when /healthz
// fails.
func (s *Server) ReadyHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok, why := s.health()
		switch {
		case why == "starting":
			ok, why = false, "starting: the store loop has not run yet"
		case why == "shutting down":
			ok = false
		case ok && s.loadingNow.Load():
			ok, why = false, "loading: the snapshot file is being loaded (clients get LOADING)"
		}
		reply(w, ok, why)
	})
}

func reply(w http.ResponseWriter, ok bool, why string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	fmt.Fprintln(w, why)
}
