package driver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/internal/counters"
	"github.com/goblin-kv/goblin/internal/testkit"
)

// localSocketAddresses are the values of the rcv-local-sockaddr counters
// of a channel status counter (what Subscription.localSocketAddresses
// reads in the Java client).
func localSocketAddresses(d *Driver, statusID int32) []string {
	var out []string
	d.counters.ForEach(func(i counters.Info) bool {
		if i.TypeID == counters.TypeLocalSocketAddress && len(i.Key) >= 8 &&
			int32(binary.LittleEndian.Uint32(i.Key)) == statusID {
			n := int(binary.LittleEndian.Uint32(i.Key[4:]))
			out = append(out, string(i.Key[8:8+n]))
		}
		return true
	})
	return out
}

// pumpRemoving offers n numbered messages and reads them on sub, calling
// mid once when half have been read; it fails unless every message
// arrives once and in order on one image.
func pumpRemoving(t *testing.T, pub *aeron.ExclusivePublication, sub *aeron.Subscription, n int, mid func()) {
	t.Helper()
	sent, got := 0, 0
	called := false
	testkit.Eventually(t, 60*time.Second, fmt.Sprintf("all %d messages through the MDS subscription", n), func() (bool, string) {
		for sent < n && pub.Offer([]byte(fmt.Sprintf("m%d", sent))) > 0 {
			sent++
		}
		sub.Poll(func(b []byte, _ *aeron.Header) {
			if string(b) != fmt.Sprintf("m%d", got) {
				t.Fatalf("got %q, want m%d (lost, repeated or out of order)", b, got)
			}
			got++
		}, 100)
		if !called && got >= n/2 {
			called = true
			mid()
		}
		return got == n, fmt.Sprintf("sent %d, got %d", sent, got)
	})
	if c := sub.ImageCount(); c != 1 {
		t.Fatalf("%d images, want 1 (one session over both destinations)", c)
	}
}

