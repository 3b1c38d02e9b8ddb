package driver

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/internal/command"
	"github.com/goblin-kv/goblin/aeron/internal/counters"
	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/aeron/internal/uri"
)

// readCommands reads the commands clients wrote into the to-driver ring
// buffer. A record no producer could have written (its length does not
// fit the ring) is skipped with what follows it up to the tail, counted as
// an error and logged: a client of the same user can scribble on the CnC,
// and the driver carries on.
func (d *Driver) readCommands() int {
	before := d.ring.Corrupt()
	n := d.ring.Read(d.onCommandFn, commandDrainLimit)
	if d.ring.Corrupt() != before {
		d.recordError(errors.New("to-driver ring buffer: skipped a record whose length does not fit the ring " +
			"(a client wrote over the CnC); the commands behind it up to the tail are lost"))
	}
	return n
}

// onCommand handles one command from the to-driver ring buffer
// (ClientCommandAdapter.onMessage): a refused command gets ON_ERROR with
// the failing command's correlation id (0 when it failed before the id was
// read, as for a malformed or unknown command).
func (d *Driver) onCommand(typeID int32, msg []byte) {
	var corr int64
	if err := d.dispatch(typeID, msg, &corr); err != nil {
		d.onCommandError(corr, err)
	}
}

func (d *Driver) dispatch(typeID int32, msg []byte, corr *int64) error {
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
			return d.onAddNetworkPublication(channel, m.StreamID(), *corr, hdr.ClientID(), typeID == command.AddExclusivePublication)
		}
		return d.onAddIPCPublication(channel, m.StreamID(), *corr, hdr.ClientID(), typeID == command.AddExclusivePublication)
	case command.RemovePublication:
		// No length check, as in the Java driver: 24 bytes mean no flags.
		if len(msg) < command.CorrelatedLength+8 {
			return malformed(command.RemoveMessage(msg).Validate(typeID))
		}
		m := command.RemovePublicationMessage(msg)
		*corr = hdr.CorrelationID()
		return d.onRemovePublication(m.RegistrationID(), *corr, m.Revoke())
	case command.AddSubscription:
		m := command.SubscriptionMessage(msg)
		if err := m.Validate(typeID); err != nil {
			return malformed(err)
		}
		*corr = hdr.CorrelationID()
		channel := string(m.Channel())
		switch {
		case strings.HasPrefix(channel, ipcChannel):
			return d.onAddIPCSubscription(channel, m.StreamID(), *corr, hdr.ClientID())
		case strings.HasPrefix(channel, uri.SpyPrefix):
			return d.onAddSpySubscription(channel, m.StreamID(), *corr, hdr.ClientID())
		}
		return d.onAddNetworkSubscription(channel, m.StreamID(), *corr, hdr.ClientID())
	case command.RemoveSubscription:
		m := command.RemoveMessage(msg)
		if err := m.Validate(typeID); err != nil {
			return malformed(err)
		}
		*corr = hdr.CorrelationID()
		return d.onRemoveSubscription(m.RegistrationID(), *corr)
	case command.AddDestination, command.RemoveDestination:
		m := command.DestinationMessage(msg)
		if err := m.Validate(typeID); err != nil {
			return malformed(err)
		}
		*corr = hdr.CorrelationID()
		return d.onSendDestination(typeID == command.AddDestination, m.RegistrationID(), string(m.Channel()), *corr)
	case command.RemoveDestinationByID:
		m := command.DestinationByIDMessage(msg)
		if err := m.Validate(typeID); err != nil {
			return malformed(err)
		}
		*corr = hdr.CorrelationID()
		return d.onRemoveDestinationByID(m.ResourceRegistrationID(), m.DestinationRegistrationID(), *corr)
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
		return d.onRemoveRcvDestination(m.RegistrationID(), string(m.Channel()), *corr)
	case command.ClientKeepalive:
		if err := hdr.Validate(typeID); err != nil {
			return malformed(err)
		}
		if c := d.findClient(hdr.ClientID()); c != nil {
			d.setPosition(c.heartbeat, d.epochMs)
		}
		return nil
	case command.ClientClose:
		if err := hdr.Validate(typeID); err != nil {
			return malformed(err)
		}
		if c := d.findClient(hdr.ClientID()); c != nil {
			c.closedByCommand = true
			d.setPosition(c.heartbeat, 0)
		}
		return nil
	case command.AddCounter:
		m := command.CounterMessage(msg)
		if err := m.Validate(typeID); err != nil {
			return malformed(err)
		}
		*corr = hdr.CorrelationID()
		return d.onAddCounter(m.TypeID(), m.Key(), m.Label(), *corr, hdr.ClientID())
	case command.AddStaticCounter:
		m := command.StaticCounterMessage(msg)
		if err := m.Validate(typeID); err != nil {
			return malformed(err)
		}
		*corr = hdr.CorrelationID()
		return d.onAddStaticCounter(m.TypeID(), m.Key(), m.Label(), m.RegistrationID(), *corr, hdr.ClientID())
	case command.RemoveCounter:
		m := command.RemoveMessage(msg)
		if err := m.Validate(typeID); err != nil {
			return malformed(err)
		}
		*corr = hdr.CorrelationID()
		return d.onRemoveCounter(m.RegistrationID(), *corr)
	case command.TerminateDriver:
		m := command.TerminateDriverMessage(msg)
		if err := m.Validate(typeID); err != nil {
			return malformed(err)
		}
		d.onTerminateDriver(m.Token())
		return nil
	case command.RejectImage:
		m := command.RejectImageMessage(msg)
		if err := m.Validate(typeID); err != nil {
			return malformed(err)
		}
		*corr = hdr.CorrelationID()
		return d.onRejectImage(*corr, m.ImageCorrelationID(), m.Position(), string(m.Reason()))
	case command.GetNextAvailableSessionID:
		m := command.GetNextSessionIDMessage(msg)
		if err := m.Validate(typeID); err != nil {
			return malformed(err)
		}
		*corr = hdr.CorrelationID()
		d.sendCounterUpdate(command.OnNextAvailableSessionID, *corr, d.nextSessionIDForStream(m.StreamID()))
		return nil
	}
	return protocolError(aeron.ErrorCodeUnknownCommandTypeID, "command typeId=%d", typeID)
}

