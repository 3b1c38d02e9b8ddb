package server

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

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
