package driver

import (
	"fmt"
	"math"
	"net/netip"
	"path/filepath"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/internal/counters"
	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/aeron/internal/wire"
	"github.com/goblin-kv/goblin/internal/shm"
)

// imageState is a publication image's lifecycle (PublicationImage.State).
type imageState uint8

const (
	imageInit imageState = iota
	imageActive
	imageDraining
	imageLinger
	imageDone
)

// smEOSMultiple: a draining image sends end-of-stream status messages for
// at least this many status message intervals before it lingers.
const smEOSMultiple = 5

// publicationImage is the receiving side of one remote publication
// (PublicationImage): datagrams are written into its log where their
// positions say, the conductor tracks how far the log is complete
// (rcv-pos) and what is missing, and the receiver sends status messages
// (how far the subscribers have read, and the window), NAKs for gaps, and
// at its end, end-of-stream status messages.
type publicationImage struct {
	correlationID       int64
	ep                  *receiveEndpoint
	sessionID, streamID int32
	initialTermID       int32
	termLength          int
	bitsToShift         int
	termMask            int64
	mtu                 int
	setupFlags          byte
	reliable            bool
	sourceIdentity      string
	channel             string // the receive endpoint's channel, for the loss report

	log       *rawLog
	hwm       position // rcv-hwm (type 3)
	rebuild   position // rcv-pos (type 5)
	naksID    int32    // rcv-naks-sent (type 20)
	subs      []position
	untether  []untetheredSubscriber
	untetherW int64
	untetherL int64
	untetherR int64

	state              imageState
	stateChangeNs      int64
	lastPacketNs       int64
	control            netip.AddrPort
	connLastFrameNs    int64
	connEOS            bool
	connEOSPosition    int64
	isEndOfStream      bool
	isSendingEOSSM     bool
	isRebuilding       bool
	releaseTriggered   bool
	receiverReleased   bool
	smEnabled          bool
	smScheduled        bool
	nextSMPosition     int64
	nextSMWindow       int32
	lastSMPosition     int64
	lastOverrunLimit   int64
	nextSMDeadlineNs   int64
	smTimeoutNs        int64
	livenessNs         int64
	windowLength       int32 // the static congestion window
	cleanPosition      int64
	responseSessionID  int32
	hasResponseSession bool
	rejection          string

	loss               lossDetector
	onGap              func(termID, termOffset, length int32)
	lossPending        bool
	lossTermID         int32
	lossOffset         int32
	lossLength         int32
	reportEntry        int // offset of the loss report entry, −1 none yet
	reportBytes        int64
	reportObservations int64
	reportTermID       int32
	reportOffset       int32
	reportLength       int32
	reportEnabled      bool

	// conns: a multi-destination subscription's image, one entry per
	// destination (transport index) it heard from (mds.go); nil otherwise.
	conns []imageConnection
}

// An image as a subscribable.
func (img *publicationImage) notifyID() int64 { return img.correlationID }
func (img *publicationImage) rejoinPosition(c *conductor) int64 {
	return img.joinPosition(c)
}
func (img *publicationImage) announce(c *conductor, l *subscriptionLink, pos position, _ int64) {
	c.sendImageAvailable(img, l.registrationID, pos.id)
}

func (c *conductor) sendImageAvailable(img *publicationImage, subReg int64, positionID int32) {
	c.sendAvailable(img.correlationID, img.sessionID, img.streamID, subReg, positionID, img.log.path, img.sourceIdentity)
}

// createImage is DriverConductor.onCreatePublicationImage: a SETUP for a
// wanted session makes an image with a sub-pos for every matching
// subscription at the SETUP's position, and each subscription hears of
// it. A bad SETUP is counted and logged; nobody is told.
// It reports whether the session has an image now.
func (c *conductor) createImage(e *receiveEndpoint, m wire.Setup, control, source netip.AddrPort, ti int) bool {
	if err := c.tryCreateImage(e, m, control, source, ti); err != nil {
		c.recordError(err)
		return false
	}
	s := e.streams[m.StreamID()]
	return s != nil && s.active[m.SessionID()] != nil
}

