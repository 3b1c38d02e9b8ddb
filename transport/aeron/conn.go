package aeron

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	ae "github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/javadriver"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/transport"
)

// Conn is the client side of the Aeron transport: a request publication
// to the server and a response subscription the server answers on. It
// implements transport.Conn and, like it, is not safe for concurrent use.
type Conn struct {
	o        DialOptions
	drv      *sharedDriver // the process's own Java driver (UDP without dir, driver=java), or nil
	emb      *embedded     // the process's own Go driver (UDP without dir), or the in-process driver of dir, or nil
	ac       *ae.Client
	sub      *ae.Subscription
	pub      *ae.ExclusivePublication
	img      *ae.Image // the response image
	rs       ae.Reassembly
	maxMsg   int   // the request stream's maximum message (term length / 8)
	srv      hello // what the server said in its hello
	deadline time.Time
	err      error // sticky: the server or the driver is gone, or a message was cut off
	closed   bool
	ownEmb   bool // emb is the process's UDP client driver, released at Close
	pumps    bool // the connection runs emb's duty cycle while it waits (UDP)
}

// DialTarget dials the server an aeron target names (see DialOptionsFor).
func DialTarget(ctx context.Context, t transport.Target) (transport.Conn, error) {
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
// the request publication naming it (response-correlation-id), waits
// until both are connected and the server's hello has come, or ctx ends
// (ErrNoServer). The hello names the server's protocol: a different
// DialOptions.Proto fails with transport.ErrProtocolMismatch, unless
// ProtoAuto, when the connection speaks the server's. For UDP without
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
	switch {
	case dir == "" && o.JavaDriver:
		sd, err := acquireDriver(ctx, o.Profile)
		if err != nil {
			return nil, err
		}
		c.drv = sd
		dir = sd.d.Dir()
	case dir == "":
		e, err := acquireClientDriver()
		if err != nil {
			return nil, err
		}
		c.emb, c.ownEmb = e, true
		dir = e.dir
	default:
		if _, err := os.Stat(filepath.Join(dir, ae.CnCFile)); err != nil {
			return nil, fmt.Errorf("%w: no media driver in the %s (the server logs its driver's dir)", ErrNoServer, o.dirNote(dir))
		}
		c.emb = findEmbedded(dir)
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
	var assist func() int
	if c.emb != nil {
		assist = c.emb.work
	}
	c.ac, err = ae.Connect(ae.Options{Dir: dir, DriverTimeout: o.DriverTimeout, WhileAwaiting: assist})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNoServer, err)
	}
	respCh, err := responseChannel(o.Media, o.Control).Build()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if c.sub, err = c.ac.AddSubscription(respCh, o.ReplyStream); err != nil {
		return fmt.Errorf("aeron transport: response subscription %s: %w", respCh, err)
	}
	reqCh, err := requestChannel(o.Media, o.Endpoint).TermLength(o.TermLength).
		ResponseCorrelationID(c.sub.RegistrationID()).Build()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if c.pub, err = c.ac.AddExclusivePublication(reqCh, o.Stream); err != nil {
		return fmt.Errorf("aeron transport: request publication %s: %w", reqCh, err)
	}
	c.maxMsg = c.pub.MaxMessageLength()
	c.pumps = o.Media == ae.MediaUDP && c.emb != nil
	var msg []byte
	for {
		if c.img == nil && c.pub.IsConnected() {
			if imgs := c.sub.Images(); len(imgs) > 0 {
				c.img = imgs[0]
			}
		}
		if c.img != nil {
			var ok bool
			if msg, ok = c.img.ReadMessage(msg, &c.rs); ok {
				return c.greet(msg)
			}
			if c.img.IsClosed() || c.img.IsEndOfStream() {
				return fmt.Errorf("%w: the server closed the response channel before its hello", ErrNoServer)
			}
		}
		if c.ac.IsClosed() {
			return fmt.Errorf("%w: %w", ErrNoServer, c.ac.Err())
		}
		select {
		case <-ctx.Done():
			what := "the request publication did not connect (is a server subscribed to " + reqCh + "?)"
			switch {
			case c.img != nil:
				what = "the server sent no hello"
			case c.pub.IsConnected():
				what = "the server did not open a response channel"
			}
			return fmt.Errorf("%w: %s, through the %s: %w", ErrNoServer, what, o.dirNote(dir), ctx.Err())
		case <-time.After(200 * time.Microsecond):
			c.pump()
		}
	}
}

