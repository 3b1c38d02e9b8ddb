package driver

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"strconv"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/internal/command"
	"github.com/goblin-kv/goblin/aeron/internal/counters"
	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/aeron/internal/wire"
	"github.com/goblin-kv/goblin/internal/shm"
)

// The conductor's UDP commands (DriverConductor.onAddNetworkPublication,
// onAddNetworkSubscription, onAddSpySubscription and the destination
// commands), and the conductor's half of network publications and images.

// onAddNetworkPublication adds a UDP publication or a handle on one.
func (d *Driver) onAddNetworkPublication(channel string, streamID int32, corr, clientID int64, exclusive bool) error {
	u, err := parseURI(channel)
	if err != nil {
		return err
	}
	if u.Spy {
		return invalidChannel("Aeron spies are invalid as publications: channel=%s", channel)
	}
	ch, err := d.parseUDPChannel(u, false)
	if err != nil {
		return err
	}
	params, err := d.publicationParams(u, streamID, ch.canonical)
	if err != nil {
		return err
	}
	if !ch.isMultiDestination() && ch.hasExplicitEndpoint && ch.remoteData.Port() == 0 {
		return genericError(illegalArgument, "endpoint has port=0 for publication: channel=%s", channel)
	}
	if ch.mode == controlDynamic && !ch.hasExplicitControl {
		return genericError(illegalArgument, "'control-mode=dynamic' requires that 'control' parameter is set, channel=%s", channel)
	}
	if ch.hasExplicitControl && !ch.hasExplicitEndpoint && ch.mode == controlNone {
		return genericError(illegalArgument,
			"'control' parameter requires that either 'endpoint' or 'control-mode' is specified, channel=%s", channel)
	}
	if err := d.validateResponseSubscription(params); err != nil {
		return err
	}
	ep, err := d.getOrCreateSendEndpoint(params, ch, corr)
	if err != nil {
		return err
	}
	var pub *networkPublication
	if !exclusive {
		for _, p := range d.netPublications {
			if p.streamID == streamID && p.ep == ep && p.state == pubActive && !p.exclusive &&
				p.responseCorrelationID == params.responseCorrelationID {
				pub = p
				break
			}
		}
	}
	respImage, err := d.findResponseImage(params)
	if err != nil {
		return err
	}
	isNew := pub == nil
	if isNew {
		if d.sessionActive(params.sessionID, streamID, ch.canonical) {
			return invalidChannel("existing publication has clashing sessionId=%d for streamId=%d channel=%s",
				params.sessionID, streamID, channel)
		}
		if pub, err = d.newNetworkPublication(corr, clientID, streamID, channel, ch, ep, params, exclusive); err != nil {
			return err
		}
	} else {
		if err := confirmMatch(u, params, &pub.logPublication); err != nil {
			return err
		}
		if params.ssc != pub.ssc {
			return genericError(illegalState, "existing publication has different spiesSimulateConnection: existing=%t requested=%t existingChannel=%s channel=%s",
				pub.ssc, params.ssc, pub.channel, channel)
		}
	}
	c, err := d.getOrAddClient(clientID)
	if err != nil {
		return err
	}
	pub.incRef()
	d.publicationLinks = append(d.publicationLinks, &publicationLink{registrationID: corr, client: c, net: pub})
	typeID := command.OnPublicationReady
	if exclusive {
		typeID = command.OnExclusivePublicationReady
	}
	d.rsp = command.AppendPublicationBuffersReady(d.rsp[:0], corr, pub.registrationID, pub.sessionID, streamID,
		pub.pubLmt.id, ep.statusID, pub.log.path)
	d.tx.Transmit(typeID, d.rsp)
	if isNew {
		d.linkSpies(pub)
	}
	if respImage != nil {
		respImage.responseSessionID, respImage.hasResponseSession = pub.sessionID, true
	}
	return nil
}

