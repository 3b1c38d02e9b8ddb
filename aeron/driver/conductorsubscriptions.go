package driver

import (
	"strings"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/internal/command"
	"github.com/goblin-kv/goblin/aeron/internal/counters"
	"github.com/goblin-kv/goblin/aeron/internal/uri"
)

// The conductor's subscription commands (DriverConductor.onAddIpcSubscription,
// onAddNetworkSubscription, onAddSpySubscription, onRemoveSubscription):
// the subscription links, their receive channel endpoints, and the links
// between subscriptions and the publications and images they read.

// onAddNetworkSubscription adds a UDP subscription on its channel's
// receive endpoint (DriverConductor.onAddNetworkSubscription). A response
// subscription (control-mode=response) adds no interest until an
// RSP_SETUP names the session its server's response publication has.
func (c *conductor) onAddNetworkSubscription(channel string, streamID int32, registrationID, clientID int64) error {
	u, ch, err := c.udpSubscriptionChannel(channel)
	if err != nil {
		return err
	}
	if ch.hasExplicitControl && ch.localControl.Port() == 0 {
		return genericError(illegalArgument, "control has port=0 for subscription: channel=%s", channel)
	}
	params, err := c.subscriptionParams(u)
	if err != nil {
		return err
	}
	if err := c.checkForClashingSubscription(params, ch, streamID); err != nil {
		return err
	}
	ep, err := c.getOrCreateReceiveEndpoint(params, ch, registrationID)
	if err != nil {
		return err
	}
	if ep.closing {
		c.sendError(registrationID, aeron.ErrorCodeResourceTemporarilyUnavailable,
			"ERROR - ReceiveChannelEndpoint found in CLOSING state, please retry")
		return nil
	}
	cl, err := c.getOrAddClient(clientID)
	if err != nil {
		return err
	}
	l := &subscriptionLink{kind: subNetwork, registrationID: registrationID, streamID: streamID, channel: channel,
		client: cl, sessionID: params.sessionID, hasSessionID: params.hasSessionID, isResponse: params.isResponse,
		tether: params.tether, rejoin: params.rejoin, sparse: params.sparse, reliable: params.reliable,
		group: params.group, ep: ep, params: params}
	c.subscriptionLinks = append(c.subscriptionLinks, l)
	if ch.mode == controlResponse {
		ep.responseByStream[streamID]++
	} else {
		c.addNetworkSubscriptionToReceiver(l)
	}
	c.sendCounterUpdate(command.OnSubscriptionReady, registrationID, ep.statusID)
	c.linkMatchingImages(l)
	return nil
}

