package aeron

import (
	"context"

	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	ae "github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/javadriver"
	"github.com/goblin-kv/goblin/target"
	"github.com/goblin-kv/goblin/transport"
)

// Conn is the client side of the Aeron transport: a request publication
// to the server and a response subscription the server answers on. It
// implements transport.Conn and, like it, is not safe for concurrent use.
type Conn struct {
	o        DialOptions
	drv      *sharedDriver // the process's own driver (UDP without dir), or nil
	ac       *ae.Client
	sub      *ae.Subscription
	pub      *ae.ExclusivePublication
	img      *ae.Image // the response image
	deadline time.Time
	err      error // sticky: the server or the driver is gone
	closed   bool
}

// DialTarget dials the server an aeron target names (see DialOptionsFor).
func DialTarget(ctx context.Context, t target.Target) (transport.Conn, error) {
	o, err := DialOptionsFor(t)
	if err != nil {
		return nil, err
	}
	c, err := Dial(ctx, o)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Dial connects to a server: it adds the response subscription first, then
// the request publication naming it (response-correlation-id), and waits
// until both are connected or ctx ends (ErrNoServer). For UDP without
// DialOptions.Dir it first starts this process's own media driver (shared
// by its connections, stopped with the last of them); starting a JVM can
// take seconds, so that start is bounded by the driver's own start timeout
// rather than ctx.
func Dial(ctx context.Context, o DialOptions) (*Conn, error) {
	o.ensureDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	c := &Conn{o: o}
	dir := o.Dir
	if dir == "" {
		sd, err := acquireDriver(ctx, o.Profile)
		if err != nil {
			return nil, err
		}
		c.drv = sd
		dir = sd.d.Dir()
	} else if _, err := os.Stat(filepath.Join(dir, ae.CnCFile)); err != nil {
		return nil, fmt.Errorf("%w: no media driver in %s (the server logs its driver's dir; default %s)", ErrNoServer, dir, DefaultDir())
	}
	if err := c.connect(ctx, dir); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Conn) connect(ctx context.Context, dir string) error {
	o := &c.o
	var err error
	c.ac, err = ae.Connect(ae.Options{Dir: dir, DriverTimeout: o.DriverTimeout})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNoServer, err)
	}
	respCh, err := responseChannel(o.Media, o.Control).Build()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if c.sub, err = c.ac.AddSubscription(respCh, o.ReplyStream); err != nil {
		return fmt.Errorf("aeron transport: response subscription %s: %w", respCh, err)
	}
	reqCh, err := requestChannel(o.Media, o.Endpoint).TermLength(o.TermLength).
		ResponseCorrelationID(c.sub.RegistrationID()).Build()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if c.pub, err = c.ac.AddExclusivePublication(reqCh, o.Stream); err != nil {
		return fmt.Errorf("aeron transport: request publication %s: %w", reqCh, err)
	}
	for {
		if c.pub.IsConnected() {
			if imgs := c.sub.Images(); len(imgs) > 0 {
				c.img = imgs[0]
				return nil
			}
		}
		if c.ac.IsClosed() {
			return fmt.Errorf("%w: %w", ErrNoServer, c.ac.Err())
		}
		select {
		case <-ctx.Done():
			what := "the request publication did not connect (is a server subscribed to " + reqCh + "?)"
			if c.pub.IsConnected() {
				what = "the server did not open a response channel"
			}
			return fmt.Errorf("%w: %s: %w", ErrNoServer, what, ctx.Err())
		case <-time.After(200 * time.Microsecond):
		}
	}
}

// Dir is the Aeron directory of the driver the connection uses.
func (c *Conn) Dir() string { return c.ac.Dir() }

// Write sends p as one message. A back-pressured offer is retried (waiting
// as DialOptions.Wait says) until the deadline. So is a request publication
// that is not connected while the response channel is still open (over
// UDP: the server's driver sent no status message for a while), for at
// most DialOptions.DriverTimeout; a closed or ended response channel or a
// lost driver fails at once with transport.ErrServerGone.
func (c *Conn) Write(p []byte) error {
	if err := c.usable(); err != nil {
		return err
	}
	if len(p) > c.pub.MaxMessageLength() {
		return fmt.Errorf("%w: %d bytes > %d", transport.ErrMessageTooLarge, len(p), c.pub.MaxMessageLength())
	}
	var notConnected time.Time // when NOT_CONNECTED was first seen
	for i := 0; ; i++ {
		r := c.pub.Offer(p)
		if r > 0 {
			return nil
		}
		switch r {
		case ae.BackPressured, ae.AdminAction:
		case ae.NotConnected:
			if err := c.lost(); err != nil {
				return err
			}
			if notConnected.IsZero() {
				notConnected = time.Now()
			} else if i&63 == 63 && time.Since(notConnected) > c.o.DriverTimeout {
				return c.fail(fmt.Sprintf("request: NOT_CONNECTED for more than %v", c.o.DriverTimeout))
			}
		default:
			return c.fail("request: " + ae.StatusString(r))
		}
		if i&63 == 63 && c.expired() {
			return transport.ErrTimeout
		}
		c.idle(i)
	}
}