// validateResponseSubscription: a request publication's
// response-correlation-id must name a subscription of this driver.
func (d *Driver) validateResponseSubscription(p *publicationParams) error {
	if p.isResponse || p.responseCorrelationID == -1 {
		return nil
	}
	for _, l := range d.subscriptionLinks {
		if l.registrationID == p.responseCorrelationID {
			return nil
		}
	}
	return genericError(illegalArgument, "unable to find response subscription for response-correlation-id=%d",
		p.responseCorrelationID)
}

// findResponseImage: a response publication names the image of the
// request stream it answers, whose SETUP asked for a response channel.
func (d *Driver) findResponseImage(p *publicationParams) (*publicationImage, error) {
	if !p.isResponse {
		return nil, nil
	}
	if p.responseCorrelationID == -1 {
		return nil, genericError(illegalArgument, "control-mode=response was specified, but no response-correlation-id set")
	}
	if p.responseCorrelationID == prototypeCorrelationValue {
		return nil, nil
	}
	for _, img := range d.images {
		if img.correlationID == p.responseCorrelationID {
			if img.setupFlags&wire.SetupFlagSendResponseSetup == 0 {
				return nil, genericError(illegalArgument, "image.correlationId=%d did not request a response channel",
					p.responseCorrelationID)
			}
			return img, nil
		}
	}
	return nil, genericError(illegalArgument, "image.correlationId=%d not found", p.responseCorrelationID)
}

// responseSetup: an RSP_SETUP came for a request publication; its
// response subscription now wants the server's response session, and asks
// the server's response publication for SETUP (DriverConductor.responseSetup).
func (d *Driver) responseSetup(responseCorrelationID int64, responseSessionID int32) {
	for _, l := range d.subscriptionLinks {
		if l.registrationID != responseCorrelationID || l.kind != subNetwork {
			continue
		}
		if l.hasSessionID {
			d.requestSetup(l.ep, l.streamID, l.sessionID)
		} else {
			l.sessionID, l.hasSessionID = responseSessionID, true
			d.addNetworkSubscriptionToReceiver(l)
			l.ep.responseByStream[l.streamID]--
			if l.ep.responseByStream[l.streamID] <= 0 {
				delete(l.ep.responseByStream, l.streamID)
			}
		}
		return
	}
}

// requestSetup sends a setup-eliciting status message to an explicit
// control address (Receiver.onRequestSetup).
func (d *Driver) requestSetup(e *receiveEndpoint, streamID, sessionID int32) {
	if to, ok := e.explicitControl(); ok {
		e.sendSetupEliciting(&d.driverContext, to, sessionID, streamID)
	}
}

// responseConnected: a response publication's first receiver came; the
// request image stops sending RSP_SETUP.
func (d *Driver) responseConnected(responseCorrelationID int64) {
	for _, img := range d.images {
		if img.correlationID == responseCorrelationID && img.setupFlags&wire.SetupFlagSendResponseSetup != 0 {
			img.hasResponseSession = false
		}
	}
}

// findSendEndpoint finds the send endpoint a channel shares: by tag, then
// by canonical form.
func (d *Driver) findSendEndpoint(ch *udpChannel) (*sendEndpoint, error) {
	if ch.hasTag {
		for _, e := range d.sendEndpoints {
			if e.ch.hasTag && e.ch.tag == ch.tag {
				return e, nil
			}
		}
		if !ch.hasExplicitControl && ch.mode != controlManual && !ch.uri.has(aeron.ParamEndpoint) {
			return nil, invalidChannel("URI must have explicit control, endpoint, or be manual control-mode when original: channel=%s",
				ch.uri.raw)
		}
	}
	e := d.sendEndpoints[ch.canonical]
	if e != nil && e.ch.hasTag && ch.hasTag && e.ch.tag != ch.tag {
		e = nil
	}
	return e, nil
}

