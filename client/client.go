// Package client is goblin's Go client library. One API works over every
// transport goblin serves (Unix sockets, TCP, the shared-memory ring and
// Aeron IPC and UDP) and in both
// wire protocols, RESP and SBE, chosen by the target's proto parameter:
//
//	c, err := client.Dial(ctx, "uds:///run/goblin/goblin.sock?proto=sbe")
//	...
//	err = c.Set(ctx, "greeting", []byte("hello"), client.SetOptions{TTL: time.Minute})
//	v, err := c.Get(ctx, "greeting")          // ErrNil when the key is missing
//
// Sockets (uds://, tcp://) are built in. The shared-memory ring and Aeron
// opt in by import, so a socket-only program links neither:
//
//	import _ "github.com/goblin-kv/goblin/transport/ring"  // ring:// targets
//	import _ "github.com/goblin-kv/goblin/transport/aeron" // aeron:ipc, aeron:udp targets
//
// Without the import, Dial of such a target returns ErrUnknownTransport,
// naming the import to add.
//
// A Client holds one connection and is safe for concurrent use: calls are
// serialised by a mutex, so each goroutine sees its own request answered.
// Use a Pipeline to send many requests in one write, or several Clients to
// keep several requests in flight.
//
// Every call honours its context's deadline (it becomes the connection's
// I/O deadline); a call whose context is already done does not start.
// After a connection error the connection is closed and the next call
// dials again.
//
// The latency path — Ping, Set, GetAppend and the other typed calls at
// depth one — does not allocate: requests are encoded into a reused buffer
// and replies are parsed in place.
package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"os/user"
	"slices"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/transport"
)

// Errors a call can return besides *ServerError and *ConnError.
var (
	// ErrNil reports a nil reply: a missing key for Get, an unmet NX or XX
	// condition for Set.
	ErrNil = errors.New("client: nil reply")
	// ErrProtocol is wrapped when a reply cannot be decoded; the connection
	// is closed because its byte stream can no longer be trusted.
	ErrProtocol = errors.New("client: protocol error")
	// ErrUnexpectedReply is wrapped when a reply is well formed but not of
	// the type the command returns (for example a bulk string for INCR).
	ErrUnexpectedReply = errors.New("client: unexpected reply type")
	// ErrDial is wrapped (through *ConnError) when no connection to the
	// server could be made: nothing listens at the target.
	ErrDial = errors.New("client: cannot connect")
	// ErrClosed reports use of a Client after Close.
	ErrClosed = errors.New("client: closed")
	// ErrUnknownTransport is wrapped when the client has no dialer for the
	// target's scheme: ring:// and aeron: targets need their transport's
	// package linked into the program (import _
	// "github.com/goblin-kv/goblin/transport/ring" or .../transport/aeron),
	// and the error names the import. It is transport.ErrNoDialer.
	ErrUnknownTransport = transport.ErrNoDialer
	// ErrNoSBEEncoding is wrapped when Do is asked, over SBE, for a command
	// (or subcommand) that is not in goblin's command table: SBE has a
	// message for each command goblin knows and no generic one, so nothing
	// was sent and the connection is kept. Over RESP the same command
	// reaches the server, which may know it (a newer goblin, or Redis).
	ErrNoSBEEncoding = errors.New("client: command has no SBE encoding")
)

// ServerError is an error reply from the server, e.g. "ERR syntax error"
// or "WRONGPASS invalid password". The connection stays usable.
type ServerError struct {
	// Code is the first word of the message, e.g. "ERR", "WRONGTYPE",
	// "NOAUTH".
	Code string
	// Message is the whole error text as the server sent it.
	Message string
}

func (e *ServerError) Error() string { return "server: " + e.Message }

func newServerError(msg []byte) *ServerError {
	m := string(msg)
	code := m
	for i := 0; i < len(m); i++ {
		if m[i] == ' ' {
			code = m[:i]
			break
		}
	}
	return &ServerError{Code: code, Message: m}
}

// ConnError reports a failure to reach the server or a connection that
// failed mid-call. It wraps the transport's error, so errors.Is works
// with transport.ErrTimeout, transport.ErrServerGone, syscall.ECONNREFUSED
// and, for failed dials, ErrDial.
type ConnError struct {
	Target string // the target, as transport.Target.String formats it
	Op     string // "dial", "write" or "read"
	Err    error
}

func (e *ConnError) Error() string {
	return fmt.Sprintf("client: %s %s: %v", e.Op, e.Target, e.Err)
}

