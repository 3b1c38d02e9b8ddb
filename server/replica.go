package server

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/goblin-kv/goblin/engine"
	"github.com/goblin-kv/goblin/replica"
)

// The replica side of replication: the link to a primary (package
// replica) is one more transport the loop polls, and the engine's
// REPLICAOF drives it (docs/replication.md, "Running goblin as a
// replica").

// ParseReplicaOf reads replicaof's value, "host port".
func ParseReplicaOf(v string) (host string, port int, err error) {
	f := strings.Fields(v)
	if len(f) != 2 {
		return "", 0, fmt.Errorf("%w: replicaof %q: want \"host port\"", ErrOptions, v)
	}
	p, err := strconv.Atoi(f[1])
	if err != nil || p <= 0 || p > 65535 {
		return "", 0, fmt.Errorf("%w: replicaof %q: the port must be 1 to 65535", ErrOptions, v)
	}
	return f[0], p, nil
}

// setupReplica makes the link to a primary, adds it to the transports and
// hands it to the engine; with Options.ReplicaOf it starts following.
func (s *Server) setupReplica() error {
	port, _ := strconv.Atoi(s.tcpPort())
	l, err := replica.New(replica.Options{
		Apply:           s.engine,
		ListeningPort:   port,
		MasterAuth:      s.opts.MasterAuth,
		MasterUser:      s.opts.MasterUser,
		Timeout:         s.opts.ReplTimeout,
		SkipUnsupported: s.opts.SkipUnsupported,
		ReadOnly:        !s.opts.WritableReplica,
		Priority:        s.repl.priority,
		NeverPromote:    s.repl.neverPromote,
		AnnounceIP:      s.repl.announceIP,
		AnnouncePort:    s.repl.announcePort,
		Hidden:          s.repl.hidden,
		Logger:          s.log,
		// Chained replication: what the link applies goes on, unchanged,
		// to this node's backlog and its own replicas, under the top
		// primary's id and offsets.
		Feed: s.engine.FeedUpstream,
		OnFullSync: func(replid string, offset int64) {
			s.engine.Replication().Adopt(replid, offset)
		},
		OnContinue: func(replid string) { s.engine.Replication().ChangeID(replid) },
	})
	if err != nil {
		return fmt.Errorf("server: replication link: %w", err)
	}
	if s.opts.TLSReplication {
		cfg, err := s.opts.TLS.OutgoingConfig()
		if err != nil {
			l.Close()
			return fmt.Errorf("%w: tls-replication: %w", ErrOptions, err)
		}
		l.SetTLS(cfg)
	}
	s.link = l
	ctl, err := s.setupAeronReplication(l) // aeronrepl.go: the link alone, or behind an Aeron source
	if err != nil {
		l.Close()
		return err
	}
	if s.opts.ReplicaOf != "" {
		host, port, err := ParseReplicaOf(s.opts.ReplicaOf)
		if err != nil {
			return err
		}
		ctl.Follow(host, port)
		s.engine.SetReplica(true)
	}
	return nil
}

// replTimeoutChanged is CONFIG SET repl-timeout for the replica side:
// the running link takes the new timeout at once (loop goroutine).
func (s *Server) replTimeoutChanged(seconds int64) {
	s.opts.ReplTimeout = time.Duration(seconds) * time.Second
	if s.link != nil {
		o := s.link.Settings()
		o.Timeout = s.opts.ReplTimeout
		s.link.SetSettings(o)
	}
}

// replicaSettings are the replica side's CONFIG parameters that the link
// reads; they are kept here too so CONFIG GET answers before the link exists.
type replicaSettings struct {
	priority     int
	neverPromote bool
	announceIP   string
	announcePort int
	hidden       bool
	disklessLoad string // repl-diskless-load: kept for CONFIG GET and REWRITE (goblin loads as the RDB arrives, whatever the value)
}

