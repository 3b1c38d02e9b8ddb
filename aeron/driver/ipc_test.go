package driver

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/internal/command"
	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
	"github.com/goblin-kv/goblin/internal/testkit"
)

// shortTimeouts makes a test driver's timers fire in tens of
// milliseconds, so liveness, unblocking and untethered states show up
// quickly (tests still only wait for outcomes, never assert durations).
func shortTimeouts(o Options) Options {
	o.TimerInterval = 10 * time.Millisecond
	o.ClientLivenessTimeout = 2 * time.Second
	o.PublicationUnblockTimeout = 3 * time.Second
	o.UntetheredWindowLimitTimeout = 100 * time.Millisecond
	o.UntetheredLingerTimeout = 100 * time.Millisecond
	o.UntetheredRestingTimeout = 200 * time.Millisecond
	o.ImageLivenessTimeout = 200 * time.Millisecond
	return o
}

// TestPublicationLimitFollowsSlowestTetheredSubscriber: a subscriber that
// does not poll holds the publisher a term window ahead of it.
func TestPublicationLimitFollowsSlowestTetheredSubscriber(t *testing.T) {
	d := startDriver(t, testOptions(t))
	c := connectClient(t, d)
	pub, err := c.AddExclusivePublication(ipc64k, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r := pub.Offer([]byte("x")); r != aeron.NotConnected {
		t.Fatalf("offer without subscribers: %s", aeron.StatusString(r))
	}
	sub, err := c.AddSubscription(ipc64k, 1)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 60*time.Second, "limit", func() (bool, string) { return pub.PositionLimit() == 32<<10, "" })
	msg := make([]byte, 96) // 128-byte frames
	sent := 0
	for pub.Offer(msg) > 0 {
		sent++
	}
	if sent != 256 || pub.Offer(msg) != aeron.BackPressured {
		t.Fatalf("sent %d before back pressure", sent)
	}
	got := 0
	testkit.Eventually(t, 60*time.Second, "drain and more room", func() (bool, string) {
		got += sub.Poll(func([]byte, *aeron.Header) {}, 100)
		return got == sent && pub.PositionLimit() > 32<<10, ""
	})
}

// TestUntetheredSubscriberFallsBehindAndRejoins: an untethered subscriber
// that stops polling loses the image (and stops holding the publisher
// back), then rejoins at the current position after resting.
func TestUntetheredSubscriberFallsBehindAndRejoins(t *testing.T) {
	d := startDriver(t, shortTimeouts(testOptions(t)))
	c := connectClient(t, d)
	var available, unavailable atomic.Int32
	lazy, err := c.AddSubscriptionWithHandlers(ipc64k+"|tether=false", 1,
		func(*aeron.Image) { available.Add(1) }, func(*aeron.Image) { unavailable.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	busy, err := c.AddSubscription(ipc64k, 1)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := c.AddExclusivePublication(ipc64k, 1)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 60*time.Second, "images", func() (bool, string) { return lazy.ImageCount() == 1 && busy.ImageCount() == 1, "" })
	msg := make([]byte, 96)
	got := 0
	// The busy subscriber keeps consuming; the publication moves far past
	// the lazy one's window only because the lazy one is untethered.
	testkit.Eventually(t, 60*time.Second, "the lazy subscriber dropped and rejoined", func() (bool, string) {
		for range 64 {
			if pub.Offer(msg) < 0 {
				break
			}
		}
		got += busy.Poll(func([]byte, *aeron.Header) {}, 100)
		return unavailable.Load() >= 1 && available.Load() >= 2, ""
	})
	if got*128 < 32<<10 {
		t.Fatalf("the busy subscriber got only %d messages", got)
	}
	if lazy.ImageCount() != 1 {
		t.Fatalf("lazy subscriber has %d images after rejoining", lazy.ImageCount())
	}
	img := lazy.Images()[0]
	if img.JoinPosition() < 32<<10 {
		t.Fatalf("rejoined at %d, not at the current position", img.JoinPosition())
	}
}

// TestDeadPublisherUnblocked: a concurrent publisher that claimed space
// and never committed it (it died mid-offer) blocks the stream until the
// unblock timeout; then the claim becomes padding and the subscriber
// receives what other publishers sent after it.
func TestDeadPublisherUnblocked(t *testing.T) {
	d := startDriver(t, shortTimeouts(testOptions(t)))
	c := connectClient(t, d)
	sub, err := c.AddSubscription(ipc64k, 1)
	if err != nil {
		t.Fatal(err)
	}
	dying, err := c.AddPublication(ipc64k, 1)
	if err != nil {
		t.Fatal(err)
	}
	other, err := c.AddPublication(ipc64k, 1)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 60*time.Second, "image", func() (bool, string) { return sub.ImageCount() == 1, "" })
	var claim aeron.BufferClaim
	testkit.Eventually(t, 60*time.Second, "claim", func() (bool, string) { return dying.TryClaim(100, &claim) > 0, "" })
	testkit.Eventually(t, 60*time.Second, "offer after the claim", func() (bool, string) { return other.Offer([]byte("after the dead claim")) > 0, "" })
	var got []string
	testkit.Eventually(t, 60*time.Second, "the message behind the claim", func() (bool, string) {
		sub.Poll(func(b []byte, _ *aeron.Header) { got = append(got, string(b)) }, 10)
		return len(got) == 1, ""
	})
	if got[0] != "after the dead claim" {
		t.Fatalf("got %q", got)
	}
	if n := d.counters.Value(sysUnblockedPublications); n != 1 {
		t.Fatalf("unblocked publications %d", n)
	}
}