// socketBuffers are the SO_RCVBUF and SO_SNDBUF a channel's socket asks
// for: its own so-rcvbuf/so-sndbuf, else the driver's.
func (d *Driver) socketBuffers(ch *udpChannel) (rcv, snd int) {
	rcv, snd = ch.rcvbuf, ch.sndbuf
	if rcv == 0 {
		rcv = d.opts.SocketRcvbuf
	}
	if snd == 0 {
		snd = d.opts.SocketSndbuf
	}
	return rcv, snd
}

// checkBufferMatch refuses a channel whose so-rcvbuf/so-sndbuf differ
// from the endpoint it would share (validateChannelBufferLength).
func checkBufferMatch(name string, proposed, existing int, channel, existingChannel string) error {
	if proposed != 0 && proposed != existing {
		ex := strconv.Itoa(existing)
		if existing == 0 {
			ex = "OS default"
		}
		return invalidChannel("%s=%d does not match existing value of %s: existingChannel=%s channel=%s",
			name, proposed, ex, existingChannel, channel)
	}
	return nil
}

// getOrCreateSendEndpoint finds or opens the channel's send endpoint
// with its snd-channel and snd-local-sockaddr counters
// (DriverConductor.getOrCreateSendChannelEndpoint).
func (d *Driver) getOrCreateSendEndpoint(p *publicationParams, ch *udpChannel, corr int64) (*sendEndpoint, error) {
	e, err := d.findSendEndpoint(ch)
	if err != nil {
		return nil, err
	}
	rcv, snd := d.socketBuffers(ch)
	if e != nil {
		if err := d.checkMTUForSndbuf(p.mtu, e.ch.sndbuf, ch.uri.raw, e.ch.uri.raw); err != nil {
			return nil, err
		}
		if err := checkBufferMatch(aeron.ParamSocketRcvBuf, ch.rcvbuf, e.ch.rcvbuf, ch.uri.raw, e.ch.uri.raw); err != nil {
			return nil, err
		}
		return e, checkBufferMatch(aeron.ParamSocketSndBuf, ch.sndbuf, e.ch.sndbuf, ch.uri.raw, e.ch.uri.raw)
	}
	e = &sendEndpoint{ch: ch, pubs: map[uint64]*networkPublication{}, mdcID: -1, addrID: -1}
	if e.statusID, err = d.allocateChannelStatus("snd-channel", counters.TypeSendChannelStatus, corr, ch.uri.raw); err != nil {
		return nil, err
	}
	fail := func(err error) (*sendEndpoint, error) {
		d.closeSendEndpointCounters(e)
		return nil, err
	}
	if e.addrID, err = d.allocateLocalSocketAddress("snd-local-sockaddr", corr, e.statusID); err != nil {
		return fail(err)
	}
	if ch.isMultiDestination() {
		if e.mdcID, err = d.allocateChannelStatus("mdc-num-dest", counters.TypeMDCDestinations, corr, ch.uri.raw); err != nil {
			return fail(err)
		}
	}
	if err := d.checkMTUForSndbuf(p.mtu, ch.sndbuf, ch.uri.raw, ""); err != nil {
		return fail(err)
	}
	if err := d.openSendEndpoint(e, rcv, snd); err != nil {
		d.counters.SetValue(e.statusID, endpointErrored)
		return fail(genericError(aeronException, "channel error - %v: %s", err, ch.uri.raw))
	}
	bound := hostString(e.controlSocket().LocalAddr())
	d.setLocalSocketAddress(e.addrID, bound)
	d.counters.AppendLabel(e.statusID, []byte(bound))
	d.counters.SetValue(e.statusID, endpointActive)
	if err := d.poller.Add(e.controlSocket()); err != nil {
		d.closeSendSockets(e)
		return fail(err)
	}
	d.sendEndpoints[ch.canonical] = e
	d.sender.endpoints = append(d.sender.endpoints, e)
	return e, nil
}

