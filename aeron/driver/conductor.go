package driver

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/internal/broadcast"
	"github.com/goblin-kv/goblin/aeron/internal/command"
	"github.com/goblin-kv/goblin/aeron/internal/counters"
	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/aeron/internal/ringbuffer"
	"github.com/goblin-kv/goblin/aeron/internal/uri"
)

// conductor is the driver conductor (aeron_driver_conductor,
// DriverConductor): it reads the clients' commands and answers them; it
// owns the clients, the links between them and what they use, the
// publications and images for their life and the entity maps (session
// keys, endpoints by canonical form); it runs the timers (heartbeat,
// liveness, lingering, end of life) and moves publication limits. It hands
// the sender and the receiver what they send and read (the C driver's
// proxies, direct calls here: the agents share DoWork's goroutine).
type conductor struct {
	*driverContext
	sender   *sender   // the conductor's sender proxy
	receiver *receiver // the conductor's receiver proxy

	ring *ringbuffer.RingBuffer // commands from clients
	tx   *broadcast.Transmitter // responses and events to clients
	osb  osSocketBuffers

	clients           []*client
	publicationLinks  []*publicationLink
	subscriptionLinks []*subscriptionLink
	counterLinks      []*counterLink
	ipcPublications   []*ipcPublication
	endOfLife         []*rawLog // logs of closed resources, to hand to releaser
	releaser          *logReleaser
	activeSessions    []sessionKey
	nextSessionID     int32

	sendEndpoints    map[string]*sendEndpoint    // by canonical form
	receiveEndpoints map[string]*receiveEndpoint // by canonical form
	netPublications  []*networkPublication       // for their life (the sender has them while they send)
	images           []*publicationImage         // until their end of life (the receiver has them while connected)
	imagesLength     int64                       // bytes of the images' logs, until the releaser has freed each
	warmSink         int64                       // warmAhead's loads, kept so they are not dropped
	uniqueCanonical  int64
	receiverIDSeed   int64

	started               bool
	clockDeadlineNs       int64
	timerDeadlineNs       int64
	lastCommandPosition   int64
	commandPositionMoveNs int64
	onCommandFn           ringbuffer.Handler
	rsp                   []byte // response scratch
	scratch               []byte // counter key and label scratch

	epochClock func() int64 // epoch ms; tests replace it

	terminated atomic.Bool // an allowed TERMINATE_DRIVER arrived
}

// doWork is the conductor's duty cycle (DriverConductor.doWork): the
// timers when due, the clients' commands, then every image's rebuild and
// every publication's limit, and the logs at their end of life freed.
func (c *conductor) doWork(nowNs int64) int {
	work := 0
	if c.timerDeadlineNs-nowNs < 0 {
		c.timerDeadlineNs = nowNs + int64(c.opts.TimerInterval)
		c.heartbeatAndCheckTimers(nowNs)
		c.checkForBlockedCommands(nowNs)
		work++
	}
	work += c.readCommands()
	for _, img := range c.images {
		work += img.trackRebuild(c, nowNs)
	}
	for _, p := range c.netPublications {
		work += p.updatePublisherPositionAndLimit(c)
		if p.state == pubActive {
			c.warmAhead(&p.log.terms, p.producerPosition(), p.bitsToShift, p.termLength)
		}
	}
	for _, p := range c.ipcPublications {
		work += p.updatePublisherPositionAndLimit(c)
	}
	work += c.freeEndOfLife(c.opts.ResourceFreeLimit)
	return work
}

// readCommands reads the commands clients wrote into the to-driver ring
// buffer. A record no producer could have written (its length does not
// fit the ring) is skipped with what follows it up to the tail, counted as
// an error and logged: a client of the same user can scribble on the CnC,
// and the driver carries on.
func (c *conductor) readCommands() int {
	before := c.ring.Corrupt()
	n := c.ring.Read(c.onCommandFn, commandDrainLimit)
	if c.ring.Corrupt() != before {
		c.recordError(errors.New("to-driver ring buffer: skipped a record whose length does not fit the ring " +
			"(a client wrote over the CnC); the commands behind it up to the tail are lost"))
	}
	return n
}

// onCommand handles one command from the to-driver ring buffer
// (ClientCommandAdapter.onMessage): a refused command gets ON_ERROR with
// the failing command's correlation id (0 when it failed before the id was
// read, as for a malformed or unknown command).
func (c *conductor) onCommand(typeID int32, msg []byte) {
	var corr int64
	if err := c.dispatch(typeID, msg, &corr); err != nil {
		c.onCommandError(corr, err)
	}
}

