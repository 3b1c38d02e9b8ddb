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
		if p.ep.ch.sndTs.enabled {
			p.ep.ch.sndTs.applySend(term[offset : offset+available])
		}
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

// onRTTM echoes a measurement that asks for a reply.
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

// updatePublisherPositionAndLimit moves pub-pos to the tail and pub-lmt to the slowest
// of the sender and the spies plus the window, cleaning the term before
// the one the limit leaves room for; unconnected, the publisher may not
// run ahead of the sender (NetworkPublication.updatePublisherPositionAndLimit).
func (p *networkPublication) updatePublisherPositionAndLimit(c *conductor) int {
	if p.state != pubActive {
		return 0
	}
	producer := p.producerPosition()
	senderPos := p.senderPosition()
	c.setPosition(p.pubPos, producer)
	if p.hasSubscribers() {
		minConsumer := senderPos
		for _, s := range p.subs {
			minConsumer = min(minConsumer, c.subPosition(s))
		}
		newLimit := minConsumer + p.termWindow
		if newLimit > c.subPosition(p.pubLmt) {
			p.cleanBufferTo(minConsumer - int64(p.termLength))
			clean := p.cleanPosition
			dirtyTermID := logbuffer.ComputeTermIDFromPosition(clean, p.bitsToShift, p.initialTermID)
			activeTermID := logbuffer.ComputeTermIDFromPosition(newLimit, p.bitsToShift, p.initialTermID)
			gap := activeTermID - dirtyTermID
			if gap < 2 || gap == 2 && clean&int64(p.termLength-1) != 0 {
				c.setPosition(p.pubLmt, newLimit)
			}
			return 1
		}
		return 0
	}
	if c.subPosition(p.pubLmt) > senderPos {
		p.updateConnected(false)
		c.setPosition(p.pubLmt, senderPos)
		p.cleanBufferTo(senderPos - int64(p.termLength))
		return 1
	}
	return 0
}

// onTimeEvent is NetworkPublication.onTimeEvent; it reports the
// end of the publication's life.
func (p *networkPublication) onTimeEvent(c *conductor, nowNs int64) bool {
	switch p.state {
	case pubActive:
		if p.isRevoked() {
			revoked := p.producerPosition()
			c.setPosition(p.pubLmt, revoked)
			shm.StoreInt64Release(p.log.meta, logbuffer.EndOfStreamPositionOffset, revoked)
			p.updateConnected(false)
			p.isEndOfStream = true
			p.cleanupSpies(c)
			p.state = pubLinger
			c.counters.AddValue(sysPublicationsRevoked, 1)
			break
		}
		p.checkSpyUntethered(c, nowNs)
		p.updateConnected(p.hasSubscribers())
		producer := p.producerPosition()
		c.setPosition(p.pubPos, producer)
		if !p.exclusive {
			p.checkForBlockedPublisher(c, producer, p.senderPosition(), nowNs)
		}
	case pubDraining:
		producer := p.producerPosition()
		c.setPosition(p.pubPos, producer)
		senderPos := p.senderPosition()
		if producer > senderPos {
			// No publisher is left: a claim without a header that reaches the
			// tail is a dead one (unblockLog).
			if unblockLog(p.log, senderPos, true) {
				c.counters.AddValue(sysUnblockedPublications, 1)
				break
			}
			if p.hasReceivers {
				break
			}
		} else {
			p.isEndOfStream = true
		}
		if p.spiesFinishedConsuming(c, producer) {
			p.timeOfLastActivityNs = nowNs
			p.state = pubLinger
		}
	case pubLinger:
		if p.refCount == 0 && (p.hasReceivedUnicastEOS || p.timeOfLastActivityNs+p.lingerNs-nowNs < 0) {
			c.cleanupNetworkPublication(p)
			p.timeOfLastActivityNs = nowNs
			p.state = pubDone
		}
	}
	return p.senderReleased
}

