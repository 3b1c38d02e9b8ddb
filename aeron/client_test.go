package aeron

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// testIPC keeps the logs of real-driver tests small (3 × 64 KiB rather than
// 3 × 64 MiB), so mapping and prefaulting them is quick.
const testIPC = "aeron:ipc?term-length=64k"

func TestConnectWithoutDriverTimesOut(t *testing.T) {
	_, err := Connect(Options{Dir: t.TempDir(), DriverTimeout: 200 * time.Millisecond})
	if !errors.Is(err, ErrDriverTimeout) {
		t.Fatalf("connect to an empty directory: %v", err)
	}
}

func TestDriverLossClosesEverything(t *testing.T) {
	d := startDriver(t)
	d.awaitReady(t)
	var reported atomic.Value
	var unavailable atomic.Int32
	timeout := 5 * time.Second
	c := connectTest(t, d, Options{
		DriverTimeout:           timeout,
		ErrorHandler:            func(err error) { reported.Store(err) },
		UnavailableImageHandler: func(*Image) { unavailable.Add(1) },
	})
	sub, err := c.AddSubscription(testIPC, 10)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := c.AddExclusivePublication(testIPC, 10)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, "image", func() (bool, string) { return sub.ImageCount() == 1, "" })
	img := sub.Images()[0]
	offerAll(t, pub.Offer, []byte("before"))
	testkit.Eventually(t, 10*time.Second, "message", func() (bool, string) { return sub.Poll(func([]byte, *Header) {}, 1) == 1, "" })

	killed := time.Now()
	d.kill()
	select {
	case <-c.Done():
	case <-time.After(timeout + 20*time.Second):
		t.Fatal("client did not notice the driver was gone")
	}
	// The client goes by the age of the driver's last heartbeat (stamped
	// every second), so it notices between timeout − 1 s and timeout after
	// the kill, plus scheduling.
	t.Logf("driver loss detected %v after the kill (driver timeout %v)", time.Since(killed).Round(time.Millisecond), timeout)
	if !errors.Is(c.Err(), ErrDriverTimeout) {
		t.Fatalf("Err() = %v", c.Err())
	}
	if err, _ := reported.Load().(error); !errors.Is(err, ErrDriverTimeout) {
		t.Fatalf("error handler got %v", err)
	}
	if r := pub.Offer([]byte("after")); r != Closed {
		t.Fatalf("offer after driver loss: %s", StatusString(r))
	}
	if !img.IsClosed() || sub.Poll(func([]byte, *Header) {}, 1) != 0 || sub.ImageCount() != 0 {
		t.Fatal("image still open after driver loss")
	}
	if unavailable.Load() != 1 {
		t.Fatalf("unavailable handler called %d times", unavailable.Load())
	}
	if _, err := c.AddSubscription(testIPC, 11); !errors.Is(err, ErrClientClosed) || !errors.Is(err, ErrDriverTimeout) {
		t.Fatalf("add after driver loss: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestHeartbeatCountersAndErrorLog(t *testing.T) {
	d := startDriver(t)
	c := connectTest(t, d, Options{KeepaliveInterval: 50 * time.Millisecond})
	k, err := c.AddCounter(1001, []byte("key!"), "goblin test counter")
	if err != nil {
		t.Fatal(err)
	}
	k.Set(41)
	k.Add(1)
	if k.Get() != 42 {
		t.Fatalf("counter %d", k.Get())
	}
	// The driver made a client-heartbeat counter on our first command; the
	// conductor keeps stamping it.
	r := c.Counters()
	var hbID int32 = -1
	testkit.Eventually(t, 10*time.Second, "heartbeat counter", func() (bool, string) {
		hbID = r.FindByTypeAndRegistrationID(CounterTypeClientHeartbeat, c.ClientID())
		return hbID >= 0, ""
	})
	v1 := r.Value(hbID)
	testkit.Eventually(t, 10*time.Second, "heartbeat stamp", func() (bool, string) { return r.Value(hbID) > v1, "" })

	var found, heartbeat, system bool
	r.ForEach(func(ci CounterInfo) bool {
		switch {
		case ci.ID == k.ID():
			found = ci.TypeID == 1001 && ci.Label == "goblin test counter" && ci.Value == 42 &&
				string(ci.Key[:4]) == "key!" && ci.OwnerID == c.ClientID()
		case ci.TypeID == CounterTypeClientHeartbeat && strings.Contains(ci.Label, fmt.Sprint(c.ClientID())):
			heartbeat = true
		case ci.TypeID == CounterTypeSystem:
			system = true
		}
		return true
	})
	if !found || !heartbeat || !system {
		t.Fatalf("counter listing: ours=%v heartbeat=%v system=%v", found, heartbeat, system)
	}
	var stat strings.Builder
	if err := WriteCounters(&stat, r); err != nil || !strings.Contains(stat.String(), "goblin test counter") ||
		!strings.Contains(stat.String(), "client-heartbeat") {
		t.Fatalf("AeronStat listing (%v):\n%s", err, stat.String())
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, "counter freed", func() (bool, string) { return r.State(k.ID()) != CounterAllocated, "" })

	// A command the driver refuses comes back as a *DriverError and lands in
	// the driver's error log.
	_, err = c.AddPublication("aeron:udp?endpoint=127.0.0.1:1|control-mode=response", 5)
	var de *DriverError
	if !errors.As(err, &de) || !errors.Is(err, ErrDriver) {
		t.Fatalf("invalid response publication: %v", err)
	}
	t.Logf("driver refused with %v", de)
	testkit.Eventually(t, 10*time.Second, "error log entry", func() (bool, string) {
		n := 0
		c.ReadErrors(0, func(e ErrorRecord) {
			if e.ObservationCount > 0 && e.Text != "" {
				n++
			}
		})
		return n > 0, ""
	})
	var es strings.Builder
	if n, err := WriteErrors(&es, c.CnC()); err != nil || n == 0 || !strings.Contains(es.String(), "response-correlation-id") {
		t.Fatalf("ErrorStat listing (%d, %v):\n%s", n, err, es.String())
	}

	// The driver's loss report exists and, with nothing lost on this
	// machine, is empty (TestReadLossReport decodes entries).
	var ls strings.Builder
	if n, err := WriteLossReport(&ls, d.dir); err != nil || n != 0 || !strings.Contains(ls.String(), "0 loss entries") {
		t.Fatalf("LossStat listing (%d, %v):\n%s", n, err, ls.String())
	}
}

// exchange sends n requests on req, echoes them from srvSub to srvPub, and
// checks every response arrives on resp in order.
func echoExchange(t *testing.T, n int, req *Publication, srvSub *Subscription, srvPub *ExclusivePublication, resp *Subscription) {
	t.Helper()
	got := 0
	echo := func(b []byte, _ *Header) { offerAll(t, srvPub.Offer, b) }
	check := func(b []byte, _ *Header) {
		want := fmt.Sprintf("request %d", got)
		if string(b) != want {
			t.Fatalf("response %q, want %q", b, want)
		}
		got++
	}
	deadline := time.Now().Add(30 * time.Second)
	for sent := 0; got < n; {
		if sent < n && sent-got < 10 {
			if req.Offer([]byte(fmt.Sprintf("request %d", sent))) > 0 {
				sent++
			}
		}
		srvSub.Poll(echo, 10)
		resp.Poll(check, 10)
		if time.Now().After(deadline) {
			t.Fatalf("sent %d, got %d responses", sent, got)
		}
	}
}

func TestResponseChannelIPC(t *testing.T) {
	d := startDriver(t)
	cli := connectTest(t, d, Options{})
	srv := connectTest(t, d, Options{})
	srvSub, err := srv.AddSubscription(testIPC, 100)
	if err != nil {
		t.Fatal(err)
	}
	respSub, err := cli.AddSubscription(IPC().ControlMode(ControlModeResponse).TermLength(64<<10).String(), 101)
	if err != nil {
		t.Fatal(err)
	}
	req, err := cli.AddPublication(IPC().ResponseCorrelationID(respSub.RegistrationID()).TermLength(64<<10).String(), 100)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, "request image", func() (bool, string) { return srvSub.ImageCount() == 1, "" })
	img := srvSub.Images()[0]
	if img.CorrelationID() != req.OriginalRegistrationID() {
		t.Fatalf("IPC image correlation id %d, request publication %d", img.CorrelationID(), req.OriginalRegistrationID())
	}
	respPub, err := srv.AddExclusivePublication(
		IPC().ControlMode(ControlModeResponse).ResponseCorrelationID(img.CorrelationID()).TermLength(64<<10).String(), 101)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, "response image", func() (bool, string) { return respSub.ImageCount() == 1, "" })
	if respSub.Images()[0].SessionID() != respPub.SessionID() {
		t.Fatal("response image is not the response publication's session")
	}
	echoExchange(t, 200, req, srvSub, respPub, respSub)
}

