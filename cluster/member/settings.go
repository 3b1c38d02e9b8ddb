package member

import (
	"time"

	"github.com/goblin-kv/goblin/cluster/bus"
)

// Settings are the cluster-* directives CONFIG SET may change while the
// node runs (Redis 7.0 marks all of these MODIFIABLE_CONFIG; cluster-port,
// cluster-enabled and cluster-config-file are immutable and stay in
// Options).
type Settings struct {
	NodeTimeout      time.Duration // cluster-node-timeout
	ValidityFactor   int           // cluster-replica-validity-factor
	MigrationBarrier int           // cluster-migration-barrier
	ReplicaMigration bool          // cluster-allow-replica-migration
	FullCoverage     bool          // cluster-require-full-coverage
	// NoFailover is cluster-replica-no-failover: as a replica, never start
	// an automatic election (manual CLUSTER FAILOVER still may), and say
	// so to peers with the NOFAILOVER flag.
	NoFailover bool
	// AnnounceIP, AnnounceHostname, AnnouncePort, AnnounceBusPort and
	// AnnounceTLSPort are cluster-announce-*: 0 or "" announces the real
	// value. goblin has no plaintext/TLS port pair on the bus, so the TLS
	// port is kept for CONFIG GET only.
	AnnounceIP, AnnounceHostname                   string
	AnnouncePort, AnnounceBusPort, AnnounceTLSPort int
}

// Settings returns the running values. Loop goroutine.
func (c *Cluster) Settings() Settings {
	return Settings{NodeTimeout: c.o.NodeTimeout, ValidityFactor: c.o.ValidityFactor, MigrationBarrier: c.o.MigrationBarrier,
		ReplicaMigration: !c.o.NoReplicaMigration, FullCoverage: c.o.RequireFullCoverage == nil || *c.o.RequireFullCoverage,
		NoFailover: c.o.NoFailover, AnnounceIP: c.o.AnnounceIP, AnnounceHostname: c.o.AnnounceHostname,
		AnnouncePort: c.o.AnnouncePort, AnnounceBusPort: c.o.AnnounceBusPort, AnnounceTLSPort: c.o.AnnounceTLSPort}
}

// SetSettings applies s at once (CONFIG SET, on the loop goroutine): the
// next header, cron run and state check use the new values, as Redis's
// update hooks (updateClusterFlags, updateClusterAnnouncedPort, …) do.
func (c *Cluster) SetSettings(s Settings) {
	if s.NodeTimeout <= 0 {
		s.NodeTimeout = 15 * time.Second
	}
	full := s.FullCoverage
	c.o.NodeTimeout, c.o.ValidityFactor, c.o.MigrationBarrier = s.NodeTimeout, s.ValidityFactor, s.MigrationBarrier
	c.o.NoReplicaMigration, c.o.RequireFullCoverage, c.o.NoFailover = !s.ReplicaMigration, &full, s.NoFailover
	c.o.AnnounceIP, c.o.AnnounceHostname = s.AnnounceIP, s.AnnounceHostname
	c.o.AnnouncePort, c.o.AnnounceBusPort, c.o.AnnounceTLSPort = s.AnnouncePort, s.AnnounceBusPort, s.AnnounceTLSPort
	c.applyMyself()
	c.changed, c.dirty = true, true
	c.flush()
}

// applyMyself derives myself's announced address and flags from the
// options (deriveAnnouncedPorts, clusterUpdateMyselfFlags).
func (c *Cluster) applyMyself() {
	me := c.myself
	me.port, me.cport = c.o.Port, c.o.BusPort
	if c.o.AnnouncePort > 0 {
		me.port = c.o.AnnouncePort
	}
	if c.o.AnnounceBusPort > 0 {
		me.cport = c.o.AnnounceBusPort
	}
	if c.o.AnnounceIP != "" {
		me.ip = c.o.AnnounceIP
	}
	me.hostname = c.o.AnnounceHostname
	me.flags &^= bus.FlagNoFailover
	if c.o.NoFailover {
		me.flags |= bus.FlagNoFailover
	}
}