func (c *conductor) tryCreateImage(e *receiveEndpoint, m wire.Setup, control, source netip.AddrPort, ti int) error {
	mtu, termLength := int(m.MTU()), int(m.TermLength())
	if err := checkMTU(mtu); err != nil {
		return genericError(configuration, "ERROR - %v", err)
	}
	if err := logbuffer.CheckTermLength(termLength); err != nil {
		return genericError(illegalState, "%v", err)
	}
	sessionID, streamID := m.SessionID(), m.StreamID()
	if termLength > c.opts.MaxImageTermLength {
		return fmt.Errorf("aeron driver: SETUP of stream-id=%d refused: term length %d is over "+
			"aeron.image.term.buffer.max.length=%d", streamID, termLength, c.opts.MaxImageTermLength)
	}
	if logLength := int64(logbuffer.ComputeLogLength(termLength, c.opts.FilePageSize)); c.imagesLength+logLength > c.opts.MaxImagesLength {
		return fmt.Errorf("aeron driver: SETUP of stream-id=%d refused: a log for term length %d would take the images "+
			"past aeron.image.buffers.max.length=%d", streamID, termLength, c.opts.MaxImagesLength)
	}
	var first *subscriptionLink
	for _, l := range c.subscriptionLinks {
		if l.kind == subNetwork && l.ep == e && l.streamID == streamID && l.sessionMatches(sessionID) {
			first = l
			break
		}
	}
	if first == nil {
		return nil
	}
	window := receiverWindowLength(termLength, c.initialWindow(first.params.rcvWnd))
	if mtu > window {
		return genericError(configuration, "ERROR - mtuLength=%d > initialWindowLength=%d", mtu, window)
	}
	bits := logbuffer.PositionBitsToShift(termLength)
	join := logbuffer.ComputePosition(m.ActiveTermID(), int(m.TermOffset()), bits, m.InitialTermID())
	type subPos struct {
		l   *subscriptionLink
		pos position
	}
	var positions []subPos
	oldest := first
	for _, l := range c.subscriptionLinks {
		if l.kind != subNetwork || l.ep != e || l.streamID != streamID || !l.sessionMatches(sessionID) {
			continue
		}
		id, err := c.allocateStreamCounter("sub-pos", counters.TypeSubscriberPosition, l.client.id, l.registrationID,
			sessionID, streamID, l.channel, join)
		if err != nil {
			for _, p := range positions {
				c.freeCounter(p.pos.id)
			}
			return err
		}
		pos := c.positionOf(id)
		c.setPosition(pos, join)
		positions = append(positions, subPos{l, pos})
		if l.registrationID < oldest.registrationID {
			oldest = l
		}
	}
	corr := c.ring.NextCorrelationID()
	group := first.group == inferTrue || first.group == inferInfer && (e.multicastOn(ti) || m.Flags()&wire.SetupFlagGroup != 0)
	log, err := c.newRawLog(filepath.Join(c.opts.Dir, imagesDir), corr, termLength, oldest.sparse)
	if err != nil {
		for _, p := range positions {
			c.freeCounter(p.pos.id)
		}
		return err
	}
	log.initMetadata(&logMetadata{
		logType: logbuffer.TypeImage, sessionID: sessionID, streamID: streamID, initialTermID: m.InitialTermID(),
		termOffset: m.TermOffset(), mtu: int32(mtu), registrationID: corr,
		socketRcvbuf: int32(e.rcvbufLength(c)), socketSndbuf: int32(e.sndbufLength(c)),
		receiverWindow: int32(window), tether: first.tether, rejoin: first.rejoin, reliable: first.reliable,
		sparse: oldest.sparse, group: group, isResponse: first.isResponse,
		untetheredWindowLimitNs: first.params.untetheredWindowNs, untetheredLingerNs: first.params.untetheredLingerNs,
		untetheredRestingNs: first.params.restNs,
	}, c.opts.FilePageSize, c.osb)
	clientID, uri := first.client.id, first.channel
	ids := [3]int32{-1, -1, -1}
	for i, cl := range []struct {
		name string
		typ  int32
	}{{"rcv-hwm", counters.TypeReceiverHWM}, {"rcv-pos", counters.TypeReceiverPosition},
		{"rcv-naks-sent", counters.TypeReceiverNaksSent}} {
		if ids[i], err = c.allocateStreamCounter(cl.name, cl.typ, clientID, corr, sessionID, streamID, uri, -1); err != nil {
			for _, id := range ids[:i] {
				c.freeCounter(id)
			}
			for _, p := range positions {
				c.freeCounter(p.pos.id)
			}
			c.freeRawLog(log)
			return err
		}
	}
	img := &publicationImage{
		correlationID: corr, ep: e, sessionID: sessionID, streamID: streamID, initialTermID: m.InitialTermID(),
		termLength: termLength, bitsToShift: bits, termMask: int64(termLength - 1), mtu: mtu, setupFlags: m.Flags(),
		reliable: first.reliable, sourceIdentity: sourceIdentity(source), channel: e.ch.uri.raw,
		log: log, hwm: c.positionOf(ids[0]), rebuild: c.positionOf(ids[1]), naksID: ids[2],
		untetherW: first.params.untetheredWindowNs, untetherL: first.params.untetheredLingerNs,
		untetherR:     first.params.restNs,
		stateChangeNs: c.nowNs, lastPacketNs: c.nowNs, control: control, connLastFrameNs: c.nowNs,
		isRebuilding: true, smEnabled: true, smTimeoutNs: int64(c.opts.StatusMessageTimeout),
		livenessNs: int64(c.opts.ImageLivenessTimeout), windowLength: int32(window),
		nextSMPosition: join, nextSMWindow: int32(window), lastSMPosition: join,
		lastOverrunLimit: join + int64(termLength>>1), cleanPosition: join,
		reportEntry: -1, reportEnabled: c.lossReport != nil,
	}
	if e.mds != nil {
		img.initConnections(e, ti, control, c.nowNs)
	}
	img.loss = newLossDetector(c.delayGenerator(e.ch, group, first.reliable))
	img.onGap = img.onGapDetected
	c.setPosition(img.hwm, join)
	c.setPosition(img.rebuild, join)
	for _, p := range positions {
		img.subs = append(img.subs, p.pos)
		if !p.l.tether {
			img.untether = append(img.untether, untetheredSubscriber{link: p.l, pos: p.pos, updateNs: c.nowNs})
		}
	}
	e.imageRefCount++
	c.images = append(c.images, img)
	log.imageCharge = int64(len(log.data))
	c.imagesLength += log.imageCharge
	c.receiver.onNewImage(img)
	if s := e.streams[streamID]; s != nil {
		delete(s.states, sessionID)
		s.active[sessionID] = img
		img.stateChangeNs = c.nowNs
		img.state = imageActive
	}
	for _, p := range positions {
		p.l.positions = append(p.l.positions, linkedPosition{res: img, pos: p.pos})
		c.counters.SetReferenceID(p.pos.id, corr)
		c.sendImageAvailable(img, p.l.registrationID, p.pos.id)
	}
	return nil
}

