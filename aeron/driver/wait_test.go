package driver

import (
	"testing"
	"time"
)

// waitFDReady waits up to wait for the driver's WaitFD to poll readable.
func waitFDReady(t *testing.T, d *Driver, wait time.Duration) bool {
	t.Helper()
	ready, err := d.poller.Ready(wait)
	if err != nil {
		t.Fatal(err)
	}
	return ready
}

// TestWaitFDWatchesSocketsOnlyWhenPrepared: a driver's WaitFD reports a
// datagram waiting on its sockets only after PrepareToWait (one that came
// before the call included), stays armed while its owner keeps preparing,
// and leaves the sockets out of the set again once its owner ran duty
// cycles for disarmAfterNs without preparing: a busy-polling owner's
// datagrams pay for no epoll wake-up.
func TestWaitFDWatchesSocketsOnlyWhenPrepared(t *testing.T) {
	u := newUDPPair(t, 64<<10)
	sub := u.sub
	// send makes the publisher's driver send one frame; over loopback it
	// is queued on the subscriber's socket when the send returns.
	send := func() {
		t.Helper()
		if !u.appendFrame() {
			t.Fatal("no room to append a frame")
		}
		u.pub.nowNs += int64(time.Microsecond)
		u.pub.DoWork(u.pub.nowNs)
	}
	// cycles runs the subscriber's duty cycle for span of its clock, one
	// cycle every 100 µs, preparing to wait before each when prepare.
	cycles := func(span time.Duration, prepare bool) {
		for end := sub.nowNs + int64(span); sub.nowNs < end; {
			if prepare {
				if err := sub.PrepareToWait(); err != nil {
					t.Fatal(err)
				}
			}
			sub.nowNs += int64(100 * time.Microsecond)
			sub.DoWork(sub.nowNs)
			u.consume()
		}
	}

	send()
	if sub.poller.Armed() || waitFDReady(t, sub.Driver, 0) {
		t.Fatal("nobody prepared to wait, yet the sockets are in WaitFD's set")
	}
	if err := sub.PrepareToWait(); err != nil {
		t.Fatal(err)
	}
	if !waitFDReady(t, sub.Driver, 10*time.Second) {
		t.Fatal("prepared after a datagram came, WaitFD does not report it")
	}

	cycles(3*time.Duration(disarmAfterNs), true)
	if !sub.poller.Armed() {
		t.Fatal("an owner that prepares before every cycle was disarmed")
	}
	send()
	if !waitFDReady(t, sub.Driver, 10*time.Second) {
		t.Fatal("armed, WaitFD does not report a datagram")
	}

	cycles(2*time.Duration(disarmAfterNs), false)
	if sub.poller.Armed() {
		t.Fatalf("the owner spun for %v of duty cycles without preparing, yet the sockets stay in the set",
			2*time.Duration(disarmAfterNs))
	}
	send()
	if waitFDReady(t, sub.Driver, 0) {
		t.Fatal("disarmed, WaitFD reports a datagram")
	}
	if err := sub.PrepareToWait(); err != nil {
		t.Fatal(err)
	}
	if !waitFDReady(t, sub.Driver, 10*time.Second) {
		t.Fatal("prepared again, WaitFD does not report the datagram that came while disarmed")
	}
}
