package driver

import (
	"net/netip"

	"github.com/goblin-kv/goblin/aeron/internal/udp"
	"github.com/goblin-kv/goblin/aeron/internal/wire"
)

// Channel endpoint status values (ChannelEndpointStatus), the value of a
// snd-channel or rcv-channel counter.
const (
	endpointInitializing = 0
	endpointErrored      = -1
	endpointActive       = 1
	endpointClosing      = 2
)

// destinationTimeoutNs: a dynamic multi-destination receiver silent this
// long gets no more data (SendChannelEndpoint.DESTINATION_TIMEOUT).
const destinationTimeoutNs = int64(5e9)

// sendDestination is one receiver of a multi-destination publication
// (control-mode=manual: added by ADD_DESTINATION; dynamic: learned from its
// status messages).
type sendDestination struct {
	addr           netip.AddrPort
	registrationID int64
	receiverID     int64
	hasReceiverID  bool
	channel        string
	lastActivityNs int64
}

// sendEndpoint is a socket network publications send from and read their
// control messages on (SendChannelEndpoint): one per canonical channel,
// shared by the publications of that channel. Unicast sockets are
// connected to the endpoint; a response channel's socket is bound to its
// control address and sends each publication to the address its
// receiver's setup-eliciting status message came from.
type sendEndpoint struct {
	ch       *udpChannel
	sock     *udp.Socket // data out; control in unless ctl is set
	ctl      *udp.Socket // multicast: the control group's socket
	statusID int32       // snd-channel
	addrID   int32       // snd-local-sockaddr
	mdcID    int32       // mdc-num-dest, or -1
	refCount int
	pubs     map[uint64]*networkPublication
	// destinations of a multi-destination (manual or dynamic) channel.
	destinations []sendDestination
	rr           int
}

func pubKey(sessionID, streamID int32) uint64 {
	return uint64(uint32(sessionID))<<32 | uint64(uint32(streamID))
}

func (e *sendEndpoint) controlSocket() *udp.Socket {
	if e.ctl != nil {
		return e.ctl
	}
	return e.sock
}

// open opens the sockets of a new send endpoint
// (UdpChannelTransport.openDatagramChannel for a SendChannelEndpoint).
func (e *sendEndpoint) open(c *conductor, rcvbuf, sndbuf int) error {
	ch := e.ch
	var err error
	if ch.multicast {
		// Data to the data group from a socket on the interface; status
		// messages and NAKs come to the control group, joined by a second
		// socket bound to its port.
		e.sock, err = udp.Open(udp.Options{Bind: netip.AddrPortFrom(ch.ifaceAddr, 0), Connect: ch.remoteData,
			SndBuf: sndbuf, MulticastIF: ch.ifaceAddr, TTL: c.multicastTTL(ch)})
		if err != nil {
			return err
		}
		e.ctl, err = udp.Open(udp.Options{Bind: netip.AddrPortFrom(netip.Addr{}, ch.remoteControl.Port()),
			Group: ch.remoteControl.Addr(), Interface: ch.ifaceAddr, RcvBuf: rcvbuf})
		if err != nil {
			e.sock.Close()
			return err
		}
		return nil
	}
	o := udp.Options{Bind: ch.localControl, RcvBuf: rcvbuf, SndBuf: sndbuf}
	if !ch.isMultiDestination() && ch.mode != controlResponse {
		o.Connect = ch.remoteData
	}
	if ch.hasExplicitControl {
		e.sock, err = c.senderPorts.open(o)
	} else {
		e.sock, err = udp.Open(o)
	}
	return err
}

// sendTo sends one datagram of p where the publication's data goes: the
// connected endpoint, the learned response address, or every live
// destination of a multi-destination channel. It returns the bytes the
// kernel took (less than len(p) is a short send).
func (e *sendEndpoint) sendTo(s *sender, p []byte, responseAddr netip.AddrPort, isResponse bool) int {
	if e.ch.sndTs.enabled {
		e.ch.sndTs.applySend(p)
	}
	switch {
	case isResponse:
		if !responseAddr.IsValid() {
			return 0
		}
		n, err := e.sock.SendTo(p, responseAddr)
		s.onSendError(err, responseAddr)
		return n
	case e.ch.isMultiDestination():
		return e.sendToDestinations(s, p)
	}
	n, err := e.sock.Send(p)
	s.onSendError(err, e.ch.remoteData)
	return n
}

