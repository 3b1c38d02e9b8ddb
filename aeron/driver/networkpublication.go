package driver

import (
	"net/netip"

	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/aeron/internal/wire"
	"github.com/goblin-kv/goblin/internal/shm"
)

// Sender timing (Configuration): SETUP is repeated every 100 ms until a
// status message comes, and a heartbeat goes out after 100 ms without
// data.
const (
	setupIntervalNs     = int64(100e6)
	heartbeatIntervalNs = int64(100e6)
	// maxDatagramsPerSend bounds the datagrams one publication sends per
	// duty cycle (one sendmmsg); the Java sender sends one.
	maxDatagramsPerSend = 16
)

// networkPublication is a publication sent over UDP (NetworkPublication):
// the conductor moves its pub-lmt from the sender position and runs its
// lifecycle; the sender scans its log from snd-pos and sends what the
// receivers' window allows, SETUP until they answer, heartbeats when idle,
// and resends what they NAK.
type networkPublication struct {
	logPublication
	sender      *sender
	ep          *sendEndpoint
	ch          *udpChannel
	signalEOS   bool
	isResponse  bool
	ssc         bool
	lingerNs    int64
	connTimeout int64

	sndPos, sndLmt position // snd-pos (type 2), snd-lmt (type 9)
	bpeID          int32    // snd-bpe (type 13)
	naksReceivedID int32    // snd-naks-received (type 19)

	fc         flowControl
	retransmit *retransmitHandler
	liveness   receiverLiveness

	// Sender state.
	timeOfLastDataOrHeartbeatNs int64
	timeOfLastSetupNs           int64
	timeOfLastSMNs              int64
	trackSenderLimits           bool
	isSetupElicited             bool
	hasInitialConnection        bool
	responseAddr                netip.AddrPort // a response publication's learned destination

	// Conductor state.
	hasReceivers          bool
	isConnected           bool
	isEndOfStream         bool
	hasReceivedUnicastEOS bool
	senderReleased        bool
	hasSpies              bool
	timeOfLastActivityNs  int64

	// One duty cycle's datagrams: their lengths plus padding.
	advance [maxDatagramsPerSend]int
}

// senderPosition is snd-pos (written by this goroutine; readers: tools,
// spies' clients).
func (p *networkPublication) senderPosition() int64 { return p.sender.subPosition(p.sndPos) }

// send is one sender pass over the publication (NetworkPublication.send):
// SETUP while unconnected or elicited, then data, else a heartbeat and the
// idle flow control; then due retransmits. It returns the bytes sent.
func (p *networkPublication) send(nowNs int64) int {
	s := p.sender
	senderPos := p.senderPosition()
	termID := logbuffer.ComputeTermIDFromPosition(senderPos, p.bitsToShift, p.initialTermID)
	termOffset := int32(senderPos & int64(p.termLength-1))
	if !p.hasInitialConnection || p.isSetupElicited {
		p.setupMessageCheck(nowNs, termID, termOffset)
	}
	sent := p.sendData(nowNs, senderPos)
	if sent == 0 {
		sent = p.heartbeatMessageCheck(nowNs, termID, termOffset)
		if p.ssc && p.hasSpies && !p.hasReceivers {
			np := p.maxSpyPosition(senderPos)
			s.setPosition(p.sndPos, np)
			s.setPosition(p.sndLmt, p.fc.onIdle(nowNs, np, np, p.isEndOfStream))
		} else {
			s.setPosition(p.sndLmt, p.fc.onIdle(nowNs, s.subPosition(p.sndLmt), senderPos, p.isEndOfStream))
		}
		p.liveness.onIdle(nowNs, p.connTimeout)
		p.hasReceivers = p.liveness.hasReceivers()
	}
	p.retransmit.processTimeouts(nowNs, p)
	return sent
}

