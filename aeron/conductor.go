package aeron

// The client conductor: the goroutine that reads driver events, keeps the
// client alive, watches the driver and unmaps closed logs. The driver
// protocol's bytes are encoded and decoded by aeron/internal/command.

import (
	"fmt"
	"time"

	"github.com/goblin-kv/goblin/aeron/internal/command"
	"github.com/goblin-kv/goblin/aeron/internal/counters"
	"github.com/goblin-kv/goblin/internal/shm"
)

// run is the conductor goroutine: driver events, keepalives, liveness,
// lingering resources. It is never on the message path.
func (c *Client) run() {
	defer close(c.done)
	idle := c.opts.ConductorIdle
	// The default SleepIdle sleeps on a timer that Close (or a fatal error
	// found on another goroutine) cuts short: Close waits for this
	// goroutine, and must not wait out a sleep.
	sleep, sleeps := idle.(SleepIdle)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		c.mu.Lock()
		if c.closed.Load() {
			c.mu.Unlock()
			return
		}
		w := c.doWork(time.Now())
		c.mu.Unlock()
		if !sleeps || w > 0 {
			idle.Idle(w)
			continue
		}
		timer.Reset(sleep.period())
		select {
		case <-timer.C:
		case <-c.wake:
			timer.Stop()
		}
	}
}

// doWork is one conductor duty cycle; callers hold c.mu.
func (c *Client) doWork(now time.Time) int {
	if c.closed.Load() {
		return 0
	}
	if liveness := c.cnc.clientLiveness; liveness > 0 && now.Sub(c.lastDuty) > liveness {
		c.fail(fmt.Errorf("%w: conductor did not run for %v (> client liveness timeout %v)",
			ErrClientTimeout, now.Sub(c.lastDuty), liveness))
		return 0
	}
	c.lastDuty = now
	work := 0
	for work < 16 && !c.closed.Load() {
		n, err := c.bcast.Receive(c.dispatchFn)
		if err != nil {
			c.report(err)
		}
		if n == 0 {
			break
		}
		work += n
	}
	if c.closed.Load() {
		return work
	}
	// The driver's heartbeat is one atomic load: check it every cycle, so a
	// dead driver is noticed as soon as its stamp is DriverTimeout old.
	if !c.checkDriver(now.UnixMilli()) {
		return work
	}
	if now.Sub(c.lastKeepalive) >= c.opts.KeepaliveInterval {
		c.lastKeepalive = now
		work++
		if !c.checkCnCFile() || !c.stampHeartbeat(now) {
			return work
		}
	}
	if len(c.lingering) > 0 {
		keep := c.lingering[:0]
		for _, r := range c.lingering {
			if now.Sub(r.at) >= c.opts.ResourceLinger {
				delete(c.mapped, r.log)
				shm.Unmap(r.log.data)
				work++
			} else {
				keep = append(keep, r)
			}
		}
		c.lingering = keep
	}
	return work
}

// checkDriver watches the driver's heartbeat: −1 means it shut down, a
// stamp older than the driver timeout means it is gone.
func (c *Client) checkDriver(nowMs int64) bool {
	hb := c.ring.ConsumerHeartbeat()
	if hb == -1 {
		c.fail(fmt.Errorf("%w: driver in %s marked its CnC file shut down", ErrDriverShutdown, c.opts.Dir))
		return false
	}
	if nowMs > hb+c.opts.DriverTimeout.Milliseconds() {
		c.fail(fmt.Errorf("%w: driver heartbeat is %d ms old (driver timeout %v)", ErrDriverTimeout, nowMs-hb, c.opts.DriverTimeout))
		return false
	}
	return true
}

// stampHeartbeat keeps this client alive the 1.51 way: it stores the time
// into the client-heartbeat counter the driver made on the first command.
func (c *Client) stampHeartbeat(now time.Time) bool {
	nowMs := now.UnixMilli()
	r := c.counters
	if c.heartbeatID < 0 {
		c.heartbeatID = r.FindByTypeAndRegistrationID(CounterTypeClientHeartbeat, c.clientID)
		if c.heartbeatID < 0 {
			return true // no command sent yet: the driver has no entry for us
		}
	} else if r.State(c.heartbeatID) != CounterAllocated || r.TypeID(c.heartbeatID) != CounterTypeClientHeartbeat ||
		r.RegistrationID(c.heartbeatID) != c.clientID {
		c.fail(fmt.Errorf("%w: client heartbeat counter %d is no longer active", ErrClientTimeout, c.heartbeatID))
		return false
	}
	// Heartbeat counter: this client is its only writer (release); the
	// driver conductor reads it (acquire) to decide liveness.
	shm.StoreInt64Release(c.countersValues, counters.ValueOffsetOf(c.heartbeatID), nowMs)
	return true
}

