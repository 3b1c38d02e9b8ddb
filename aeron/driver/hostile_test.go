package driver

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron/internal/command"
	"github.com/goblin-kv/goblin/aeron/internal/errorlog"
	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/aeron/internal/wire"
	"github.com/goblin-kv/goblin/internal/shm"
)

// hostileReceiver is a manual driver with a subscription on a loopback
// UDP endpoint, and a socket of the test's that plays a stranger on the
// network: it sends the endpoint whatever datagrams it likes.
type hostileReceiver struct {
	*manualDriver
	client *rawClient
	ep     *receiveEndpoint
	stream int32
	conn   *net.UDPConn
	to     *net.UDPAddr
}

// newHostileReceiver starts the driver with udpOptions and 100 ms timer
// ticks, changed by set.
func newHostileReceiver(t testing.TB, set func(*Options)) *hostileReceiver {
	t.Helper()
	return newHostileReceiverOn(t, set, "")
}

// newHostileReceiverOn is newHostileReceiver with params added to the
// subscription's channel ("|session-id=5").
func newHostileReceiverOn(t testing.TB, set func(*Options), params string) *hostileReceiver {
	t.Helper()
	o := udpOptions(t)
	o.TimerInterval = 100 * time.Millisecond
	if set != nil {
		set(&o)
	}
	m := newManualDriver(t, o)
	port := freePort(t)
	const stream = 10
	client := newRawClient(m)
	client.addSubscription(fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d%s", port, params), stream)
	if len(m.receiver.endpoints) != 1 {
		t.Fatalf("%d receive endpoints after the subscription, want 1", len(m.receiver.endpoints))
	}
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &hostileReceiver{manualDriver: m, client: client, ep: m.receiver.endpoints[0], stream: stream, conn: conn,
		to: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}}
}

// send sends one datagram to the endpoint and runs the driver until it
// has read it (loopback delivers before WriteTo returns).
func (h *hostileReceiver) send(p []byte) {
	h.t.Helper()
	before := h.counters.Value(sysBytesReceived)
	if _, err := h.conn.WriteToUDP(p, h.to); err != nil {
		h.t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for h.counters.Value(sysBytesReceived) == before {
		if time.Now().After(deadline) {
			h.t.Fatalf("the driver never read the %d-byte datagram sent to %v", len(p), h.to)
		}
		h.cycle(1)
	}
	h.cycle(2)
}

// advance moves the clocks by dt as manualDriver.advance does, the client
// sending a keepalive every half second so it stays.
func (h *hostileReceiver) advance(dt time.Duration) {
	for dt > 0 {
		step := min(dt, 500*time.Millisecond)
		if err := h.ring.Write(command.ClientKeepalive, command.AppendCorrelated(nil, h.client.id, 0)); err != nil {
			h.t.Fatal(err)
		}
		h.manualDriver.advance(step)
		h.client.take()
		dt -= step
	}
}

// setupFrame is a SETUP for the receiver's stream.
func (h *hostileReceiver) setupFrame(f wire.SetupFields) []byte {
	b := make([]byte, wire.SetupLength)
	if f.StreamID == 0 {
		f.StreamID = h.stream
	}
	wire.PutSetup(b, &f)
	return b
}

// dataFrame is a DATA datagram of n bytes (header included) whose header
// says frameLength, at termID/termOffset of the receiver's stream.
func (h *hostileReceiver) dataFrame(session, termID, termOffset, frameLength int32, flags byte, n int) []byte {
	b := make([]byte, n)
	wire.PutHeartbeat(b, flags, session, h.stream, termID, termOffset)
	b[wire.FlagsOffset] = flags
	putFrameLength(b, frameLength)
	return b
}

func putFrameLength(b []byte, n int32) {
	b[0], b[1], b[2], b[3] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24)
}

