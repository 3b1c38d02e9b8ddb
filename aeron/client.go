package aeron

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goblin-kv/goblin/internal/shm"
)

// Command type ids (client → driver).
const (
	cmdAddPublication          = 0x01
	cmdRemovePublication       = 0x02
	cmdAddExclusivePublication = 0x03
	cmdAddSubscription         = 0x04
	cmdRemoveSubscription      = 0x05
	cmdAddDestination          = 0x07
	cmdRemoveDestination       = 0x08
	cmdAddCounter              = 0x09
	cmdRemoveCounter           = 0x0A
	cmdClientClose             = 0x0B
	cmdAddRcvDestination       = 0x0C
	cmdRemoveRcvDestination    = 0x0D
)

// Response type ids (driver → clients).
const (
	rspOnError                     = 0x0F01
	rspOnAvailableImage            = 0x0F02
	rspOnPublicationReady          = 0x0F03
	rspOnOperationSuccess          = 0x0F04
	rspOnUnavailableImage          = 0x0F05
	rspOnExclusivePublicationReady = 0x0F06
	rspOnSubscriptionReady         = 0x0F07
	rspOnCounterReady              = 0x0F08
	rspOnUnavailableCounter        = 0x0F09
	rspOnClientTimeout             = 0x0F0A
	rspOnStaticCounter             = 0x0F0B
	rspOnPublicationError          = 0x0F0C
	rspOnNextAvailableSessionID    = 0x0F0D
	maxChannelLength               = 4095
	defaultDriverTimeout           = 10 * time.Second
	defaultKeepaliveInterval       = 500 * time.Millisecond
	defaultResourceLinger          = 3 * time.Second
	defaultConductorIdle           = 2 * time.Millisecond
	awaitingSleep                  = time.Millisecond
)

// Options configure a Client. The zero value works: it connects to the
// default Aeron directory with the real clients' default timeouts.
type Options struct {
	// Dir is the media driver's Aeron directory (default DefaultDir()).
	Dir string
	// DriverTimeout bounds waiting for the driver: at connect, for each
	// command's reply, and for the driver's heartbeat (default 10 s).
	DriverTimeout time.Duration
	// KeepaliveInterval is how often the conductor stamps the client's
	// heartbeat counter (default 500 ms). The driver's heartbeat is checked
	// on every conductor cycle.
	KeepaliveInterval time.Duration
	// ResourceLinger is how long the logs of closed publications and images
	// stay mapped so a poll or offer already in flight stays safe (3 s).
	ResourceLinger time.Duration
	// ConductorIdle is the conductor goroutine's idle strategy (default
	// SleepIdle of 2 ms). The conductor is never on the message path.
	ConductorIdle IdleStrategy
	// ErrorHandler receives asynchronous errors: driver loss, client
	// timeout, broadcast lapping, channel endpoint errors. It runs on the
	// conductor and must not call the client's Add*/Close methods.
	ErrorHandler func(error)
	// NoPrefault maps log buffers lazily. By default every page of a log is
	// faulted in when the publication or image is added (MAP_POPULATE), so
	// offers and polls never take a page fault; that makes adding a
	// publication slower (tens of ms for the default 64 MiB IPC terms) and,
	// for sparse log files, allocates them whole.
	NoPrefault bool
	// AvailableImageHandler and UnavailableImageHandler are called (on the
	// conductor, same restriction) when any subscription of this client
	// gains or loses an image, unless the subscription has its own handlers.
	AvailableImageHandler   func(*Image)
	UnavailableImageHandler func(*Image)
}

func (o *Options) ensureDefaults() {
	if o.Dir == "" {
		o.Dir = DefaultDir()
	}
	if o.DriverTimeout <= 0 {
		o.DriverTimeout = defaultDriverTimeout
	}
	if o.KeepaliveInterval <= 0 {
		o.KeepaliveInterval = defaultKeepaliveInterval
	}
	if o.ResourceLinger <= 0 {
		o.ResourceLinger = defaultResourceLinger
	}
	if o.ConductorIdle == nil {
		o.ConductorIdle = SleepIdle{Period: defaultConductorIdle}
	}
}

