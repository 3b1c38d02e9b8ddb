package uds

// This file is the client side of the socket transports: a transport.Conn
// over a connected Unix or TCP socket. The server side (the listener the
// store loop polls) lives beside it.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/internal/rawpoll"
	"github.com/goblin-kv/goblin/transport"
)

// DialOptions tune a client connection. The zero value works.
type DialOptions struct {
	// BusyPoll, when positive, makes ReadAppend retry a non-blocking read
	// in a tight loop for up to this long before parking the goroutine in
	// the runtime's network poller. It trades a core for the few
	// microseconds a poller wake-up costs; the latency benchmarks use it.
	BusyPoll time.Duration
	// ReadChunk is the least free capacity ReadAppend makes room for before
	// a read (default 4096 bytes).
	ReadChunk int
	// TLS configures tls:// targets (nil: the system's roots, the target's
	// host as the server name). BusyPoll does not apply to them.
	TLS *tls.Config
}

// Conn is a transport.Conn over a connected Unix or TCP socket. Like every
// transport.Conn it is not safe for concurrent use.
type Conn struct {
	nc       net.Conn
	raw      syscall.RawConn // nil when BusyPoll is off
	busyPoll time.Duration
	chunk    int
	deadline time.Time
	network  string
	address  string

	// Scratch for the busy-poll read callback: readFn is bound once so
	// that passing it to raw.Read does not allocate per call.
	readFn  func(fd uintptr) bool
	readBuf []byte
	readN   int
	readErr error
}

var _ transport.Conn = (*Conn)(nil)

// DialTarget connects to a uds or tcp target. A client takes no target
// parameter but proto; mode (a uds listener's) is accepted so that server
// and clients can share one target string, and any other is refused
// (wrapping transport.ErrTargetParam) rather than ignored.
func DialTarget(ctx context.Context, t transport.Target, o DialOptions) (*Conn, error) {
	for k := range t.Params {
		switch {
		case k == "mode" && t.Scheme == transport.UDS:
		case t.Scheme == transport.UDS:
			return nil, fmt.Errorf("uds: %w: unknown target parameter %q in %s (a uds target takes proto=resp|sbe, and mode= for a listener)", transport.ErrTargetParam, k, t)
		default:
			return nil, fmt.Errorf("%s: %w: unknown target parameter %q in %s (a %s target takes only proto=resp|sbe)", t.Scheme, transport.ErrTargetParam, k, t, t.Scheme)
		}
	}
	switch t.Scheme {
	case transport.UDS:
		return Dial(ctx, "unix", t.Path, o)
	case transport.TCP:
		return Dial(ctx, "tcp", t.Address, o)
	case transport.TLS:
		return DialTLS(ctx, t.Address, o)
	}
	return nil, fmt.Errorf("uds: cannot dial %s targets", t.Scheme)
}

// Dial connects to address on network "unix" (a socket path) or "tcp"
// (host:port). ctx bounds the connection attempt only. A failed dial
// returns the net package's error as it is: it already names the
// operation, network and address ("dial tcp 127.0.0.1:6380: connect:
// connection refused"), and errors.Is(err, syscall.ECONNREFUSED) and
// errors.Is(err, os.ErrNotExist)-style checks work.
func Dial(ctx context.Context, network, address string, o DialOptions) (*Conn, error) {
	switch network {
	case "unix", "tcp", "tcp4", "tcp6":
	default:
		return nil, fmt.Errorf("uds: unsupported network %q (want unix or tcp)", network)
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		// Requests are small and latency-bound: never wait to coalesce.
		_ = tc.SetNoDelay(true)
	}
	c := &Conn{nc: nc, busyPoll: o.BusyPoll, chunk: o.ReadChunk, network: network, address: address}
	if c.chunk <= 0 {
		c.chunk = 4096
	}
	if c.busyPoll > 0 {
		if sc, ok := nc.(syscall.Conn); ok {
			if raw, err := sc.SyscallConn(); err == nil {
				c.raw = raw
				c.readFn = c.spinRead
			}
		}
	}
	return c, nil
}

// DialTLS connects to a TLS listener at address (host:port) and makes the
// handshake, both bounded by ctx. With o.TLS nil, or without a ServerName,
// the server name is address's host.
func DialTLS(ctx context.Context, address string, o DialOptions) (*Conn, error) {
	cfg := o.TLS
	if cfg == nil {
		cfg = &tls.Config{}
	}
	if cfg.ServerName == "" && !cfg.InsecureSkipVerify {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return nil, fmt.Errorf("tls: address %q: %w", address, err)
		}
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	o.BusyPoll = 0
	c, err := Dial(ctx, "tcp", address, o)
	if err != nil {
		return nil, err
	}
	tc := tls.Client(c.nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		c.nc.Close()
		return nil, fmt.Errorf("tls: handshake with %s: %w", address, err)
	}
	c.nc = tc
	return c, nil
}

