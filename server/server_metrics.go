package server

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/goblin-kv/goblin/request"
	"github.com/goblin-kv/goblin/store"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/uds"
)

// setupMetrics declares every series and the sources that fill them. The
// sources run on the loop goroutine at publish time and read the
// loop-owned counters directly; see Metrics for the ordering.
func (s *Server) setupMetrics() {
	m := NewMetrics()
	s.metrics = m

	s.loopSource(m)
	s.limitSource(m)

	var st store.Stats
	keys := m.Gauge("keys", "Keys in the store (expired keys not yet reclaimed included).", nil)
	ttlKeys := m.Gauge("keys_with_ttl", "Keys with an expiry.", nil)
	expired := m.Counter("expired_keys_total", "Keys removed because their TTL passed.", nil)
	evicted := m.Counter("evicted_keys_total", "Keys removed by the maxmemory policy.", nil)
	hits := m.Counter("keyspace_hits_total", "Lookups that found a live key.", nil)
	misses := m.Counter("keyspace_misses_total", "Lookups that found nothing.", nil)
	oom := m.Counter("oom_rejects_total", "Writes refused because maxmemory was reached.", nil)
	used := m.Gauge("used_memory_bytes", "Bytes counted against maxmemory.", nil)
	maxmem := m.Gauge("maxmemory_bytes", "The maxmemory cap (0: none).", nil)
	arenaSize := m.Gauge("arena_size_bytes", "Bytes of all arena chunks.", nil)
	arenaLive := m.Gauge("arena_live_bytes", "Arena bytes in allocated blocks.", nil)
	arenaDead := m.Gauge("arena_dead_bytes", "Arena bytes in freed blocks awaiting reuse or compaction.", nil)
	arenaMoves := m.Counter("arena_reclaim_steps_total", "Blocks moved by incremental arena compaction.", nil)
	arenaPages := m.Counter("arena_pages_freed_total", "Arena pages emptied by compaction.", nil)
	m.Source(func() {
		s.store.Stats(&st)
		keys.Set(st.Keys)
		ttlKeys.Set(st.KeysWithTTL)
		expired.Set(st.Expired)
		evicted.Set(st.Evicted)
		hits.Set(st.Hits)
		misses.Set(st.Misses)
		oom.Set(st.OOMRejects)
		used.Set(st.UsedMemory)
		maxmem.Set(st.MaxMemory)
		arenaSize.Set(st.ArenaSize)
		arenaLive.Set(st.ArenaLive)
		arenaDead.Set(st.ArenaDead)
		arenaMoves.Set(st.ArenaMoves)
		arenaPages.Set(st.ArenaPagesFreed)
	})

	for _, ss := range s.streams {
		streamSource(m, ss)
	}
	// Listeners with the same name (two Unix sockets speaking RESP, say)
	// share their series: the sources add them up.
	var names []string
	byName := map[string][]transport.Server{}
	for _, t := range s.transports {
		if _, seen := byName[t.Name()]; !seen {
			names = append(names, t.Name())
		}
		byName[t.Name()] = append(byName[t.Name()], t)
	}
	for _, name := range names {
		tr, pr, _ := strings.Cut(name, "/")
		labels := prometheus.Labels{"transport": tr, "protocol": pr}
		clients := m.Gauge("connected_clients", "Clients connected now.", labels)
		var socks []*uds.Server
		for _, t := range byName[name] {
			if u, ok := t.(*uds.Server); ok {
				socks = append(socks, u)
			}
		}
		if len(socks) > 0 {
			socketSource(m, socks, labels)
		}
		m.Source(func() {
			n := 0
			for _, t := range byName[name] {
				n += t.Clients()
			}
			clients.Set(int64(n))
		})
	}

	s.registry = prometheus.NewRegistry()
	s.registry.MustRegister(m, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

// limitSource exports the server-wide defences against hostile clients:
// the socket clients' memory budget and the password guard.
func (s *Server) limitSource(m *Metrics) {
	used := m.Gauge("client_memory_bytes", "Bytes all socket clients hold in buffers now.", nil)
	peak := m.Gauge("client_memory_peak_bytes", "The most all socket clients held in buffers at once.", nil)
	limit := m.Gauge("client_memory_limit_bytes", "The --maxmemory-clients limit (0: none).", nil)
	released := m.Counter("client_memory_released_bytes_total", "Bytes of client buffers freed (disconnects, idle clients), returned to the OS after a while.", nil)
	authFails := m.Counter("auth_failures_total", "Wrong passwords sent by clients.", nil)
	var st uds.BudgetStats
	m.Source(func() {
		s.budget.Stats(&st)
		used.Set(st.Used)
		peak.Set(st.Peak)
		limit.Set(s.budget.Limit)
		released.Set(st.Released)
		authFails.Set(s.auth.total)
	})
}

func (s *Server) loopSource(m *Metrics) {
	it := m.Counter("loop_iterations_total", "Duty cycles the store loop ran.", nil)
	busy := m.Counter("loop_busy_iterations_total", "Duty cycles that did work.", nil)
	idle := m.Seconds("loop_idle_seconds_total", "Time the loop spent in cycles that did no work (parks included).", nil)
	parks := m.Counter("loop_parks_total", "Bounded waits the backoff idle strategy took.", nil)
	tick := m.Counter("store_maintenance_steps_total", "Store maintenance work done by the loop (expiry, compaction, rehash).", nil)
	m.Source(func() {
		st := &s.loop.stats
		it.Set(st.Iterations)
		busy.Set(st.Busy)
		idle.Set(st.IdleNanos)
		parks.Set(st.Parks)
		tick.Set(st.TickWork)
	})
}

// streamSource exports one transport's command counters.
func streamSource(m *Metrics, ss streamStats) {
	tr, pr, _ := strings.Cut(ss.name, "/")
	type opSeries struct {
		op int
		s  Series
	}
	var ops []opSeries
	for op := range request.NumOps {
		name := request.Name(request.Op(op))
		if op == int(request.OpNone) {
			name = "unknown"
		}
		if name == "" {
			continue
		}
		ops = append(ops, opSeries{op, m.Counter("requests_total", "Requests executed, by transport, protocol and command.",
			prometheus.Labels{"transport": tr, "protocol": pr, "command": name})})
	}
	labels := prometheus.Labels{"transport": tr, "protocol": pr}
	errs := m.Counter("errors_total", "Error replies (protocol errors included).", labels)
	perrs := m.Counter("protocol_errors_total", "Malformed requests that closed their connection.", labels)
	st := ss.stats
	m.Source(func() {
		for _, o := range ops {
			o.s.Set(int64(st.Commands[o.op]))
		}
		errs.Set(int64(st.Errors))
		perrs.Set(int64(st.ProtocolErrors))
	})
}

// socketSource exports the socket listeners' own counters, summed.
func socketSource(m *Metrics, socks []*uds.Server, labels prometheus.Labels) {
	with := func(k, v string) prometheus.Labels {
		l := prometheus.Labels{k: v}
		for lk, lv := range labels {
			l[lk] = lv
		}
		return l
	}
	accepted := m.Counter("accepted_clients_total", "Clients accepted.", labels)
	rejected := m.Counter("rejected_clients_total", "Clients refused because maxclients was reached.", labels)
	slow := m.Counter("disconnects_total", "Clients disconnected by the server, by reason.", with("reason", "slow_consumer"))
	big := m.Counter("disconnects_total", "Clients disconnected by the server, by reason.", with("reason", "input_too_large"))
	idle := m.Counter("disconnects_total", "Clients disconnected by the server, by reason.", with("reason", "idle_timeout"))
	evicted := m.Counter("disconnects_total", "Clients disconnected by the server, by reason.", with("reason", "client_memory"))
	deferred := m.Counter("deferred_serves_total", "Times a client's requests waited for the next loop pass at --client-output-per-pass.", labels)
	buffered := m.Gauge("client_buffer_bytes", "Bytes this listener's clients hold in buffers (counted against --maxmemory-clients).", labels)
	in := m.Counter("received_bytes_total", "Bytes read from clients.", labels)
	out := m.Counter("sent_bytes_total", "Bytes written to clients.", labels)
	checks := m.Counter("socket_checks_total", "epoll_wait calls made by the loop for this listener.", labels)
	var one, sum uds.Stats
	m.Source(func() {
		sum = uds.Stats{}
		for _, u := range socks {
			u.Stats(&one)
			sum.Accepted += one.Accepted
			sum.Rejected += one.Rejected
			sum.SlowConsumers += one.SlowConsumers
			sum.InputTooLarge += one.InputTooLarge
			sum.IdleTimeouts += one.IdleTimeouts
			sum.BytesIn += one.BytesIn
			sum.BytesOut += one.BytesOut
			sum.EpollChecks += one.EpollChecks
			sum.Evicted += one.Evicted
			sum.Deferred += one.Deferred
			sum.Buffered += one.Buffered
		}
		accepted.Set(sum.Accepted)
		rejected.Set(sum.Rejected)
		slow.Set(sum.SlowConsumers)
		big.Set(sum.InputTooLarge)
		idle.Set(sum.IdleTimeouts)
		in.Set(sum.BytesIn)
		out.Set(sum.BytesOut)
		checks.Set(sum.EpollChecks)
		evicted.Set(sum.Evicted)
		deferred.Set(sum.Deferred)
		buffered.Set(sum.Buffered)
	})
}