// sendData sends the committed frames after snd-pos that the window
// allows, one datagram of at most an MTU at a time, never crossing a term
// end; a padding frame goes as its header alone and the position skips
// its length (NetworkPublication.sendData, TermScanner.scanForAvailability).
// Up to maxDatagramsPerSend datagrams leave in one sendmmsg; snd-pos moves
// past those the kernel took. It returns the bytes (and padding) sent.
func (p *networkPublication) sendData(nowNs, senderPos int64) int {
	s := p.sender
	window := s.subPosition(p.sndLmt) - senderPos
	if window <= 0 {
		p.trackLimited()
		return 0
	}
	term := p.log.terms[logbuffer.IndexByPosition(senderPos, p.bitsToShift)]
	offset := int(senderPos & int64(p.termLength-1))
	// Multi-destination channels send each datagram to every destination
	// in turn; the others batch.
	batched := !p.ch.isMultiDestination()
	var to netip.AddrPort
	if p.isResponse {
		if !p.responseAddr.IsValid() {
			return 0 // no receiver has asked for a SETUP yet: nowhere to send
		}
		to = p.responseAddr
	}
	pos := senderPos
	queued := 0
	for queued < maxDatagramsPerSend && window > 0 && offset < p.termLength {
		available, padding := scanForAvailability(term, offset, int(min(window, int64(p.mtu))))
		if available < 0 {
			p.trackLimited() // one frame is larger than the window left
			break
		}
		if available == 0 {
			break
		}
		step := available + padding
		if batched {
			s.batch.Add(p.ep.sock, term[offset:offset+available], to)
			p.advance[queued] = step
			queued++
		} else {
			if p.ep.sendToDestinations(s, term[offset:offset+available]) != available {
				s.counters.AddValue(sysShortSends, 1)
				break
			}
			pos += int64(step)
			queued++
		}
		window -= int64(step)
		offset += step
	}
	if batched && queued > 0 {
		k, err := s.batch.Flush(p.ep.sock)
		s.onSendError(err, p.ch.remoteData)
		if k < queued {
			s.counters.AddValue(sysShortSends, 1)
		}
		for i := range k {
			pos += int64(p.advance[i])
		}
	}
	if pos == senderPos {
		return 0
	}
	s.setPosition(p.sndPos, pos)
	p.timeOfLastDataOrHeartbeatNs = nowNs
	p.trackSenderLimits = true
	return int(pos - senderPos)
}

// trackLimited counts the first time the sender finds itself out of
// window after sending data (snd-bpe and counter 18).
func (p *networkPublication) trackLimited() {
	s := p.sender
	if p.trackSenderLimits {
		p.trackSenderLimits = false
		s.counters.AddValue(p.bpeID, 1)
		s.counters.AddValue(sysSenderFlowControlLimits, 1)
	}
}

// scanForAvailability is TermScanner.scanForAvailability: how many bytes
// of whole committed frames from offset fit in maxLength (a padding frame
// ends the scan and counts as its header, its rest returned as padding); a
// first frame longer than maxLength gives a negative length.
func scanForAvailability(term []byte, offset, maxLength int) (available, padding int) {
	limit := min(maxLength, len(term)-offset)
	for {
		at := offset + available
		// Frame length: committed by publishers with release; acquire.
		frameLength := shm.LoadInt32Acquire(term, at)
		if frameLength <= 0 {
			break
		}
		aligned := shm.Align(int(frameLength), logbuffer.FrameAlignment)
		if shm.GetUint16(term, at+logbuffer.FrameTypeOffset) == logbuffer.FrameTypePad {
			padding = aligned - logbuffer.HeaderLength
			aligned = logbuffer.HeaderLength
		}
		available += aligned
		if available > limit {
			if aligned == available {
				available = -available
			} else {
				available -= aligned
			}
			return available, 0
		}
		if padding != 0 || available >= limit {
			break
		}
	}
	return available, padding
}

