package uds

// This file serves TLS on a TCP listener without ever blocking the loop,
// and with one thread wake-up per round trip, as a plain TCP client.
//
// crypto/tls works on a net.Conn. A handshake takes several round trips,
// so it runs on a goroutine of its own: the loop accepts the TCP socket as
// usual (non-blocking, its protected-mode and maxclients checks included),
// keeps it out of its epoll set, and a goroutine makes the handshake on a
// duplicate of the descriptor (on the runtime's poller, with a deadline).
// A client that connects and stays silent, or trickles its handshake,
// costs the loop nothing. The finished tls.Conn is then handed to the
// loop (a queue and an eventfd doorbell in the listener's epoll set), the
// goroutine ends, and from then on the loop runs the record layer itself:
// the tls.Conn sits on a loopConn (tlsloop.go), a net.Conn whose Read
// reads the non-blocking socket and reports "would block" as a temporary
// net.Error (which crypto/tls hands back without ending the connection,
// keeping a partial record for the next call), and whose Write writes the
// socket and keeps what it did not take. The loop reads and decrypts when
// epoll says the socket is readable, serves the requests like any
// client's, and encrypts the replies where a plain client's are written.
//
// A round trip therefore costs what it costs a plain client, one wake-up
// of the loop, plus the cryptography on the loop (about a microsecond for
// a small record); docs/security.md gives the measured figures
// (BenchmarkTLSPing).

import (
	"crypto/tls"
	"errors"
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

// PlaintextOnTLS is what a client that speaks plaintext to a TLS listener
// reads before the connection closes.
const PlaintextOnTLS = "-ERR this port speaks TLS: connect with TLS (redis-cli --tls, a tls:// or rediss:// target)\r\n"

// tlsBridges holds a TLS listener's handshakes in progress: the
// goroutines making them, and the finished ones waiting for the loop.
type tlsBridges struct {
	src      *TLSSource
	log      *slog.Logger
	name     string
	failures atomic.Int64 // handshakes that failed

	// doorbell is an eventfd in the listener's epoll set: a handshake
	// goroutine writes it after queueing its result in done, the loop
	// reads it and takes done. Written only under mu and never once
	// closed is set, so a goroutine never writes a closed (or reused)
	// descriptor.
	doorbell int

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{} // handshake connections, closed by close
	done   []handshake           // finished handshakes, for the loop
}

// handshake is one finished handshake: tc is nil when it failed.
type handshake struct {
	c  *conn
	tc *tls.Conn
	lc *loopConn
}

// newTLSBridges makes a TLS listener's state, its doorbell included.
func newTLSBridges(src *TLSSource, log *slog.Logger, name string) (*tlsBridges, error) {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return &tlsBridges{src: src, log: log, name: name, doorbell: fd, conns: map[net.Conn]struct{}{}}, nil
}

// fileConn turns a socket descriptor into a net.Conn on the runtime's
// poller; fd is closed (net.FileConn works on a duplicate).
func fileConn(fd int, name string) (net.Conn, error) {
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	return net.FileConn(f)
}

// startTLS starts c's handshake on a goroutine; the loop keeps c.fd, out
// of its epoll set until takeHandshakes hands it the finished session.
func (s *Server) startTLS(c *conn) error {
	dup, err := unix.Dup(c.fd)
	if err != nil {
		return err
	}
	nc, err := fileConn(dup, "tls-handshake")
	if err != nil {
		return err
	}
	go s.tls.handshake(c, nc, c.peer)
	return nil
}

// refuseTLS answers a client refused at accept (maxclients, protected
// mode) over TLS, as Redis does: the handshake, then the error, then the
// end of the connection. It runs on a goroutine of its own, which owns raw.
func (s *Server) refuseTLS(raw int, peer string, text []byte) {
	go s.tls.refuse(raw, peer, text)
}

// track adds c to the live handshake connections; false once the listener
// closed.
func (b *tlsBridges) track(c net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.conns[c] = struct{}{}
	return true
}

func (b *tlsBridges) untrack(c net.Conn) {
	b.mu.Lock()
	delete(b.conns, c)
	b.mu.Unlock()
}

// close ends every handshake in progress and the doorbell, once; on the
// loop goroutine.
func (b *tlsBridges) close() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	for c := range b.conns {
		c.Close()
	}
	b.done = nil
	unix.Close(b.doorbell)
	b.mu.Unlock()
}

