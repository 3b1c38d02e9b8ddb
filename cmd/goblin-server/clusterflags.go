package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/goblin-kv/goblin/redisconf"
	"github.com/goblin-kv/goblin/server"
)

// clusterBusFlags are the cluster bus's behaviour settings, named as
// Redis's directives (docs/cluster.md).
type clusterBusFlags struct {
	readsWhenDown, fullCoverage, replicaMigration string
	validityFactor, migrationBarrier              int
	noFailover, shardWhenDown, endpointType       string
	announcePort, announceBusPort, announceTLS    int
	sendbufLimit                                  string
}

func (f *clusterBusFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.readsWhenDown, "cluster-allow-reads-when-down", "no", "yes: while the cluster is down (cluster_state:fail) keep serving commands that only read; writes get -CLUSTERDOWN")
	fs.IntVar(&f.validityFactor, "cluster-replica-validity-factor", 10, "a replica whose primary has been silent longer than repl-ping-replica-period + cluster-node-timeout × this `factor` does not stand in an automatic election; 0: always may")
	fs.IntVar(&f.migrationBarrier, "cluster-migration-barrier", 1, "a replica moves to an orphaned primary only if its own primary keeps more than this `number` of working replicas")
	fs.StringVar(&f.replicaMigration, "cluster-allow-replica-migration", "yes", "no: replicas never move to an orphaned primary, and a primary that loses its last slot does not become a replica of the node that took it")
	fs.StringVar(&f.fullCoverage, "cluster-require-full-coverage", "yes", "yes: the cluster is down while any slot has no owner or a failed one; no: only the slots concerned are refused")
	fs.StringVar(&f.noFailover, "cluster-replica-no-failover", "no", "yes: as a replica, never start an automatic failover election (CLUSTER FAILOVER still works); peers see the nofailover flag")
	fs.StringVar(&f.shardWhenDown, "cluster-allow-pubsubshard-when-down", "yes", "no: while the cluster is down, SSUBSCRIBE/SPUBLISH get -CLUSTERDOWN as well")
	fs.IntVar(&f.announcePort, "cluster-announce-port", 0, "client `port` announced on the cluster bus; 0: the real one")
	fs.IntVar(&f.announceBusPort, "cluster-announce-bus-port", 0, "bus `port` announced on the cluster bus; 0: the real one")
	fs.IntVar(&f.announceTLS, "cluster-announce-tls-port", 0, "TLS client `port` to announce (kept for CONFIG GET: goblin announces one client port)")
	fs.StringVar(&f.sendbufLimit, "cluster-link-sendbuf-limit", "0", "`bytes` (kept for CONFIG GET: goblin caps each bus link's outbox on its own)")
	fs.StringVar(&f.endpointType, "cluster-preferred-endpoint-type", "ip", "ip, hostname or unknown-endpoint (kept for CONFIG GET: CLUSTER SLOTS shows the ip)")
}

// apply sets o's cluster bus settings from the flags.
func (f *clusterBusFlags) apply(o *server.Options) error {
	for _, yn := range []struct {
		name, v string
		set     *bool
		yes     bool
	}{{"cluster-allow-reads-when-down", f.readsWhenDown, &o.ClusterAllowReadsWhenDown, true},
		{"cluster-require-full-coverage", f.fullCoverage, &o.ClusterPartialCoverage, false},
		{"cluster-allow-replica-migration", f.replicaMigration, &o.ClusterNoReplicaMigration, false},
		{"cluster-replica-no-failover", f.noFailover, &o.ClusterReplicaNoFailover, true},
		{"cluster-allow-pubsubshard-when-down", f.shardWhenDown, &o.ClusterNoPubsubShardWhenDown, false}} {
		switch strings.ToLower(yn.v) {
		case "yes":
			*yn.set = yn.yes
		case "no":
			*yn.set = !yn.yes
		default:
			return fmt.Errorf("--%s %q: want yes or no", yn.name, yn.v)
		}
	}
	if f.validityFactor < 0 || f.migrationBarrier < 0 {
		return fmt.Errorf("--cluster-replica-validity-factor %d and --cluster-migration-barrier %d must not be negative", f.validityFactor, f.migrationBarrier)
	}
	o.ClusterValidityFactor, o.ClusterMigrationBarrier = f.validityFactor, f.migrationBarrier
	for _, p := range []struct {
		name string
		v    int
	}{{"cluster-announce-port", f.announcePort}, {"cluster-announce-bus-port", f.announceBusPort}, {"cluster-announce-tls-port", f.announceTLS}} {
		if p.v < 0 || p.v > 65535 {
			return fmt.Errorf("--%s %d: want 0 to 65535", p.name, p.v)
		}
	}
	switch f.endpointType {
	case "ip", "hostname", "unknown-endpoint":
	default:
		return fmt.Errorf("--cluster-preferred-endpoint-type %q: want ip, hostname or unknown-endpoint", f.endpointType)
	}
	limit, err := redisconf.ParseMemory(f.sendbufLimit)
	if err != nil {
		return fmt.Errorf("--cluster-link-sendbuf-limit %q: want a memory value", f.sendbufLimit)
	}
	o.ClusterAnnouncePort, o.ClusterAnnounceBusPort, o.ClusterAnnounceTLSPort = f.announcePort, f.announceBusPort, f.announceTLS
	o.ClusterLinkSendbufLimit, o.ClusterPreferredEndpointType = int64(limit), f.endpointType
	return nil
}
