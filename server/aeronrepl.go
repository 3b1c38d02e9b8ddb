package server

import (
	"crypto/tls"
	"fmt"
	"os"
	"strconv"

	"github.com/goblin-kv/goblin/engine"
	"github.com/goblin-kv/goblin/replica"
	"github.com/goblin-kv/goblin/replica/aeronsource"
	"github.com/goblin-kv/goblin/replica/forward"
	"github.com/goblin-kv/goblin/replication/aeronfeed"
)

// AeronReplication configures replication over one Aeron stream
// (docs/replication-aeron.md). The zero value turns it off.
type AeronReplication struct {
	// Channel, on a primary, is the channel its replication stream is
	// published on (--repl-aeron-channel); StatusChannel the one it reads
	// its Aeron replicas' positions from (--repl-aeron-status-channel).
	Channel, StatusChannel string
	// ReplicaChannel, on a replica, is the channel it receives its
	// primary's stream on (--replica-aeron-channel); ReplicaStatusChannel
	// where it sends its position (--replica-aeron-status-channel);
	// ReplicaName names it there (default host name:port).
	ReplicaChannel, ReplicaStatusChannel, ReplicaName string
	// StreamID is the stream's id on both sides (0: 1035; the status
	// stream is StreamID+1).
	StreamID int32
	// ForwardWrites, on a replica (--replica-forward-writes), forwards
	// its clients' writes to the primary and answers them once applied
	// here (package replica/forward) instead of refusing them (READONLY).
	ForwardWrites bool
}

// setupAeronReplication adds the Aeron publication of the stream (a
// primary's) and wraps the replica link in an Aeron source (a replica's);
// it adds the link, or the source, to the transports and returns what
// REPLICAOF drives.
func (s *Server) setupAeronReplication(l *replica.Link) (engine.ReplicaControl, error) {
	a := &s.opts.AeronReplication
	sid := a.StreamID
	if sid == 0 {
		sid = aeronfeed.DefaultStreamID
	}
	if a.Channel != "" {
		fwd := newAeronFwdRunner(s.engine) // aeronforward.go
		p, err := aeronfeed.NewPublisher(aeronfeed.PublisherOptions{
			Channel: a.Channel, StreamID: sid, StatusChannel: a.StatusChannel, StatusStreamID: sid + 1,
			Position: func() (string, int64) {
				st := s.engine.Replication()
				return st.ID, st.Offset
			},
			Standby: s.engine.IsReplica,
			Run:     fwd.run,
			Forget:  fwd.forget,
			Logger:  s.log,
		})
		if err != nil {
			return nil, fmt.Errorf("server: --repl-aeron-channel: %w", err)
		}
		s.engine.SetStreamTap(p)
		s.aeronPub = p
		defer func() { s.transports = append(s.transports, p) }() // after the link: offered in the cycle that fed it
	}
	if a.ReplicaChannel == "" {
		s.transports = append(s.transports, l)
		ctl, err := s.setupForward(l)
		if err != nil {
			return nil, err
		}
		s.engine.SetReplicaControl(ctl)
		return ctl, nil
	}
	name := a.ReplicaName
	if name == "" {
		host, _ := os.Hostname()
		name = host + ":" + s.tcpPort()
	}
	port, _ := strconv.Atoi(s.tcpPort())
	src, err := aeronsource.New(aeronsource.Options{
		Link: l, Apply: s.engine, Feed: s.engine.FeedUpstream,
		Channel: a.ReplicaChannel, StreamID: sid, StatusChannel: a.ReplicaStatusChannel, StatusStreamID: sid + 1,
		Name: name, ListeningPort: port, Logger: s.log,
	})
	if err != nil {
		if s.aeronPub != nil {
			s.aeronPub.Close()
		}
		return nil, fmt.Errorf("server: --replica-aeron-channel: %w", err)
	}
	s.aeronSrc = src
	s.transports = append(s.transports, src)
	ctl, err := s.setupForward(src)
	if err != nil {
		return nil, err
	}
	s.engine.SetReplicaControl(ctl)
	return ctl, nil
}

// setupForward installs the forwarder of writes (--replica-forward-writes)
// (its lines in INFO replication are the engine's to add) and returns ctl.
// CONFIG SET replica-forward-writes installs one later
// (aeronrepl_config.go).
func (s *Server) setupForward(ctl engine.ReplicaControl) (engine.ReplicaControl, error) {
	s.fwdCtl = ctl
	if !s.opts.AeronReplication.ForwardWrites {
		return ctl, nil
	}
	f, err := s.newForwarder()
	if err != nil {
		return nil, err
	}
	s.transports = append(s.transports, f)
	s.engine.SetWriteForwarder(f)
	return ctl, nil
}