// ReadAppend appends the next reply message to dst.
func (c *Conn) ReadAppend(dst []byte) ([]byte, error) {
	if err := c.usable(); err != nil {
		return dst, err
	}
	for i := 0; ; i++ {
		if m, ok := c.img.NextMessage(dst); ok {
			return m, nil
		}
		if i&63 == 63 {
			if err := c.lost(); err != nil {
				return dst, err
			}
			if c.expired() {
				return dst, transport.ErrTimeout
			}
		}
		c.idle(i)
	}
}

// lost fails the connection if its response channel or its driver is gone
// for good: the image closed (the driver said it is unavailable, or the
// Aeron client closed), the server ended the stream, or the Aeron client
// lost its driver. It returns nil otherwise.
func (c *Conn) lost() error {
	switch {
	case c.ac.IsClosed():
		return c.fail("the media driver is lost")
	case c.img.IsClosed():
		return c.fail("the response channel went away")
	case c.img.IsEndOfStream():
		return c.fail("the server closed the response channel")
	}
	return nil
}

func (c *Conn) idle(i int) {
	switch c.o.Wait {
	case Spin:
	case Yield:
		if i >= c.o.SpinLimit {
			runtime.Gosched()
		}
	case Park:
		switch {
		case i >= 2*c.o.SpinLimit:
			time.Sleep(c.o.ParkTime)
		case i >= c.o.SpinLimit:
			runtime.Gosched()
		}
	}
}

func (c *Conn) expired() bool {
	return !c.deadline.IsZero() && time.Now().After(c.deadline)
}

func (c *Conn) usable() error {
	if c.closed {
		return transport.ErrClosed
	}
	return c.err
}

// fail makes the connection unusable with transport.ErrServerGone. The
// error says which condition fired and the state of the request
// publication, the response image and the Aeron client, so that a failure
// seen once can be told apart from another.
func (c *Conn) fail(why string) error {
	if c.err == nil {
		if cause := c.ac.Err(); cause != nil {
			c.err = fmt.Errorf("%w: %s (%s): %w", transport.ErrServerGone, why, c.state(), cause)
		} else {
			c.err = fmt.Errorf("%w: %s (%s)", transport.ErrServerGone, why, c.state())
		}
	}
	return c.err
}

// state describes the connection's Aeron resources for error messages.
func (c *Conn) state() string {
	client := "aeron client open"
	if c.ac.IsClosed() {
		client = "aeron client closed"
	}
	return fmt.Sprintf("request publication %s; response image session=%d closed=%t end-of-stream=%t position=%d; %s",
		pubState(c.pub), c.img.SessionID(), c.img.IsClosed(), c.img.IsEndOfStream(), c.img.Position(), client)
}

// SetDeadline bounds the following Write and ReadAppend calls.
func (c *Conn) SetDeadline(t time.Time) error {
	c.deadline = t
	return nil
}

// Close closes the publication, the subscription and the Aeron client, and
// releases this process's own driver.
func (c *Conn) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	var err error
	if c.ac != nil {
		err = c.ac.Close()
	}
	if c.drv != nil {
		c.drv.release()
		c.drv = nil
	}
	return err
}

// The process's own client-side media drivers (UDP without dir), one per
// profile, shared by its connections and stopped with the last.
var (
	ownMu      sync.Mutex
	ownDrivers = map[javadriver.Profile]*sharedDriver{}
)

type sharedDriver struct {
	d    *javadriver.Driver
	p    javadriver.Profile
	refs int
}

// acquireDriver returns the process's own driver of profile p, starting one
// if there is none or it died.
func acquireDriver(ctx context.Context, p javadriver.Profile) (*sharedDriver, error) {
	ownMu.Lock()
	defer ownMu.Unlock()
	if sd := ownDrivers[p]; sd != nil {
		select {
		case <-sd.d.Done(): // died: start another below
			delete(ownDrivers, p)
		default:
			sd.refs++
			return sd, nil
		}
	}
	d, err := javadriver.Start(context.WithoutCancel(ctx), javadriver.Options{Profile: p})
	if err != nil {
		return nil, fmt.Errorf("aeron transport: start the client's media driver: %w", err)
	}
	sd := &sharedDriver{d: d, p: p, refs: 1}
	ownDrivers[p] = sd
	return sd, nil
}

func (sd *sharedDriver) release() {
	ownMu.Lock()
	sd.refs--
	last := sd.refs == 0
	if last && ownDrivers[sd.p] == sd {
		delete(ownDrivers, sd.p)
	}
	ownMu.Unlock()
	if last {
		sd.d.Stop()
	}
}