// Unwrap returns the underlying error (and ErrDial for a failed dial).
func (e *ConnError) Unwrap() []error {
	if e.Op == "dial" {
		return []error{ErrDial, e.Err}
	}
	return []error{e.Err}
}

// Options configure a Client; the zero value works, and Dial is Options{}.Dial:
//
//	c, err := client.Options{Password: pw, DialTimeout: time.Second}.Dial(ctx, tgt)
//
// The protocol is the target's (its proto parameter, or
// transport.Target.Proto for DialTarget).
type Options struct {
	// DialTimeout bounds each connection attempt when the context has no
	// earlier deadline: 0 means the default, 5s; a negative value, none
	// (the context alone bounds it).
	DialTimeout time.Duration
	// BusyPoll makes stream transports spin on non-blocking reads for up
	// to this long before parking in the network poller: a core for a few
	// microseconds less latency. Zero (the default) never spins.
	BusyPoll time.Duration
	// Password, when set, is sent with AUTH after every connect, once
	// the server is known to run as this user, as root or as one of
	// TrustedServerUIDs (on Unix sockets; see ErrUntrustedServer).
	Password string
	// TrustedServerUIDs are further users whose servers on a Unix socket
	// may be sent the password, for a server run by a service account.
	TrustedServerUIDs []int
	// MaxBufferKeep caps the read and write buffers a Client keeps between
	// calls after a large value (0: the default, 1 MiB).
	MaxBufferKeep int
	// DB is the database every connection selects (SELECT) before its
	// first command; 0, the default, is the server's. A successful SELECT
	// sent with Do or a Pipeline replaces it for later redials (inside
	// MULTI, once EXEC runs it), so a dropped connection never sends a
	// command to another database.
	DB int
	// ClientName, when set, is every connection's name (CLIENT SETNAME),
	// as CLIENT LIST shows it; CLIENT SETNAME sent with Do replaces it.
	ClientName string
	// OnPush, when set, is called (with the client's lock held: it must
	// not call the Client, nor panic, which would leave the lock held) with each RESP3 push message the server sends
	// out of band, such as a client-tracking invalidation; nil discards
	// them. Pushes are never taken for a command's reply.
	OnPush func(Value)
	// TLS configures connections to tls:// (rediss://) targets: the CA
	// that signed the server's certificate (RootCAs), a client
	// certificate, the server name. nil trusts the system's roots and
	// takes the target's host as the server name; uds.ClientTLSConfig
	// builds one from files as redis-cli's --cacert, --cert and --key do.
	TLS *tls.Config
	// Protocol is the RESP version: 2 (or 0), the default, or 3, which
	// sends HELLO 3 on every connection so that replies come as RESP3's
	// maps, sets, doubles and the rest (see Kind). HELLO 3 sent with Do
	// has the same effect for later redials. RESP only.
	Protocol int
}

// Defaults of the Options fields whose zero value means "the default".
const (
	DefaultDialTimeout   = 5 * time.Second
	DefaultMaxBufferKeep = 1 << 20
)

// withDefaults returns o with its zero fields set to their defaults.
func (o Options) withDefaults() Options {
	if o.DialTimeout == 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.MaxBufferKeep <= 0 {
		o.MaxBufferKeep = DefaultMaxBufferKeep
	}
	return o
}

// codec turns argument lists into requests and reply bytes into replies.
type codec interface {
	// appendRequest appends the encoded request for args (args[0] is the
	// command name) to dst; id is a correlation id for protocols that
	// carry one.
	appendRequest(dst []byte, args [][]byte, id uint64) ([]byte, error)
	// appendTyped appends the encoded request r, built by a typed call.
	appendTyped(dst []byte, r *command.Request) ([]byte, error)
	// parseReply decodes one reply at the start of buf into r, returning
	// the bytes used, or 0 and a nil error when more bytes are needed.
	// r's byte slices alias buf.
	parseReply(buf []byte, r *result) (int, error)
	// reset forgets per-connection state after a reconnect.
	reset()
}