// setupMessageCheck sends SETUP every 100 ms (NetworkPublication.setupMessageCheck).
func (p *networkPublication) setupMessageCheck(nowNs int64, termID, termOffset int32) {
	s := p.sender
	if p.timeOfLastSetupNs+setupIntervalNs-nowNs >= 0 {
		return
	}
	p.timeOfLastSetupNs = nowNs
	var flags byte
	if !p.isResponse && p.responseCorrelationID != -1 {
		flags |= wire.SetupFlagSendResponseSetup
	}
	if p.ch.hasGroupSemantics() {
		flags |= wire.SetupFlagGroup
	}
	f := wire.SetupFields{Flags: flags, TermOffset: termOffset, SessionID: p.sessionID, StreamID: p.streamID,
		InitialTermID: p.initialTermID, ActiveTermID: termID, TermLength: int32(p.termLength), MTU: int32(p.mtu),
		TTL: int32(p.ep.sock.TTL())}
	b := s.ctl[:wire.SetupLength]
	wire.PutSetup(b, &f)
	if p.isSetupElicited {
		p.fc.onSetup(s.subPosition(p.sndLmt), p.senderPosition(), nowNs)
	}
	if p.ep.sendTo(s, b, p.responseAddr, p.isResponse) != len(b) {
		s.counters.AddValue(sysShortSends, 1)
	}
	if p.isSetupElicited && p.hasReceivers {
		p.isSetupElicited = false
	}
}

// heartbeatMessageCheck sends a heartbeat (a data header of frame length
// 0 at the sender position) after 100 ms without data, once connected.
func (p *networkPublication) heartbeatMessageCheck(nowNs int64, termID, termOffset int32) int {
	s := p.sender
	if !p.hasInitialConnection || p.timeOfLastDataOrHeartbeatNs+heartbeatIntervalNs-nowNs >= 0 {
		return 0
	}
	flags := byte(logbuffer.FlagsUnfragmented)
	switch {
	case p.isRevoked():
		flags |= logbuffer.FlagEOS | logbuffer.FlagRevoked
	case p.signalEOS && p.isEndOfStream:
		flags |= logbuffer.FlagEOS
	}
	b := s.ctl[:wire.DataHeaderLength]
	wire.PutHeartbeat(b, flags, p.sessionID, p.streamID, termID, termOffset)
	n := p.ep.sendTo(s, b, p.responseAddr, p.isResponse)
	if n != len(b) {
		s.counters.AddValue(sysShortSends, 1)
	}
	p.timeOfLastDataOrHeartbeatNs = nowNs
	s.counters.AddValue(sysHeartbeatsSent, 1)
	return n
}

// resend sends a NAKed range again if it is still in the log
// (NetworkPublication.resend): from bottom = snd-pos − term/2 − the
// maximum message up to snd-pos, in datagrams of at most an MTU.
func (p *networkPublication) resend(termID, termOffset, length int32) {
	s := p.sender
	senderPos := p.senderPosition()
	resendPos := logbuffer.ComputePosition(termID, int(termOffset), p.bitsToShift, p.initialTermID)
	bottom := senderPos - int64(p.termLength>>1) - int64(logbuffer.ComputeMaxMessageLength(p.termLength))
	if resendPos < bottom || resendPos >= senderPos {
		return
	}
	term := p.log.terms[logbuffer.IndexByPosition(resendPos, p.bitsToShift)]
	remaining, total := int(length), 0
	offset := int(termOffset)
	for remaining > 0 {
		available, padding := scanForAvailability(term, offset, min(p.mtu, remaining))
		if available <= 0 {
			break
		}
		if p.ep.sendTo(s, term[offset:offset+available], p.responseAddr, p.isResponse) != available {
			s.counters.AddValue(sysShortSends, 1)
			break
		}
		step := available + padding
		offset += step
		remaining -= step
		total += step
	}
	if total > 0 {
		s.counters.AddValue(sysRetransmitsSent, 1)
		s.counters.AddValue(sysRetransmittedBytes, int64(total))
	}
}

