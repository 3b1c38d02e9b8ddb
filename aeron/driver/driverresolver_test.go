package driver

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/internal/counters"
	"github.com/goblin-kv/goblin/internal/testkit"
)

// TestDriverResolverFrames: a RES frame's bytes as ResolutionEntryFlyweight
// lays them out (header type 0x07, entries from offset 8: type, flags, port
// LE, age LE, address, name length LE, name, padded to 8), and decoding
// reads back what was encoded; a short entry does not decode.
func TestDriverResolverFrames(t *testing.T) {
	p := appendResHeader(nil)
	p = appendResEntry(p, resEntry{resType: resTypeIPv4, flags: resFlagSelf, port: 8050, ageMs: 7,
		addr: netip.MustParseAddr("127.0.0.1"), name: []byte("A")})
	p = appendResEntry(p, resEntry{resType: resTypeIPv6, port: 0x1234, ageMs: 300,
		addr: netip.MustParseAddr("::1"), name: []byte("node-b")})
	finishResFrame(p)
	want := []byte{
		56, 0, 0, 0, 0, 0, 0x07, 0, // frame length 8+16+32, version 0, flags 0, type RES
		0x01, 0x80, 0x72, 0x1f, 7, 0, 0, 0, 127, 0, 0, 1, 1, 0, 'A', 0, // 8+4+2+1 = 15 → 16
		0x02, 0x00, 0x34, 0x12, 0x2c, 0x01, 0, 0, // IPv6 entry: 8+16+2+6 = 32
	}
	v6 := netip.MustParseAddr("::1").As16()
	want = append(want, v6[:]...)
	want = append(want, 6, 0, 'n', 'o', 'd', 'e', '-', 'b')
	if !bytes.Equal(p, want) {
		t.Fatalf("frame\n got %v\nwant %v", p, want)
	}
	off := 8
	var got []resEntry
	for off < len(p) {
		e, n, ok := decodeResEntry(p[off:])
		if !ok {
			t.Fatalf("entry at %d did not decode", off)
		}
		got = append(got, e)
		off += n
	}
	if len(got) != 2 || got[0].port != 8050 || got[0].flags != resFlagSelf || got[0].ageMs != 7 ||
		got[0].addr != netip.MustParseAddr("127.0.0.1") || string(got[0].name) != "A" ||
		got[1].resType != resTypeIPv6 || got[1].addr != netip.MustParseAddr("::1") || string(got[1].name) != "node-b" ||
		got[1].ageMs != 300 {
		t.Fatalf("decoded %+v", got)
	}
	if _, _, ok := decodeResEntry(p[8 : 8+15]); ok {
		t.Fatal("an entry cut short decoded")
	}
	bad := append([]byte(nil), p[8:24]...)
	bad[0] = 9
	if _, _, ok := decodeResEntry(bad); ok {
		t.Fatal("an entry of unknown type decoded")
	}
}

// counterByType is the id of the first counter of typeID, or −1.
func counterByType(d *Driver, typeID int32) (int32, string) {
	id, label := int32(-1), ""
	d.counters.ForEach(func(i counters.Info) bool {
		if i.TypeID == typeID {
			id, label = i.ID, i.Label
			return false
		}
		return true
	})
	return id, label
}