func malformed(err error) error {
	return protocolError(aeron.ErrorCodeMalformedCommand, "%s", err.Error())
}

// onCommandError counts and logs a refused command and tells the client
// (ClientCommandAdapter.onError).
func (d *Driver) onCommandError(corr int64, err error) {
	code, text, logged := errorCodeOf(err)
	d.recordError(errors.New(logged))
	d.sendError(corr, code, text)
}

func (d *Driver) findClient(id int64) *client {
	for _, c := range d.clients {
		if c.id == id {
			return c
		}
	}
	return nil
}

// getOrAddClient finds the client, or registers it: its heartbeat counter
// (type 11, value now, registration and owner id the client id) is
// allocated and announced with ON_COUNTER_READY(clientId) before the
// reply to the command that named it (DriverConductor.getOrAddClient).
func (d *Driver) getOrAddClient(id int64) (*client, error) {
	if c := d.findClient(id); c != nil {
		return c, nil
	}
	key := command.AppendInt64(d.scratch[:0], id)
	label := strconv.AppendInt(append(key, "client-heartbeat: id="...), id, 10)[len(key):]
	counterID, err := d.counters.Allocate(counters.TypeClientHeartbeat, key, label, d.epochMs)
	if err != nil {
		return nil, counterFull(err)
	}
	c := &client{id: id, heartbeat: d.positionOf(counterID)}
	d.setPosition(c.heartbeat, d.epochMs)
	d.counters.SetRegistrationID(counterID, id)
	d.counters.SetOwnerID(counterID, id)
	d.clients = append(d.clients, c)
	d.sendCounterUpdate(command.OnCounterReady, id, counterID)
	return c, nil
}

