package member

import (
	"bytes"

	"github.com/goblin-kv/goblin/cluster/bus"
)

// Replica migration (cluster-migration-barrier), after Redis 7.0's
// clusterCron and clusterHandleSlaveMigration: a master serving slots
// whose replicas all failed, and which once had replicas (MIGRATE_TO), is
// orphaned; a replica of a master with the most working replicas (at
// least two) moves to it once it has been orphaned for 5 s, if its own
// master keeps more than cluster-migration-barrier working replicas and
// it has the smallest id among the replicas of such masters.

const migrationDelay = 5000 // ms, CLUSTER_SLAVE_MIGRATION_DELAY

// okReplicas counts n's replicas not flagged FAIL.
func okReplicas(n *Node) int {
	k := 0
	for _, r := range n.replicas {
		if !r.is(bus.FlagFail) {
			k++
		}
	}
	return k
}

// checkMigration is clusterCron's part: it finds whether a master is
// orphaned and whether my master has the most working replicas, and then
// lets handleMigration decide.
func (c *Cluster) checkMigration() {
	me := c.myself
	if !me.is(bus.FlagSlave) || me.master == nil {
		return
	}
	orphaned, maxReplicas, mine := 0, 0, 0
	for _, n := range c.nodes {
		if n == me || n.is(bus.FlagNoAddr|bus.FlagHandshake) || !n.is(bus.FlagMaster) || n.is(bus.FlagFail) {
			continue
		}
		ok := okReplicas(n)
		if ok == 0 && n.numSlots > 0 && n.is(bus.FlagMigrateTo) {
			orphaned++
		}
		maxReplicas = max(maxReplicas, ok)
		if me.master == n {
			mine = ok
		}
	}
	if orphaned > 0 && maxReplicas >= 2 && mine == maxReplicas && !c.o.NoReplicaMigration {
		c.handleMigration(maxReplicas)
	}
}

// handleMigration is clusterHandleSlaveMigration.
func (c *Cluster) handleMigration(maxReplicas int) {
	me := c.myself
	if !c.stateOK {
		return
	}
	ok := 0
	for _, r := range me.master.replicas {
		if !r.is(bus.FlagFail | bus.FlagPFail) {
			ok++
		}
	}
	if ok <= c.o.MigrationBarrier {
		return
	}
	var target *Node
	candidate := me
	for _, n := range c.sorted() {
		okN, orphan := 0, true
		if n.is(bus.FlagSlave) || n.is(bus.FlagFail) || !n.is(bus.FlagMigrateTo) {
			orphan = false
		}
		if n.is(bus.FlagMaster) {
			okN = okReplicas(n)
		}
		if okN > 0 {
			orphan = false
		}
		if orphan {
			if target == nil && n.numSlots > 0 {
				target = n
			}
			if n.orphanedTime == 0 {
				n.orphanedTime = c.now
			}
		} else {
			n.orphanedTime = 0
		}
		if okN == maxReplicas {
			for _, r := range n.replicas {
				if bytes.Compare(r.name[:], candidate.name[:]) < 0 {
					candidate = r
				}
			}
		}
	}
	if target != nil && candidate == me && c.now-target.orphanedTime > migrationDelay {
		c.log.Warn("migrating to orphaned master", "master", target.ID())
		c.setMyMaster(target)
		c.updateState()
		c.flush()
	}
}
