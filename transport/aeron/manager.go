package aeron

// This file is an Aeron listener's manager: the goroutine that owns the
// media driver and the Aeron client, and the two queues between it and
// the loop (mgrEvent to the manager, event to the loop).

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	ae "github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/driver"
	"github.com/goblin-kv/goblin/aeron/javadriver"
)

// eventKind is what an event tells the loop.
type eventKind uint8

const (
	evAdd      eventKind = iota // a client's reply publication is ready
	evRemove                    // a client's request image went away
	evReset                     // the driver is gone: forget every client
	evCounters                  // the stat counters are allocated
)

// event is what the manager tells the loop: posted on the manager's
// goroutine (Server.post), handled on the loop's (Server.drain).
type event struct {
	kind eventKind
	img  *ae.Image
	pub  *ae.ExclusivePublication
	corr int64
	gen  uint64
	ack  chan struct{}
	ctrs []*ae.Counter
}

// post queues e for the loop's next Poll.
func (s *Server) post(e event) {
	s.mu.Lock()
	s.events = append(s.events, e)
	s.mu.Unlock()
	s.evQueued.Store(true)
}

// manager owns the media driver and the Aeron client: everything that
// waits on the driver (adding and closing publications, restarting a dead
// driver) happens on its goroutine, never on the loop.
type manager struct {
	s   *Server
	o   *Options
	drv *javadriver.Driver // the Java driver the server supervises, or nil
	emb *embedded          // the in-process driver the server runs, or nil
	ac  *ae.Client
	sub *ae.Subscription
	gen uint64
	// channel is the request channel subscribed to; ctrs the stat
	// counters allocated on ac (see counters.go).
	channel string
	ctrs    []*ae.Counter

	// deferred are the new clients' images waiting for a place among the
	// clients not yet connected (MaxPending), oldest first. lingering are
	// when the reply publications of clients that never connected were
	// closed: the driver keeps each one's log for the publication linger
	// (replyLinger), so they hold a place as long.
	deferred  []mgrEvent
	lingering []time.Time

	mu    sync.Mutex
	q     []mgrEvent
	stats []StatCounter // what ExportCounters asked for
	wake  chan struct{}
	stop  chan struct{}
	done  chan struct{}

	closeErr   error
	rejected   atomic.Int64
	restarts   atomic.Int64
	reconnects atomic.Int64
}

// mgrKind is what a mgrEvent asks of the manager.
type mgrKind uint8

const (
	mgrAvailable mgrKind = iota
	mgrUnavailable
	mgrClosePub
	mgrCounters
)

// mgrEvent is what the loop (and the Aeron client's image handlers) tell
// the manager: posted with manager.post, handled on its goroutine.
type mgrEvent struct {
	kind mgrKind
	img  *ae.Image
	pub  *ae.ExclusivePublication
	gen  uint64
	// unconnected: mgrClosePub of a client's reply publication that
	// never connected.
	unconnected bool
}

