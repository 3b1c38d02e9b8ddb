package uds

// This file serves TLS on a TCP listener without ever blocking the loop.
//
// crypto/tls works on a blocking net.Conn, and a handshake takes several
// round trips, so neither it nor the record layer can run on the loop
// goroutine. Instead the loop accepts the TCP socket as usual (non-blocking,
// its protected-mode and maxclients checks included) and hands it to a
// goroutine of its own, the bridge, keeping for itself one end of a Unix
// socket pair, which it watches in its epoll set like any client. The
// bridge makes the handshake and then copies plaintext both ways: records
// it decrypts go into the pair, bytes the loop writes into the pair are
// encrypted and sent. Everything the loop does for a client (reading into
// the shared buffers, the protocol sniff, limits, back-pressure through the
// pair's socket buffer, CLIENT KILL, lingering after a refusal) is the
// same code as for a plain client, and a slow or silent TLS peer costs the
// loop nothing.
//
// The price is latency: a request crosses the pair (a write by the bridge,
// an epoll wake-up and a read by the loop) and so does its reply (a write
// by the loop, a wake-up of the bridge goroutine in the Go scheduler and a
// read), on top of the cryptography. docs/security.md gives the measured
// figure (BenchmarkTLSPing).

import (
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// TLSHandshakeTimeout bounds a client's TLS handshake.
const TLSHandshakeTimeout = 10 * time.Second

// tlsRecordBuf is each bridge direction's copy buffer: one TLS record's
// worth of plaintext.
const tlsRecordBuf = 16 << 10

// PlaintextOnTLS is what a client that speaks plaintext to a TLS listener
// reads before the connection closes.
const PlaintextOnTLS = "-ERR this port speaks TLS: connect with TLS (redis-cli --tls, a tls:// or rediss:// target)\r\n"

// tlsBridges tracks a listener's bridges, so Close can end them.
type tlsBridges struct {
	src      *TLSSource
	log      *slog.Logger
	name     string
	failures atomic.Int64 // handshakes that failed

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
}

// fileConn turns a socket descriptor into a net.Conn on the runtime's
// poller; fd is closed (net.FileConn works on a duplicate).
func fileConn(fd int, name string) (net.Conn, error) {
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	return net.FileConn(f)
}

// startTLS hands the accepted socket raw to a bridge and returns the
// descriptor of the loop's end of the pair.
func (s *Server) startTLS(raw int, peer string) (int, error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	go s.tls.bridge(raw, pair[1], peer, nil)
	return pair[0], nil
}

// refuseTLS answers a client refused at accept (maxclients, protected
// mode) over TLS, as Redis does: the handshake, then the error, then the
// end of the connection. It runs on a goroutine of its own.
func (s *Server) refuseTLS(raw int, peer string, text []byte) {
	go s.tls.bridge(raw, -1, peer, text)
}

// track adds c to the live connections; false once the listener closed.
func (b *tlsBridges) track(cs ...net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	for _, c := range cs {
		b.conns[c] = struct{}{}
	}
	return true
}

func (b *tlsBridges) untrack(cs ...net.Conn) {
	b.mu.Lock()
	for _, c := range cs {
		delete(b.conns, c)
	}
	b.mu.Unlock()
}

// close ends every bridge: their connections close, their goroutines
// return.
func (b *tlsBridges) close() {
	b.mu.Lock()
	b.closed = true
	for c := range b.conns {
		c.Close()
	}
	b.mu.Unlock()
}

// bridge serves one TLS client: the handshake, then plaintext both ways
// between it and the loop's end of the pair (plain). With refusal set
// (plain is -1) it writes that and closes instead.
func (b *tlsBridges) bridge(raw, plain int, peer string, refusal []byte) {
	nc, err := fileConn(raw, "tls-client")
	if err != nil {
		if plain >= 0 {
			unix.Close(plain)
		}
		b.log.Warn("TLS client dropped", "transport", b.name, "client", peer, "err", err)
		return
	}
	var pc net.Conn
	if plain >= 0 {
		if pc, err = fileConn(plain, "tls-plain"); err != nil {
			nc.Close()
			b.log.Warn("TLS client dropped", "transport", b.name, "client", peer, "err", err)
			return
		}
	}
	conns := []net.Conn{nc}
	if pc != nil {
		conns = append(conns, pc)
	}
	if !b.track(conns...) {
		for _, c := range conns {
			c.Close()
		}
		return
	}
	defer b.untrack(conns...)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	tc := tls.Server(nc, b.src.Config())
	nc.SetDeadline(time.Now().Add(TLSHandshakeTimeout))
	if err := tc.Handshake(); err != nil {
		b.failures.Add(1)
		var rhe tls.RecordHeaderError
		if errors.As(err, &rhe) && rhe.Conn != nil {
			// Not TLS at all: say so in plaintext, as a Redis client
			// reads it, rather than leave it to guess from a reset.
			rhe.Conn.Write([]byte(PlaintextOnTLS))
			b.log.Warn("client spoke plaintext to a TLS listener", "transport", b.name, "client", peer)
			return
		}
		b.log.Warn("TLS handshake failed", "transport", b.name, "client", peer, "err", err)
		return
	}
	nc.SetDeadline(time.Time{})
	if refusal != nil {
		tc.Write(refusal)
		tc.Close()
		return
	}
	go func() {
		// Client to loop. At the end of the client's stream the loop is
		// told by a half close, so it answers what was sent before it
		// drops the client (which ends the other direction).
		buf := make([]byte, tlsRecordBuf)
		io.CopyBuffer(struct{ io.Writer }{pc}, struct{ io.Reader }{tc}, buf)
		if uc, ok := pc.(*net.UnixConn); ok {
			uc.CloseWrite()
		}
	}()
	// Loop to client, until the loop closes its end.
	buf := make([]byte, tlsRecordBuf)
	io.CopyBuffer(struct{ io.Writer }{tc}, struct{ io.Reader }{pc}, buf)
	tc.Close() // close_notify, then the socket
}
