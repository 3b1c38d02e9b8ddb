package driver

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/internal/testkit"
)

// TestChannelTimestamps: a publication with channel-snd-ts-offset=8 and a
// subscription with channel-rcv-ts-offset=reserved (in an MDS destination
// and a plain endpoint): each message arrives with the sender's clock in
// payload bytes 8..16 and the receiver's in the header's reserved value,
// both inside the test's window and the send no later than the receive;
// payload bytes outside the stamp arrive as sent. (Only the first frame
// of a datagram gets the receive stamp, as in the Java driver, so the
// test keeps one message in flight.)
func TestChannelTimestamps(t *testing.T) {
	for _, mds := range []bool{false, true} {
		t.Run(fmt.Sprintf("mds=%t", mds), func(t *testing.T) {
			pubDriver := startDriver(t, udpOptions(t))
			subDriver := startDriver(t, udpOptions(t))
			endpoint := fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", freePort(t))
			var sub *aeron.Subscription
			var err error
			if mds {
				sub, err = connectClient(t, subDriver).AddSubscription("aeron:udp?control-mode=manual|channel-rcv-ts-offset=reserved", 40)
				if err == nil {
					err = sub.AddDestination(endpoint)
				}
			} else {
				sub, err = connectClient(t, subDriver).AddSubscription(endpoint+"|channel-rcv-ts-offset=reserved", 40)
			}
			if err != nil {
				t.Fatal(err)
			}
			pub, err := connectClient(t, pubDriver).AddExclusivePublication(endpoint+"|channel-snd-ts-offset=8", 40)
			if err != nil {
				t.Fatal(err)
			}
			testkit.Eventually(t, 30*time.Second, "connected", func() (bool, string) { return pub.IsConnected() && sub.ImageCount() == 1, "" })
			before := time.Now().UnixNano()
			msg := make([]byte, 64)
			for i := range msg {
				msg[i] = byte(i + 1)
			}
			const n = 20
			var snd, rcv []int64
			sent := 0
			testkit.Eventually(t, 30*time.Second, fmt.Sprintf("%d stamped messages", n), func() (bool, string) {
				// One message in flight, so each datagram holds one frame: the
				// receiver stamps only a datagram's first frame.
				if sent == len(rcv) && sent < n && pub.Offer(msg) > 0 {
					sent++
				}
				sub.Poll(func(b []byte, h *aeron.Header) {
					for i, v := range b {
						if (i < 8 || i >= 16) && v != byte(i+1) {
							t.Fatalf("payload byte %d = %d, want %d (only bytes 8..16 carry the stamp)", i, v, i+1)
						}
					}
					snd = append(snd, int64(binary.LittleEndian.Uint64(b[8:])))
					rcv = append(rcv, h.ReservedValue())
				}, 10)
				return len(rcv) == n, fmt.Sprintf("sent %d got %d", sent, len(rcv))
			})
			after := time.Now().UnixNano()
			for i := range rcv {
				if snd[i] < before || snd[i] > after || rcv[i] < snd[i] || rcv[i] > after {
					t.Fatalf("message %d: send stamp %d, receive stamp %d, want before=%d <= send <= receive <= after=%d",
						i, snd[i], rcv[i], before, after)
				}
			}
		})
	}
}