// PeerUID returns the user id of the process that created the Unix socket
// at the other end (SO_PEERCRED: the kernel records it when the server
// listens, and no one can forge it). ok is false for TCP, where the peer
// has no local user the kernel can name.
func (c *Conn) PeerUID() (uid int, ok bool, err error) {
	uc, isUnix := c.nc.(*net.UnixConn)
	if !isUnix {
		return 0, false, nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, false, fmt.Errorf("uds: peer credentials: %w", err)
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, false, fmt.Errorf("uds: peer credentials: %w", err)
	}
	if credErr != nil {
		return 0, false, fmt.Errorf("uds: peer credentials: %w", credErr)
	}
	return int(cred.Uid), true, nil
}

// NetConn returns the underlying connection (for tests and diagnostics).
func (c *Conn) NetConn() net.Conn { return c.nc }

// Write sends all of p.
func (c *Conn) Write(p []byte) error {
	for len(p) > 0 {
		n, err := c.nc.Write(p)
		if err != nil {
			return c.mapErr("write", err)
		}
		p = p[n:]
	}
	return nil
}

// ReadAppend appends at least one received byte to dst. It grows dst only
// when less than ReadChunk bytes of capacity are free, so a caller that
// reuses its buffer reads without allocating.
func (c *Conn) ReadAppend(dst []byte) ([]byte, error) {
	if cap(dst)-len(dst) < c.chunk {
		nb := make([]byte, len(dst), 2*cap(dst)+c.chunk)
		copy(nb, dst)
		dst = nb
	}
	buf := dst[len(dst):cap(dst)]
	if c.raw != nil {
		n, err := c.busyRead(buf)
		if n > 0 {
			return dst[:len(dst)+n], nil
		}
		if err != nil {
			return dst, err
		}
	}
	for {
		n, err := c.nc.Read(buf)
		if n > 0 {
			return dst[:len(dst)+n], nil
		}
		if err != nil {
			return dst, c.mapErr("read", err)
		}
	}
}

// busyRead spins on non-blocking reads for up to c.busyPoll. It returns
// (0, nil) when nothing arrived in time, so the caller falls back to the
// poller, which also enforces the deadline.
func (c *Conn) busyRead(buf []byte) (int, error) {
	c.readBuf, c.readN, c.readErr = buf, 0, nil
	err := c.raw.Read(c.readFn)
	c.readBuf = nil
	if err != nil {
		return 0, c.mapErr("read", err)
	}
	if c.readErr != nil {
		return 0, c.mapErr("read", c.readErr)
	}
	return c.readN, nil
}

// spinRead is the raw.Read callback. Returning true ends raw.Read;
// returning false would make the runtime park until readable, which we
// never want here (the caller falls back to nc.Read instead).
func (c *Conn) spinRead(fd uintptr) bool {
	start := time.Now()
	buf := c.readBuf
	for i := 0; ; i++ {
		n, err := rawpoll.Read(int(fd), buf) // busy-polled: raw, see package rawpoll
		switch {
		case n > 0:
			c.readN = n
			return true
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
		case err != nil:
			c.readErr = err
			return true
		default: // n == 0, err == nil: orderly shutdown by the peer
			c.readErr = io.EOF
			return true
		}
		if i&63 == 63 {
			if now := time.Now(); now.Sub(start) >= c.busyPoll ||
				(!c.deadline.IsZero() && now.After(c.deadline)) {
				return true
			}
		}
	}
}

// SetDeadline bounds the following Write and ReadAppend calls.
func (c *Conn) SetDeadline(t time.Time) error {
	c.deadline = t
	if err := c.nc.SetDeadline(t); err != nil {
		return c.mapErr("set deadline", err)
	}
	return nil
}

// Close closes the socket. Later calls fail with transport.ErrClosed.
func (c *Conn) Close() error {
	if err := c.nc.Close(); err != nil {
		return c.mapErr("close", err)
	}
	return nil
}

// mapErr wraps err with the transport sentinel callers test for:
// ErrTimeout, ErrClosed or ErrServerGone.
func (c *Conn) mapErr(op string, err error) error {
	var sentinel error
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		sentinel = transport.ErrTimeout
	case errors.Is(err, net.ErrClosed):
		sentinel = transport.ErrClosed
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.ENOTCONN):
		sentinel = transport.ErrServerGone
	default:
		return fmt.Errorf("uds: %s %s %s: %w", op, c.network, c.address, err)
	}
	return fmt.Errorf("%w: %s %s %s: %w", sentinel, op, c.network, c.address, err)
}