// TestDriverNameResolver: driver A (name "A", resolver on 127.0.0.1:P)
// and driver B (name "B", bootstrap neighbor A) in one process find each
// other: each neighbors counter reaches 1 and each cache holds the other's
// name; a subscription on B at endpoint=B:port and a publication on A to
// endpoint=B:port then connect through the resolved name. The counters
// carry the Java driver's types and labels, counter 25 names the driver.
// When B closes, A forgets it after the neighbor timeout.
func TestDriverNameResolver(t *testing.T) {
	aPort, bPort := freePort(t), freePort(t)
	oa := udpOptions(t)
	oa.ResolverName, oa.ResolverInterface = "A", fmt.Sprintf("127.0.0.1:%d", aPort)
	oa.ResolverNeighborTimeout = 3 * time.Second
	a := startDriver(t, oa)
	ob := udpOptions(t)
	ob.ResolverName, ob.ResolverInterface = "B", fmt.Sprintf("0.0.0.0:%d", bPort)
	ob.ResolverBootstrapNeighbor = fmt.Sprintf("nonesuch.invalid:1,localhost:%d", aPort)
	b, err := Start(ob)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	aNeighbors, aLabel := counterByType(a, resolverNeighborsCounterTypeID)
	bNeighbors, bLabel := counterByType(b, resolverNeighborsCounterTypeID)
	aCache, aCacheLabel := counterByType(a, resolverCacheEntriesCounterTypeID)
	bCache, _ := counterByType(b, resolverCacheEntriesCounterTypeID)
	if aNeighbors < 0 || bNeighbors < 0 || aCache < 0 || bCache < 0 {
		t.Fatalf("resolver counters missing: %d %d %d %d", aNeighbors, bNeighbors, aCache, bCache)
	}
	if want := fmt.Sprintf("Resolver neighbors: bound 127.0.0.1:%d", aPort); aLabel != want {
		t.Fatalf("A neighbors label %q, want %q", aLabel, want)
	}
	if want := fmt.Sprintf("Resolver neighbors: bound 0.0.0.0:%d", bPort); bLabel != want {
		t.Fatalf("B neighbors label %q, want %q", bLabel, want)
	}
	// Aeron 1.51: one counter per bootstrap neighbor, keyed by its index,
	// resolved on the first duty cycle, the unresolvable one with
	// resolved= empty.
	want := []string{"Bootstrap neighbor: name=nonesuch.invalid:1 resolved=",
		fmt.Sprintf("Bootstrap neighbor: name=localhost:%d resolved=127.0.0.1:%d", aPort, aPort)}
	var boots []counters.Info
	testkit.Eventually(t, 5*time.Second, fmt.Sprintf("B's bootstrap neighbor counters to be labelled %q", want),
		func() (bool, string) {
			boots = bootstrapCounters(b)
			return len(boots) == 2 && boots[0].Label == want[0] && boots[1].Label == want[1], fmt.Sprint(len(boots), boots)
		})
	if aCacheLabel != "Resolver cache entries: name=A" {
		t.Fatalf("A cache label %q", aCacheLabel)
	}
	if l := a.counters.Label(sysResolutionChanges); l != "Resolution changes: driverName=A" {
		// counter 25 is labelled at the conductor's start, on its first duty cycle
		testkit.Eventually(t, 5*time.Second, "counter 25 to name driver A", func() (bool, string) {
			l := a.counters.Label(sysResolutionChanges)
			return l == "Resolution changes: driverName=A", l
		})
	}
	testkit.Eventually(t, 20*time.Second, "A and B to be each other's neighbor and cache entry", func() (bool, string) {
		an, bn, ac, bc := a.counters.Value(aNeighbors), b.counters.Value(bNeighbors), a.counters.Value(aCache), b.counters.Value(bCache)
		return an == 1 && bn == 1 && ac == 1 && bc == 1, fmt.Sprintf("neighbors A=%d B=%d, cache A=%d B=%d", an, bn, ac, bc)
	})
	testkit.Eventually(t, 10*time.Second, "B's bootstrap neighbor counters to read 0 (unresolved) and 1 (A, a neighbor)",
		func() (bool, string) {
			v0, v1 := b.counters.Value(boots[0].ID), b.counters.Value(boots[1].ID)
			return v0 == 0 && v1 == 1, fmt.Sprintf("%d %d", v0, v1)
		})

	dataPort := freePort(t)
	sub, err := connectClient(t, b).AddSubscription(fmt.Sprintf("aeron:udp?endpoint=B:%d", dataPort), 60)
	if err != nil {
		t.Fatalf("subscription at endpoint=B (B's own name): %v", err)
	}
	pub, err := connectClient(t, a).AddExclusivePublication(fmt.Sprintf("aeron:udp?endpoint=B:%d", dataPort), 60)
	if err != nil {
		t.Fatalf("publication to endpoint=B through the resolver: %v", err)
	}
	pumpMessages(t, pub, []*aeron.Subscription{sub}, 50)

	_, err = connectClient(t, a).AddExclusivePublication(fmt.Sprintf("aeron:udp?endpoint=nonesuch.invalid:%d", dataPort), 61)
	var de *aeron.DriverError
	if !errors.As(err, &de) || de.Code != aeron.ErrorCodeUnknownHost || !strings.Contains(err.Error(), "name-resolver=DriverNameResolver") {
		t.Fatalf("an unknown name: %v, want UNKNOWN_HOST from DriverNameResolver", err)
	}

	b.Close()
	testkit.Eventually(t, 20*time.Second, "A to forget B after the neighbor timeout", func() (bool, string) {
		an, ac := a.counters.Value(aNeighbors), a.counters.Value(aCache)
		return an == 0 && ac == 0, fmt.Sprintf("neighbors=%d cache=%d", an, ac)
	})
}