// initialWindow is rcv-wnd when given, else the driver's initial window.
func (c *conductor) initialWindow(rcvWnd int) int {
	if rcvWnd > 0 {
		return rcvWnd
	}
	return c.opts.InitialWindowLength
}

// delayGenerator picks how an image waits before NAKing
// (DriverConductor.resolveDelayGenerator).
func (c *conductor) delayGenerator(ch *udpChannel, group, reliable bool) delayGenerator {
	switch {
	case !reliable:
		return staticDelay(0, 0)
	case group:
		return optimalDelay(int64(c.opts.NakMulticastMaxBackoff), c.opts.NakMulticastGroupSize)
	case ch.hasNakDelay:
		retry := max(ch.nakDelayNs, minNakUnicastDelayNs) * int64(c.opts.NakUnicastRetryDelayRatio)
		return staticDelay(ch.nakDelayNs, retry)
	}
	return staticDelay(int64(c.opts.NakUnicastDelay), int64(c.opts.NakUnicastDelay)*int64(c.opts.NakUnicastRetryDelayRatio))
}

// insertPacket writes a datagram into the image (PublicationImage.
// insertPacket): a term id before the initial one is dropped, a datagram
// that is not a run of frames fitting the term at its offset is dropped
// and counted as invalid (wire.DataPacketLength), and one past the window
// the last status message allowed or behind it is dropped and counted; a
// heartbeat only refreshes liveness and the high-water mark, and carries
// the end of stream.
func (img *publicationImage) insertPacket(r *receiver, termID, termOffset int32, p []byte, from netip.AddrPort, ti int) {
	if termID-img.initialTermID < 0 || img.rejection != "" {
		return
	}
	length := wire.DataPacketLength(p, termOffset, img.termLength)
	if length < 0 {
		r.counters.AddValue(sysInvalidPackets, 1)
		return
	}
	heartbeat := length == 0
	packetPos := logbuffer.ComputePosition(termID, int(termOffset), img.bitsToShift, img.initialTermID)
	proposed := packetPos + int64(length)
	// The overrun check counts the bytes the datagram writes: a closing
	// PAD is its header only, and the sender counts it so against its
	// limit (scanForAvailability), so its padding may run past the window
	// the last status message allowed. Java and C check the padded length
	// and refuse such a PAD (a gap, a NAK, a retransmit at the term's end).
	// rcv-hwm still moves by the padded length, as theirs does.
	written := int64(len(p))
	if heartbeat {
		written = 0
	}
	if packetPos+written > img.lastOverrunLimit {
		r.counters.AddValue(sysFlowControlOverRuns, 1)
		return
	}
	now := r.nowNs
	if heartbeat {
		bottom := max(0, img.lastSMPosition-int64(img.termLength))
		if packetPos < bottom {
			r.counters.AddValue(sysFlowControlUnderRuns, 1)
			return
		}
		img.lastPacketNs = now
		img.connLastFrameNs = now
		if img.conns != nil {
			img.trackConnection(ti, from, now)
		}
		if wire.IsEndOfStream(p) {
			img.connEOSPosition, img.connEOS = packetPos, true
			if img.conns != nil {
				img.conns[ti].eos, img.conns[ti].eosPosition = true, packetPos
			}
			if !img.isEndOfStream && img.allConnectedEOS() {
				img.connEOSPosition = img.eosPosition()
				if wire.IsRevoked(p) {
					img.log.meta[logbuffer.IsPublicationRevokedOffset] = 1
					r.counters.AddValue(sysPublicationImagesRevoked, 1)
				}
				// End of stream: written by this goroutine (release); the
				// subscribers compare their position with it.
				shm.StoreInt64Release(img.log.meta, logbuffer.EndOfStreamPositionOffset, img.connEOSPosition)
				img.isEndOfStream = true
			}
		}
		r.proposeMax(img.hwm, proposed)
		r.counters.AddValue(sysHeartbeatsReceived, 1)
		return
	}
	if packetPos < img.lastSMPosition {
		r.counters.AddValue(sysFlowControlUnderRuns, 1)
		if packetPos >= img.lastSMPosition-int64(img.windowLength) {
			img.connLastFrameNs = now
			if img.conns != nil {
				img.trackConnection(ti, from, now)
			}
		}
		return
	}
	img.lastPacketNs = now
	img.connLastFrameNs = now
	if img.conns != nil {
		img.trackConnection(ti, from, now)
	}
	term := img.log.terms[logbuffer.IndexByPosition(packetPos, img.bitsToShift)]
	insertFrames(term, int(termOffset), p)
	r.proposeMax(img.hwm, proposed)
}