// TestDataOutsideTheTermIsDropped: a DATA frame whose term id lies before
// the image's initial term and whose term offset lies past the term (its
// position, computed naively, lands inside the window) used to be copied
// at its term offset: slice bounds out of range in insertFrames, on the
// loop's goroutine. It is dropped and counted as an invalid packet, and
// the image goes on taking valid data.
func TestDataOutsideTheTermIsDropped(t *testing.T) {
	h := newHostileReceiver(t, nil)
	const session = 77
	h.send(h.setupFrame(wire.SetupFields{SessionID: session, TermLength: 64 << 10, MTU: 1408}))
	if len(h.images) != 1 {
		t.Fatalf("%d images after a valid SETUP, want 1", len(h.images))
	}
	invalid := h.counters.Value(sysInvalidPackets)
	for _, c := range []struct {
		termID, termOffset, frameLength int32
		invalid                         bool // else dropped uncounted: a term before the initial one
	}{
		{-5, 344501, 64, false},        // the crash: (-5 << 16) + 344501 is inside the window
		{-5, 344512, 64, false},        // aligned, still past the term
		{-1 << 31, 0, 64, false},       // term id far behind
		{0, 65536 - 32, 64, true},      // the frame runs off the term's end
		{0, -32, 64, true},             // negative offset
		{0, 64, 1 << 30, true},         // frame longer than the datagram
		{0, 96, 8, true},               // frame shorter than the datagram, and nothing after it
		{0, 128, -64, true},            // negative frame length
		{1<<31 - 1, 65504, 32, true},   // term id far ahead, frame shorter than the datagram
		{0, 3, 64, true},               // unaligned offset
		{0, 160, 64 + (1 << 20), true}, // aligned length far past the term
	} {
		before := h.counters.Value(sysInvalidPackets)
		h.send(h.dataFrame(session, c.termID, c.termOffset, c.frameLength, 0xC0, 64))
		if counted := h.counters.Value(sysInvalidPackets) > before; counted != c.invalid {
			t.Errorf("DATA term id %d offset %d frame length %d: counted invalid %v, want %v",
				c.termID, c.termOffset, c.frameLength, counted, c.invalid)
		}
	}
	if got := h.counters.Value(sysInvalidPackets) - invalid; got != 8 {
		t.Fatalf("invalid packets counted %d, want 8", got)
	}
	for i, term := range h.images[0].log.terms {
		for off, v := range term {
			if v != 0 {
				t.Fatalf("term %d has a non-zero byte at %d after malformed DATA only", i, off)
			}
		}
	}
	if hwm := h.subPosition(h.images[0].hwm); hwm != 0 {
		t.Fatalf("rcv-hwm %d after malformed DATA only, want 0", hwm)
	}
	// A valid frame still goes in.
	h.send(h.dataFrame(session, 0, 0, 64, 0xC0, 64))
	if hwm := h.subPosition(h.images[0].hwm); hwm != 64 {
		t.Fatalf("rcv-hwm %d after one valid 64-byte frame, want 64", hwm)
	}
}

// TestSetupBeforeItsInitialTermIsRefused: a SETUP whose active term id
// lies before its initial term id joins at a negative position; the next
// duty cycle's warmAhead indexed partition −1 (index out of range [-1]).
// The SETUP is refused (an invalid packet): no image, no log.
func TestSetupBeforeItsInitialTermIsRefused(t *testing.T) {
	h := newHostileReceiver(t, nil)
	invalid := h.counters.Value(sysInvalidPackets)
	h.send(h.setupFrame(wire.SetupFields{SessionID: 5, InitialTermID: 1, ActiveTermID: 0, TermLength: 64 << 10, MTU: 1408}))
	h.send(h.setupFrame(wire.SetupFields{SessionID: 6, InitialTermID: 1 << 30, ActiveTermID: -1 << 30, TermLength: 64 << 10, MTU: 1408}))
	if len(h.images) != 0 {
		t.Fatalf("%d images from SETUPs before their initial term, want 0", len(h.images))
	}
	if got := h.counters.Value(sysInvalidPackets) - invalid; got != 2 {
		t.Fatalf("invalid packets counted %d, want 2", got)
	}
}