// Client is a connection to one goblin server. It is safe for concurrent
// use.
type Client struct {
	mu     sync.Mutex
	t      transport.Target
	tname  string
	opts   Options
	tr     dialer
	codec  codec
	msgSBE *sbeCodec      // codec when it is SBE on a message transport (unframed): Ping's shortcut; set at dial
	conn   transport.Conn // nil until (re)connected
	closed bool
	dl     time.Time // deadline currently set on conn
	nextID uint64
	args   [][]byte        // Do's and Pipeline's argument lists
	req    command.Request // typed calls' request
	num    []byte          // scratch for formatted integers
	wbuf   []byte
	rbuf   []byte
	roff   int // start of unparsed bytes in rbuf
	rep    result
	state  connState  // what every (re)connection sets up
	multi  multiState // an open MULTI on conn, if any
	// answered says the connection has delivered a reply: until it has,
	// a timeout or a RESP reply on an SBE connection means the server
	// does not speak SBE there (ErrNoSBEReply).
	answered bool
}

// Dial connects to target with the default Options (see transport.ParseTarget
// for the syntax; "" means transport.DefaultTarget(), the socket goblin-server
// listens on with no flags). It returns a *ConnError wrapping ErrDial when
// nothing answers there.
func Dial(ctx context.Context, target string) (*Client, error) {
	return Options{}.Dial(ctx, target)
}

// DialTarget is Dial with a parsed target.
func DialTarget(ctx context.Context, t transport.Target) (*Client, error) {
	return Options{}.DialTarget(ctx, t)
}

// Dial connects to tgt with these options; see the function Dial.
func (o Options) Dial(ctx context.Context, tgt string) (*Client, error) {
	var t transport.Target
	if tgt == "" {
		t = transport.DefaultTarget()
	} else {
		var err error
		if t, err = transport.ParseTarget(tgt); err != nil {
			return nil, err
		}
	}
	return o.DialTarget(ctx, t)
}

// DialTarget connects to a parsed target with these options.
func (o Options) DialTarget(ctx context.Context, t transport.Target) (*Client, error) {
	o = o.withDefaults()
	o.TrustedServerUIDs = slices.Clone(o.TrustedServerUIDs)
	tr, err := lookupDialer(t.Scheme)
	if err != nil {
		return nil, fmt.Errorf("client: dial %s: %w", t, err)
	}
	if err := o.checkProtocol(t.Proto); err != nil {
		return nil, err
	}
	c := &Client{t: t, tname: t.String(), opts: o, tr: tr,
		state: connState{db: o.DB, name: o.ClientName, resp3: o.Protocol == 3}}
	if c.codec, err = newCodec(t.Proto, tr.message); err != nil {
		return nil, err
	}
	if s, ok := c.codec.(*sbeCodec); ok && !s.framed {
		c.msgSBE = s
	}
	c.wbuf = make([]byte, 0, 512)
	c.rbuf = make([]byte, 0, 16<<10)
	c.args = make([][]byte, 0, 8)
	c.num = make([]byte, 0, 64)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.connect(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// newCodec returns the codec of protocol p; message transports carry SBE
// without SOFH framing.
func newCodec(p proto.Protocol, message bool) (codec, error) {
	switch p {
	case proto.RESP:
		return &respCodec{}, nil
	case proto.SBE:
		return newSBECodec(!message)
	}
	return nil, fmt.Errorf("client: unsupported protocol %v", p)
}

// Target returns the target the client talks to (with the protocol the
// server reported, when the target named none and the transport's
// handshake tells it).

func (c *Client) Target() transport.Target { return c.t }

// Close closes the connection. Calls after Close return ErrClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	if c.conn != nil {
		err := c.conn.Close()
		c.conn = nil
		return err
	}
	return nil
}

// connect dials c.t. c.mu is held.
func (c *Client) connect(ctx context.Context) error {
	if c.opts.DialTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.DialTimeout)
		defer cancel()
	}
	conn, err := c.tr.dial(ctx, c.t, &c.opts)
	if err != nil {
		return &ConnError{Target: c.tname, Op: "dial", Err: err}
	}
	if pc, ok := conn.(transport.ProtocolConn); ok && !c.t.ProtoSet && pc.Protocol() != c.t.Proto {
		// The target named no protocol: speak the listener's.
		cd, err := newCodec(pc.Protocol(), c.tr.message)
		if err != nil {
			conn.Close()
			return &ConnError{Target: c.tname, Op: "dial", Err: err}
		}
		c.codec, c.t.Proto = cd, pc.Protocol()
		c.tname = c.t.String()
	}
	c.conn, c.dl, c.rbuf, c.roff = conn, time.Time{}, c.rbuf[:0], 0
	c.answered = false
	c.codec.reset()
	if c.opts.Password != "" {
		if err := c.checkServerUser(conn); err != nil {
			c.drop()
			return err
		}
		// connect runs inside a call that has already built its own
		// command in c.args (a redial after a dropped connection): AUTH
		// gets a slice of its own, and the call's command is put back.
		call := c.args
		c.args = [][]byte{[]byte("AUTH"), []byte(c.opts.Password)}
		r, err := c.exec(ctx)
		c.args = call
		if err == nil {
			err = r.okOrErr()
		}
		if err != nil {
			c.drop()
			return err
		}
	}
	if c.state.resp3 && c.t.Proto != proto.RESP {
		c.drop()
		return &ConnError{Target: c.tname, Op: "dial", Err: fmt.Errorf("RESP3 (Options.Protocol 3, HELLO 3) needs a RESP listener, and this one speaks %v", c.t.Proto)}
	}
	if err := c.restore(ctx); err != nil {
		c.drop()
		return err
	}
	return nil
}