// insertFrames copies a datagram into a term at offset unless something
// is there already (a duplicate): the payload, then the header from its
// last word to its first, whose frame length word is stored last with
// release, so a subscriber that sees the length sees the frame
// (TermRebuilder.insert). A datagram holding several frames is copied as
// one block: the first frame's length is written last.
func insertFrames(term []byte, offset int, p []byte) {
	if shm.GetInt32(term, offset) != 0 {
		return
	}
	copy(term[offset+logbuffer.HeaderLength:offset+len(p)], p[logbuffer.HeaderLength:])
	shm.PutInt64(term, offset+24, shm.GetInt64(p, 24))
	shm.PutInt64(term, offset+16, shm.GetInt64(p, 16))
	shm.PutInt64(term, offset+8, shm.GetInt64(p, 8))
	// Frame length and header word: the subscriber polls with acquire.
	shm.StoreInt64Release(term, offset, shm.GetInt64(p, 0))
}

// proposeMax raises a position counter, never lowers it.
func (x *driverContext) proposeMax(pos position, v int64) {
	if v > x.subPosition(pos) {
		x.setPosition(pos, v)
	}
}

// trackRebuild is the conductor's pass over an image
// (PublicationImage.trackRebuild): rcv-pos moves to the end of the
// complete frames, gaps are timed for NAKs, and a status message is
// scheduled when the subscribers moved a quarter window past the last.
func (img *publicationImage) trackRebuild(c *conductor, nowNs int64) int {
	if !img.isRebuilding {
		return 0
	}
	hwm := c.subPosition(img.hwm)
	minSub, maxSub := int64(math.MaxInt64), int64(0)
	for _, s := range img.subs {
		v := c.subPosition(s)
		minSub = min(minSub, v)
		maxSub = max(maxSub, v)
	}
	rebuildPos := max(c.subPosition(img.rebuild), maxSub)
	term := img.log.terms[logbuffer.IndexByPosition(rebuildPos, img.bitsToShift)]
	offset, _ := img.loss.scan(term, rebuildPos, hwm, nowNs, img.termMask, img.bitsToShift, img.initialTermID, img.onGap)
	c.proposeMax(img.rebuild, rebuildPos-(rebuildPos&img.termMask)+int64(offset))
	window := img.windowLength
	if minSub > img.nextSMPosition+int64(window/4) || window != img.nextSMWindow {
		img.cleanBufferTo(minSub - int64(img.termLength))
		img.nextSMPosition, img.nextSMWindow = minSub, window
		img.smScheduled = true
		return 1
	}
	return 0
}

