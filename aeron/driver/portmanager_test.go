package driver

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/internal/testkit"
)

// TestParsePortRange: "LOW HIGH" as Java's WildcardPortManager reads it;
// empty and "0 0" are no range; the wrong shape, ports beyond 65535 and a
// low above the high are refused, naming the variable.
func TestParsePortRange(t *testing.T) {
	for v, want := range map[string]portRange{"": {}, "0 0": {}, "20700 20701": {low: 20700, high: 20701, next: 20700},
		"  5   5 ": {low: 5, high: 5, next: 5}} {
		got, err := parsePortRange("X", v)
		if err != nil || got != want {
			t.Errorf("%q: %+v %v, want %+v", v, got, err, want)
		}
	}
	for _, v := range []string{"20700", "1 2 3", "a b", "1 70000", "10 9", "-1 5", "0 5"} {
		if _, err := parsePortRange("AERON_RECEIVER_WILDCARD_PORT_RANGE", v); err == nil ||
			!strings.Contains(err.Error(), "AERON_RECEIVER_WILDCARD_PORT_RANGE") {
			t.Errorf("%q: %v, want a refusal naming the variable", v, err)
		}
	}
	if _, err := (Properties{"AERON_SENDER_WILDCARD_PORT_RANGE": "9 8"}).Options(); err == nil {
		t.Error("AERON_SENDER_WILDCARD_PORT_RANGE=\"9 8\" accepted")
	}
	o, err := Properties{"AERON_SENDER_WILDCARD_PORT_RANGE": "20702 20702", "AERON_RECEIVER_WILDCARD_PORT_RANGE": "20700 20701"}.Options()
	if err != nil || o.SenderWildcardPortRange != "20702 20702" || o.ReceiverWildcardPortRange != "20700 20701" {
		t.Fatalf("%+v %v", o, err)
	}
}

// freePortRun finds n consecutive UDP ports on 127.0.0.1 that are free now,
// below the kernel's ephemeral range.
func freePortRun(t *testing.T, n int) int {
	t.Helper()
	for base := 21000 + int(time.Now().UnixNano()%5000); base < 32000; base += n {
		ok := true
		for p := base; p < base+n && ok; p++ {
			c, err := net.ListenPacket("udp4", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				ok = false
				continue
			}
			c.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatalf("no run of %d free UDP ports", n)
	return 0
}

// TestWildcardPortRange follows Aeron's WildcardPortManagerSystemTest:
// with a receiver range of two ports and a sender range of one, two
// subscriptions at endpoint=127.0.0.1:0 get the two ports in order, a third
// is refused ("no available ports in range"), and once the second closes
// its port is given out again; a dynamic MDC publication with
// control=127.0.0.1:0 gets the sender port, a second is refused, and the
// port is reused after the first closes.
func TestWildcardPortRange(t *testing.T) {
	base := freePortRun(t, 3)
	o := udpOptions(t)
	o.ReceiverWildcardPortRange = fmt.Sprintf("%d %d", base, base+1)
	o.SenderWildcardPortRange = fmt.Sprintf("%d %d", base+2, base+2)
	o.PublicationLingerTimeout = time.Millisecond
	d := startDriver(t, o)
	c := connectClient(t, d)
	const channel = "aeron:udp?endpoint=127.0.0.1:0"
	endpoint := func(s *aeron.Subscription) string {
		var got []string
		testkit.Eventually(t, 10*time.Second, "the subscription's bound address", func() (bool, string) {
			got = localSocketAddresses(d, s.ChannelStatusID())
			return len(got) == 1, fmt.Sprint(got)
		})
		return got[0]
	}
	s1, err := c.AddSubscription(channel, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := endpoint(s1), fmt.Sprintf("127.0.0.1:%d", base); got != want {
		t.Fatalf("first subscription bound %s, want %s", got, want)
	}
	s2, err := c.AddSubscription(channel, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := endpoint(s2), fmt.Sprintf("127.0.0.1:%d", base+1); got != want {
		t.Fatalf("second subscription bound %s, want %s", got, want)
	}
	wantFull := fmt.Sprintf("no available ports in range %d %d", base, base+1)
	if _, err := c.AddSubscription(channel, 3); err == nil || !strings.Contains(err.Error(), wantFull) {
		t.Fatalf("third subscription: %v, want %q", err, wantFull)
	}
	s2.Close()
	var s3 *aeron.Subscription
	testkit.Eventually(t, 10*time.Second, "a subscription to get the freed port", func() (bool, string) {
		s3, err = c.AddSubscription(channel, 4)
		return err == nil, fmt.Sprint(err)
	})
	if got, want := endpoint(s3), fmt.Sprintf("127.0.0.1:%d", base+1); got != want {
		t.Fatalf("subscription after the close bound %s, want %s", got, want)
	}

	const pubChannel = "aeron:udp?control=127.0.0.1:0|control-mode=dynamic|linger=0"
	senderPort := fmt.Sprintf("127.0.0.1:%d", base+2)
	p1, err := c.AddPublication(pubChannel, 5)
	if err != nil {
		t.Fatal(err)
	}
	if got := localSocketAddresses(d, p1.ChannelStatusID()); !slices.Equal(got, []string{senderPort}) {
		t.Fatalf("publication control address %q, want %s", got, senderPort)
	}
	wantFull = fmt.Sprintf("no available ports in range %d %d", base+2, base+2)
	if _, err := c.AddPublication(pubChannel, 6); err == nil || !strings.Contains(err.Error(), wantFull) {
		t.Fatalf("second publication: %v, want %q", err, wantFull)
	}
	p1.Close()
	testkit.Eventually(t, 10*time.Second, "a publication to get the freed sender port", func() (bool, string) {
		p2, err := c.AddPublication(pubChannel, 7)
		if err != nil {
			return false, err.Error()
		}
		got := localSocketAddresses(d, p2.ChannelStatusID())
		return slices.Equal(got, []string{senderPort}), fmt.Sprint(got)
	})
}

// TestWildcardPortRangeSkipsBusyPort: a port of the range held by another
// process's socket is skipped (a deliberate difference: Java fails the
// bind), the subscription binds the next one, and a range whose every port
// is held elsewhere refuses with Java's text.
func TestWildcardPortRangeSkipsBusyPort(t *testing.T) {
	base := freePortRun(t, 2)
	busy, err := net.ListenPacket("udp4", fmt.Sprintf("127.0.0.1:%d", base))
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	o := udpOptions(t)
	o.ReceiverWildcardPortRange = fmt.Sprintf("%d %d", base, base+1)
	d := startDriver(t, o)
	c := connectClient(t, d)
	s, err := c.AddSubscription("aeron:udp?endpoint=127.0.0.1:0", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := localSocketAddresses(d, s.ChannelStatusID()), fmt.Sprintf("127.0.0.1:%d", base+1); len(got) != 1 || got[0] != want {
		t.Fatalf("bound %q, want %s (the busy %d skipped)", got, want, base)
	}
	_, err = c.AddSubscription("aeron:udp?endpoint=127.0.0.1:0", 2)
	var de *aeron.DriverError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), fmt.Sprintf("no available ports in range %d %d", base, base+1)) {
		t.Fatalf("every port held: %v", err)
	}
}