func counterFull(err error) error {
	return genericError(illegalState, "%s", err.Error())
}

// allocateStreamCounter allocates a per-stream counter with the key and
// label every real driver gives it (StreamCounter.allocateCounterId):
// key = registration id, session id, stream id, channel (truncated to the
// key); label = "<name>: <reg> <session> <stream> <channel>[ @<join>]".
func (d *Driver) allocateStreamCounter(name string, typeID int32, clientID, registrationID int64,
	sessionID, streamID int32, channel string, joinPosition int64) (int32, error) {
	const maxChannel = counters.MaxKeyLength - 20
	key := command.AppendInt64(d.scratch[:0], registrationID)
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
	d.scratch = b[:0]
	id, err := d.counters.Allocate(typeID, b[:labelStart], b[labelStart:], d.epochMs)
	if err != nil {
		return -1, counterFull(err)
	}
	d.counters.SetRegistrationID(id, registrationID)
	d.counters.SetOwnerID(id, clientID)
	return id, nil
}

// onAddIPCPublication adds an IPC publication, or a handle on an existing
// one: a concurrent add shares the active concurrent publication of the
// stream (and response correlation id), after checking that every
// parameter the new channel names matches it (DriverConductor.onAddIpcPublication).
func (d *Driver) onAddIPCPublication(channel string, streamID int32, corr, clientID int64, exclusive bool) error {
	u, err := parseURI(channel)
	if err != nil {
		return err
	}
	params, err := d.publicationParams(u, streamID, ipcSessionKey)
	if err != nil {
		return err
	}
	var pub *ipcPublication
	if !exclusive {
		pub = d.findSharedIPCPublication(streamID, params.responseCorrelationID)
	}
	isNew := pub == nil
	if isNew {
		if d.sessionActive(params.sessionID, streamID, ipcSessionKey) {
			return invalidChannel("existing publication has clashing sessionId=%d for streamId=%d channel=%s",
				params.sessionID, streamID, channel)
		}
		if pub, err = d.addIPCPublication(corr, clientID, streamID, channel, exclusive, params); err != nil {
			return err
		}
	} else if err := confirmMatch(u, params, &pub.logPublication); err != nil {
		return err
	}
	c, err := d.getOrAddClient(clientID)
	if err != nil {
		return err
	}
	pub.incRef()
	d.publicationLinks = append(d.publicationLinks, &publicationLink{registrationID: corr, client: c, ipc: pub})
	typeID := command.OnPublicationReady
	if exclusive {
		typeID = command.OnExclusivePublicationReady
	}
	d.rsp = command.AppendPublicationBuffersReady(d.rsp[:0], corr, pub.registrationID, pub.sessionID, streamID,
		pub.pubLmt.id, -1, pub.log.path)
	d.tx.Transmit(typeID, d.rsp)
	if isNew {
		d.linkIPCSubscriptions(pub)
	}
	return nil
}

