package server

import (
	"fmt"
	"github.com/goblin-kv/goblin/internal/buildinfo"
	"runtime"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/engine"
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
	s.replicaSource(m) // replication, replica side
	// Replication over Aeron (aeronrepl.go).
	s.aeronReplSource(m)
	s.forwardSource(m) // forward_metrics.go

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

	s.replicationSource(m)
	s.persistenceSource(m)

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
		listenerSource(m, byName[name])
	}
	s.latencySource(m)
	buildInfo(m)
	s.aeronCounterSource(m)

	s.registry = prometheus.NewRegistry()
	s.registry.MustRegister(m, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

// persistenceSource exports the snapshot state an operator alerts on: a
// failing save, or changes that have waited too long for one.
func (s *Server) persistenceSource(m *Metrics) {
	var st engine.PersistenceStats
	changes := m.Gauge("rdb_changes_since_last_save", "Writes since the last successful snapshot (INFO rdb_changes_since_last_save).", nil)
	inProgress := m.Gauge("rdb_bgsave_in_progress", "1 while a background save runs.", nil)
	lastOK := m.Gauge("rdb_last_bgsave_ok", "1 when the last background save succeeded (or none ran), 0 when it failed (INFO rdb_last_bgsave_status).", nil)
	lastSave := m.Gauge("rdb_last_save_timestamp_seconds", "Unix time of the last successful save (at start: the start time, as Redis's LASTSAVE).", nil)
	saves := m.Counter("rdb_saves_total", "Snapshots written since the start (INFO rdb_saves).", nil)
	m.Source(func() {
		s.engine.PersistenceStats(&st)
		changes.Set(st.ChangesSinceSave)
		inProgress.Set(b2i64(st.SaveInProgress))
		lastOK.Set(b2i64(st.LastSaveOK))
		lastSave.Set(st.LastSave)
		saves.Set(st.Saves)
	})
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
	rests := m.Counter("loop_rests_total", "Waits the loop took between a background save's slices (bgsave-loop-rest).", nil)
	tick := m.Counter("store_maintenance_steps_total", "Store maintenance work done by the loop (expiry, compaction, rehash).", nil)
	m.Source(func() {
		st := &s.loop.stats
		it.Set(st.Iterations)
		busy.Set(st.Busy)
		idle.Set(st.IdleNanos)
		parks.Set(st.Parks)
		rests.Set(st.Rests)
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
	for op := range command.NumOps {
		name := command.Name(command.Op(op))
		if op == int(command.OpNone) {
			name = "unknown"
		}
		if name == "" {
			continue
		}
		ops = append(ops, opSeries{op, m.SparseCounter("requests_total", "Requests executed, by transport, protocol and command (a command's series appears once it is first seen).",
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

// listenerSource exports the families every transport reports through
// transport.StatsReporter, summed over the listeners of one name, and the
// socket listeners' own counters besides.
func listenerSource(m *Metrics, ls []transport.Server) {
	tr, pr, _ := strings.Cut(ls[0].Name(), "/")
	labels := prometheus.Labels{"transport": tr, "protocol": pr}
	clients := m.Gauge("connected_clients", "Clients connected now.", labels)
	accepted := m.Counter("accepted_clients_total", "Clients accepted.", labels)
	rejected := m.Counter("rejected_clients_total", "Clients refused (maxclients reached, a failed handshake).", labels)
	var reasons [transport.NumDisconnectReasons]Series
	for r := range reasons {
		reasons[r] = m.Counter("disconnects_total", "Clients gone, by reason.",
			with(labels, "reason", transport.DisconnectReason(r).String()))
	}
	queued := m.Gauge("client_buffer_bytes", "Bytes this listener holds for its clients now: replies not yet sent, partial requests (the outbox depth).", labels)
	in := m.Counter("received_bytes_total", "Request bytes received.", labels)
	out := m.Counter("sent_bytes_total", "Reply bytes sent.", labels)
	var sum transport.Stats
	m.Source(func() {
		sum = transport.Stats{}
		for _, l := range ls {
			l.UpdateStats(&sum)
		}
		clients.Set(sum.Clients)
		accepted.Set(sum.Connects)
		rejected.Set(sum.Rejected)
		for r, n := range sum.Disconnects {
			reasons[r].Set(n)
		}
		queued.Set(sum.Queued)
		in.Set(sum.BytesIn)
		out.Set(sum.BytesOut)
	})
	var socks []*uds.Server
	for _, l := range ls {
		if u, ok := l.(*uds.Server); ok {
			socks = append(socks, u)
		}
	}
	if len(socks) > 0 {
		socketSource(m, socks, labels)
	}
}

// with returns labels plus k=v.
func with(labels prometheus.Labels, k, v string) prometheus.Labels {
	l := prometheus.Labels{k: v}
	for lk, lv := range labels {
		l[lk] = lv
	}
	return l
}

// socketSource exports the socket listeners' own counters, summed: those
// no other transport has.
func socketSource(m *Metrics, socks []*uds.Server, labels prometheus.Labels) {
	deferred := m.Counter("deferred_serves_total", "Times a client's requests waited for the next loop pass at --client-output-per-pass.", labels)
	checks := m.Counter("socket_checks_total", "epoll_wait calls made by the loop for this listener.", labels)
	var one uds.Stats
	m.Source(func() {
		var d, c int64
		for _, u := range socks {
			u.Stats(&one)
			d += one.Deferred
			c += one.EpollChecks
		}
		deferred.Set(d)
		checks.Set(c)
	})
}

// latencySource exports each command's latency histogram, which the
// engine fills from the calls it times (one in engine.LatencySampling).
func (s *Server) latencySource(m *Metrics) {
	type opHist struct {
		op    command.Op
		h     *Histogram
		timed uint64 // the engine's count at the last publish
	}
	var ops []opHist
	for op := range command.NumOps {
		name := command.Name(command.Op(op))
		if name == "" || op == int(command.OpNone) {
			continue
		}
		ops = append(ops, opHist{op: command.Op(op), h: m.Histogram("command_duration_seconds",
			fmt.Sprintf("Time the loop spent executing a command, from one call in %d.", engine.LatencySampling),
			prometheus.Labels{"command": name}, engine.LatencyBounds())})
	}
	var counts [engine.LatencyBuckets]uint64
	m.Source(func() {
		// Most commands are never called: only the histograms that moved
		// since the last publish are copied (a publish stalls the loop).
		for i := range ops {
			o := &ops[i]
			if n := s.engine.CommandTimed(o.op); n != o.timed {
				o.timed = n
				sum := s.engine.CommandLatency(o.op, &counts)
				o.h.Set(counts[:], sum)
			}
		}
	})
}

// buildInfo exports goblin_build_info, 1, labelled with what built it.
func buildInfo(m *Metrics) {
	in := buildinfo.Read()
	version, revision := in.Version, in.Revision
	if revision == "" {
		revision = "unknown"
	}
	m.Gauge("build_info", "1, labelled with goblin's version and revision, the Go version and the Redis version goblin reports.",
		prometheus.Labels{"version": version, "revision": revision, "goversion": runtime.Version(), "redis_version": engine.DefaultVersion}).Set(1)
}

// replicationSource publishes the primary side of replication: replicas,
// the stream offset, how far the replicas are behind, and the syncs.
func (s *Server) replicationSource(m *Metrics) {
	var rs engine.ReplicationStats
	connected := m.Gauge("connected_replicas", "Replicas connected (INFO connected_slaves), syncing ones included.", nil)
	online := m.Gauge("online_replicas", "Replicas receiving the command stream.", nil)
	offset := m.Gauge("master_repl_offset_bytes", "Bytes of replication stream produced (INFO master_repl_offset).", nil)
	lagBytes := m.Gauge("replica_lag_bytes", "The largest distance, in stream bytes, between master_repl_offset and an online replica's acknowledged offset.", nil)
	lagSecs := m.Gauge("replica_ack_age_seconds", "The age of the oldest last acknowledgement among online replicas (INFO's lag), in seconds.", nil)
	full := m.Counter("sync_full_total", "Full resynchronisations served (INFO sync_full).", nil)
	partialOK := m.Counter("sync_partial_ok_total", "PSYNCs continued from the backlog (INFO sync_partial_ok).", nil)
	partialErr := m.Counter("sync_partial_err_total", "PSYNCs that could not continue and got a full sync (INFO sync_partial_err).", nil)
	m.Source(func() {
		s.engine.ReplicationStats(&rs)
		connected.Set(int64(rs.ConnectedReplicas))
		online.Set(int64(rs.OnlineReplicas))
		offset.Set(rs.Offset)
		lagBytes.Set(rs.MaxLagBytes)
		lagSecs.Set(rs.MaxLagSeconds)
		full.Set(rs.SyncFull)
		partialOK.Set(rs.SyncPartialOK)
		partialErr.Set(rs.SyncPartialErr)
	})
}
