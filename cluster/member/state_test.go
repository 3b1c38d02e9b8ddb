package member

import (
	"testing"

	"github.com/goblin-kv/goblin/cluster/bus"
)

// TestMinorityMasterRejoinDelay: a master owning slots beside two other
// masters turns fail when both are PFAIL (a minority of one), and once
// they answer again stays fail for the rejoin delay (cluster-node-timeout
// 2000: 2 s) before it is ok, as clusterUpdateState does; a replica
// needs no delay.
func TestMinorityMasterRejoinDelay(t *testing.T) {
	c := newTestCluster(t, t.TempDir())
	defer c.Close()
	a, b := c.newNode(randomName(), bus.FlagMaster), c.newNode(randomName(), bus.FlagMaster)
	c.addNode(a)
	c.addNode(b)
	for s := range bus.Slots {
		c.setOwner(s, []*Node{c.myself, a, b}[s%3])
	}
	// A node given slots at once after its start is ok at once: no
	// slot owner known before is no minority.
	base := c.now
	c.now = base

	c.updateState()
	if !c.stateOK {
		t.Fatal("three reachable masters covering every slot: state fail")
	}
	a.flags |= bus.FlagPFail
	b.flags |= bus.FlagPFail
	c.now += 100
	c.updateState()
	if c.stateOK {
		t.Fatal("two of three masters PFAIL: state still ok")
	}
	a.flags &^= bus.FlagPFail
	b.flags &^= bus.FlagPFail
	for _, dt := range []int64{100, 1000, 1899} {
		c.now = base + 100 + dt
		c.updateState()
		if c.stateOK {
			t.Fatalf("%d ms after the minority ended: ok before the 2 s rejoin delay", dt)
		}
	}
	c.now = base + 100 + 2000
	c.updateState()
	if !c.stateOK {
		t.Fatal("2 s after the minority ended: still fail")
	}
	// A replica reports ok at once.
	a.flags |= bus.FlagPFail
	b.flags |= bus.FlagPFail
	c.now += 100
	c.updateState()
	c.myself.flags = bus.FlagMyself | bus.FlagSlave
	c.myself.master = a
	for s := range bus.Slots {
		if c.owner[s] == c.myself {
			c.setOwner(s, a)
		}
	}
	a.flags &^= bus.FlagPFail
	b.flags &^= bus.FlagPFail
	c.now += 100
	c.updateState()
	if !c.stateOK {
		t.Fatal("a replica back from a minority: not ok at once")
	}
}