// imageLogs lists the image log files in the driver's directory.
func (h *hostileReceiver) imageLogs() []string {
	h.t.Helper()
	files, err := filepath.Glob(filepath.Join(h.Dir(), imagesDir, "*.logbuffer"))
	if err != nil {
		h.t.Fatal(err)
	}
	return files
}

// errorLogHas reports whether the driver's error log holds an entry
// containing text.
func (h *hostileReceiver) errorLogHas(text string) bool {
	found := false
	l, _ := h.cncSections()
	errorlog.Read(l.ErrorLog, 0, func(r errorlog.Record) { found = found || strings.Contains(r.Text, text) })
	return found
}

// errorLogText returns the driver's error log's distinct entries, for a
// failure message.
func (h *hostileReceiver) errorLogText() string {
	var texts []string
	l, _ := h.cncSections()
	errorlog.Read(l.ErrorLog, 0, func(r errorlog.Record) { texts = append(texts, r.Text) })
	if len(texts) == 0 {
		return "(empty)"
	}
	return strings.Join(texts, "; ")
}

// TestSetupFloodIsBounded: SETUPs of new sessions for a subscribed stream
// each make an image until the stream's session limit, the images' total
// length or the image term length ceiling says no; past a limit a SETUP
// makes no log and leaves a line in the error log. Images that never get
// data go at the image liveness timeout, their logs with them, and then
// the sessions they made room for are taken again.
func TestSetupFloodIsBounded(t *testing.T) {
	const termLength = 64 << 10
	logLength := int64(logbuffer.ComputeLogLength(termLength, defaultPageSize))
	t.Run("session limit", func(t *testing.T) {
		h := newHostileReceiver(t, func(o *Options) { o.StreamSessionLimit = 3 })
		for session := range int32(20) {
			h.send(h.setupFrame(wire.SetupFields{SessionID: session, TermLength: termLength, MTU: 1408}))
		}
		if n := len(h.imageLogs()); len(h.images) != 3 || n != 3 {
			t.Fatalf("%d images, %d image logs after SETUPs of 20 sessions, want 3 (the session limit)", len(h.images), n)
		}
		if !h.errorLogHas("exceeded session limit, stream-id=10") {
			t.Fatal("no error log entry names the session limit")
		}
		h.checkReclaimed(t)
	})
	t.Run("images length", func(t *testing.T) {
		h := newHostileReceiver(t, func(o *Options) { o.MaxImagesLength = 2*logLength + logLength/2 })
		for session := range int32(20) {
			h.send(h.setupFrame(wire.SetupFields{SessionID: session, TermLength: termLength, MTU: 1408}))
		}
		if n := len(h.imageLogs()); len(h.images) != 2 || n != 2 {
			t.Fatalf("%d images, %d image logs after SETUPs of 20 sessions, want 2 (the images length limit)", len(h.images), n)
		}
		if !h.errorLogHas("aeron.image.buffers.max.length") {
			t.Fatal("no error log entry names aeron.image.buffers.max.length")
		}
		h.checkReclaimed(t)
	})
	t.Run("term length", func(t *testing.T) {
		h := newHostileReceiver(t, func(o *Options) { o.MaxImageTermLength = 128 << 10 })
		for _, n := range []int32{256 << 10, 1 << 30, 128 << 10} {
			h.send(h.setupFrame(wire.SetupFields{SessionID: n, TermLength: n, MTU: 1408}))
		}
		if len(h.images) != 1 || h.images[0].termLength != 128<<10 {
			t.Fatalf("%d images after SETUPs of terms 256 KiB, 1 GiB and 128 KiB, want 1 of 128 KiB", len(h.images))
		}
		if !h.errorLogHas("term length 1073741824 is over aeron.image.term.buffer.max.length=131072") {
			t.Fatal("no error log entry names aeron.image.term.buffer.max.length")
		}
	})
}

