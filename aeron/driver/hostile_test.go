package driver

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron/internal/wire"
)

// hostileReceiver is a manual driver with a subscription on a loopback
// UDP endpoint, and a socket of the test's that plays a stranger on the
// network: it sends the endpoint whatever datagrams it likes.
type hostileReceiver struct {
	*manualDriver
	ep     *receiveEndpoint
	stream int32
	conn   *net.UDPConn
	to     *net.UDPAddr
}

func newHostileReceiver(t testing.TB, o Options) *hostileReceiver {
	t.Helper()
	m := newManualDriver(t, o)
	port := freePort(t)
	const stream = 10
	newRawClient(m).addSubscription(fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", port), stream)
	if len(m.rcvEndpoints) != 1 {
		t.Fatalf("%d receive endpoints after the subscription, want 1", len(m.rcvEndpoints))
	}
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &hostileReceiver{manualDriver: m, ep: m.rcvEndpoints[0], stream: stream, conn: conn,
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
	h := newHostileReceiver(t, Options{})
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
	h := newHostileReceiver(t, Options{})
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