// Client is a connection to a media driver. Its methods are safe for
// concurrent use; Add*/Close calls are serialised with the conductor by one
// mutex that the message path (Offer, Poll) never takes.
type Client struct {
	opts           Options
	cnc            *CnC
	ring           ringBuffer
	bcast          *broadcastReceiver
	countersValues []byte
	counters       *CountersReader
	clientID       int64

	mu            sync.Mutex // the conductor lock
	cmd           []byte
	pubs          map[*pubBase]struct{}
	subs          map[int64]*Subscription
	ctrs          map[int64]*Counter
	heartbeatID   int32
	lastKeepalive time.Time
	lastDuty      time.Time
	lingering     []lingerRes
	mapped        map[*logBuffer]struct{}
	awaitCorr     int64
	awaitDone     bool
	awaitType     int32
	awaitMsg      []byte
	awaitErr      error
	fatal         error
	closed        atomic.Bool
	done          chan struct{}
	dispatchFn    func(int32, []byte)
}

type lingerRes struct {
	log *logBuffer
	at  time.Time
}

// Connect waits (up to Options.DriverTimeout) for a live media driver in
// the Aeron directory, maps its CnC file, checks the CnC version and
// starts the client's conductor goroutine.
func Connect(o Options) (*Client, error) {
	o.ensureDefaults()
	deadline := time.Now().Add(o.DriverTimeout)
	cnc, err := awaitCnC(o.Dir, o.DriverTimeout, deadline)
	if err != nil {
		return nil, err
	}
	ring, err := newRingBuffer(cnc.toDriver)
	if err != nil {
		cnc.Close()
		return nil, err
	}
	bcast, err := newBroadcastReceiver(cnc.toClients)
	if err != nil {
		cnc.Close()
		return nil, err
	}
	now := time.Now()
	c := &Client{
		opts:           o,
		cnc:            cnc,
		ring:           ring,
		bcast:          bcast,
		countersValues: cnc.countersValues,
		counters:       cnc.Counters(),
		clientID:       ring.nextCorrelationID(),
		cmd:            make([]byte, 0, 256),
		pubs:           make(map[*pubBase]struct{}),
		subs:           make(map[int64]*Subscription),
		ctrs:           make(map[int64]*Counter),
		mapped:         make(map[*logBuffer]struct{}),
		heartbeatID:    -1,
		lastKeepalive:  now,
		lastDuty:       now,
		awaitCorr:      nullValue,
		done:           make(chan struct{}),
	}
	c.dispatchFn = c.dispatch
	go c.run()
	return c, nil
}

// awaitCnC implements the real clients' connect procedure: wait for the
// file, for its version, for its length, and for a fresh driver heartbeat.
func awaitCnC(dir string, timeout time.Duration, deadline time.Time) (*CnC, error) {
	path := filepath.Join(dir, CnCFile)
	var last error
	for {
		if time.Now().After(deadline) {
			if last == nil {
				last = errors.New("no cnc.dat")
			}
			return nil, fmt.Errorf("%w: no active driver in %s within %v (%v)", ErrDriverTimeout, dir, timeout, last)
		}
		st, err := os.Stat(path)
		if err != nil || st.Size() < cncMetaLength {
			last = err
			time.Sleep(16 * time.Millisecond)
			continue
		}
		data, err := shm.Map(path)
		if err != nil {
			last = err
			time.Sleep(16 * time.Millisecond)
			continue
		}
		// The driver stores the version last, with release; wait for it.
		for shm.LoadInt32Acquire(data, cncVersionOffset) == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		cnc, err := parseCnC(data)
		if err != nil {
			shm.Unmap(data)
			if errors.Is(err, ErrCnCVersion) {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			last = err
			time.Sleep(16 * time.Millisecond)
			continue
		}
		hb := cnc.DriverHeartbeat()
		for hb == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
			hb = cnc.DriverHeartbeat()
		}
		if hb < time.Now().Add(-timeout).UnixMilli() {
			cnc.Close()
			last = fmt.Errorf("stale driver heartbeat %d", hb)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		return cnc, nil
	}
}

// ClientID is the id the driver knows this client by.
func (c *Client) ClientID() int64 { return c.clientID }

// Dir is the Aeron directory.
func (c *Client) Dir() string { return c.opts.Dir }

// CnC is the mapped CnC file (counters, error log, driver identity).
func (c *Client) CnC() *CnC { return c.cnc }

// Counters reads the driver's counters.
func (c *Client) Counters() *CountersReader { return c.counters }

// ReadErrors reads the driver's distinct error log; see CnC.ReadErrors.
func (c *Client) ReadErrors(since int64, fn func(ErrorRecord)) int {
	return c.cnc.ReadErrors(since, fn)
}

// NextCorrelationID allocates a unique id from the driver's shared counter.
func (c *Client) NextCorrelationID() int64 { return c.ring.nextCorrelationID() }

// IsClosed reports whether the client is closed (by Close or a fatal error).
func (c *Client) IsClosed() bool { return c.closed.Load() }

// Err returns the fatal error that closed the client (driver lost, client
// timed out), or nil.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fatal
}