func TestResponseChannelUDPTwoDrivers(t *testing.T) {
	sd, cd := startDriver(t), startDriver(t)
	srv := connectTest(t, sd, Options{})
	cli := connectTest(t, cd, Options{})
	ports := testproc.FreeUDPPorts(t, 2) // distinct: the probes stay open until both are chosen
	ep := fmt.Sprintf("127.0.0.1:%d", ports[0])
	cp := fmt.Sprintf("127.0.0.1:%d", ports[1])
	srvSub, err := srv.AddSubscription(UDP().Endpoint(ep).String(), 200)
	if err != nil {
		t.Fatal(err)
	}
	respSub, err := cli.AddSubscription(UDP().ControlMode(ControlModeResponse).Control(cp).String(), 201)
	if err != nil {
		t.Fatal(err)
	}
	req, err := cli.AddPublication(UDP().Endpoint(ep).ResponseCorrelationID(respSub.RegistrationID()).String(), 200)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 20*time.Second, "request image", func() (bool, string) { return srvSub.ImageCount() == 1, "" })
	img := srvSub.Images()[0]
	respPub, err := srv.AddExclusivePublication(
		UDP().ControlMode(ControlModeResponse).Control(cp).ResponseCorrelationID(img.CorrelationID()).String(), 201)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	testkit.Eventually(t, 20*time.Second, "response image", func() (bool, string) { return respSub.ImageCount() == 1, "" })
	t1 := time.Now()
	echoExchange(t, 200, req, srvSub, respPub, respSub)
	t.Logf("response image after %v, 200 echoes in %v", t1.Sub(t0), time.Since(t1))
}