// cleanBufferTo zeroes the image's log behind the subscribers, a term at
// a time, so the next lap finds zeroed frames (PublicationImage.cleanBufferTo).
func (img *publicationImage) cleanBufferTo(position int64) {
	clean := img.cleanPosition
	if position <= clean {
		return
	}
	term := img.log.terms[logbuffer.IndexByPosition(clean, img.bitsToShift)]
	offset := int(clean & img.termMask)
	length := min(int(position-clean), img.termLength-offset)
	clear(term[offset : offset+length-8])
	shm.StoreInt64Release(term, offset+length-8, 0)
	img.cleanPosition = clean + int64(length)
}

// onGapDetected records a gap whose NAK timer fired: the receiver NAKs it
// (or fills it, unreliable), and the loss report counts it once.
func (img *publicationImage) onGapDetected(termID, termOffset, length int32) {
	img.lossPending = true
	img.lossTermID, img.lossOffset, img.lossLength = termID, termOffset, length
	end := img.reportOffset + img.reportLength
	switch {
	case termID != img.reportTermID || termOffset >= end:
		img.reportBytes += int64(length)
		img.setReported(termID, termOffset, length)
	case termOffset+length > end:
		img.reportBytes += int64(length - (end - termOffset))
		img.setReported(termID, termOffset, length)
	}
}

func (img *publicationImage) setReported(termID, termOffset, length int32) {
	img.reportTermID, img.reportOffset, img.reportLength = termID, termOffset, length
	img.reportObservations++
}

// isConnected: a packet within the image liveness timeout, and the
// receiver's release not triggered.
func (img *publicationImage) isConnected(nowNs int64) bool {
	return img.lastPacketNs+img.livenessNs-nowNs >= 0 && !img.releaseTriggered
}

// checkEOSForDrain starts draining once the end of stream was reached and
// the log is complete up to it.
func (img *publicationImage) checkEOSForDrain(r *receiver, nowNs int64) {
	if img.isSendingEOSSM || !img.isEndOfStream || img.state != imageActive {
		return
	}
	if r.subPosition(img.rebuild) == r.subPosition(img.hwm) {
		img.isRebuilding = false
		img.stateChangeNs = nowNs
		img.isSendingEOSSM = true
		img.nextSMDeadlineNs = nowNs - 1
		img.state = imageDraining
	}
}

// deactivate starts an active image's draining (no more data is taken):
// it sends end-of-stream status messages unless the stream ended and is
// not complete.
func (img *publicationImage) deactivate(x *driverContext) {
	if img.state != imageActive {
		return
	}
	img.isRebuilding = false
	img.stateChangeNs = x.nowNs
	if !img.isSendingEOSSM {
		img.isSendingEOSSM = !img.isEndOfStream || x.subPosition(img.rebuild) == x.subPosition(img.hwm)
	}
	if img.isSendingEOSSM {
		img.nextSMDeadlineNs = x.nowNs - 1
	}
	img.state = imageDraining
}