// Done is closed when the conductor goroutine has stopped (after Close or a
// fatal error).
func (c *Client) Done() <-chan struct{} { return c.done }

// Close tells the driver the client is going (CLIENT_CLOSE), closes every
// publication, subscription, image and counter, stops the conductor and
// unmaps every file. No goroutine may use the client's publications,
// subscriptions or images once Close is called.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed.Load() && c.cnc == nil {
		c.mu.Unlock()
		return nil
	}
	if c.fatal == nil {
		c.writeCommand(cmdClientClose, c.header(nullValue))
	}
	c.closeAllLocked(fmt.Errorf("%w", ErrClientClosed), false)
	c.mu.Unlock()
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	for l := range c.mapped {
		shm.Unmap(l.data)
	}
	c.mapped = nil
	c.lingering = nil
	var err error
	if c.cnc != nil {
		err = c.cnc.Close()
		c.cnc = nil
	}
	return err
}

// run is the conductor goroutine: driver events, keepalives, liveness,
// lingering resources. It is never on the message path.
func (c *Client) run() {
	defer close(c.done)
	idle := c.opts.ConductorIdle
	for {
		c.mu.Lock()
		if c.closed.Load() {
			c.mu.Unlock()
			return
		}
		w := c.doWork(time.Now())
		c.mu.Unlock()
		idle.Idle(w)
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
		n, err := c.bcast.receive(c.dispatchFn)
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
		if !c.stampHeartbeat(now) {
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
	hb := c.ring.consumerHeartbeat()
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
	shm.StoreInt64Release(c.countersValues, int(c.heartbeatID)*counterValueLength, nowMs)
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

// header starts a command with the correlated header.
func (c *Client) header(correlationID int64) []byte {
	b := c.cmd[:0]
	b = appendInt64(b, c.clientID)
	return appendInt64(b, correlationID)
}

func (c *Client) writeCommand(typeID int32, msg []byte) error {
	c.cmd = msg[:0]
	if err := c.ring.write(typeID, msg); err != nil {
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
		time.Sleep(awaitingSleep)
	}
}

// dispatch handles one driver event (conductor, under c.mu).
func (c *Client) dispatch(typeID int32, msg []byte) {
	switch typeID {
	case rspOnError:
		if len(msg) < 16 {
			return
		}
		corr := shm.GetInt64(msg, 0)
		code := ErrorCode(shm.GetInt32(msg, 8))
		text := getString(msg, 12)
		if corr == c.awaitCorr && code != ErrorCodeChannelEndpointError {
			c.awaitErr = &DriverError{Code: code, Message: text, CorrelationID: corr}
			return
		}
		if code == ErrorCodeChannelEndpointError && c.ownsStatusID(int32(corr)) {
			c.report(&DriverError{Code: code, Message: text, CorrelationID: corr})
		}
	case rspOnPublicationReady, rspOnExclusivePublicationReady, rspOnSubscriptionReady,
		rspOnOperationSuccess, rspOnStaticCounter, rspOnNextAvailableSessionID:
		if len(msg) >= 8 && shm.GetInt64(msg, 0) == c.awaitCorr {
			c.awaitDone, c.awaitType, c.awaitMsg = true, typeID, append(c.awaitMsg[:0], msg...)
		}
	case rspOnCounterReady:
		if len(msg) < 12 {
			return
		}
		corr := shm.GetInt64(msg, 0)
		if corr == c.awaitCorr {
			c.awaitDone, c.awaitType, c.awaitMsg = true, typeID, append(c.awaitMsg[:0], msg...)
		}
		if corr == c.clientID {
			c.heartbeatID = shm.GetInt32(msg, 8)
		}
	case rspOnAvailableImage:
		c.onAvailableImage(msg)
	case rspOnUnavailableImage:
		if len(msg) < 24 {
			return
		}
		corr := shm.GetInt64(msg, 0)
		s := c.subs[shm.GetInt64(msg, 8)]
		if s == nil {
			return
		}
		if img := s.removeImage(corr); img != nil {
			img.close()
			c.linger(img.log)
			c.imageUnavailable(s, img)
		}
	case rspOnUnavailableCounter:
		if len(msg) >= 12 {
			if k := c.ctrs[shm.GetInt64(msg, 0)]; k != nil {
				k.closed = true
			}
		}
	case rspOnClientTimeout:
		if len(msg) >= 8 && shm.GetInt64(msg, 0) == c.clientID {
			c.fail(fmt.Errorf("%w: the driver timed this client (%d) out", ErrClientTimeout, c.clientID))
		}
	case rspOnPublicationError:
		if len(msg) >= 68 {
			reg := shm.GetInt64(msg, 0)
			for p := range c.pubs {
				if p.originalRegID == reg {
					c.report(&DriverError{Code: ErrorCode(shm.GetInt32(msg, 60)), Message: getString(msg, 64), CorrelationID: reg})
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
	if len(msg) < 32 {
		return
	}
	corr := shm.GetInt64(msg, 0)
	sessionID := shm.GetInt32(msg, 8)
	subID := shm.GetInt64(msg, 16)
	s := c.subs[subID]
	if s == nil || s.closed.Load() {
		return
	}
	for _, img := range s.Images() {
		if img.correlationID == corr {
			return
		}
	}
	posID := shm.GetInt32(msg, 24)
	logFile := getString(msg, 28)
	srcOff := 32 + align(len(logFile), 4)
	source := ""
	if srcOff+4 <= len(msg) {
		source = getString(msg, srcOff)
	}
	log, err := c.mapLog(logFile)
	if err != nil {
		c.report(fmt.Errorf("aeron: image %d of subscription %d: %w", corr, subID, err))
		return
	}
	img := newImage(s, log, c.countersValues, posID, corr, sessionID, source)
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

func (c *Client) mapLog(path string) (*logBuffer, error) {
	mapFile := shm.MapPrefault
	if c.opts.NoPrefault {
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

// AddPublication adds a concurrent publication (ADD_PUBLICATION) and waits
// for the driver's reply. Publications added with the same channel and
// stream share one log and session.
func (c *Client) AddPublication(channel string, streamID int32) (*Publication, error) {
	p := &Publication{}
	if err := c.addPublication(&p.pubBase, channel, streamID, false); err != nil {
		return nil, err
	}
	return p, nil
}

// AddExclusivePublication adds an exclusive publication
// (ADD_EXCLUSIVE_PUBLICATION): its own log and session, one writer.
func (c *Client) AddExclusivePublication(channel string, streamID int32) (*ExclusivePublication, error) {
	p := &ExclusivePublication{}
	if err := c.addPublication(&p.pubBase, channel, streamID, true); err != nil {
		return nil, err
	}
	p.initTail()
	return p, nil
}

func (c *Client) addPublication(p *pubBase, channel string, streamID int32, exclusive bool) error {
	if _, err := ParseChannel(channel); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.usable(); err != nil {
		return err
	}
	corr := c.ring.nextCorrelationID()
	b := c.header(corr)
	b = appendInt32(b, streamID)
	b = appendString(b, channel)
	typeID := int32(cmdAddPublication)
	if exclusive {
		typeID = cmdAddExclusivePublication
	}
	if err := c.writeCommand(typeID, b); err != nil {
		return err
	}
	_, msg, err := c.awaitResponse(corr)
	if err != nil {
		return fmt.Errorf("aeron: add publication %s stream %d: %w", channel, streamID, err)
	}
	if len(msg) < 36 {
		return fmt.Errorf("aeron: add publication: short reply of %d bytes", len(msg))
	}
	logFile := getString(msg, 32)
	log, err := c.mapLog(logFile)
	if err != nil {
		return fmt.Errorf("aeron: add publication %s stream %d: %w", channel, streamID, err)
	}
	p.init(c, c.countersValues, log, shm.GetInt32(msg, 24))
	p.channel = channel
	p.streamID = streamID
	p.registrationID = corr
	p.originalRegID = shm.GetInt64(msg, 8)
	p.sessionID = shm.GetInt32(msg, 16)
	p.statusID = shm.GetInt32(msg, 28)
	p.exclusive = exclusive
	c.pubs[p] = struct{}{}
	return nil
}

func (c *Client) releasePublication(p *pubBase) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p.closed.Load() {
		return nil
	}
	p.closed.Store(true)
	delete(c.pubs, p)
	c.linger(p.log)
	if err := c.usable(); err != nil {
		return nil // the driver or client is gone: nothing to remove
	}
	corr := c.ring.nextCorrelationID()
	b := c.header(corr)
	b = appendInt64(b, p.registrationID)
	b = appendInt64(b, 0) // flags: no revoke
	if err := c.writeCommand(cmdRemovePublication, b); err != nil {
		return err
	}
	if _, _, err := c.awaitResponse(corr); err != nil {
		return fmt.Errorf("aeron: remove publication %d: %w", p.registrationID, err)
	}
	return nil
}

// AddSubscription adds a subscription (ADD_SUBSCRIPTION) and waits for the
// driver's reply. Images arrive asynchronously; see Subscription.Images and
// the image handlers.
func (c *Client) AddSubscription(channel string, streamID int32) (*Subscription, error) {
	return c.AddSubscriptionWithHandlers(channel, streamID, nil, nil)
}

// AddSubscriptionWithHandlers is AddSubscription with per-subscription
// image handlers (nil falls back to the Options handlers). They run on the
// conductor and must not call the client's Add*/Close methods.
func (c *Client) AddSubscriptionWithHandlers(channel string, streamID int32, onAvailable, onUnavailable func(*Image)) (*Subscription, error) {
	if _, err := ParseChannel(channel); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.usable(); err != nil {
		return nil, err
	}
	corr := c.ring.nextCorrelationID()
	s := &Subscription{client: c, channel: channel, streamID: streamID, registrationID: corr,
		onAvailable: onAvailable, onUnavailable: onUnavailable}
	empty := []*Image{}
	s.images.Store(&empty)
	b := c.header(corr)
	b = appendInt64(b, nullValue)
	b = appendInt32(b, streamID)
	b = appendString(b, channel)
	// Registered before the reply so images announced right after it find it.
	c.subs[corr] = s
	if err := c.writeCommand(cmdAddSubscription, b); err != nil {
		delete(c.subs, corr)
		return nil, err
	}
	_, msg, err := c.awaitResponse(corr)
	if err != nil {
		delete(c.subs, corr)
		return nil, fmt.Errorf("aeron: add subscription %s stream %d: %w", channel, streamID, err)
	}
	if len(msg) >= 12 {
		s.statusID = shm.GetInt32(msg, 8)
	}
	return s, nil
}

func (c *Client) releaseSubscription(s *Subscription) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.closed.Load() {
		return nil
	}
	s.closed.Store(true)
	delete(c.subs, s.registrationID)
	imgs := s.Images()
	empty := []*Image{}
	s.images.Store(&empty)
	for _, img := range imgs {
		img.close()
		c.linger(img.log)
	}
	if err := c.usable(); err != nil {
		return nil
	}
	corr := c.ring.nextCorrelationID()
	b := c.header(corr)
	b = appendInt64(b, s.registrationID)
	if err := c.writeCommand(cmdRemoveSubscription, b); err != nil {
		return err
	}
	if _, _, err := c.awaitResponse(corr); err != nil {
		return fmt.Errorf("aeron: remove subscription %d: %w", s.registrationID, err)
	}
	return nil
}

// AddCounter asks the driver to allocate a counter (ADD_COUNTER) with the
// given type id, key (≤ 112 bytes) and label (≤ 380 ASCII bytes), owned by
// this client and freed when it closes.
func (c *Client) AddCounter(typeID int32, key []byte, label string) (*Counter, error) {
	if len(key) > counterMaxKey {
		return nil, fmt.Errorf("aeron: counter key of %d bytes > %d", len(key), counterMaxKey)
	}
	if len(label) > counterMaxLabel {
		return nil, fmt.Errorf("aeron: counter label of %d bytes > %d", len(label), counterMaxLabel)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.usable(); err != nil {
		return nil, err
	}
	corr := c.ring.nextCorrelationID()
	b := c.header(corr)
	b = appendInt32(b, typeID)
	b = appendInt32(b, int32(len(key)))
	b = append(b, key...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	b = appendString(b, label)
	if err := c.writeCommand(cmdAddCounter, b); err != nil {
		return nil, err
	}
	_, msg, err := c.awaitResponse(corr)
	if err != nil {
		return nil, fmt.Errorf("aeron: add counter %q: %w", label, err)
	}
	id := shm.GetInt32(msg, 8)
	k := &Counter{client: c, values: c.countersValues, off: int(id) * counterValueLength, id: id, registrationID: corr}
	c.ctrs[corr] = k
	return k, nil
}

func (c *Client) releaseCounter(k *Counter) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if k.closed {
		return nil
	}
	k.closed = true
	delete(c.ctrs, k.registrationID)
	if err := c.usable(); err != nil {
		return nil
	}
	corr := c.ring.nextCorrelationID()
	b := c.header(corr)
	b = appendInt64(b, k.registrationID)
	if err := c.writeCommand(cmdRemoveCounter, b); err != nil {
		return err
	}
	if _, _, err := c.awaitResponse(corr); err != nil {
		return fmt.Errorf("aeron: remove counter %d: %w", k.id, err)
	}
	return nil
}

// destination sends a (REMOVE_)ADD_(RCV_)DESTINATION command for the
// publication or subscription registered as registrationID and waits for
// the driver's ON_OPERATION_SUCCESS.
func (c *Client) destination(typeID int32, registrationID int64, channel string) error {
	if _, err := ParseChannel(channel); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.usable(); err != nil {
		return err
	}
	corr := c.ring.nextCorrelationID()
	b := c.header(corr)
	b = appendInt64(b, registrationID)
	b = appendString(b, channel)
	if err := c.writeCommand(typeID, b); err != nil {
		return err
	}
	if _, _, err := c.awaitResponse(corr); err != nil {
		return fmt.Errorf("aeron: destination %s: %w", channel, err)
	}
	return nil
}

func appendInt32(b []byte, v int32) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}

func appendInt64(b []byte, v int64) []byte {
	return appendInt32(appendInt32(b, int32(v)), int32(v>>32))
}

func appendString(b []byte, s string) []byte {
	b = appendInt32(b, int32(len(s)))
	return append(b, s...)
}

// getString reads an int32-length-prefixed ASCII string, bounds-checked.
func getString(b []byte, off int) string {
	if off+4 > len(b) {
		return ""
	}
	n := int(shm.GetInt32(b, off))
	if n < 0 || off+4+n > len(b) {
		return ""
	}
	return string(b[off+4 : off+4+n])
}
