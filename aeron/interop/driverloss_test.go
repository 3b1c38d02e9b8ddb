package interop

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/javadriver"
	"github.com/goblin-kv/goblin/internal/testkit"
)

// TestDriverKilledMidStream kills the media driver (SIGKILL, no clean
// shutdown) while Go traffic flows over IPC and a Java subscriber is
// attached, and checks that the Go client notices through the driver's
// stale heartbeat, closes every publication, subscription and image,
// reports ErrDriverTimeout to the error handler and through Err, and fails
// later calls with ErrClientClosed instead of hanging.
func TestDriverKilledMidStream(t *testing.T) {
	j := needJava(t)
	d := startDriver(t, javadriver.Options{})
	// A Java subscriber on the same stream: a real peer sharing the log.
	// Started before the Go client connects: the JVM's start is the slow
	// part on a loaded machine, and the client's 2 s driver timeout runs
	// from the moment it connects, so a starved driver could time out a
	// client that was only waiting for the JVM.
	startProc(t, j, d, "Subscriber", "channel=aeron:ipc", "stream=7001", "count=1000000000", "timeoutMs=600000")
	const driverTimeout = 2 * time.Second
	errs := make(chan error, 8)
	var unavailable atomic.Int32
	c := connect(t, d, aeron.Options{
		DriverTimeout: driverTimeout,
		ErrorHandler: func(err error) {
			select {
			case errs <- err:
			default:
			}
		},
	})
	pub, err := c.AddPublication("aeron:ipc", 7001)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := c.AddSubscriptionWithHandlers("aeron:ipc", 7001, nil, func(*aeron.Image) { unavailable.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, ioTimeout, "two subscribers on the stream", func() (bool, string) { return pub.IsConnected() && sub.IsConnected(), "" })
	images := sub.ImageCount()

	// Traffic until the publication reports Closed.
	msg := make([]byte, 64)
	received := 0
	count := func([]byte, *aeron.Header) { received++ }
	sent := 0
	for ; sent < 100; sent++ {
		Fill(msg, int64(sent))
		offer(t, pub, msg)
	}
	select {
	case err := <-errs:
		t.Fatalf("before the driver was killed, the client reported %v: the live driver's heartbeat went stale (a starved machine), so this run cannot show the loss", err)
	default:
	}
	killed := time.Now()
	d.Kill()
	var offerClosedAfter time.Duration
	deadline := killed.Add(10 * driverTimeout) // a hang guard, not a timing assertion
	for {
		sub.Poll(count, 16)
		if r := pub.Offer(msg); r == aeron.Closed {
			offerClosedAfter = time.Since(killed)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the publication was still open %v after the driver died (driver timeout %v)",
				time.Since(killed), driverTimeout)
		}
		time.Sleep(time.Millisecond)
	}
	var reported error
	select {
	case reported = <-errs:
	case <-time.After(ioTimeout):
		t.Fatal("no error reported to the error handler")
	}
	reportedAfter := time.Since(killed)
	if !errors.Is(reported, aeron.ErrDriverTimeout) {
		t.Fatalf("reported %v, want ErrDriverTimeout", reported)
	}
	select {
	case <-c.Done():
	case <-time.After(ioTimeout):
		t.Fatal("the client's conductor did not stop")
	}
	if !errors.Is(c.Err(), aeron.ErrDriverTimeout) {
		t.Fatalf("Err() = %v, want ErrDriverTimeout", c.Err())
	}
	if !pub.IsClosed() || !sub.IsClosed() || !c.IsClosed() {
		t.Fatalf("closed: publication %v subscription %v client %v", pub.IsClosed(), sub.IsClosed(), c.IsClosed())
	}
	if sub.ImageCount() != 0 || int(unavailable.Load()) != images {
		t.Fatalf("images left %d, unavailable callbacks %d of %d", sub.ImageCount(), unavailable.Load(), images)
	}
	if n := sub.Poll(count, 16); n != 0 {
		t.Fatalf("Poll on a dead client returned %d", n)
	}
	if _, err := c.AddPublication("aeron:ipc", 7002); !errors.Is(err, aeron.ErrClientClosed) {
		t.Fatalf("AddPublication after driver loss: %v, want ErrClientClosed", err)
	}
	if _, err := c.AddSubscription("aeron:ipc", 7002); !errors.Is(err, aeron.ErrClientClosed) {
		t.Fatalf("AddSubscription after driver loss: %v, want ErrClientClosed", err)
	}
	t.Logf("driver SIGKILLed: Offer returned CLOSED after %v, error reported after %v (driver timeout %v): %v",
		offerClosedAfter.Round(time.Millisecond), reportedAfter.Round(time.Millisecond), driverTimeout, reported)

	// A new driver in the same directory: a new client connects and works.
	nd, err := d.Restart(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nd.Stop() })
	c2 := connect(t, nd, aeron.Options{DriverTimeout: driverTimeout})
	p2 := addPub(t, c2, "aeron:ipc", 7003, false)
	s2, err := c2.AddSubscription("aeron:ipc", 7003)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, ioTimeout, "the stream on the restarted driver", func() (bool, string) { return p2.IsConnected(), "" })
	offer(t, p2, msg)
	got := 0
	testkit.Eventually(t, ioTimeout, "a message through the restarted driver", func() (bool, string) {
		s2.Poll(func(b []byte, _ *aeron.Header) {
			if Check(b, int64(sent-1)) == -1 {
				got++
			}
		}, 1)
		return got == 1, ""
	})
}
