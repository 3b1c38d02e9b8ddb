package driver

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/goblin-kv/goblin/aeron/internal/udp"
	"github.com/goblin-kv/goblin/aeron/internal/wire"
)

// pendingSetupTimeoutNs: a source asked for SETUP is asked again after
// this long; an explicit control address is asked every this long while
// the endpoint has a subscriber (PENDING_SETUPS_TIMEOUT_NS).
const pendingSetupTimeoutNs = int64(1e9)

// maxPendingSetups bounds the sources asked for SETUP at once, and
// maxSessionStates the sessions a stream remembers it has no interest in:
// each DATA of an unknown session adds one of either, and anyone can send
// DATA with a new session id. Past them, such DATA is dropped unanswered
// (a sender that gets no status message goes on sending SETUP, so a
// legitimate one still gets its image). The Java and C drivers have no
// such bound.
const (
	maxPendingSetups = 1024
	maxSessionStates = 4096
)

// sessionState is what a receive endpoint knows of a (stream, session)
// it has no image for (DataPacketDispatcher.SessionState).
type sessionState uint8

const (
	sessionPendingSetup   sessionState = iota + 1 // data came, SETUP asked for
	sessionInitInProgress                         // SETUP came, image being made
	sessionOnCoolDown                             // image went without EOS: ignored for a while
	sessionNoInterest                             // no subscription wants it
)

// streamInterest is a receive endpoint's view of one stream
// (DataPacketDispatcher.StreamInterest).
type streamInterest struct {
	allSessions bool
	subscribed  map[int32]struct{}
	states      map[int32]sessionState
	active      map[int32]*publicationImage
}

func newStreamInterest(all bool) *streamInterest {
	return &streamInterest{allSessions: all, subscribed: map[int32]struct{}{}, states: map[int32]sessionState{},
		active: map[int32]*publicationImage{}}
}

func (s *streamInterest) wants(sessionID int32) bool {
	if s.allSessions {
		return true
	}
	_, ok := s.subscribed[sessionID]
	return ok
}

// receiveEndpoint is a socket images arrive on (ReceiveChannelEndpoint):
// one per canonical channel, shared by the subscriptions of that channel.
// It owns the dispatch of its datagrams to images (DataPacketDispatcher)
// and sends its images' status messages, NAKs and the other control
// frames from the same socket.
type receiveEndpoint struct {
	ch         *udpChannel
	sock       *udp.Socket
	statusID   int32 // rcv-channel
	addrID     int32 // rcv-local-sockaddr
	receiverID int64
	groupTag   int64
	hasGroup   bool

	streams          map[int32]*streamInterest
	refByStream      map[int32]int
	refBySession     map[uint64]int
	responseByStream map[int32]int
	imageRefCount    int
	closing          bool

	// mds holds the destinations of a multi-destination subscription
	// (control-mode=manual): sock is nil and each destination has its
	// own (mds.go).
	mds *multiRcvDestination
}

// open opens a receive endpoint's socket: bound to the
// endpoint (an ephemeral port when the channel has only a control
// address), or a multicast group joined on the interface.
func (e *receiveEndpoint) open(c *conductor, rcvbuf, sndbuf int) error {
	var err error
	e.sock, err = c.openReceiveSocket(e.ch, rcvbuf, sndbuf, e.ch.mediaRcvTs.enabled)
	return err
}

// openReceiveSocket opens the socket a channel receives on (an endpoint's,
// or a multi-destination subscription's destination's), with the kernel's
// receive timestamps when the endpoint's channel has media-rcv-ts-offset.
func (c *conductor) openReceiveSocket(ch *udpChannel, rcvbuf, sndbuf int, timestamps bool) (*udp.Socket, error) {
	o := udp.Options{Bind: ch.remoteData, RcvBuf: rcvbuf, SndBuf: sndbuf}
	if ch.multicast {
		o = udp.Options{Bind: netip.AddrPortFrom(netip.Addr{}, ch.remoteData.Port()), Group: ch.remoteData.Addr(),
			Interface: ch.ifaceAddr, MulticastIF: ch.ifaceAddr, TTL: c.multicastTTL(ch), RcvBuf: rcvbuf, SndBuf: sndbuf}
	}
	o.ReceiveTimestamps = timestamps
	if ch.multicast {
		return udp.Open(o)
	}
	return c.receiverPorts.open(o)
}

// explicitControl is the address an endpoint with control= sends its
// setup-eliciting status messages to.
func (e *receiveEndpoint) explicitControl() (netip.AddrPort, bool) {
	return e.ch.localControl, e.ch.hasExplicitControl
}