func TestImageLifecycleAndEndOfStream(t *testing.T) {
	d := startDriver(t)
	c := connectTest(t, d, Options{})
	avail := make(chan *Image, 1)
	gone := make(chan *Image, 1)
	sub, err := c.AddSubscriptionWithHandlers(testIPC, 300,
		func(i *Image) { avail <- i }, func(i *Image) { gone <- i })
	if err != nil {
		t.Fatal(err)
	}
	pub, err := c.AddExclusivePublication(testIPC, 300)
	if err != nil {
		t.Fatal(err)
	}
	var img *Image
	select {
	case img = <-avail:
	case <-time.After(20 * time.Second):
		t.Fatal("no image")
	}
	if got := sub.ImageBySessionID(pub.SessionID()); got != img || img.SourceIdentity() != "aeron:ipc" {
		t.Fatalf("ImageBySessionID(%d) = %p, handler's image %p; source %q", pub.SessionID(), got, img, img.SourceIdentity())
	}
	if !pub.IsConnected() {
		testkit.Eventually(t, 10*time.Second, "connected", func() (bool, string) { return pub.IsConnected(), "" })
	}
	pos := offerAll(t, pub.Offer, bytes.Repeat([]byte("e"), 100))
	if pub.PositionLimit() <= pos {
		t.Fatalf("limit %d <= position %d", pub.PositionLimit(), pos)
	}
	testkit.Eventually(t, 10*time.Second, "message", func() (bool, string) { return sub.Poll(func([]byte, *Header) {}, 1) == 1, "" })
	if img.IsEndOfStream() {
		t.Fatal("end of stream while the publication is open")
	}
	if err := pub.Close(); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 20*time.Second, "end of stream", func() (bool, string) { sub.Poll(func([]byte, *Header) {}, 1); return img.IsEndOfStream(), "" })
	select {
	case g := <-gone:
		if g != img || !g.IsClosed() || g.Position() != pos {
			t.Fatalf("unavailable image closed=%v position %d want %d", g.IsClosed(), g.Position(), pos)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no unavailable-image event after the publication closed")
	}
	if sub.ImageCount() != 0 {
		t.Fatal("image still listed")
	}
}