// TestDriverNameResolverGossip follows DriverNameResolverTest's gossip
// case: A; B bootstrapped from A; C bootstrapped from B. Each ends with the
// other two as neighbors and cache entries, C having learned A only from
// B's neighbor resolutions; the first bootstrap neighbor that resolves is
// used ("just:wrong" and an unknown host are skipped).
func TestDriverNameResolverGossip(t *testing.T) {
	ports := []int{freePort(t), freePort(t), freePort(t)}
	var drivers []*Driver
	for i, name := range []string{"A", "B", "C"} {
		o := udpOptions(t)
		o.ResolverName, o.ResolverInterface = name, fmt.Sprintf("0.0.0.0:%d", ports[i])
		o.ResolverNeighborResolutionInterval = 500 * time.Millisecond
		if i > 0 {
			o.ResolverBootstrapNeighbor = fmt.Sprintf("just:wrong,nonesuch.invalid:%d,localhost:%d", ports[i-1], ports[i-1])
		}
		drivers = append(drivers, startDriver(t, o))
	}
	testkit.Eventually(t, 30*time.Second, "every driver to have two neighbors and two cache entries", func() (bool, string) {
		ok, state := true, ""
		for i, d := range drivers {
			n, _ := counterByType(d, resolverNeighborsCounterTypeID)
			c, _ := counterByType(d, resolverCacheEntriesCounterTypeID)
			nv, cv := d.counters.Value(n), d.counters.Value(c)
			ok = ok && nv == 2 && cv == 2
			state += fmt.Sprintf(" %c: neighbors=%d cache=%d", 'A'+i, nv, cv)
		}
		return ok, state
	})
	_, label := counterByType(drivers[2], resolverNeighborsCounterTypeID)
	if want := fmt.Sprintf("Resolver neighbors: bound 0.0.0.0:%d", ports[2]); label != want {
		t.Fatalf("C's neighbors label %q, want %q", label, want)
	}
}

