package rawpoll

import (
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit/testproc"
	"golang.org/x/sys/unix"
)

// TestEpollWaitNow: no event on a quiet pipe, the read end's event once
// a byte is written, an error for a descriptor that is not an epoll set;
// and it never waits (a zero timeout: the quiet case returns at once).
func TestEpollWaitNow(t *testing.T) {
	p := nonblockingPipe(t)
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(ep)
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, p[0], &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(p[0])}); err != nil {
		t.Fatal(err)
	}
	events := make([]unix.EpollEvent, 4)
	if n, err := EpollWaitNow(ep, events); n != 0 || err != nil {
		t.Fatalf("quiet pipe: %d events, %v", n, err)
	}
	if _, err := unix.Write(p[1], []byte{1}); err != nil {
		t.Fatal(err)
	}
	n, err := EpollWaitNow(ep, events)
	if n != 1 || err != nil || events[0].Fd != int32(p[0]) || events[0].Events&unix.EPOLLIN == 0 {
		t.Fatalf("after a write: %d events (%+v), %v", n, events[0], err)
	}
	if n, err := EpollWaitNow(p[0], events); n != 0 || err != unix.EINVAL {
		t.Fatalf("not an epoll set: %d events, %v; want EINVAL", n, err)
	}
	if a := testing.AllocsPerRun(100, func() { EpollWaitNow(ep, events) }); a != 0 {
		t.Fatalf("%v allocations a call", a)
	}
}

// TestSpinningOnEpollWaitNowLeavesTheRuntimeAlone: a thread that checks an
// epoll set on every spin for 300 ms, as goblin-server's loop does with
// only socket listeners, must not set off the Go runtime's monitor (with
// unix.EpollWait the process's other threads switch in hundreds of times
// more; see aeron/internal/udp's TestBusyPollingLeavesTheRuntimeAlone).
func TestSpinningOnEpollWaitNowLeavesTheRuntimeAlone(t *testing.T) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(ep)
	events := make([]unix.EpollEvent, 4)
	others := testproc.SpinCountingOthers(t, 300*time.Millisecond, func() error {
		_, err := EpollWaitNow(ep, events)
		return err
	})
	t.Logf("other threads switched in %d times while one spun on epoll_wait for 300 ms", others)
	if others > 250 {
		t.Errorf("the process's other threads switched in %d times while one thread spun on epoll_wait for 300 ms, want at most 250: the checks wake the Go runtime's monitor (sysmon)", others)
	}
}

// TestReadWrite: Read on an empty non-blocking pipe says EAGAIN, and
// what Write puts in comes out of Read.
func TestReadWrite(t *testing.T) {
	p := nonblockingPipe(t)
	buf := make([]byte, 8)
	if n, err := Read(p[0], buf); n != 0 || err != unix.EAGAIN {
		t.Fatalf("empty pipe: %d bytes, %v; want EAGAIN", n, err)
	}
	if n, err := Write(p[1], []byte("ping")); n != 4 || err != nil {
		t.Fatalf("write: %d, %v", n, err)
	}
	if n, err := Read(p[0], buf); n != 4 || err != nil || string(buf[:n]) != "ping" {
		t.Fatalf("read: %q, %v", buf[:n], err)
	}
}

// nonblockingPipe is a pipe whose ends never block, closed when t ends:
// p[0] reads, p[1] writes.
func nonblockingPipe(t *testing.T) [2]int {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		unix.Close(p[0])
		unix.Close(p[1])
	})
	return p
}