// checkReclaimed: with no data, the images go after the image liveness
// timeout and their lingering, their logs are deleted, the images length
// is back to 0, and new sessions get images again.
func (h *hostileReceiver) checkReclaimed(t *testing.T) {
	t.Helper()
	h.advance(defaultImageLiveness + time.Second)
	if len(h.receiver.images) != 0 {
		t.Fatalf("%d images still connected %v after their only SETUP", len(h.receiver.images), defaultImageLiveness+time.Second)
	}
	h.advance(defaultImageLiveness + 2*time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for len(h.imageLogs()) != 0 || len(h.images) != 0 || h.imagesLength != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d images, %d image logs, images length %d left after the liveness timeout and linger, want none",
				len(h.images), len(h.imageLogs()), h.imagesLength)
		}
		h.advance(10 * time.Millisecond)
	}
	h.send(h.setupFrame(wire.SetupFields{SessionID: 1000, TermLength: 64 << 10, MTU: 1408}))
	if len(h.images) != 1 {
		t.Fatalf("%d images after a new session's SETUP once the others went, want 1", len(h.images))
	}
}

// TestImageLogChargedUntilFreed: an image's log counts against
// aeron.image.buffers.max.length until the releaser has deleted it, not
// only until the image's end of life. With the releaser held up, the old
// log still on disk, a new session's SETUP past the budget is refused;
// once the log is gone the same SETUP gets an image. (The budget used to
// be released in closeImage: the directory briefly held both logs.)
func TestImageLogChargedUntilFreed(t *testing.T) {
	const termLength = 64 << 10
	logLength := int64(logbuffer.ComputeLogLength(termLength, defaultPageSize))
	h := newHostileReceiver(t, func(o *Options) { o.MaxImagesLength = logLength + logLength/2 })
	hold := make(chan struct{})
	release := h.releaser.release
	h.releaser.release = func(l *rawLog) error {
		<-hold
		return release(l)
	}
	defer func() {
		select {
		case <-hold:
		default:
			close(hold)
		}
	}()
	h.send(h.setupFrame(wire.SetupFields{SessionID: 1, TermLength: termLength, MTU: 1408}))
	if len(h.images) != 1 {
		t.Fatalf("%d images after the first SETUP, want 1", len(h.images))
	}
	old := h.images[0].log.path
	deadline := time.Now().Add(10 * time.Second)
	for len(h.images) != 0 || len(h.endOfLife) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d images, %d logs not handed to the releaser after the liveness timeout and linger, want none",
				len(h.images), len(h.endOfLife))
		}
		h.advance(100 * time.Millisecond)
	}
	if gone(old) {
		t.Fatalf("%s deleted while the releaser is held up", old)
	}
	h.send(h.setupFrame(wire.SetupFields{SessionID: 2, TermLength: termLength, MTU: 1408}))
	if n := len(h.imageLogs()); len(h.images) != 0 || n != 1 {
		t.Fatalf("%d images, %d image logs after a SETUP while the old log (%d bytes) is not yet freed and the budget is %d; "+
			"want the SETUP refused", len(h.images), n, logLength, logLength+logLength/2)
	}
	close(hold)
	deadline = time.Now().Add(10 * time.Second)
	for !gone(old) || h.imagesLength != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("old log deleted %v, images length %d after the releaser moved; want deleted and 0", gone(old), h.imagesLength)
		}
		h.cycle(1)
	}
	h.send(h.setupFrame(wire.SetupFields{SessionID: 3, TermLength: termLength, MTU: 1408}))
	if len(h.images) != 1 {
		t.Fatalf("%d images after a SETUP once the old log was freed, want 1", len(h.images))
	}
}

