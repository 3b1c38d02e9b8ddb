package udp

import (
	"bytes"
	"net/netip"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit/testproc"
	"golang.org/x/sys/unix"
)

func openLoopback(t *testing.T) *Socket {
	t.Helper()
	s, err := Open(Options{Bind: netip.MustParseAddrPort("127.0.0.1:0")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// recvWithin polls b on s until n datagrams arrived in one Recv or the
// deadline passes.
func recvWithin(t *testing.T, b *RecvBatch, s *Socket, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := b.Recv(s)
		if err != nil {
			t.Fatal(err)
		}
		if n == want {
			return
		}
		if n != 0 {
			t.Fatalf("Recv got %d datagrams, want %d", n, want)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no datagram within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// waitReadable waits until s has a datagram waiting.
func waitReadable(t *testing.T, s *Socket) {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(s.FD()), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 10_000)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n != 1 {
			t.Fatalf("no datagram within 10 s: %d, %v", n, err)
		}
		return
	}
}

// An idle socket is read one datagram at a time (recvfrom), a busy one in
// batches (recvmmsg); both report every datagram's bytes, source and
// truncation the same way.
func TestRecvSwitchesBetweenOneAndBatch(t *testing.T) {
	rx, tx := openLoopback(t), openLoopback(t)
	b := NewRecvBatch(4, 64)
	if n, err := b.Recv(rx); n != 0 || err != nil {
		t.Fatalf("empty socket: Recv = %d, %v", n, err)
	}
	if !rx.empty {
		t.Fatal("a Recv that found nothing did not mark the socket empty")
	}
	for _, m := range []string{"one", "two", "three"} {
		if n, err := tx.SendTo([]byte(m), rx.LocalAddr()); n != len(m) || err != nil {
			t.Fatalf("SendTo = %d, %v", n, err)
		}
	}
	// Empty before: one datagram, with its source.
	recvWithin(t, b, rx, 1)
	if got := string(b.Datagram(0)); got != "one" || b.Truncated(0) || b.From(0) != tx.LocalAddr() {
		t.Fatalf("single read: %q truncated %v from %v, want \"one\" from %v", got, b.Truncated(0), b.From(0), tx.LocalAddr())
	}
	if rx.empty {
		t.Fatal("a Recv that got a datagram left the socket marked empty")
	}
	// Busy: the rest in one batch.
	recvWithin(t, b, rx, 2)
	if string(b.Datagram(0)) != "two" || string(b.Datagram(1)) != "three" || b.From(1) != tx.LocalAddr() {
		t.Fatalf("batch read: %q %q from %v", b.Datagram(0), b.Datagram(1), b.From(1))
	}
	// A datagram longer than a buffer is cut and flagged, in both modes.
	long := bytes.Repeat([]byte{'x'}, 100)
	for _, mode := range []string{"single", "batch"} {
		if _, err := b.Recv(rx); err != nil { // nothing waits: marks empty
			t.Fatal(err)
		}
		if _, err := tx.SendTo(long, rx.LocalAddr()); err != nil {
			t.Fatal(err)
		}
		// Wait until it is there, so that the one Recv below reads it in
		// the mode under test (an empty Recv first would switch a batch
		// read to a single one).
		waitReadable(t, rx)
		rx.empty = mode == "single"
		if n, err := b.Recv(rx); n != 1 || err != nil {
			t.Fatalf("%s read of a waiting datagram: %d, %v", mode, n, err)
		}
		if !b.Truncated(0) || len(b.Datagram(0)) != 64 {
			t.Fatalf("%s read of a 100-byte datagram into 64: truncated %v, %d bytes", mode, b.Truncated(0), len(b.Datagram(0)))
		}
	}
}

// A batch of one goes out with sendto, a longer one with sendmmsg; both
// report what the kernel took.
func TestFlushOneAndMany(t *testing.T) {
	rx, tx := openLoopback(t), openLoopback(t)
	sb := NewSendBatch(4)
	rb := NewRecvBatch(4, 64)
	sb.Add(tx, []byte("solo"), rx.LocalAddr())
	if n, err := sb.Flush(tx); n != 1 || err != nil || sb.Sent(0) != 4 || sb.Len() != 0 {
		t.Fatalf("Flush of one = %d, %v, sent %d, len %d", n, err, sb.Sent(0), sb.Len())
	}
	rx.empty = true
	recvWithin(t, rb, rx, 1)
	if string(rb.Datagram(0)) != "solo" {
		t.Fatalf("got %q", rb.Datagram(0))
	}
	sb.Add(tx, []byte("a"), rx.LocalAddr())
	sb.Add(tx, []byte("bc"), rx.LocalAddr())
	if n, err := sb.Flush(tx); n != 2 || err != nil || sb.Sent(1) != 2 {
		t.Fatalf("Flush of two = %d, %v, sent %d", n, err, sb.Sent(1))
	}
	rx.empty = false
	recvWithin(t, rb, rx, 2)
	if string(rb.Datagram(0)) != "a" || string(rb.Datagram(1)) != "bc" {
		t.Fatalf("got %q %q", rb.Datagram(0), rb.Datagram(1))
	}
}

// Receiving and sending allocate nothing in either mode.
func TestRecvAndFlushAllocateNothing(t *testing.T) {
	rx, tx := openLoopback(t), openLoopback(t)
	sb := NewSendBatch(4)
	rb := NewRecvBatch(4, 64)
	msg := []byte("ping")
	to := rx.LocalAddr()
	allocs := testing.AllocsPerRun(200, func() {
		sb.Add(tx, msg, to)
		sb.Flush(tx)
		rb.Recv(rx)
		rb.Recv(rx)
		sb.Add(tx, msg, to)
		sb.Add(tx, msg, to)
		sb.Flush(tx)
		rb.Recv(rx)
		rb.Recv(rx)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per send/receive round", allocs)
	}
}

// BenchmarkIdleRecv is one poll of an idle socket (the busy-polling owner's
// common case).
func BenchmarkIdleRecv(b *testing.B) {
	rx, err := Open(Options{Bind: netip.MustParseAddrPort("127.0.0.1:0")})
	if err != nil {
		b.Fatal(err)
	}
	defer rx.Close()
	rb := NewRecvBatch(16, 1500)
	b.ReportAllocs()
	for b.Loop() {
		rb.Recv(rx)
	}
}

// TestBusyPollingLeavesTheRuntimeAlone: a goroutine locked to its thread
// that busy-polls a socket (an empty receive and a send per turn, as an
// in-process driver's owner does) for 300 ms must not set off the Go
// runtime's monitor thread: through the scheduler-visible Syscall6 the
// monitor takes the goroutine's processor in the middle of a call every
// 10 ms and then wakes every 20 µs for milliseconds (on two cores each
// wake-up preempts a spinning thread), so the process's other threads
// switch in 400-600 times; with raw calls 60-110 times
// (the monitor's 10 ms ticks and the runtime's preemption of the
// long-running goroutine).
func TestBusyPollingLeavesTheRuntimeAlone(t *testing.T) {
	rx, tx := openLoopback(t), openLoopback(t)
	to := rx.LocalAddr()
	b := NewRecvBatch(4, 2048)
	msg := []byte("ping")
	i := 0
	others := testproc.SpinCountingOthers(t, 300*time.Millisecond, func() error {
		if _, err := b.Recv(rx); err != nil {
			return err
		}
		if i++; i&1023 == 0 {
			if _, err := tx.SendTo(msg, to); err != nil {
				return err
			}
		}
		return nil
	})
	t.Logf("other threads switched in %d times while one busy-polled for 300 ms", others)
	if others > 250 {
		t.Errorf("the process's other threads switched in %d times while one thread busy-polled a socket for 300 ms, want at most 250: the socket calls wake the Go runtime's monitor (sysmon)", others)
	}
}

// setReady reports whether the poller's epoll set has an event now.
func setReady(t *testing.T, p *Poller) bool {
	t.Helper()
	ready, err := p.Ready(0)
	if err != nil {
		t.Fatal(err)
	}
	return ready
}

// TestPollerWatchesOnlyWhileArmed: a socket added to a Poller is watched
// only while the Poller is armed: a datagram waiting on it leaves the set
// unreadable before Arm and after DisarmIf, and readable once armed (one
// that came before the Arm included); a DisarmIf with the generation of
// an earlier Arm leaves a later Arm's set armed; a socket added or
// removed while armed joins or leaves the set at once.
func TestPollerWatchesOnlyWhileArmed(t *testing.T) {
	a, b, c := openLoopback(t), openLoopback(t), openLoopback(t)
	p, err := NewPoller()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Add(a); err != nil {
		t.Fatal(err)
	}
	if _, err := b.SendTo([]byte("x"), a.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	waitReadable(t, a)
	if setReady(t, p) || p.Armed() {
		t.Fatal("a datagram waits and the Poller was never armed, yet its set reports it")
	}
	gen, err := p.Arm()
	if err != nil {
		t.Fatal(err)
	}
	if !setReady(t, p) {
		t.Fatal("armed after the datagram came, the set does not report it")
	}
	if !p.DisarmIf(gen) || p.Armed() {
		t.Fatal("DisarmIf of the last Arm's generation did not disarm")
	}
	if setReady(t, p) {
		t.Fatal("disarmed, the set still reports the waiting datagram")
	}
	gen1, _ := p.Arm()
	gen2, _ := p.Arm()
	if p.DisarmIf(gen1) || !p.Armed() || !setReady(t, p) {
		t.Fatal("DisarmIf with an earlier Arm's generation disarmed a later Arm")
	}
	if p.Arms() != gen2 {
		t.Fatalf("Arms %d, want the last Arm's %d", p.Arms(), gen2)
	}
	recvWithin(t, NewRecvBatch(1, 64), a, 1) // a's datagram is read: only c can make the set readable now
	if setReady(t, p) {
		t.Fatal("nothing waits, yet the set reports a datagram")
	}
	if err := p.Add(c); err != nil {
		t.Fatal(err)
	}
	if _, err := b.SendTo([]byte("y"), c.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	waitReadable(t, c)
	if !setReady(t, p) {
		t.Fatal("a socket added while armed is not watched")
	}
	p.Remove(c)
	if setReady(t, p) {
		t.Fatal("a socket removed while armed is still watched")
	}
	if !p.DisarmIf(gen2) {
		t.Fatal("DisarmIf of the last generation did not disarm")
	}
	if _, err := p.Arm(); err != nil {
		t.Fatal(err)
	}
	if setReady(t, p) {
		t.Fatal("re-armed, the set reports the removed socket's datagram")
	}
}
