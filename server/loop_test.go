package server

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/idle"
	"github.com/goblin-kv/goblin/internal/monotime"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/uds"
)

// echoHandler answers every "\n"-terminated line with "+line\r\n"; the
// loop's tests need a handler, not the command engine.
type echoHandler struct{}

type echoSession struct{}

func (echoHandler) OpenStream(proto.Protocol) transport.StreamSession { return echoSession{} }
func (echoSession) Close()                                            {}
func (echoSession) Serve(in, out []byte, _ int) (int, []byte, bool) {
	consumed := 0
	for {
		i := bytes.IndexByte(in[consumed:], '\n')
		if i < 0 {
			return consumed, out, false
		}
		out = append(out, '+')
		out = append(out, in[consumed:consumed+i]...)
		out = append(out, "\r\n"...)
		consumed += i + 1
	}
}

func listenEcho(t testing.TB, checkEvery int) *uds.Server {
	s, err := uds.Listen(uds.Config{Network: "unix", Address: filepath.Join(t.TempDir(), "g.sock"), Handler: echoHandler{}, CheckEvery: checkEvery})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func runLoop(t *testing.T, cfg LoopConfig) *Loop {
	t.Helper()
	l, err := NewLoop(cfg)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- l.Run() }()
	t.Cleanup(func() {
		l.Stop()
		if err := <-errc; err != nil {
			t.Error(err)
		}
	})
	return l
}

func echoOnce(t *testing.T, addr, msg string) {
	t.Helper()
	c, err := net.Dial("unix", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(c, "%s\n", msg)
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "+"+msg+"\r\n" {
		t.Fatalf("got %q, %v", line, err)
	}
}

func TestLoopServesWithEveryIdleStrategy(t *testing.T) {
	for _, idle := range []string{IdleSpin, IdleYield, IdleBackoff} {
		t.Run(idle, func(t *testing.T) {
			// Two socket listeners: a spinning loop finds which one has
			// work through the nested epoll descriptor.
			s, s2 := listenEcho(t, 0), listenEcho(t, 0)
			var published atomic.Int64
			l := runLoop(t, LoopConfig{
				Transports:   []transport.Server{s, s2},
				Idle:         idle,
				Publish:      func(st *LoopStats) { published.Store(st.Iterations) },
				PublishEvery: time.Millisecond,
			})
			for i := range 20 {
				echoOnce(t, s.Addr(), fmt.Sprintf("%s-%d", idle, i))
				echoOnce(t, s2.Addr(), fmt.Sprintf("%s-%d-2", idle, i))
			}
			testkit.Eventually(t, 30*time.Second, "a publish", func() (bool, string) { return published.Load() > 0, "" })
			l.Stop()
			<-l.Done()
			if _, err := net.Dial("unix", s.Addr()); err == nil {
				t.Fatal("transport still accepting after the loop stopped")
			}
		})
	}
}

// TestBackoffParksAndWakesOnSockets shows the default strategy parks an
// idle loop (it does not burn a core) and that a parked loop still
// answers at once, since it parks on the sockets' epoll descriptors.
func TestBackoffParksAndWakesOnSockets(t *testing.T) {
	s := listenEcho(t, 0)
	var parks atomic.Int64
	runLoop(t, LoopConfig{
		Transports:   []transport.Server{s},
		Options:      &Options{Backoff: idle.Params{MinPark: 50 * time.Millisecond, MaxPark: 50 * time.Millisecond}},
		Publish:      func(st *LoopStats) { parks.Store(st.Parks) },
		PublishEvery: time.Nanosecond,
	})
	testkit.Eventually(t, 30*time.Second, "the loop to park", func() (bool, string) { return parks.Load() > 2, "" })
	for i := range 5 {
		before := parks.Load()
		start := time.Now()
		echoOnce(t, s.Addr(), fmt.Sprint("wake-", i))
		// Not a timing assertion: log how long a parked loop took.
		t.Logf("round trip from a parked loop: %v (parks before %d)", time.Since(start), before)
	}
}

// TestBackoffPhases: the loop's strategies, as NewIdleStrategy makes them,
// go through the phases their names promise.
func TestBackoffPhases(t *testing.T) {
	var parked []time.Duration
	o := &Options{Backoff: idle.Params{Spins: 3, Yields: 2, MinPark: time.Millisecond, MaxPark: 4 * time.Millisecond}}
	b, err := NewIdleStrategy(IdleBackoff, o, func(d time.Duration) { parked = append(parked, d) })
	if err != nil {
		t.Fatal(err)
	}
	var got []idle.Phase
	for range 9 {
		got = append(got, b.Idle(0))
	}
	want := []idle.Phase{idle.Spun, idle.Spun, idle.Spun, idle.Yielded, idle.Yielded, idle.Parked, idle.Parked, idle.Parked, idle.Parked}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("phases %v, want %v", got, want)
	}
	if fmt.Sprint(parked) != "[1ms 2ms 4ms 4ms]" {
		t.Fatalf("parks %v, want doubling capped at MaxPark", parked)
	}
	if b.Idle(1) != idle.Busy || b.Idle(0) != idle.Spun {
		t.Fatal("work does not reset the backoff")
	}
	spin, err1 := NewIdleStrategy(IdleSpin, o, nil)
	yield, err2 := NewIdleStrategy(IdleYield, o, nil)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if spin.Idle(0) != idle.Spun || yield.Idle(0) != idle.Yielded || spin.Idle(3) != idle.Busy || yield.Idle(1) != idle.Busy {
		t.Fatal("spin or yield")
	}
	if _, err := NewIdleStrategy("nap", &Options{}, nil); err == nil {
		t.Fatal("unknown strategy accepted")
	}
}