// TestEndOfStream: when the last publisher goes, the image reaches end of
// stream at the last message and then becomes unavailable.
func TestEndOfStream(t *testing.T) {
	d := startDriver(t, testOptions(t))
	c := connectClient(t, d)
	var gone atomic.Int32
	sub, err := c.AddSubscriptionWithHandlers(ipc64k, 1, nil, func(*aeron.Image) { gone.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	pub, err := c.AddExclusivePublication(ipc64k, 1)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 60*time.Second, "image", func() (bool, string) { return sub.ImageCount() == 1, "" })
	img := sub.Images()[0]
	for _, m := range []string{"one", "two", "three"} {
		testkit.Eventually(t, 60*time.Second, "offer", func() (bool, string) { return pub.Offer([]byte(m)) > 0, "" })
	}
	end := pub.Position()
	pub.Close()
	n := 0
	testkit.Eventually(t, 60*time.Second, "end of stream", func() (bool, string) {
		n += img.Poll(func([]byte, *aeron.Header) {}, 10)
		return img.IsEndOfStream(), ""
	})
	if n != 3 || img.Position() != end {
		t.Fatalf("end of stream after %d messages at %d, want 3 at %d", n, img.Position(), end)
	}
	testkit.Eventually(t, 60*time.Second, "image unavailable", func() (bool, string) { return gone.Load() == 1 && sub.ImageCount() == 0, "" })
}

// TestRevokeEndsStreamAtOnce: REMOVE_PUBLICATION with the revoke flag ends
// the stream where it is, without draining.
func TestRevokeEndsStreamAtOnce(t *testing.T) {
	m := newManualDriver(t, Options{TimerInterval: 10 * time.Millisecond})
	c := newRawClient(m)
	sub := c.addSubscription(ipc64k, 1)
	pub := c.addPublication(ipc64k, 1, true)
	c.take()
	p := m.ipcPublications[0]
	c.send(command.RemovePublication, command.AppendRemovePublication(nil, c.id, c.nextID(), pub, true))
	c.expect(command.OnOperationSuccess)
	m.advance(20 * time.Millisecond)
	e := c.expect(command.OnUnavailableImage)
	if u := command.ImageMessage(e[0].msg); u.CorrelationID() != pub || u.SubscriptionRegistrationID() != sub {
		t.Fatal("wrong image")
	}
	if p.log.meta[logbuffer.IsPublicationRevokedOffset] != 1 || m.counters.Value(sysPublicationsRevoked) != 1 ||
		shm.GetInt64(p.log.meta, logbuffer.EndOfStreamPositionOffset) != 0 {
		t.Fatal("not revoked")
	}
}

// TestRejectIPCImage: REJECT_IMAGE on an IPC publication tells its
// publishers (ON_PUBLICATION_ERROR) and takes the image from its
// subscribers until the image liveness timeout has passed.
func TestRejectIPCImage(t *testing.T) {
	m := newManualDriver(t, Options{TimerInterval: 10 * time.Millisecond, ImageLivenessTimeout: 100 * time.Millisecond})
	c := newRawClient(m)
	sub := c.addSubscription(ipc64k, 1)
	pub := c.addPublication(ipc64k, 1, true)
	c.take()
	corr := c.nextID()
	c.send(command.RejectImage, command.AppendRejectImage(nil, c.id, corr, pub, 0, "no thanks"))
	e := c.expect(command.OnPublicationError, command.OnUnavailableImage, command.OnOperationSuccess)
	if pe := command.PublicationErrorFrame(e[0].msg); pe.RegistrationID() != pub || pe.Code() != int32(aeron.ErrorCodeImageRejected) ||
		pe.Message() != "no thanks" {
		t.Fatalf("publication error %+v", pe)
	}
	if m.counters.Value(sysImagesRejected) != 1 {
		t.Fatal("images rejected counter")
	}
	// A subscriber added during the cool-down does not see the image.
	c.addSubscription(ipc64k, 1)
	c.expect(command.OnSubscriptionReady)
	m.advance(150 * time.Millisecond)
	e = c.expect(command.OnAvailableImage, command.OnAvailableImage)
	for _, ev := range e {
		if command.ImageBuffersReady(ev.msg).CorrelationID() != pub {
			t.Fatal("wrong image")
		}
	}
	_ = sub
}

// TestTerminateDriver: refused by default, allowed by a validator.
func TestTerminateDriver(t *testing.T) {
	o := testOptions(t)
	d := startDriver(t, o)
	d.ring.Write(command.TerminateDriver, command.AppendTerminateDriver(nil, 1, []byte("please")))
	time.Sleep(50 * time.Millisecond)
	if d.Terminated() {
		t.Fatal("terminated without a validator")
	}
	d.Close()
	var hooked atomic.Bool
	o.TerminationValidator = func(dir string, token []byte) bool { return dir == o.Dir && string(token) == "please" }
	o.TerminationHook = func() { hooked.Store(true) }
	d = startDriver(t, o)
	d.ring.Write(command.TerminateDriver, command.AppendTerminateDriver(nil, 1, []byte("wrong")))
	d.ring.Write(command.TerminateDriver, command.AppendTerminateDriver(nil, 1, []byte("please")))
	select {
	case <-d.Done():
	case <-time.After(60 * time.Second):
		t.Fatal("driver still running after an allowed TERMINATE_DRIVER")
	}
	if !hooked.Load() || !d.Terminated() {
		t.Fatal("hook not run")
	}
}

func TestSessionIDsSkipTheReservedRange(t *testing.T) {
	m := newManualDriver(t, Options{})
	m.nextSessionID = -3
	var got []int32
	for range 4 {
		got = append(got, m.advanceSessionID())
	}
	if want := []int32{-3, -2, 1001, 1002}; got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Fatalf("session ids %v, want %v", got, want)
	}
}

