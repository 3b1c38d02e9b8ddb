package driver

import (
	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/internal/command"
	"github.com/goblin-kv/goblin/aeron/internal/counters"
)

// onAddNetworkSubscription adds a UDP subscription on its channel's
// receive endpoint (DriverConductor.onAddNetworkSubscription). A response
// subscription (control-mode=response) adds no interest until an
// RSP_SETUP names the session its server's response publication has.
func (d *Driver) onAddNetworkSubscription(channel string, streamID int32, registrationID, clientID int64) error {
	u, ch, err := d.udpSubscriptionChannel(channel)
	if err != nil {
		return err
	}
	if ch.mode == controlManual {
		return protocolError(aeron.ErrorCodeNotSupported,
			"multi-destination subscriptions (control-mode=manual) are not supported by this media driver: %s", channel)
	}
	if ch.hasExplicitControl && ch.localControl.Port() == 0 {
		return genericError(illegalArgument, "control has port=0 for subscription: channel=%s", channel)
	}
	if u.has(paramMediaRcvTsOff) {
		return invalidChannel("Media timestamps '%s' are not supported in the Java driver: channel=%s", paramMediaRcvTsOff, channel)
	}
	params, err := d.subscriptionParams(u)
	if err != nil {
		return err
	}
	if err := d.checkForClashingSubscription(params, ch, streamID); err != nil {
		return err
	}
	ep, err := d.getOrCreateReceiveEndpoint(params, ch, registrationID)
	if err != nil {
		return err
	}
	if ep.closing {
		d.sendError(registrationID, aeron.ErrorCodeResourceTemporarilyUnavailable,
			"ERROR - ReceiveChannelEndpoint found in CLOSING state, please retry")
		return nil
	}
	c, err := d.getOrAddClient(clientID)
	if err != nil {
		return err
	}
	l := &subscriptionLink{kind: subNetwork, registrationID: registrationID, streamID: streamID, channel: channel,
		client: c, sessionID: params.sessionID, hasSessionID: params.hasSessionID, isResponse: params.isResponse,
		tether: params.tether, rejoin: params.rejoin, sparse: params.sparse, reliable: params.reliable,
		group: params.group, ep: ep, params: params}
	d.subscriptionLinks = append(d.subscriptionLinks, l)
	if ch.mode == controlResponse {
		ep.responseByStream[streamID]++
	} else {
		d.addNetworkSubscriptionToReceiver(l)
	}
	d.sendCounterUpdate(command.OnSubscriptionReady, registrationID, ep.statusID)
	d.linkMatchingImages(l)
	return nil
}

// checkForClashingSubscription refuses a subscription whose reliable,
// rejoin or response mode differs from another of the same stream and
// session scope on the same endpoint.
func (d *Driver) checkForClashingSubscription(p *subscriptionParams, ch *udpChannel, streamID int32) error {
	ep := d.findReceiveEndpoint(ch)
	if ep == nil {
		return nil
	}
	for _, l := range d.subscriptionLinks {
		if l.kind != subNetwork || l.ep != ep || l.streamID != streamID || l.hasSessionID != p.hasSessionID ||
			!l.sessionMatches(p.sessionID) {
			continue
		}
		if ch.hasTag && !(ep.ch.hasTag && ep.ch.tag == ch.tag) {
			continue
		}
		switch {
		case p.reliable != l.reliable:
			return invalidChannel("option conflicts with existing subscription: reliable=%t existingChannel=%s channel=%s",
				p.reliable, l.channel, ch.uri.raw)
		case p.rejoin != l.rejoin:
			return invalidChannel("option conflicts with existing subscription: rejoin=%t existingChannel=%s channel=%s",
				p.rejoin, l.channel, ch.uri.raw)
		case p.isResponse != l.isResponse:
			return invalidChannel("option conflicts with existing subscription: isResponse=%t existingChannel=%s channel=%s",
				p.isResponse, l.channel, ch.uri.raw)
		}
	}
	return nil
}

func (d *Driver) findReceiveEndpoint(ch *udpChannel) *receiveEndpoint {
	if ch.hasTag {
		for _, e := range d.receiveEndpoints {
			if e.ch.hasTag && e.ch.tag == ch.tag {
				return e
			}
		}
	}
	e := d.receiveEndpoints[ch.canonical]
	if e != nil && e.ch.hasTag && ch.hasTag && e.ch.tag != ch.tag {
		return nil
	}
	return e
}

