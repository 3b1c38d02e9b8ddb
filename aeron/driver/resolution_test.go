package driver

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/internal/counters"
	"github.com/goblin-kv/goblin/internal/testkit"
)

// csvRowCounter is the id of the csv_table row counter (type 2001) whose
// label names name.
func csvRowCounter(t *testing.T, d *Driver, name string) int32 {
	t.Helper()
	id := int32(-1)
	d.counters.ForEach(func(i counters.Info) bool {
		if i.TypeID == csvEntryCounterTypeID && strings.Contains(i.Label, "name='"+name+"'") {
			id = i.ID
			return false
		}
		return true
	})
	if id < 0 {
		t.Fatalf("no csv_table counter for %q", name)
	}
	return id
}

// TestCSVTableNameResolverReResolves: with the csv_table resolver, a
// publication to endpoint=target:P starts on the row's initial host
// (127.0.0.2, where nothing listens); when the row's counter is set to 1
// (use the re-resolution host, 127.0.0.1, where the subscription is), the
// silent endpoint is re-resolved within the destination timeout and the
// check interval, its socket connected to the new address, and the
// stream flows. A row set to −1 refuses the name (UNKNOWN_HOST).
func TestCSVTableNameResolverReResolves(t *testing.T) {
	o := udpOptions(t)
	o.NameResolver = "csv_table"
	o.NameResolverInitArgs = "other,127.0.0.9,127.0.0.9|target,127.0.0.2,127.0.0.1"
	pubDriver := startDriver(t, o)
	subDriver := startDriver(t, udpOptions(t))
	port := freePort(t)
	sub, err := connectClient(t, subDriver).AddSubscription(fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", port), 50)
	if err != nil {
		t.Fatal(err)
	}
	pc := connectClient(t, pubDriver)
	pub, err := pc.AddExclusivePublication(fmt.Sprintf("aeron:udp?endpoint=target:%d", port), 50)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if pub.IsConnected() || sub.ImageCount() != 0 {
		t.Fatalf("connected through the initial host 127.0.0.2 (nothing listens there): connected=%t images=%d",
			pub.IsConnected(), sub.ImageCount())
	}
	row := csvRowCounter(t, pubDriver, "target")
	// Written by the test with release; the conductor reads it with acquire.
	pubDriver.counters.SetValue(row, csvUseReHost)
	testkit.Eventually(t, 20*time.Second, "the publication to connect after re-resolving target to 127.0.0.1", func() (bool, string) {
		return pub.IsConnected() && sub.ImageCount() == 1, fmt.Sprintf("connected=%t images=%d", pub.IsConnected(), sub.ImageCount())
	})
	pumpMessages(t, pub, []*aeron.Subscription{sub}, 100)

	pubDriver.counters.SetValue(csvRowCounter(t, pubDriver, "other"), csvDisable)
	_, err = pc.AddExclusivePublication(fmt.Sprintf("aeron:udp?endpoint=other:%d", freePort(t)), 51)
	var de *aeron.DriverError
	if !errors.As(err, &de) || de.Code != aeron.ErrorCodeUnknownHost || !strings.Contains(err.Error(), "name-resolver=CsvTableNameResolver") {
		t.Fatalf("a row set to -1: %v, want UNKNOWN_HOST from CsvTableNameResolver", err)
	}
}

// TestNameResolverSupplierProperties: csv_table is applied with its
// arguments, the driver resolver is accepted but stops the driver at start
// without a resolver interface, and csv_table without a table stops the
// driver at start.
func TestNameResolverSupplierProperties(t *testing.T) {
	o, err := Properties{"AERON_NAME_RESOLVER_SUPPLIER": "csv_table", "AERON_NAME_RESOLVER_INIT_ARGS": "a,1.2.3.4,5.6.7.8",
		"AERON_DRIVER_RERESOLUTION_CHECK_INTERVAL": "250ms"}.Options()
	if err != nil || o.NameResolver != "csv_table" || o.NameResolverInitArgs != "a,1.2.3.4,5.6.7.8" ||
		o.ReResolutionCheckInterval != 250*time.Millisecond {
		t.Fatalf("csv_table: %+v, %v", o, err)
	}
	if _, err := (Properties{"AERON_NAME_RESOLVER_SUPPLIER": "nonesuch"}).Options(); err == nil ||
		!strings.Contains(err.Error(), "AERON_NAME_RESOLVER_SUPPLIER: not supported by this driver") {
		t.Fatalf("unknown resolver: %v, want a refusal naming the variable", err)
	}
	noIface := testOptions(t)
	noIface.NameResolver = "driver"
	if d, err := Start(noIface); err == nil {
		d.Close()
		t.Fatal("the driver resolver without an interface started")
	} else if !strings.Contains(err.Error(), "AERON_DRIVER_RESOLVER_INTERFACE") {
		t.Fatalf("the driver resolver without an interface: %v", err)
	}
	bad := testOptions(t)
	bad.NameResolver = "csv_table"
	if d, err := Start(bad); err == nil {
		d.Close()
		t.Fatal("csv_table without a table started")
	} else if !strings.Contains(err.Error(), "No CSV configuration") {
		t.Fatalf("csv_table without a table: %v", err)
	}
}

// TestNameReResolutionCountsAndErrors follows Aeron's NameReResolutionTest
// with the csv_table resolver: a manual MDC destination whose name does not
// resolve yet (its row at −1) is accepted, sends nothing, and once the row
// resolves it is found by re-resolution within the destination timeout;
// each changed address adds 1 to counter 25 (Resolution changes); a name
// whose re-resolution fails logs an error naming the endpoint and saying
// "Unable to resolve host", as the C driver's does.
func TestNameReResolutionCountsAndErrors(t *testing.T) {
	var mu sync.Mutex
	var logged []string
	o := udpOptions(t)
	o.NameResolver = "csv_table"
	o.NameResolverInitArgs = "late,127.0.0.1,127.0.0.1|errname,127.0.0.1,bad.invalid"
	o.ErrorHandler = func(err error) {
		mu.Lock()
		logged = append(logged, err.Error())
		mu.Unlock()
	}
	d := startDriver(t, o)
	c := connectClient(t, d)
	d.counters.SetValue(csvRowCounter(t, d, "late"), csvDisable)
	changes := d.counters.Value(sysResolutionChanges)

	port := freePort(t)
	sub, err := c.AddSubscription(fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", port), 70)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := c.AddExclusivePublication(fmt.Sprintf("aeron:udp?control=127.0.0.1:%d|control-mode=manual", freePort(t)), 70)
	if err != nil {
		t.Fatal(err)
	}
	if err := pub.AddDestination(fmt.Sprintf("aeron:udp?endpoint=late:%d", port)); err != nil {
		t.Fatalf("a destination whose name does not resolve yet: %v, want it accepted", err)
	}
	time.Sleep(300 * time.Millisecond)
	if pub.IsConnected() || sub.ImageCount() != 0 {
		t.Fatal("connected through a destination whose name does not resolve")
	}
	d.counters.SetValue(csvRowCounter(t, d, "late"), csvUseInitialHost)
	testkit.Eventually(t, 20*time.Second, "the unresolved destination to resolve and connect", func() (bool, string) {
		return pub.IsConnected() && sub.ImageCount() == 1, fmt.Sprintf("connected=%t images=%d", pub.IsConnected(), sub.ImageCount())
	})
	pumpMessages(t, pub, []*aeron.Subscription{sub}, 20)
	if got := d.counters.Value(sysResolutionChanges) - changes; got != 1 {
		t.Fatalf("resolution changes +%d, want +1", got)
	}

	errPort := freePort(t)
	errSub, err := c.AddSubscription(fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", errPort), 71)
	if err != nil {
		t.Fatal(err)
	}
	errPub, err := c.AddExclusivePublication(fmt.Sprintf("aeron:udp?endpoint=errname:%d", errPort), 71)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 20*time.Second, "errname to connect", func() (bool, string) { return errPub.IsConnected(), "" })
	errSub.Close()
	d.counters.SetValue(csvRowCounter(t, d, "errname"), csvUseReHost)
	testkit.Eventually(t, 30*time.Second, "a logged re-resolution failure naming endpoint=errname", func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		for _, l := range logged {
			if strings.Contains(l, "endpoint=errname") && strings.Contains(l, "Unable to resolve host=(errname)") {
				return true, l
			}
		}
		return false, fmt.Sprint(logged)
	})
}