// checkMTUForSndbuf refuses an MTU larger than the socket's send buffer
// (PublicationParams.validateMtuForSndbuf).
func (d *Driver) checkMTUForSndbuf(mtu, channelSndbuf int, channel, existing string) error {
	snd, os := socketBufferFor(channelSndbuf, d.opts.SocketSndbuf, d.osb.defaultSndbuf)
	if mtu > snd {
		return genericError(illegalState, "MTU greater than SO_SNDBUF for channel: mtu=%d so-sndbuf=%d%s%s channel=%s",
			mtu, snd, os, existingChannelNote(existing), channel)
	}
	return nil
}

// socketBufferFor is the socket buffer a channel gets: its own setting,
// else the driver's, else the OS default (then note says so, for the
// error messages of checkMTUForSndbuf and checkWindowForRcvbuf).
func socketBufferFor(channel, driver int, osDefault int32) (size int, note string) {
	if channel != 0 {
		return channel, ""
	}
	if driver != 0 {
		return driver, ""
	}
	return int(osDefault), " (OS default)"
}

// existingChannelNote names the endpoint a channel would share in an
// error message, or is empty for a new endpoint.
func existingChannelNote(existing string) string {
	if existing == "" {
		return ""
	}
	return " existingChannel=" + existing
}

func (d *Driver) closeSendSockets(e *sendEndpoint) {
	if e.ctl != nil {
		d.poller.Remove(e.ctl)
		e.ctl.Close()
	}
	if e.sock != nil {
		d.poller.Remove(e.sock)
		e.sock.Close()
	}
}

func (d *Driver) closeSendEndpointCounters(e *sendEndpoint) {
	for _, id := range []int32{e.statusID, e.addrID, e.mdcID} {
		if id >= 0 {
			d.freeCounter(id)
		}
	}
}

// closeSendEndpoint closes an endpoint no publication uses.
func (d *Driver) closeSendEndpoint(e *sendEndpoint) {
	d.counters.SetValue(e.statusID, endpointClosing)
	d.closeSendSockets(e)
	d.closeSendEndpointCounters(e)
	delete(d.sendEndpoints, e.ch.canonical)
	for i, x := range d.sender.endpoints {
		if x == e {
			d.sender.endpoints = append(d.sender.endpoints[:i], d.sender.endpoints[i+1:]...)
			break
		}
	}
}

// allocateChannelStatus allocates a snd-channel or rcv-channel counter
// (ChannelEndpointStatus.allocate): key = the channel, label
// "<name>: <channel> " (the bound address is appended when it opens).
func (d *Driver) allocateChannelStatus(name string, typeID int32, registrationID int64, channel string) (int32, error) {
	const maxChannel = counters.MaxKeyLength - 4
	key := command.AppendString(d.scratch[:0], channel[:min(len(channel), maxChannel)])
	labelStart := len(key)
	b := append(append(key, name...), ": "...)
	b = append(b, channel[:min(len(channel), counters.MaxLabelLength-(len(b)-labelStart))]...)
	if len(b)-labelStart < counters.MaxLabelLength {
		b = append(b, ' ')
	}
	d.scratch = b[:0]
	id, err := d.counters.Allocate(typeID, b[:labelStart], b[labelStart:], d.epochMs)
	if err != nil {
		return -1, counterFull(err)
	}
	d.counters.SetRegistrationID(id, registrationID)
	return id, nil
}

// allocateLocalSocketAddress allocates a snd-local-sockaddr or
// rcv-local-sockaddr counter (LocalSocketAddressStatus.allocate): key =
// the channel status counter id and an address length of 0 until bound.
func (d *Driver) allocateLocalSocketAddress(name string, registrationID int64, statusID int32) (int32, error) {
	key := command.AppendInt32(command.AppendInt32(d.scratch[:0], statusID), 0)
	labelStart := len(key)
	b := append(append(key, name...), ": "...)
	b = strconv.AppendInt(b, int64(statusID), 10)
	b = append(b, ' ')
	d.scratch = b[:0]
	id, err := d.counters.Allocate(counters.TypeLocalSocketAddress, b[:labelStart], b[labelStart:], d.epochMs)
	if err != nil {
		return -1, counterFull(err)
	}
	d.counters.SetRegistrationID(id, registrationID)
	return id, nil
}