// finish queues a finished handshake for the loop and rings the doorbell.
func (b *tlsBridges) finish(h handshake) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.done = append(b.done, h)
	one := [8]byte{1} // an eventfd adds the 8-byte counter written (little-endian 1)
	unix.Write(b.doorbell, one[:])
}

// take returns the finished handshakes (into buf's array); on the loop
// goroutine, after the doorbell rang.
func (b *tlsBridges) take(buf []handshake) []handshake {
	var count [8]byte
	unix.Read(b.doorbell, count[:])
	b.mu.Lock()
	buf = append(buf, b.done...)
	clear(b.done)
	b.done = b.done[:0]
	b.mu.Unlock()
	return buf
}

// serverHandshake makes the server side of a handshake on nc within
// TLSHandshakeTimeout; a failure is counted and logged (a plaintext client
// is told in plaintext what it reached), and reported as nil.
func (b *tlsBridges) serverHandshake(nc net.Conn, peer string, lc *loopConn) *tls.Conn {
	var under net.Conn = nc
	if lc != nil {
		under = lc
	}
	tc := tls.Server(under, b.src.Config())
	nc.SetDeadline(time.Now().Add(TLSHandshakeTimeout))
	err := tc.Handshake()
	if err == nil {
		nc.SetDeadline(time.Time{})
		return tc
	}
	b.failures.Add(1)
	var rhe tls.RecordHeaderError
	if errors.As(err, &rhe) && rhe.Conn != nil {
		// Not TLS at all: say so in plaintext, as a Redis client reads
		// it, rather than leave it to guess from a reset.
		rhe.Conn.Write([]byte(PlaintextOnTLS))
		b.log.Warn("client spoke plaintext to a TLS listener", "transport", b.name, "client", peer)
		return nil
	}
	b.log.Warn("TLS handshake failed", "transport", b.name, "client", peer, "err", err)
	return nil
}

// handshake makes c's handshake on nc (a duplicate of c.fd) and hands the
// result to the loop. It never touches c, which the loop owns: c only
// names the client in the result.
func (b *tlsBridges) handshake(c *conn, nc net.Conn, peer string) {
	if !b.track(nc) {
		nc.Close()
		return
	}
	lc := &loopConn{hs: nc, fd: -1, local: nc.LocalAddr(), remote: nc.RemoteAddr()}
	tc := b.serverHandshake(nc, peer, lc)
	b.untrack(nc)
	// From here on the loop drives the session on its own descriptor; the
	// duplicate closes (the socket stays open: the loop holds c.fd).
	lc.hs = nil
	nc.Close()
	if tc == nil {
		b.finish(handshake{c: c})
		return
	}
	b.finish(handshake{c: c, tc: tc, lc: lc})
}

// refuse makes the handshake on raw, writes refusal over TLS and closes.
func (b *tlsBridges) refuse(raw int, peer string, refusal []byte) {
	nc, err := fileConn(raw, "tls-refused")
	if err != nil {
		b.log.Warn("TLS client dropped", "transport", b.name, "client", peer, "err", err)
		return
	}
	defer nc.Close()
	if !b.track(nc) {
		return
	}
	defer b.untrack(nc)
	if tc := b.serverHandshake(nc, peer, nil); tc != nil {
		tc.Write(refusal)
		tc.Close() // close_notify, then the socket
	}
}

// takeHandshakes gives the loop the sessions whose handshakes finished:
// each client joins the epoll set and is read at once (its first request
// may have come with the handshake's last flight, already read); a client
// whose handshake failed is dropped; one dropped meanwhile is forgotten.
func (s *Server) takeHandshakes(now int64) {
	s.handshakes = s.tls.take(s.handshakes[:0])
	for i, h := range s.handshakes {
		s.handshakes[i] = handshake{}
		c := h.c
		if c.fd < 0 || s.conns[c.fd] != c {
			continue // dropped (killed, idle, closing) during the handshake
		}
		if h.tc == nil {
			s.drop(c)
			continue
		}
		h.lc.fd = c.fd
		c.tls.tc, c.tls.lc = h.tc, h.lc
		c.events = s.watched(c)
		if err := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, c.fd, &unix.EpollEvent{Events: c.events, Fd: int32(c.fd)}); err != nil {
			s.log.Warn("epoll_ctl add failed", "transport", s.name, "err", err)
			s.drop(c)
			continue
		}
		s.read(c, now)
	}
}