func TestClientTimedOutByDriver(t *testing.T) {
	// A driver with a 2 s client liveness timeout, and a client whose
	// conductor never stamps its heartbeat counter: the driver times it out.
	d := startDriver(t, "aeron.client.liveness.timeout=2000000000")
	var reported atomic.Value
	c := connectTest(t, d, Options{
		KeepaliveInterval: time.Hour,
		ErrorHandler:      func(err error) { reported.Store(err) },
	})
	pub, err := c.AddPublication(testIPC, 400)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the driver did not time the client out")
	}
	if !errors.Is(c.Err(), ErrClientTimeout) {
		t.Fatalf("Err() = %v", c.Err())
	}
	if err, _ := reported.Load().(error); !errors.Is(err, ErrClientTimeout) {
		t.Fatalf("error handler got %v", err)
	}
	if r := pub.Offer([]byte("x")); r != Closed {
		t.Fatalf("offer after client timeout: %s", StatusString(r))
	}
}

func TestClientStaysAliveWithHeartbeat(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for two client liveness timeouts")
	}
	// A 3 s liveness timeout, and the conductor stamping the heartbeat
	// counter every 500 ms: the client outlives two timeouts.
	d := startDriver(t, "aeron.client.liveness.timeout=3000000000")
	c := connectTest(t, d, Options{})
	if _, err := c.AddPublication(testIPC, 401); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Done():
		t.Fatalf("client closed: %v", c.Err())
	case <-time.After(6500 * time.Millisecond):
	}
	if _, err := c.AddSubscription(testIPC, 401); err != nil {
		t.Fatalf("client unusable after 2 liveness timeouts: %v", err)
	}
}

func TestDriverShutdownIsNoticed(t *testing.T) {
	d := startDriver(t)
	c := connectTest(t, d, Options{})
	sub, err := c.AddSubscription(testIPC, 12)
	if err != nil {
		t.Fatal(err)
	}
	// A graceful stop (SIGTERM): the driver marks its CnC shut down, which
	// the client sees at its next keepalive check, long before the timeout.
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("client did not notice the driver shutting down")
	}
	if !errors.Is(c.Err(), ErrDriverShutdown) {
		t.Fatalf("Err() = %v", c.Err())
	}
	if !sub.IsClosed() {
		t.Fatal("subscription still open")
	}
}

// TestDriverReplacedIsNoticed: after the driver is killed and another one
// starts in its directory, a connected client fails with ErrDriverReplaced
// within a keepalive interval or so of the new CnC file, instead of
// waiting out the driver timeout on the dead driver's stale heartbeat.
func TestDriverReplacedIsNoticed(t *testing.T) {
	d := startDriver(t)
	d.awaitReady(t)
	c := connectTest(t, d, Options{DriverTimeout: time.Minute})
	if _, err := c.AddSubscription("aeron:ipc", 9); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	d.kill()
	d.restart(t)
	testkit.Eventually(t, 30*time.Second, "the client to notice", func() (bool, string) { return c.IsClosed(), "" })
	noticed := time.Since(killed)
	if err := c.Err(); !errors.Is(err, ErrDriverReplaced) {
		t.Fatalf("client closed with %v, want ErrDriverReplaced", err)
	}
	t.Logf("noticed %v after the kill (driver timeout 1m): %v", noticed.Round(time.Millisecond), c.Err())
	c2 := connectTest(t, d, Options{})
	if _, err := c2.AddSubscription("aeron:ipc", 9); err != nil {
		t.Fatalf("a new client on the new driver: %v", err)
	}
}