// ipcStream is a test's hand on one IPC publication of a manual driver:
// it moves the publisher's tail and the first subscriber's position as a
// publisher and a subscriber would (term 0 only), and reads the limit.
type ipcStream struct {
	m *manualDriver
	p *ipcPublication
}

func (s ipcStream) produce(pos int64) {
	shm.StoreInt64Release(s.p.log.meta, logbuffer.TermTailCountersOffset,
		logbuffer.PackTail(s.p.initialTermID, int32(pos)))
}

func (s ipcStream) consume(pos int64) { shm.StoreInt64Release(s.m.values, s.p.subs[0].off, pos) }

func (s ipcStream) limit() int64 { return shm.LoadInt64Acquire(s.m.values, s.p.pubLmt.off) }

// newIPCStream adds an exclusive IPC publication on channel and a
// subscription to it through a raw client.
func newIPCStream(m *manualDriver, channel string) ipcStream {
	c := newRawClient(m)
	c.addPublication(channel, 1, true)
	c.addSubscription(channel, 1)
	c.take()
	if len(m.ipcPublications) != 1 || len(m.ipcPublications[0].subs) != 1 {
		m.t.Fatal("no IPC publication with one subscriber")
	}
	return ipcStream{m: m, p: m.ipcPublications[0]}
}

// TestLimitMoveIsWorkOnlyNearTheLimit: a limit move counts as work (what
// keeps the driver's back-off spinning) only when the publisher had used
// half its window; far from it, the limit moves and the consumed log is
// cleaned just the same, but the cycle reports no work.
func TestLimitMoveIsWorkOnlyNearTheLimit(t *testing.T) {
	m := newManualDriver(t, Options{})
	s := newIPCStream(m, "aeron:ipc?term-length=64m")
	window := s.p.termWindow
	if window != 32<<20 || s.limit() != window {
		t.Fatalf("window %d, limit %d", window, s.limit())
	}
	term := s.p.log.terms[0]
	for i := range 8 << 10 {
		term[i] = 0xee // what the subscriber consumed, dirty
	}

	// Publisher and subscriber an eighth of a window on (a limit move),
	// the publisher seven eighths of its window from its limit.
	const eighth = 4 << 20
	s.produce(eighth)
	s.consume(eighth)
	if w := m.DoWork(m.nowNs); w != 0 {
		t.Fatalf("a limit move far from the publisher did %d work", w)
	}
	if s.limit() != eighth+window {
		t.Fatalf("limit %d, want %d", s.limit(), eighth+window)
	}
	for i, b := range term[:8<<10] {
		if b != 0 {
			t.Fatalf("byte %d of the consumed log not cleaned: %#x", i, b)
		}
	}

	// The publisher at its limit (back pressured): the move is work.
	s.produce(s.limit())
	s.consume(2 * eighth)
	if w := m.DoWork(m.nowNs); w != 1 {
		t.Fatalf("a limit move for a publisher at its limit did %d work, want 1", w)
	}
	if s.limit() != 2*eighth+window {
		t.Fatalf("limit %d, want %d", s.limit(), 2*eighth+window)
	}
	// No move, no work.
	if w := m.DoWork(m.nowNs); w != 0 {
		t.Fatalf("a cycle with nothing to do did %d work", w)
	}

	// A small window (32 KiB, below minCalmWindow): every move is work,
	// far from the limit too.
	m = newManualDriver(t, Options{})
	s = newIPCStream(m, ipc64k)
	s.produce(4 << 10)
	s.consume(4 << 10)
	if w := m.DoWork(m.nowNs); w != 1 || s.limit() != 4<<10+s.p.termWindow {
		t.Fatalf("a limit move on a 32 KiB window did %d work (limit %d), want 1", w, s.limit())
	}
}