func (c *Client) report(err error) {
	if h := c.opts.ErrorHandler; h != nil {
		h(err)
	}
}

// fail closes everything after a fatal error and reports it.
func (c *Client) fail(err error) {
	if c.fatal != nil || c.closed.Load() {
		return
	}
	c.fatal = err
	c.closeAllLocked(err, true)
	c.report(err)
}

// closeAllLocked marks every resource closed; mappings stay until Close.
func (c *Client) closeAllLocked(cause error, notify bool) {
	if !c.closed.Load() {
		close(c.wake)
	}
	c.closed.Store(true)
	for p := range c.pubs {
		p.closed.Store(true)
	}
	for _, s := range c.subs {
		s.closed.Store(true)
		imgs := s.Images()
		empty := []*Image{}
		s.images.Store(&empty)
		for _, img := range imgs {
			img.close()
			if notify {
				c.imageUnavailable(s, img)
			}
		}
	}
	for _, k := range c.ctrs {
		k.closed = true
	}
	_ = cause
}

func (c *Client) usable() error {
	if c.fatal != nil {
		return fmt.Errorf("%w: %w", ErrClientClosed, c.fatal)
	}
	if c.closed.Load() {
		return ErrClientClosed
	}
	return nil
}

func (c *Client) writeCommand(typeID int32, msg []byte) error {
	c.cmd = msg[:0]
	if err := c.ring.Write(typeID, msg); err != nil {
		return fmt.Errorf("aeron: send command %#x: %w", typeID, err)
	}
	return nil
}

// awaitResponse runs the conductor's duty cycle on the calling goroutine
// until the reply to correlationID arrives, as the real clients do.
func (c *Client) awaitResponse(correlationID int64) (int32, []byte, error) {
	c.awaitCorr, c.awaitDone, c.awaitErr, c.awaitMsg = correlationID, false, nil, c.awaitMsg[:0]
	defer func() { c.awaitCorr = nullValue }()
	deadline := time.Now().Add(c.opts.DriverTimeout)
	for {
		now := time.Now()
		c.doWork(now)
		if c.awaitErr != nil {
			return 0, nil, c.awaitErr
		}
		if c.awaitDone {
			return c.awaitType, c.awaitMsg, nil
		}
		if err := c.usable(); err != nil {
			return 0, nil, err
		}
		if now.After(deadline) {
			return 0, nil, fmt.Errorf("%w: no reply to command %d within %v", ErrDriverTimeout, correlationID, c.opts.DriverTimeout)
		}
		if h := c.opts.WhileAwaiting; h != nil && h() > 0 {
			continue
		}
		time.Sleep(awaitingSleep)
	}
}