// newManager returns s's manager, neither started (start) nor running
// (run).
func newManager(s *Server) *manager {
	return &manager{s: s, o: &s.o, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// post queues e for the manager's goroutine and wakes it.
func (m *manager) post(e mgrEvent) {
	m.mu.Lock()
	m.q = append(m.q, e)
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// start brings up the driver (unless External) and the subscription.
func (m *manager) start() error {
	switch {
	case m.o.External:
		// The directory's driver may be another listener's in-process
		// one: this server then helps run it too.
		m.s.emb = findEmbedded(m.o.Dir)
	case !m.o.JavaDriver:
		if findEmbedded(m.o.Dir) == nil {
			// A crashed server's driver is dead however fresh its heartbeat:
			// clear its files so this one starts at once.
			if err := javadriver.Claim(m.o.Dir, DefaultDriverTimeout); err != nil {
				return fmt.Errorf("%w: %s (use dir= for another directory, or driver=external / --aeron-dir to share it): %w", ErrDirInUse, m.o.Dir, err)
			}
		}
		e, err := acquireEmbedded(m.o.Dir, m.o.Group, m.o.Logger)
		if err != nil {
			if errors.Is(err, driver.ErrActiveDriver) {
				return fmt.Errorf("%w: %s (use dir= for another directory, or driver=external / --aeron-dir to share it): %w", ErrDirInUse, m.o.Dir, err)
			}
			return err
		}
		m.emb, m.s.emb = e, e // acquireEmbedded logged the driver's start, once per directory
	default:
		do := m.o.Driver
		do.Dir = m.o.Dir
		do.Profile = m.o.Profile
		if m.o.Group != "" {
			do.Group = m.o.Group
		}
		// Start claims the directory: it refuses one a live driver owns and
		// ends a driver left behind by a server that crashed.
		d, err := javadriver.Start(context.Background(), do)
		if errors.Is(err, javadriver.ErrInUse) {
			return fmt.Errorf("%w: %s (use dir= for another directory, or driver=external / --aeron-dir to share it): %w", ErrDirInUse, m.o.Dir, err)
		}
		if err != nil {
			return fmt.Errorf("aeron transport: start media driver in %s: %w", m.o.Dir, err)
		}
		m.drv = d
		m.o.Logger.Info("aeron media driver started", "dir", d.Dir(), "pid", d.PID(), "profile", m.o.Profile.String(), "log", d.LogPath())
	}
	if err := m.connect(); err != nil {
		if m.drv != nil {
			m.drv.Stop()
		}
		if m.emb != nil {
			m.emb.release()
		}
		return err
	}
	return nil
}

// connect connects the Aeron client and adds the request subscription.
func (m *manager) connect() error {
	var assist func() int
	if m.s.emb != nil {
		assist = m.s.emb.work
	}
	ac, err := ae.Connect(ae.Options{Dir: m.o.Dir, WhileAwaiting: assist, ErrorHandler: func(err error) {
		m.o.Logger.Warn("aeron client", "err", err)
	}})
	if err != nil {
		return fmt.Errorf("aeron transport: connect to the media driver in %s: %w", m.o.Dir, err)
	}
	gen := m.gen
	ch, err := requestChannel(m.o.Media, m.o.Endpoint).Build()
	if err != nil {
		ac.Close()
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	sub, err := ac.AddSubscriptionWithHandlers(ch, m.o.Stream,
		func(img *ae.Image) { m.post(mgrEvent{kind: mgrAvailable, img: img, gen: gen}) },
		func(img *ae.Image) { m.post(mgrEvent{kind: mgrUnavailable, img: img, gen: gen}) })
	if err != nil {
		ac.Close()
		return fmt.Errorf("aeron transport: subscribe %s stream %d: %w", ch, m.o.Stream, err)
	}
	m.ac, m.sub, m.channel = ac, sub, ch
	m.o.Logger.Info("aeron subscription added", "channel", ch, "stream", m.o.Stream, "dir", m.o.Dir)
	return nil
}

// run is the manager's goroutine, until Server.Close closes stop: it
// handles posted events, retries deferred clients, and recovers when the
// driver or the client's link to it dies.
func (m *manager) run() {
	defer close(m.done)
	// While clients wait for a place (deferred), a tick tries again.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		var drvDone <-chan struct{}
		if m.drv != nil {
			drvDone = m.drv.Done()
		}
		var retry <-chan time.Time
		if len(m.deferred) > 0 {
			retry = tick.C
		}
		select {
		case <-m.stop:
			m.shutdown()
			return
		case <-m.wake:
			m.handle()
		case <-retry:
			m.addDeferred()
		case <-drvDone:
			m.o.Logger.Error("aeron media driver died; restarting it", "dir", m.o.Dir, "err", m.drv.Wait())
			if !m.recover() {
				m.shutdown()
				return
			}
		case <-m.ac.Done():
			m.o.Logger.Error("aeron client lost its media driver; reconnecting", "dir", m.o.Dir, "err", m.ac.Err())
			if !m.recover() {
				m.shutdown()
				return
			}
		}
	}
}

// handle handles the events posted to the manager.
func (m *manager) handle() {
	m.mu.Lock()
	q := m.q
	m.q = nil
	m.mu.Unlock()
	for _, e := range q {
		switch e.kind {
		case mgrAvailable:
			m.deferred = append(m.deferred, e)
		case mgrUnavailable:
			if e.gen == m.gen {
				m.s.post(event{kind: evRemove, corr: e.img.CorrelationID()})
			}
		case mgrClosePub:
			if e.unconnected {
				m.lingering = append(m.lingering, time.Now())
			}
			e.pub.Close() // an error means it went with its client or driver
		case mgrCounters:
			m.addCounters()
		}
	}
	m.addDeferred()
}

// replyLinger is how long a closed publication's log can stay in the
// driver: the Go, Java and C drivers' default publication linger
// (aeron.publication.linger.timeout, 5 s), then up to a timer interval
// before the conductor sees it has passed, and the time to delete it.
const replyLinger = 8 * time.Second

// addDeferred gives back the places of closed unconnected clients whose
// linger has passed, then makes reply publications for the new clients
// waiting in deferred, oldest first, while fewer than MaxPending hold a
// place (waiting). Each holds a reply log, and over UDP anyone who can
// send the endpoint a SETUP makes one: the rest wait their turn here
// (their images cost the driver's image memory, which it bounds) and are
// forgotten when their image goes.
func (m *manager) addDeferred() {
	now := time.Now()
	gone := 0
	for gone < len(m.lingering) && now.Sub(m.lingering[gone]) >= replyLinger {
		gone++
		m.s.waiting.Add(-1)
	}
	m.lingering = append(m.lingering[:0], m.lingering[gone:]...)
	keep := m.deferred[:0]
	for i, e := range m.deferred {
		switch {
		case e.gen != m.gen || e.img.IsClosed():
		case int(m.s.waiting.Load()) >= m.o.MaxPending:
			if i == len(keep) {
				m.o.Logger.Debug("aeron: too many clients not yet connected; new ones wait", "waiting", len(m.deferred)-i,
					"max_pending", m.o.MaxPending)
			}
			keep = append(keep, e)
		default:
			m.addReply(e)
		}
	}
	clear(m.deferred[len(keep):])
	m.deferred = keep
}

// addReply makes a new client's reply publication.
func (m *manager) addReply(e mgrEvent) {
	m.s.waiting.Add(1)
	ch, err := responseChannel(m.o.Media, m.o.Control).TermLength(m.o.TermLength).
		ResponseCorrelationID(e.img.CorrelationID()).Build()
	if err == nil {
		var pub *ae.ExclusivePublication
		if pub, err = m.ac.AddExclusivePublication(ch, m.o.ReplyStream); err == nil {
			m.s.post(event{kind: evAdd, img: e.img, pub: pub, gen: e.gen})
			return
		}
	}
	m.s.waiting.Add(-1)
	m.rejected.Add(1)
	m.o.Logger.Warn("aeron: cannot add a client's response publication", "image", e.img.CorrelationID(),
		"source", e.img.SourceIdentity(), "err", err)
}

// recover runs after the driver (or the client's link to it) died: the loop
// forgets every client, the old Aeron client is closed, the driver is
// restarted (if the server owns it) and the subscription re-added. It
// retries until it succeeds or the server stops; false means stopped.
func (m *manager) recover() bool {
	m.gen++
	ack := make(chan struct{})
	m.s.post(event{kind: evReset, gen: m.gen, ack: ack})
	select {
	case <-ack:
	case <-m.stop:
		return false
	}
	// The loop no longer touches anything of the old client: close it.
	m.ac.Close()
	m.ctrs = nil // gone with it
	m.mu.Lock()
	m.q = nil // events about the old generation's images and publications
	m.mu.Unlock()
	backoff := 100 * time.Millisecond
	for {
		err := m.restart()
		if err == nil {
			m.reconnects.Add(1)
			m.addCounters()
			return true
		}
		m.o.Logger.Error("aeron: recovery failed; retrying", "err", err, "in", backoff)
		select {
		case <-m.stop:
			return false
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// restart restarts the Java driver if it died, and connects again.
func (m *manager) restart() error {
	if m.drv != nil {
		select {
		case <-m.drv.Done():
			nd, err := m.drv.Restart(context.Background())
			if err != nil {
				return fmt.Errorf("restart media driver: %w", err)
			}
			m.drv = nd
			m.restarts.Add(1)
			m.o.Logger.Info("aeron media driver restarted", "dir", nd.Dir(), "pid", nd.PID())
		default: // the driver lives; only the client lost it (e.g. timed out)
		}
	}
	return m.connect()
}

// shutdown removes the counters, closes the Aeron client and stops or
// releases the driver the server started.
func (m *manager) shutdown() {
	if m.ac != nil {
		m.removeCounters()
		m.ac.Close()
	}
	if m.drv != nil {
		if err := m.drv.Stop(); err != nil {
			m.closeErr = err
		}
		m.o.Logger.Info("aeron media driver stopped", "dir", m.o.Dir)
	}
	if m.emb != nil {
		if err := m.emb.release(); err != nil {
			m.closeErr = err
		}
		m.o.Logger.Info("aeron in-process media driver closed", "dir", m.o.Dir)
	}
}