// replicaParams are the replica side's CONFIG GET/SET parameters, Redis's
// names (docs/replication.md).
func (s *Server) replicaParams() []engine.Param {
	r := &s.repl
	if r.priority == 0 && !r.neverPromote {
		r.priority = replica.DefaultPriority
	}
	if r.disklessLoad == "" {
		r.disklessLoad = "disabled"
	}
	sync := func() { // hand the link the new values (loop goroutine: CONFIG SET runs there)
		if s.link == nil {
			return
		}
		o := s.link.Settings()
		o.MasterUser, o.MasterAuth = s.opts.MasterUser, s.opts.MasterAuth
		o.ReadOnly = !s.opts.WritableReplica
		o.Priority, o.NeverPromote = r.priority, r.neverPromote
		o.AnnounceIP, o.AnnouncePort, o.Hidden = r.announceIP, r.announcePort, r.hidden
		s.link.SetSettings(o)
	}
	str := func(name string, p *string) engine.Param {
		return engine.Param{Name: name, Get: func() string { return *p }, Set: func(v string) error { *p = v; sync(); return nil }}
	}
	return []engine.Param{
		str("masterauth", &s.opts.MasterAuth),
		str("masteruser", &s.opts.MasterUser),
		str("replica-announce-ip", &r.announceIP),
		{Name: "replica-announce-port", Get: func() string { return strconv.Itoa(r.announcePort) }, Set: func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 65535 {
				return errors.New("argument must be between 0 and 65535 inclusive")
			}
			r.announcePort = n
			sync()
			return nil
		}},
		{Name: "replica-priority", Get: func() string {
			if r.neverPromote {
				return "0"
			}
			return strconv.Itoa(r.priority)
		}, Set: func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > math.MaxInt32 {
				return errors.New("argument must be between 0 and 2147483647 inclusive")
			}
			r.neverPromote = n == 0
			if n > 0 {
				r.priority = n
			}
			sync()
			return nil
		}},
		engine.YesNoParam("replica-announced", func() bool { return !r.hidden }, func(b bool) { r.hidden = !b; sync() }),
		engine.YesNoParam("replica-read-only", func() bool { return !s.opts.WritableReplica }, func(b bool) {
			s.opts.WritableReplica = !b
			s.engine.SetReplicaReadOnly(b)
			sync()
		}),
		engine.YesNoParam("replica-serve-stale-data", func() bool { return !s.opts.NoStaleData }, func(b bool) {
			s.opts.NoStaleData = !b
			s.engine.SetReplicaServeStale(b)
		}),
		{Name: "repl-diskless-load", Get: func() string { return r.disklessLoad }, Set: func(v string) error {
			switch v = strings.ToLower(v); v {
			case "disabled", "on-empty-db", "swapdb":
				r.disklessLoad = v
				return nil
			}
			return errors.New("argument(s) must be one of the following: disabled, on-empty-db, swapdb")
		}},
	}
}

// replicaSource publishes the link's state and offsets.
func (s *Server) replicaSource(m *Metrics) {
	up := m.Gauge("replica_link_up", "1 while this server follows a primary and its link is up (replicaof).", nil)
	syncing := m.Gauge("replica_sync_in_progress", "1 while a full resynchronisation from the primary is transferred or loaded.", nil)
	offset := m.Gauge("replica_offset_bytes", "The replication offset applied: stream bytes of the primary applied here.", nil)
	readOff := m.Gauge("replica_read_offset_bytes", "The replication offset received (applied and not yet applied).", nil)
	lastIO := m.Gauge("replica_last_io_unix_seconds", "When the primary last sent a byte (unix seconds; 0: never).", nil)
	full := m.Counter("replica_full_syncs_total", "Full resynchronisations loaded from the primary.", nil)
	partial := m.Counter("replica_partial_syncs_total", "Partial resynchronisations (+CONTINUE) accepted by the primary.", nil)
	losses := m.Counter("replica_link_losses_total", "Times the link to the primary broke after being up.", nil)
	syncMs := m.add("replica_last_full_sync_seconds", "How long the last full resynchronisation took, transfer and load.", prometheus.GaugeValue, 1e-3, nil)
	m.Source(func() {
		st := s.link.Stats()
		up.Set(b2i64(st.LinkUp))
		syncing.Set(b2i64(st.Syncing))
		offset.Set(max(st.Offset, 0))
		readOff.Set(max(st.ReadOffset, 0))
		lastIO.Set(st.LastIOMillis / 1000)
		full.Set(st.FullSyncs)
		partial.Set(st.PartialSyncs)
		losses.Set(st.LinkLosses)
		syncMs.Set(st.SyncMillis)
	})
}

func b2i64(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