// sendToDestinations sends p to every destination, round robin from one
// later each time; a destination learned dynamically and silent for the
// destination timeout is skipped. The result is the shortest send.
func (e *sendEndpoint) sendToDestinations(s *sender, p []byte) int {
	n := len(e.destinations)
	result := len(p)
	if n == 0 {
		return result
	}
	start := e.rr
	e.rr++
	if start >= n {
		start, e.rr = 0, 1
	}
	for i := range n {
		dst := &e.destinations[(start+i)%n]
		if e.ch.mode == controlDynamic && dst.lastActivityNs+destinationTimeoutNs-s.nowNs < 0 || !dst.addr.IsValid() {
			continue // silent, or a name not resolved yet
		}
		sent, err := e.sock.SendTo(p, dst.addr)
		s.onSendError(err, dst.addr)
		if sent < len(p) {
			result = sent
		}
	}
	return result
}

// onSendError logs a failed send as the Java driver's warning does.
func (x *driverContext) onSendError(err error, to netip.AddrPort) {
	if err != nil {
		x.recordError(&sendError{to: to, err: err})
	}
}

type sendError struct {
	to  netip.AddrPort
	err error
}

func (e *sendError) Error() string {
	return "WARN - failed to send datagram to " + e.to.String() + ", cause: " + e.err.Error()
}

// onDestinationSM tracks the receivers of a multi-destination channel
// from their status messages (ManualSndMultiDestination and
// DynamicSndMultiDestination.onStatusMessage).
func (e *sendEndpoint) onDestinationSM(s *sender, sm wire.SM, from netip.AddrPort) {
	id := sm.ReceiverID()
	for i := range e.destinations {
		dst := &e.destinations[i]
		switch e.ch.mode {
		case controlManual:
			if dst.hasReceiverID && dst.receiverID == id || !dst.hasReceiverID && dst.addr == from {
				if !dst.hasReceiverID {
					dst.receiverID, dst.hasReceiverID = id, true
				}
				dst.lastActivityNs = s.nowNs
				return
			}
		case controlDynamic:
			if dst.receiverID == id && dst.addr.Port() == from.Port() {
				dst.lastActivityNs = s.nowNs
				return
			}
		}
	}
	if e.ch.mode == controlDynamic {
		e.destinations = append(e.destinations, sendDestination{addr: from, receiverID: id, hasReceiverID: true,
			lastActivityNs: s.nowNs})
		e.setDestinationCount(s.driverContext)
	}
}

func (e *sendEndpoint) setDestinationCount(x *driverContext) {
	if e.mdcID >= 0 {
		x.counters.SetValue(e.mdcID, int64(len(e.destinations)))
	}
}

// destinationRegistrationID is the registration id of the manual
// destination an ERR frame came from (−1 when unknown or not manual).
func (e *sendEndpoint) destinationRegistrationID(receiverID int64, from netip.AddrPort) int64 {
	if e.ch.mode != controlManual {
		return -1
	}
	for _, dst := range e.destinations {
		if dst.hasReceiverID && dst.receiverID == receiverID || !dst.hasReceiverID && dst.addr == from {
			return dst.registrationID
		}
	}
	return -1
}

// pollControl reads the control messages waiting on a send endpoint's
// socket and hands each to onControlDatagram (ControlTransportPoller.receive).
// It returns the bytes read.
func (s *sender) pollControl(e *sendEndpoint) int {
	n := s.recvInto(e.controlSocket())
	b := s.recvBatch
	total := 0
	for i := range n {
		p := b.Datagram(i)
		total += len(p)
		if len(s.incoming) > 0 && s.dropIncoming(p) {
			continue
		}
		e.onControlDatagram(s, p, b.From(i))
	}
	return total
}

