package aeron

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goblin-kv/goblin/aeron/internal/broadcast"
	"github.com/goblin-kv/goblin/aeron/internal/cnc"
	"github.com/goblin-kv/goblin/aeron/internal/command"
	"github.com/goblin-kv/goblin/aeron/internal/counters"
	"github.com/goblin-kv/goblin/aeron/internal/ringbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

const (
	defaultDriverTimeout     = 10 * time.Second
	defaultKeepaliveInterval = 500 * time.Millisecond
	defaultResourceLinger    = 3 * time.Second
	defaultConductorIdle     = 16 * time.Millisecond // the Java client's idle sleep
	awaitingSleep            = time.Millisecond
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
	// SleepIdle of 16 ms, as the Java client sleeps). The conductor is
	// never on the message path, but each of its wake-ups takes a core
	// for a moment: on two cores busy with spinning threads, a shorter
	// sleep makes round trips slow more often (at 2 ms, 500 times a
	// second per process).
	ConductorIdle IdleStrategy
	// ErrorHandler receives asynchronous errors: driver loss, client
	// timeout, broadcast lapping, channel endpoint errors. It runs on the
	// conductor and must not call the client's Add*/Close methods.
	ErrorHandler func(error)
	// NoPrefault maps log buffers lazily. By default every page of a
	// publication's log and of an IPC image's is faulted in for writing
	// when it is added (MADV_POPULATE_WRITE, see shm.MapPrefault), so
	// offers and polls never take a page fault; that makes adding a
	// publication slower (tens of ms for the default 64 MiB IPC terms) and,
	// for sparse log files, allocates them whole. An image from the network
	// is always mapped lazily: its size is the remote sender's choice.
	NoPrefault bool
	// AvailableImageHandler and UnavailableImageHandler are called (on the
	// conductor, same restriction) when any subscription of this client
	// gains or loses an image, unless the subscription has its own handlers.
	AvailableImageHandler   func(*Image)
	UnavailableImageHandler func(*Image)
	// WhileAwaiting, when set, is called over and over on a goroutine
	// that waits for the driver: Connect waiting for a fresh heartbeat,
	// and every Add*/Close waiting for the driver's reply. A media driver
	// running inside this process (package aeron/driver) is worked from
	// it, so a wait makes progress even when the driver's usual runner is
	// itself waiting. It returns the work it did; while that is positive
	// the wait does not sleep.
	WhileAwaiting func() int
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
	ring           *ringbuffer.RingBuffer
	bcast          *broadcast.Receiver
	countersValues []byte
	counters       *CountersReader
	clientID       int64
	cncFile        fileID // the mapped CnC file, watched for replacement

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
	// wake is closed (once, under mu) when the client closes, so a
	// conductor asleep in its SleepIdle stops at once instead of after
	// the sleep (16 ms by default).
	wake       chan struct{}
	dispatchFn func(int32, []byte)
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
	cnc, cncFile, err := awaitCnC(o.Dir, o.DriverTimeout, deadline, o.WhileAwaiting)
	if err != nil {
		return nil, err
	}
	ring, err := ringbuffer.New(cnc.toDriver)
	if err != nil {
		cnc.Close()
		return nil, err
	}
	bcast, err := broadcast.NewReceiver(cnc.toClients)
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
		clientID:       ring.NextCorrelationID(),
		cncFile:        cncFile,
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
		wake:           make(chan struct{}),
	}
	c.dispatchFn = c.dispatch
	go c.run()
	return c, nil
}