// getOrCreateReceiveEndpoint finds or opens the channel's receive
// endpoint with its rcv-channel and rcv-local-sockaddr counters
// (DriverConductor.getOrCreateReceiveChannelEndpoint).
func (d *Driver) getOrCreateReceiveEndpoint(p *subscriptionParams, ch *udpChannel, registrationID int64) (*receiveEndpoint, error) {
	rcv, snd := d.socketBuffers(ch)
	window := receiverWindowLength(d.opts.TermLength, d.initialWindow(p.rcvWnd))
	if e := d.findReceiveEndpoint(ch); e != nil {
		if err := d.checkWindowForRcvbuf(window, e.ch.rcvbuf, ch.uri.raw, e.ch.uri.raw); err != nil {
			return nil, err
		}
		if err := checkBufferMatch(aeron.ParamSocketRcvBuf, ch.rcvbuf, e.ch.rcvbuf, ch.uri.raw, e.ch.uri.raw); err != nil {
			return nil, err
		}
		return e, checkBufferMatch(aeron.ParamSocketSndBuf, ch.sndbuf, e.ch.sndbuf, ch.uri.raw, e.ch.uri.raw)
	}
	e := &receiveEndpoint{ch: ch, addrID: -1, receiverID: d.nextReceiverID(),
		streams: map[int32]*streamInterest{}, refByStream: map[int32]int{}, refBySession: map[uint64]int{},
		responseByStream: map[int32]int{}}
	switch {
	case ch.hasGroupTag:
		e.groupTag, e.hasGroup = ch.groupTag, true
	case d.opts.ReceiverGroupTag != nil:
		e.groupTag, e.hasGroup = *d.opts.ReceiverGroupTag, true
	}
	var err error
	if e.statusID, err = d.allocateChannelStatus("rcv-channel", counters.TypeReceiveChannelStatus, registrationID, ch.uri.raw); err != nil {
		return nil, err
	}
	fail := func(err error) (*receiveEndpoint, error) {
		d.freeCounter(e.statusID)
		if e.addrID >= 0 {
			d.freeCounter(e.addrID)
		}
		return nil, err
	}
	if e.addrID, err = d.allocateLocalSocketAddress("rcv-local-sockaddr", registrationID, e.statusID); err != nil {
		return fail(err)
	}
	if err := d.checkWindowForRcvbuf(window, ch.rcvbuf, ch.uri.raw, ""); err != nil {
		return fail(err)
	}
	if err := d.openReceiveEndpoint(e, rcv, snd); err != nil {
		d.counters.SetValue(e.statusID, endpointErrored)
		return fail(genericError(aeronException, "channel error - %v: %s", err, ch.uri.raw))
	}
	bound := hostString(e.sock.LocalAddr())
	d.counters.AppendLabel(e.statusID, []byte(bound))
	d.setLocalSocketAddress(e.addrID, bound)
	d.counters.SetValue(e.statusID, endpointActive)
	if err := d.poller.Add(e.sock); err != nil {
		e.sock.Close()
		return fail(err)
	}
	d.receiveEndpoints[ch.canonical] = e
	d.receiver.endpoints = append(d.receiver.endpoints, e)
	// An endpoint with an explicit control address asks it for SETUP now
	// and every second while it has interest (Receiver.onRegisterReceiveChannelEndpoint).
	if to, ok := e.explicitControl(); ok {
		d.receiver.pendingSetups = append(d.receiver.pendingSetups, pendingSetup{ep: e, control: to, periodic: true, timeNs: d.nowNs})
		e.sendSetupEliciting(&d.driverContext, to, 0, 0)
	}
	return e, nil
}

// checkWindowForRcvbuf refuses a receiver window larger than the socket's
// receive buffer (SubscriptionParams.validateInitialWindowForRcvBuf).
func (d *Driver) checkWindowForRcvbuf(window, channelRcvbuf int, channel, existing string) error {
	rcv, os := socketBufferFor(channelRcvbuf, d.opts.SocketRcvbuf, d.osb.defaultRcvbuf)
	if window > rcv {
		return genericError(illegalState, "Initial window greater than SO_RCVBUF for channel: rcv-wnd=%d so-rcvbuf=%d%s%s channel=%s",
			window, rcv, os, existingChannelNote(existing), channel)
	}
	return nil
}

// addNetworkSubscriptionToReceiver adds the subscription's interest to
// its endpoint's dispatcher, once per stream (or stream and session).
func (d *Driver) addNetworkSubscriptionToReceiver(l *subscriptionLink) {
	e := l.ep
	if l.hasSessionID {
		k := pubKey(l.sessionID, l.streamID)
		e.refBySession[k]++
		if e.refBySession[k] == 1 {
			e.addSessionSubscription(l.streamID, l.sessionID)
			d.requestSetup(e, l.streamID, l.sessionID)
		}
		return
	}
	e.refByStream[l.streamID]++
	if e.refByStream[l.streamID] == 1 {
		e.addSubscription(l.streamID)
	}
}