// addSubscription adds interest in every session of a stream
// (DataPacketDispatcher.addSubscription).
func (e *receiveEndpoint) addSubscription(streamID int32) {
	s := e.streams[streamID]
	if s == nil {
		e.streams[streamID] = newStreamInterest(true)
		return
	}
	if !s.allSessions {
		s.allSessions = true
		for id, st := range s.states {
			if st == sessionNoInterest {
				delete(s.states, id)
			}
		}
	}
}

// addSessionSubscription adds interest in one session of a stream.
func (e *receiveEndpoint) addSessionSubscription(streamID, sessionID int32) {
	s := e.streams[streamID]
	if s == nil {
		s = newStreamInterest(false)
		e.streams[streamID] = s
	}
	s.subscribed[sessionID] = struct{}{}
	if s.states[sessionID] == sessionNoInterest {
		delete(s.states, sessionID)
	}
}

// removeStreamSubscription drops interest in a stream's other sessions;
// images of sessions no session subscription names are deactivated.
func (r *receiver) removeStreamSubscription(e *receiveEndpoint, streamID int32) {
	s := e.streams[streamID]
	if s == nil {
		return
	}
	for id, img := range s.active {
		if _, ok := s.subscribed[id]; !ok {
			img.deactivate(r.driverContext)
			delete(s.active, id)
		}
	}
	for id := range s.states {
		if _, ok := s.subscribed[id]; !ok {
			delete(s.states, id)
		}
	}
	s.allSessions = false
	if len(s.subscribed) == 0 {
		delete(e.streams, streamID)
	}
}

// removeSessionSubscription drops interest in one session.
func (r *receiver) removeSessionSubscription(e *receiveEndpoint, streamID, sessionID int32) {
	s := e.streams[streamID]
	if s == nil {
		return
	}
	if !s.allSessions {
		if img := s.active[sessionID]; img != nil {
			delete(s.active, sessionID)
			img.deactivate(r.driverContext)
		}
		delete(s.states, sessionID)
	}
	delete(s.subscribed, sessionID)
	if !s.allSessions && len(s.subscribed) == 0 {
		delete(e.streams, streamID)
	}
	for i := len(r.pendingSetups) - 1; i >= 0; i-- {
		p := &r.pendingSetups[i]
		if p.ep == e && p.streamID == streamID && p.sessionID == sessionID {
			r.removePendingSetup(i)
		}
	}
}

// shouldBeClosed: no subscription and no image uses the endpoint.
func (e *receiveEndpoint) shouldBeClosed() bool {
	return len(e.refByStream) == 0 && len(e.refBySession) == 0 && len(e.responseByStream) == 0 &&
		!e.closing && e.imageRefCount <= 0
}

// pendingSetup is a source asked for SETUP, or (periodic) an explicit
// control address asked every second (PendingSetupMessageFromSource).
type pendingSetup struct {
	ep                  *receiveEndpoint
	sessionID, streamID int32
	control             netip.AddrPort
	periodic            bool
	timeNs              int64
	ti                  int // the destination it was asked on (0 unless MDS)
}

func (r *receiver) removePendingSetup(i int) {
	p := r.pendingSetups[i]
	if !p.periodic {
		if s := p.ep.streams[p.streamID]; s != nil && s.states[p.sessionID] == sessionPendingSetup {
			delete(s.states, p.sessionID)
		}
	}
	last := len(r.pendingSetups) - 1
	r.pendingSetups[i] = r.pendingSetups[last]
	r.pendingSetups = r.pendingSetups[:last]
}

// checkPendingSetups asks again, or forgets, sources asked for SETUP a
// second ago (Receiver.checkPendingSetupMessages).
func (r *receiver) checkPendingSetups(nowNs int64) {
	for i := len(r.pendingSetups) - 1; i >= 0; i-- {
		p := &r.pendingSetups[i]
		if p.timeNs+pendingSetupTimeoutNs-nowNs >= 0 {
			continue
		}
		if !p.periodic {
			r.removePendingSetup(i)
		} else if len(p.ep.streams) > 0 {
			p.timeNs = nowNs
			p.ep.sendSetupElicitingOn(r.driverContext, p.ti, p.control, p.sessionID, p.streamID)
		}
	}
}

// pollData reads the datagrams waiting on a receive endpoint and
// dispatches them (DataTransportPoller.receive). It returns the bytes read.
func (r *receiver) pollData(e *receiveEndpoint) int {
	if e.mds != nil {
		return r.pollDestinations(e)
	}
	return r.pollSocket(e, e.sock, 0)
}

