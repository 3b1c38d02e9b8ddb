package driver

import (
	"bytes"
	"fmt"
	"net"
	"testing"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/internal/counters"
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
	eventually(t, "connected", func() bool { return pub.IsConnected() && sub.ImageCount() == 1 })
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
	eventually(t, "all messages", func() bool {
		for sent < n {
			if pub.Offer(msg(sent)) < 0 {
				break
			}
			sent++
		}
		sub.Poll(asm.OnFragment, 100)
		return len(got) == n
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
