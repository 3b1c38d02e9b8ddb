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

// The conductor's publication commands (DriverConductor.onAddIpcPublication,
// onAddNetworkPublication, onRemovePublication): the publications, their
// send channel endpoints and counters, and the links clients hold on them.

// onAddNetworkPublication adds a UDP publication or a handle on one.
func (c *conductor) onAddNetworkPublication(channel string, streamID int32, corr, clientID int64, exclusive bool) error {
	u, err := parseURI(channel)
	if err != nil {
		return err
	}
	if u.Spy {
		return invalidChannel("Aeron spies are invalid as publications: channel=%s", channel)
	}
	ch, err := c.parseUDPChannel(u, false)
	if err != nil {
		return err
	}
	params, err := c.publicationParams(u, streamID, ch.canonical)
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
	if err := c.validateResponseSubscription(params); err != nil {
		return err
	}
	ep, err := c.getOrCreateSendEndpoint(params, ch, corr)
	if err != nil {
		return err
	}
	var pub *networkPublication
	if !exclusive {
		for _, p := range c.netPublications {
			if p.streamID == streamID && p.ep == ep && p.state == pubActive && !p.exclusive &&
				p.responseCorrelationID == params.responseCorrelationID {
				pub = p
				break
			}
		}
	}
	respImage, err := c.findResponseImage(params)
	if err != nil {
		return err
	}
	isNew := pub == nil
	if isNew {
		if c.sessionActive(params.sessionID, streamID, ch.canonical) {
			return invalidChannel("existing publication has clashing sessionId=%d for streamId=%d channel=%s",
				params.sessionID, streamID, channel)
		}
		if pub, err = c.newNetworkPublication(corr, clientID, streamID, channel, ch, ep, params, exclusive); err != nil {
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
	cl, err := c.getOrAddClient(clientID)
	if err != nil {
		return err
	}
	pub.incRef()
	c.publicationLinks = append(c.publicationLinks, &publicationLink{registrationID: corr, client: cl, net: pub})
	typeID := command.OnPublicationReady
	if exclusive {
		typeID = command.OnExclusivePublicationReady
	}
	c.rsp = command.AppendPublicationBuffersReady(c.rsp[:0], corr, pub.registrationID, pub.sessionID, streamID,
		pub.pubLmt.id, ep.statusID, pub.log.path)
	c.transmit(typeID, c.rsp)
	if isNew {
		pub.linkSpies(c)
	}
	if respImage != nil {
		respImage.responseSessionID, respImage.hasResponseSession = pub.sessionID, true
	}
	return nil
}

// validateResponseSubscription: a request publication's
// response-correlation-id must name a subscription of this driver.
func (c *conductor) validateResponseSubscription(p *publicationParams) error {
	if p.isResponse || p.responseCorrelationID == -1 {
		return nil
	}
	for _, l := range c.subscriptionLinks {
		if l.registrationID == p.responseCorrelationID {
			return nil
		}
	}
	return genericError(illegalArgument, "unable to find response subscription for response-correlation-id=%d",
		p.responseCorrelationID)
}

// findResponseImage: a response publication names the image of the
// request stream it answers, whose SETUP asked for a response channel.
func (c *conductor) findResponseImage(p *publicationParams) (*publicationImage, error) {
	if !p.isResponse {
		return nil, nil
	}
	if p.responseCorrelationID == -1 {
		return nil, genericError(illegalArgument, "control-mode=response was specified, but no response-correlation-id set")
	}
	if p.responseCorrelationID == prototypeCorrelationValue {
		return nil, nil
	}
	for _, img := range c.images {
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
func (c *conductor) responseSetup(responseCorrelationID int64, responseSessionID int32) {
	for _, l := range c.subscriptionLinks {
		if l.registrationID != responseCorrelationID || l.kind != subNetwork {
			continue
		}
		if l.hasSessionID {
			c.requestSetup(l.ep, l.streamID, l.sessionID)
		} else {
			l.sessionID, l.hasSessionID = responseSessionID, true
			c.addNetworkSubscriptionToReceiver(l)
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
func (c *conductor) requestSetup(e *receiveEndpoint, streamID, sessionID int32) {
	if to, ok := e.explicitControl(); ok {
		e.sendSetupEliciting(c.driverContext, to, sessionID, streamID)
	}
}

// responseConnected: a response publication's first receiver came; the
// request image stops sending RSP_SETUP.
func (c *conductor) responseConnected(responseCorrelationID int64) {
	for _, img := range c.images {
		if img.correlationID == responseCorrelationID && img.setupFlags&wire.SetupFlagSendResponseSetup != 0 {
			img.hasResponseSession = false
		}
	}
}

// findSendEndpoint finds the send endpoint a channel shares: by tag, then
// by canonical form.
func (c *conductor) findSendEndpoint(ch *udpChannel) (*sendEndpoint, error) {
	if ch.hasTag {
		for _, e := range c.sendEndpoints {
			if ok, err := ch.matchesTag(e.ch); ok || err != nil {
				return e, err
			}
		}
		if !ch.hasExplicitControl && ch.mode != controlManual && !ch.uri.has(aeron.ParamEndpoint) {
			return nil, invalidChannel("URI must have explicit control, endpoint, or be manual control-mode when original: channel=%s",
				ch.uri.raw)
		}
	}
	e := c.sendEndpoints[ch.canonical]
	if e != nil && e.ch.hasTag && ch.hasTag && e.ch.tag != ch.tag {
		e = nil
	}
	return e, nil
}

// socketBuffers are the SO_RCVBUF and SO_SNDBUF a channel's socket asks
// for: its own so-rcvbuf/so-sndbuf, else the driver's.
func (c *conductor) socketBuffers(ch *udpChannel) (rcv, snd int) {
	rcv, snd = ch.rcvbuf, ch.sndbuf
	if rcv == 0 {
		rcv = c.opts.SocketRcvbuf
	}
	if snd == 0 {
		snd = c.opts.SocketSndbuf
	}
	return rcv, snd
}

// checkBuffersMatch refuses a channel whose so-rcvbuf/so-sndbuf differ
// from those in effect on the endpoint (ep, its channel) it would share:
// the endpoint's own values, else the driver's defaults, so naming the
// default explicitly matches an endpoint that took it implicitly.
func (c *conductor) checkBuffersMatch(ch, ep *udpChannel) error {
	rcv, snd := c.socketBuffers(ep)
	if err := checkBufferMatch(aeron.ParamSocketRcvBuf, ch.rcvbuf, rcv, ch.uri.raw, ep.uri.raw); err != nil {
		return err
	}
	return checkBufferMatch(aeron.ParamSocketSndBuf, ch.sndbuf, snd, ch.uri.raw, ep.uri.raw)
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
func (c *conductor) getOrCreateSendEndpoint(p *publicationParams, ch *udpChannel, corr int64) (*sendEndpoint, error) {
	e, err := c.findSendEndpoint(ch)
	if err != nil {
		return nil, err
	}
	rcv, snd := c.socketBuffers(ch)
	if e != nil {
		if err := checkTimestampMatch(paramChannelSndTsOff, ch.sndTs, e.ch.sndTs, ch, e.ch); err != nil {
			return nil, err
		}
		if err := c.checkMTUForSndbuf(p.mtu, e.ch.sndbuf, ch.uri.raw, e.ch.uri.raw); err != nil {
			return nil, err
		}
		return e, c.checkBuffersMatch(ch, e.ch)
	}
	e = &sendEndpoint{ch: ch, pubs: map[uint64]*networkPublication{}, mdcID: -1, addrID: -1}
	if e.statusID, err = c.allocateChannelStatus("snd-channel", counters.TypeSendChannelStatus, corr, ch.uri.raw); err != nil {
		return nil, err
	}
	fail := func(err error) (*sendEndpoint, error) {
		c.closeSendEndpointCounters(e)
		return nil, err
	}
	if e.addrID, err = c.allocateLocalSocketAddress("snd-local-sockaddr", corr, e.statusID); err != nil {
		return fail(err)
	}
	if ch.isMultiDestination() {
		if e.mdcID, err = c.allocateChannelStatus("mdc-num-dest", counters.TypeMDCDestinations, corr, ch.uri.raw); err != nil {
			return fail(err)
		}
	}
	if err := c.checkMTUForSndbuf(p.mtu, ch.sndbuf, ch.uri.raw, ""); err != nil {
		return fail(err)
	}
	if err := e.open(c, rcv, snd); err != nil {
		c.counters.SetValue(e.statusID, endpointErrored)
		return fail(genericError(aeronException, "channel error - %v: %s", err, ch.uri.raw))
	}
	bound := hostString(e.controlSocket().LocalAddr())
	c.setLocalSocketAddress(e.addrID, bound)
	c.counters.AppendLabel(e.statusID, []byte(bound))
	c.counters.SetValue(e.statusID, endpointActive)
	if err := c.poller.Add(e.controlSocket()); err != nil {
		c.closeSendSockets(e)
		return fail(err)
	}
	c.sendEndpoints[ch.canonical] = e
	c.sender.onAddEndpoint(e)
	return e, nil
}

// checkMTUForSndbuf refuses an MTU larger than the socket's send buffer
// (PublicationParams.validateMtuForSndbuf).
func (c *conductor) checkMTUForSndbuf(mtu, channelSndbuf int, channel, existing string) error {
	snd, os := socketBufferFor(channelSndbuf, c.opts.SocketSndbuf, c.osb.defaultSndbuf)
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

func (c *conductor) closeSendSockets(e *sendEndpoint) {
	if e.ctl != nil {
		c.poller.Remove(e.ctl)
		e.ctl.Close()
	}
	if e.sock != nil {
		c.poller.Remove(e.sock)
		e.sock.Close()
	}
}

func (c *conductor) closeSendEndpointCounters(e *sendEndpoint) {
	for _, id := range []int32{e.statusID, e.addrID, e.mdcID} {
		if id >= 0 {
			c.freeCounter(id)
		}
	}
}

// closeSendEndpoint closes an endpoint no publication uses.
func (c *conductor) closeSendEndpoint(e *sendEndpoint) {
	c.counters.SetValue(e.statusID, endpointClosing)
	c.closeSendSockets(e)
	c.closeSendEndpointCounters(e)
	delete(c.sendEndpoints, e.ch.canonical)
	c.sender.onRemoveEndpoint(e)
}

// allocateChannelStatus allocates a snd-channel or rcv-channel counter
// (ChannelEndpointStatus.allocate): key = the channel, label
// "<name>: <channel> " (the bound address is appended when it opens).
func (c *conductor) allocateChannelStatus(name string, typeID int32, registrationID int64, channel string) (int32, error) {
	const maxChannel = counters.MaxKeyLength - 4
	key := command.AppendString(c.scratch[:0], channel[:min(len(channel), maxChannel)])
	labelStart := len(key)
	b := append(append(key, name...), ": "...)
	b = append(b, channel[:min(len(channel), counters.MaxLabelLength-(len(b)-labelStart))]...)
	if len(b)-labelStart < counters.MaxLabelLength {
		b = append(b, ' ')
	}
	c.scratch = b[:0]
	id, err := c.counters.Allocate(typeID, b[:labelStart], b[labelStart:], c.epochMs)
	if err != nil {
		return -1, counterFull(err)
	}
	c.counters.SetRegistrationID(id, registrationID)
	return id, nil
}

// allocateLocalSocketAddress allocates a snd-local-sockaddr or
// rcv-local-sockaddr counter (LocalSocketAddressStatus.allocate): key =
// the channel status counter id and an address length of 0 until bound.
func (c *conductor) allocateLocalSocketAddress(name string, registrationID int64, statusID int32) (int32, error) {
	key := command.AppendInt32(command.AppendInt32(c.scratch[:0], statusID), 0)
	labelStart := len(key)
	b := append(append(key, name...), ": "...)
	b = strconv.AppendInt(b, int64(statusID), 10)
	b = append(b, ' ')
	c.scratch = b[:0]
	id, err := c.counters.Allocate(counters.TypeLocalSocketAddress, b[:labelStart], b[labelStart:], c.epochMs)
	if err != nil {
		return -1, counterFull(err)
	}
	c.counters.SetRegistrationID(id, registrationID)
	return id, nil
}

// setLocalSocketAddress records the bound address in the key and label
// and marks the counter ACTIVE (LocalSocketAddressStatus.updateBindAddress).
func (c *conductor) setLocalSocketAddress(id int32, addr string) {
	key := c.counters.Key(id)
	n := copy(key[8:], addr)
	shm.PutInt32(key, 4, int32(n))
	c.counters.AppendLabel(id, []byte(addr))
	c.counters.SetValue(id, endpointActive)
}

// newNetworkPublication creates a UDP publication's log, counters, flow
// control and retransmit handler and registers it with the sender
// (DriverConductor.newNetworkPublication).
func (c *conductor) newNetworkPublication(corr, clientID int64, streamID int32, channel string, ch *udpChannel,
	ep *sendEndpoint, params *publicationParams, exclusive bool) (*networkPublication, error) {
	if params.isResponse && params.responseCorrelationID == prototypeCorrelationValue {
		params.termLength = logbuffer.MinTermLength
	}
	fc, err := c.newFlowControl(ch, corr, -1, params.sessionID, streamID)
	if err != nil {
		return nil, err
	}
	log, err := c.newRawLog(filepath.Join(c.opts.Dir, publicationsDir), corr, params.termLength, params.sparse)
	if err != nil {
		fc.close(c)
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
	}, c.opts.FilePageSize, c.osb)
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
		if ids[i], err = c.allocateStreamCounter(n.name, n.typ, clientID, corr, params.sessionID, streamID, channel, -1); err != nil {
			for _, id := range ids[:i] {
				c.freeCounter(id)
			}
			c.freeRawLog(log)
			fc.close(c)
			return nil, err
		}
	}
	p := &networkPublication{
		logPublication: c.newLogPublication(corr, channel, streamID, exclusive, params, log, ids[0], ids[1]),
		sender:         c.sender, ep: ep, ch: ch, signalEOS: params.signalEOS, isResponse: params.isResponse, ssc: params.ssc,
		lingerNs: params.lingerNs, connTimeout: int64(c.opts.PublicationConnectionTimeout),
		sndPos: c.positionOf(ids[2]), sndLmt: c.positionOf(ids[3]), bpeID: ids[4], naksReceivedID: ids[5],
		fc:         fc,
		retransmit: newRetransmitHandler(ch.hasGroupSemantics(), params.maxResend, int64(c.opts.RetransmitUnicastDelay), int64(c.opts.RetransmitUnicastLinger)),
	}
	if params.hasPosition {
		start := logbuffer.ComputePosition(params.termID, int(params.termOffset), p.bitsToShift, params.initialTermID)
		for _, pos := range []position{p.pubPos, p.pubLmt, p.sndPos, p.sndLmt} {
			c.setPosition(pos, start)
		}
	}
	now := c.nowNs
	p.timeOfLastDataOrHeartbeatNs = now - heartbeatIntervalNs - 1
	p.timeOfLastSetupNs = now - setupIntervalNs - 1
	p.lastConsumerPosition = p.senderPosition()
	p.cleanPosition = p.lastConsumerPosition
	p.timeOfLastActivityNs = now
	p.consumerChangedNs = now
	ep.refCount++
	c.netPublications = append(c.netPublications, p)
	c.sender.onAddPublication(p)
	ep.pubs[pubKey(p.sessionID, streamID)] = p
	c.activeSessions = append(c.activeSessions, sessionKey{params.sessionID, streamID, ch.canonical})
	return p, nil
}

func (c *conductor) findNetworkPublicationByTag(tag int64) *networkPublication {
	for _, p := range c.netPublications {
		if p.entityTag == tag && tag != invalidTag {
			return p
		}
	}
	return nil
}

// cleanupNetworkPublication takes a publication off its endpoint and the
// sender (which releases it), closes the endpoint if unused and ends its
// session (DriverConductor.cleanupPublication).
func (c *conductor) cleanupNetworkPublication(p *networkPublication) {
	p.ep.refCount--
	c.sender.onRemovePublication(p)
	delete(p.ep.pubs, pubKey(p.sessionID, p.streamID))
	p.senderReleased = true
	if p.ep.refCount == 0 {
		c.closeSendEndpoint(p.ep)
	}
	c.removeSessionKey(sessionKey{p.sessionID, p.streamID, p.ch.canonical})
}

// closeNetworkPublication frees a publication at the end of its life:
// counters now, the log on a later cycle.
func (c *conductor) closeNetworkPublication(p *networkPublication) {
	for _, id := range []int32{p.pubPos.id, p.pubLmt.id, p.sndPos.id, p.sndLmt.id, p.bpeID, p.naksReceivedID} {
		c.freeCounter(id)
	}
	c.freeSubscriberCounters(&p.subs, p.untethered)
	p.fc.close(c)
	c.endOfLife = append(c.endOfLife, p.log)
}

// onPublicationError broadcasts an ERR frame a live receiver sent to the
// publication's publishers, and logs it as the Java driver warns.
func (c *conductor) onPublicationError(p *networkPublication, destinationRegistrationID int64, e wire.Err, from netip.AddrPort) {
	msg := string(e.Message())
	// Counted in the errors counter (15) as well as logged, as the Java
	// conductor's recordError(AeronEvent WARN) and the C conductor's
	// aeron_driver_conductor_log_explicit_error both do: Aeron's
	// RejectImageTest waits for that counter after a UDP image's reject.
	c.counters.AddValue(sysErrors, 1)
	c.warn(fmt.Sprintf("WARN - onPublicationError: registrationId=%d, destinationRegistrationId=%d, sessionId=%d, "+
		"streamId=%d, receiverId=%d, groupId=%d, errorCode=%d, errorMessage=%s",
		p.registrationID, destinationRegistrationID, e.SessionID(), e.StreamID(), e.ReceiverID(), e.GroupTag(), e.Code(), msg))
	ip := from.Addr().AsSlice()
	c.rsp = command.AppendPublicationErrorFrame(c.rsp[:0], p.registrationID, destinationRegistrationID, e.SessionID(),
		e.StreamID(), e.ReceiverID(), e.GroupTag(), ip, from.Port(), e.Code(), msg)
	c.transmit(command.OnPublicationError, c.rsp)
}

// onAddIPCPublication adds an IPC publication, or a handle on an existing
// one: a concurrent add shares the active concurrent publication of the
// stream (and response correlation id), after checking that every
// parameter the new channel names matches it (DriverConductor.onAddIpcPublication).
func (c *conductor) onAddIPCPublication(channel string, streamID int32, corr, clientID int64, exclusive bool) error {
	u, err := parseURI(channel)
	if err != nil {
		return err
	}
	params, err := c.publicationParams(u, streamID, ipcSessionKey)
	if err != nil {
		return err
	}
	var pub *ipcPublication
	if !exclusive {
		pub = c.findSharedIPCPublication(streamID, params.responseCorrelationID)
	}
	isNew := pub == nil
	if isNew {
		if c.sessionActive(params.sessionID, streamID, ipcSessionKey) {
			return invalidChannel("existing publication has clashing sessionId=%d for streamId=%d channel=%s",
				params.sessionID, streamID, channel)
		}
		if pub, err = c.addIPCPublication(corr, clientID, streamID, channel, exclusive, params); err != nil {
			return err
		}
	} else if err := confirmMatch(u, params, &pub.logPublication); err != nil {
		return err
	}
	cl, err := c.getOrAddClient(clientID)
	if err != nil {
		return err
	}
	pub.incRef()
	c.publicationLinks = append(c.publicationLinks, &publicationLink{registrationID: corr, client: cl, ipc: pub})
	typeID := command.OnPublicationReady
	if exclusive {
		typeID = command.OnExclusivePublicationReady
	}
	c.rsp = command.AppendPublicationBuffersReady(c.rsp[:0], corr, pub.registrationID, pub.sessionID, streamID,
		pub.pubLmt.id, -1, pub.log.path)
	c.transmit(typeID, c.rsp)
	if isNew {
		c.linkIPCSubscriptions(pub)
	}
	return nil
}

// newLogPublication fills what every publication records about itself.
func (c *conductor) newLogPublication(corr int64, channel string, streamID int32, exclusive bool, params *publicationParams,
	log *rawLog, posID, lmtID int32) logPublication {
	return logPublication{
		registrationID: corr, channel: channel, entityTag: params.entityTag,
		sessionID: params.sessionID, streamID: streamID, initialTermID: params.initialTermID,
		startingTermID: params.termID, startingTermOffset: params.termOffset, exclusive: exclusive,
		responseCorrelationID: params.responseCorrelationID, termLength: params.termLength,
		bitsToShift: logbuffer.PositionBitsToShift(params.termLength),
		mtu:         params.mtu, termWindow: int64(params.window),
		log: log, pubPos: c.positionOf(posID), pubLmt: c.positionOf(lmtID),
		unblockTimeoutNs:        int64(c.opts.PublicationUnblockTimeout),
		untetheredWindowLimitNs: params.untetheredWindowLimitNs,
		untetheredLingerNs:      params.untetheredLingerNs,
		untetheredRestingNs:     params.untetheredRestingNs,
	}
}

// confirmMatch refuses to share a publication whose parameters differ
// from those the new channel names (PublicationParams.confirmMatch).
func confirmMatch(u *channelURI, p *publicationParams, pub *logPublication) error {
	checks := []struct {
		param              string
		existing, proposed int64
	}{
		{aeron.ParamMTU, int64(pub.mtu), int64(p.mtu)},
		{aeron.ParamTermLength, int64(pub.termLength), int64(p.termLength)},
		{aeron.ParamSessionID, int64(pub.sessionID), int64(p.sessionID)},
		{aeron.ParamInitialTermID, int64(pub.initialTermID), int64(p.initialTermID)},
		{aeron.ParamTermID, int64(pub.startingTermID), int64(p.termID)},
		{aeron.ParamTermOffset, int64(pub.startingTermOffset), int64(p.termOffset)},
	}
	for _, c := range checks {
		if u.has(c.param) && c.existing != c.proposed {
			return genericError(illegalState, "existing publication has different '%s': existing=%d requested=%d existingChannel=%s channel=%s",
				c.param, c.existing, c.proposed, pub.channel, u.raw)
		}
	}
	return nil
}

func (c *conductor) findSharedIPCPublication(streamID int32, responseCorrelationID int64) *ipcPublication {
	for _, p := range c.ipcPublications {
		if p.streamID == streamID && !p.exclusive && p.state == pubActive && p.responseCorrelationID == responseCorrelationID {
			return p
		}
	}
	return nil
}

func (c *conductor) findIPCPublicationByTag(tag int64) *ipcPublication {
	for _, p := range c.ipcPublications {
		if p.entityTag == tag && tag != invalidTag {
			return p
		}
	}
	return nil
}

// addIPCPublication creates the log in publications/<corr>.logbuffer and
// the pub-pos and pub-lmt counters (DriverConductor.addIpcPublication).
func (c *conductor) addIPCPublication(corr, clientID int64, streamID int32, channel string, exclusive bool,
	params *publicationParams) (*ipcPublication, error) {
	log, err := c.newRawLog(filepath.Join(c.opts.Dir, publicationsDir), corr, params.termLength, params.sparse)
	if err != nil {
		return nil, err
	}
	logType := logbuffer.TypeConcurrent
	if exclusive {
		logType = logbuffer.TypeExclusive
	}
	log.initTails(params.initialTermID, params.hasPosition, params.termID, params.termOffset)
	log.initMetadata(&logMetadata{
		logType: logType, sessionID: params.sessionID, streamID: streamID, initialTermID: params.initialTermID,
		termOffset: params.termOffset, mtu: int32(params.mtu), registrationID: corr,
		publicationWindow: int32(params.window), sparse: params.sparse, isResponse: params.isResponse,
		signalEOS: params.signalEOS, ssc: params.ssc, maxResend: int32(params.maxResend), lingerNs: params.lingerNs,
		untetheredWindowLimitNs: params.untetheredWindowLimitNs, untetheredLingerNs: params.untetheredLingerNs,
		untetheredRestingNs: params.untetheredRestingNs, entityTag: params.entityTag,
		responseCorrelationID: params.responseCorrelationID,
	}, c.opts.FilePageSize, c.osb)
	name := "pub-pos (concurrent)"
	if exclusive {
		name = "pub-pos (exclusive)"
	}
	posID, err := c.allocateStreamCounter(name, counters.TypePublisherPosition, clientID, corr, params.sessionID, streamID, channel, -1)
	if err != nil {
		c.freeRawLog(log)
		return nil, err
	}
	lmtID, err := c.allocateStreamCounter("pub-lmt", counters.TypePublisherLimit, clientID, corr, params.sessionID, streamID, channel, -1)
	if err != nil {
		c.freeCounter(posID)
		c.freeRawLog(log)
		return nil, err
	}
	p := &ipcPublication{
		logPublication:  c.newLogPublication(corr, channel, streamID, exclusive, params, log, posID, lmtID),
		tripGain:        int64(params.window >> 3),
		imageLivenessNs: int64(c.opts.ImageLivenessTimeout),
	}
	if params.hasPosition {
		start := logbuffer.ComputePosition(params.termID, int(params.termOffset), p.bitsToShift, params.initialTermID)
		c.setPosition(p.pubPos, start)
		c.setPosition(p.pubLmt, start)
	}
	p.consumerPosition = p.producerPosition()
	p.lastConsumerPosition = p.consumerPosition
	p.cleanPosition = p.consumerPosition
	p.consumerChangedNs = c.nowNs
	c.findAndUpdateResponseIPCSubscription(params, p)
	c.ipcPublications = append(c.ipcPublications, p)
	c.activeSessions = append(c.activeSessions, sessionKey{params.sessionID, streamID, ipcSessionKey})
	return p, nil
}

// findAndUpdateResponseIPCSubscription completes an IPC response channel:
// a response publication names, in response-correlation-id, the request
// publication, whose own response-correlation-id names the client's
// response subscription; that subscription now matches this session.
func (c *conductor) findAndUpdateResponseIPCSubscription(params *publicationParams, pub *ipcPublication) {
	if params.responseCorrelationID == -1 {
		return
	}
	for _, request := range c.ipcPublications {
		if request.registrationID != params.responseCorrelationID {
			continue
		}
		for _, l := range c.subscriptionLinks {
			if l.registrationID == request.responseCorrelationID {
				l.sessionID, l.hasSessionID = pub.sessionID, true
				break
			}
		}
		return
	}
}

func (c *conductor) onRemovePublication(registrationID, corr int64, revoke bool) error {
	for i, l := range c.publicationLinks {
		if l.registrationID != registrationID {
			continue
		}
		last := len(c.publicationLinks) - 1
		c.publicationLinks[i] = c.publicationLinks[last]
		c.publicationLinks[last] = nil
		c.publicationLinks = c.publicationLinks[:last]
		if revoke {
			l.revoke()
		}
		c.decRefLink(l)
		c.sendOperationSuccess(corr)
		return nil
	}
	return protocolError(aeron.ErrorCodeUnknownPublication, "unknown publication: %d", registrationID)
}

// decRefLink drops a publication link's reference to its publication.
func (c *conductor) decRefLink(l *publicationLink) {
	if l.ipc != nil {
		l.ipc.decRef(c)
	} else {
		l.net.decRef(c)
	}
}

// closeIPCPublication frees the publication's counters; its log is freed
// on a later cycle.
func (c *conductor) closeIPCPublication(p *ipcPublication) {
	c.freeCounter(p.pubPos.id)
	c.freeCounter(p.pubLmt.id)
	c.freeSubscriberCounters(&p.subs, p.untethered)
}