// ErrUntrustedServer is returned instead of sending the password to a
// server on a Unix socket that runs as another user than the client's,
// root or one of Options.TrustedServerUIDs: another local user may have
// bound the socket path first to collect passwords.
var ErrUntrustedServer = errors.New("client: untrusted server")

// checkServerUser checks, before the password goes out, who runs the
// server at the other end of a Unix socket (the kernel's peer
// credentials).
func (c *Client) checkServerUser(conn transport.Conn) error {
	p, ok := conn.(interface{ PeerUID() (int, bool, error) })
	if !ok {
		return nil // a transport without peer credentials (TCP, ring, Aeron)
	}
	uid, known, err := p.PeerUID()
	if err != nil {
		return fmt.Errorf("%w: not sending the password to %s: cannot tell which user runs it: %w", ErrUntrustedServer, c.t, err)
	}
	me := os.Geteuid()
	if !known || uid == me || uid == 0 || slices.Contains(c.opts.TrustedServerUIDs, uid) {
		return nil
	}
	return fmt.Errorf("%w: not sending the password to %s: it runs as %s, not as you (%s) or root, so another local user may be answering in goblin-server's place. If that user really runs your server, trust it (goblin-client --server-uid %d, client.Options.TrustedServerUIDs)",
		ErrUntrustedServer, c.t, userName(uid), userName(me), uid)
}

// userName is "uid N (name)", or "uid N" when the name is unknown.
func userName(uid int) string {
	s := "uid " + strconv.Itoa(uid)
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		s += " (" + u.Username + ")"
	}
	return s
}

// drop closes a broken connection so the next call redials.
func (c *Client) drop() {
	if c.conn != nil {
		_ = c.conn.Close()
		c.conn = nil
	}
}

