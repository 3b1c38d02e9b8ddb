package aeron

import (
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron/internal/broadcast"
	"github.com/goblin-kv/goblin/aeron/internal/cnc"
	"github.com/goblin-kv/goblin/aeron/internal/command"
	"github.com/goblin-kv/goblin/aeron/internal/ringbuffer"
	"github.com/goblin-kv/goblin/idle"
	"github.com/goblin-kv/goblin/internal/shm"
)

// gateIdle lets a test decide when the conductor runs a duty cycle: each
// tick releases one Idle call; after open every Idle returns at once.
type gateIdle struct {
	tick chan struct{}
	once sync.Once
	open chan struct{}
	done <-chan struct{} // the conductor's
}

func newGateIdle() *gateIdle {
	return &gateIdle{tick: make(chan struct{}), open: make(chan struct{})}
}

func (g *gateIdle) Idle(int) idle.Phase {
	select {
	case <-g.tick:
	case <-g.open:
	}
	return idle.Parked
}

// step lets the conductor finish its current duty cycle and run one more
// (or stop, if it is stopping).
func (g *gateIdle) step() {
	for i := 0; i < 2; i++ {
		select {
		case g.tick <- struct{}{}:
		case <-g.done:
			return
		}
	}
}

func (g *gateIdle) release() { g.once.Do(func() { close(g.open) }) }

// fakeDriver is a CnC file with no driver behind it: the test plays the
// driver by writing the broadcast buffer and the heartbeat itself.
type fakeDriver struct {
	data []byte
	cnc  *CnC
	tx   *broadcast.Transmitter
}

func newFakeDriver(t *testing.T) (*fakeDriver, string) {
	dir := t.TempDir()
	img := fakeCnC(cnc.Version, time.Now().UnixMilli())
	data, err := shm.Create(filepath.Join(dir, CnCFile), len(img))
	if err != nil {
		t.Fatal(err)
	}
	copy(data, img)
	t.Cleanup(func() { shm.Unmap(data) })
	cnc, err := parseCnC(data)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := broadcast.NewTransmitter(cnc.toClients)
	if err != nil {
		t.Fatal(err)
	}
	return &fakeDriver{data: data, cnc: cnc, tx: tx}, dir
}

func (f *fakeDriver) setHeartbeat(ms int64) {
	shm.StoreInt64Release(f.cnc.toDriver, len(f.cnc.toDriver)-ringbuffer.TrailerLength+ringbuffer.ConsumerHeartbeatOffset, ms)
}

func connectFake(t *testing.T, dir string, o Options) (*Client, *gateIdle, *errorLog) {
	g := newGateIdle()
	el := &errorLog{}
	o.Dir = dir
	o.ConductorIdle = g
	o.ErrorHandler = el.add
	if o.DriverTimeout == 0 {
		o.DriverTimeout = time.Minute
	}
	c, err := Connect(o)
	if err != nil {
		t.Fatal(err)
	}
	g.done = c.Done()
	t.Cleanup(func() { g.release(); c.Close() })
	return c, g, el
}

type errorLog struct {
	mu   sync.Mutex
	errs []error
}

func (l *errorLog) add(err error) { l.mu.Lock(); l.errs = append(l.errs, err); l.mu.Unlock() }

func (l *errorLog) has(target error) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.errs {
		if errors.Is(e, target) {
			return true
		}
	}
	return false
}

func TestConductorReportsLappingAndRecovers(t *testing.T) {
	f, dir := newFakeDriver(t)
	c, g, el := connectFake(t, dir, Options{})
	// The driver sends more than the whole 1 KiB broadcast buffer before
	// the conductor reads: the client is lapped.
	for i := 0; i < 100; i++ {
		f.tx.Transmit(command.OnOperationSuccess, command.AppendInt64(nil, 1000+int64(i)))
	}
	g.step()
	if !el.has(ErrBroadcastLapped) {
		t.Fatal("lapping not reported")
	}
	// It carries on from the latest event: a client timeout for this client
	// is still noticed.
	f.tx.Transmit(command.OnClientTimeout, command.AppendInt64(nil, c.ClientID()))
	for i := 0; i < 3 && !c.IsClosed(); i++ {
		g.step()
	}
	if !errors.Is(c.Err(), ErrClientTimeout) || !el.has(ErrClientTimeout) {
		t.Fatalf("after ON_CLIENT_TIMEOUT: Err() = %v", c.Err())
	}
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("conductor still running after a fatal error")
	}
}