// TestDataOfUnknownSessionsIsBounded: DATA of a session with no image asks
// its source for SETUP and remembers it asked; a flood of DATA with a new
// session id each used to grow that list (scanned every duty cycle) and
// the stream's session states without bound. They stop at
// maxPendingSetups and maxSessionStates, and empty again.
func TestDataOfUnknownSessionsIsBounded(t *testing.T) {
	h := newHostileReceiver(t, nil)
	from := h.conn.LocalAddr().(*net.UDPAddr).AddrPort()
	for session := range int32(3 * maxPendingSetups) {
		h.ep.onDataDatagram(&h.receiver, h.dataFrame(session, 0, 0, 64, 0xC0, 64), from)
	}
	if n, states := len(h.receiver.pendingSetups), len(h.ep.streams[h.stream].states); n != maxPendingSetups || states != n {
		t.Fatalf("%d pending setups, %d session states after DATA of %d unknown sessions, want %d",
			n, states, 3*maxPendingSetups, maxPendingSetups)
	}
	h.advance(2 * time.Second)
	if n, states := len(h.receiver.pendingSetups), len(h.ep.streams[h.stream].states); n != 0 || states != 0 {
		t.Fatalf("%d pending setups, %d session states 2 s later, want none", n, states)
	}
}

// TestUnwantedSessionsAreBounded: a stream subscribed for one session
// remembers the other sessions whose DATA came, so as not to look them up
// again; a flood of new session ids used to grow that map without bound.
func TestUnwantedSessionsAreBounded(t *testing.T) {
	h := newHostileReceiverOn(t, nil, "|session-id=5")
	from := h.conn.LocalAddr().(*net.UDPAddr).AddrPort()
	for session := range int32(2 * maxSessionStates) {
		h.ep.onDataDatagram(&h.receiver, h.dataFrame(session+100, 0, 0, 64, 0xC0, 64), from)
	}
	if n := len(h.ep.streams[h.stream].states); n != maxSessionStates {
		t.Fatalf("%d session states after DATA of %d unwanted sessions, want %d", n, 2*maxSessionStates, maxSessionStates)
	}
	h.send(h.setupFrame(wire.SetupFields{SessionID: 5, TermLength: 64 << 10, MTU: 1408}))
	if len(h.images) != 1 {
		t.Fatalf("%d images after the wanted session's SETUP, want 1", len(h.images))
	}
}

// TestPanicInDatagramIsRecovered: should a datagram still panic the
// receiver (here an image whose term length was corrupted past its log,
// so a frame the checks pass is written out of bounds), the panic ends
// that datagram only: it is counted in the errors counter and written to
// the CnC error log with the functions it went through, and the next
// datagram is taken as before.
func TestPanicInDatagramIsRecovered(t *testing.T) {
	h := newHostileReceiver(t, nil)
	h.send(h.setupFrame(wire.SetupFields{SessionID: 1, TermLength: 64 << 10, MTU: 1408}))
	h.send(h.setupFrame(wire.SetupFields{SessionID: 2, TermLength: 64 << 10, MTU: 1408}))
	if len(h.images) != 2 {
		t.Fatalf("%d images, want 2", len(h.images))
	}
	broken := h.images[0]
	broken.termLength, broken.bitsToShift, broken.termMask = 1<<20, 20, 1<<20-1
	broken.lastOverrunLimit = 1 << 19
	errs := h.counters.Value(sysErrors)
	h.send(h.dataFrame(broken.sessionID, 0, 128<<10, 64, 0xC0, 64))
	if got := h.counters.Value(sysErrors) - errs; got != 1 {
		t.Fatalf("errors counter rose by %d, want 1", got)
	}
	if !h.errorLogHas("receiver dropped a datagram of frame type 0x1 that panicked: runtime error") ||
		!h.errorLogHas("insertFrames") {
		t.Fatal("the error log has no entry for the recovered panic naming insertFrames")
	}
	h.send(h.dataFrame(h.images[1].sessionID, 0, 0, 64, 0xC0, 64))
	if hwm := h.subPosition(h.images[1].hwm); hwm != 64 {
		t.Fatalf("the other image's rcv-hwm %d after a frame, want 64", hwm)
	}
}

