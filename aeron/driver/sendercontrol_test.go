package driver

import (
	"math"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/aeron/internal/wire"
	"github.com/goblin-kv/goblin/internal/shm"
)

// senderUnderTest is a manual driver with two network publications whose
// control sockets anyone on the network can write to: a unicast
// publication and a response publication (control-mode=response), both
// sending only to a loopback socket of the test. Their terms are full of
// committed frames, so status messages make them send and NAKs resend.
type senderUnderTest struct {
	m    *manualDriver
	pubs [2]*networkPublication
	from netip.AddrPort // the sink: every SM "comes from" it
	buf  []byte
}

func newSenderUnderTest(t testing.TB) *senderUnderTest {
	t.Helper()
	sink, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sink.Close() })
	from := sink.LocalAddr().(*net.UDPAddr).AddrPort()
	o := udpOptions(t)
	// The fuzzer moves the clock a millisecond or more per input.
	o.ClientLivenessTimeout, o.PublicationUnblockTimeout = 1000*time.Hour, 2000*time.Hour
	m := newManualDriver(t, o)
	c := newRawClient(m)
	c.addPublication("aeron:udp?endpoint="+from.String(), 1001, false)
	c.addPublication("aeron:udp?control-mode=response|control=127.0.0.1:0|response-correlation-id=prototype", 1002, false)
	if ev := c.take(); len(m.netPublications) != 2 {
		t.Fatalf("%d network publications, want 2 (unicast and response); events %s", len(m.netPublications), eventNames(ev))
	}
	s := &senderUnderTest{m: m, from: from}
	copy(s.pubs[:], m.netPublications)
	for _, p := range s.pubs {
		fillTerms(p)
	}
	return s
}

// fillTerms writes committed 1 KiB DATA frames over every term of p, as
// a publisher would have.
func fillTerms(p *networkPublication) {
	const frame = 1024
	for i, term := range p.log.terms {
		for off := 0; off+frame <= len(term); off += frame {
			h := term[off:]
			shm.PutInt32(h, logbuffer.FrameLengthOffset, frame)
			h[logbuffer.FrameVersionOffset] = wire.CurrentVersion
			h[logbuffer.FrameFlagsOffset] = logbuffer.FlagsUnfragmented
			shm.PutUint16(h, logbuffer.FrameTypeOffset, wire.TypeData)
			shm.PutInt32(h, logbuffer.FrameTermOffsetOffset, int32(off))
			shm.PutInt32(h, logbuffer.FrameSessionIDOffset, p.sessionID)
			shm.PutInt32(h, logbuffer.FrameStreamIDOffset, p.streamID)
			shm.PutInt32(h, logbuffer.FrameTermIDOffset, p.initialTermID+int32(i))
		}
	}
}

// The mode bits of a fuzz input.
const (
	ctlResponsePub  = 1 << iota // to the response publication (else the unicast one)
	ctlOwnSession               // bytes 8..16 become the publication's session and stream ids
	ctlRelativeTerm             // the int32 at 16 (NAK term id, SM consumption term id) is relative to the initial term id
	ctlSlowClock                // the clock moves 100 ms (else 1 ms)
	ctlAtSender                 // the term id and offset at 16 and 20 become the sender's position plus the int32 at 20
)

// deliver hands one datagram to the control entry point, as the control
// socket would, runs a duty cycle and checks what no datagram may break.
func (s *senderUnderTest) deliver(t testing.TB, p []byte, mode byte) {
	t.Helper()
	pub := s.pubs[mode&ctlResponsePub]
	b := append(s.buf[:0], p...)
	if mode&ctlOwnSession != 0 && len(b) >= 16 {
		shm.PutInt32(b, 8, pub.sessionID)
		shm.PutInt32(b, 12, pub.streamID)
	}
	if mode&ctlRelativeTerm != 0 && len(b) >= 20 {
		shm.PutInt32(b, 16, shm.GetInt32(b, 16)+pub.initialTermID)
	}
	if mode&ctlAtSender != 0 && len(b) >= 24 {
		pos := pub.senderPosition() + int64(shm.GetInt32(b, 20))
		shm.PutInt32(b, 16, logbuffer.ComputeTermIDFromPosition(pos, pub.bitsToShift, pub.initialTermID))
		shm.PutInt32(b, 20, int32(pos&int64(pub.termLength-1)))
	}
	s.buf = b
	step := int64(time.Millisecond)
	if mode&ctlSlowClock != 0 {
		step = int64(100 * time.Millisecond)
	}
	s.m.nowNs += step
	s.m.epochMs += step / 1e6
	pub.ep.onControlDatagram(&s.m.sender, b, s.from)
	s.m.DoWork(s.m.nowNs)
	for _, p := range s.pubs {
		pos, lmt := p.senderPosition(), s.m.subPosition(p.sndLmt)
		// A status message is believed within half a term of the sender's
		// position and its window is at most a term.
		if lmt-pos > int64(p.termLength+p.termLength/2) {
			t.Fatalf("stream %d: snd-lmt %d is %d ahead of snd-pos %d, more than a term and a half", p.streamID, lmt, lmt-pos, pos)
		}
		if p.isResponse && p.responseAddr.IsValid() && p.responseAddr != s.from {
			t.Fatalf("the response publication sends to %v, not where its SMs come from", p.responseAddr)
		}
	}
}