func (c *conductor) dispatch(typeID int32, msg []byte, corr *int64) error {
	hdr := command.Correlated(msg)
	switch typeID {
	case command.AddPublication, command.AddExclusivePublication:
		m := command.PublicationMessage(msg)
		if err := m.Validate(typeID); err != nil {
			return malformed(err)
		}
		*corr = hdr.CorrelationID()
		channel := string(m.Channel())
		if !strings.HasPrefix(channel, ipcChannel) {
			return c.onAddNetworkPublication(channel, m.StreamID(), *corr, hdr.ClientID(), typeID == command.AddExclusivePublication)
		}
		return c.onAddIPCPublication(channel, m.StreamID(), *corr, hdr.ClientID(), typeID == command.AddExclusivePublication)
	case command.RemovePublication:
		// No length check, as in the Java driver: 24 bytes mean no flags.
		if len(msg) < command.CorrelatedLength+8 {
			return malformed(command.RemoveMessage(msg).Validate(typeID))
		}
		m := command.RemovePublicationMessage(msg)
		*corr = hdr.CorrelationID()
		return c.onRemovePublication(m.RegistrationID(), *corr, m.Revoke())
	case command.AddSubscription:
		m := command.SubscriptionMessage(msg)
		if err := m.Validate(typeID); err != nil {
			return malformed(err)
		}
		*corr = hdr.CorrelationID()
		channel := string(m.Channel())
		switch {
		case strings.HasPrefix(channel, ipcChannel):
			return c.onAddIPCSubscription(channel, m.StreamID(), *corr, hdr.ClientID())
		case strings.HasPrefix(channel, uri.SpyPrefix):
			return c.onAddSpySubscription(channel, m.StreamID(), *corr, hdr.ClientID())
		}
		return c.onAddNetworkSubscription(channel, m.StreamID(), *corr, hdr.ClientID())
	case command.RemoveSubscription:
		m := command.RemoveMessage(msg)
		if err := m.Validate(typeID); err != nil {
			return malformed(err)
		}
		*corr = hdr.CorrelationID()
		return c.onRemoveSubscription(m.RegistrationID(), *corr)
	case command.AddDestination, command.RemoveDestination:
		m := command.DestinationMessage(msg)
		if err := m.Validate(typeID); err != nil {
			return malformed(err)
		}
		*corr = hdr.CorrelationID()
		return c.onSendDestination(typeID == command.AddDestination, m.RegistrationID(), string(m.Channel()), *corr)
	case command.RemoveDestinationByID:
		m := command.DestinationByIDMessage(msg)
		if err := m.Validate(typeID); err != nil {
			return malformed(err)
		}
		*corr = hdr.CorrelationID()
		return c.onRemoveDestinationByID(m.ResourceRegistrationID(), m.DestinationRegistrationID(), *corr)
	case command.AddRcvDestination:
		m := command.DestinationMessage(msg)
		if err := m.Validate(typeID); err != nil {
			return malformed(err)
		}
		*corr = hdr.CorrelationID()
		if _, err := parseURI(string(m.Channel())); err != nil {
			return err
		}
		// Destinations belong to multi-destination (control-mode=manual)
		// UDP subscriptions, which this driver does not have.
		return protocolError(aeron.ErrorCodeUnknownSubscription, "unknown MDS subscription: %d", m.RegistrationID())
	case command.RemoveRcvDestination:
		m := command.DestinationMessage(msg)
		if err := m.Validate(typeID); err != nil {
			return malformed(err)
		}
		*corr = hdr.CorrelationID()
		return c.onRemoveRcvDestination(m.RegistrationID(), string(m.Channel()), *corr)
	case command.ClientKeepalive:
		if err := hdr.Validate(typeID); err != nil {
			return malformed(err)
		}
		if cl := c.findClient(hdr.ClientID()); cl != nil {
			c.setPosition(cl.heartbeat, c.epochMs)
		}
		return nil
	case command.ClientClose:
		if err := hdr.Validate(typeID); err != nil {
			return malformed(err)
		}
		if cl := c.findClient(hdr.ClientID()); cl != nil {
			cl.closedByCommand = true
			c.setPosition(cl.heartbeat, 0)
		}
		return nil
	case command.AddCounter:
		m := command.CounterMessage(msg)
		if err := m.Validate(typeID); err != nil {
			return malformed(err)
		}
		*corr = hdr.CorrelationID()
		return c.onAddCounter(m.TypeID(), m.Key(), m.Label(), *corr, hdr.ClientID())
	case command.AddStaticCounter:
		m := command.StaticCounterMessage(msg)
		if err := m.Validate(typeID); err != nil {
			return malformed(err)
		}
		*corr = hdr.CorrelationID()
		return c.onAddStaticCounter(m.TypeID(), m.Key(), m.Label(), m.RegistrationID(), *corr, hdr.ClientID())
	case command.RemoveCounter:
		m := command.RemoveMessage(msg)
		if err := m.Validate(typeID); err != nil {
			return malformed(err)
		}
		*corr = hdr.CorrelationID()
		return c.onRemoveCounter(m.RegistrationID(), *corr)
	case command.TerminateDriver:
		m := command.TerminateDriverMessage(msg)
		if err := m.Validate(typeID); err != nil {
			return malformed(err)
		}
		c.onTerminateDriver(m.Token())
		return nil
	case command.RejectImage:
		m := command.RejectImageMessage(msg)
		if err := m.Validate(typeID); err != nil {
			return malformed(err)
		}
		*corr = hdr.CorrelationID()
		return c.onRejectImage(*corr, m.ImageCorrelationID(), m.Position(), string(m.Reason()))
	case command.GetNextAvailableSessionID:
		m := command.GetNextSessionIDMessage(msg)
		if err := m.Validate(typeID); err != nil {
			return malformed(err)
		}
		*corr = hdr.CorrelationID()
		c.sendCounterUpdate(command.OnNextAvailableSessionID, *corr, c.nextSessionIDForStream(m.StreamID()))
		return nil
	}
	return protocolError(aeron.ErrorCodeUnknownCommandTypeID, "command typeId=%d", typeID)
}