// triggerSendSetup answers a setup-eliciting status message: SETUP goes
// out again, and a response publication learns where its receiver is.
func (p *networkPublication) triggerSendSetup(sm wire.SM, from netip.AddrPort) {
	s := p.sender
	if p.isEndOfStream {
		return
	}
	p.timeOfLastSMNs = s.nowNs
	p.isSetupElicited = true
	p.fc.onTriggerSendSetup(sm, s.nowNs)
	if p.isResponse {
		p.responseAddr = from
	}
}

// isValidStatusMessage drops status messages more than half a term away
// from the sender position (1.51's strict SM check).
func (p *networkPublication) isValidStatusMessage(sm wire.SM) bool {
	smPos := logbuffer.ComputePosition(sm.ConsumptionTermID(), int(sm.ConsumptionOffset()), p.bitsToShift, p.initialTermID)
	sndPos := p.senderPosition()
	w := int64(p.termLength >> 1)
	return smPos >= sndPos-w && smPos <= sndPos+w
}

// isValidNak reports whether a NAK names a range this publication can
// have sent: a frame-aligned offset inside the term, a length that is not
// negative, and a position below the sender's (no receiver can miss what
// was not sent). A stale NAK for data long gone is valid; resend ignores it.
func (p *networkPublication) isValidNak(nak wire.Nak) bool {
	termOffset := nak.TermOffset()
	if termOffset < 0 || int(termOffset) > p.termLength-logbuffer.HeaderLength ||
		termOffset&(logbuffer.FrameAlignment-1) != 0 || nak.Length() < 0 {
		return false
	}
	pos := logbuffer.ComputePosition(nak.TermID(), int(termOffset), p.bitsToShift, p.initialTermID)
	return pos >= 0 && pos < p.senderPosition()
}

// onStatusMessage records a receiver and moves the sender limit
// (NetworkPublication.onStatusMessage).
func (p *networkPublication) onStatusMessage(sm wire.SM) {
	s := p.sender
	now := s.nowNs
	if sm.Flags()&wire.SMFlagEndOfStream != 0 {
		p.liveness.onRemoteClose(sm.ReceiverID())
		if !p.ch.multicast && !p.ch.isMultiDestination() {
			p.hasReceivedUnicastEOS = true
		}
	} else {
		p.liveness.onStatusMessage(sm.ReceiverID(), now)
	}
	live := p.liveness.hasReceivers()
	if !p.hasReceivers && live {
		s.conductor.responseConnected(p.responseCorrelationID)
	}
	p.hasReceivers = live
	p.hasInitialConnection = true
	p.timeOfLastSMNs = now
	s.setPosition(p.sndLmt, p.fc.onStatusMessage(sm, s.subPosition(p.sndLmt), p.initialTermID, p.bitsToShift, now))
	p.updateConnected(p.hasSubscribers())
}

// onSenderRTTM echoes a measurement that asks for a reply.
func (p *networkPublication) onRTTM(r wire.RTTM) {
	s := p.sender
	if r.Flags()&wire.RTTMFlagReply == 0 {
		return
	}
	b := s.ctl[:wire.RTTMLength]
	wire.PutRTTM(b, 0, p.sessionID, p.streamID, r.EchoTimestampNs(), 0, r.ReceiverID())
	if p.ep.sendTo(s, b, p.responseAddr, p.isResponse) != len(b) {
		s.counters.AddValue(sysShortSends, 1)
	}
}

// hasSubscribers: spies that simulate a connection, or receivers flow
// control is content with.
func (p *networkPublication) hasSubscribers() bool {
	return p.ssc && p.hasSpies || p.hasReceivers && p.fc.hasRequiredReceivers()
}

// updateConnected mirrors the connection into the log's is-connected flag.
func (p *networkPublication) updateConnected(connected bool) {
	if connected != p.isConnected {
		p.setConnected(connected)
		p.isConnected = connected
	}
}
