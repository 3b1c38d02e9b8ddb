package driver

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/internal/broadcast"
	"github.com/goblin-kv/goblin/aeron/internal/command"
	"github.com/goblin-kv/goblin/aeron/internal/counters"
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
	// events is the event log (eventlog.go), nil unless AERON_EVENT_LOG
	// enables an event.
	events *eventLog
	osb    osSocketBuffers

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

	csvRows                []csvNameRow        // the csv_table name resolver's table (resolution.go)
	nameResolver           *driverNameResolver // the driver name resolver, nil unless configured (driverresolver.go)
	senderPorts            portRange           // wildcard port ranges (portmanager.go)
	receiverPorts          portRange
	reResolutionDeadlineNs int64

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
	c.checkReResolution(nowNs)
	if c.nameResolver != nil {
		work += c.nameResolver.doWork(c.epochMs)
	}
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
	if c.events != nil {
		c.events.command(typeID, msg)
	}
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
		return c.onAddRcvDestination(m.RegistrationID(), string(m.Channel()), *corr)
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
	c.transmit(command.OnPublicationError, c.rsp)
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

// onStart starts the timers from the owner's first clock reading and
// names the driver in counter 25's label (DriverConductor.onStart).
func (c *conductor) onStart(nowNs int64) {
	c.started = true
	c.timerDeadlineNs = nowNs + int64(c.opts.TimerInterval)
	c.clockDeadlineNs = nowNs + int64(clockUpdateInterval)
	c.commandPositionMoveNs = nowNs
	c.lastCommandPosition = c.ring.ConsumerPosition()
	c.counters.AppendLabel(sysResolutionChanges, []byte(": driverName="+c.resolverNameLabel()))
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
