package interop

import (
	"fmt"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/driver"
	"github.com/goblin-kv/goblin/aeron/javadriver"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// TestMDSAcrossDrivers: a multi-destination subscription (control-mode=
// manual) on one driver receives one stream over two UDP destinations
// from a manual MDC publication on the other driver, the Java driver on
// one side and goblin's Go driver on the other, both ways round. Half way
// through, the subscription removes one destination: every message still
// arrives once and in order on the one image, whose active transport
// count goes from 2 to 1.
func TestMDSAcrossDrivers(t *testing.T) {
	t.Parallel() // its own drivers, ports and Java peers; it times nothing
	needJava(t)
	goDrv := startGoDriver(t, driver.Options{})
	javaDrv := startDriver(t, javadriver.Options{})
	dirs := map[string]string{"go": goDrv.Dir(), "java": javaDrv.Dir()}
	for i, dir := range [][2]string{{"java", "go"}, {"go", "java"}} {
		t.Run("pub-"+dir[0]+"-mds-"+dir[1], func(t *testing.T) {
			pc := connectDir(t, dirs[dir[0]])
			sc := connectDir(t, dirs[dir[1]])
			stream := int32(3100 + i)
			sub, err := sc.AddSubscription("aeron:udp?control-mode=manual", stream)
			if err != nil {
				t.Fatal(err)
			}
			dest := []string{
				fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", testproc.FreeUDPPort(t)),
				fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", testproc.FreeUDPPort(t)),
			}
			pub, err := pc.AddExclusivePublication("aeron:udp?control-mode=manual|term-length=64k", stream)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range dest {
				if err := sub.AddDestination(d); err != nil {
					t.Fatalf("subscription add destination %s: %v", d, err)
				}
				if err := pub.AddDestination(d); err != nil {
					t.Fatalf("publication add destination %s: %v", d, err)
				}
			}
			testkit.Eventually(t, 30*time.Second, "the MDS image", func() (bool, string) {
				return pub.IsConnected() && sub.ImageCount() == 1, fmt.Sprintf("images %d", sub.ImageCount())
			})
			img := sub.Images()[0]
			testkit.Eventually(t, 10*time.Second, "two active transports", func() (bool, string) {
				return img.ActiveTransportCount() == 2, fmt.Sprintf("%d", img.ActiveTransportCount())
			})
			const n = 20000
			sent, got := 0, 0
			removed := false
			testkit.Eventually(t, 120*time.Second, fmt.Sprintf("all %d messages", n), func() (bool, string) {
				for sent < n && pub.Offer([]byte(fmt.Sprintf("m%d-%0100d", sent, sent))) > 0 {
					sent++
				}
				sub.Poll(func(b []byte, _ *aeron.Header) {
					if want := fmt.Sprintf("m%d-%0100d", got, got); string(b) != want {
						t.Fatalf("got %.20q…, want %.20q… (lost, repeated or out of order)", b, want)
					}
					got++
				}, 100)
				if !removed && got >= n/2 {
					removed = true
					if err := sub.RemoveDestination(dest[0]); err != nil {
						t.Fatalf("remove destination: %v", err)
					}
				}
				return got == n, fmt.Sprintf("sent %d got %d", sent, got)
			})
			if sub.ImageCount() != 1 {
				t.Fatalf("%d images, want 1", sub.ImageCount())
			}
			testkit.Eventually(t, 10*time.Second, "one active transport after the removal", func() (bool, string) {
				return img.ActiveTransportCount() == 1, fmt.Sprintf("%d", img.ActiveTransportCount())
			})
		})
	}
}