// checkForClashingSubscription refuses a subscription whose reliable,
// rejoin or response mode differs from another of the same stream and
// session scope on the same endpoint.
func (c *conductor) checkForClashingSubscription(p *subscriptionParams, ch *udpChannel, streamID int32) error {
	ep, err := c.findReceiveEndpoint(ch)
	if ep == nil || err != nil {
		return err
	}
	if err := checkTimestampMatch(paramMediaRcvTsOff, ch.mediaRcvTs, ep.ch.mediaRcvTs, ch, ep.ch); err != nil {
		return err
	}
	if err := checkTimestampMatch(paramChannelRcvTsOff, ch.rcvTs, ep.ch.rcvTs, ch, ep.ch); err != nil {
		return err
	}
	for _, l := range c.subscriptionLinks {
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

func (c *conductor) findReceiveEndpoint(ch *udpChannel) (*receiveEndpoint, error) {
	if ch.hasTag {
		for _, e := range c.receiveEndpoints {
			if ok, err := ch.matchesTag(e.ch); ok || err != nil {
				return e, err
			}
		}
	}
	e := c.receiveEndpoints[ch.canonical]
	if e != nil && e.ch.hasTag && ch.hasTag && e.ch.tag != ch.tag {
		return nil, nil
	}
	return e, nil
}

// getOrCreateReceiveEndpoint finds or opens the channel's receive
// endpoint with its rcv-channel and rcv-local-sockaddr counters
// (DriverConductor.getOrCreateReceiveChannelEndpoint).
func (c *conductor) getOrCreateReceiveEndpoint(p *subscriptionParams, ch *udpChannel, registrationID int64) (*receiveEndpoint, error) {
	rcv, snd := c.socketBuffers(ch)
	window := receiverWindowLength(c.opts.TermLength, c.initialWindow(p.rcvWnd))
	e, err := c.findReceiveEndpoint(ch)
	if err != nil {
		return nil, err
	}
	if e != nil {
		if err := c.checkWindowForRcvbuf(window, e.ch.rcvbuf, ch.uri.raw, e.ch.uri.raw); err != nil {
			return nil, err
		}
		return e, c.checkBuffersMatch(ch, e.ch)
	}
	e = &receiveEndpoint{ch: ch, addrID: -1, receiverID: c.nextReceiverID(),
		streams: map[int32]*streamInterest{}, refByStream: map[int32]int{}, refBySession: map[uint64]int{},
		responseByStream: map[int32]int{}}
	switch {
	case ch.hasGroupTag:
		e.groupTag, e.hasGroup = ch.groupTag, true
	case c.opts.ReceiverGroupTag != nil:
		e.groupTag, e.hasGroup = *c.opts.ReceiverGroupTag, true
	}
	if e.statusID, err = c.allocateChannelStatus("rcv-channel", counters.TypeReceiveChannelStatus, registrationID, ch.uri.raw); err != nil {
		return nil, err
	}
	if ch.mode == controlManual {
		return c.activateManualReceiveEndpoint(e), nil
	}
	fail := func(err error) (*receiveEndpoint, error) {
		c.freeCounter(e.statusID)
		if e.addrID >= 0 {
			c.freeCounter(e.addrID)
		}
		return nil, err
	}
	if e.addrID, err = c.allocateLocalSocketAddress("rcv-local-sockaddr", registrationID, e.statusID); err != nil {
		return fail(err)
	}
	if err := c.checkWindowForRcvbuf(window, ch.rcvbuf, ch.uri.raw, ""); err != nil {
		return fail(err)
	}
	if err := e.open(c, rcv, snd); err != nil {
		c.counters.SetValue(e.statusID, endpointErrored)
		return fail(genericError(aeronException, "channel error - %v: %s", err, ch.uri.raw))
	}
	bound := hostString(e.sock.LocalAddr())
	c.counters.AppendLabel(e.statusID, []byte(bound))
	c.setLocalSocketAddress(e.addrID, bound)
	c.counters.SetValue(e.statusID, endpointActive)
	if err := c.poller.Add(e.sock); err != nil {
		e.sock.Close()
		return fail(err)
	}
	c.receiveEndpoints[ch.canonical] = e
	c.receiver.onAddEndpoint(e)
	return e, nil
}

// checkWindowForRcvbuf refuses a receiver window larger than the socket's
// receive buffer (SubscriptionParams.validateInitialWindowForRcvBuf).
func (c *conductor) checkWindowForRcvbuf(window, channelRcvbuf int, channel, existing string) error {
	rcv, os := socketBufferFor(channelRcvbuf, c.opts.SocketRcvbuf, c.osb.defaultRcvbuf)
	if window > rcv {
		return genericError(illegalState, "Initial window greater than SO_RCVBUF for channel: rcv-wnd=%d so-rcvbuf=%d%s%s channel=%s",
			window, rcv, os, existingChannelNote(existing), channel)
	}
	return nil
}

// addNetworkSubscriptionToReceiver adds the subscription's interest to
// its endpoint's dispatcher, once per stream (or stream and session).
func (c *conductor) addNetworkSubscriptionToReceiver(l *subscriptionLink) {
	e := l.ep
	if l.hasSessionID {
		k := pubKey(l.sessionID, l.streamID)
		e.refBySession[k]++
		if e.refBySession[k] == 1 {
			e.addSessionSubscription(l.streamID, l.sessionID)
			c.requestSetup(e, l.streamID, l.sessionID)
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
func (c *conductor) cleanupNetworkSubscription(l *subscriptionLink) {
	e := l.ep
	switch {
	case l.hasSessionID:
		k := pubKey(l.sessionID, l.streamID)
		if e.refBySession[k]--; e.refBySession[k] <= 0 {
			delete(e.refBySession, k)
			c.receiver.removeSessionSubscription(e, l.streamID, l.sessionID)
		}
	case l.isResponse:
		if e.responseByStream[l.streamID]--; e.responseByStream[l.streamID] <= 0 {
			delete(e.responseByStream, l.streamID)
		}
	default:
		if e.refByStream[l.streamID]--; e.refByStream[l.streamID] <= 0 {
			delete(e.refByStream, l.streamID)
			c.receiver.removeStreamSubscription(e, l.streamID)
		}
	}
	c.tryCloseReceiveEndpoint(e)
}

// tryCloseReceiveEndpoint closes an endpoint no subscription and no image
// uses any more.
func (c *conductor) tryCloseReceiveEndpoint(e *receiveEndpoint) {
	if !e.shouldBeClosed() {
		return
	}
	e.closing = true
	c.counters.SetValue(e.statusID, endpointClosing)
	c.receiver.onRemoveEndpoint(e)
	c.closeReceiveSockets(e)
	c.freeCounter(e.statusID)
	if e.addrID >= 0 {
		c.freeCounter(e.addrID)
	}
	delete(c.receiveEndpoints, e.ch.canonical)
}

// linkMatchingImages gives a new subscription the images it matches
// (DriverConductor.linkMatchingImages).
func (c *conductor) linkMatchingImages(l *subscriptionLink) {
	for _, img := range c.images {
		if img.ep != l.ep || img.streamID != l.streamID || !l.sessionMatches(img.sessionID) ||
			!img.isAcceptingSubscriptions(c) {
			continue
		}
		pos, err := c.linkPosition(l, img, img.sessionID, l.streamID, img.correlationID, img.joinPosition(c))
		if err != nil {
			c.recordError(err)
			continue
		}
		id := pos.id
		img.subs = append(img.subs, pos)
		if !l.tether {
			img.untether = append(img.untether, untetheredSubscriber{link: l, pos: pos, updateNs: c.nowNs})
		}
		c.sendImageAvailable(img, l.registrationID, id)
	}
}

// udpSubscriptionChannel parses a UDP subscription's channel: the URI and
// its UDP part.
func (c *conductor) udpSubscriptionChannel(channel string) (*channelURI, *udpChannel, error) {
	u, err := parseURI(channel)
	if err != nil {
		return nil, nil, err
	}
	ch, err := c.parseUDPChannel(u, false)
	return u, ch, err
}

// subscriber reads an IPC or spy subscription's parameters from u and
// finds (or adds) the subscribing client.
func (c *conductor) subscriber(u *channelURI, clientID int64) (*subscriptionParams, *client, error) {
	params, err := c.subscriptionParams(u)
	if err != nil {
		return nil, nil, err
	}
	cl, err := c.getOrAddClient(clientID)
	return params, cl, err
}

// onAddSpySubscription subscribes to this driver's own network
// publications of a channel (DriverConductor.onAddSpySubscription).
func (c *conductor) onAddSpySubscription(channel string, streamID int32, registrationID, clientID int64) error {
	u, ch, err := c.udpSubscriptionChannel(channel)
	if err != nil {
		return err
	}
	params, cl, err := c.subscriber(u, clientID)
	if err != nil {
		return err
	}
	l := &subscriptionLink{kind: subSpy, registrationID: registrationID, streamID: streamID, channel: channel,
		client: cl, sessionID: params.sessionID, hasSessionID: params.hasSessionID, isResponse: params.isResponse,
		tether: params.tether, rejoin: params.rejoin, sparse: params.sparse, reliable: params.reliable, spy: ch,
		params: params}
	c.subscriptionLinks = append(c.subscriptionLinks, l)
	c.sendCounterUpdate(command.OnSubscriptionReady, registrationID, -1)
	for _, p := range c.netPublications {
		if c.spyMatches(l, p) && p.isAcceptingSubscriptions(c) {
			p.linkSpy(c, l)
		}
	}
	return nil
}

// spyMatches is SpySubscriptionLink.matches: same stream, and the same
// channel tag, or a matching session on a channel of the same canonical form.
func (c *conductor) spyMatches(l *subscriptionLink, p *networkPublication) bool {
	if l.kind != subSpy || p.streamID != l.streamID {
		return false
	}
	if l.spy.hasTag && p.ch.hasTag && l.spy.tag == p.ch.tag {
		return true
	}
	return l.sessionMatches(p.sessionID) && l.spy.canonical == p.ep.ch.canonical
}

func (c *conductor) onAddIPCSubscription(channel string, streamID int32, registrationID, clientID int64) error {
	u, err := parseURI(channel)
	if err != nil {
		return err
	}
	params, cl, err := c.subscriber(u, clientID)
	if err != nil {
		return err
	}
	l := &subscriptionLink{registrationID: registrationID, streamID: streamID, channel: channel, client: cl,
		sessionID: params.sessionID, hasSessionID: params.hasSessionID, isResponse: params.isResponse,
		tether: params.tether, rejoin: params.rejoin, sparse: params.sparse}
	c.subscriptionLinks = append(c.subscriptionLinks, l)
	c.sendCounterUpdate(command.OnSubscriptionReady, registrationID, -1)
	for _, p := range c.ipcPublications {
		if l.matches(p) && p.isAcceptingSubscriptions(c) {
			pos, err := c.linkIPCSubscription(p, l)
			if err != nil {
				return err
			}
			c.sendAvailableImage(p, registrationID, pos.id)
		}
	}
	return nil
}

// linkIPCSubscriptions announces a publication to every matching
// subscription not yet linked to it.
func (c *conductor) linkIPCSubscriptions(p *ipcPublication) {
	for _, l := range c.subscriptionLinks {
		if l.matches(p) && l.linked(p) == nil && p.isAcceptingSubscriptions(c) {
			if pos, err := c.linkIPCSubscription(p, l); err != nil {
				c.recordError(err)
			} else {
				c.sendAvailableImage(p, l.registrationID, pos.id)
			}
		}
	}
}

// linkIPCSubscription gives subscription l a sub-pos on p at the join
// position.
func (c *conductor) linkIPCSubscription(p *ipcPublication, l *subscriptionLink) (position, error) {
	pos, err := c.linkPosition(l, p, p.sessionID, l.streamID, p.registrationID, p.joinPosition(c))
	if err != nil {
		return position{}, err
	}
	p.addSubscriber(c, l, pos, c.nowNs)
	return pos, nil
}

// linkPosition gives subscription l a sub-pos counter for session and
// stream on res at join, its reference id refID, and records it in l.
func (c *conductor) linkPosition(l *subscriptionLink, res subscribable, sessionID, streamID int32, refID, join int64) (position, error) {
	id, err := c.allocateStreamCounter("sub-pos", counters.TypeSubscriberPosition, l.client.id, l.registrationID,
		sessionID, streamID, l.channel, join)
	if err != nil {
		return position{}, err
	}
	c.counters.SetReferenceID(id, refID)
	pos := c.positionOf(id)
	c.setPosition(pos, join)
	l.positions = append(l.positions, linkedPosition{res: res, pos: pos})
	return pos, nil
}

// onRemoveSubscription removes every link with the registration id; no
// ON_UNAVAILABLE_IMAGE goes to the subscription itself.
func (c *conductor) onRemoveSubscription(registrationID, corr int64) error {
	found := false
	for i := len(c.subscriptionLinks) - 1; i >= 0; i-- {
		l := c.subscriptionLinks[i]
		if l.registrationID != registrationID {
			continue
		}
		last := len(c.subscriptionLinks) - 1
		c.subscriptionLinks[i] = c.subscriptionLinks[last]
		c.subscriptionLinks[last] = nil
		c.subscriptionLinks = c.subscriptionLinks[:last]
		c.closeSubscription(l)
		found = true
	}
	if !found {
		return protocolError(aeron.ErrorCodeUnknownSubscription, "unknown subscription: %d", registrationID)
	}
	c.sendOperationSuccess(corr)
	return nil
}

// onRemoveRcvDestination removes an IPC "destination" the way the Java
// driver does: the link with that registration id and channel.
func (c *conductor) onRemoveRcvDestination(registrationID int64, channel string, corr int64) error {
	if !strings.HasPrefix(channel, ipcChannel) && !strings.HasPrefix(channel, uri.SpyPrefix) {
		return c.onRemoveRcvNetworkDestination(registrationID, channel, corr)
	}
	for i, l := range c.subscriptionLinks {
		if l.registrationID != registrationID || l.channel != channel {
			continue
		}
		last := len(c.subscriptionLinks) - 1
		c.subscriptionLinks[i] = c.subscriptionLinks[last]
		c.subscriptionLinks[last] = nil
		c.subscriptionLinks = c.subscriptionLinks[:last]
		linked := make([]int64, 0, len(l.positions))
		for _, lp := range l.positions {
			linked = append(linked, lp.res.notifyID())
		}
		c.closeSubscription(l)
		c.sendOperationSuccess(corr)
		for _, id := range linked {
			c.notifyUnavailableImage(id, l)
		}
		return nil
	}
	return protocolError(aeron.ErrorCodeUnknownSubscription, "unknown subscription: %d", registrationID)
}

// subscriptionLinksTick drops the subscriptions of timed-out clients.
func (c *conductor) subscriptionLinksTick() {
	c.subscriptionLinks = checkResources(c.subscriptionLinks,
		func(l *subscriptionLink) bool { l.endOfLife = l.endOfLife || l.client.timedOut; return l.endOfLife },
		c.closeSubscription)
}

// closeSubscription unlinks a removed subscription from everything it
// reads and frees its sub-pos counters (and lets go of its receive
// endpoint's interest in the stream).
func (c *conductor) closeSubscription(l *subscriptionLink) {
	for i := range l.positions {
		lp := &l.positions[i]
		switch r := lp.res.(type) {
		case *ipcPublication:
			r.removeSubscriber(c, l, lp)
		case *publicationImage:
			r.removeSubscriber(c, l, lp)
		case *networkPublication:
			r.removeSpy(c, l, lp)
		}
	}
	l.positions = l.positions[:0]
	if l.kind == subNetwork {
		c.cleanupNetworkSubscription(l)
	}
}

// nextReceiverID hands out receiver ids: a random seed incremented per
// endpoint (ReceiveChannelEndpointThreadLocals.nextReceiverId).
func (c *conductor) nextReceiverID() int64 {
	id := c.receiverIDSeed
	c.receiverIDSeed++
	return id
}