// TestMDSMultipathRemoveDestinationMidStream: a subscription with
// control-mode=manual gets two UDP destinations; a manual MDC publication
// on another driver sends every datagram to both (multipath), which make
// one image. Half way through, one destination is removed: the rest
// arrives over the other with nothing lost or repeated, and the
// subscription's rcv-local-sockaddr counters go from two to one.
func TestMDSMultipathRemoveDestinationMidStream(t *testing.T) {
	pubDriver := startDriver(t, udpOptions(t))
	subDriver := startDriver(t, udpOptions(t))
	pc, sc := connectClient(t, pubDriver), connectClient(t, subDriver)
	sub, err := sc.AddSubscription("aeron:udp?control-mode=manual", 30)
	if err != nil {
		t.Fatal(err)
	}
	dest := []string{
		fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", freePort(t)),
		fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", freePort(t)),
	}
	for _, d := range dest {
		if err := sub.AddDestination(d); err != nil {
			t.Fatalf("add destination %s: %v", d, err)
		}
	}
	if got := localSocketAddresses(subDriver, sub.ChannelStatusID()); len(got) != 2 {
		t.Fatalf("rcv-local-sockaddr of the MDS subscription: %q, want both destinations", got)
	}
	pub, err := pc.AddExclusivePublication("aeron:udp?control-mode=manual", 30)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dest {
		if err := pub.AddDestination(d); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Eventually(t, 30*time.Second, "the MDS image", func() (bool, string) {
		return pub.IsConnected() && sub.ImageCount() == 1, fmt.Sprintf("images %d", sub.ImageCount())
	})
	img := sub.Images()[0]
	testkit.Eventually(t, 10*time.Second, "both destinations active on the image", func() (bool, string) {
		return img.ActiveTransportCount() == 2, fmt.Sprintf("active transports %d", img.ActiveTransportCount())
	})
	pumpRemoving(t, pub, sub, 4000, func() {
		if err := sub.RemoveDestination(dest[0]); err != nil {
			t.Fatalf("remove destination: %v", err)
		}
		if got := localSocketAddresses(subDriver, sub.ChannelStatusID()); len(got) != 1 || !strings.HasSuffix(dest[1], got[0][strings.LastIndexByte(got[0], ':'):]) {
			t.Fatalf("rcv-local-sockaddr after removing %s: %q, want only %s's", dest[0], got, dest[1])
		}
	})
	if n := img.ActiveTransportCount(); n != 1 {
		t.Fatalf("active transports after removing one of two destinations: %d, want 1", n)
	}
}

// TestMDSDestinationWithDynamicMDC: an MDS destination with a control
// address asks a dynamic MDC publication for SETUP (every second until it
// comes), so the publication learns the destination and the stream flows.
func TestMDSDestinationWithDynamicMDC(t *testing.T) {
	pubDriver := startDriver(t, udpOptions(t))
	subDriver := startDriver(t, udpOptions(t))
	pc, sc := connectClient(t, pubDriver), connectClient(t, subDriver)
	ctl := freePort(t)
	pub, err := pc.AddExclusivePublication(fmt.Sprintf("aeron:udp?control=127.0.0.1:%d|control-mode=dynamic", ctl), 31)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := sc.AddSubscription("aeron:udp?control-mode=manual", 31)
	if err != nil {
		t.Fatal(err)
	}
	a := fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d|control=127.0.0.1:%d", freePort(t), ctl)
	b := fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", freePort(t))
	for _, d := range []string{a, b} {
		if err := sub.AddDestination(d); err != nil {
			t.Fatalf("add destination %s: %v", d, err)
		}
	}
	testkit.Eventually(t, 30*time.Second, "the image through the destination with control=", func() (bool, string) {
		return pub.IsConnected() && sub.ImageCount() == 1, fmt.Sprintf("images %d", sub.ImageCount())
	})
	// Removing the destination the stream does not use changes nothing.
	pumpRemoving(t, pub, sub, 2000, func() {
		if err := sub.RemoveDestination(b); err != nil {
			t.Fatal(err)
		}
	})
}

// TestMDSIPCDestination: an aeron:ipc destination of an MDS subscription
// links it to the driver's IPC publications of its stream; removing it
// makes the image unavailable.
func TestMDSIPCDestination(t *testing.T) {
	d := startDriver(t, udpOptions(t))
	c := connectClient(t, d)
	sub, err := c.AddSubscription("aeron:udp?control-mode=manual", 32)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := c.AddExclusivePublication("aeron:ipc", 32)
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.AddDestination("aeron:ipc"); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, "the IPC image on the MDS subscription", func() (bool, string) {
		return sub.ImageCount() == 1, ""
	})
	pumpRemoving(t, pub, sub, 200, func() {})
	if err := sub.RemoveDestination("aeron:ipc"); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, "the IPC image to go with its destination", func() (bool, string) {
		return sub.ImageCount() == 0, ""
	})
}

// TestMDSRefusals: destinations on a subscription that is not MDS, with
// a key a destination may not set, or on a busy port are refused with
// the Java driver's error codes.
func TestMDSRefusals(t *testing.T) {
	d := startDriver(t, udpOptions(t))
	c := connectClient(t, d)
	plain, err := c.AddSubscription(fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", freePort(t)), 33)
	if err != nil {
		t.Fatal(err)
	}
	mds, err := c.AddSubscription("aeron:udp?control-mode=manual", 33)
	if err != nil {
		t.Fatal(err)
	}
	busy := fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", freePort(t))
	if err := mds.AddDestination(busy); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sub     *aeron.Subscription
		channel string
		code    aeron.ErrorCode
		text    string
	}{
		{plain, fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", freePort(t)), aeron.ErrorCodeUnknownSubscription, "unknown MDS subscription"},
		{mds, fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d|mtu=1408", freePort(t)), aeron.ErrorCodeInvalidChannel, "must not contain the key: mtu"},
		{mds, busy, aeron.ErrorCodeGenericError, "Address already in use"},
	} {
		err := tc.sub.AddDestination(tc.channel)
		var re *aeron.DriverError
		if !errors.As(err, &re) || re.Code != tc.code || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("AddDestination(%s) = %v, want error code %v saying %q", tc.channel, err, tc.code, tc.text)
		}
	}
}
