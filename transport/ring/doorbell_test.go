package ring

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/internal/shm"
)

// Hooks for the doorbell tests of package ring_test (doorbell_loop_test.go),
// which run the real server loop.

// DisableDoorbell makes c behave like a client without the doorbell: it
// never rings, so a request sent while the server is parked waits out the
// park.
func DisableDoorbell(c *Conn) {
	if c.bell >= 0 {
		unix.Close(c.bell)
		c.bell = -1
	}
}

// RingDoorbell rings the server's doorbell through c unconditionally (to
// end a long park when a test is done).
func RingDoorbell(c *Conn) { unix.Write(c.bell, c.one[:]) }

// ServerParked reports c's serverParked word.
func ServerParked(c *Conn) bool {
	// serverParked: written by the server (seq-cst), read here (acquire).
	return shm.LoadInt64Acquire(c.mem, offParked) != 0
}

// readable reports whether fd polls readable now.
func readable(t *testing.T, fd int) bool {
	t.Helper()
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(pfd, 0)
	if err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// dialPolled dials srv while this goroutine polls it, so no loop runs.
func dialPolled(t *testing.T, srv *Server, dir string, o DialOptions) *Conn {
	t.Helper()
	l := startLoop(t, srv)
	c := dialTest(t, dir, o)
	l.halt()
	return c
}

// TestDoorbellHandshakeAndProtocol drives the server's side of the
// doorbell by hand: the handshake passes the eventfd, PrepareToPark sets
// every client's flag and calls the park off when a request waits, a
// client rings once per park, and Unparked clears the flag, drains the
// eventfd and counts the ring.
func TestDoorbellHandshakeAndProtocol(t *testing.T) {
	srv, dir := listenTest(t, Options{})
	a := dialPolled(t, srv, dir, DialOptions{})
	b := dialPolled(t, srv, dir, DialOptions{})
	if a.bell < 0 || b.bell < 0 {
		t.Fatalf("doorbell not passed in the handshake: %d %d", a.bell, b.bell)
	}
	if ServerParked(a) || readable(t, srv.WakeFD()) {
		t.Fatal("parked flag or doorbell set before any park")
	}

	// Nothing waiting: the park goes ahead and both clients see it.
	if !srv.PrepareToPark() {
		t.Fatal("PrepareToPark refused with empty rings")
	}
	if !ServerParked(a) || !ServerParked(b) {
		t.Fatal("PrepareToPark did not set every client's flag")
	}
	// a sends twice during the park: it rings once and clears its flag.
	for range 2 {
		if err := a.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if ServerParked(a) || !ServerParked(b) {
		t.Fatal("ringing must clear the ringer's flag only")
	}
	if !readable(t, srv.WakeFD()) {
		t.Fatal("the doorbell is not readable after a client rang")
	}
	srv.Unparked()
	if ServerParked(b) || readable(t, srv.WakeFD()) {
		t.Fatal("Unparked left a flag set or the doorbell readable")
	}
	var st Stats
	srv.Stats(&st)
	if st.Parks != 1 || st.Rings != 1 || st.ParksSkipped != 0 {
		t.Fatalf("stats %+v, want 1 park, 1 ring", st)
	}

	// Requests waiting: the park is called off (and the flags still say
	// parked until Unparked, which the loop calls either way).
	if srv.PrepareToPark() {
		t.Fatal("PrepareToPark agreed to park with two requests waiting")
	}
	srv.Unparked()
	srv.Poll(mono())
	for range 2 {
		a.SetDeadline(time.Now().Add(10 * time.Second))
		if got, err := a.ReadAppend(nil); err != nil || string(got) != "x" {
			t.Fatalf("reply %q, %v", got, err)
		}
	}

	// A client that does not ring leaves the doorbell quiet.
	DisableDoorbell(b)
	if !srv.PrepareToPark() {
		t.Fatal("PrepareToPark refused with empty rings")
	}
	if err := b.Write([]byte("y")); err != nil {
		t.Fatal(err)
	}
	if readable(t, srv.WakeFD()) {
		t.Fatal("a client without the doorbell rang")
	}
	srv.Unparked()
	srv.Stats(&st)
	if st.Parks != 3 || st.ParksSkipped != 1 || st.Rings != 1 {
		t.Fatalf("stats %+v, want 3 parks, 1 skipped, 1 ring", st)
	}

	// A save's rest (PrepareToRest) announces itself as a park does, and
	// is called off by a waiting request, but counts as no park.
	srv.Poll(mono()) // b's "y"
	if !srv.PrepareToRest() {
		t.Fatal("PrepareToRest refused with empty rings")
	}
	if !ServerParked(a) {
		t.Fatal("PrepareToRest did not set the clients' flags")
	}
	srv.Unparked()
	if err := a.Write([]byte("z")); err != nil {
		t.Fatal(err)
	}
	if srv.PrepareToRest() {
		t.Fatal("PrepareToRest agreed to rest with a request waiting")
	}
	srv.Unparked()
	srv.Stats(&st)
	if st.Parks != 3 || st.ParksSkipped != 1 {
		t.Fatalf("stats %+v after two rests, want still 3 parks, 1 skipped", st)
	}
}

// TestDoorbellNoAllocations: a round trip during which the client rings
// the doorbell allocates nothing on either side.
func TestDoorbellNoAllocations(t *testing.T) {
	srv, dir := listenTest(t, Options{})
	c := dialPolled(t, srv, dir, DialOptions{})
	msg := []byte("ping")
	buf := make([]byte, 0, 64)
	now := mono()
	allocs := testing.AllocsPerRun(200, func() {
		if !srv.PrepareToPark() {
			t.Fatal("PrepareToPark refused with empty rings")
		}
		if err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		srv.Unparked()
		srv.Poll(now)
		var err error
		if buf, err = c.ReadAppend(buf[:0]); err != nil || len(buf) != len(msg) {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per rung round trip, want 0", allocs)
	}
	var st Stats
	srv.Stats(&st)
	if st.Rings < 200 {
		t.Fatalf("%d rings, want one per round trip", st.Rings)
	}
}

// TestDoorbellClosed: Close closes the server's eventfd and the client's
// copy.
func TestDoorbellClosed(t *testing.T) {
	srv, dir := listenTest(t, Options{})
	c := dialPolled(t, srv, dir, DialOptions{})
	sfd, cfd := srv.WakeFD(), c.bell
	c.Close()
	if c.bell != -1 {
		t.Fatal("Conn.Close kept its doorbell")
	}
	srv.Close()
	if srv.WakeFD() != -1 {
		t.Fatal("Server.Close kept its doorbell")
	}
	// Both descriptors are closed: fcntl on them fails with EBADF (unless
	// the numbers were reused meanwhile, which this test does not do).
	for _, fd := range []int{sfd, cfd} {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != unix.EBADF {
			t.Errorf("descriptor %d still open after Close (%v)", fd, err)
		}
	}
}

// TestDoorbellFence: a client fences its requests itself exactly when the
// server does not issue membarrier before parking (the Dekker pair in
// doorbell.go must have a fence on both sides).
func TestDoorbellFence(t *testing.T) {
	srv, dir := listenTest(t, Options{})
	c := dialPolled(t, srv, dir, DialOptions{})
	if want := !(srv.barrier && clientBarrier()); c.fenced != want {
		t.Fatalf("fenced %v with server barrier %v, client registered %v", c.fenced, srv.barrier, clientBarrier())
	}
	t.Logf("membarrier: server %v, client %v", srv.barrier, clientBarrier())
	srv.barrier = false // as on a kernel without membarrier
	c2 := dialPolled(t, srv, dir, DialOptions{})
	if !c2.fenced {
		t.Fatal("a client of a server without membarrier does not fence its requests")
	}
	if err := c2.Write([]byte("fenced")); err != nil {
		t.Fatal(err)
	}
	srv.Poll(mono())
	c2.SetDeadline(time.Now().Add(10 * time.Second))
	if got, err := c2.ReadAppend(nil); err != nil || string(got) != "fenced" {
		t.Fatalf("fenced round trip: %q, %v", got, err)
	}
}