func malformed(err error) error {
	return protocolError(aeron.ErrorCodeMalformedCommand, "%s", err.Error())
}

// onCommandError counts and logs a refused command and tells the client
// (ClientCommandAdapter.onError).
func (c *conductor) onCommandError(corr int64, err error) {
	code, text, logged := errorCodeOf(err)
	c.recordError(errors.New(logged))
	c.sendError(corr, code, text)
}

func (c *conductor) findClient(id int64) *client {
	for _, cl := range c.clients {
		if cl.id == id {
			return cl
		}
	}
	return nil
}

// getOrAddClient finds the client, or registers it: its heartbeat counter
// (type 11, value now, registration and owner id the client id) is
// allocated and announced with ON_COUNTER_READY(clientId) before the
// reply to the command that named it (DriverConductor.getOrAddClient).
func (c *conductor) getOrAddClient(id int64) (*client, error) {
	if cl := c.findClient(id); cl != nil {
		return cl, nil
	}
	key := command.AppendInt64(c.scratch[:0], id)
	label := strconv.AppendInt(append(key, "client-heartbeat: id="...), id, 10)[len(key):]
	counterID, err := c.counters.Allocate(counters.TypeClientHeartbeat, key, label, c.epochMs)
	if err != nil {
		return nil, counterFull(err)
	}
	cl := &client{id: id, heartbeat: c.positionOf(counterID)}
	c.setPosition(cl.heartbeat, c.epochMs)
	c.counters.SetRegistrationID(counterID, id)
	c.counters.SetOwnerID(counterID, id)
	c.clients = append(c.clients, cl)
	c.sendCounterUpdate(command.OnCounterReady, id, counterID)
	return cl, nil
}

func counterFull(err error) error {
	return genericError(illegalState, "%s", err.Error())
}