// awaitCnC implements the real clients' connect procedure: wait for the
// file, for its version, for its length, and for a fresh driver heartbeat.
// It also returns the identity of the file it mapped.
func awaitCnC(dir string, timeout time.Duration, deadline time.Time, assist func() int) (*CnC, fileID, error) {
	path := filepath.Join(dir, CnCFile)
	var last error
	for {
		if time.Now().After(deadline) {
			if last == nil {
				last = errors.New("no cnc.dat")
			}
			return nil, fileID{}, fmt.Errorf("%w: no active driver in %s within %v (%w)", ErrDriverTimeout, dir, timeout, last)
		}
		st, err := os.Stat(path)
		if err != nil || st.Size() < cnc.MetadataLength {
			last = err
			time.Sleep(16 * time.Millisecond)
			continue
		}
		before, _ := statID(path)
		data, err := shm.Map(path)
		if err != nil {
			last = err
			time.Sleep(16 * time.Millisecond)
			continue
		}
		if after, _ := statID(path); after != before {
			// Replaced between the stat and the mapping: map the new one.
			shm.Unmap(data)
			last = errors.New("cnc.dat replaced while mapping it")
			continue
		}
		// The driver stores the version last, with release; wait for it.
		for cnc.LoadVersion(data) == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		cnc, err := parseCnC(data)
		if err != nil {
			shm.Unmap(data)
			if errors.Is(err, ErrCnCVersion) {
				return nil, fileID{}, fmt.Errorf("%s: %w", path, err)
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
		if assist != nil && hb < time.Now().Add(-timeout).UnixMilli() {
			// An in-process driver nobody has run lately stamps its
			// heartbeat on its next duty cycle.
			assist()
			hb = cnc.DriverHeartbeat()
		}
		if hb < time.Now().Add(-timeout).UnixMilli() {
			cnc.Close()
			last = fmt.Errorf("stale driver heartbeat %d", hb)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		return cnc, before, nil
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
func (c *Client) NextCorrelationID() int64 { return c.ring.NextCorrelationID() }

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
		c.writeCommand(command.ClientClose, command.AppendCorrelated(c.cmd[:0], c.clientID, nullValue))
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

// lockForChannel starts a command about channel: it checks the channel,
// takes c.mu, checks the client is usable and returns the command's
// correlation id. On success the caller holds c.mu and unlocks it; on an
// error c.mu is not held.
func (c *Client) lockForChannel(channel string) (corr int64, err error) {
	if _, err := ParseChannel(channel); err != nil {
		return 0, err
	}
	c.mu.Lock()
	if err := c.usable(); err != nil {
		c.mu.Unlock()
		return 0, err
	}
	return c.ring.NextCorrelationID(), nil
}

func (c *Client) addPublication(p *pubBase, channel string, streamID int32, exclusive bool) error {
	corr, err := c.lockForChannel(channel)
	if err != nil {
		return err
	}
	defer c.mu.Unlock()
	typeID := command.AddPublication
	if exclusive {
		typeID = command.AddExclusivePublication
	}
	b := command.AppendPublicationMessage(c.cmd[:0], c.clientID, corr, streamID, channel)
	if err := c.writeCommand(typeID, b); err != nil {
		return err
	}
	_, msg, err := c.awaitResponse(corr)
	if err != nil {
		return fmt.Errorf("aeron: add publication %s stream %d: %w", channel, streamID, err)
	}
	if len(msg) < command.PublicationBuffersReadyMinLength {
		return fmt.Errorf("aeron: add publication: short reply of %d bytes", len(msg))
	}
	ready := command.PublicationBuffersReady(msg)
	logFile := ready.LogFileName()
	log, err := c.mapLog(logFile, true)
	if err != nil {
		return fmt.Errorf("aeron: add publication %s stream %d: %w", channel, streamID, err)
	}
	p.init(c, c.countersValues, log, ready.PublicationLimitCounterID())
	p.channel = channel
	p.streamID = streamID
	p.registrationID = corr
	p.originalRegID = ready.RegistrationID()
	p.sessionID = ready.SessionID()
	p.statusID = ready.ChannelStatusIndicatorID()
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
	corr := c.ring.NextCorrelationID()
	b := command.AppendRemovePublication(c.cmd[:0], c.clientID, corr, p.registrationID, false)
	if err := c.writeCommand(command.RemovePublication, b); err != nil {
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
	corr, err := c.lockForChannel(channel)
	if err != nil {
		return nil, err
	}
	defer c.mu.Unlock()
	s := &Subscription{client: c, channel: channel, streamID: streamID, registrationID: corr,
		onAvailable: onAvailable, onUnavailable: onUnavailable}
	empty := []*Image{}
	s.images.Store(&empty)
	b := command.AppendSubscriptionMessage(c.cmd[:0], c.clientID, corr, streamID, channel)
	// Registered before the reply so images announced right after it find it.
	c.subs[corr] = s
	if err := c.writeCommand(command.AddSubscription, b); err != nil {
		delete(c.subs, corr)
		return nil, err
	}
	_, msg, err := c.awaitResponse(corr)
	if err != nil {
		delete(c.subs, corr)
		return nil, fmt.Errorf("aeron: add subscription %s stream %d: %w", channel, streamID, err)
	}
	if len(msg) >= command.CounterUpdateLength {
		s.statusID = command.CounterUpdate(msg).Value()
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
	return c.remove(command.RemoveSubscription, s.registrationID, "subscription", s.registrationID)
}

// AddCounter asks the driver to allocate a counter (ADD_COUNTER) with the
// given type id, key (≤ 112 bytes) and label (≤ 380 ASCII bytes), owned by
// this client and freed when it closes.
func (c *Client) AddCounter(typeID int32, key []byte, label string) (*Counter, error) {
	if len(key) > counters.MaxKeyLength {
		return nil, fmt.Errorf("aeron: counter key of %d bytes > %d", len(key), counters.MaxKeyLength)
	}
	if len(label) > counters.MaxLabelLength {
		return nil, fmt.Errorf("aeron: counter label of %d bytes > %d", len(label), counters.MaxLabelLength)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.usable(); err != nil {
		return nil, err
	}
	corr := c.ring.NextCorrelationID()
	b := command.AppendCounterMessage(c.cmd[:0], c.clientID, corr, typeID, key, label)
	if err := c.writeCommand(command.AddCounter, b); err != nil {
		return nil, err
	}
	_, msg, err := c.awaitResponse(corr)
	if err != nil {
		return nil, fmt.Errorf("aeron: add counter %q: %w", label, err)
	}
	id := command.CounterUpdate(msg).Value()
	k := &Counter{client: c, values: c.countersValues, off: counters.ValueOffsetOf(id), id: id, registrationID: corr}
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
	return c.remove(command.RemoveCounter, k.registrationID, "counter", int64(k.id))
}

// remove sends a REMOVE_SUBSCRIPTION or REMOVE_COUNTER command (typeID)
// for registrationID and waits for the driver's answer; what and id name
// the resource in the error. A client that is no longer usable removes
// nothing and returns nil: its driver frees what it owned. c.mu is held.
func (c *Client) remove(typeID int32, registrationID int64, what string, id int64) error {
	if err := c.usable(); err != nil {
		return nil
	}
	corr := c.ring.NextCorrelationID()
	b := command.AppendRemove(c.cmd[:0], c.clientID, corr, registrationID)
	if err := c.writeCommand(typeID, b); err != nil {
		return err
	}
	if _, _, err := c.awaitResponse(corr); err != nil {
		return fmt.Errorf("aeron: remove %s %d: %w", what, id, err)
	}
	return nil
}

// destination sends a (REMOVE_)ADD_(RCV_)DESTINATION command for the
// publication or subscription registered as registrationID and waits for
// the driver's ON_OPERATION_SUCCESS.
func (c *Client) destination(typeID int32, registrationID int64, channel string) error {
	corr, err := c.lockForChannel(channel)
	if err != nil {
		return err
	}
	defer c.mu.Unlock()
	b := command.AppendDestination(c.cmd[:0], c.clientID, corr, registrationID, channel)
	if err := c.writeCommand(typeID, b); err != nil {
		return err
	}
	if _, _, err := c.awaitResponse(corr); err != nil {
		return fmt.Errorf("aeron: destination %s: %w", channel, err)
	}
	return nil
}