// dispatch handles one driver event (conductor, under c.mu). Every event
// is broadcast to every client; each keeps those that name its commands,
// its client id or its subscriptions.
func (c *Client) dispatch(typeID int32, msg []byte) {
	switch typeID {
	case command.OnError:
		if len(msg) < command.ErrorResponseMinLength {
			return
		}
		e := command.ErrorResponse(msg)
		corr, code := e.OffendingCorrelationID(), ErrorCode(e.Code())
		if corr == c.awaitCorr && code != ErrorCodeChannelEndpointError {
			c.awaitErr = &DriverError{Code: code, Message: e.Message(), CorrelationID: corr}
			return
		}
		if code == ErrorCodeChannelEndpointError && c.ownsStatusID(int32(corr)) {
			c.report(&DriverError{Code: code, Message: e.Message(), CorrelationID: corr})
		}
	case command.OnPublicationReady, command.OnExclusivePublicationReady, command.OnSubscriptionReady,
		command.OnOperationSuccess, command.OnStaticCounter, command.OnNextAvailableSessionID:
		if len(msg) >= command.CorrelatedResponseLength && command.OperationSucceeded(msg).CorrelationID() == c.awaitCorr {
			c.awaitDone, c.awaitType, c.awaitMsg = true, typeID, append(c.awaitMsg[:0], msg...)
		}
	case command.OnCounterReady:
		if len(msg) < command.CounterUpdateLength {
			return
		}
		u := command.CounterUpdate(msg)
		if u.CorrelationID() == c.awaitCorr {
			c.awaitDone, c.awaitType, c.awaitMsg = true, typeID, append(c.awaitMsg[:0], msg...)
		}
		if u.CorrelationID() == c.clientID {
			c.heartbeatID = u.Value()
		}
	case command.OnAvailableImage:
		c.onAvailableImage(msg)
	case command.OnUnavailableImage:
		if len(msg) < command.ImageMessageMinLength {
			return
		}
		m := command.ImageMessage(msg)
		s := c.subs[m.SubscriptionRegistrationID()]
		if s == nil {
			return
		}
		if img := s.removeImage(m.CorrelationID()); img != nil {
			img.close()
			c.linger(img.log)
			c.imageUnavailable(s, img)
		}
	case command.OnUnavailableCounter:
		if len(msg) >= command.CounterUpdateLength {
			if k := c.ctrs[command.CounterUpdate(msg).CorrelationID()]; k != nil {
				k.closed = true
			}
		}
	case command.OnClientTimeout:
		if len(msg) >= command.CorrelatedResponseLength && command.ClientTimeout(msg).ClientID() == c.clientID {
			c.fail(fmt.Errorf("%w: the driver timed this client (%d) out", ErrClientTimeout, c.clientID))
		}
	case command.OnPublicationError:
		if len(msg) >= command.PublicationErrorMinLength {
			e := command.PublicationErrorFrame(msg)
			reg := e.RegistrationID()
			for p := range c.pubs {
				if p.originalRegID == reg {
					c.report(&DriverError{Code: ErrorCode(e.Code()), Message: e.Message(), CorrelationID: reg})
					break
				}
			}
		}
	}
}

func (c *Client) ownsStatusID(id int32) bool {
	for p := range c.pubs {
		if p.statusID == id {
			return true
		}
	}
	for _, s := range c.subs {
		if s.statusID == id {
			return true
		}
	}
	return false
}

func (c *Client) onAvailableImage(msg []byte) {
	if len(msg) < command.ImageBuffersReadyMinLength {
		return
	}
	m := command.ImageBuffersReady(msg)
	corr, subID := m.CorrelationID(), m.SubscriptionRegistrationID()
	s := c.subs[subID]
	if s == nil || s.closed.Load() {
		return
	}
	for _, img := range s.Images() {
		if img.correlationID == corr {
			return
		}
	}
	// An image from the network is mapped lazily: its term length is the
	// remote sender's choice (up to the driver's image term ceiling), so
	// prefaulting it would let any host that can send a SETUP make this
	// process allocate the whole log and spend up to a second of CPU
	// writing to it (a 64 MiB-term image: 192 MiB, ~0.9 s on 2 vCPUs).
	// Its pages are the receiver's to fill; a poll takes a minor fault the
	// first time it reads each one.
	log, err := c.mapLog(m.LogFileName(), m.SourceIdentity() == ipcSourceIdentity)
	if err != nil {
		c.report(fmt.Errorf("aeron: image %d of subscription %d: %w", corr, subID, err))
		return
	}
	img := newImage(s, log, c.countersValues, m.SubscriberPositionID(), corr, m.SessionID(), m.SourceIdentity())
	s.addImage(img)
	if h := s.onAvailable; h != nil {
		h(img)
	} else if h := c.opts.AvailableImageHandler; h != nil {
		h(img)
	}
}

func (c *Client) imageUnavailable(s *Subscription, img *Image) {
	if h := s.onUnavailable; h != nil {
		h(img)
	} else if h := c.opts.UnavailableImageHandler; h != nil {
		h(img)
	}
}

// ipcSourceIdentity is the source identity of an IPC image, whose log is
// a local publication's.
const ipcSourceIdentity = "aeron:ipc"

// mapLog maps a log buffer, faulting every page in now when prefault is
// asked for and Options.NoPrefault does not forbid it.
func (c *Client) mapLog(path string, prefault bool) (*logBuffer, error) {
	mapFile := shm.MapPrefault
	if c.opts.NoPrefault || !prefault {
		mapFile = shm.Map
	}
	data, err := mapFile(path)
	if err != nil {
		return nil, err
	}
	log, err := newLogBuffer(data)
	if err != nil {
		shm.Unmap(data)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.mapped[log] = struct{}{}
	return log, nil
}

func (c *Client) linger(log *logBuffer) {
	c.lingering = append(c.lingering, lingerRes{log: log, at: time.Now()})
}