// setLocalSocketAddress records the bound address in the key and label
// and marks the counter ACTIVE (LocalSocketAddressStatus.updateBindAddress).
func (d *Driver) setLocalSocketAddress(id int32, addr string) {
	key := d.counters.Key(id)
	n := copy(key[8:], addr)
	shm.PutInt32(key, 4, int32(n))
	d.counters.AppendLabel(id, []byte(addr))
	d.counters.SetValue(id, endpointActive)
}

// newNetworkPublication creates a UDP publication's log, counters, flow
// control and retransmit handler and registers it with the sender
// (DriverConductor.newNetworkPublication).
func (d *Driver) newNetworkPublication(corr, clientID int64, streamID int32, channel string, ch *udpChannel,
	ep *sendEndpoint, params *publicationParams, exclusive bool) (*networkPublication, error) {
	if params.isResponse && params.responseCorrelationID == prototypeCorrelationValue {
		params.termLength = logbuffer.MinTermLength
	}
	fc, err := d.newFlowControl(ch, corr, -1, params.sessionID, streamID)
	if err != nil {
		return nil, err
	}
	log, err := d.newRawLog(filepath.Join(d.opts.Dir, publicationsDir), corr, params.termLength, params.sparse)
	if err != nil {
		fc.close(d)
		return nil, err
	}
	logType := logbuffer.TypeConcurrent
	if exclusive {
		logType = logbuffer.TypeExclusive
	}
	log.initMetadata(&logMetadata{
		logType: logType, sessionID: params.sessionID, streamID: streamID, initialTermID: params.initialTermID,
		termOffset: params.termOffset, mtu: int32(params.mtu), registrationID: corr,
		socketRcvbuf: int32(ep.controlSocket().RcvBuf()), socketSndbuf: int32(ep.sock.SndBuf()),
		publicationWindow: int32(params.window), sparse: params.sparse, group: ch.hasGroupSemantics(),
		isResponse: params.isResponse, signalEOS: params.signalEOS, ssc: params.ssc, maxResend: int32(params.maxResend),
		lingerNs: params.lingerNs, untetheredWindowLimitNs: params.untetheredWindowLimitNs,
		untetheredLingerNs: params.untetheredLingerNs, untetheredRestingNs: params.untetheredRestingNs,
		entityTag: params.entityTag, responseCorrelationID: params.responseCorrelationID,
	}, d.opts.FilePageSize, d.osb)
	log.initTails(params.initialTermID, params.hasPosition, params.termID, params.termOffset)
	posName := "pub-pos (concurrent)"
	if exclusive {
		posName = "pub-pos (exclusive)"
	}
	names := [6]struct {
		name string
		typ  int32
	}{{posName, counters.TypePublisherPosition}, {"pub-lmt", counters.TypePublisherLimit},
		{"snd-pos", counters.TypeSenderPosition}, {"snd-lmt", counters.TypeSenderLimit},
		{"snd-bpe", counters.TypeSenderBPE}, {"snd-naks-received", counters.TypeSenderNaksReceived}}
	var ids [6]int32
	for i, n := range names {
		if ids[i], err = d.allocateStreamCounter(n.name, n.typ, clientID, corr, params.sessionID, streamID, channel, -1); err != nil {
			for _, id := range ids[:i] {
				d.freeCounter(id)
			}
			d.freeRawLog(log)
			fc.close(d)
			return nil, err
		}
	}
	p := &networkPublication{
		logPublication: d.newLogPublication(corr, channel, streamID, exclusive, params, log, ids[0], ids[1]),
		sender:         &d.sender, ep: ep, ch: ch, signalEOS: params.signalEOS, isResponse: params.isResponse, ssc: params.ssc,
		lingerNs: params.lingerNs, connTimeout: int64(d.opts.PublicationConnectionTimeout),
		sndPos: d.positionOf(ids[2]), sndLmt: d.positionOf(ids[3]), bpeID: ids[4], naksReceivedID: ids[5],
		fc:         fc,
		retransmit: newRetransmitHandler(ch.hasGroupSemantics(), params.maxResend, int64(d.opts.RetransmitUnicastDelay), int64(d.opts.RetransmitUnicastLinger)),
	}
	if params.hasPosition {
		start := logbuffer.ComputePosition(params.termID, int(params.termOffset), p.bitsToShift, params.initialTermID)
		for _, pos := range []position{p.pubPos, p.pubLmt, p.sndPos, p.sndLmt} {
			d.setPosition(pos, start)
		}
	}
	now := d.nowNs
	p.timeOfLastDataOrHeartbeatNs = now - heartbeatIntervalNs - 1
	p.timeOfLastSetupNs = now - setupIntervalNs - 1
	p.lastConsumerPosition = p.senderPosition()
	p.cleanPosition = p.lastConsumerPosition
	p.timeOfLastActivityNs = now
	p.consumerChangedNs = now
	ep.refCount++
	d.netPublications = append(d.netPublications, p)
	d.sender.publications = append(d.sender.publications, p)
	ep.pubs[pubKey(p.sessionID, streamID)] = p
	d.activeSessions = append(d.activeSessions, sessionKey{params.sessionID, streamID, ch.canonical})
	return p, nil
}

