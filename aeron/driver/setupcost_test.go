package driver

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/internal/wire"
)

// BenchmarkSetupDutyCycle times the duty cycle that reads a stranger's
// SETUP for a subscribed stream and makes its image, with the log in
// /dev/shm as goblin-server's is: ns/op is the time spent in DoWork from
// the datagram's arrival until the image exists, max-cycle-ns the longest
// single duty cycle among them (what a legitimate client's datagram
// waits behind).
func BenchmarkSetupDutyCycle(b *testing.B) {
	for _, c := range []struct {
		termLength int32
		dense      bool
	}{{64 << 10, false}, {64 << 20, false}, {64 << 20, true}} {
		kind := "sparse"
		if c.dense {
			kind = "dense"
		}
		b.Run(fmt.Sprintf("term=%dKiB/%s", c.termLength>>10, kind), func(b *testing.B) {
			h := newHostileReceiver(b, func(o *Options) {
				if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
					dir, err := os.MkdirTemp("/dev/shm", "goblin-setupcost-")
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { os.RemoveAll(dir) })
					o.Dir = dir + "/aeron"
				}
				o.MaxImageTermLength = 64 << 20
				o.MaxImagesLength = 1 << 52 // sparse logs: no real memory
				o.StreamSessionLimit = 1 << 20
				// Each image takes counters (positions, high-water mark):
				// room for the images a second of iterations makes, where
				// the default counters buffer stops at about 2,000.
				o.CountersBufferLength = 64 << 20
				o.DenseLogs = c.dense
			})
			var maxCycle time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				images := len(h.images)
				p := h.setupFrame(wire.SetupFields{SessionID: int32(i + 1), TermLength: c.termLength, MTU: 1408})
				if _, err := h.conn.WriteToUDP(p, h.to); err != nil {
					b.Fatal(err)
				}
				deadline := time.Now().Add(10 * time.Second)
				for len(h.images) == images {
					if time.Now().After(deadline) {
						b.Fatalf("no image for session %d's SETUP in 10 s (%d images); the driver's error log: %s", i+1, images, h.errorLogText())
					}
					b.StartTimer()
					t0 := time.Now()
					h.DoWork(h.nowNs)
					d := time.Since(t0)
					b.StopTimer()
					maxCycle = max(maxCycle, d)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(maxCycle.Nanoseconds()), "max-cycle-ns")
		})
	}
}

// TestStrangersImageIsNotPrefaulted: a SETUP from any host makes an image
// whose term length is the sender's choice; the subscribing client used
// to prefault the image's log (MADV_POPULATE_WRITE), so a stranger's SETUP
// with a 16 MiB term made it allocate the whole 48 MiB log and spend CPU
// writing it (with 64 MiB terms, ~0.9 s of a core that goblin-server's
// loop needed: the legitimate client's PING stalls during a flood). The
// client maps a network image lazily: the sparse log stays unallocated.
func TestStrangersImageIsNotPrefaulted(t *testing.T) {
	const termLength = 16 << 20
	d := startDriver(t, udpOptions(t))
	c := connectClient(t, d)
	port := freePort(t)
	available := make(chan *aeron.Image, 1)
	sub, err := c.AddSubscriptionWithHandlers(fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", port), 10,
		func(img *aeron.Image) { available <- img }, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	setup := make([]byte, wire.SetupLength)
	wire.PutSetup(setup, &wire.SetupFields{SessionID: 7, StreamID: 10, TermLength: termLength, MTU: 1408})
	var img *aeron.Image
	for deadline := time.Now().Add(20 * time.Second); img == nil; {
		if time.Now().After(deadline) {
			t.Fatal("the subscription never heard of the image of the stranger's SETUP")
		}
		if _, err := conn.WriteToUDP(setup, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}); err != nil {
			t.Fatal(err)
		}
		select {
		case img = <-available:
		case <-time.After(100 * time.Millisecond):
		}
	}
	logs, err := filepath.Glob(filepath.Join(d.Dir(), imagesDir, "*.logbuffer"))
	if err != nil || len(logs) != 1 {
		t.Fatalf("image logs %v (%v) with the client mapping image session %d, want one", logs, err, img.SessionID())
	}
	var st syscall.Stat_t
	if err := syscall.Stat(logs[0], &st); err != nil {
		t.Fatal(err)
	}
	if allocated := st.Blocks * 512; allocated > st.Size/4 {
		t.Fatalf("the image log %s of a stranger's SETUP has %d of its %d bytes allocated once the client mapped it; "+
			"want it left sparse", logs[0], allocated, st.Size)
	}
}