// newLogPublication fills what every publication records about itself.
func (d *Driver) newLogPublication(corr int64, channel string, streamID int32, exclusive bool, params *publicationParams,
	log *rawLog, posID, lmtID int32) logPublication {
	return logPublication{
		registrationID: corr, channel: channel, entityTag: params.entityTag,
		sessionID: params.sessionID, streamID: streamID, initialTermID: params.initialTermID,
		startingTermID: params.termID, startingTermOffset: params.termOffset, exclusive: exclusive,
		responseCorrelationID: params.responseCorrelationID, termLength: params.termLength,
		bitsToShift: logbuffer.PositionBitsToShift(params.termLength),
		mtu:         params.mtu, termWindow: int64(params.window),
		log: log, pubPos: d.positionOf(posID), pubLmt: d.positionOf(lmtID),
		unblockTimeoutNs:        int64(d.opts.PublicationUnblockTimeout),
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

func (d *Driver) findSharedIPCPublication(streamID int32, responseCorrelationID int64) *ipcPublication {
	for _, p := range d.ipcPublications {
		if p.streamID == streamID && !p.exclusive && p.state == pubActive && p.responseCorrelationID == responseCorrelationID {
			return p
		}
	}
	return nil
}

func (d *Driver) findIPCPublicationByTag(tag int64) *ipcPublication {
	for _, p := range d.ipcPublications {
		if p.entityTag == tag && tag != invalidTag {
			return p
		}
	}
	return nil
}

// addIPCPublication creates the log in publications/<corr>.logbuffer and
// the pub-pos and pub-lmt counters (DriverConductor.addIpcPublication).
func (d *Driver) addIPCPublication(corr, clientID int64, streamID int32, channel string, exclusive bool,
	params *publicationParams) (*ipcPublication, error) {
	log, err := d.newRawLog(filepath.Join(d.opts.Dir, publicationsDir), corr, params.termLength, params.sparse)
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
	}, d.opts.FilePageSize, d.osb)
	name := "pub-pos (concurrent)"
	if exclusive {
		name = "pub-pos (exclusive)"
	}
	posID, err := d.allocateStreamCounter(name, counters.TypePublisherPosition, clientID, corr, params.sessionID, streamID, channel, -1)
	if err != nil {
		d.freeRawLog(log)
		return nil, err
	}
	lmtID, err := d.allocateStreamCounter("pub-lmt", counters.TypePublisherLimit, clientID, corr, params.sessionID, streamID, channel, -1)
	if err != nil {
		d.freeCounter(posID)
		d.freeRawLog(log)
		return nil, err
	}
	p := &ipcPublication{
		logPublication:  d.newLogPublication(corr, channel, streamID, exclusive, params, log, posID, lmtID),
		tripGain:        int64(params.window >> 3),
		imageLivenessNs: int64(d.opts.ImageLivenessTimeout),
	}
	if params.hasPosition {
		start := logbuffer.ComputePosition(params.termID, int(params.termOffset), p.bitsToShift, params.initialTermID)
		d.setPosition(p.pubPos, start)
		d.setPosition(p.pubLmt, start)
	}
	p.consumerPosition = p.producerPosition()
	p.lastConsumerPosition = p.consumerPosition
	p.cleanPosition = p.consumerPosition
	p.consumerChangedNs = d.nowNs
	d.findAndUpdateResponseIPCSubscription(params, p)
	d.ipcPublications = append(d.ipcPublications, p)
	d.activeSessions = append(d.activeSessions, sessionKey{params.sessionID, streamID, ipcSessionKey})
	return p, nil
}