// TestDriverNameResolverMultiBootstrap follows DriverNameResolverSystemTest's
// shouldUseMultiBootstrapNeighbors (Aeron 1.51): C lists both A and B as
// bootstrap neighbors and sends to both, so every driver has two
// neighbors, and both of C's bootstrap neighbor counters read 1.
func TestDriverNameResolverMultiBootstrap(t *testing.T) {
	ports := []int{freePort(t), freePort(t), freePort(t)}
	var drivers []*Driver
	for i, name := range []string{"A", "B", "C"} {
		o := udpOptions(t)
		o.ResolverName, o.ResolverInterface = name, fmt.Sprintf("0.0.0.0:%d", ports[i])
		if i == 2 {
			o.ResolverBootstrapNeighbor = fmt.Sprintf("localhost:%d,localhost:%d", ports[0], ports[1])
		}
		drivers = append(drivers, startDriver(t, o))
	}
	boots := bootstrapCounters(drivers[2])
	if len(boots) != 2 {
		t.Fatalf("C has %d bootstrap neighbor counters, want 2", len(boots))
	}
	testkit.Eventually(t, 30*time.Second, "every driver to have two neighbors, C's bootstrap counters 1 and 1", func() (bool, string) {
		ok, state := true, ""
		for i, d := range drivers {
			n, _ := counterByType(d, resolverNeighborsCounterTypeID)
			nv := d.counters.Value(n)
			ok = ok && nv == 2
			state += fmt.Sprintf(" %c: neighbors=%d", 'A'+i, nv)
		}
		b0, b1 := drivers[2].counters.Value(boots[0].ID), drivers[2].counters.Value(boots[1].ID)
		return ok && b0 == 1 && b1 == 1, state + fmt.Sprintf("; C's bootstrap counters %d %d", b0, b1)
	})
}

// bootstrapCounters are d's bootstrap neighbor counters (type 21) in the
// order of their int32 key, the neighbor's index in the list.
func bootstrapCounters(d *Driver) []counters.Info {
	var out []counters.Info
	d.counters.ForEach(func(i counters.Info) bool {
		if i.TypeID == resolverBootstrapCounterTypeID {
			if int(binary.LittleEndian.Uint32(i.Key)) != len(out) {
				return true // out of order: the length check of the caller fails
			}
			out = append(out, i)
		}
		return true
	})
	return out
}

// TestDriverNameResolverAllocatesNothing: once its neighbors and cache are
// known, the resolver's periodic sends and a received frame allocate
// nothing (a New driver, driven by hand on this goroutine).
func TestDriverNameResolverAllocatesNothing(t *testing.T) {
	o := udpOptions(t)
	o.ResolverName, o.ResolverInterface = "A", fmt.Sprintf("127.0.0.1:%d", freePort(t))
	d, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	r := d.nameResolver
	peer := netip.MustParseAddrPort(fmt.Sprintf("127.0.0.1:%d", freePort(t)))
	frame := appendResHeader(nil)
	frame = appendResEntry(frame, resEntry{resType: resTypeIPv4, flags: resFlagSelf, port: peer.Port(),
		addr: peer.Addr(), name: []byte("B")})
	finishResFrame(frame)
	nowMs := int64(1_000_000)
	r.onFrame(frame, peer, nowMs)
	if len(r.neighbors) != 1 || len(r.cache) != 1 {
		t.Fatalf("neighbors %d cache %d after B's self resolution", len(r.neighbors), len(r.cache))
	}
	if allocs := testing.AllocsPerRun(100, func() {
		nowMs++
		r.onFrame(frame, peer, nowMs)
		r.sendSelfResolutions(nowMs)
		r.sendNeighborResolutions(nowMs)
		r.timeoutCache(nowMs)
		r.timeoutNeighbors(nowMs)
	}); allocs != 0 {
		t.Fatalf("resolver work allocates %v per round", allocs)
	}
}

// TestDriverNameResolverBootstrapLimit: more than 20 bootstrap neighbors
// refuse the start, naming the variable, as the Java driver refuses them.
func TestDriverNameResolverBootstrapLimit(t *testing.T) {
	o := udpOptions(t)
	o.ResolverName, o.ResolverInterface = "A", fmt.Sprintf("127.0.0.1:%d", freePort(t))
	o.ResolverBootstrapNeighbor = strings.TrimSuffix(strings.Repeat("localhost:1,", 21), ",")
	d, err := Start(o)
	if err == nil {
		d.Close()
		t.Fatal("21 bootstrap neighbors accepted")
	}
	if !strings.Contains(err.Error(), "AERON_DRIVER_RESOLVER_BOOTSTRAP_NEIGHBOR") || !strings.Contains(err.Error(), "maximum of 20") {
		t.Fatalf("21 bootstrap neighbors: %v, want a refusal naming the variable and the limit", err)
	}
}
