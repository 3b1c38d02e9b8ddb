package server

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/internal/monotime"
	"github.com/goblin-kv/goblin/internal/testkit/wiretest"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/uds"
)

// fakeLink stands for the replication link: a Waitable whose epoll set
// is empty (nothing ever makes it readable), Dormant while asleep.
type fakeLink struct {
	epfd   int
	asleep bool
	checks int // CheckNow calls
}

func newFakeLink(t *testing.T, asleep bool) *fakeLink {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return &fakeLink{epfd: fd, asleep: asleep}
}

func (f *fakeLink) Name() string                 { return "fake-link" }
func (f *fakeLink) Poll(int64) int               { return 0 }
func (f *fakeLink) Clients() int                 { return 0 }
func (f *fakeLink) UpdateStats(*transport.Stats) {}
func (f *fakeLink) Close() error                 { return nil }
func (f *fakeLink) WaitFD() int                  { return f.epfd }
func (f *fakeLink) CheckNow()                    { f.checks++ }
func (f *fakeLink) Dormant() bool                { return f.asleep }

// TestSpinChecksTheOneAwakeListenerDirectly: a spinning loop with one
// socket listener beside a Dormant waitable (every goblin-server has the
// replication link) checks the listener itself on every idle cycle, so a
// request is answered in the first cycle after it arrives, with one
// epoll_wait (the listener's) on its path; the nested set would take a
// second cycle and a second epoll_wait. Once the other waitable wakes, the
// loop goes back to the nested set, which asks it too.
func TestSpinChecksTheOneAwakeListenerDirectly(t *testing.T) {
	for _, asleep := range []bool{true, false} {
		s := listenEcho(t, 16)
		defer s.Close()
		link := newFakeLink(t, asleep)
		l, err := NewLoop(LoopConfig{Transports: []transport.Server{s, link}, Idle: IdleSpin})
		if err != nil {
			t.Fatal(err)
		}
		defer l.closeParkFD()
		l.lastPublish = monotime.Now()
		fd := wiretest.RawUnix(t, s.Addr())
		defer unix.Close(fd)
		// Accept the client and open its session.
		buf := make([]byte, 64)
		unix.Write(fd, []byte("hello\n"))
		for i := 0; ; i++ {
			l.cycle()
			if n, _ := unix.Read(fd, buf); n > 0 {
				break
			}
			if i == 1000 {
				t.Fatalf("asleep=%v: no reply to the first request in 1000 cycles", asleep)
			}
		}
		const idleCycles = 64
		for range idleCycles {
			l.cycle()
		}
		var before uds.Stats
		s.Stats(&before)
		for range idleCycles {
			l.cycle()
		}
		var after uds.Stats
		s.Stats(&after)
		checks := after.EpollChecks - before.EpollChecks
		unix.Write(fd, []byte("ping\n"))
		cycles := 0
		for cycles = 1; cycles < 100; cycles++ {
			l.cycle()
			if n, _ := unix.Read(fd, buf); n > 0 {
				break
			}
		}
		if asleep {
			if checks < idleCycles-1 {
				t.Errorf("dormant link: the listener was checked %d times in %d idle spins, want one a spin", checks, idleCycles)
			}
			if cycles != 1 {
				t.Errorf("dormant link: the request was answered after %d cycles, want 1", cycles)
			}
			if link.checks != 0 {
				t.Errorf("dormant link: CheckNow called %d times on it, want 0", link.checks)
			}
			continue
		}
		if checks > idleCycles/8 {
			t.Errorf("awake link: the listener was checked %d times in %d idle spins, want the nested set to spare it (about %d)", checks, idleCycles, idleCycles/16)
		}
		if cycles > 2 {
			t.Errorf("awake link: the request was answered after %d cycles, want at most 2", cycles)
		}
	}
}