func TestLoopPinsCPU(t *testing.T) {
	var cpus atomic.Int64
	cpus.Store(-1)
	l := runLoop(t, LoopConfig{
		Transports: []transport.Server{listenEcho(t, 0)},
		CPUs:       []int{0},
		Tick: func(int) int {
			var set unix.CPUSet
			if unix.SchedGetaffinity(0, &set) == nil && set.IsSet(0) {
				cpus.Store(int64(set.Count()))
			}
			return 0
		},
	})
	testkit.Eventually(t, 30*time.Second, "the loop to run", func() (bool, string) { return cpus.Load() >= 0, "" })
	if cpus.Load() != 1 {
		t.Fatalf("loop thread may run on %d CPUs, want 1", cpus.Load())
	}
	l.Stop()
}

func TestMetricsPublishAndCollect(t *testing.T) {
	m := NewMetrics()
	var loopStats LoopStats
	it := m.Counter("loop_iterations_total", "Duty cycles.", nil)
	idle := m.Seconds("loop_idle_seconds_total", "Idle time.", nil)
	cl := m.Gauge("connected_clients", "Clients.", prometheus.Labels{"transport": "uds", "protocol": "resp"})
	m.Source(func() {
		it.Set(loopStats.Iterations)
		idle.Set(loopStats.IdleNanos)
		cl.Set(3)
	})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(m)
	loopStats.Iterations, loopStats.IdleNanos = 42, 1500000000
	if n := testutil.CollectAndCount(m); n != 3 {
		t.Fatalf("%d series", n)
	}
	m.Publish()
	want := `
# HELP goblin_connected_clients Clients.
# TYPE goblin_connected_clients gauge
goblin_connected_clients{protocol="resp",transport="uds"} 3
# HELP goblin_loop_idle_seconds_total Idle time.
# TYPE goblin_loop_idle_seconds_total counter
goblin_loop_idle_seconds_total 1.5
# HELP goblin_loop_iterations_total Duty cycles.
# TYPE goblin_loop_iterations_total counter
goblin_loop_iterations_total 42
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}

// quietTransport stands for a shared-memory transport with nothing to do:
// its Poll is a few loads, like an empty ring's.
type quietTransport struct{ head, tail int64 }

func (q *quietTransport) Name() string { return "quiet" }
func (q *quietTransport) Poll(int64) int {
	if q.head != q.tail {
		return 1
	}
	return 0
}
func (q *quietTransport) Clients() int                 { return 0 }
func (q *quietTransport) UpdateStats(*transport.Stats) {}
func (q *quietTransport) Close() error                 { return nil }

// BenchmarkLoopCycle measures one duty cycle of an idle loop (spin) with
// a quiet shared-memory-like transport alone, then beside a socket
// listener checked every N cycles, then checked on every cycle. The
// difference is what the socket transport taxes the other transports.
func BenchmarkLoopCycle(b *testing.B) {
	cases := []struct {
		name  string
		every int // 0: no socket transport
	}{{"quiet-only", 0}, {"quiet+socket/every=16", 16}, {"quiet+socket/every=64", 64}, {"quiet+socket/every=1", 1}}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ts := []transport.Server{&quietTransport{}}
			if c.every > 0 {
				s := listenEcho(b, c.every)
				defer s.Close()
				ts = append(ts, s)
			}
			m := NewMetrics()
			it := m.Counter("i", "i", nil)
			var st LoopStats
			m.Source(func() { it.Set(st.Iterations) })
			l, err := NewLoop(LoopConfig{Transports: ts, Idle: IdleSpin, Publish: func(s *LoopStats) { st = *s; m.Publish() }})
			if err != nil {
				b.Fatal(err)
			}
			defer l.closeParkFD()
			l.lastPublish = monotime.Now()
			b.ReportAllocs()
			for b.Loop() {
				l.cycle()
			}
		})
	}
}

// fakeSleeper stands for the shared-memory ring: a transport the kernel
// cannot see, whose "clients" (the test) put work in and ring its eventfd.
type fakeSleeper struct {
	bell              int
	refuse            atomic.Bool  // PrepareToPark calls the park off
	pending, served   atomic.Int64 // work put in by the test, done by Poll
	prepares, unparks atomic.Int64
	buf               [8]byte // the loop goroutine's
}

func newFakeSleeper(t *testing.T) *fakeSleeper {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return &fakeSleeper{bell: fd}
}

func (f *fakeSleeper) Name() string { return "fake-sleeper" }
func (f *fakeSleeper) Poll(int64) int {
	n := f.pending.Swap(0)
	f.served.Add(n)
	return int(n)
}
func (f *fakeSleeper) Clients() int                 { return 0 }
func (f *fakeSleeper) UpdateStats(*transport.Stats) {}
func (f *fakeSleeper) Close() error                 { return nil }
func (f *fakeSleeper) WakeFD() int                  { return f.bell }
func (f *fakeSleeper) PrepareToPark() bool {
	f.prepares.Add(1)
	return !f.refuse.Load() && f.pending.Load() == 0
}
func (f *fakeSleeper) Unparked() {
	f.unparks.Add(1)
	unix.Read(f.bell, f.buf[:])
}

// ring puts one piece of work in and rings the doorbell.
func (f *fakeSleeper) ring() {
	f.pending.Add(1)
	one := [8]byte{1}
	unix.Write(f.bell, one[:])
}

// runParkingLoop runs a backoff loop over ts whose parks last 30 s. stop
// (also run at cleanup) stops it, waking it with wake so it does not wait
// out the park, and returns once Run has.
func runParkingLoop(t *testing.T, wake func(), ts ...transport.Server) (parks, skipped *atomic.Int64, stop func()) {
	parks, skipped = new(atomic.Int64), new(atomic.Int64)
	l := runLoop(t, LoopConfig{
		Transports: ts,
		Options:    &Options{Backoff: idle.Params{MinPark: 30 * time.Second, MaxPark: 30 * time.Second}},
		Publish: func(st *LoopStats) {
			parks.Store(st.Parks)
			skipped.Store(st.ParksSkipped)
		},
		PublishEvery: time.Nanosecond,
	})
	stop = func() {
		l.Stop()
		for {
			wake()
			select {
			case <-l.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	t.Cleanup(stop) // runs before runLoop's, which waits for Run's error
	return parks, skipped, stop
}

// wakeEachPark waits three times for the loop (whose parks last 30 s) to
// park, then gives it one piece of work with give, which it must have
// done (served counts it) within 10 s; why ends the failure message.
func wakeEachPark(t *testing.T, parks *atomic.Int64, give func(), served *atomic.Int64, why string) {
	t.Helper()
	for i := int64(1); i <= 3; i++ {
		testkit.Eventually(t, 30*time.Second, "the loop to park", func() (bool, string) { return parks.Load() >= i, "" })
		give()
		deadline := time.Now().Add(10 * time.Second) // the park is 30 s
		for served.Load() < i {
			if time.Now().After(deadline) {
				t.Fatalf("work %d not done 10 s after it came (the park lasts 30 s)%s", i, why)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// TestLoopWakesOnSleeper: a loop whose only transport is a Sleeper parks
// on its eventfd (not blind), so a ring ends a 30 s park at once; every
// PrepareToPark is matched by an Unparked.
func TestLoopWakesOnSleeper(t *testing.T) {
	f := newFakeSleeper(t)
	parks, _, stop := runParkingLoop(t, f.ring, f)
	wakeEachPark(t, parks, f.ring, &f.served, "")
	stop()
	if p, u := f.prepares.Load(), f.unparks.Load(); p != u || p < 3 {
		t.Errorf("%d PrepareToPark, %d Unparked: want equal, at least 3", p, u)
	}
}

// TestLoopSleeperCallsParkOff: when a Sleeper's PrepareToPark returns
// false the loop does not park, and every Sleeper asked so far (the one
// that agreed too) gets its Unparked; once it agrees, the loop parks.
func TestLoopSleeperCallsParkOff(t *testing.T) {
	a, b := newFakeSleeper(t), newFakeSleeper(t)
	b.refuse.Store(true)
	parks, skipped, stop := runParkingLoop(t, a.ring, a, b)
	testkit.Eventually(t, 30*time.Second, "parks called off", func() (bool, string) { return skipped.Load() >= 3, "" })
	if n := parks.Load(); n != 0 {
		t.Fatalf("%d parks while a Sleeper refused them", n)
	}
	b.refuse.Store(false)
	testkit.Eventually(t, 30*time.Second, "the loop to park", func() (bool, string) { return parks.Load() >= 1, "" })
	stop()
	for i, f := range []*fakeSleeper{a, b} {
		if p, u := f.prepares.Load(), f.unparks.Load(); p != u || p < 4 {
			t.Errorf("sleeper %d: %d PrepareToPark, %d Unparked: want equal, at least 4", i, p, u)
		}
	}
}

// fakeDeadliner stands for the Aeron transport with its media driver in
// process: it needs a Poll within 5 ms of the last one.
type fakeDeadliner struct {
	polls atomic.Int64
	last  atomic.Int64
}

func (f *fakeDeadliner) UpdateStats(*transport.Stats) {}
func (f *fakeDeadliner) Name() string                 { return "fake-deadliner" }
func (f *fakeDeadliner) Poll(now int64) int {
	f.polls.Add(1)
	f.last.Store(now)
	return 0
}
func (f *fakeDeadliner) Clients() int    { return 0 }
func (f *fakeDeadliner) Close() error    { return nil }
func (f *fakeDeadliner) Deadline() int64 { return f.last.Load() + int64(5*time.Millisecond) }

// TestLoopParksNoLongerThanADeadline: a loop whose parks last 30 s still
// polls a Deadliner by its deadline, so an in-process media driver's duty
// cycle keeps running while the loop idles.
func TestLoopParksNoLongerThanADeadline(t *testing.T) {
	f := &fakeDeadliner{}
	parks, _, stop := runParkingLoop(t, func() {}, f)
	testkit.Eventually(t, 30*time.Second, "the loop to park", func() (bool, string) { return parks.Load() >= 1, "" })
	before := f.polls.Load()
	deadline := time.Now().Add(20 * time.Second) // one 30 s park would miss it
	for f.polls.Load() < before+20 {
		if time.Now().After(deadline) {
			t.Fatalf("%d polls in 20 s: the loop parked past the transport's 5 ms deadlines", f.polls.Load()-before)
		}
		time.Sleep(time.Millisecond)
	}
	stop()
}

// fakePreparer stands for the Aeron transport with its media driver in
// process: a Waitable whose WaitFD (an epoll set) watches its "socket"
// (an eventfd the test writes to) only once PrepareToWait armed it, and
// which disarms again when a Poll finds work, as the driver leaves the
// set while its owner is busy.
type fakePreparer struct {
	set, sock       int
	armed           bool // the loop goroutine's
	pending, served atomic.Int64
	prepares        atomic.Int64
	buf             [8]byte
}

func newFakePreparer(t *testing.T) *fakePreparer {
	set, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	sock, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(sock); unix.Close(set) })
	return &fakePreparer{set: set, sock: sock}
}

func (f *fakePreparer) Name() string                 { return "fake-preparer" }
func (f *fakePreparer) Clients() int                 { return 0 }
func (f *fakePreparer) UpdateStats(*transport.Stats) {}
func (f *fakePreparer) Close() error                 { return nil }
func (f *fakePreparer) WaitFD() int                  { return f.set }
func (f *fakePreparer) CheckNow()                    {}
func (f *fakePreparer) Poll(int64) int {
	n := f.pending.Swap(0)
	if n > 0 {
		unix.Read(f.sock, f.buf[:])
		if f.armed {
			unix.EpollCtl(f.set, unix.EPOLL_CTL_DEL, f.sock, nil)
			f.armed = false
		}
	}
	f.served.Add(n)
	return int(n)
}
func (f *fakePreparer) PrepareToWait() {
	f.prepares.Add(1)
	if !f.armed {
		unix.EpollCtl(f.set, unix.EPOLL_CTL_ADD, f.sock, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(f.sock)})
		f.armed = true
	}
}

// send is a datagram for the transport.
func (f *fakePreparer) send() {
	f.pending.Add(1)
	one := [8]byte{1}
	unix.Write(f.sock, one[:])
}

// TestLoopPreparesWaitablesBeforeParking: a Waitable that is also a
// WaitPreparer is asked to arm its descriptor before each park, so work
// that comes while the loop is parked for 30 s wakes it at once, even
// though its descriptor watches nothing while the loop polls.
func TestLoopPreparesWaitablesBeforeParking(t *testing.T) {
	f := newFakePreparer(t)
	parks, _, stop := runParkingLoop(t, f.send, f)
	wakeEachPark(t, parks, f.send, &f.served, ": the descriptor was not armed")
	stop()
	if p := f.prepares.Load(); p < 3 {
		t.Errorf("%d PrepareToWait for at least 3 parks", p)
	}
}

// nowRecorder records the now each Poll receives.
type nowRecorder struct{ polled []int64 }

func (r *nowRecorder) Name() string                 { return "now-recorder" }
func (r *nowRecorder) Poll(now int64) int           { r.polled = append(r.polled, now); return 0 }
func (r *nowRecorder) Clients() int                 { return 0 }
func (r *nowRecorder) UpdateStats(*transport.Stats) {}
func (r *nowRecorder) Close() error                 { return nil }

// TestLoopBeginCycle: BeginCycle is called once per cycle, before the
// transports are polled, with the now Poll receives, on monotime's clock
// (the engine times commands from it and compares it with its own reads).
func TestLoopBeginCycle(t *testing.T) {
	r := &nowRecorder{}
	var begun []int64
	l, err := NewLoop(LoopConfig{Transports: []transport.Server{r}, Idle: IdleSpin,
		BeginCycle: func(now int64) {
			if len(begun) != len(r.polled) {
				t.Fatalf("BeginCycle after the cycle's Poll")
			}
			begun = append(begun, now)
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.closeParkFD()
	before := monotime.Now()
	for i := 0; i < 3; i++ {
		l.cycle()
	}
	after := monotime.Now()
	if len(begun) != 3 || len(r.polled) != 3 {
		t.Fatalf("3 cycles: BeginCycle called %d times, Poll %d", len(begun), len(r.polled))
	}
	for i, now := range begun {
		if now != r.polled[i] || now < before || now > after {
			t.Errorf("cycle %d: BeginCycle(%d), Poll(%d); want the same reading of monotime within [%d, %d]", i, now, r.polled[i], before, after)
		}
	}
}

// TestLoopParkAtOnce: a loop of sockets alone whose ParkAtOnce says true
// parks on its first idle cycle (no spins) and still answers at once;
// with ParkAtOnce false, or beside a transport that is not a socket (a
// ring or Aeron stands for it here), the loop spins and yields its 220
// cycles before the first park as before.
func TestLoopParkAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		quiet  bool
		atOnce bool
	}{{"sockets", false, true}, {"sockets-off", false, false}, {"beside-a-ring", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			ts := []transport.Server{listenEcho(t, 0)}
			if tc.quiet {
				ts = append(ts, &quietTransport{})
			}
			var first atomic.Pointer[LoopStats] // the stats published at the first park
			runLoop(t, LoopConfig{
				Transports: ts,
				Options:    &Options{Backoff: idle.Params{Spins: 200, Yields: 20, MinPark: time.Millisecond, MaxPark: time.Millisecond}},
				ParkAtOnce: func() bool { return tc.atOnce },
				Publish: func(s *LoopStats) {
					if c := *s; c.Parks > 0 && first.Load() == nil {
						first.Store(&c)
					}
				},
				PublishEvery: time.Nanosecond,
			})
			testkit.Eventually(t, 30*time.Second, "the loop to park", func() (bool, string) { return first.Load() != nil, "" })
			echoOnce(t, ts[0].(*uds.Server).Addr(), "after-parks")
			s := first.Load()
			idleCycles := s.Iterations - s.Busy
			t.Logf("%d idle cycles before the first park", idleCycles)
			if atOnce := tc.atOnce && !tc.quiet; atOnce && idleCycles > 1 {
				t.Fatalf("ParkAtOnce on a sockets-only loop: %d idle cycles before the first park, want 1 (no spins)", idleCycles)
			} else if !atOnce && idleCycles < 220 {
				t.Fatalf("ParkAtOnce not applying: %d idle cycles before the first park, want the 220 spins and yields", idleCycles)
			}
		})
	}
}

// TestLoopDoze: with the doze strategy (the default), a loop of sockets
// alone that stays idle parks longer and longer once its backoff's parks
// reach MaxPark (2, 4, … up to DefaultDoze), asks Timers before each of
// those parks, and still answers a client at once after dozing. Beside a
// transport that is not a socket (a ring or Aeron stands for it), doze is
// backoff: Timers is never asked, every park is MaxPark.
func TestLoopDoze(t *testing.T) {
	for _, tc := range []struct {
		name  string
		quiet bool
	}{{"sockets", false}, {"beside-a-ring", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ts := []transport.Server{listenEcho(t, 0)}
			if tc.quiet {
				ts = append(ts, &quietTransport{})
			}
			var mu sync.Mutex
			var asked []time.Duration
			var stats atomic.Pointer[LoopStats]
			runLoop(t, LoopConfig{
				Transports: ts,
				Timers: func(max time.Duration) time.Duration {
					mu.Lock()
					defer mu.Unlock()
					asked = append(asked, max)
					return max
				},
				Publish:      func(s *LoopStats) { c := *s; stats.Store(&c) },
				PublishEvery: time.Nanosecond,
			})
			if tc.quiet {
				testkit.Eventually(t, 30*time.Second, "the loop to park 100 times", func() (bool, string) {
					s := stats.Load()
					return s != nil && s.Parks >= 100, fmt.Sprintf("%+v", s)
				})
				mu.Lock()
				defer mu.Unlock()
				if len(asked) > 0 {
					t.Fatalf("beside a ring: Timers asked for %v, want never (no doze)", asked)
				}
				return
			}
			want := []time.Duration{2, 4, 8, 16, 32, 64, 100, 100}
			for i := range want {
				want[i] *= time.Millisecond
			}
			testkit.Eventually(t, 30*time.Second, "8 dozes", func() (bool, string) {
				mu.Lock()
				defer mu.Unlock()
				return len(asked) >= len(want), fmt.Sprint(asked)
			})
			echoOnce(t, ts[0].(*uds.Server).Addr(), "after-dozing")
			mu.Lock()
			got := slices.Clone(asked[:len(want)])
			mu.Unlock()
			if !slices.Equal(got, want) {
				t.Fatalf("Timers asked for %v, want the doubling parks %v", got, want)
			}
		})
	}
}

// TestLoopParkLength: a doze is bounded by what Timers allows, but never
// below the backoff's MaxPark; a park no longer than MaxPark is not asked
// about; a Deadliner's deadline bounds any park.
func TestLoopParkLength(t *testing.T) {
	slack := 5 * time.Millisecond
	l, err := NewLoop(LoopConfig{Transports: []transport.Server{listenEcho(t, 0)},
		Timers: func(max time.Duration) time.Duration { return min(max, slack) }})
	if err != nil {
		t.Fatal(err)
	}
	defer l.closeParkFD()
	for _, c := range []struct{ slack, ask, want time.Duration }{
		{5 * time.Millisecond, 64 * time.Millisecond, 5 * time.Millisecond},
		{5 * time.Millisecond, 2 * time.Millisecond, 2 * time.Millisecond},
		{0, 64 * time.Millisecond, time.Millisecond},
		{-time.Second, 64 * time.Millisecond, time.Millisecond},
		{0, 500 * time.Microsecond, 500 * time.Microsecond},
	} {
		slack = c.slack
		if got := l.parkLength(c.ask); got != c.want {
			t.Errorf("Timers allowing %v, a park of %v: %v, want %v", c.slack, c.ask, got, c.want)
		}
	}
	l.deadliners = append(l.deadliners, deadlineIn(3*time.Millisecond))
	slack = time.Second
	if got := l.parkLength(64 * time.Millisecond); got > 3*time.Millisecond {
		t.Errorf("a deadline 3 ms away: a park of %v", got)
	}
}

type deadlineAt int64

func deadlineIn(d time.Duration) deadlineAt { return deadlineAt(monotime.Now() + int64(d)) }
func (d deadlineAt) Deadline() int64        { return int64(d) }

// TestLoopStopWakesDoze: Stop ends a park at once in a loop that may doze
// (its eventfd is in the park set): a park of an hour, asked for after
// Stop, returns.
func TestLoopStopWakesDoze(t *testing.T) {
	l, err := NewLoop(LoopConfig{Transports: []transport.Server{listenEcho(t, 0)},
		Timers: func(max time.Duration) time.Duration { return max }})
	if err != nil {
		t.Fatal(err)
	}
	defer l.closeParkFD()
	l.Stop()
	parked := make(chan struct{})
	go func() {
		l.park(time.Hour)
		close(parked)
	}()
	select {
	case <-parked:
	case <-time.After(30 * time.Second):
		t.Fatal("a park of an hour after Stop had not returned after 30 s: Stop does not wake a dozing loop")
	}
}

// rawParker is a fakePreparer that says a goroutine of its own parks raw,
// as Aeron replication's Publisher and Source do.
type rawParker struct{ *fakePreparer }

func (rawParker) ParksRaw() bool { return true }

// TestLoopParksRawBesideRawParker: beside a RawParker the loop parks
// through a raw system call, which its descriptors still wake at once,
// and GOMAXPROCS has one P more while it runs, as before once it stopped;
// without one it parks as before.
func TestLoopParksRawBesideRawParker(t *testing.T) {
	plain, err := NewLoop(LoopConfig{Transports: []transport.Server{newFakePreparer(t)}})
	if err != nil {
		t.Fatal(err)
	}
	plain.closeParkFD()
	if plain.RawPark() {
		t.Error("a loop without a RawParker parks raw")
	}
	base := runtime.GOMAXPROCS(0)
	f := rawParker{newFakePreparer(t)}
	parks, _, stop := runParkingLoop(t, f.send, f)
	testkit.Eventually(t, 30*time.Second, fmt.Sprintf("GOMAXPROCS to be %d while the loop runs", base+1), func() (bool, string) {
		n := runtime.GOMAXPROCS(0)
		return n == base+1, fmt.Sprint(n)
	})
	wakeEachPark(t, parks, f.send, &f.served, ": the raw park was not woken by its descriptors")
	stop()
	if n := runtime.GOMAXPROCS(0); n != base {
		t.Errorf("GOMAXPROCS %d once the loop stopped, want %d as before", n, base)
	}
}

// TestLoopAddsAPPerRawParker: each RawParker's goroutine holds a P while
// it sleeps, so a loop beside two (a replica whose publication stands by)
// adds two Ps, not one, and takes both back.
func TestLoopAddsAPPerRawParker(t *testing.T) {
	a, b := rawParker{newFakePreparer(t)}, rawParker{newFakePreparer(t)}
	l, err := NewLoop(LoopConfig{Transports: []transport.Server{a, b}})
	if err != nil {
		t.Fatal(err)
	}
	l.closeParkFD()
	if l.rawParkers != 2 {
		t.Fatalf("a loop beside two RawParkers counts %d", l.rawParkers)
	}
	base := runtime.GOMAXPROCS(0)
	addP(l.rawParkers)
	if n := runtime.GOMAXPROCS(0); n != base+2 {
		t.Errorf("GOMAXPROCS %d beside two RawParkers, want %d", n, base+2)
	}
	addP(-l.rawParkers)
	if n := runtime.GOMAXPROCS(0); n != base {
		t.Errorf("GOMAXPROCS %d once they were taken back, want %d", n, base)
	}
}

// TestTickEverySpacesIdleTicks: with TickEvery, a Tick that did nothing is
// not repeated until TickEvery has passed, while one that did work is
// repeated on the next cycle; without it Tick runs every cycle.
func TestTickEverySpacesIdleTicks(t *testing.T) {
	for _, c := range []struct {
		name  string
		every time.Duration
		work  int
		want  int
	}{
		{"idle, spaced", time.Hour, 0, 1},
		{"busy, spaced", time.Hour, 1, 100},
		{"idle, every cycle", 0, 0, 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			ticks := 0
			l, err := NewLoop(LoopConfig{Transports: []transport.Server{&quietTransport{}}, Idle: IdleSpin, TickEvery: c.every,
				Tick: func(int) int { ticks++; return c.work }})
			if err != nil {
				t.Fatal(err)
			}
			defer l.closeParkFD()
			for range 100 {
				l.cycle()
			}
			if ticks != c.want {
				t.Fatalf("%d Ticks in 100 cycles, want %d", ticks, c.want)
			}
		})
	}
	// A cycle whose transport did work ticks however recent the last
	// Tick: a write's replication stream leaves from Tick, and an idle
	// primary with replicas parks at once.
	ticks := 0
	q := &quietTransport{}
	l, err := NewLoop(LoopConfig{Transports: []transport.Server{q}, Idle: IdleSpin, TickEvery: time.Hour,
		Tick: func(int) int { ticks++; return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	defer l.closeParkFD()
	l.cycle() // the first Tick
	l.cycle() // idle: spaced
	q.tail++  // a request
	l.cycle()
	if ticks != 2 {
		t.Fatalf("%d Ticks after an idle cycle and a busy one, want 2 (the busy cycle ticks)", ticks)
	}
}

// TestLoopClockAfterIdleCycles: a spinning idle loop reads the clock on
// one cycle in idleClockEvery, while a loop that yields (or parks, or did
// work) reads it on every cycle.
func TestLoopClockAfterIdleCycles(t *testing.T) {
	for _, c := range []struct {
		idle     string
		min, max int // distinct clock readings in 12 cycles
	}{{IdleSpin, 12 / idleClockEvery, 12/idleClockEvery + 1}, {IdleYield, 12, 12}} {
		t.Run(c.idle, func(t *testing.T) {
			seen := map[int64]bool{}
			l, err := NewLoop(LoopConfig{Transports: []transport.Server{&quietTransport{}}, Idle: c.idle,
				BeginCycle: func(now int64) { seen[now] = true }})
			if err != nil {
				t.Fatal(err)
			}
			defer l.closeParkFD()
			for range 12 {
				l.cycle()
			}
			if len(seen) < c.min || len(seen) > c.max {
				t.Fatalf("%d distinct clock readings in 12 idle cycles, want %d to %d", len(seen), c.min, c.max)
			}
		})
	}
}

// TestLoopRest: a loop whose every Tick rests 5 s (as a background save's
// walk does for a slice, Engine.SaveRest) still answers a socket's request
// and a Sleeper's ring at once: the rest waits on the park set. It rests
// under the spin strategy too, with Timers allowing no park (the engine's
// during a save), and the loop counts the rests it took. Beside a
// transport the park set cannot watch (blind: Aeron IPC), it never rests.
func TestLoopRest(t *testing.T) {
	s, f := listenEcho(t, 0), newFakeSleeper(t)
	var l *Loop             // set before Run starts, so Tick reads it after
	var rested atomic.Int64 // Rest calls that waited (the loop goroutine's)
	l, err := NewLoop(LoopConfig{
		Transports: []transport.Server{s, f},
		Idle:       IdleSpin,
		Timers:     func(time.Duration) time.Duration { return 0 },
		Tick: func(int) int {
			if l.Rest(5 * time.Second) {
				rested.Add(1)
			}
			return 0
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- l.Run() }()
	stopped := false
	stop := func() { // wake the rest so Run returns at once
		if stopped {
			return
		}
		stopped = true
		defer func() {
			if err := <-errc; err != nil {
				t.Error(err)
			}
		}()
		l.Stop()
		for {
			f.ring()
			select {
			case <-l.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	t.Cleanup(stop)
	for i := range 3 {
		start := time.Now()
		echoOnce(t, s.Addr(), fmt.Sprintf("ping-%d", i))
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("a request to the socket listener answered after %v by a loop resting 5 s: the rest did not end", d)
		}
		start = time.Now()
		want := f.served.Load() + 1
		f.ring()
		testkit.Eventually(t, 30*time.Second, "the ring to be served", func() (bool, string) {
			return f.served.Load() >= want, fmt.Sprintf("%d served", f.served.Load())
		})
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("a Sleeper's ring served after %v by a loop resting 5 s: the rest did not end", d)
		}
	}
	stop()
	if got, counted := rested.Load(), l.stats.Rests; got < 3 || counted != got {
		t.Errorf("the loop rested %d times, want at least 3 (one per request); LoopStats.Rests %d", got, counted)
	}

	blind, err := NewLoop(LoopConfig{Transports: []transport.Server{listenEcho(t, 0), &quietTransport{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer blind.closeParkFD()
	start := time.Now()
	if blind.Rest(5 * time.Second) {
		t.Errorf("a loop beside a blind transport rested (%v): that transport's requests would wait it out", time.Since(start))
	}

	// Without epoll_pwait2 the park's timeout counts in milliseconds: a
	// 20 µs rest would last 1 ms, so the loop does not rest.
	sockets, err := NewLoop(LoopConfig{Transports: []transport.Server{listenEcho(t, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	defer sockets.closeParkFD()
	had := noPwait2.Swap(true)
	start = time.Now()
	took := sockets.Rest(5 * time.Second)
	noPwait2.Store(had)
	if took {
		t.Errorf("a loop on a kernel without epoll_pwait2 rested (%v)", time.Since(start))
	}
}
