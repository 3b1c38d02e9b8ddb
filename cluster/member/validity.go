package member

import "time"

// tooOld is the data-age check of clusterHandleSlaveFailover: a replica
// whose link to its master has been silent for longer than
// repl-ping-replica-period + cluster-node-timeout ×
// cluster-replica-validity-factor (beyond the node timeout it took to
// flag the master FAIL) holds data too old to stand in an automatic
// election. A factor of 0 always allows it; manual failovers skip this.
func (c *Cluster) tooOld() bool {
	if c.o.ValidityFactor <= 0 || c.o.MasterDataAge == nil {
		return false
	}
	timeout := c.o.NodeTimeout.Milliseconds()
	age := c.o.MasterDataAge().Milliseconds()
	if age > timeout {
		age -= timeout
	}
	var ping int64
	if c.o.ReplPingPeriod != nil {
		ping = c.o.ReplPingPeriod().Milliseconds()
	}
	limit := ping + timeout*int64(c.o.ValidityFactor)
	if age <= limit {
		return false
	}
	if c.now-c.tooOldLogged > 10_000 {
		c.tooOldLogged = c.now
		c.log.Warn("currently unable to failover: my data is too old to replace my master (cluster-replica-validity-factor)",
			"data_age_ms", age, "limit_ms", limit)
	}
	return true
}

// SetMasterDataAge sets Options.MasterDataAge (the replication link is
// made before the bus, or after it).
func (c *Cluster) SetMasterDataAge(f func() time.Duration) { c.o.MasterDataAge = f }