func (s *senderUnderTest) counter(id int32) int64 { return s.m.subPosition(s.m.positionOf(id)) }

func (s *senderUnderTest) invalid() int64 { return s.counter(sysInvalidPackets) }

// Well-formed control frames, for seeds and for the test below.
func smFrame(flags byte, termID, offset, window int32, tag bool) []byte {
	b := make([]byte, wire.SMLengthWithGroupTag)
	n := wire.PutSM(b, &wire.SMFields{Flags: flags, TermID: termID, TermOffset: offset, Window: window,
		ReceiverID: 77, GroupTag: 5, HasGroupTag: tag})
	return b[:n]
}

func nakFrame(termID, offset, length int32) []byte {
	b := make([]byte, wire.NakLength)
	wire.PutNak(b, 0, 0, termID, offset, length)
	return b
}

func errFrame(msg string) []byte { return wire.AppendErr(nil, 0, 0, 77, 0, false, 1, msg) }

// longErrFrame is an ERR frame whose message is n bytes, more than any
// sender writes.
func longErrFrame(n int) []byte {
	b := append(errFrame(""), make([]byte, n)...)
	shm.PutInt32(b, 0, int32(len(b)))
	shm.PutInt32(b, wire.ErrMessageLengthOffset, int32(n))
	return b
}

func rttmFrame(flags byte) []byte {
	b := make([]byte, wire.RTTMLength)
	wire.PutRTTM(b, flags, 0, 0, 123, 0, 77)
	return b
}

func rspSetupFrame() []byte {
	b := make([]byte, wire.RspSetupLength)
	wire.PutRspSetup(b, 0, 0, 99)
	return b
}

func withInt32(b []byte, off int, v int32) []byte {
	b = append([]byte(nil), b...)
	shm.PutInt32(b, off, v)
	return b
}

// FuzzSenderControl feeds datagrams to the control entry point of a real
// driver's unicast and response publications: nothing may panic, the
// sender's limit stays within a term and a half of its position, and a
// response publication only ever sends where its status messages came
// from. The mode byte aims a frame at a publication (its ids, its term).
func FuzzSenderControl(f *testing.F) {
	own := byte(ctlOwnSession | ctlRelativeTerm)
	for _, seed := range []struct {
		p    []byte
		mode byte
	}{
		{smFrame(wire.SMFlagSendSetup, 0, 0, 0, false), own},
		{smFrame(wire.SMFlagSendSetup, 0, 0, 0, false), own | ctlResponsePub},
		{smFrame(0, 0, 0, 32<<10, false), own},
		{smFrame(0, 0, 0, 32<<10, true), own | ctlResponsePub},
		{smFrame(wire.SMFlagEndOfStream, 0, 4096, 32<<10, false), own},
		{smFrame(0, 0, 0, -1, false), own},
		{smFrame(0, 0, 0, math.MaxInt32, false), own},
		{smFrame(0, 0, 0, math.MaxInt32, false), own | ctlAtSender},
		{smFrame(0, 0, 0, 96<<10, false), own | ctlAtSender | ctlResponsePub},
		{nakFrame(0, -1024, 1024), own | ctlAtSender},
		{nakFrame(0, -1000, 1024), own | ctlAtSender},
		{withInt32(smFrame(0, 0, 0, 1024, false), 0, 1000), own},
		{nakFrame(0, 0, 4096), own},
		{nakFrame(0, 1024, 1<<20), own | ctlResponsePub},
		{nakFrame(0, 33, 100), own},
		{nakFrame(1, 0, 100), own},
		{nakFrame(math.MaxInt32, 0, 100), own},
		{nakFrame(0, -32, 100), own},
		{errFrame("no thanks"), own},
		{withInt32(errFrame("x"), wire.ErrMessageLengthOffset, -1), own},
		{withInt32(errFrame("x"), wire.ErrMessageLengthOffset, math.MaxInt32), own},
		{rttmFrame(wire.RTTMFlagReply), own},
		{rttmFrame(wire.RTTMFlagReply)[:20], own},
		{rspSetupFrame(), own | ctlResponsePub},
		{withInt32(rspSetupFrame(), 0, -1), own},
		{[]byte{8, 0, 0, 0, 0, 0, 3, 0}, 0},
		{[]byte{36, 0, 0, 0, 1, 0, 3, 0}, 0},
	} {
		f.Add(seed.p, seed.mode)
	}
	s := newSenderUnderTest(f)
	f.Fuzz(func(t *testing.T, p []byte, mode byte) {
		s.deliver(t, p, mode)
	})
}

