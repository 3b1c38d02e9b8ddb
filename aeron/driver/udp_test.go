package driver

import (
	"bytes"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/internal/counters"
	"github.com/goblin-kv/goblin/internal/testkit"
)

// freePort finds a UDP port on the loopback address nothing uses now.
func freePort(t testing.TB) int {
	t.Helper()
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// udpOptions is testOptions with small UDP terms.
func udpOptions(t testing.TB) Options {
	o := testOptions(t)
	o.TermLength = 64 << 10
	return o
}

// TestGoClientUDPBetweenTwoDrivers: a Go client on one Go driver publishes
// over UDP loopback to a Go client on another; every message arrives in
// order, byte for byte, across term rotations and fragmented messages.
func TestGoClientUDPBetweenTwoDrivers(t *testing.T) {
	pubDriver := startDriver(t, udpOptions(t))
	subDriver := startDriver(t, udpOptions(t))
	pc := connectClient(t, pubDriver)
	sc := connectClient(t, subDriver)
	channel := fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", freePort(t))
	sub, err := sc.AddSubscription(channel, 10)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := pc.AddExclusivePublication(channel, 10)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 60*time.Second, "connected", func() (bool, string) { return pub.IsConnected() && sub.ImageCount() == 1, "" })
	const n = 3000
	msg := func(i int) []byte {
		size := 1 + (i*97)%5000
		b := make([]byte, size)
		for j := range b {
			b[j] = byte(i*131 + j*7)
		}
		return b
	}
	var got [][]byte
	asm := aeron.NewFragmentAssembler(func(b []byte, _ *aeron.Header) { got = append(got, append([]byte(nil), b...)) }, 0)
	sent := 0
	testkit.Eventually(t, 60*time.Second, "all messages", func() (bool, string) {
		for sent < n {
			if pub.Offer(msg(sent)) < 0 {
				break
			}
			sent++
		}
		sub.Poll(asm.OnFragment, 100)
		return len(got) == n, ""
	})
	if testing.Verbose() {
		for _, d := range []*Driver{pubDriver, subDriver} {
			d.counters.ForEach(func(i counters.Info) bool {
				if i.Value != 0 {
					t.Logf("%3d %4d %12d %s", i.ID, i.TypeID, i.Value, i.Label)
				}
				return true
			})
		}
	}
	for i, m := range got {
		if !bytes.Equal(m, msg(i)) {
			t.Fatalf("message %d: %d bytes, want %d", i, len(m), len(msg(i)))
		}
	}
}

// pump offers n messages on pub and waits until every subscription has
// them all, in order.
func pumpMessages(t *testing.T, pub interface{ Offer([]byte) int64 }, subs []*aeron.Subscription, n int) {
	t.Helper()
	got := make([]int, len(subs))
	sent := 0
	defer func() {
		if t.Failed() {
			t.Logf("sent %d, got %v", sent, got)
		}
	}()
	testkit.Eventually(t, 60*time.Second, "every subscriber to get every message", func() (bool, string) {
		for sent < n && pub.Offer([]byte(fmt.Sprintf("m%d", sent))) > 0 {
			sent++
		}
		done := true
		for i, s := range subs {
			s.Poll(func(b []byte, _ *aeron.Header) {
				if string(b) != fmt.Sprintf("m%d", got[i]) {
					t.Fatalf("subscriber %d: %q, want m%d", i, b, got[i])
				}
				got[i]++
			}, 100)
			done = done && got[i] == n
		}
		return done, ""
	})
}

// TestMultiDestinationCast: a publication with control-mode=dynamic sends
// to every receiver that asks (their status messages to its control
// address teach it where they are); one with control-mode=manual to the
// destinations added to it. Both use min flow control (fc=min), which
// holds the sender to the slowest receiver; with the default max flow
// control a receiver that falls a term behind the fastest loses what is
// no longer in the sender's log, as with the Java driver.
func TestMultiDestinationCast(t *testing.T) {
	pubDriver := startDriver(t, udpOptions(t))
	pc := connectClient(t, pubDriver)
	var subs []*aeron.Subscription
	ctl := freePort(t)
	drivers := []*Driver{pubDriver}
	dump := func() {
		if t.Failed() {
			for _, d := range drivers {
				t.Log("driver", d.Dir())
				d.counters.ForEach(func(i counters.Info) bool {
					if i.Value != 0 && i.TypeID != 0 || i.ID < 20 && i.Value != 0 {
						t.Logf("%3d %4d %12d %s", i.ID, i.TypeID, i.Value, i.Label)
					}
					return true
				})
			}
		}
	}
	for range 2 {
		d := startDriver(t, udpOptions(t))
		drivers = append(drivers, d)
		s, err := connectClient(t, d).AddSubscription(
			fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d|control=127.0.0.1:%d", freePort(t), ctl), 20)
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, s)
	}
	pub, err := pc.AddExclusivePublication(fmt.Sprintf("aeron:udp?control=127.0.0.1:%d|control-mode=dynamic|fc=min", ctl), 20)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dump)
	testkit.Eventually(t, 60*time.Second, "both receivers", func() (bool, string) { return subs[0].ImageCount() == 1 && subs[1].ImageCount() == 1, "" })
	pumpMessages(t, pub, subs, 2000)

	subs = subs[:0]
	manual, err := pc.AddExclusivePublication("aeron:udp?control-mode=manual|fc=min", 21)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		d := startDriver(t, udpOptions(t))
		port := freePort(t)
		s, err := connectClient(t, d).AddSubscription(fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", port), 21)
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, s)
		if err := manual.AddDestination(fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", port)); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Eventually(t, 60*time.Second, "both destinations", func() (bool, string) { return subs[0].ImageCount() == 1 && subs[1].ImageCount() == 1, "" })
	pumpMessages(t, manual, subs, 2000)
	mdc, fcReceivers := 0, 0
	pubDriver.counters.ForEach(func(i counters.Info) bool {
		switch {
		case i.TypeID == counters.TypeMDCDestinations && i.Value == 2:
			mdc++
		case i.TypeID == counters.TypeFlowControlReceivers && i.Value == 2:
			fcReceivers++
		}
		return true
	})
	if mdc != 2 || fcReceivers != 2 {
		t.Fatalf("%d mdc-num-dest and %d fc-receivers counters of 2 destinations, want 2 of each", mdc, fcReceivers)
	}
}
