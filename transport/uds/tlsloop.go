package uds

// This file is a TLS client's record layer run by the loop (see tls.go):
// the net.Conn crypto/tls reads and writes through, and the loop's reads,
// writes and closes of a TLS client.

import (
	"crypto/tls"
	"io"
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// errWouldBlock is what a loopConn's Read returns when its socket holds no
// more bytes. crypto/tls keeps a read error for good (every later Read
// returns it) unless it is a net.Error whose Temporary() is true: that one
// it returns and forgets, keeping the bytes of a partial record for the
// next Read (readRecordOrCCS in crypto/tls/conn.go). One value, so a
// would-block allocates nothing.
var errWouldBlock net.Error = wouldBlock{}

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "uds: the TLS socket has no more bytes for now" }
func (wouldBlock) Timeout() bool   { return true }
func (wouldBlock) Temporary() bool { return true }

// loopConn is the net.Conn under a TLS client's tls.Conn. During the
// handshake (on its goroutine) it is hs, a duplicate of the socket on the
// runtime's poller. Once the loop has it, it reads and writes fd, the
// client's non-blocking socket, and never waits: Read reports would-block,
// Write keeps what the socket did not take in out, which the loop writes
// when epoll says the socket is writable. After the hand-over only the
// loop goroutine uses it (and the tls.Conn over it), so their locks are
// never contended.
type loopConn struct {
	hs            net.Conn // the handshake's connection; nil once the loop has it
	fd            int
	local, remote net.Addr
	// drained: a read found the socket empty (EAGAIN, or fewer bytes than
	// asked for), so reading again before epoll reports it readable would
	// be a wasted system call. The loop clears it on each readable event.
	drained bool
	// out[off:] is the ciphertext the socket has not taken yet, oldest
	// first. A partial write advances off instead of moving the rest to
	// the front, so draining a large reply to a slow reader costs the
	// loop its bytes once, not once per writable event.
	out  []byte
	off  int
	werr error // the socket's write error: the client is gone
}

// loopOutKeep is the most an emptied out buffer keeps for the next
// backlog; a bigger one is dropped.
const loopOutKeep = 64 << 10

func (lc *loopConn) Read(p []byte) (int, error) {
	if lc.hs != nil {
		return lc.hs.Read(p)
	}
	if lc.drained {
		return 0, errWouldBlock
	}
	for {
		n, err := unix.Read(lc.fd, p)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			lc.drained = true
			return 0, errWouldBlock
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		lc.drained = n < len(p)
		return n, nil
	}
}

func (lc *loopConn) Write(p []byte) (int, error) {
	if lc.hs != nil {
		return lc.hs.Write(p)
	}
	if lc.werr != nil {
		return 0, lc.werr
	}
	n := 0
	if lc.pending() == 0 {
		var err error
		if n, err = writeSome(lc.fd, p); err != nil {
			lc.werr = err
			return n, err
		}
	}
	if n < len(p) && lc.off > 0 {
		// Rare (a KeyUpdate's answer or a close_notify behind unsent
		// ciphertext; sendTLS encrypts nothing new until out is empty):
		// move the unsent rest to the front once before appending.
		rest := copy(lc.out, lc.out[lc.off:])
		lc.out, lc.off = lc.out[:rest], 0
	}
	lc.out = append(lc.out, p[n:]...)
	return len(p), nil
}

// pending returns how much ciphertext the socket has not taken yet.
func (lc *loopConn) pending() int { return len(lc.out) - lc.off }

// flushOut writes the ciphertext kept in out; it reports whether any was
// written, and the socket's write error. lc may be nil (a client in its
// handshake).
func (lc *loopConn) flushOut() (progress bool, err error) {
	if lc == nil {
		return false, nil // the handshake is not through: nothing was sent
	}
	if lc.pending() == 0 || lc.werr != nil {
		return false, lc.werr
	}
	n, err := writeSome(lc.fd, lc.out[lc.off:])
	lc.off += n
	if err != nil {
		lc.werr = err
		return n > 0, err
	}
	if lc.off == len(lc.out) {
		lc.out, lc.off = lc.out[:0], 0
		if cap(lc.out) > loopOutKeep {
			lc.out = nil
		}
	}
	return n > 0, nil
}

// writeSome writes b to the non-blocking socket fd until it is written or
// the socket is full; err is a write error other than EAGAIN.
func writeSome(fd int, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := unix.Write(fd, b[n:])
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return n, nil
		case err != nil:
			return n, err
		}
		n += m
	}
	return n, nil
}

func (lc *loopConn) Close() error {
	if lc.hs != nil {
		return lc.hs.Close()
	}
	return nil // the loop closes its socket itself (drop)
}

func (lc *loopConn) LocalAddr() net.Addr  { return lc.local }
func (lc *loopConn) RemoteAddr() net.Addr { return lc.remote }

// The deadlines bound the handshake; afterwards nothing waits, and
// crypto/tls's own deadlines (closeNotify sets one) have nothing to bound.
func (lc *loopConn) SetDeadline(t time.Time) error {
	if lc.hs != nil {
		return lc.hs.SetDeadline(t)
	}
	return nil
}