// TestSenderControlDropsMalformedFrames: each control frame a sender
// reads is checked before it is used: a frame longer than its datagram or
// shorter than its type, a status message with a negative window or one
// wider than the term, a NAK off the frame alignment or beyond anything
// sent, an ERR whose message does not fit its frame, a short RTTM or
// RSP_SETUP are dropped and counted as invalid packets, and move neither
// the sender's limit nor anything else. The well-formed ones still work.
func TestSenderControlDropsMalformedFrames(t *testing.T) {
	s := newSenderUnderTest(t)
	own := byte(ctlOwnSession | ctlRelativeTerm)
	pub := s.pubs[0]
	// A receiver appears, and the publication sends its first window.
	s.deliver(t, smFrame(wire.SMFlagSendSetup, 0, 0, 0, false), own)
	s.deliver(t, smFrame(0, 0, 0, 32<<10, false), own)
	s.m.cycle(4)
	if pos := pub.senderPosition(); pos != 32<<10 {
		t.Fatalf("snd-pos %d after a 32 KiB window, want %d", pos, 32<<10)
	}
	for _, tc := range []struct {
		name string
		p    []byte
	}{
		{"SM frame length past the datagram", withInt32(smFrame(0, 0, 0, 64<<10, false), 0, 37)},
		{"SM frame length short of an SM", withInt32(smFrame(0, 0, 0, 64<<10, false), 0, 35)},
		{"SM datagram short of an SM", smFrame(0, 0, 0, 64<<10, false)[:35]},
		{"SM negative window", smFrame(0, 0, 32<<10, -1, false)},
		{"SM window wider than the term", smFrame(0, 0, 32<<10, 64<<10+32, false)},
		{"SM window 2 GiB - 1", smFrame(0, 0, 0, math.MaxInt32, false)},
		{"NAK frame length past the datagram", withInt32(nakFrame(0, 0, 1024), 0, 29)},
		{"NAK off the frame alignment", nakFrame(0, 1000, 1024)},
		{"NAK negative length", nakFrame(0, 0, -1)},
		{"NAK beyond the sender position", nakFrame(0, 32<<10, 1024)},
		{"NAK for a term not yet sent", nakFrame(1, 0, 1024)},
		{"NAK term id before the initial one", nakFrame(-1, 0, 1024)},
		{"NAK offset past the term", nakFrame(0, 64<<10, 32)},
		{"ERR negative message length", withInt32(errFrame("x"), wire.ErrMessageLengthOffset, -1)},
		{"ERR message past the frame", withInt32(errFrame("x"), wire.ErrMessageLengthOffset, 2)},
		{"ERR message over 1023 bytes", longErrFrame(1500)},
		{"ERR frame length past the datagram", withInt32(errFrame("x"), 0, 42)},
		{"RTTM short", rttmFrame(wire.RTTMFlagReply)[:wire.RTTMLength-1]},
		{"RSP_SETUP short", rspSetupFrame()[:wire.RspSetupLength-1]},
		{"RSP_SETUP frame length past the datagram", withInt32(rspSetupFrame(), 0, 21)},
		{"version 1", append([]byte{36, 0, 0, 0, 1}, smFrame(0, 0, 0, 1024, false)[5:]...)},
		{"7 bytes", []byte{7, 0, 0, 0, 0, 0, 3}},
	} {
		invalid, lmt := s.invalid(), s.m.subPosition(pub.sndLmt)
		naks, errs := s.counter(sysRetransmitsSent), s.counter(sysErrorFramesReceived)
		s.deliver(t, tc.p, own)
		if got := s.invalid() - invalid; got != 1 {
			t.Errorf("%s: invalid packets +%d, want +1", tc.name, got)
		}
		if got := s.m.subPosition(pub.sndLmt); got != lmt {
			t.Errorf("%s: snd-lmt moved from %d to %d", tc.name, lmt, got)
		}
		if s.counter(sysRetransmitsSent) != naks || s.counter(sysErrorFramesReceived) != errs {
			t.Errorf("%s: acted on (retransmits or error frames counted)", tc.name)
		}
	}
	// Well-formed frames are taken, none counted invalid.
	invalid := s.invalid()
	s.deliver(t, nakFrame(0, 1024, 1024), own)
	if s.counter(sysRetransmitsSent) == 0 {
		t.Error("a well-formed NAK below the sender position was not resent")
	}
	s.deliver(t, smFrame(0, 0, 32<<10, 32<<10, true), own)
	if got := s.m.subPosition(pub.sndLmt); got != 64<<10 {
		t.Errorf("snd-lmt %d after a well-formed SM at 32 KiB with a 32 KiB window, want %d", got, 64<<10)
	}
	s.deliver(t, rttmFrame(wire.RTTMFlagReply), own)
	s.deliver(t, errFrame("no thanks"), own)
	if s.counter(sysErrorFramesReceived) != 1 {
		t.Error("a well-formed ERR frame was not taken")
	}
	if got := s.invalid() - invalid; got != 0 {
		t.Errorf("well-formed frames counted as %d invalid packets", got)
	}
}
