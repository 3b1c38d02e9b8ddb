package server

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/goblin-kv/goblin/engine"
	"github.com/goblin-kv/goblin/redisconf"
)

// clusterParams are the cluster-* CONFIG GET/SET parameters, as Redis 7.0
// has them: cluster-enabled, cluster-config-file and cluster-port are
// immutable, every other one may be set at run time (checked against
// redis-server 7.0.15 by cluster/member's TestClusterConfig). Options
// hold the values; a CONFIG SET hands them to the running cluster bus
// and the engine's routing at once (loop goroutine). Outside
// --cluster-enabled they are only remembered, as Redis does.
func (s *Server) clusterParams() []engine.Param {
	o := &s.opts
	apply := func() {
		s.engine.SetClusterDownPolicy(o.ClusterAllowReadsWhenDown, !o.ClusterNoPubsubShardWhenDown)
		b := s.engine.ClusterBus()
		if b == nil {
			return
		}
		st := b.Settings()
		st.NodeTimeout = o.ClusterNodeTimeout
		st.ValidityFactor, st.MigrationBarrier = o.ClusterValidityFactor, o.ClusterMigrationBarrier
		st.ReplicaMigration, st.FullCoverage = !o.ClusterNoReplicaMigration, !o.ClusterPartialCoverage
		st.NoFailover = o.ClusterReplicaNoFailover
		st.AnnounceIP, st.AnnounceHostname = o.ClusterAnnounceIP, o.ClusterAnnounceHostname
		st.AnnouncePort, st.AnnounceBusPort, st.AnnounceTLSPort = o.ClusterAnnouncePort, o.ClusterAnnounceBusPort, o.ClusterAnnounceTLSPort
		b.SetSettings(st)
	}
	boolean := func(name string, p *bool, yes bool) engine.Param {
		return engine.YesNoParam(name, func() bool { return *p == yes }, func(b bool) { *p = b == yes; apply() })
	}
	integer := func(name string, p *int, lo, hi int) engine.Param {
		return engine.Param{Name: name, Get: func() string { return strconv.Itoa(*p) },
			Set: func(v string) error {
				n, err := intParam(v, int64(lo), int64(hi))
				if err == nil {
					*p = int(n)
					apply()
				}
				return err
			}}
	}
	str := func(name string, p *string) engine.Param {
		return engine.Param{Name: name, Get: func() string { return *p },
			Set: func(v string) error { *p = v; apply(); return nil }}
	}
	if o.ClusterPreferredEndpointType == "" {
		o.ClusterPreferredEndpointType = "ip"
	}
	configFile := o.ClusterConfigFile
	if configFile == "" {
		configFile = "nodes.conf"
	}
	const maxInt = 1<<31 - 1
	noFailover := boolean("cluster-replica-no-failover", &o.ClusterReplicaNoFailover, true)
	validity := integer("cluster-replica-validity-factor", &o.ClusterValidityFactor, 0, maxInt)
	return []engine.Param{
		{Name: "cluster-enabled", Get: func() string { return engine.YesNo(o.ClusterEnabled) }},
		{Name: "cluster-config-file", Get: func() string { return configFile }},
		{Name: "cluster-port", Get: func() string { return strconv.Itoa(o.ClusterPort) }},
		{Name: "cluster-node-timeout", Get: func() string {
			if o.ClusterNodeTimeout <= 0 {
				return "15000"
			}
			return strconv.FormatInt(o.ClusterNodeTimeout.Milliseconds(), 10)
		}, Set: func(v string) error {
			n, err := intParam(v, 0, math.MaxInt64) // Redis 7.0 takes 0 (the bus then uses its 15 s default)
			if err != nil {
				return err
			}
			o.ClusterNodeTimeout = time.Duration(n) * time.Millisecond
			apply()
			return nil
		}},
		validity,
		{Name: "cluster-slave-validity-factor", Get: validity.Get, Set: validity.Set},
		integer("cluster-migration-barrier", &o.ClusterMigrationBarrier, 0, maxInt),
		boolean("cluster-allow-replica-migration", &o.ClusterNoReplicaMigration, false),
		boolean("cluster-require-full-coverage", &o.ClusterPartialCoverage, false),
		noFailover,
		{Name: "cluster-slave-no-failover", Get: noFailover.Get, Set: noFailover.Set},
		boolean("cluster-allow-reads-when-down", &o.ClusterAllowReadsWhenDown, true),
		boolean("cluster-allow-pubsubshard-when-down", &o.ClusterNoPubsubShardWhenDown, false),
		str("cluster-announce-ip", &o.ClusterAnnounceIP),
		str("cluster-announce-hostname", &o.ClusterAnnounceHostname),
		integer("cluster-announce-port", &o.ClusterAnnouncePort, 0, 65535),
		integer("cluster-announce-bus-port", &o.ClusterAnnounceBusPort, 0, 65535),
		integer("cluster-announce-tls-port", &o.ClusterAnnounceTLSPort, 0, 65535),
		{Name: "cluster-link-sendbuf-limit", Get: func() string { return strconv.FormatInt(o.ClusterLinkSendbufLimit, 10) },
			Set: func(v string) error {
				n, err := redisconf.ParseMemory(v)
				if err != nil || n > 1<<63-1 {
					return errors.New("argument must be a memory value")
				}
				o.ClusterLinkSendbufLimit = int64(n)
				return nil
			}},
		{Name: "cluster-preferred-endpoint-type", Get: func() string { return o.ClusterPreferredEndpointType },
			Set: func(v string) error {
				switch v = strings.ToLower(v); v {
				case "ip", "hostname", "unknown-endpoint":
					o.ClusterPreferredEndpointType = v
					return nil
				}
				return errors.New("argument(s) must be one of the following: ip, hostname, unknown-endpoint")
			}},
	}
}