// greet checks the server's hello: its protocol against the one asked for.
func (c *Conn) greet(msg []byte) error {
	where := c.o.Media
	if c.o.Media == ae.MediaUDP {
		where += " endpoint " + c.o.Endpoint
	} else {
		where += " in " + c.ac.Dir()
	}
	h, err := parseHello(msg)
	if err != nil {
		return fmt.Errorf("%w: the server on aeron:%s, stream %d, did not start with a goblin hello (is it a goblin server?): %w",
			ErrNoServer, where, c.o.Stream, err)
	}
	if h.proto != c.o.Proto {
		if !c.o.ProtoAuto {
			return fmt.Errorf("%w: the server on aeron:%s, stream %d, speaks %s, this client %s: use proto=%s in the target (or leave proto out to speak the server's)",
				transport.ErrProtocolMismatch, where, c.o.Stream, h.proto, c.o.Proto, h.proto)
		}
		c.o.Proto = h.proto
	}
	c.srv = h
	return nil
}

// Protocol is the protocol the server's listener speaks (its hello said
// so); the connection speaks it.
func (c *Conn) Protocol() proto.Protocol { return c.o.Proto }

// MaxRequest is the longest request the server accepts (its hello said
// so); Write refuses longer ones.
func (c *Conn) MaxRequest() int { return c.srv.maxRequest }

// Dir is the Aeron directory of the driver the connection uses.
func (c *Conn) Dir() string { return c.ac.Dir() }

// Write sends p as one message, or, when it is longer than the request
// stream's maximum message (term length / 8), as chunks the server
// gathers. A back-pressured offer is retried (waiting as DialOptions.Wait
// says) until the deadline. So is a request publication that is not
// connected while the response channel is still open (over UDP: the
// server's driver sent no status message for a while), for at most
// DialOptions.DriverTimeout; a closed or ended response channel or a lost
// driver fails at once with transport.ErrServerGone. A request longer
// than the server accepts fails with transport.ErrMessageTooLarge before
// anything is sent; the connection stays usable. A deadline that passes
// after part of a chunked request went makes the connection unusable.
func (c *Conn) Write(p []byte) error {
	if err := c.usable(); err != nil {
		return err
	}
	if c.pumps {
		c.emb.begin()
		defer c.emb.end()
	}
	if len(p) > c.maxMsg {
		return c.writeChunked(p)
	}
	if c.pub.Offer(p) > 0 {
		c.pump() // an in-process driver sends it now
		return nil
	}
	return c.offer(p, nil)
}

// TryWrite sends p as one message if the request stream takes it at once,
// and reports whether it did: false (nothing sent) when the stream is back
// pressured, which a pipelining client answers by reading replies, or when
// p needs chunks (send it with Write once no reply is outstanding).
func (c *Conn) TryWrite(p []byte) (bool, error) {
	if err := c.usable(); err != nil {
		return false, err
	}
	if len(p) > c.maxMsg {
		return false, nil
	}
	switch r := c.pub.Offer(p); {
	case r > 0:
		c.pump()
		return true, nil
	case r == ae.BackPressured || r == ae.AdminAction:
		return false, nil
	case r == ae.NotConnected:
		return false, c.lost()
	default:
		return false, c.fail("request: " + ae.StatusString(r))
	}
}