// newForwarder starts a forwarder of writes for s.fwdCtl, over Aeron when
// its path can be (aeronforward.go), and keeps it in s.forwarder.
func (s *Server) newForwarder() (*forward.Forwarder, error) {
	ctl := s.fwdCtl
	var f *forward.Forwarder
	var tlsCfg *tls.Config
	if s.opts.TLSReplication {
		cfg, err := s.opts.TLS.OutgoingConfig()
		if err != nil {
			return nil, fmt.Errorf("%w: tls-replication: %w", ErrOptions, err)
		}
		tlsCfg = cfg
	}
	path := s.aeronForwardPath(ctl, func(seq uint64, offset int64, reply []byte) { f.Answer(seq, offset, reply) })
	f, err := forward.New(forward.Options{
		Aeron: path,
		Primary: func() (string, int, bool) {
			host, port, _, _ := ctl.Role()
			return host, port, host != ""
		},
		Applied: func() int64 {
			_, _, _, off := ctl.Role()
			return off
		},
		Done: s.engine.ForwardDone,
		User: s.opts.MasterUser, Password: s.opts.MasterAuth, TLS: tlsCfg,
		Logger: s.log,
	})
	if err != nil {
		return nil, fmt.Errorf("server: --replica-forward-writes: %w", err)
	}
	s.forwarder = f
	return f, nil
}

// aeronReplSource publishes replication over Aeron's counters: the
// primary's publication, the replica's source. Only the configured side's
// series exist (docs/replication-aeron.md lists them).
func (s *Server) aeronReplSource(m *Metrics) {
	if p := s.aeronPub; p != nil {
		offset := m.Gauge("repl_aeron_offset_bytes", "The stream offset published on the Aeron channel.", nil)
		offered := m.Counter("repl_aeron_offered_bytes_total", "Stream bytes offered on the Aeron channel.", nil)
		bp := m.Counter("repl_aeron_back_pressured_total", "Offers refused by flow control and retried on a later cycle.", nil)
		dropped := m.Counter("repl_aeron_dropped_bytes_total", "Stream bytes dropped past the pending limit (the replicas resynchronise).", nil)
		pending := m.Gauge("repl_aeron_pending_bytes", "Stream bytes waiting to be offered.", nil)
		replicas := m.Gauge("repl_aeron_replicas", "Aeron replicas whose status arrived in the last 10 s.", nil)
		lag := m.Gauge("repl_aeron_max_lag_bytes", "The largest distance between master_repl_offset and an Aeron replica's reported offset.", nil)
		var st aeronfeed.PublisherStats
		var reps []aeronfeed.AeronReplica
		m.Source(func() {
			p.Stats(&st)
			offset.Set(st.Offset)
			offered.Set(st.OfferedBytes)
			bp.Set(st.BackPressured)
			dropped.Set(st.DroppedBytes)
			pending.Set(st.Pending)
			replicas.Set(int64(st.Replicas))
			reps = p.Replicas(reps[:0])
			cur := s.engine.Replication().Offset
			var worst int64
			for _, r := range reps {
				worst = max(worst, cur-r.Offset)
			}
			lag.Set(worst)
		})
	}
	if src := s.aeronSrc; src != nil {
		live := m.Gauge("replica_aeron_live", "1 while this replica applies the Aeron stream (0: catching up over TCP).", nil)
		frames := m.Counter("replica_aeron_frames_total", "Frames received on the Aeron stream (heartbeats included).", nil)
		dups := m.Counter("replica_aeron_duplicates_total", "Frames, or parts, already applied and skipped.", nil)
		gaps := m.Counter("replica_aeron_gaps_total", "Gaps seen in the Aeron stream.", nil)
		handoffs := m.Counter("replica_aeron_handoffs_total", "Switches from the TCP catch-up to the Aeron stream.", nil)
		fallbacks := m.Counter("replica_aeron_fallbacks_total", "Switches back to TCP (gap, silence, new replication id).", nil)
		foreign := m.Counter("replica_aeron_foreign_frames_total", "Frames of another primary's stream on the same channel, ignored.", nil)
		resubs := m.Counter("replica_aeron_resubscribes_total", "Subscriptions replaced after a silence while catching up.", nil)
		applied := m.Counter("replica_aeron_applied_bytes_total", "Stream bytes applied from the Aeron stream.", nil)
		primary := m.Gauge("replica_aeron_primary_offset_bytes", "The newest stream offset the Aeron stream announced.", nil)
		var st aeronsource.Stats
		m.Source(func() {
			src.Stats(&st)
			live.Set(b2i64(st.Live))
			frames.Set(st.Frames)
			dups.Set(st.Duplicates)
			gaps.Set(st.Gaps)
			handoffs.Set(st.Handoffs)
			fallbacks.Set(st.Fallbacks)
			foreign.Set(st.Foreign)
			applied.Set(st.BytesApplied)
			resubs.Set(st.Resubscribes)
			primary.Set(st.PrimaryOffset)
		})
	}
}