func (d *Driver) findNetworkPublicationByTag(tag int64) *networkPublication {
	for _, p := range d.netPublications {
		if p.entityTag == tag && tag != invalidTag {
			return p
		}
	}
	return nil
}

// updateNetworkLimit moves pub-pos to the tail and pub-lmt to the slowest
// of the sender and the spies plus the window, cleaning the term before
// the one the limit leaves room for; unconnected, the publisher may not
// run ahead of the sender (NetworkPublication.updatePublisherPositionAndLimit).
func (d *Driver) updateNetworkLimit(p *networkPublication) int {
	if p.state != pubActive {
		return 0
	}
	producer := p.producerPosition()
	senderPos := p.senderPosition()
	d.setPosition(p.pubPos, producer)
	if p.hasSubscribers() {
		minConsumer := senderPos
		for _, s := range p.subs {
			minConsumer = min(minConsumer, d.subPosition(s))
		}
		newLimit := minConsumer + p.termWindow
		if newLimit > d.subPosition(p.pubLmt) {
			p.cleanBufferTo(minConsumer - int64(p.termLength))
			clean := p.cleanPosition
			dirtyTermID := logbuffer.ComputeTermIDFromPosition(clean, p.bitsToShift, p.initialTermID)
			activeTermID := logbuffer.ComputeTermIDFromPosition(newLimit, p.bitsToShift, p.initialTermID)
			gap := activeTermID - dirtyTermID
			if gap < 2 || gap == 2 && clean&int64(p.termLength-1) != 0 {
				d.setPosition(p.pubLmt, newLimit)
			}
			return 1
		}
		return 0
	}
	if d.subPosition(p.pubLmt) > senderPos {
		p.updateConnected(false)
		d.setPosition(p.pubLmt, senderPos)
		p.cleanBufferTo(senderPos - int64(p.termLength))
		return 1
	}
	return 0
}