// sendPendingStatusMessage is the receiver's pass over an image
// (PublicationImage.sendPendingStatusMessage): an ERR frame at each status
// interval if the image was rejected; otherwise RSP_SETUP while a response
// session waits to connect, and a status message when one was scheduled
// or the interval passed.
func (img *publicationImage) sendPendingStatusMessage(r *receiver, nowNs int64) int {
	timedOut := img.smEnabled && img.nextSMDeadlineNs-nowNs < 0
	if img.rejection != "" {
		if !timedOut {
			return 0
		}
		r.errFrame = wire.AppendErr(r.errFrame[:0], img.sessionID, img.streamID, img.ep.receiverID, img.ep.groupTag,
			img.ep.hasGroup, int32(aeron.ErrorCodeImageRejected), img.rejection)
		r.counters.AddValue(sysErrorFramesSent, 1)
		img.sendToSources(r.driverContext, r.errFrame)
		img.nextSMDeadlineNs = nowNs + img.smTimeoutNs
		return 1
	}
	if timedOut && img.hasResponseSession {
		b := r.ctl[:wire.RspSetupLength]
		wire.PutRspSetup(b, img.sessionID, img.streamID, img.responseSessionID)
		img.sendToSources(r.driverContext, b)
	}
	if !img.smScheduled && !timedOut {
		return 0
	}
	pos := img.nextSMPosition
	f := wire.SMFields{SessionID: img.sessionID, StreamID: img.streamID,
		TermID:     logbuffer.ComputeTermIDFromPosition(pos, img.bitsToShift, img.initialTermID),
		TermOffset: int32(pos & img.termMask), Window: img.nextSMWindow, ReceiverID: img.ep.receiverID,
		GroupTag: img.ep.groupTag, HasGroupTag: img.ep.hasGroup}
	if img.isSendingEOSSM {
		f.Flags = wire.SMFlagEndOfStream
	}
	n := wire.PutSM(r.ctl[:], &f)
	img.sendToSources(r.driverContext, r.ctl[:n])
	r.counters.AddValue(sysStatusMessagesSent, 1)
	img.smScheduled = false
	img.lastSMPosition = pos
	img.lastOverrunLimit = pos + int64(img.termLength>>1)
	img.nextSMDeadlineNs = nowNs + img.smTimeoutNs
	img.updateActiveTransportCount(nowNs)
	return 1
}

// updateActiveTransportCount stores in the log how many of the image's
// sources sent a frame within the liveness timeout (one per destination
// of a multi-destination subscription).
func (img *publicationImage) updateActiveTransportCount(nowNs int64) {
	n := int32(0)
	if img.conns != nil {
		n = img.activeConnections(nowNs)
	} else if img.connLastFrameNs+img.livenessNs-nowNs > 0 {
		n = 1
	}
	if shm.GetInt32(img.log.meta, logbuffer.ActiveTransportCountOffset) != n {
		// Written by the driver only; clients read it with acquire.
		shm.StoreInt32Release(img.log.meta, logbuffer.ActiveTransportCountOffset, n)
	}
}

// processPendingLoss sends the NAK for a gap whose timer fired, or, for an
// unreliable subscription, pads the gap (PublicationImage.processPendingLoss).
func (img *publicationImage) processPendingLoss(r *receiver) int {
	if img.reportObservations > 0 {
		r.reportLoss(img)
	}
	if !img.lossPending || img.log.meta[logbuffer.IsPublicationRevokedOffset] != 0 {
		return 0
	}
	img.lossPending = false
	if img.reliable {
		b := r.ctl[:wire.NakLength]
		wire.PutNak(b, img.sessionID, img.streamID, img.lossTermID, img.lossOffset, img.lossLength)
		img.sendToSources(r.driverContext, b)
		r.counters.AddValue(sysNaksSent, 1)
		r.counters.AddValue(img.naksID, 1)
	} else {
		term := img.log.terms[logbuffer.IndexByTermCount(int64(img.lossTermID-img.initialTermID))]
		if fillGap(img.log.meta, term, img.lossTermID, int(img.lossOffset), int(img.lossLength)) {
			r.counters.AddValue(sysLossGapFills, 1)
		}
	}
	return 1
}

// fillGap pads a gap that is still all zeros (TermGapFiller.tryFillGap).
func fillGap(meta, term []byte, termID int32, offset, length int) bool {
	for i := offset + length - logbuffer.FrameAlignment; i >= offset; i -= logbuffer.FrameAlignment {
		if shm.GetInt32(term, i) != 0 {
			return false
		}
	}
	resetHeader(meta, term, offset, termID, length)
	return true
}

