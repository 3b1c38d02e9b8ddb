package interop

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/driver"
	"github.com/goblin-kv/goblin/aeron/javadriver"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// resolverCounters are a driver's resolver neighbors (type 15) and cache
// entries (type 16) counter values and labels, read through a client.
func resolverCounters(c *aeron.Client) (neighbors, cache int64, labels string) {
	neighbors, cache = -1, -1
	c.Counters().ForEach(func(i aeron.CounterInfo) bool {
		switch i.TypeID {
		case 15:
			neighbors = c.Counters().Value(i.ID)
			labels += "[" + i.Label + "]"
		case 16:
			cache = c.Counters().Value(i.ID)
			labels += "[" + i.Label + "]"
		}
		return true
	})
	return neighbors, cache, labels
}

// TestDriverNameResolverGoAndJavaDrivers: goblin's Go driver (name "godrv")
// and the Java driver (name "javadrv", bootstrap neighbor the Go driver)
// resolve each other through their driver name resolvers: each has the
// other as its one neighbor and cache entry, and streams flow both ways to
// endpoints named only by driver name (endpoint=javadrv:P subscribed on
// the Java driver and published from the Go driver, endpoint=godrv:Q the
// other way round).
func TestDriverNameResolverGoAndJavaDrivers(t *testing.T) {
	needJava(t)
	goPort, javaPort := testproc.FreeUDPPort(t), testproc.FreeUDPPort(t)
	goDrv := startGoDriver(t, driver.Options{ResolverName: "godrv", ResolverInterface: loopback(goPort)})
	javaDrv := startDriver(t, javadriver.Options{Properties: map[string]string{
		"aeron.driver.resolver.name":               "javadrv",
		"aeron.driver.resolver.interface":          loopback(javaPort),
		"aeron.driver.resolver.bootstrap.neighbor": "localhost:" + strconv.Itoa(goPort),
	}})
	onGo, err := aeron.Connect(aeron.Options{Dir: goDrv.Dir(), DriverTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer onGo.Close()
	onJava := connect(t, javaDrv, aeron.Options{})

	testkit.Eventually(t, 30*time.Second, "each driver to have the other as its one neighbor and cache entry", func() (bool, string) {
		gn, gc, gl := resolverCounters(onGo)
		jn, jc, jl := resolverCounters(onJava)
		return gn == 1 && gc == 1 && jn == 1 && jc == 1,
			fmt.Sprintf("go: neighbors=%d cache=%d %s; java: neighbors=%d cache=%d %s", gn, gc, gl, jn, jc, jl)
	})
	_, _, gl := resolverCounters(onGo)
	if want := fmt.Sprintf("[Resolver neighbors: bound 127.0.0.1:%d][Resolver cache entries: name=godrv]", goPort); gl != want {
		t.Fatalf("Go driver's resolver counter labels %s, want %s", gl, want)
	}

	for _, dir := range []struct {
		name     string
		pub, sub *aeron.Client
		host     string
	}{{"go-to-javadrv", onGo, onJava, "javadrv"}, {"java-to-godrv", onJava, onGo, "godrv"}} {
		t.Run(dir.name, func(t *testing.T) {
			channel := fmt.Sprintf("aeron:udp?endpoint=%s:%d", dir.host, testproc.FreeUDPPort(t))
			sub, err := dir.sub.AddSubscription(channel, 3101)
			if err != nil {
				t.Fatalf("subscription %s: %v", channel, err)
			}
			defer sub.Close()
			pub, err := dir.pub.AddExclusivePublication(channel, 3101)
			if err != nil {
				t.Fatalf("publication %s: %v", channel, err)
			}
			defer pub.Close()
			got, sent := 0, 0
			testkit.Eventually(t, 30*time.Second, "100 messages to arrive through "+channel, func() (bool, string) {
				for sent < 100 && pub.Offer([]byte("m"+strconv.Itoa(sent))) > 0 {
					sent++
				}
				got += sub.Poll(func([]byte, *aeron.Header) {}, 100)
				return got == 100, fmt.Sprintf("sent %d, got %d, connected=%t", sent, got, pub.IsConnected())
			})
		})
	}
}