// networkPublicationTick is NetworkPublication.onTimeEvent; it reports the
// end of the publication's life.
func (d *Driver) networkPublicationTick(p *networkPublication, nowNs int64) bool {
	switch p.state {
	case pubActive:
		if p.isRevoked() {
			revoked := p.producerPosition()
			d.setPosition(p.pubLmt, revoked)
			shm.StoreInt64Release(p.log.meta, logbuffer.EndOfStreamPositionOffset, revoked)
			p.updateConnected(false)
			p.isEndOfStream = true
			d.cleanupSpies(p)
			p.state = pubLinger
			d.counters.AddValue(sysPublicationsRevoked, 1)
			break
		}
		d.checkSpyUntethered(p, nowNs)
		p.updateConnected(p.hasSubscribers())
		producer := p.producerPosition()
		d.setPosition(p.pubPos, producer)
		if !p.exclusive {
			d.checkForBlockedPublisher(&p.logPublication, producer, p.senderPosition(), nowNs)
		}
	case pubDraining:
		producer := p.producerPosition()
		d.setPosition(p.pubPos, producer)
		senderPos := p.senderPosition()
		if producer > senderPos {
			// No publisher is left: a claim without a header that reaches the
			// tail is a dead one (unblockLog).
			if unblockLog(p.log, senderPos, true) {
				d.counters.AddValue(sysUnblockedPublications, 1)
				break
			}
			if p.hasReceivers {
				break
			}
		} else {
			p.isEndOfStream = true
		}
		if d.spiesFinishedConsuming(p, producer) {
			p.timeOfLastActivityNs = nowNs
			p.state = pubLinger
		}
	case pubLinger:
		if p.refCount == 0 && (p.hasReceivedUnicastEOS || p.timeOfLastActivityNs+p.lingerNs-nowNs < 0) {
			d.cleanupNetworkPublication(p)
			p.timeOfLastActivityNs = nowNs
			p.state = pubDone
		}
	}
	return p.senderReleased
}

// decRefNetwork drops a publisher; the last one fixes the limit and the
// end of stream at the tail and starts draining (unless revoked).
func (d *Driver) decRefNetwork(p *networkPublication) {
	producer, last := d.dropPublisher(&p.logPublication)
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

// cleanupNetworkPublication takes a publication off its endpoint and the
// sender (which releases it), closes the endpoint if unused and ends its
// session (DriverConductor.cleanupPublication).
func (d *Driver) cleanupNetworkPublication(p *networkPublication) {
	p.ep.refCount--
	for i, x := range d.sender.publications {
		if x == p {
			d.sender.publications = append(d.sender.publications[:i], d.sender.publications[i+1:]...)
			break
		}
	}
	delete(p.ep.pubs, pubKey(p.sessionID, p.streamID))
	p.senderReleased = true
	if p.ep.refCount == 0 {
		d.closeSendEndpoint(p.ep)
	}
	d.removeSessionKey(sessionKey{p.sessionID, p.streamID, p.ch.canonical})
}

// closeNetworkPublication frees a publication at the end of its life:
// counters now, the log on a later cycle.
func (d *Driver) closeNetworkPublication(p *networkPublication) {
	for _, id := range []int32{p.pubPos.id, p.pubLmt.id, p.sndPos.id, p.sndLmt.id, p.bpeID, p.naksReceivedID} {
		d.freeCounter(id)
	}
	d.freeSubscriberCounters(&p.subs, p.untethered)
	p.fc.close(d)
	d.endOfLife = append(d.endOfLife, p.log)
}

// onPublicationError broadcasts an ERR frame a live receiver sent to the
// publication's publishers, and logs it as the Java driver warns.
func (d *Driver) onPublicationError(p *networkPublication, destinationRegistrationID int64, e wire.Err, from netip.AddrPort) {
	msg := string(e.Message())
	d.warn(fmt.Sprintf("WARN - onPublicationError: registrationId=%d, destinationRegistrationId=%d, sessionId=%d, "+
		"streamId=%d, receiverId=%d, groupId=%d, errorCode=%d, errorMessage=%s",
		p.registrationID, destinationRegistrationID, e.SessionID(), e.StreamID(), e.ReceiverID(), e.GroupTag(), e.Code(), msg))
	ip := from.Addr().AsSlice()
	d.rsp = command.AppendPublicationErrorFrame(d.rsp[:0], p.registrationID, destinationRegistrationID, e.SessionID(),
		e.StreamID(), e.ReceiverID(), e.GroupTag(), ip, from.Port(), e.Code(), msg)
	d.tx.Transmit(command.OnPublicationError, d.rsp)
}
