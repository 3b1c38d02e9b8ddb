package uds

import (
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/wiretest"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/transport"
)

// pushHandler's sessions answer lines as lineHandler's do and hand the
// test their connection's push, kill and queued functions.
type pushHandler struct {
	lineHandler
	push   func([]byte) bool
	kill   func()
	queued func() int
}

type pushSession struct {
	lineSession
	h *pushHandler
}

func (h *pushHandler) OpenStream(p proto.Protocol) transport.StreamSession {
	return pushSession{lineSession{&h.lineHandler}, h}
}

func (s pushSession) SetConn(_, _ string, _ int, kill func(), push func([]byte) bool) {
	s.h.kill, s.h.push = kill, push
}

func (s pushSession) SetQueued(queued func() int) { s.h.queued = queued }

// pushClient connects a client to a manually polled server and returns
// it once its session is open (after one request and its answer).
func pushClient(t *testing.T, cfg Config) (*Server, *pushHandler, int) {
	t.Helper()
	h := &pushHandler{}
	cfg.Network, cfg.Address, cfg.Handler, cfg.CheckEvery = "unix", filepath.Join(t.TempDir(), "g.sock"), h, 1
	s := manualServer(t, cfg)
	fd := wiretest.RawUnix(t, s.Addr())
	t.Cleanup(func() { unix.Close(fd) })
	buf := make([]byte, 64)
	if n := roundTrip(s, fd, []byte("hi\n"), buf); string(buf[:n]) != "+hi\r\n" {
		t.Fatalf("got %q", buf[:n])
	}
	if h.push == nil || h.queued == nil {
		t.Fatal("the session was not given push and queued")
	}
	return s, h, fd
}

// TestPushDoesNotAllocate: pushing a message to a client that reads it
// allocates nothing once its first block exists (the emptied block is
// kept for the next push, the queue's array reused).
func TestPushDoesNotAllocate(t *testing.T) {
	s, h, fd := pushClient(t, Config{})
	msg := []byte("*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n")
	buf := make([]byte, 256)
	cycle := func() {
		if !h.push(msg) {
			t.Fatal("push refused")
		}
		got := 0
		for got < len(msg) {
			s.Poll(0)
			if n, err := unix.Read(fd, buf[got:]); err == nil && n > 0 {
				got += n
			}
		}
		if string(buf[:got]) != string(msg) {
			t.Fatalf("client read %q", buf[:got])
		}
	}
	cycle()
	if a := testing.AllocsPerRun(1000, cycle); a != 0 {
		t.Fatalf("%v allocations per push", a)
	}
}

// TestPushQueuedAndKill: pushes to a client that does not read are queued
// (queued reports them) until MaxOutput, where push refuses; kill then
// drops the client at once and releases what it queued, although a
// client at MaxOutput is not watched for input (shutting its socket for
// reading, as kill did before, left it connected until StallTimeout).
func TestPushQueuedAndKill(t *testing.T) {
	s, h, fd := pushClient(t, Config{MaxOutput: 1 << 20, StallTimeout: time.Hour})
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 4096)
	msg := make([]byte, 4096)
	pushed := 0
	for h.push(msg) {
		pushed++
		s.Poll(0)
		if pushed > 10000 {
			t.Fatal("push never refused")
		}
	}
	if q := h.queued(); q == 0 || q > 1<<20 {
		t.Fatalf("queued %d bytes after %d pushes, want some, at most MaxOutput", q, pushed)
	}
	h.kill()
	for range 10 {
		s.Poll(0)
	}
	var st Stats
	if s.Stats(&st); s.Clients() != 0 || st.Buffered != 0 {
		t.Fatalf("after kill: %d clients, %d bytes buffered; want the client dropped", s.Clients(), st.Buffered)
	}
	testkit.Eventually(t, 10*time.Second, "the killed client to read the end of its stream", func() (bool, string) {
		n, err := unix.Read(fd, make([]byte, 64<<10))
		return n == 0 && err == nil, ""
	})
}

// parkSession answers lines as lineSession does, except "park": it takes
// that line with no reply, then refuses its client's further requests
// (consumes nothing) until the test unparks it and pushes the answer, as
// the engine does with a WAIT waiting for replicas.
type parkSession struct {
	pushSession
	parked *bool
}

func (s parkSession) Serve(in, out []byte, limit int) (int, []byte, bool) {
	if *s.parked {
		return 0, out, false
	}
	if len(in) >= 5 && string(in[:5]) == "park\n" {
		*s.parked = true
		return 5, out, false
	}
	return s.pushSession.Serve(in, out, limit)
}

type parkHandler struct {
	pushHandler
	parked bool
}

func (h *parkHandler) OpenStream(p proto.Protocol) transport.StreamSession {
	return parkSession{pushSession{lineSession{&h.lineHandler}, &h.pushHandler}, &h.parked}
}

// TestPushReoffersHeldRequests: requests a session left unconsumed while
// its client waited for an out-of-turn answer are offered again once that
// answer is pushed, on the next Poll: no socket event comes for bytes
// already read, and no time needs to pass.
func TestPushReoffersHeldRequests(t *testing.T) {
	h := &parkHandler{}
	s := manualServer(t, Config{Network: "unix", Address: filepath.Join(t.TempDir(), "g.sock"), Handler: h, CheckEvery: 1})
	fd := wiretest.RawUnix(t, s.Addr())
	t.Cleanup(func() { unix.Close(fd) })
	buf := make([]byte, 64)
	if n := roundTrip(s, fd, []byte("hi\n"), buf); string(buf[:n]) != "+hi\r\n" {
		t.Fatalf("got %q", buf[:n])
	}
	unix.Write(fd, []byte("park\nafter\n"))
	for range 10 {
		s.Poll(0)
	}
	if !h.parked {
		t.Fatal("the session never saw park")
	}
	h.parked = false
	if !h.push([]byte("+unparked\r\n")) {
		t.Fatal("push refused")
	}
	var got []byte
	for range 10 {
		s.Poll(0) // the same instant: only the push can have woken the held requests
		if n, err := unix.Read(fd, buf); err == nil && n > 0 {
			got = append(got, buf[:n]...)
		}
	}
	if string(got) != "+unparked\r\n+after\r\n" {
		t.Fatalf("after the push: %q, want the pushed answer and then the held request's", got)
	}
}