// TestChannelTimestampOffsetRefused: an offset that is neither an int
// (from −8, the reserved value, on) nor "reserved" is refused, naming the
// parameter.
func TestChannelTimestampOffsetRefused(t *testing.T) {
	d := startDriver(t, udpOptions(t))
	c := connectClient(t, d)
	_, err := c.AddSubscription(fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d|channel-rcv-ts-offset=soon", freePort(t)), 41)
	if err == nil || !strings.Contains(err.Error(), "channel-rcv-ts-offset") {
		t.Fatalf("channel-rcv-ts-offset=soon: %v, want a refusal naming it", err)
	}
	_, err = c.AddExclusivePublication(fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d|channel-snd-ts-offset=-100", freePort(t)), 41)
	if err == nil || !strings.Contains(err.Error(), "channel-snd-ts-offset") {
		t.Fatalf("channel-snd-ts-offset=-100: %v, want a refusal naming it", err)
	}
}

// TestChannelTimestampOffsetMismatchRefused: a second subscription or
// publication on an endpoint with another (or no) timestamp offset is
// refused as the Java driver refuses it ("option conflicts"), one with the
// same offset is accepted.
func TestChannelTimestampOffsetMismatchRefused(t *testing.T) {
	d := startDriver(t, udpOptions(t))
	c := connectClient(t, d)
	for _, k := range []struct {
		param string
		add   func(channel string) error
	}{
		{"channel-rcv-ts-offset", func(ch string) error { _, err := c.AddSubscription(ch, 41); return err }},
		{"channel-snd-ts-offset", func(ch string) error { _, err := c.AddPublication(ch, 41); return err }},
	} {
		base := fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", freePort(t))
		if err := k.add(base + "|" + k.param + "=reserved"); err != nil {
			t.Fatalf("%s=reserved: %v", k.param, err)
		}
		if err := k.add(base + "|" + k.param + "=reserved|alias=same"); err != nil {
			t.Fatalf("the same %s again: %v", k.param, err)
		}
		for v, want := range map[string]string{"": k.param + "=-1 existingChannel=", "|" + k.param + "=8": k.param + "=8 existingChannel="} {
			err := k.add(base + v)
			if err == nil || !strings.Contains(err.Error(), "option conflicts with existing subscription: "+want) {
				t.Errorf("%s then %q: %v, want a conflict naming %q", k.param, v, err, want)
			}
		}
	}
}

// TestMediaReceiveTimestamps: a subscription with media-rcv-ts-offset (the
// C driver's parameter; plain endpoint and MDS destination, at the
// reserved value and at payload offset 0) gets the kernel's receive time
// of each datagram, inside the test's window and no earlier than the
// sender's channel-snd-ts-offset stamp, with the rest of the payload
// intact; a second subscription with another media offset on the same
// endpoint, and offsets that overlap on one channel, are refused.
func TestMediaReceiveTimestamps(t *testing.T) {
	for _, tc := range []struct {
		name, offset string
		mds          bool
	}{{"reserved", "reserved", false}, {"offset0", "0", false}, {"mds-reserved", "reserved", true}} {
		t.Run(tc.name, func(t *testing.T) {
			pubDriver := startDriver(t, udpOptions(t))
			subDriver := startDriver(t, udpOptions(t))
			endpoint := fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", freePort(t))
			var sub *aeron.Subscription
			var err error
			if tc.mds {
				sub, err = connectClient(t, subDriver).AddSubscription("aeron:udp?control-mode=manual|media-rcv-ts-offset="+tc.offset, 42)
				if err == nil {
					err = sub.AddDestination(endpoint)
				}
			} else {
				sub, err = connectClient(t, subDriver).AddSubscription(endpoint+"|media-rcv-ts-offset="+tc.offset, 42)
			}
			if err != nil {
				t.Fatal(err)
			}
			pub, err := connectClient(t, pubDriver).AddExclusivePublication(endpoint+"|channel-snd-ts-offset=8", 42)
			if err != nil {
				t.Fatal(err)
			}
			testkit.Eventually(t, 30*time.Second, "connected", func() (bool, string) { return pub.IsConnected() && sub.ImageCount() == 1, "" })
			before := time.Now().UnixNano()
			msg := make([]byte, 64)
			for i := range msg {
				msg[i] = byte(i + 1)
			}
			const n = 20
			var snd, rcv []int64
			sent := 0
			testkit.Eventually(t, 30*time.Second, fmt.Sprintf("%d media-stamped messages", n), func() (bool, string) {
				if sent == len(rcv) && sent < n && pub.Offer(msg) > 0 {
					sent++
				}
				sub.Poll(func(b []byte, h *aeron.Header) {
					stamped := func(i int) bool { return i >= 8 && i < 16 || tc.offset == "0" && i < 8 }
					for i, v := range b {
						if !stamped(i) && v != byte(i+1) {
							t.Fatalf("payload byte %d = %d, want %d", i, v, i+1)
						}
					}
					snd = append(snd, int64(binary.LittleEndian.Uint64(b[8:])))
					if tc.offset == "0" {
						rcv = append(rcv, int64(binary.LittleEndian.Uint64(b)))
					} else {
						rcv = append(rcv, h.ReservedValue())
					}
				}, 10)
				return len(rcv) == n, fmt.Sprintf("sent %d got %d", sent, len(rcv))
			})
			after := time.Now().UnixNano()
			for i := range rcv {
				if snd[i] < before || rcv[i] < snd[i] || rcv[i] > after {
					t.Fatalf("message %d: send stamp %d, media receive stamp %d, want before=%d <= send <= receive <= after=%d",
						i, snd[i], rcv[i], before, after)
				}
			}
			if !tc.mds {
				_, err = connectClient(t, subDriver).AddSubscription(endpoint+"|media-rcv-ts-offset=16", 42)
				if err == nil || !strings.Contains(err.Error(), "option conflicts with existing subscription: media-rcv-ts-offset=16") {
					t.Fatalf("another media offset on the endpoint: %v, want a conflict", err)
				}
			}
		})
	}
	d := startDriver(t, udpOptions(t))
	c := connectClient(t, d)
	for _, overlap := range []string{"media-rcv-ts-offset=0|channel-rcv-ts-offset=4", "media-rcv-ts-offset=reserved|channel-snd-ts-offset=reserved",
		"channel-rcv-ts-offset=16|channel-snd-ts-offset=20"} {
		_, err := c.AddSubscription(fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d|%s", freePort(t), overlap), 43)
		if err == nil || !strings.Contains(err.Error(), "overlap") {
			t.Errorf("%s: %v, want an overlap refusal", overlap, err)
		}
	}
}