func TestConductorIgnoresOtherClientsTimeout(t *testing.T) {
	f, dir := newFakeDriver(t)
	c, g, _ := connectFake(t, dir, Options{})
	f.tx.Transmit(command.OnClientTimeout, command.AppendInt64(nil, c.ClientID()+1))
	g.step()
	g.step()
	if c.IsClosed() {
		t.Fatalf("closed by another client's timeout: %v", c.Err())
	}
}

func TestConductorSeesDriverShutdownAndStaleHeartbeat(t *testing.T) {
	for _, tc := range []struct {
		name string
		hb   int64
		want error
	}{
		{"shutdown", -1, ErrDriverShutdown},
		{"stale", 1, ErrDriverTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, dir := newFakeDriver(t)
			c, g, el := connectFake(t, dir, Options{DriverTimeout: time.Second})
			f.setHeartbeat(tc.hb)
			for i := 0; i < 3 && !c.IsClosed(); i++ {
				g.step()
			}
			if !errors.Is(c.Err(), tc.want) || !el.has(tc.want) {
				t.Fatalf("Err() = %v, want %v", c.Err(), tc.want)
			}
			if _, err := c.AddSubscription("aeron:ipc", 1); !errors.Is(err, ErrClientClosed) {
				t.Fatalf("add after the driver went: %v", err)
			}
		})
	}
}

func TestAddTimesOutWithoutReply(t *testing.T) {
	_, dir := newFakeDriver(t)
	c, g, _ := connectFake(t, dir, Options{DriverTimeout: 300 * time.Millisecond})
	g.release()
	// Connect needs a fresh heartbeat, but nobody answers commands.
	if _, err := c.AddPublication("aeron:ipc", 1); !errors.Is(err, ErrDriverTimeout) {
		t.Fatalf("add with no driver answering: %v", err)
	}
}

// TestConductorIdlesAsTheJavaClient: by default the conductor sleeps 16 ms
// when idle, as the Java client does. Every wake-up takes a core for a
// moment, which on two cores busy with spinning threads slows a round
// trip: at the 2 ms it slept before, 500 times a second per process.
func TestConductorIdlesAsTheJavaClient(t *testing.T) {
	var o Options
	o.ensureDefaults()
	if want := (SleepIdle{Period: 16 * time.Millisecond}); o.ConductorIdle != want {
		t.Errorf("default ConductorIdle %#v, want %#v", o.ConductorIdle, want)
	}
}

// TestCloseWakesASleepingConductor: Close (and a fatal error found on
// another goroutine) wakes a conductor asleep in its idle SleepIdle, so
// closing a client does not wait out the sleep. The sleep here is ten
// 30 s, so that waiting it out cannot pass for being woken within 10 s.
func TestCloseWakesASleepingConductor(t *testing.T) {
	for _, how := range []string{"close", "driver lost"} {
		t.Run(how, func(t *testing.T) {
			f, dir := newFakeDriver(t)
			c, err := Connect(Options{Dir: dir, DriverTimeout: time.Second,
				ConductorIdle: SleepIdle{Period: 30 * time.Second}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			// Wait for the conductor's first duty cycle, so that it then
			// sleeps. It may have run before lastDuty is read here: then
			// its next cycle is 30 s away, so the wait is bounded, and
			// the conductor is asleep either way once it ends.
			c.mu.Lock()
			first := c.lastDuty
			c.mu.Unlock()
			for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
				c.mu.Lock()
				ran := c.lastDuty != first
				c.mu.Unlock()
				if ran {
					break
				}
			}
			time.Sleep(100 * time.Millisecond) // the conductor goes to sleep
			closed := make(chan error, 1)
			switch how {
			case "close":
				go func() { closed <- c.Close() }()
			case "driver lost":
				// An Add notices the stale heartbeat on the calling
				// goroutine; the conductor must stop and close Done.
				f.setHeartbeat(1)
				go func() {
					_, err := c.AddSubscription("aeron:ipc", 1)
					<-c.Done()
					closed <- err
				}()
			}
			select {
			case err := <-closed:
				if how == "close" && err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: the client's conductor was still asleep 10 s later (its idle sleep is 30 s)", how)
			}
		})
	}
}
