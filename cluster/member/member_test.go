package member

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/cluster"
	"github.com/goblin-kv/goblin/cluster/bus"
	"github.com/goblin-kv/goblin/internal/monotime"
)

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func newTestCluster(t testing.TB, dir string) *Cluster {
	t.Helper()
	c, err := New(Options{Port: freePort(t), BusPort: freePort(t), BindHost: "127.0.0.1",
		ConfigFile: filepath.Join(dir, "nodes.conf"), NodeTimeout: 2 * time.Second}, cluster.NewEmpty())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// pollUntil polls every cluster, as the server's loop would, until cond
// holds.
func pollUntil(t *testing.T, what string, cond func() bool, cs ...*Cluster) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		for _, c := range cs {
			c.Poll(monotime.Now())
		}
		time.Sleep(time.Millisecond)
	}
}

// TestHandshakeInProcess: two Clusters in one process, polled like the
// loop polls them, complete a MEET handshake and agree on each other's
// slots; the engine's State follows; nodes.conf is rewritten; under
// -race this exercises the reader, writer and dial goroutines against
// the polling goroutine.
func TestHandshakeInProcess(t *testing.T) {
	a, b := newTestCluster(t, t.TempDir()), newTestCluster(t, t.TempDir())
	defer a.Close()
	defer b.Close()
	if err := a.AddSlots([]int{0, 1, 2}); err != nil {
		t.Fatal(err)
	}
	if err := b.AddSlots([]int{3}); err != nil {
		t.Fatal(err)
	}
	if err := a.AddSlots([]int{2}); err == nil || Message(err) != "Slot 2 is already busy" {
		t.Errorf("ADDSLOTS of a busy slot: %v", err)
	}
	if err := a.Meet("127.0.0.1", b.o.Port, b.o.BusPort); err != nil {
		t.Fatal(err)
	}
	known := func(c *Cluster, id string) bool {
		n := c.lookup(id)
		return n != nil && !n.is(bus.FlagHandshake) && n.link != nil && n.numSlots > 0
	}
	pollUntil(t, "both nodes knowing the other with its slots", func() bool {
		return known(a, b.Myself()) && known(b, a.Myself())
	}, a, b)
	if st := a.state; st.Owner(3) < 0 || st.Nodes()[st.Owner(3)].ID != b.Myself() {
		t.Errorf("a's State: slot 3 owned by %d, want b", st.Owner(3))
	}
	conf, _ := os.ReadFile(a.o.ConfigFile)
	if !strings.Contains(string(conf), b.Myself()+" 127.0.0.1:") || !strings.Contains(string(conf), " connected 3\n") {
		t.Errorf("a's nodes.conf does not list b with slot 3:\n%s", conf)
	}
	// Distinct config epochs after the collision rule.
	pollUntil(t, "distinct config epochs", func() bool {
		return a.myself.configEpoch != b.myself.configEpoch
	}, a, b)
	if err := a.Forget(b.Myself()); err != nil {
		t.Fatal(err)
	}
	if a.lookup(b.Myself()) != nil || a.state.Owner(3) >= 0 {
		t.Error("FORGET left b or its slot")
	}
}

// TestPingAllocs: handling a PING with gossip from a known node, and
// answering it with a PONG, allocates nothing.
func TestPingAllocs(t *testing.T) {
	c := newTestCluster(t, t.TempDir())
	defer c.Close()
	peer, other := c.newNode(randomName(), bus.FlagMaster), c.newNode(randomName(), bus.FlagMaster)
	peer.ip, peer.port, peer.cport = "127.0.0.1", 1, 2
	other.ip, other.port, other.cport = "127.0.0.1", 3, 4
	c.addNode(peer)
	c.addNode(other)
	c.flush()
	l := c.newLink(nil, true) // inbound: the PONG goes to its outbox
	l.peerIP = "127.0.0.1"
	h := bus.Header{Ver: 1, Type: bus.Ping, Sender: peer.name, Port: 1, CPort: 2, Flags: bus.FlagMaster | bus.FlagMyself}
	g := bus.Gossip{Name: other.name, Port: 3, CPort: 4, Flags: bus.FlagMaster}
	g.IP.SetString("127.0.0.1")
	msg := bus.Finish(bus.AppendHostnameExt(g.Append(h.Append(nil)), "peer.example"), 1, 1)
	c.process(l, msg) // first: learns the hostname
	c.flush()
	allocs := testing.AllocsPerRun(200, func() {
		l.out = l.out[:0]
		c.process(l, msg)
	})
	if allocs != 0 {
		t.Errorf("a PING: %v allocations", allocs)
	}
	if len(l.out) == 0 || bus.PeekType(l.out) != bus.Pong {
		t.Error("no PONG queued")
	}
}
