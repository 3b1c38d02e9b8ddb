package replica

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// TLS to the primary (tls-replication yes). The loop reads the stream
// straight from the socket's file descriptor (Link.readStream), which a
// *tls.Conn does not have: records must be decrypted somewhere. So a
// TLS link is bridged: the run dials the primary, makes the handshake,
// and two goroutines copy between the tls.Conn and one end of a Unix
// socket pair; the link reads and writes the other end as it would a
// plain TCP socket. The loop never waits on TLS; the bridge costs a copy
// and a wake-up per read, which a replica's stream (bulk, pipelined)
// hardly notices. (The server's TLS listeners, which serve latency-bound
// clients, run the record layer on the loop instead: transport/uds's
// loopConn.)

// dialTLS dials addr, makes the TLS handshake with cfg (ServerName set to
// the primary's host when cfg names none) within timeout, and returns the
// plaintext end of a bridge to it.
func dialTLS(addr, host string, cfg *tls.Config, timeout time.Duration) (net.Conn, error) {
	raw, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	if tc, ok := raw.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	c := cfg.Clone()
	if c.ServerName == "" {
		c.ServerName = host
	}
	tc := tls.Client(raw, c)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, fmt.Errorf("TLS handshake with the primary: %w", err)
	}
	local, err := bridge(tc)
	if err != nil {
		tc.Close()
		return nil, err
	}
	return local, nil
}

// bridge connects tc to one end of a new socket pair and returns the
// other end. Either side closing closes both.
func bridge(tc *tls.Conn) (net.Conn, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socket pair for the TLS bridge: %w", err)
	}
	conns := make([]net.Conn, 2)
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "tls-bridge")
		conns[i], err = net.FileConn(f) // dups the descriptor
		f.Close()
		if err != nil {
			if i == 1 {
				conns[0].Close()
			} else {
				unix.Close(fds[1])
			}
			return nil, fmt.Errorf("socket pair for the TLS bridge: %w", err)
		}
	}
	local, far := conns[0], conns[1]
	var once sync.Once
	shut := func() {
		once.Do(func() {
			tc.Close()
			far.Close()
		})
	}
	go func() { io.Copy(far, tc); shut() }() // primary → link
	go func() { io.Copy(tc, far); shut() }() // link → primary (handshake, ACKs)
	return local, nil
}

// tlsHolder keeps the link's TLS configuration: the loop sets it (CONFIG
// SET tls-replication and the tls-* files), the run goroutine reads it
// when it dials; an atomic pointer orders the two.
type tlsHolder struct{ p atomic.Pointer[tls.Config] }

// SetTLS sets the configuration the next connection to the primary uses
// (nil: plain TCP). The current connection keeps what it has.
func (l *Link) SetTLS(cfg *tls.Config) { l.tls.p.Store(cfg) }

// tlsConfig is the configuration to dial with, nil for plain TCP.
func (l *Link) tlsConfig() *tls.Config { return l.tls.p.Load() }