// prepare makes sure a connection exists and carries ctx's deadline.
// c.mu is held.
func (c *Client) prepare(ctx context.Context) error {
	if c.closed {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.conn == nil {
		if err := c.connect(ctx); err != nil {
			return err
		}
	}
	// Without a deadline now and before (the common case) there is
	// nothing to compare: Equal costs more than the rest of prepare.
	if dl, ok := ctx.Deadline(); (ok || !c.dl.IsZero()) && !dl.Equal(c.dl) {
		if err := c.conn.SetDeadline(dl); err != nil {
			c.drop()
			return &ConnError{Target: c.tname, Op: "set deadline", Err: err}
		}
		c.dl = dl
	}
	return nil
}

// exec sends c.args as one request and reads its reply into c.rep. The
// reply's bytes alias c.rbuf and are valid until the next call. c.mu is
// held.
func (c *Client) exec(ctx context.Context) (*result, error) { return c.roundTrip(ctx, nil) }

// execReq is exec for the request a typed call built (c.req).
func (c *Client) execReq(ctx context.Context) (*result, error) { return c.roundTrip(ctx, &c.req) }

// compactPing stands for the request of a PING over c.msgSBE, which is
// the 16-byte Ping whatever else a request holds: Ping passes its address
// to roundTrip instead of building c.req. Never written.
var compactPing command.Request

// roundTrip sends r, or c.args when r is nil, and reads the reply.
func (c *Client) roundTrip(ctx context.Context, r *command.Request) (*result, error) {
	if err := c.prepare(ctx); err != nil {
		return nil, err
	}
	c.compact()
	var err error
	c.nextID++
	if r == &compactPing {
		c.wbuf = c.msgSBE.appendPing(c.wbuf[:0])
	} else if r != nil {
		c.wbuf, err = c.codec.appendTyped(c.wbuf[:0], r)
	} else {
		c.wbuf, err = c.codec.appendRequest(c.wbuf[:0], c.args, c.nextID)
	}
	if err != nil {
		return nil, err
	}
	if err := c.conn.Write(c.wbuf); err != nil {
		if errors.Is(err, transport.ErrMessageTooLarge) {
			c.codec.reset() // nothing was sent: no reply is owed, and the connection stays
		} else {
			c.drop()
		}
		return nil, &ConnError{Target: c.tname, Op: "write", Err: err}
	}
	if err := c.readReply(&c.rep); err != nil {
		return nil, err
	}
	return &c.rep, nil
}

// compact discards parsed bytes before a new request and trims buffers
// that grew for a large value.
func (c *Client) compact() {
	if c.roff == len(c.rbuf) {
		c.rbuf, c.roff = c.rbuf[:0], 0
	} else if c.roff > 0 {
		n := copy(c.rbuf, c.rbuf[c.roff:])
		c.rbuf, c.roff = c.rbuf[:n], 0
	}
	if cap(c.rbuf) > c.opts.MaxBufferKeep && len(c.rbuf) == 0 {
		c.rbuf = make([]byte, 0, 16<<10)
	}
	if cap(c.wbuf) > c.opts.MaxBufferKeep {
		c.wbuf = make([]byte, 0, 512)
	}
}

// readReply parses the next reply, reading more bytes as needed.
func (c *Client) readReply(r *result) error {
	for {
		if c.roff < len(c.rbuf) {
			n, err := c.codec.parseReply(c.rbuf[c.roff:], r)
			if err != nil {
				err = c.notSBE(err, false)
				c.drop()
				return &ConnError{Target: c.tname, Op: "read", Err: err}
			}
			if n > 0 {
				c.roff += n
				c.answered = true
				if r.kind == KindPush {
					c.push(r) // out of band: not the reply being waited for
					continue
				}
				return nil
			}
		}
		if len(c.rbuf)-c.roff > maxPendingReply {
			c.drop()
			return &ConnError{Target: c.tname, Op: "read",
				Err: fmt.Errorf("%w: reply larger than %d bytes", ErrProtocol, maxPendingReply)}
		}
		var err error
		c.rbuf, err = c.conn.ReadAppend(c.rbuf)
		if err != nil {
			if errors.Is(err, transport.ErrTimeout) {
				err = c.notSBE(err, true)
			}
			c.drop()
			return &ConnError{Target: c.tname, Op: "read", Err: err}
		}
	}
}

// ErrNoSBEReply is wrapped when a connection that speaks SBE got no SBE
// reply to its first request: none came before the deadline, or what came
// is a RESP reply. The server at the target most likely speaks RESP only
// (Redis, or a goblin RESP listener on a transport that cannot tell).
var ErrNoSBEReply = errors.New("client: no SBE reply: is this a goblin server speaking SBE?")

// notSBE returns err, explained by ErrNoSBEReply when the connection speaks
// SBE, has not yet delivered a reply, and either got what looks like a
// RESP reply or (timedOut) nothing before the deadline.
func (c *Client) notSBE(err error, timedOut bool) error {
	if c.answered || c.t.Proto != proto.SBE {
		return err
	}
	if c.roff < len(c.rbuf) {
		switch rest := c.rbuf[c.roff:]; rest[0] {
		case '+', '-', ':', '$', '*', '%', '_', '#', ',', '(', '!', '=', '~', '>', '|':
			line := rest[:min(len(rest), 60)]
			if i := bytes.IndexByte(line, '\r'); i >= 0 {
				line = line[:i]
			}
			return fmt.Errorf("%w: it answered %q, a RESP reply (--proto resp, or proto=resp in the target, talks to it): %w", ErrNoSBEReply, line, err)
		}
	}
	if !timedOut {
		return err
	}
	return fmt.Errorf("%w: no reply came before the deadline (%w); a RESP-only server waits for a line that SBE never sends", ErrNoSBEReply, err)
}

// push hands a push message to Options.OnPush.
func (c *Client) push(r *result) {
	if c.opts.OnPush != nil {
		c.opts.OnPush(r.value())
	}
}

// bytesOf views s as a byte slice without copying. The slice is only read
// (encoded into the write buffer) and never kept past the call, so the
// string's immutability is respected.
func bytesOf(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// appendNum formats v into c.num and returns the formatted bytes; the
// result stays valid until c.num is reset at the start of the next call.
func (c *Client) appendNum(v int64) []byte {
	start := len(c.num)
	c.num = strconv.AppendInt(c.num, v, 10)
	return c.num[start:len(c.num):len(c.num)]
}
