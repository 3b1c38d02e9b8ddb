package aeron

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

func offerAll(t testing.TB, offer func([]byte) int64, msg []byte) int64 {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := offer(msg)
		if r > 0 {
			return r
		}
		if r == Closed || r == MaxPositionExceeded {
			t.Fatalf("offer: %s", StatusString(r))
		}
		if time.Now().After(deadline) {
			t.Fatalf("offer stuck at %s", StatusString(r))
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// pubSub sends n messages of varying size (some fragmented) from pub to sub
// and checks every byte arrives in order.
func pubSub(t *testing.T, c *Client, channel string, streamID int32, exclusive bool, n int) {
	sub, err := c.AddSubscription(channel, streamID)
	if err != nil {
		t.Fatal(err)
	}
	var offer func([]byte) int64
	var maxPayload int
	if exclusive {
		p, err := c.AddExclusivePublication(channel, streamID)
		if err != nil {
			t.Fatal(err)
		}
		offer, maxPayload = p.Offer, p.MaxPayloadLength()
		defer p.Close()
	} else {
		p, err := c.AddPublication(channel, streamID)
		if err != nil {
			t.Fatal(err)
		}
		offer, maxPayload = p.Offer, p.MaxPayloadLength()
		defer p.Close()
	}
	testkit.Eventually(t, 20*time.Second, "image", func() (bool, string) { return sub.ImageCount() > 0, "" })
	msgFor := func(i int) []byte {
		size := 1 + (i*37)%200
		if i%25 == 0 {
			size = 3*maxPayload + 17 // fragmented
		}
		b := make([]byte, size)
		for k := range b {
			b[k] = byte(i + k)
		}
		return b
	}
	got := 0
	asm := NewFragmentAssembler(func(buf []byte, h *Header) {
		if want := msgFor(got); !bytes.Equal(buf, want) {
			t.Fatalf("message %d: got %d bytes, want %d (first diff)", got, len(buf), len(want))
		}
		got++
	}, 0)
	handler := asm.OnFragment
	sent := 0
	deadline := time.Now().Add(60 * time.Second)
	for got < n {
		if sent < n {
			if r := offer(msgFor(sent)); r > 0 {
				sent++
			} else if r == Closed {
				t.Fatal("publication closed")
			}
		}
		sub.Poll(handler, 10)
		if time.Now().After(deadline) {
			t.Fatalf("sent %d got %d of %d", sent, got, n)
		}
	}
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestRealDriverIPC(t *testing.T) {
	d := startDriver(t)
	c := connectTest(t, d, Options{})
	// A 64 KiB term makes the stream rotate terms many times.
	pubSub(t, c, "aeron:ipc?term-length=64k", 1001, false, 3000)
	pubSub(t, c, "aeron:ipc?term-length=64k", 1002, true, 3000)
}

func TestRealDriverUDP(t *testing.T) {
	d := startDriver(t)
	c := connectTest(t, d, Options{})
	port := testproc.FreeUDPPort(t)
	ch := fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d|term-length=64k", port)
	pubSub(t, c, ch, 2001, false, 2000)
}

func TestRealDriverSpyAndDestinations(t *testing.T) {
	d := startDriver(t)
	c := connectTest(t, d, Options{})
	ports := testproc.FreeUDPPorts(t, 2) // distinct: the probes stay open until both are chosen
	p1, p2 := ports[0], ports[1]
	// Multi-destination cast: one manual publication, two destinations.
	pub, err := c.AddExclusivePublication("aeron:udp?control-mode=manual|term-length=64k", 500)
	if err != nil {
		t.Fatal(err)
	}
	subs := make([]*Subscription, 2)
	for i, port := range []int{p1, p2} {
		ep := fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", port)
		if subs[i], err = c.AddSubscription(ep, 500); err != nil {
			t.Fatal(err)
		}
		if err := pub.AddDestination(ep); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range subs {
		testkit.Eventually(t, 20*time.Second, "image on "+s.Channel(), func() (bool, string) { return s.ImageCount() == 1, "" })
	}
	offerAll(t, pub.Offer, []byte("to everyone"))
	// A spy reads a unicast publication's log in the sending driver.
	uni := fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", testproc.FreeUDPPort(t))
	spy, err := c.AddSubscription("aeron-spy:"+uni, 501)
	if err != nil {
		t.Fatal(err)
	}
	rcv, err := c.AddSubscription(uni, 501)
	if err != nil {
		t.Fatal(err)
	}
	upub, err := c.AddPublication(uni, 501)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Subscription{spy, rcv} {
		testkit.Eventually(t, 20*time.Second, "image on "+s.Channel(), func() (bool, string) { return s.ImageCount() == 1, "" })
	}
	offerAll(t, upub.Offer, []byte("to everyone"))
	for _, s := range append(subs, spy, rcv) {
		var got string
		testkit.Eventually(t, 20*time.Second, "message on "+s.Channel(), func() (bool, string) {
			s.Poll(func(b []byte, _ *Header) { got = string(b) }, 1)
			return got != "", ""
		})
		if got != "to everyone" {
			t.Fatalf("%s got %q", s.Channel(), got)
		}
	}
	if err := pub.RemoveDestination(fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", p2)); err != nil {
		t.Fatal(err)
	}
}