// allocateStreamCounter allocates a per-stream counter with the key and
// label every real driver gives it (StreamCounter.allocateCounterId):
// key = registration id, session id, stream id, channel (truncated to the
// key); label = "<name>: <reg> <session> <stream> <channel>[ @<join>]".
func (c *conductor) allocateStreamCounter(name string, typeID int32, clientID, registrationID int64,
	sessionID, streamID int32, channel string, joinPosition int64) (int32, error) {
	const maxChannel = counters.MaxKeyLength - 20
	key := command.AppendInt64(c.scratch[:0], registrationID)
	key = command.AppendInt32(command.AppendInt32(key, sessionID), streamID)
	ch := channel[:min(len(channel), maxChannel)]
	key = command.AppendString(key, ch)
	labelStart := len(key)
	b := append(key, name...)
	b = append(b, ": "...)
	b = strconv.AppendInt(b, registrationID, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(sessionID), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(streamID), 10)
	b = append(b, ' ')
	room := counters.MaxLabelLength - (len(b) - labelStart)
	b = append(b, channel[:max(0, min(len(channel), room))]...)
	if joinPosition != -1 && len(b)-labelStart < counters.MaxLabelLength-20 {
		b = strconv.AppendInt(append(b, " @"...), joinPosition, 10)
	}
	c.scratch = b[:0]
	id, err := c.counters.Allocate(typeID, b[:labelStart], b[labelStart:], c.epochMs)
	if err != nil {
		return -1, counterFull(err)
	}
	c.counters.SetRegistrationID(id, registrationID)
	c.counters.SetOwnerID(id, clientID)
	return id, nil
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
	c.tx.Transmit(typeID, c.rsp)
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

func (c *conductor) onAddCounter(typeID int32, key, label []byte, corr, clientID int64) error {
	cl, err := c.getOrAddClient(clientID)
	if err != nil {
		return err
	}
	id, err := c.counters.Allocate(typeID, key, label, c.epochMs)
	if err != nil {
		return counterFull(err)
	}
	c.counters.SetRegistrationID(id, corr)
	c.counters.SetOwnerID(id, clientID)
	c.counterLinks = append(c.counterLinks, &counterLink{registrationID: corr, counterID: id, client: cl})
	c.sendCounterUpdate(command.OnCounterReady, corr, id)
	return nil
}

// onAddStaticCounter returns the static counter with this type and
// registration id, allocating it the first time; static counters have no
// owner and outlive their clients.
func (c *conductor) onAddStaticCounter(typeID int32, key, label []byte, registrationID, corr, clientID int64) error {
	if _, err := c.getOrAddClient(clientID); err != nil {
		return err
	}
	if id := c.counters.FindByTypeAndRegistrationID(typeID, registrationID); id != -1 {
		if c.counters.OwnerID(id) != -1 {
			c.sendError(corr, aeron.ErrorCodeGenericError, fmt.Sprintf("cannot add static counter, because a "+
				"non-static counter exists (counterId=%d) for typeId=%d and registrationId=%d", id, typeID, registrationID))
			return nil
		}
		c.sendCounterUpdate(command.OnStaticCounter, corr, id)
		return nil
	}
	id, err := c.counters.Allocate(typeID, key, label, c.epochMs)
	if err != nil {
		return counterFull(err)
	}
	c.counters.SetRegistrationID(id, registrationID)
	c.counters.SetOwnerID(id, -1)
	c.sendCounterUpdate(command.OnStaticCounter, corr, id)
	return nil
}

func (c *conductor) onRemoveCounter(registrationID, corr int64) error {
	for i, l := range c.counterLinks {
		if l.registrationID != registrationID {
			continue
		}
		last := len(c.counterLinks) - 1
		c.counterLinks[i] = c.counterLinks[last]
		c.counterLinks[last] = nil
		c.counterLinks = c.counterLinks[:last]
		c.sendOperationSuccess(corr)
		c.sendCounterUpdate(command.OnUnavailableCounter, registrationID, l.counterID)
		c.freeCounter(l.counterID)
		return nil
	}
	return protocolError(aeron.ErrorCodeUnknownCounter, "unknown counter: %d", registrationID)
}

// onTerminateDriver asks the validator; an allowed request runs the hook
// (or stops a Start-ed driver). No reply either way.
func (c *conductor) onTerminateDriver(token []byte) {
	v := c.opts.TerminationValidator
	if v == nil || !v(c.opts.Dir, token) {
		return
	}
	if h := c.opts.TerminationHook; h != nil {
		h()
	}
	c.terminated.Store(true)
}

// onRejectImage rejects an IPC image: the publication's publishers get
// ON_PUBLICATION_ERROR and its subscribers lose it for the image liveness
// timeout (IpcPublication.reject).
func (c *conductor) onRejectImage(corr, imageCorrelationID, pos int64, reason string) error {
	if len(reason) > maxErrorMessageLength {
		return protocolError(aeron.ErrorCodeGenericError, "Invalidation reason must be %d bytes or less", maxErrorMessageLength)
	}
	for _, img := range c.images {
		if img.correlationID == imageCorrelationID {
			img.reject(c, reason)
			c.counters.AddValue(sysImagesRejected, 1)
			c.sendOperationSuccess(corr)
			return nil
		}
	}
	var p *ipcPublication
	for _, q := range c.ipcPublications {
		if q.registrationID == imageCorrelationID {
			p = q
			break
		}
	}
	if p == nil {
		return protocolError(aeron.ErrorCodeGenericError, "Unable to resolve image for correlationId=%d", imageCorrelationID)
	}
	c.recordError(fmt.Errorf("WARN - onPublicationError: registrationId=%d, destinationRegistrationId=-1, sessionId=%d, "+
		"streamId=%d, receiverId=-1, groupId=-1, errorCode=%d, errorMessage=%s",
		p.registrationID, p.sessionID, p.streamID, aeron.ErrorCodeImageRejected, reason))
	c.rsp = command.AppendPublicationErrorFrame(c.rsp[:0], p.registrationID, -1, p.sessionID, p.streamID, -1, -1,
		[]byte{127, 0, 0, 1}, 0, int32(aeron.ErrorCodeImageRejected), reason)
	c.tx.Transmit(command.OnPublicationError, c.rsp)
	if !p.inCoolDown {
		p.setConnected(false)
		for _, l := range c.subscriptionLinks {
			if l.linked(p) != nil {
				c.notifyUnavailableImage(p.registrationID, l)
				l.unlink(p)
			}
		}
		for _, s := range p.subs {
			c.freeCounter(s.id)
		}
		for _, u := range p.untethered {
			if u.state == untetheredResting {
				c.freeCounter(u.pos.id)
			}
		}
		p.subs, p.untethered = p.subs[:0], p.untethered[:0]
		p.inCoolDown = true
	}
	p.coolDownExpireNs = c.nowNs + p.imageLivenessNs
	c.counters.AddValue(sysImagesRejected, 1)
	c.sendOperationSuccess(corr)
	return nil
}

// transitionToLinger ends a publication's session and tells every linked
// subscription the image is gone.
func (c *conductor) transitionToLinger(p *ipcPublication) {
	c.removeSessionKey(sessionKey{p.sessionID, p.streamID, ipcSessionKey})
	for _, l := range c.subscriptionLinks {
		if l.linked(p) != nil {
			c.notifyUnavailableImage(p.registrationID, l)
		}
	}
}

func (c *conductor) removeSessionKey(key sessionKey) {
	for i, k := range c.activeSessions {
		if k == key {
			c.activeSessions = append(c.activeSessions[:i], c.activeSessions[i+1:]...)
			return
		}
	}
}

// sessionActive reports whether a publication of the stream on the
// channel (channelKey: ipcSessionKey, a canonical form, or "" for any
// channel) uses the session id.
func (c *conductor) sessionActive(sessionID, streamID int32, channelKey string) bool {
	for _, k := range c.activeSessions {
		if k.sessionID == sessionID && k.streamID == streamID && (channelKey == "" || k.channel == channelKey) {
			return true
		}
	}
	return false
}

// advanceSessionID hands out the next automatic session id, skipping the
// reserved range (DriverConductor.advanceSessionId).
func (c *conductor) advanceSessionID() int32 {
	id := c.nextSessionID
	c.nextSessionID++
	if c.opts.ReservedSessionIDLow <= id && id <= c.opts.ReservedSessionIDHigh {
		c.nextSessionID = c.opts.ReservedSessionIDHigh + 1
		id = c.nextSessionID
		c.nextSessionID++
	}
	return id
}

// nextAvailableSessionID is the next id no active publication of the
// stream on the channel uses.
func (c *conductor) nextAvailableSessionID(streamID int32, channelKey string) int32 {
	for {
		if id := c.advanceSessionID(); !c.sessionActive(id, streamID, channelKey) {
			return id
		}
	}
}

// nextSessionIDForStream answers GET_NEXT_AVAILABLE_SESSION_ID: the same
// rule over every channel.
func (c *conductor) nextSessionIDForStream(streamID int32) int32 {
	return c.nextAvailableSessionID(streamID, "")
}

// subscriptionLinksTick drops the subscriptions of timed-out clients.
func (c *conductor) subscriptionLinksTick() {
	c.subscriptionLinks = checkResources(c.subscriptionLinks,
		func(l *subscriptionLink) bool { l.endOfLife = l.endOfLife || l.client.timedOut; return l.endOfLife },
		c.closeSubscription)
}

// onStart starts the timers from the owner's first clock reading and
// names the driver in counter 25's label (DriverConductor.onStart).
func (c *conductor) onStart(nowNs int64) {
	c.started = true
	c.timerDeadlineNs = nowNs + int64(c.opts.TimerInterval)
	c.clockDeadlineNs = nowNs + int64(clockUpdateInterval)
	c.commandPositionMoveNs = nowNs
	c.lastCommandPosition = c.ring.ConsumerPosition()
	c.counters.AppendLabel(sysResolutionChanges, []byte(": driverName=null"))
}

// heartbeatAndCheckTimers is the conductor's tick: the CnC heartbeat,
// then every resource's timers, in the Java driver's order; resources
// that reached their end of life are closed and dropped.
func (c *conductor) heartbeatAndCheckTimers(nowNs int64) {
	nowMs := c.epochMs
	c.ring.SetConsumerHeartbeat(nowMs)
	c.clients = checkResources(c.clients, func(cl *client) bool { c.clientTick(cl, nowMs); return cl.timedOut },
		c.closeClient)
	c.publicationLinks = checkResources(c.publicationLinks,
		func(l *publicationLink) bool { l.endOfLife = l.endOfLife || l.client.timedOut; return l.endOfLife },
		c.decRefLink)
	c.netPublications = checkResources(c.netPublications,
		func(p *networkPublication) bool { return p.onTimeEvent(c, nowNs) }, c.closeNetworkPublication)
	c.subscriptionLinksTick()
	c.images = checkResources(c.images, func(img *publicationImage) bool { return img.onTimeEvent(c, nowNs) }, c.closeImage)
	c.ipcPublications = checkResources(c.ipcPublications,
		func(p *ipcPublication) bool { p.onTimeEvent(c, nowNs); return p.endOfLife },
		func(p *ipcPublication) { c.closeIPCPublication(p); c.endOfLife = append(c.endOfLife, p.log) })
	c.counterLinks = checkResources(c.counterLinks, func(l *counterLink) bool {
		if !l.endOfLife && l.client.timedOut {
			l.endOfLife = true
			c.sendUnavailableCounter(l.registrationID, l.counterID)
		}
		return l.endOfLife
	}, func(l *counterLink) { c.freeCounter(l.counterID) })
}

// checkResources runs tick on every resource from the last to the first
// and closes and removes (swapping in the last) those it reports at their
// end of life (DriverConductor.checkManagedResources). It allocates
// nothing when nothing ends.
func checkResources[T any](list []T, tick func(T) bool, closeFn func(T)) []T {
	for i := len(list) - 1; i >= 0; i-- {
		r := list[i]
		if tick(r) {
			closeFn(r)
			last := len(list) - 1
			list[i] = list[last]
			var zero T
			list[last] = zero
			list = list[:last]
		}
	}
	return list
}

// clientTick times a client out when its heartbeat counter is older than
// the client liveness timeout (AeronClient.onTimeEvent).
func (c *conductor) clientTick(cl *client, nowMs int64) {
	livenessMs := max(c.opts.ClientLivenessTimeout.Milliseconds(), 1)
	if cl.timedOut || nowMs <= c.subPosition(cl.heartbeat)+livenessMs {
		return
	}
	cl.timedOut = true
	if !cl.closedByCommand {
		c.counters.AddValue(sysClientTimeouts, 1)
		c.sendClientTimeout(cl.id)
	}
	c.sendUnavailableCounter(cl.id, cl.heartbeat.id)
}

func (c *conductor) closeClient(cl *client) { c.freeCounter(cl.heartbeat.id) }

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

// checkForBlockedCommands unblocks the to-driver ring buffer when a
// client claimed a record and never committed it: the consumer has not
// moved for the client liveness timeout while producers are ahead.
func (c *conductor) checkForBlockedCommands(nowNs int64) {
	consumer := c.ring.ConsumerPosition()
	if consumer == c.lastCommandPosition && c.ring.ProducerPosition() > consumer {
		if c.commandPositionMoveNs+int64(c.opts.ClientLivenessTimeout)-nowNs < 0 {
			if c.ring.Unblock() {
				c.counters.AddValue(sysUnblockedCommands, 1)
			}
		}
		return
	}
	c.commandPositionMoveNs = nowNs
	c.lastCommandPosition = consumer
}

func (c *conductor) freeCounter(id int32) {
	if err := c.counters.Free(id, c.epochMs); err != nil {
		c.recordError(err)
	}
}

// sessionKey is an active session (SessionKey): session and stream ids
// are unique per channel, ipcSessionKey or a UDP canonical form.
type sessionKey struct {
	sessionID, streamID int32
	channel             string
}

// ipcSessionKey is the channel of every IPC session key.
const ipcSessionKey = "ipc"