// BenchmarkRefusedSetup is the cost of a SETUP flood past the session
// limit: each SETUP of a new session is checked, refused and recorded
// (once in the distinct error log, then counted there).
func BenchmarkRefusedSetup(b *testing.B) {
	h := newHostileReceiver(b, func(o *Options) { o.StreamSessionLimit = 1 })
	from := h.conn.LocalAddr().(*net.UDPAddr).AddrPort()
	h.ep.onDataDatagram(&h.receiver, h.setupFrame(wire.SetupFields{SessionID: -1, TermLength: 64 << 10, MTU: 1408}), from)
	p := h.setupFrame(wire.SetupFields{TermLength: 64 << 10, MTU: 1408})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		shm.PutInt32(p, wire.SetupSessionIDOffset, int32(i))
		h.ep.onDataDatagram(&h.receiver, p, from)
	}
	if len(h.images) != 1 {
		b.Fatalf("%d images, want 1", len(h.images))
	}
}

// BenchmarkInvalidData is the cost of a DATA flood the frame checks
// refuse: frames off the term of an image.
func BenchmarkInvalidData(b *testing.B) {
	h := newHostileReceiver(b, nil)
	from := h.conn.LocalAddr().(*net.UDPAddr).AddrPort()
	h.ep.onDataDatagram(&h.receiver, h.setupFrame(wire.SetupFields{SessionID: 1, TermLength: 64 << 10, MTU: 1408}), from)
	p := h.dataFrame(1, 0, 65536-32, 1408, 0xC0, 1408)
	b.ReportAllocs()
	for b.Loop() {
		h.ep.onDataDatagram(&h.receiver, p, from)
	}
}

