package driver

import (
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/aeron/internal/udp"
	"github.com/goblin-kv/goblin/internal/testkit"
)

// TestDoorbells: Wake on a parked driver makes its poller set readable
// (its park ends) and unparked drains it; Wake on a driver that is not
// parked rings nothing but calls the next park off; a WorkFD rings only
// once armed, and DrainWorkFD drains it.
func TestDoorbells(t *testing.T) {
	p, err := udp.NewPoller()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	b, err := newDoorbells(p.FD())
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	d := &Driver{bells: b}
	ready := func() bool {
		ok, err := p.Ready(0)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	b.beforeCycle()
	if !b.park() {
		t.Fatal("park called off with nothing offered")
	}
	d.Wake()
	if !ready() {
		t.Fatal("Wake on a parked driver left its poller set unreadable: the park would not end")
	}
	b.unparked()
	if ready() {
		t.Fatal("the poller set is still readable after the park ended: every later park would end at once")
	}

	b.beforeCycle()
	d.Wake() // while the driver runs its cycle
	if ready() {
		t.Error("Wake on a running driver rang its eventfd")
	}
	if b.park() {
		t.Error("a park went ahead after a Wake the cycle may have missed")
	}
	b.beforeCycle()
	if !b.park() {
		t.Error("a park was called off after a cycle ran since the Wake")
	}
	b.unparked()

	b.afterWork()
	if readable(t, b.workFD) {
		t.Error("WorkFD rang without an arm")
	}
	d.ArmWorkFD()
	b.afterWork()
	if !readable(t, b.workFD) {
		t.Error("WorkFD did not ring after a cycle with work once armed")
	}
	d.DrainWorkFD()
	if readable(t, b.workFD) {
		t.Error("WorkFD still readable after DrainWorkFD")
	}
	b.afterWork()
	if readable(t, b.workFD) {
		t.Error("WorkFD rang twice for one arm")
	}
}

// TestWorkFD: WorkFD polls readable after a duty cycle that did work once
// ArmWorkFD armed it (here the conductor answering a client), and not
// after DrainWorkFD; a New driver has none and ignores Wake.
func TestWorkFD(t *testing.T) {
	o := testOptions(t)
	o.Idle = nil // the default back-off, with doorbells
	d := startDriver(t, o)
	fd := d.WorkFD()
	if fd < 0 {
		t.Fatal("a Start-ed driver with the default idle strategy has no WorkFD")
	}
	c := connectClient(t, d)
	time.Sleep(50 * time.Millisecond)
	d.DrainWorkFD()
	if readable(t, fd) {
		t.Fatal("WorkFD is readable before it was armed")
	}
	d.ArmWorkFD()
	if _, err := c.AddPublication("aeron:ipc", 7); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 5*time.Second, "WorkFD to poll readable after the conductor answered", func() (bool, string) {
		return readable(t, fd), "not readable"
	})
	d.DrainWorkFD()
	if readable(t, fd) {
		t.Error("WorkFD is still readable after DrainWorkFD")
	}

	n, err := New(testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if n.WorkFD() != -1 {
		t.Errorf("a New driver's WorkFD is %d, want -1", n.WorkFD())
	}
	n.Wake() // nothing to wake: must not panic
	n.ArmWorkFD()
	n.DrainWorkFD()
}

func readable(t *testing.T, fd int) bool {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	if err != nil {
		t.Fatalf("poll: %v", err)
	}
	return n > 0
}

// TestThreadBackoffQuietWithWake: a driver whose clients wake it
// (Options.WakeOnOffer) goes quiet after quietAfterWakeNs even with an
// image, parking up to quietMaxPark; without the option that image keeps
// it at MaxPark.
func TestThreadBackoffQuietWithWake(t *testing.T) {
	for _, wake := range []bool{true, false} {
		r := newParkRecorder(t)
		r.m.Driver.opts.WakeOnOffer = wake
		b, err := newDoorbells(r.m.Driver.poller.FD())
		if err != nil {
			t.Fatal(err)
		}
		r.m.Driver.bells = b
		r.m.Driver.images = []*publicationImage{{}}
		r.m.Driver.timerDeadlineNs = r.m.Driver.nowNs + int64(time.Hour)
		r.b.Idle(1)
		for _, p := range r.idleFor(time.Duration(quietAfterWakeNs) - time.Millisecond) {
			if p > time.Millisecond {
				t.Fatalf("wake %v: parked %v before %v of nothing", wake, p, time.Duration(quietAfterWakeNs))
			}
		}
		var longest time.Duration
		for _, p := range r.idleFor(100 * time.Millisecond) {
			longest = max(longest, p)
		}
		want := time.Millisecond
		if wake {
			want = quietMaxPark
		}
		if longest != want {
			t.Errorf("wake %v: longest park with an image %v, want %v", wake, longest, want)
		}
		r.m.Driver.images = nil
	}
}

// TestDoorbellsLayout: the flags Wake writes and the ones the driver's
// goroutine writes sit 64 bytes apart (two cache lines).
func TestDoorbellsLayout(t *testing.T) {
	var b doorbells
	if d := unsafe.Offsetof(b.parked) - unsafe.Offsetof(b.pending); d < 64 {
		t.Errorf("parked is %d bytes from pending, want 64 or more", d)
	}
	if d := unsafe.Offsetof(b.workArmed) - unsafe.Offsetof(b.parked); d < 64 {
		t.Errorf("workArmed is %d bytes from parked, want 64 or more", d)
	}
}