func (lc *loopConn) SetReadDeadline(t time.Time) error {
	if lc.hs != nil {
		return lc.hs.SetReadDeadline(t)
	}
	return nil
}

func (lc *loopConn) SetWriteDeadline(t time.Time) error {
	if lc.hs != nil {
		return lc.hs.SetWriteDeadline(t)
	}
	return nil
}

// tlsConn is a TLS client's session, on its conn; tc and lc are nil until
// the handshake finished (takeHandshakes).
type tlsConn struct {
	tc *tls.Conn
	lc *loopConn
	// unread: the last read stopped before the tls.Conn said it would
	// block, so it may hold decrypted or complete records that no epoll
	// event will announce (the socket is empty); the client is on the
	// listener's unread list.
	unread bool
}

// recv reads c's request bytes into p, as read(2) would: a TLS client's
// are decrypted, and EAGAIN means nothing more for now.
func (s *Server) recv(c *conn, p []byte) (int, error) {
	if c.tls == nil {
		return unix.Read(c.fd, p)
	}
	if c.tls.tc == nil {
		return 0, unix.EAGAIN // still in its handshake
	}
	n, err := c.tls.tc.Read(p)
	if n > 0 {
		// A would-block or an error after the bytes (Read peeks for a
		// close_notify behind them) is seen on the next call: crypto/tls
		// keeps every error but would-block.
		return n, nil
	}
	if err == nil || err == errWouldBlock {
		return 0, unix.EAGAIN
	}
	if err == io.EOF {
		return 0, nil // close_notify, or the end of the stream at a record's end
	}
	return 0, err
}

// sendTLS encrypts b for a TLS client, as write does for a plain one: done
// when all of b was taken. Ciphertext the socket did not take waits in the
// loopConn, and nothing more is encrypted until it is written, so a client
// that does not read holds its replies back as plaintext, where the
// output limits see them.
func (s *Server) sendTLS(c *conn, b []byte) (n int, done bool, err error) {
	t := c.tls
	if t.tc == nil {
		return 0, false, nil
	}
	if _, err := t.lc.flushOut(); err != nil {
		return 0, false, err
	}
	if t.lc.pending() > 0 {
		return 0, false, nil
	}
	if len(b) == 0 {
		return 0, true, nil
	}
	n, err = t.tc.Write(b)
	s.stats.BytesOut += int64(n)
	return n, err == nil, err
}

// unsent returns the ciphertext c's socket has not taken yet.
func (c *conn) unsent() int {
	if c.tls == nil || c.tls.lc == nil {
		return 0
	}
	return c.tls.lc.pending()
}

// backlog returns the reply bytes c's socket has not taken: queued
// plaintext and, for a TLS client, ciphertext encrypted but not yet
// written. The output limits (MaxOutput, the stall timeout) count both,
// so a TLS client that sends one large GET and never reads is cut off
// as a plain one is.
func (c *conn) backlog() int { return c.pendBytes + c.unsent() }

// sendNow writes b to c at once, best effort, ahead of a disconnection
// (a refusal, an eviction).
func (s *Server) sendNow(c *conn, b []byte) {
	if c.tls == nil {
		unix.Write(c.fd, b)
		return
	}
	s.sendTLS(c, b)
}

// closeTLS ends a TLS client's session before its socket closes: a
// close_notify, best effort, written now or never; a client still in its
// handshake has its socket shut down, so the handshake's goroutine ends.
func (s *Server) closeTLS(c *conn) {
	if c.tls.tc == nil {
		unix.Shutdown(c.fd, unix.SHUT_RDWR)
		return
	}
	c.tls.tc.Close() // close_notify through lc; lc.Close leaves the socket to drop
	c.tls.lc.flushOut()
}

// closeWriteTLS sends a TLS client's close_notify ahead of shutting down
// its write side (lingerOn).
func (s *Server) closeWriteTLS(c *conn) {
	if c.tls.tc == nil {
		return
	}
	c.tls.tc.CloseWrite()
	c.tls.lc.flushOut()
}

// readUnread reads the TLS clients whose last read stopped with input
// possibly left in their tls.Conn (a limit, the read budget) and that may
// read again now; the others stay listed until the event that lets them
// read (their backlog served, their replies drained: each makes the loop
// Poll again) or their pause ends (scan reads them). It returns how many
// were read.
func (s *Server) readUnread(now int64) int {
	list := s.unread
	s.unread = s.unreadSpare[:0]
	n := 0
	for _, c := range list {
		c.tls.unread = false
		if c.fd < 0 || s.conns[c.fd] != c || c.closing || c.linger != 0 {
			continue // gone, or reading no more
		}
		if c.queued || s.watched(c)&unix.EPOLLIN == 0 {
			s.listUnread(c) // its turn comes when its backlog or replies are through
			continue
		}
		n++
		s.read(c, now)
	}
	clear(list)
	s.unreadSpare = list[:0]
	return n
}

// listUnread puts a TLS client on the unread list (once).
func (s *Server) listUnread(c *conn) {
	if c.tls.unread {
		return
	}
	c.tls.unread = true
	s.unread = append(s.unread, c)
}
