package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/goblin-kv/goblin/server"
)

// clusterBusFlags are the cluster bus's behaviour settings, named as
// Redis's directives (docs/cluster.md).
type clusterBusFlags struct {
	readsWhenDown, fullCoverage, replicaMigration string
	validityFactor, migrationBarrier              int
}

func (f *clusterBusFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.readsWhenDown, "cluster-allow-reads-when-down", "no", "yes: while the cluster is down (cluster_state:fail) keep serving commands that only read; writes get -CLUSTERDOWN")
	fs.IntVar(&f.validityFactor, "cluster-replica-validity-factor", 10, "a replica whose primary has been silent longer than repl-ping-replica-period + cluster-node-timeout × this `factor` does not stand in an automatic election; 0: always may")
	fs.IntVar(&f.migrationBarrier, "cluster-migration-barrier", 1, "a replica moves to an orphaned primary only if its own primary keeps more than this `number` of working replicas")
	fs.StringVar(&f.replicaMigration, "cluster-allow-replica-migration", "yes", "no: replicas never move to an orphaned primary, and a primary that loses its last slot does not become a replica of the node that took it")
	fs.StringVar(&f.fullCoverage, "cluster-require-full-coverage", "yes", "yes: the cluster is down while any slot has no owner or a failed one; no: only the slots concerned are refused")
}

// apply sets o's cluster bus settings from the flags.
func (f *clusterBusFlags) apply(o *server.Options) error {
	for _, yn := range []struct {
		name, v string
		set     *bool
		yes     bool
	}{{"cluster-allow-reads-when-down", f.readsWhenDown, &o.ClusterAllowReadsWhenDown, true},
		{"cluster-require-full-coverage", f.fullCoverage, &o.ClusterPartialCoverage, false},
		{"cluster-allow-replica-migration", f.replicaMigration, &o.ClusterNoReplicaMigration, false}} {
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
	return nil
}