// findAndUpdateResponseIPCSubscription completes an IPC response channel:
// a response publication names, in response-correlation-id, the request
// publication, whose own response-correlation-id names the client's
// response subscription; that subscription now matches this session.
func (d *Driver) findAndUpdateResponseIPCSubscription(params *publicationParams, pub *ipcPublication) {
	if params.responseCorrelationID == -1 {
		return
	}
	for _, request := range d.ipcPublications {
		if request.registrationID != params.responseCorrelationID {
			continue
		}
		for _, l := range d.subscriptionLinks {
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
func (d *Driver) linkIPCSubscriptions(p *ipcPublication) {
	for _, l := range d.subscriptionLinks {
		if l.matches(p) && l.linked(p) == nil && d.isAcceptingSubscriptions(p) {
			if pos, err := d.linkIPCSubscription(p, l); err != nil {
				d.recordError(err)
			} else {
				d.sendAvailableImage(p, l.registrationID, pos.id)
			}
		}
	}
}

// linkIPCSubscription gives subscription l a sub-pos on p at the join
// position.
func (d *Driver) linkIPCSubscription(p *ipcPublication, l *subscriptionLink) (position, error) {
	pos, err := d.linkPosition(l, p, p.sessionID, l.streamID, p.registrationID, d.joinPosition(p))
	if err != nil {
		return position{}, err
	}
	d.addSubscriber(p, l, pos, d.nowNs)
	return pos, nil
}

// linkPosition gives subscription l a sub-pos counter for session and
// stream on res at join, its reference id refID, and records it in l.
func (d *Driver) linkPosition(l *subscriptionLink, res subscribable, sessionID, streamID int32, refID, join int64) (position, error) {
	id, err := d.allocateStreamCounter("sub-pos", counters.TypeSubscriberPosition, l.client.id, l.registrationID,
		sessionID, streamID, l.channel, join)
	if err != nil {
		return position{}, err
	}
	d.counters.SetReferenceID(id, refID)
	pos := d.positionOf(id)
	d.setPosition(pos, join)
	l.positions = append(l.positions, linkedPosition{res: res, pos: pos})
	return pos, nil
}

func (d *Driver) onAddIPCSubscription(channel string, streamID int32, registrationID, clientID int64) error {
	u, err := parseURI(channel)
	if err != nil {
		return err
	}
	params, c, err := d.subscriber(u, clientID)
	if err != nil {
		return err
	}
	l := &subscriptionLink{registrationID: registrationID, streamID: streamID, channel: channel, client: c,
		sessionID: params.sessionID, hasSessionID: params.hasSessionID, isResponse: params.isResponse,
		tether: params.tether, rejoin: params.rejoin, sparse: params.sparse}
	d.subscriptionLinks = append(d.subscriptionLinks, l)
	d.sendCounterUpdate(command.OnSubscriptionReady, registrationID, -1)
	for _, p := range d.ipcPublications {
		if l.matches(p) && d.isAcceptingSubscriptions(p) {
			pos, err := d.linkIPCSubscription(p, l)
			if err != nil {
				return err
			}
			d.sendAvailableImage(p, registrationID, pos.id)
		}
	}
	return nil
}

func (d *Driver) onRemovePublication(registrationID, corr int64, revoke bool) error {
	for i, l := range d.publicationLinks {
		if l.registrationID != registrationID {
			continue
		}
		last := len(d.publicationLinks) - 1
		d.publicationLinks[i] = d.publicationLinks[last]
		d.publicationLinks[last] = nil
		d.publicationLinks = d.publicationLinks[:last]
		if revoke {
			l.revoke()
		}
		d.decRefLink(l)
		d.sendOperationSuccess(corr)
		return nil
	}
	return protocolError(aeron.ErrorCodeUnknownPublication, "unknown publication: %d", registrationID)
}

// onRemoveSubscription removes every link with the registration id; no
// ON_UNAVAILABLE_IMAGE goes to the subscription itself.
func (d *Driver) onRemoveSubscription(registrationID, corr int64) error {
	found := false
	for i := len(d.subscriptionLinks) - 1; i >= 0; i-- {
		l := d.subscriptionLinks[i]
		if l.registrationID != registrationID {
			continue
		}
		last := len(d.subscriptionLinks) - 1
		d.subscriptionLinks[i] = d.subscriptionLinks[last]
		d.subscriptionLinks[last] = nil
		d.subscriptionLinks = d.subscriptionLinks[:last]
		d.closeSubscription(l)
		found = true
	}
	if !found {
		return protocolError(aeron.ErrorCodeUnknownSubscription, "unknown subscription: %d", registrationID)
	}
	d.sendOperationSuccess(corr)
	return nil
}

// onRemoveRcvDestination removes an IPC "destination" the way the Java
// driver does: the link with that registration id and channel.
func (d *Driver) onRemoveRcvDestination(registrationID int64, channel string, corr int64) error {
	for i, l := range d.subscriptionLinks {
		if l.registrationID != registrationID || l.channel != channel {
			continue
		}
		last := len(d.subscriptionLinks) - 1
		d.subscriptionLinks[i] = d.subscriptionLinks[last]
		d.subscriptionLinks[last] = nil
		d.subscriptionLinks = d.subscriptionLinks[:last]
		linked := make([]int64, 0, len(l.positions))
		for _, lp := range l.positions {
			linked = append(linked, lp.res.notifyID())
		}
		d.closeSubscription(l)
		d.sendOperationSuccess(corr)
		for _, id := range linked {
			d.notifyUnavailableImage(id, l)
		}
		return nil
	}
	return protocolError(aeron.ErrorCodeUnknownSubscription, "unknown subscription: %d", registrationID)
}

func (d *Driver) onAddCounter(typeID int32, key, label []byte, corr, clientID int64) error {
	c, err := d.getOrAddClient(clientID)
	if err != nil {
		return err
	}
	id, err := d.counters.Allocate(typeID, key, label, d.epochMs)
	if err != nil {
		return counterFull(err)
	}
	d.counters.SetRegistrationID(id, corr)
	d.counters.SetOwnerID(id, clientID)
	d.counterLinks = append(d.counterLinks, &counterLink{registrationID: corr, counterID: id, client: c})
	d.sendCounterUpdate(command.OnCounterReady, corr, id)
	return nil
}

// onAddStaticCounter returns the static counter with this type and
// registration id, allocating it the first time; static counters have no
// owner and outlive their clients.
func (d *Driver) onAddStaticCounter(typeID int32, key, label []byte, registrationID, corr, clientID int64) error {
	if _, err := d.getOrAddClient(clientID); err != nil {
		return err
	}
	if id := d.counters.FindByTypeAndRegistrationID(typeID, registrationID); id != -1 {
		if d.counters.OwnerID(id) != -1 {
			d.sendError(corr, aeron.ErrorCodeGenericError, fmt.Sprintf("cannot add static counter, because a "+
				"non-static counter exists (counterId=%d) for typeId=%d and registrationId=%d", id, typeID, registrationID))
			return nil
		}
		d.sendCounterUpdate(command.OnStaticCounter, corr, id)
		return nil
	}
	id, err := d.counters.Allocate(typeID, key, label, d.epochMs)
	if err != nil {
		return counterFull(err)
	}
	d.counters.SetRegistrationID(id, registrationID)
	d.counters.SetOwnerID(id, -1)
	d.sendCounterUpdate(command.OnStaticCounter, corr, id)
	return nil
}

func (d *Driver) onRemoveCounter(registrationID, corr int64) error {
	for i, l := range d.counterLinks {
		if l.registrationID != registrationID {
			continue
		}
		last := len(d.counterLinks) - 1
		d.counterLinks[i] = d.counterLinks[last]
		d.counterLinks[last] = nil
		d.counterLinks = d.counterLinks[:last]
		d.sendOperationSuccess(corr)
		d.sendCounterUpdate(command.OnUnavailableCounter, registrationID, l.counterID)
		d.freeCounter(l.counterID)
		return nil
	}
	return protocolError(aeron.ErrorCodeUnknownCounter, "unknown counter: %d", registrationID)
}

// onTerminateDriver asks the validator; an allowed request runs the hook
// (or stops a Start-ed driver). No reply either way.
func (d *Driver) onTerminateDriver(token []byte) {
	v := d.opts.TerminationValidator
	if v == nil || !v(d.opts.Dir, token) {
		return
	}
	if h := d.opts.TerminationHook; h != nil {
		h()
	}
	d.terminated.Store(true)
}

// onRejectImage rejects an IPC image: the publication's publishers get
// ON_PUBLICATION_ERROR and its subscribers lose it for the image liveness
// timeout (IpcPublication.reject).
func (d *Driver) onRejectImage(corr, imageCorrelationID, pos int64, reason string) error {
	if len(reason) > maxErrorMessageLength {
		return protocolError(aeron.ErrorCodeGenericError, "Invalidation reason must be %d bytes or less", maxErrorMessageLength)
	}
	for _, img := range d.images {
		if img.correlationID == imageCorrelationID {
			d.rejectImage(img, reason)
			d.counters.AddValue(sysImagesRejected, 1)
			d.sendOperationSuccess(corr)
			return nil
		}
	}
	var p *ipcPublication
	for _, q := range d.ipcPublications {
		if q.registrationID == imageCorrelationID {
			p = q
			break
		}
	}
	if p == nil {
		return protocolError(aeron.ErrorCodeGenericError, "Unable to resolve image for correlationId=%d", imageCorrelationID)
	}
	d.recordError(fmt.Errorf("WARN - onPublicationError: registrationId=%d, destinationRegistrationId=-1, sessionId=%d, "+
		"streamId=%d, receiverId=-1, groupId=-1, errorCode=%d, errorMessage=%s",
		p.registrationID, p.sessionID, p.streamID, aeron.ErrorCodeImageRejected, reason))
	d.rsp = command.AppendPublicationErrorFrame(d.rsp[:0], p.registrationID, -1, p.sessionID, p.streamID, -1, -1,
		[]byte{127, 0, 0, 1}, 0, int32(aeron.ErrorCodeImageRejected), reason)
	d.tx.Transmit(command.OnPublicationError, d.rsp)
	if !p.inCoolDown {
		p.setConnected(false)
		for _, l := range d.subscriptionLinks {
			if l.linked(p) != nil {
				d.notifyUnavailableImage(p.registrationID, l)
				l.unlink(p)
			}
		}
		for _, s := range p.subs {
			d.freeCounter(s.id)
		}
		for _, u := range p.untethered {
			if u.state == untetheredResting {
				d.freeCounter(u.pos.id)
			}
		}
		p.subs, p.untethered = p.subs[:0], p.untethered[:0]
		p.inCoolDown = true
	}
	p.coolDownExpireNs = d.nowNs + p.imageLivenessNs
	d.counters.AddValue(sysImagesRejected, 1)
	d.sendOperationSuccess(corr)
	return nil
}

// transitionToLinger ends a publication's session and tells every linked
// subscription the image is gone.
func (d *Driver) transitionToLinger(p *ipcPublication) {
	d.removeSessionKey(sessionKey{p.sessionID, p.streamID, ipcSessionKey})
	for _, l := range d.subscriptionLinks {
		if l.linked(p) != nil {
			d.notifyUnavailableImage(p.registrationID, l)
		}
	}
}

func (d *Driver) removeSessionKey(key sessionKey) {
	for i, k := range d.activeSessions {
		if k == key {
			d.activeSessions = append(d.activeSessions[:i], d.activeSessions[i+1:]...)
			return
		}
	}
}

// sessionActive reports whether a publication of the stream on the
// channel (channelKey: ipcSessionKey, a canonical form, or "" for any
// channel) uses the session id.
func (d *Driver) sessionActive(sessionID, streamID int32, channelKey string) bool {
	for _, k := range d.activeSessions {
		if k.sessionID == sessionID && k.streamID == streamID && (channelKey == "" || k.channel == channelKey) {
			return true
		}
	}
	return false
}

// advanceSessionID hands out the next automatic session id, skipping the
// reserved range (DriverConductor.advanceSessionId).
func (d *Driver) advanceSessionID() int32 {
	id := d.nextSessionID
	d.nextSessionID++
	if d.opts.ReservedSessionIDLow <= id && id <= d.opts.ReservedSessionIDHigh {
		d.nextSessionID = d.opts.ReservedSessionIDHigh + 1
		id = d.nextSessionID
		d.nextSessionID++
	}
	return id
}

// nextAvailableSessionID is the next id no active publication of the
// stream on the channel uses.
func (d *Driver) nextAvailableSessionID(streamID int32, channelKey string) int32 {
	for {
		if id := d.advanceSessionID(); !d.sessionActive(id, streamID, channelKey) {
			return id
		}
	}
}

// nextSessionIDForStream answers GET_NEXT_AVAILABLE_SESSION_ID: the same
// rule over every channel.
func (d *Driver) nextSessionIDForStream(streamID int32) int32 {
	return d.nextAvailableSessionID(streamID, "")
}

// subscriptionLinksTick drops the subscriptions of timed-out clients.
func (d *Driver) subscriptionLinksTick() {
	d.subscriptionLinks = checkResources(d.subscriptionLinks,
		func(l *subscriptionLink) bool { l.endOfLife = l.endOfLife || l.client.timedOut; return l.endOfLife },
		d.closeSubscription)
}