// pollSocket reads the datagrams waiting on one socket of a receive
// endpoint (its own, or destination ti's) and dispatches them.
func (r *receiver) pollSocket(e *receiveEndpoint, sock *udp.Socket, ti int) int {
	n := r.recvInto(sock)
	b := r.recvBatch
	total := 0
	for i := range n {
		p := b.Datagram(i)
		total += len(p)
		if b.Truncated(i) {
			r.counters.AddValue(sysInvalidPackets, 1)
			continue
		}
		if len(r.incoming) > 0 && r.dropIncoming(p) {
			continue
		}
		if e.ch.mediaRcvTs.enabled {
			if ns, ok := b.Timestamp(i); ok {
				e.ch.mediaRcvTs.applyMedia(p, ns)
			}
		}
		e.onDatagram(r, p, b.From(i), ti)
	}
	return total
}

// onDataDatagram is the receiver's entry point for one datagram read from
// a receive endpoint's data socket (ReceiveChannelEndpoint.onDataPacket
// and its siblings). Anyone who can send to the socket wrote it: a frame
// that is not what its type promises is dropped and counted as an
// invalid packet before any field of it is used (aeron_is_frame_valid,
// the SETUP checks), and a DATA frame is checked against its image's
// term before it goes in (insertPacket). Those checks are meant to leave
// nothing to go wrong; should a datagram still panic the receiver, the
// panic is recovered here, between datagrams, counted in the errors
// counter and written to the error log, and the driver goes on.
func (e *receiveEndpoint) onDataDatagram(r *receiver, p []byte, from netip.AddrPort) {
	e.onDatagram(r, p, from, 0)
}

// onDatagram is onDataDatagram for a datagram read on transport ti (a
// multi-destination subscription's destination; 0 otherwise).
func (e *receiveEndpoint) onDatagram(r *receiver, p []byte, from netip.AddrPort, ti int) {
	defer func() {
		if v := recover(); v != nil {
			r.recoverDatagram(v, p)
		}
	}()
	if !wire.ValidDataSocketFrame(p) {
		r.counters.AddValue(sysInvalidPackets, 1)
		return
	}
	e.channelOn(ti).resolvedNs = r.nowNs // activity: no re-resolution due (resolution.go)
	switch wire.Header(p).Type() {
	case wire.TypeData, wire.TypePad:
		if e.ch.rcvTs.enabled {
			e.ch.rcvTs.applyReceive(p, epochNanos())
		}
		e.onDataPacket(r, p, from, ti)
	case wire.TypeSetup:
		if !wire.ValidSetup(wire.Setup(p)) {
			r.counters.AddValue(sysInvalidPackets, 1)
			return
		}
		e.onSetup(r, wire.Setup(p), from, ti)
	case wire.TypeRTTM:
		e.onRTTM(r, wire.RTTM(p), from, ti)
	}
}

// recoverDatagram records a panic a datagram caused: the error log keeps
// the frame's type, the panic and the functions it went through, the
// same text for the same bug (so the distinct error log counts its
// repeats in one entry rather than filling up).
func (r *receiver) recoverDatagram(v any, p []byte) {
	typ := -1
	if len(p) >= wire.MinHeaderLength {
		typ = int(wire.Header(p).Type())
	}
	r.recordError(fmt.Errorf("aeron driver: receiver dropped a datagram of frame type %#x that panicked: %v%s",
		typ, v, panicTrace()))
}

// panicTrace lists the functions (file:line) a recovered panic went
// through, from where it was raised, without arguments or addresses.
func panicTrace() string {
	var pcs [32]uintptr
	n := runtime.Callers(3, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	var b strings.Builder
	for {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function, "runtime.") {
			if !more {
				break
			}
			continue
		}
		fmt.Fprintf(&b, "\n\tat %s (%s:%d)", f.Function, filepath.Base(f.File), f.Line)
		if !more {
			break
		}
	}
	return b.String()
}

// onDataPacket is DataPacketDispatcher.onDataPacket: data of an active
// image goes in; data of an unknown session of a stream someone wants
// (and not at its end) asks its source for SETUP.
func (e *receiveEndpoint) onDataPacket(r *receiver, p []byte, from netip.AddrPort, ti int) {
	h := wire.Data(p)
	s := e.streams[h.StreamID()]
	if s == nil {
		return
	}
	session := h.SessionID()
	if img := s.active[session]; img != nil {
		img.insertPacket(r, h.TermID(), h.TermOffset(), p, from, ti)
		return
	}
	if wire.IsEndOfStream(p) {
		return
	}
	if _, known := s.states[session]; known {
		return
	}
	if !s.wants(session) {
		if len(s.states) < maxSessionStates {
			s.states[session] = sessionNoInterest
		}
		return
	}
	if len(r.pendingSetups) >= maxPendingSetups {
		return
	}
	s.states[session] = sessionPendingSetup
	control := e.controlAddressOn(ti, from)
	e.sendSetupElicitingOn(r.driverContext, ti, control, session, h.StreamID())
	r.pendingSetups = append(r.pendingSetups, pendingSetup{ep: e, sessionID: session, streamID: h.StreamID(),
		control: control, timeNs: r.nowNs, ti: ti})
}