// decRef drops a publisher; the last one fixes the limit and the
// end of stream at the tail and starts draining (unless revoked).
func (p *networkPublication) decRef(c *conductor) {
	producer, last := p.dropPublisher(c)
	if !last {
		return
	}
	if !p.isRevoked() {
		if p.senderPosition() >= producer {
			p.isEndOfStream = true
		}
		p.state = pubDraining
	}
}

func (p *networkPublication) isAcceptingSubscriptions(c *conductor) bool {
	return p.state == pubActive || p.state == pubDraining && p.hasSpies && p.producerPosition() > p.senderPosition()
}

// A network publication as a spy's subscribable.
func (p *networkPublication) notifyID() int64 { return p.registrationID }

func (p *networkPublication) rejoinPosition(c *conductor) int64 {
	return p.senderPosition()
}

func (p *networkPublication) announce(c *conductor, l *subscriptionLink, pos position, _ int64) {
	c.sendAvailable(p.registrationID, p.sessionID, p.streamID, l.registrationID, pos.id, p.log.path, ipcChannel)
}

// linkSpies gives every matching spy a new publication.
func (p *networkPublication) linkSpies(c *conductor) {
	for _, l := range c.subscriptionLinks {
		if c.spyMatches(l, p) && l.linked(p) == nil {
			p.linkSpy(c, l)
		}
	}
}

// linkSpy gives spy l a sub-pos on p at the sender position and
// announces the publication's log as its image, source "aeron:ipc".
func (p *networkPublication) linkSpy(c *conductor, l *subscriptionLink) {
	pos, err := c.linkPosition(l, p, p.sessionID, p.streamID, p.registrationID, p.senderPosition())
	if err != nil {
		c.recordError(err)
		return
	}
	id := pos.id
	p.subs = append(p.subs, pos)
	p.hasSpies = true
	if !l.tether {
		p.untethered = append(p.untethered, untetheredSubscriber{link: l, pos: pos, updateNs: c.nowNs})
	}
	if p.ssc {
		p.updateConnected(true)
	}
	c.sendAvailable(p.registrationID, p.sessionID, p.streamID, l.registrationID, id, p.log.path, ipcChannel)
}

// removeSpy drops a spy's position from a publication.
func (p *networkPublication) removeSpy(c *conductor, l *subscriptionLink, lp *linkedPosition) {
	p.subs = removePosition(p.subs, lp.pos.id)
	p.hasSpies = len(p.subs) > 0
	if !lp.freed {
		lp.freed = true
		c.freeCounter(lp.pos.id)
	}
	if !l.tether {
		p.untethered = removeUntethered(p.untethered, l)
	}
	if p.ssc {
		p.updateConnected(p.hasSubscribers())
	}
}

// cleanupSpies tells every spy of p the image is gone and unlinks it.
func (p *networkPublication) cleanupSpies(c *conductor) {
	for _, l := range c.subscriptionLinks {
		if lp := l.linked(p); lp != nil {
			c.notifyUnavailableImage(p.registrationID, l)
			p.removeSpy(c, l, lp)
			l.unlink(p)
		}
	}
}

// spiesFinishedConsuming: every spy read to the end of stream (then they
// are cleaned up).
func (p *networkPublication) spiesFinishedConsuming(c *conductor, eos int64) bool {
	if p.hasSpies {
		for _, s := range p.subs {
			if c.subPosition(s) < eos {
				return false
			}
		}
		p.hasSpies = false
		p.cleanupSpies(c)
	}
	return true
}

func (p *networkPublication) maxSpyPosition(senderPos int64) int64 {
	pos := senderPos
	for _, s := range p.subs {
		pos = max(pos, p.sender.subPosition(s))
	}
	return pos
}

func (p *networkPublication) checkSpyUntethered(c *conductor, nowNs int64) {
	if len(p.untethered) == 0 {
		return
	}
	windowLimit := p.senderPosition() - p.termWindow + p.termWindow>>2
	c.checkUntethered(p, &p.untethered, &p.subs, windowLimit, p.untetheredWindowLimitNs, p.untetheredLingerNs,
		p.untetheredRestingNs, nowNs)
	p.hasSpies = len(p.subs) > 0
}
