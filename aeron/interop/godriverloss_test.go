package interop

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/driver"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// TestGoDriverLossInterceptors: the unchanged Java publisher on one Go
// driver and the Java subscriber on another, over UDP loopback, with the
// C driver's test interceptors (AERON_UDP_CHANNEL_INCOMING_INTERCEPTORS
// and their *_ARGS, given as aeronmd is given them) dropping data on the
// subscriber's driver: its NAKs go up, the publisher's driver counts them
// and retransmits, and every message arrives intact.
func TestGoDriverLossInterceptors(t *testing.T) {
	t.Parallel() // its own drivers, ports and Java peers; it times nothing
	j := needJava(t)
	for _, tc := range []struct{ name, interceptors, variable, args string }{
		{"loss", "loss", "AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_LOSS_ARGS", "rate=0.1|seed=20260|recv-msg-mask=0x2"},
		{"fixed-loss", "fixed-loss", "AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_FIXED_LOSS_ARGS", "term-id=0|term-offset=8192|length=8192"},
		{"multi-gap-loss", "multi-gap-loss", "AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_MULTI_GAP_LOSS_ARGS",
			"term-id=0|gap-radix=16384|gap-length=4096|total-gaps=4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			props := driver.PropertiesFromEnv([]string{
				"AERON_UDP_CHANNEL_INCOMING_INTERCEPTORS=" + tc.interceptors, tc.variable + "=" + tc.args})
			lossy, err := props.Options()
			if err != nil {
				t.Fatal(err)
			}
			pubDrv := startGoDriver(t, driver.Options{})
			subDrv := startGoDriver(t, lossy)
			const count = 3000
			port := testproc.FreeUDPPort(t)
			channel := fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", port)
			sub := startProcIn(t, j, subDrv.Dir(), "Subscriber", "channel="+channel, "stream=3101",
				"count="+strconv.Itoa(count), "size=200", "timeoutMs=120000")
			pub := startProcIn(t, j, pubDrv.Dir(), "Publisher",
				"channel="+channel+"|term-length=256k|init-term-id=0|term-id=0|term-offset=0", "exclusive=true",
				"stream=3101", "count="+strconv.Itoa(count), "size=200", "timeoutMs=120000")
			res, err := sub.Result(ioTimeout)
			if err != nil {
				t.Fatal(err)
			}
			if res["received"] != strconv.Itoa(count) || res["errors"] != "0" {
				t.Fatalf("subscriber: %v\n%s", res, sub.Output())
			}
			pub.Stop(ioTimeout)
			value := func(d *driver.Driver, id int32) int64 {
				cnc, err := aeron.OpenCnC(d.Dir())
				if err != nil {
					t.Fatal(err)
				}
				defer cnc.Close()
				return cnc.Counters().Value(id)
			}
			naksSent, naksReceived, retransmits := value(subDrv, ctrNaksSent), value(pubDrv, ctrNaksReceived),
				value(pubDrv, ctrRetransmits)
			t.Logf("%s: NAKs sent %d, NAKs received %d, retransmits %d, all %d messages delivered",
				tc.name, naksSent, naksReceived, retransmits, count)
			if naksSent == 0 || naksReceived == 0 || retransmits == 0 {
				t.Fatalf("no recovery seen: NAKs sent %d (subscriber's driver), NAKs received %d and retransmits %d "+
					"(publisher's driver)", naksSent, naksReceived, retransmits)
			}
		})
	}
}