// writeChunked sends p as chunk frames of the stream's maximum length.
func (c *Conn) writeChunked(p []byte) error {
	if len(p) > c.srv.maxRequest {
		return fmt.Errorf("%w: request of %d bytes exceeds the server's request limit of %d bytes (goblin-server --client-input-limit); nothing was sent",
			transport.ErrMessageTooLarge, len(p), c.srv.maxRequest)
	}
	piece := c.maxMsg - frameHeaderLen
	var hdr [frameHeaderLen]byte
	for off := 0; off < len(p); off += piece {
		putChunkHeader(&hdr, off, len(p))
		if err := c.offer(hdr[:], p[off:min(off+piece, len(p))]); err != nil {
			if off > 0 && c.err == nil {
				c.err = fmt.Errorf("%w (after %d of the request's %d bytes went, so the connection cannot be used again)", err, off, len(p))
				return c.err
			}
			return err
		}
	}
	return nil
}

// offer offers a+b as one message until it goes, the deadline passes or
// the connection fails.
func (c *Conn) offer(a, b []byte) error {
	var notConnected time.Time // when NOT_CONNECTED was first seen
	for i := 0; ; i++ {
		r := c.pub.Offer2(a, b)
		if r > 0 {
			c.pump()
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

// ReadAppend appends the next reply message to dst; a reply the server
// sent in chunks is gathered first.
func (c *Conn) ReadAppend(dst []byte) ([]byte, error) {
	if c.pumps {
		c.emb.begin()
		defer c.emb.end()
	}
	m, err := c.next(dst)
	if err != nil || !isFrame(m[len(dst):]) {
		return m, err
	}
	return c.readChunked(dst, m)
}

// next appends the next message to dst. Its fragments are consumed as
// they come (Image.ReadMessage), so a message longer than a UDP receiver
// window arrives; one cut off by the deadline or a failure leaves the
// connection unusable.
func (c *Conn) next(dst []byte) ([]byte, error) {
	if err := c.usable(); err != nil {
		return dst, err
	}
	start := len(dst)
	for i := 0; ; i++ {
		var done bool
		if dst, done = c.img.ReadMessage(dst, &c.rs); done {
			return dst, nil
		}
		if i&63 == 63 {
			err := c.lost()
			if err == nil && c.expired() {
				err = transport.ErrTimeout
			}
			if err != nil {
				if c.rs.InMessage() && c.err == nil {
					c.err = fmt.Errorf("%w (after %d bytes of a message came, so the connection cannot be used again)", err, len(dst)-start)
					err = c.err
				}
				return dst[:start], err
			}
		}
		c.idle(i)
	}
}

// readChunked gathers a chunked reply whose first chunk m holds after
// start: each piece replaces its frame header, so the reply ends up whole
// in dst[start:].
func (c *Conn) readChunked(dst, m []byte) ([]byte, error) {
	start := len(dst)
	var a assembly
	for {
		ch, err := parseChunk(m[len(dst):])
		if err == nil {
			if need := start + ch.total + frameHeaderLen; !a.inProgress() && cap(m) < need {
				m = slices.Grow(m, need-len(m)) // once: the reply and the last chunk's header
			}
			a.discard = true // the pieces stay in m; a only checks their order
			var done bool
			if done, err = a.add(ch); err == nil {
				dst = m[:len(dst)+copy(m[len(dst):], ch.piece)]
				if done {
					return dst, nil
				}
			}
		}
		if err != nil {
			c.err = fmt.Errorf("%w: reply: %w", transport.ErrServerGone, err)
			return dst[:start], c.err
		}
		if m, err = c.next(dst); err != nil {
			if c.err == nil {
				c.err = fmt.Errorf("%w (after %d of the reply's %d bytes came, so the connection cannot be used again)", err, a.pos, a.total)
			}
			return dst[:start], c.err
		}
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

// pump runs a duty cycle of the process's in-process UDP driver, which
// the connection drives while it waits: it sends what was offered and
// reads what arrived (the driver has no thread of its own).
func (c *Conn) pump() {
	if c.pumps {
		c.emb.work()
	}
}

func (c *Conn) idle(i int) {
	c.pump()
	c.o.Wait.Pause(i, c.o.Backoff)
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
	if c.emb != nil && c.ownEmb {
		c.emb.releaseClient()
	}
	c.emb = nil
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
