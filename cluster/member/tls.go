package member

// The bus's dial and listen seam: plain TCP, or TLS when Options.TLS
// gives a configuration (tls-cluster yes). Both are asked on every new
// link, so a CONFIG SET of tls-cluster or of a certificate applies to the
// links made from then on, as in Redis; links already up keep what they
// were made with.

import (
	"context"
	"crypto/tls"
	"net"
	"time"
)

// BusTLS gives the bus its TLS configurations; a nil result means plain
// TCP for that link. Called on the accept and dial goroutines.
type BusTLS struct {
	// Server serves an inbound link (the node's certificate, and the
	// peer's checked as tls-auth-clients says).
	Server func() *tls.Config
	// Client dials an outbound link (the peer's certificate checked
	// against the CA, the node's client certificate presented).
	Client func() *tls.Config
}

// listen opens the bus's listening socket.
func (c *Cluster) listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil || c.o.TLS == nil {
		return ln, err
	}
	return busListener{ln, c.o.TLS.Server}, nil
}

// busListener wraps each accepted connection in TLS when a configuration
// is given at that moment. The handshake runs on the link's reader
// goroutine, at its first read.
type busListener struct {
	net.Listener
	cfg func() *tls.Config
}

func (l busListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if cfg := l.cfg(); cfg != nil {
		tc := tls.Server(conn, cfg)
		// A peer that never finishes its handshake does not hold the
		// reader for ever.
		tc.SetDeadline(time.Now().Add(busHandshakeTimeout))
		return &handshakeConn{Conn: tc}, nil
	}
	return conn, nil
}

// busHandshakeTimeout bounds an inbound link's TLS handshake.
const busHandshakeTimeout = 10 * time.Second

// handshakeConn clears the handshake's deadline once it is done.
type handshakeConn struct {
	*tls.Conn
	done bool
}

func (h *handshakeConn) Read(b []byte) (int, error) {
	if !h.done {
		if err := h.Conn.Handshake(); err != nil {
			return 0, err
		}
		h.done = true
		h.Conn.SetDeadline(time.Time{})
	}
	return h.Conn.Read(b)
}

// dial opens an outbound link to addr.
func (c *Cluster) dial(addr string, timeout time.Duration) (net.Conn, error) {
	var cfg *tls.Config
	if c.o.TLS != nil {
		cfg = c.o.TLS.Client()
	}
	if cfg == nil {
		return net.DialTimeout("tcp", addr, timeout)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: timeout}, Config: cfg}
	return d.DialContext(ctx, "tcp", addr)
}