// cleanupNetworkSubscription drops a removed subscription's interest and
// closes its endpoint if nothing else uses it.
func (d *Driver) cleanupNetworkSubscription(l *subscriptionLink) {
	e := l.ep
	switch {
	case l.hasSessionID:
		k := pubKey(l.sessionID, l.streamID)
		if e.refBySession[k]--; e.refBySession[k] <= 0 {
			delete(e.refBySession, k)
			d.receiver.removeSessionSubscription(e, l.streamID, l.sessionID)
		}
	case l.isResponse:
		if e.responseByStream[l.streamID]--; e.responseByStream[l.streamID] <= 0 {
			delete(e.responseByStream, l.streamID)
		}
	default:
		if e.refByStream[l.streamID]--; e.refByStream[l.streamID] <= 0 {
			delete(e.refByStream, l.streamID)
			d.receiver.removeStreamSubscription(e, l.streamID)
		}
	}
	d.tryCloseReceiveEndpoint(e)
}

// tryCloseReceiveEndpoint closes an endpoint no subscription and no image
// uses any more.
func (d *Driver) tryCloseReceiveEndpoint(e *receiveEndpoint) {
	if !e.shouldBeClosed() {
		return
	}
	e.closing = true
	d.counters.SetValue(e.statusID, endpointClosing)
	for i := len(d.receiver.pendingSetups) - 1; i >= 0; i-- {
		if d.receiver.pendingSetups[i].ep == e {
			d.receiver.removePendingSetup(i)
		}
	}
	for i, x := range d.receiver.endpoints {
		if x == e {
			d.receiver.endpoints = append(d.receiver.endpoints[:i], d.receiver.endpoints[i+1:]...)
			break
		}
	}
	d.poller.Remove(e.sock)
	e.sock.Close()
	d.freeCounter(e.statusID)
	d.freeCounter(e.addrID)
	delete(d.receiveEndpoints, e.ch.canonical)
}

// linkMatchingImages gives a new subscription the images it matches
// (DriverConductor.linkMatchingImages).
func (d *Driver) linkMatchingImages(l *subscriptionLink) {
	for _, img := range d.images {
		if img.ep != l.ep || img.streamID != l.streamID || !l.sessionMatches(img.sessionID) ||
			!d.isImageAcceptingSubscriptions(img) {
			continue
		}
		pos, err := d.linkPosition(l, img, img.sessionID, l.streamID, img.correlationID, d.imageJoinPosition(img))
		if err != nil {
			d.recordError(err)
			continue
		}
		id := pos.id
		img.subs = append(img.subs, pos)
		if !l.tether {
			img.untether = append(img.untether, untetheredSubscriber{link: l, pos: pos, updateNs: d.nowNs})
		}
		d.sendImageAvailable(img, l.registrationID, id)
	}
}

// udpSubscriptionChannel parses a UDP subscription's channel: the URI and
// its UDP part.
func (d *Driver) udpSubscriptionChannel(channel string) (*channelURI, *udpChannel, error) {
	u, err := parseURI(channel)
	if err != nil {
		return nil, nil, err
	}
	ch, err := d.parseUDPChannel(u, false)
	return u, ch, err
}

// subscriber reads an IPC or spy subscription's parameters from u and
// finds (or adds) the subscribing client.
func (d *Driver) subscriber(u *channelURI, clientID int64) (*subscriptionParams, *client, error) {
	params, err := d.subscriptionParams(u)
	if err != nil {
		return nil, nil, err
	}
	c, err := d.getOrAddClient(clientID)
	return params, c, err
}

// onAddSpySubscription subscribes to this driver's own network
// publications of a channel (DriverConductor.onAddSpySubscription).
func (d *Driver) onAddSpySubscription(channel string, streamID int32, registrationID, clientID int64) error {
	u, ch, err := d.udpSubscriptionChannel(channel)
	if err != nil {
		return err
	}
	params, c, err := d.subscriber(u, clientID)
	if err != nil {
		return err
	}
	l := &subscriptionLink{kind: subSpy, registrationID: registrationID, streamID: streamID, channel: channel,
		client: c, sessionID: params.sessionID, hasSessionID: params.hasSessionID, isResponse: params.isResponse,
		tether: params.tether, rejoin: params.rejoin, sparse: params.sparse, reliable: params.reliable, spy: ch,
		params: params}
	d.subscriptionLinks = append(d.subscriptionLinks, l)
	d.sendCounterUpdate(command.OnSubscriptionReady, registrationID, -1)
	for _, p := range d.netPublications {
		if d.spyMatches(l, p) && p.isAcceptingSubscriptions(d) {
			d.linkSpy(p, l)
		}
	}
	return nil
}

