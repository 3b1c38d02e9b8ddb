package driver

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/internal/command"
	"github.com/goblin-kv/goblin/aeron/internal/counters"
	"github.com/goblin-kv/goblin/aeron/internal/errorlog"
	"github.com/goblin-kv/goblin/internal/testkit"
)

const ipc64k = "aeron:ipc?term-length=64k"

func errorOf(t *testing.T, e event) (code aeron.ErrorCode, corr int64, text string) {
	t.Helper()
	if e.typeID != command.OnError {
		t.Fatalf("got %s, want ON_ERROR", responseNames[e.typeID])
	}
	r := command.ErrorResponse(e.msg)
	return aeron.ErrorCode(r.Code()), r.OffendingCorrelationID(), r.Message()
}

// TestFirstCommandRegistersClient checks the reply order of an add from a
// new client: the heartbeat counter's ON_COUNTER_READY (correlation id =
// client id) comes before the publication's reply, the image after it.
func TestFirstCommandRegistersClient(t *testing.T) {
	m := newManualDriver(t, Options{})
	c := newRawClient(m)
	sub := c.addSubscription(ipc64k, 7)
	e := c.expect(command.OnCounterReady, command.OnSubscriptionReady)
	hb := command.CounterUpdate(e[0].msg)
	if hb.CorrelationID() != c.id {
		t.Fatalf("heartbeat counter announced for %d, client is %d", hb.CorrelationID(), c.id)
	}
	r := m.counters
	if r.TypeID(hb.Value()) != counters.TypeClientHeartbeat || r.RegistrationID(hb.Value()) != c.id ||
		r.OwnerID(hb.Value()) != c.id || r.Label(hb.Value()) != "client-heartbeat: id="+itoa(c.id) {
		t.Fatalf("heartbeat counter %q", r.Label(hb.Value()))
	}
	if s := command.CounterUpdate(e[1].msg); s.CorrelationID() != sub || s.Value() != -1 {
		t.Fatalf("subscription ready %d %d", s.CorrelationID(), s.Value())
	}
	pub := c.addPublication(ipc64k, 7, false)
	e = c.expect(command.OnPublicationReady, command.OnAvailableImage)
	ready := command.PublicationBuffersReady(e[0].msg)
	if ready.CorrelationID() != pub || ready.RegistrationID() != pub || ready.StreamID() != 7 ||
		ready.ChannelStatusIndicatorID() != -1 || !strings.HasSuffix(ready.LogFileName(), "/publications/"+itoa(pub)+".logbuffer") {
		t.Fatalf("publication ready: %+v", ready)
	}
	if l := r.Label(ready.PublicationLimitCounterID()); l != "pub-lmt: "+itoa(pub)+" "+itoa(int64(ready.SessionID()))+" 7 "+ipc64k {
		t.Fatalf("pub-lmt label %q", l)
	}
	img := command.ImageBuffersReady(e[1].msg)
	if img.CorrelationID() != pub || img.SubscriptionRegistrationID() != sub || img.SessionID() != ready.SessionID() ||
		img.SourceIdentity() != "aeron:ipc" || img.LogFileName() != ready.LogFileName() {
		t.Fatalf("image: %+v", img)
	}
	pos := img.SubscriberPositionID()
	if r.TypeID(pos) != counters.TypeSubscriberPosition || r.ReferenceID(pos) != pub || r.RegistrationID(pos) != sub ||
		!strings.HasSuffix(r.Label(pos), " @0") {
		t.Fatalf("sub-pos %q ref %d", r.Label(pos), r.ReferenceID(pos))
	}
	// A second concurrent add shares the publication: same registration
	// id and session, and no second image.
	pub2 := c.addPublication(ipc64k, 7, false)
	e = c.expect(command.OnPublicationReady)
	if r2 := command.PublicationBuffersReady(e[0].msg); r2.CorrelationID() != pub2 || r2.RegistrationID() != pub ||
		r2.SessionID() != ready.SessionID() {
		t.Fatalf("shared add: %+v", r2)
	}
	// An exclusive add never shares.
	c.addPublication(ipc64k, 7, true)
	e = c.expect(command.OnExclusivePublicationReady, command.OnAvailableImage)
	if command.PublicationBuffersReady(e[0].msg).SessionID() == ready.SessionID() {
		t.Fatal("exclusive publication shares the concurrent one's session")
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// TestRefusedCommands checks the error codes and texts the Java driver
// gives, and that each refusal is counted and logged.
func TestRefusedCommands(t *testing.T) {
	m := newManualDriver(t, Options{})
	c := newRawClient(m)
	c.addSubscription(ipc64k, 1)
	c.take()
	pub := c.addPublication(ipc64k+"|mtu=1408", 1, false)
	c.take()
	cases := []struct {
		name    string
		typeID  int32
		msg     func(corr int64) []byte
		code    aeron.ErrorCode
		zeroCor bool
		text    string
	}{
		{"unknown command", 0x77, func(corr int64) []byte { return command.AppendCorrelated(nil, c.id, corr) },
			aeron.ErrorCodeUnknownCommandTypeID, true, "ERROR - command typeId=119"},
		{"truncated add", command.AddPublication, func(corr int64) []byte {
			b := command.AppendPublicationMessage(nil, c.id, corr, 1, "aeron:ipc")
			return b[:len(b)-2]
		}, aeron.ErrorCodeMalformedCommand, true, "ERROR - command=1 too short for channel: length=31"},
		{"unknown publication", command.RemovePublication, func(corr int64) []byte {
			return command.AppendRemovePublication(nil, c.id, corr, 999999, false)
		}, aeron.ErrorCodeUnknownPublication, false, "ERROR - unknown publication: 999999"},
		{"unknown subscription", command.RemoveSubscription, func(corr int64) []byte {
			return command.AppendRemove(nil, c.id, corr, 999998)
		}, aeron.ErrorCodeUnknownSubscription, false, "ERROR - unknown subscription: 999998"},
		{"unknown counter", command.RemoveCounter, func(corr int64) []byte {
			return command.AppendRemove(nil, c.id, corr, 999997)
		}, aeron.ErrorCodeUnknownCounter, false, "ERROR - unknown counter: 999997"},
		{"bad uri", command.AddPublication, func(corr int64) []byte {
			return command.AppendPublicationMessage(nil, c.id, corr, 1, "aeron:ipc?=x")
		}, aeron.ErrorCodeInvalidChannel, false, "ERROR - empty key not allowed in aeron:ipc?=x"},
		{"udp control port 0", command.AddSubscription, func(corr int64) []byte {
			return command.AppendSubscriptionMessage(nil, c.id, corr, 1, "aeron:udp?endpoint=localhost:0|control=localhost:0")
		}, aeron.ErrorCodeGenericError, false, "java.lang.IllegalArgumentException : control has port=0 for subscription: channel=aeron:udp?endpoint=localhost:0|control=localhost:0"},
		{"udp dynamic without control", command.AddPublication, func(corr int64) []byte {
			return command.AppendPublicationMessage(nil, c.id, corr, 1, "aeron:udp?control-mode=dynamic")
		}, aeron.ErrorCodeInvalidChannel, false, "ERROR - java.lang.IllegalArgumentException: explicit control expected with dynamic control mode: aeron:udp?control-mode=dynamic"},
		{"incomplete position", command.AddExclusivePublication, func(corr int64) []byte {
			return command.AppendPublicationMessage(nil, c.id, corr, 1, ipc64k+"|term-id=4")
		}, aeron.ErrorCodeInvalidChannel, false, "ERROR - params must be used as a complete set: init-term-id term-id term-offset channel=" + ipc64k + "|term-id=4"},
		{"mismatch", command.AddPublication, func(corr int64) []byte {
			return command.AppendPublicationMessage(nil, c.id, corr, 1, ipc64k+"|mtu=4096")
		}, aeron.ErrorCodeGenericError, false, "java.lang.IllegalStateException : existing publication has different 'mtu': existing=1408 requested=4096 existingChannel=" + ipc64k + "|mtu=1408 channel=" + ipc64k + "|mtu=4096"},
		{"bad term length", command.AddExclusivePublication, func(corr int64) []byte {
			return command.AppendPublicationMessage(nil, c.id, corr, 1, "aeron:ipc?term-length=100000")
		}, aeron.ErrorCodeGenericError, false, "java.lang.IllegalStateException : Term length not a power of 2: length=100000"},
		{"send destination", command.AddDestination, func(corr int64) []byte {
			return command.AppendDestination(nil, c.id, corr, pub, "aeron:udp?endpoint=localhost:9999")
		}, aeron.ErrorCodeUnknownPublication, false, "ERROR - unknown publication: " + itoa(pub)},
		{"receive destination", command.AddRcvDestination, func(corr int64) []byte {
			return command.AppendDestination(nil, c.id, corr, 5, "aeron:ipc")
		}, aeron.ErrorCodeUnknownSubscription, false, "ERROR - unknown MDS subscription: 5"},
		{"reject unknown image", command.RejectImage, func(corr int64) []byte {
			return command.AppendRejectImage(nil, c.id, corr, 123456, 0, "bad")
		}, aeron.ErrorCodeGenericError, false, "ERROR - Unable to resolve image for correlationId=123456"},
		{"reject reason too long", command.RejectImage, func(corr int64) []byte {
			return command.AppendRejectImage(nil, c.id, corr, pub, 0, strings.Repeat("x", 1024))
		}, aeron.ErrorCodeGenericError, false, "ERROR - Invalidation reason must be 1023 bytes or less"},
	}
	before := m.counters.Value(sysErrors)
	for _, tc := range cases {
		corr := c.nextID()
		c.send(tc.typeID, tc.msg(corr))
		e := c.take()
		if len(e) != 1 {
			t.Fatalf("%s: events %s", tc.name, eventNames(e))
		}
		code, gotCorr, text := errorOf(t, e[0])
		wantCorr := corr
		if tc.zeroCor {
			wantCorr = 0
		}
		if code != tc.code || gotCorr != wantCorr || (tc.text != "" && text != tc.text) {
			t.Errorf("%s: code %v corr %d text %q; want %v %d %q", tc.name, code, gotCorr, text, tc.code, wantCorr, tc.text)
		}
	}
	if n := m.counters.Value(sysErrors) - before; n != int64(len(cases)) {
		t.Fatalf("errors counter rose by %d, want %d", n, len(cases))
	}
	var logged []errorlog.Record
	l, _ := m.cncSections()
	errorlog.Read(l.ErrorLog, 0, func(r errorlog.Record) { logged = append(logged, r) })
	if len(logged) != len(cases) {
		t.Fatalf("%d distinct errors logged, want %d", len(logged), len(cases))
	}
	// The same refusal again counts as a second observation, not a new
	// record.
	c.send(command.RemoveSubscription, command.AppendRemove(nil, c.id, c.nextID(), 999998))
	logged = logged[:0]
	errorlog.Read(l.ErrorLog, 0, func(r errorlog.Record) { logged = append(logged, r) })
	for _, r := range logged {
		if strings.Contains(r.Text, "unknown subscription: 999998") && r.ObservationCount != 2 {
			t.Fatalf("repeated error counted %d times", r.ObservationCount)
		}
	}
	if len(logged) != len(cases) {
		t.Fatalf("repeated error made a new record")
	}
}

// TestCountersCommands covers ADD_COUNTER, ADD_STATIC_COUNTER and
// REMOVE_COUNTER.
func TestCountersCommands(t *testing.T) {
	m := newManualDriver(t, Options{})
	c := newRawClient(m)
	corr := c.nextID()
	c.send(command.AddCounter, command.AppendCounterMessage(nil, c.id, corr, 1001, []byte{1, 2, 3}, "my counter"))
	e := c.expect(command.OnCounterReady, command.OnCounterReady)
	id := command.CounterUpdate(e[1].msg).Value()
	if command.CounterUpdate(e[1].msg).CorrelationID() != corr || m.counters.Label(id) != "my counter" ||
		m.counters.OwnerID(id) != c.id || m.counters.RegistrationID(id) != corr || m.counters.Key(id)[2] != 3 {
		t.Fatalf("counter %d: %q", id, m.counters.Label(id))
	}
	s1, s2 := c.nextID(), c.nextID()
	c.send(command.AddStaticCounter, command.AppendStaticCounterMessage(nil, c.id, s1, 55, 1002, nil, "static"))
	c.send(command.AddStaticCounter, command.AppendStaticCounterMessage(nil, c.id, s2, 55, 1002, nil, "static"))
	e = c.expect(command.OnStaticCounter, command.OnStaticCounter)
	sid := command.CounterUpdate(e[0].msg).Value()
	if command.CounterUpdate(e[1].msg).Value() != sid || m.counters.OwnerID(sid) != -1 || m.counters.RegistrationID(sid) != 55 {
		t.Fatal("static counters not shared")
	}
	// A static counter may not take over a client's counter.
	c.send(command.AddStaticCounter, command.AppendStaticCounterMessage(nil, c.id, c.nextID(), corr, 1001, nil, "x"))
	if code, _, text := errorOf(t, c.take()[0]); code != aeron.ErrorCodeGenericError || !strings.Contains(text, "non-static counter exists") {
		t.Fatalf("%v %q", code, text)
	}
	rm := c.nextID()
	c.send(command.RemoveCounter, command.AppendRemove(nil, c.id, rm, corr))
	e = c.expect(command.OnOperationSuccess, command.OnUnavailableCounter)
	if u := command.CounterUpdate(e[1].msg); u.CorrelationID() != corr || u.Value() != id {
		t.Fatal("unavailable counter")
	}
	if m.counters.State(id) != counters.StateReclaimed {
		t.Fatal("removed counter still allocated")
	}
}

// TestClientTimeout: a client that stops heartbeating loses its
// resources within the liveness timeout, and other subscribers see its
// image go; a client that closed by command times out silently.
func TestClientTimeout(t *testing.T) {
	m := newManualDriver(t, Options{TimerInterval: 20 * time.Millisecond, ClientLivenessTimeout: 200 * time.Millisecond,
		PublicationUnblockTimeout: 400 * time.Millisecond})
	dead, alive := newRawClient(m), newRawClient(m)
	sub := alive.addSubscription(ipc64k, 3)
	pub := dead.addPublication(ipc64k, 3, true)
	dead.send(command.AddCounter, command.AppendCounterMessage(nil, dead.id, dead.nextID(), 1001, nil, "dead's"))
	events := alive.take()
	var hbAlive int32 = -1
	for _, e := range events {
		if e.typeID == command.OnCounterReady && command.CounterUpdate(e.msg).CorrelationID() == alive.id {
			hbAlive = command.CounterUpdate(e.msg).Value()
		}
	}
	var logFile string
	for _, e := range events {
		if e.typeID == command.OnExclusivePublicationReady {
			logFile = command.PublicationBuffersReady(e.msg).LogFileName()
		}
	}
	if hbAlive < 0 || logFile == "" {
		t.Fatalf("events %s", eventNames(events))
	}
	// Only the live client stamps its heartbeat counter, as 1.51 clients do.
	for range 40 {
		m.setPosition(m.positionOf(hbAlive), m.epochMs)
		m.advance(10 * time.Millisecond)
	}
	events = alive.take()
	var timeouts, gone, counterGone int
	for _, e := range events {
		switch e.typeID {
		case command.OnClientTimeout:
			if command.ClientTimeout(e.msg).ClientID() != dead.id {
				t.Fatal("the live client timed out")
			}
			timeouts++
		case command.OnUnavailableImage:
			if m := command.ImageMessage(e.msg); m.CorrelationID() == pub && m.SubscriptionRegistrationID() == sub {
				gone++
			}
		case command.OnUnavailableCounter:
			counterGone++
		}
	}
	if timeouts != 1 || gone != 1 || counterGone != 2 {
		t.Fatalf("events after the timeout: %s", eventNames(events))
	}
	if m.counters.Value(sysClientTimeouts) != 1 || len(m.publicationLinks) != 0 || len(m.counterLinks) != 0 || len(m.clients) != 1 {
		t.Fatalf("dead client's resources remain: %d links, %d counters, %d clients", len(m.publicationLinks), len(m.counterLinks), len(m.clients))
	}
	m.advance(100 * time.Millisecond)
	// The releaser deletes it, off the duty cycle.
	testkit.Eventually(t, 60*time.Second, "the dead publication's log deleted", func() (bool, string) {
		_, err := os.Stat(logFile)
		return os.IsNotExist(err), ""
	})
	// CLIENT_CLOSE: no ON_CLIENT_TIMEOUT, but the heartbeat counter goes.
	alive.send(command.ClientClose, command.AppendCorrelated(nil, alive.id, -1))
	m.advance(50 * time.Millisecond)
	e := alive.take()
	if len(e) != 1 || e[0].typeID != command.OnUnavailableCounter || command.CounterUpdate(e[0].msg).CorrelationID() != alive.id {
		t.Fatalf("after CLIENT_CLOSE: %s", eventNames(e))
	}
	if m.counters.Value(sysClientTimeouts) != 1 {
		t.Fatal("a closed client was counted as timed out")
	}
}

// TestKeepaliveKeepsClient: CLIENT_KEEPALIVE refreshes a known client.
func TestKeepaliveKeepsClient(t *testing.T) {
	m := newManualDriver(t, Options{TimerInterval: 20 * time.Millisecond, ClientLivenessTimeout: 200 * time.Millisecond,
		PublicationUnblockTimeout: 400 * time.Millisecond})
	c := newRawClient(m)
	c.addSubscription(ipc64k, 3)
	for range 50 {
		c.send(command.ClientKeepalive, command.AppendCorrelated(nil, c.id, 0))
		m.advance(10 * time.Millisecond)
	}
	for _, e := range c.take() {
		if e.typeID == command.OnClientTimeout {
			t.Fatal("a client sending keepalives timed out")
		}
	}
	if len(m.subscriptionLinks) != 1 {
		t.Fatal("subscription gone")
	}
}

func (d *Driver) cncSections() (sections, error) {
	l, _, err := cncParse(d.cncData)
	return l, err
}
