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
	readsWhenDown, fullCoverage string
}

func (f *clusterBusFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.readsWhenDown, "cluster-allow-reads-when-down", "no", "yes: while the cluster is down (cluster_state:fail) keep serving commands that only read; writes get -CLUSTERDOWN")
	fs.StringVar(&f.fullCoverage, "cluster-require-full-coverage", "yes", "yes: the cluster is down while any slot has no owner or a failed one; no: only the slots concerned are refused")
}

// apply sets o's cluster bus settings from the flags.
func (f *clusterBusFlags) apply(o *server.Options) error {
	for _, yn := range []struct {
		name, v string
		set     *bool
		yes     bool
	}{{"cluster-allow-reads-when-down", f.readsWhenDown, &o.ClusterAllowReadsWhenDown, true},
		{"cluster-require-full-coverage", f.fullCoverage, &o.ClusterPartialCoverage, false}} {
		switch strings.ToLower(yn.v) {
		case "yes":
			*yn.set = yn.yes
		case "no":
			*yn.set = !yn.yes
		default:
			return fmt.Errorf("--%s %q: want yes or no", yn.name, yn.v)
		}
	}
	return nil
}