// spyMatches is SpySubscriptionLink.matches: same stream, and the same
// channel tag, or a matching session on a channel of the same canonical form.
func (d *Driver) spyMatches(l *subscriptionLink, p *networkPublication) bool {
	if l.kind != subSpy || p.streamID != l.streamID {
		return false
	}
	if l.spy.hasTag && p.ch.hasTag && l.spy.tag == p.ch.tag {
		return true
	}
	return l.sessionMatches(p.sessionID) && l.spy.canonical == p.ep.ch.canonical
}

func (p *networkPublication) isAcceptingSubscriptions(d *Driver) bool {
	return p.state == pubActive || p.state == pubDraining && p.hasSpies && p.producerPosition() > p.senderPosition()
}

// linkSpies gives every matching spy a new publication.
func (d *Driver) linkSpies(p *networkPublication) {
	for _, l := range d.subscriptionLinks {
		if d.spyMatches(l, p) && l.linked(p) == nil {
			d.linkSpy(p, l)
		}
	}
}

// linkSpy gives spy l a sub-pos on p at the sender position and
// announces the publication's log as its image, source "aeron:ipc".
func (d *Driver) linkSpy(p *networkPublication, l *subscriptionLink) {
	pos, err := d.linkPosition(l, p, p.sessionID, p.streamID, p.registrationID, p.senderPosition())
	if err != nil {
		d.recordError(err)
		return
	}
	id := pos.id
	p.subs = append(p.subs, pos)
	p.hasSpies = true
	if !l.tether {
		p.untethered = append(p.untethered, untetheredSubscriber{link: l, pos: pos, updateNs: d.nowNs})
	}
	if p.ssc {
		p.updateConnected(true)
	}
	d.sendAvailable(p.registrationID, p.sessionID, p.streamID, l.registrationID, id, p.log.path, ipcChannel)
}

// A network publication as a spy's subscribable.
func (p *networkPublication) notifyID() int64 { return p.registrationID }
func (p *networkPublication) rejoinPosition(d *Driver) int64 {
	return p.senderPosition()
}
func (p *networkPublication) announce(d *Driver, l *subscriptionLink, pos position, _ int64) {
	d.sendAvailable(p.registrationID, p.sessionID, p.streamID, l.registrationID, pos.id, p.log.path, ipcChannel)
}

// removeSpy drops a spy's position from a publication.
func (d *Driver) removeSpy(p *networkPublication, l *subscriptionLink, lp *linkedPosition) {
	p.subs = removePosition(p.subs, lp.pos.id)
	p.hasSpies = len(p.subs) > 0
	if !lp.freed {
		lp.freed = true
		d.freeCounter(lp.pos.id)
	}
	if !l.tether {
		p.untethered = removeUntethered(p.untethered, l)
	}
	if p.ssc {
		p.updateConnected(p.hasSubscribers())
	}
}

// cleanupSpies tells every spy of p the image is gone and unlinks it.
func (d *Driver) cleanupSpies(p *networkPublication) {
	for _, l := range d.subscriptionLinks {
		if lp := l.linked(p); lp != nil {
			d.notifyUnavailableImage(p.registrationID, l)
			d.removeSpy(p, l, lp)
			l.unlink(p)
		}
	}
}

// spiesFinishedConsuming: every spy read to the end of stream (then they
// are cleaned up).
func (d *Driver) spiesFinishedConsuming(p *networkPublication, eos int64) bool {
	if p.hasSpies {
		for _, s := range p.subs {
			if d.subPosition(s) < eos {
				return false
			}
		}
		p.hasSpies = false
		d.cleanupSpies(p)
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

func (d *Driver) checkSpyUntethered(p *networkPublication, nowNs int64) {
	if len(p.untethered) == 0 {
		return
	}
	windowLimit := p.senderPosition() - p.termWindow + p.termWindow>>2
	d.checkUntethered(p, &p.untethered, &p.subs, windowLimit, p.untetheredWindowLimitNs, p.untetheredLingerNs,
		p.untetheredRestingNs, nowNs)
	p.hasSpies = len(p.subs) > 0
}
