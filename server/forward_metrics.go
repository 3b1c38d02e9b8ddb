package server

import (
	"github.com/goblin-kv/goblin/replica/forward"
	"github.com/goblin-kv/goblin/replication/aeronfeed"
)

// forwardSource publishes forwarded writes' counters: a forwarding
// replica's (--replica-forward-writes), and the primary's inbox of writes
// forwarded over Aeron. Only the configured side's series exist
// (docs/replication-aeron.md lists them).
func (s *Server) forwardSource(m *Metrics) {
	if f := s.forwarder; f != nil {
		sent := m.Counter("replica_forwarded_writes_total", "Writes this replica forwarded to its primary (Aeron and TCP).", nil)
		aeron := m.Counter("replica_forwarded_aeron_total", "Forwarded writes sent over Aeron.", nil)
		fallbacks := m.Counter("replica_forwarded_tcp_fallbacks_total", "Forwarded writes sent over TCP because the Aeron path was not up.", nil)
		answered := m.Counter("replica_forwarded_answered_total", "Forwarded writes answered after this replica applied them.", nil)
		failed := m.Counter("replica_forwarded_failed_total", "Forwarded writes that got no answer from the primary (an error was returned).", nil)
		lagged := m.Counter("replica_forwarded_lagged_total", "Forwarded writes the primary ran but this replica did not apply in time (TRYAGAIN).", nil)
		inFlight := m.Gauge("replica_forwarded_in_flight", "Clients parked on a forwarded write.", nil)
		var st forward.Stats
		m.Source(func() {
			f.Stats(&st)
			sent.Set(st.Forwarded)
			aeron.Set(st.OverAeron)
			fallbacks.Set(st.TCPFallbacks)
			answered.Set(st.Answered)
			failed.Set(st.Failed)
			lagged.Set(st.Lagged)
			inFlight.Set(int64(st.InFlight))
		})
	}
	if p := s.aeronPub; p != nil {
		requests := m.Counter("repl_aeron_forwarded_requests_total", "Forwarded writes received over Aeron (repeats included).", nil)
		ran := m.Counter("repl_aeron_forwarded_ran_total", "Forwarded writes run (each once).", nil)
		repeated := m.Counter("repl_aeron_forwarded_repeated_total", "Repeated forwarded writes answered again without running.", nil)
		var st aeronfeed.PublisherStats
		m.Source(func() {
			p.Stats(&st)
			requests.Set(st.Inbox.Requests)
			ran.Set(st.Inbox.Ran)
			repeated.Set(st.Inbox.Repeated)
		})
	}
}