// onControlDatagram handles one datagram a send endpoint's control socket
// read from anyone on the network (SendChannelEndpoint's dispatch): a
// malformed NAK, SM, ERR, RTTM or RSP_SETUP is dropped and counted as an
// invalid packet before any field of it is used; the others go to their
// publication.
func (e *sendEndpoint) onControlDatagram(s *sender, p []byte, from netip.AddrPort) {
	f, ok := wire.ControlFrame(p)
	if !ok {
		s.counters.AddValue(sysInvalidPackets, 1)
		return
	}
	switch wire.Header(f).Type() {
	case wire.TypeNak:
		e.onNak(s, wire.Nak(f))
	case wire.TypeSM:
		e.onStatusMessage(s, wire.SM(f), from)
	case wire.TypeErr:
		e.onErrorFrame(s, wire.Err(f), from)
	case wire.TypeRTTM:
		if pub := e.pubs[pubKey(wire.RTTM(f).SessionID(), wire.RTTM(f).StreamID())]; pub != nil {
			pub.onRTTM(wire.RTTM(f))
		}
	case wire.TypeRspSetup:
		r := wire.RspSetup(f)
		if pub := e.pubs[pubKey(r.SessionID(), r.StreamID())]; pub != nil && pub.responseCorrelationID != -1 {
			s.conductor.responseSetup(pub.responseCorrelationID, r.ResponseSessionID())
		}
	}
}

// onNak counts a NAK and passes it to its publication's retransmit
// handler (SendChannelEndpoint.onNakMessage).
func (e *sendEndpoint) onNak(s *sender, nak wire.Nak) {
	pub := e.pubs[pubKey(nak.SessionID(), nak.StreamID())]
	if pub == nil {
		return
	}
	s.counters.AddValue(pub.naksReceivedID, 1)
	s.counters.AddValue(sysNaksReceived, 1)
	termOffset, length := nak.TermOffset(), nak.Length()
	if !pub.isValidNak(nak) {
		s.counters.AddValue(sysInvalidPackets, 1)
		return
	}
	retransmitLength := length
	if termOffset >= 0 && int(termOffset) <= pub.termLength && length >= 0 {
		retransmitLength = int32(pub.fc.maxRetransmissionLength(int(termOffset), int(length), pub.termLength))
	}
	switch pub.retransmit.onNak(nak.TermID(), termOffset, length, int32(pub.termLength), retransmitLength, s.nowNs, pub) {
	case nakInvalid:
		s.counters.AddValue(sysInvalidPackets, 1)
	case nakOverflow:
		s.counters.AddValue(sysRetransmitOverflow, 1)
	}
}

// onStatusMessage is SendChannelEndpoint.onStatusMessage: an SM out of
// the publication's window is dropped (counted); a setup-eliciting one
// makes it send SETUP (and, on a response channel, teaches it where its
// receiver is); the others move its limit.
func (e *sendEndpoint) onStatusMessage(s *sender, sm wire.SM, from netip.AddrPort) {
	s.counters.AddValue(sysStatusMessagesReceived, 1)
	pub := e.pubs[pubKey(sm.SessionID(), sm.StreamID())]
	eliciting := sm.Flags()&wire.SMFlagSendSetup != 0
	if pub != nil && int(sm.ReceiverWindow()) > pub.termLength {
		// No receiver of this term length advertises more than half a
		// term (Configuration.receiverWindowLength).
		s.counters.AddValue(sysInvalidPackets, 1)
		return
	}
	if !eliciting && pub != nil && !pub.isValidStatusMessage(sm) {
		s.counters.AddValue(sysStatusMessagesRejected, 1)
		return
	}
	if e.ch.isMultiDestination() {
		e.onDestinationSM(s, sm, from)
	}
	if pub == nil {
		return
	}
	if eliciting {
		pub.triggerSendSetup(sm, from)
	} else {
		pub.onStatusMessage(sm)
	}
}

// onErrorFrame is SendChannelEndpoint.onError: a receiver refused the
// stream; its publishers hear about it (ON_PUBLICATION_ERROR) if it was a
// live receiver.
func (e *sendEndpoint) onErrorFrame(s *sender, ef wire.Err, from netip.AddrPort) {
	s.counters.AddValue(sysErrorFramesReceived, 1)
	pub := e.pubs[pubKey(ef.SessionID(), ef.StreamID())]
	if pub == nil {
		return
	}
	pub.fc.onError(ef, s.nowNs)
	if pub.liveness.onRemoteClose(ef.ReceiverID()) {
		s.conductor.onPublicationError(pub, e.destinationRegistrationID(ef.ReceiverID(), from), ef, from)
	}
}
