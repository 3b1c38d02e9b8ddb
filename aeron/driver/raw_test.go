package driver

import (
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron/internal/broadcast"
	"github.com/goblin-kv/goblin/aeron/internal/cnc"
	"github.com/goblin-kv/goblin/aeron/internal/command"
)

// manualDriver is a driver whose duty cycle and clocks the test runs: no
// goroutine, no sleeping, every timeout reached by advancing the clocks.
type manualDriver struct {
	*Driver
	t       testing.TB
	nowNs   int64
	epochMs int64
}

func newManualDriver(t testing.TB, o Options) *manualDriver {
	t.Helper()
	if o.Dir == "" {
		base := testOptions(t)
		base.TimerInterval, base.ClientLivenessTimeout, base.PublicationUnblockTimeout = o.TimerInterval, o.ClientLivenessTimeout, o.PublicationUnblockTimeout
		base.ImageLivenessTimeout = o.ImageLivenessTimeout
		base.UntetheredWindowLimitTimeout, base.UntetheredLingerTimeout, base.UntetheredRestingTimeout =
			o.UntetheredWindowLimitTimeout, o.UntetheredLingerTimeout, o.UntetheredRestingTimeout
		base.TerminationValidator, base.TerminationHook = o.TerminationValidator, o.TerminationHook
		base.ErrorHandler = o.ErrorHandler
		base.IPCPublicationTermWindow = o.IPCPublicationTermWindow
		o = base
	}
	d, err := New(o)
	if err != nil {
		t.Fatalf("new driver: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	m := &manualDriver{Driver: d, t: t, nowNs: 1, epochMs: time.Now().UnixMilli()}
	d.epochClock = func() int64 { return m.epochMs }
	d.epochMs = m.epochMs
	m.DoWork(m.nowNs)
	return m
}

// cycle runs n duty cycles without moving the clocks.
func (m *manualDriver) cycle(n int) {
	for range n {
		m.DoWork(m.nowNs)
	}
}

// advance moves both clocks by dt (in steps of at most 10 ms, running a
// duty cycle after each) so timers fire as they would in real time.
func (m *manualDriver) advance(dt time.Duration) {
	for dt > 0 {
		step := min(dt, 10*time.Millisecond)
		m.nowNs += int64(step)
		m.epochMs += step.Milliseconds()
		dt -= step
		m.cycle(2)
	}
}

// rawClient speaks the driver protocol directly through the CnC buffers,
// so a test can send any command (malformed ones too) and see every event.
type rawClient struct {
	m      *manualDriver
	id     int64
	rx     *broadcast.Receiver
	events []event
	buf    []byte
}

type event struct {
	typeID int32
	msg    []byte
}

func newRawClient(m *manualDriver) *rawClient {
	m.t.Helper()
	l, _, err := cnc.Parse(m.cncData)
	if err != nil {
		m.t.Fatal(err)
	}
	rx, err := broadcast.NewReceiver(l.Slice(m.cncData).ToClients)
	if err != nil {
		m.t.Fatal(err)
	}
	return &rawClient{m: m, id: m.ring.NextCorrelationID(), rx: rx}
}

func (c *rawClient) nextID() int64 { return c.m.ring.NextCorrelationID() }

// send writes one command, runs the driver until it has read it, and
// collects the events it broadcast.
func (c *rawClient) send(typeID int32, msg []byte) {
	c.m.t.Helper()
	if err := c.m.ring.Write(typeID, msg); err != nil {
		c.m.t.Fatal(err)
	}
	c.m.cycle(3)
	c.poll()
}

func (c *rawClient) poll() {
	for {
		n, err := c.rx.Receive(func(typeID int32, msg []byte) {
			c.events = append(c.events, event{typeID, append([]byte(nil), msg...)})
		})
		if err != nil {
			c.m.t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

// take returns and forgets the events collected so far.
func (c *rawClient) take() []event {
	c.poll()
	e := c.events
	c.events = nil
	return e
}

// expect takes the events and checks their types in order.
func (c *rawClient) expect(types ...int32) []event {
	c.m.t.Helper()
	e := c.take()
	if len(e) != len(types) {
		c.m.t.Fatalf("events %s, want %s", eventNames(e), typeNames(types))
	}
	for i := range types {
		if e[i].typeID != types[i] {
			c.m.t.Fatalf("events %s, want %s", eventNames(e), typeNames(types))
		}
	}
	return e
}

func (c *rawClient) addPublication(channel string, stream int32, exclusive bool) int64 {
	corr := c.nextID()
	typeID := command.AddPublication
	if exclusive {
		typeID = command.AddExclusivePublication
	}
	c.send(typeID, command.AppendPublicationMessage(c.buf[:0], c.id, corr, stream, channel))
	return corr
}

func (c *rawClient) addSubscription(channel string, stream int32) int64 {
	corr := c.nextID()
	c.send(command.AddSubscription, command.AppendSubscriptionMessage(c.buf[:0], c.id, corr, stream, channel))
	return corr
}

var responseNames = map[int32]string{
	command.OnError: "ON_ERROR", command.OnAvailableImage: "ON_AVAILABLE_IMAGE",
	command.OnPublicationReady: "ON_PUBLICATION_READY", command.OnOperationSuccess: "ON_OPERATION_SUCCESS",
	command.OnUnavailableImage: "ON_UNAVAILABLE_IMAGE", command.OnExclusivePublicationReady: "ON_EXCLUSIVE_PUBLICATION_READY",
	command.OnSubscriptionReady: "ON_SUBSCRIPTION_READY", command.OnCounterReady: "ON_COUNTER_READY",
	command.OnUnavailableCounter: "ON_UNAVAILABLE_COUNTER", command.OnClientTimeout: "ON_CLIENT_TIMEOUT",
	command.OnStaticCounter: "ON_STATIC_COUNTER", command.OnPublicationError: "ON_PUBLICATION_ERROR",
	command.OnNextAvailableSessionID: "ON_NEXT_AVAILABLE_SESSION_ID",
}

func typeNames(types []int32) []string {
	var s []string
	for _, t := range types {
		s = append(s, responseNames[t])
	}
	return s
}

func eventNames(e []event) []string {
	var s []string
	for _, ev := range e {
		name := responseNames[ev.typeID]
		if ev.typeID == command.OnError {
			name += "(" + command.ErrorResponse(ev.msg).Message() + ")"
		}
		s = append(s, name)
	}
	return s
}

type sections = cncSectionsT

type cncSectionsT struct{ ErrorLog []byte }

func cncParse(data []byte) (cncSectionsT, int, error) {
	l, _, err := cnc.Parse(data)
	if err != nil {
		return cncSectionsT{}, 0, err
	}
	return cncSectionsT{ErrorLog: l.Slice(data).ErrorLog}, 0, nil
}