// TestStreamSurvivesFlood: a stream between two drivers over loopback
// carries 900 messages while a stranger floods the receiving endpoint
// with Aeron-shaped datagrams (SETUPs with every field out of range, and
// valid ones of new sessions; DATA of other sessions with every field out
// of range; DATA of the stream's own session that does not fit its term;
// random bytes): every message arrives byte for byte, the strangers'
// images stay within the limits, the invalid packets are counted, and no
// datagram panicked the receiver.
func TestStreamSurvivesFlood(t *testing.T) {
	o := Options{TimerInterval: 10 * time.Millisecond}
	pub := newManualDriver(t, o)
	so := udpOptions(t)
	so.TimerInterval = 10 * time.Millisecond
	so.StreamSessionLimit = 6
	so.MaxImagesLength = 4 * int64(logbuffer.ComputeLogLength(64<<10, defaultPageSize))
	u := newUDPPairOf(t, 64<<10, pub, newManualDriver(t, so))
	legit := u.sub.images[0]
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	to := net.UDPAddrFromAddrPort(u.sub.receiver.endpoints[0].ch.remoteData)
	rng := rand.New(rand.NewPCG(25, 25))
	pick := func(v ...int32) int32 { return v[rng.IntN(len(v))] }
	odd := func() int32 { return pick(0, 1, -1, 3, 1000, 65504, 65536, 1<<30, 1<<31-1, -1<<31, rng.Int32()) }
	hostile := func() []byte {
		switch rng.IntN(5) {
		case 0: // SETUP, fields out of range
			b := make([]byte, wire.SetupLength)
			wire.PutSetup(b, &wire.SetupFields{SessionID: rng.Int32(), StreamID: 7, InitialTermID: odd(),
				ActiveTermID: odd(), TermOffset: odd(), TermLength: odd(), MTU: odd(), TTL: odd()})
			return b
		case 1: // SETUP of a new session, valid
			b := make([]byte, wire.SetupLength)
			wire.PutSetup(b, &wire.SetupFields{SessionID: rng.Int32(), StreamID: 7,
				TermLength: pick(64<<10, 128<<10, 1<<30), MTU: 1408})
			return b
		case 2: // DATA of another session
			b := make([]byte, shm.Align(32+rng.IntN(1400), int(pick(1, 32))))
			wire.PutHeartbeat(b, byte(rng.IntN(256)), rng.Int32(), 7, odd(), odd())
			shm.PutInt32(b, 0, odd())
			return b
		case 3: // DATA of the stream's own session that does not fit
			b := make([]byte, 64)
			wire.PutHeartbeat(b, 0xC0, legit.sessionID, 7, legit.initialTermID+pick(-5, -1, 0), pick(-32, 3, 65504, 344501))
			shm.PutInt32(b, 0, pick(64, 1<<30, -64))
			return b
		}
		b := make([]byte, 1+rng.IntN(200))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	invalid := u.sub.counters.Value(sysInvalidPackets)
	const messages = 900
	sent, flood := 0, 0
	deadline := time.Now().Add(60 * time.Second)
	for u.sub.subPosition(legit.rebuild) < messages*64 {
		if time.Now().After(deadline) {
			t.Fatalf("rcv-pos %d after 60 s, want %d: the stream stalled under the flood",
				u.sub.subPosition(legit.rebuild), messages*64)
		}
		for range 8 {
			if sent == messages {
				break
			}
			binary.LittleEndian.PutUint64(u.msg, uint64(sent)*0x9E3779B97F4A7C15)
			if !u.appendFrame() {
				break
			}
			sent++
		}
		for range 20 {
			if _, err := conn.WriteToUDP(hostile(), to); err != nil {
				t.Fatal(err)
			}
			flood++
		}
		u.step(int64(50 * time.Microsecond))
		hwm := u.sub.subPosition(legit.rebuild)
		for _, s := range legit.subs {
			u.sub.setPosition(s, hwm)
		}
		if u.sub.imagesLength > so.MaxImagesLength {
			t.Fatalf("images of %d bytes, past the limit %d", u.sub.imagesLength, so.MaxImagesLength)
		}
	}
	want, got := u.p.log.terms[0][:messages*64], legit.log.terms[0][:messages*64]
	if !bytes.Equal(want, got) {
		t.Fatal("the image's term differs from the publication's: the flood corrupted the stream")
	}
	if n := u.sub.counters.Value(sysInvalidPackets) - invalid; n < messages {
		t.Fatalf("%d invalid packets counted under the flood, want many more", n)
	}
	l, _ := u.sub.cncSections()
	errorlog.Read(l.ErrorLog, 0, func(r errorlog.Record) {
		if strings.Contains(r.Text, "panicked") {
			t.Fatalf("a datagram panicked the receiver: %s", r.Text)
		}
	})
	t.Logf("%d messages under a flood of %d datagrams: %d invalid packets counted, %d images",
		messages, flood, u.sub.counters.Value(sysInvalidPackets)-invalid, len(u.sub.images))
}

// TestFrameShorterThanItsHeaderIsRefused: a DATA or PAD frame whose
// length is 1 to 31 bytes passed the chain walk (which stopped only on a
// length <= 0) and was inserted; a subscriber never sees such a frame
// committed and the image stalls behind it. It is refused and counted as
// an invalid packet; a heartbeat (length 0, a lone header) still counts.
func TestFrameShorterThanItsHeaderIsRefused(t *testing.T) {
	h := newHostileReceiver(t, nil)
	const session = 78
	h.send(h.setupFrame(wire.SetupFields{SessionID: session, TermLength: 64 << 10, MTU: 1408}))
	if len(h.images) != 1 {
		t.Fatalf("%d images after a valid SETUP, want 1", len(h.images))
	}
	invalid := h.counters.Value(sysInvalidPackets)
	short := h.dataFrame(session, 0, 0, 16, 0xC0, 32)
	h.send(short)
	pad := h.dataFrame(session, 0, 0, 31, 0xC0, 32)
	pad[wire.TypeOffset], pad[wire.TypeOffset+1] = wire.TypePad, 0
	h.send(pad)
	// A short frame before a valid one.
	two := append(h.dataFrame(session, 0, 0, 1, 0xC0, 32), h.dataFrame(session, 0, 32, 64, 0xC0, 64)...)
	h.send(two)
	if got := h.counters.Value(sysInvalidPackets) - invalid; got != 3 {
		t.Fatalf("invalid packets counted %d after 3 datagrams with a frame shorter than its header, want 3", got)
	}
	if v := h.images[0].log.terms[0][0]; v != 0 {
		t.Fatalf("term 0 starts with %d after frames shorter than their header only, want 0", v)
	}
	if hwm := h.subPosition(h.images[0].hwm); hwm != 0 {
		t.Fatalf("rcv-hwm %d after frames shorter than their header only, want 0", hwm)
	}
	heartbeats := h.counters.Value(sysHeartbeatsReceived)
	h.send(h.dataFrame(session, 0, 0, 0, 0xC0, 32))
	if h.counters.Value(sysHeartbeatsReceived) != heartbeats+1 {
		t.Fatal("a heartbeat (frame length 0, a lone header) was not counted as one")
	}
}

// TestClosingPadAtTheWindowEdgeIsTaken: the sender counts a closing PAD
// as its 32-byte header against its limit (scanForAvailability, as Java's
// TermScanner), so with a 64 KiB term, whose window is half a term, it
// sends a PAD whose header fits under the last status message's position
// plus the window though the padding runs past it. The receiver refused
// it as a flow-control overrun (it checked the padded length): a gap at
// the term's end, a NAK and a retransmit. The overrun check uses the
// datagram's length; rcv-hwm still moves to the term's end.
func TestClosingPadAtTheWindowEdgeIsTaken(t *testing.T) {
	h := newHostileReceiver(t, nil)
	const session, termLength = 79, 64 << 10
	const join = termLength/2 - 512 // the image joins, and its status messages sit, here
	h.send(h.setupFrame(wire.SetupFields{SessionID: session, TermLength: termLength, MTU: 1408, TermOffset: join}))
	if len(h.images) != 1 {
		t.Fatalf("%d images after a valid SETUP, want 1", len(h.images))
	}
	img := h.images[0]
	if img.lastSMPosition != join || img.lastOverrunLimit != join+termLength/2 {
		t.Fatalf("image at SM position %d, overrun limit %d; want %d, %d",
			img.lastSMPosition, img.lastOverrunLimit, join, join+termLength/2)
	}
	const padAt = termLength - 1024 // header ends at padAt+32 <= join+window; the padding past it
	overruns := h.counters.Value(sysFlowControlOverRuns)
	pad := h.dataFrame(session, 0, padAt, 1024, 0xC0, 32)
	pad[wire.TypeOffset], pad[wire.TypeOffset+1] = wire.TypePad, 0
	h.send(pad)
	if n := h.counters.Value(sysFlowControlOverRuns) - overruns; n != 0 {
		t.Fatalf("a closing PAD at %d (header within the window ending at %d) counted %d flow-control overruns, want 0",
			padAt, join+termLength/2, n)
	}
	if got := shm.GetInt32(img.log.terms[0], padAt); got != 1024 {
		t.Fatalf("frame length %d at the closing PAD's offset %d, want 1024", got, padAt)
	}
	if hwm := h.subPosition(img.hwm); hwm != termLength {
		t.Fatalf("rcv-hwm %d after the closing PAD, want the term's end %d", hwm, termLength)
	}
	// A DATA frame whose bytes run past the window is still refused.
	h.send(h.dataFrame(session, 0, padAt, 1024, 0xC0, 1024))
	if n := h.counters.Value(sysFlowControlOverRuns) - overruns; n != 1 {
		t.Fatalf("a DATA frame ending past the window counted %d flow-control overruns, want 1", n)
	}
}