// onSetup is DataPacketDispatcher.onSetupMessage: a SETUP for a stream
// someone wants, from a session with no image (or one asked for SETUP),
// makes an image.
func (e *receiveEndpoint) onSetup(r *receiver, m wire.Setup, from netip.AddrPort, ti int) {
	s := e.streams[m.StreamID()]
	if s == nil {
		return
	}
	session := m.SessionID()
	if img := s.active[session]; img != nil {
		if e.mds != nil {
			img.addConnectionIfUnknown(ti, e.controlAddressOn(ti, from), r.nowNs)
		}
		return
	}
	st, known := s.states[session]
	if known && st != sessionPendingSetup {
		return
	}
	if !known && !s.wants(session) {
		s.states[session] = sessionNoInterest
		return
	}
	if len(s.active) >= r.opts.StreamSessionLimit {
		// The C driver's words (aeron_data_packet_dispatcher_on_setup);
		// no source address, so a flood from many makes one entry.
		r.recordError(fmt.Errorf("aeron driver: SETUP refused: exceeded session limit, stream-id=%d, "+
			"aeron.driver.stream.session.limit=%d", m.StreamID(), r.opts.StreamSessionLimit))
		return
	}
	// Counter 21 as DataPacketDispatcher.onSetupMessage counts it: the
	// sender's multicast TTL above this endpoint's, which is 0 (never
	// set) unless the channel's ttl= or aeron.socket.multicast.ttl set
	// it, so any TTL a sender chose counts against an unset receiver.
	if sock := e.socketOn(ti); e.multicastOn(ti) && sock.TTL() < int(m.TTL()) {
		r.counters.AddValue(sysPossibleTTLAsymmetry, 1)
	}
	s.states[session] = sessionInitInProgress
	if !r.conductor.createImage(e, m, e.controlAddressOn(ti, from), from, ti) && s.states[session] == sessionInitInProgress {
		// No image: a later SETUP of the session may try again.
		delete(s.states, session)
	}
}

// onRTTM answers a sender's measurement request, or hands a reply
// to its image's congestion control (none with the static window).
func (e *receiveEndpoint) onRTTM(r *receiver, m wire.RTTM, from netip.AddrPort, ti int) {
	if id := m.ReceiverID(); id != e.receiverID && id != 0 {
		return
	}
	s := e.streams[m.StreamID()]
	if s == nil || s.active[m.SessionID()] == nil {
		return
	}
	if m.Flags()&wire.RTTMFlagReply != 0 {
		b := r.ctl[:wire.RTTMLength]
		wire.PutRTTM(b, 0, m.SessionID(), m.StreamID(), m.EchoTimestampNs(), 0, e.receiverID)
		e.sendControlOn(r.driverContext, ti, b, e.controlAddressOn(ti, from))
	}
}

// sendControl sends a control frame from the endpoint's socket.
func (e *receiveEndpoint) sendControl(x *driverContext, b []byte, to netip.AddrPort) {
	e.sendControlOn(x, 0, b, to)
}

// sendControlOn sends a control frame from the socket of transport ti.
func (e *receiveEndpoint) sendControlOn(x *driverContext, ti int, b []byte, to netip.AddrPort) {
	sock := e.socketOn(ti)
	if sock == nil {
		return
	}
	n, err := sock.SendTo(b, to)
	x.onSendError(err, to)
	if n != len(b) {
		x.counters.AddValue(sysShortSends, 1)
	}
}

// sendSetupEliciting sends a status message with the SEND_SETUP flag,
// position 0 and window 0.
func (e *receiveEndpoint) sendSetupEliciting(x *driverContext, to netip.AddrPort, sessionID, streamID int32) {
	e.sendSetupElicitingOn(x, 0, to, sessionID, streamID)
}

// sendSetupElicitingOn is sendSetupEliciting from transport ti's socket.
func (e *receiveEndpoint) sendSetupElicitingOn(x *driverContext, ti int, to netip.AddrPort, sessionID, streamID int32) {
	f := wire.SMFields{Flags: wire.SMFlagSendSetup, SessionID: sessionID, StreamID: streamID,
		ReceiverID: e.receiverID, GroupTag: e.groupTag, HasGroupTag: e.hasGroup}
	n := wire.PutSM(x.ctl[:], &f)
	e.sendControlOn(x, ti, x.ctl[:n], to)
}