// onTimeEvent is the image's part of the conductor's tick
// (PublicationImage.onTimeEvent). It reports the end of the image's life.
func (img *publicationImage) onTimeEvent(c *conductor, nowNs int64) bool {
	revoked := img.log.meta[logbuffer.IsPublicationRevokedOffset] != 0
	switch img.state {
	case imageActive:
		if revoked {
			img.state = imageDraining
		} else {
			img.checkUntethered(c, nowNs)
		}
	case imageDraining:
		if img.isDrained(c) && img.stateChangeNs+smEOSMultiple*img.smTimeoutNs-nowNs < 0 || revoked {
			if revoked {
				img.isRebuilding = false
				img.isSendingEOSSM = true
				img.nextSMDeadlineNs = nowNs - 1
			}
			img.transitionToLinger(c)
			img.releaseTriggered = true
			img.ep.imageRefCount--
			c.tryCloseReceiveEndpoint(img.ep)
			img.stateChangeNs = nowNs
			img.state = imageLinger
		}
	case imageLinger:
		if len(img.subs) == 0 || img.stateChangeNs+img.livenessNs-nowNs < 0 {
			for _, l := range c.subscriptionLinks {
				l.unlink(img)
			}
			img.stateChangeNs = nowNs
			img.state = imageDone
		}
	}
	return img.receiverReleased && img.state == imageDone
}

// transitionToLinger tells the linked subscriptions the image is
// gone; unless the last of them declines to rejoin, its session may
// come back at once (DriverConductor.transitionToLinger).
func (img *publicationImage) transitionToLinger(c *conductor) {
	rejoin := true
	for _, l := range c.subscriptionLinks {
		if l.linked(img) != nil {
			rejoin = l.rejoin
			c.notifyUnavailableImage(img.correlationID, l)
		}
	}
	if rejoin {
		if s := img.ep.streams[img.streamID]; s != nil && s.states[img.sessionID] == sessionOnCoolDown {
			delete(s.states, img.sessionID)
		}
	}
}

func (img *publicationImage) isDrained(c *conductor) bool {
	rebuild := c.subPosition(img.rebuild)
	for _, s := range img.subs {
		if c.subPosition(s) < rebuild {
			return false
		}
	}
	return true
}

// joinPosition is where a new subscriber of the image starts: the
// slowest of rcv-pos and the current subscribers.
func (img *publicationImage) joinPosition(c *conductor) int64 {
	pos := c.subPosition(img.rebuild)
	for _, s := range img.subs {
		pos = min(pos, c.subPosition(s))
	}
	return pos
}

func (img *publicationImage) isAcceptingSubscriptions(c *conductor) bool {
	if len(img.subs) == 0 {
		return false
	}
	return img.state == imageInit || img.state == imageActive || img.state == imageDraining && !img.isDrained(c)
}

func (img *publicationImage) checkUntethered(c *conductor, nowNs int64) {
	if len(img.untether) == 0 {
		return
	}
	maxConsumer := int64(0)
	for _, s := range img.subs {
		maxConsumer = max(maxConsumer, c.subPosition(s))
	}
	w := int64(img.nextSMWindow)
	c.checkUntethered(img, &img.untether, &img.subs, maxConsumer-w+w>>2, img.untetherW, img.untetherL, img.untetherR, nowNs)
}

// removeSubscriber drops a subscription's position from an image.
func (img *publicationImage) removeSubscriber(c *conductor, l *subscriptionLink, lp *linkedPosition) {
	img.subs = removePosition(img.subs, lp.pos.id)
	if !lp.freed {
		lp.freed = true
		c.freeCounter(lp.pos.id)
	}
	if !l.tether {
		img.untether = removeUntethered(img.untether, l)
	}
	if len(img.subs) == 0 {
		img.isRebuilding = false
	}
}

// closeImage frees an image at the end of its life: its counters now,
// its log on a later cycle. The log stays in the images length until the
// releaser has freed it (freeEndOfLife).
func (c *conductor) closeImage(img *publicationImage) {
	c.freeCounter(img.hwm.id)
	c.freeCounter(img.rebuild.id)
	c.freeCounter(img.naksID)
	c.freeSubscriberCounters(&img.subs, img.untether)
	c.endOfLife = append(c.endOfLife, img.log)
}

// reject stops taking a UDP image's data: it sends ERR frames
// instead of status messages until it times out (PublicationImage.reject).
func (img *publicationImage) reject(c *conductor, reason string) {
	img.rejection = reason
}

func (img *publicationImage) String() string {
	return fmt.Sprintf("PublicationImage{state=%d, sourceIdentity='%s', streamId=%d, sessionId=%d}",
		img.state, img.sourceIdentity, img.streamID, img.sessionID)
}