// TestFreeingALogDoesNotStallTheDutyCycle: a closed publication's log is
// unmapped and deleted off the duty cycle (freeing the default 192 MiB
// IPC log takes ~90 ms of system calls), so while one is being freed the
// conductor goes on moving another stream's limit; the file goes once the
// release finishes, and counter 35 drops when the log is handed over.
func TestFreeingALogDoesNotStallTheDutyCycle(t *testing.T) {
	m := newManualDriver(t, Options{TimerInterval: 10 * time.Millisecond})
	s := newIPCStream(m, ipc64k)
	closing := newRawClient(m)
	reg := closing.addPublication("aeron:ipc?term-length=64k", 2, true)
	closing.take()
	logFile := filepath.Join(m.Dir(), publicationsDir, strconv.FormatInt(reg, 10)+".logbuffer")
	mapped := m.counters.Value(sysBytesCurrentlyMapped)

	entered, unblock := make(chan struct{}), make(chan struct{})
	var inDutyCycle atomic.Bool
	release := m.releaser.release
	m.releaser.release = func(l *rawLog) error {
		// Called from the duty cycle (a synchronous free), blocking here
		// would hang the test until its deadline: say so at once instead.
		if calledFromDutyCycle() {
			inDutyCycle.Store(true)
			close(entered)
			return release(l)
		}
		close(entered)
		<-unblock
		return release(l)
	}
	closing.send(command.RemovePublication, command.AppendRemovePublication(nil, closing.id, closing.nextID(), reg, false))
	// Cycles run on a goroutine of the test's, so a duty cycle that waits
	// for the release fails the test instead of hanging it.
	cycled := make(chan struct{})
	go func() {
		defer close(cycled)
		m.advance(50 * time.Millisecond) // drain, linger, end of life
	}()
	select {
	case <-entered:
	case <-time.After(60 * time.Second):
		t.Fatal("the closed publication's log was never released")
	}
	if inDutyCycle.Load() {
		t.Fatal("the duty cycle freed the closed publication's log itself (DoWork on the release's stack)")
	}
	select {
	case <-cycled:
	case <-time.After(60 * time.Second):
		close(unblock)
		t.Fatal("the duty cycle waited for a log's release")
	}
	if got := m.counters.Value(sysBytesCurrentlyMapped); got >= mapped {
		t.Fatalf("bytes currently mapped %d after the hand-over, was %d", got, mapped)
	}
	// The other stream's limit still moves while the release is blocked.
	s.produce(4 << 10)
	s.consume(4 << 10)
	m.cycle(1)
	if want := int64(4<<10) + s.p.termWindow; s.limit() != want {
		t.Fatalf("limit %d while a log is being freed, want %d", s.limit(), want)
	}
	if _, err := os.Stat(logFile); err != nil {
		t.Fatalf("the log went before its release finished: %v", err)
	}
	close(unblock)
	testkit.Eventually(t, 60*time.Second, "the closed publication's log deleted", func() (bool, string) {
		_, err := os.Stat(logFile)
		return os.IsNotExist(err), ""
	})
}

// calledFromDutyCycle reports whether the caller runs inside the
// driver's duty cycle ((*Driver).DoWork is on its stack).
func calledFromDutyCycle() bool {
	pc := make([]uintptr, 64)
	frames := runtime.CallersFrames(pc[:runtime.Callers(2, pc)])
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.Function, ".(*Driver).DoWork") {
			return true
		}
		if !more {
			return false
		}
	}
}
