package uds

// This file writes a client's replies: one write per serve from the
// listener's shared buffer, the leftovers queued as blocks of the client's
// own, and what epoll watches for the client while they drain.

import (
	"golang.org/x/sys/unix"
)

// flush writes queued replies and updates what epoll watches for c. It
// returns false if the client was dropped: on a write error, on passing
// the budget, or once a closing client's replies are written.
func (s *Server) flush(c *conn) bool {
	if c.fd < 0 || c.linger != 0 {
		return false // gone, or everything written and the write side shut
	}
	progress, failed := false, false
	if c.tls != nil {
		// Ciphertext the socket did not take goes first (sendTLS holds
		// the plaintext back until it has).
		var err error
		progress, err = c.tls.lc.flushOut()
		failed = err != nil
	}
	for len(c.pend) > 0 && !failed {
		n, done, err := s.write(c, c.pend[0][c.wpos:])
		progress = progress || n > 0
		c.wpos += n
		c.pendBytes -= n
		if err != nil {
			failed = true
		} else if !done {
			break
		} else {
			c.pendCap -= cap(c.pend[0])
			if c.pushed && c.spare == nil && cap(c.pend[0]) <= pushBlock {
				c.spare = c.pend[0][:0] // the next push's block
			}
			// Shift rather than reslice, so the queue's array is reused
			// by the next push instead of growing a new one.
			n := copy(c.pend, c.pend[1:])
			c.pend[n] = nil
			c.pend = c.pend[:n]
			c.wpos = 0
		}
	}
	if len(c.pend) == 0 && cap(c.pend) > 8 {
		c.pend = nil // drop a large emptied queue's array
	}
	written := 0
	c.peak = max(c.peak, len(c.fresh))
	if len(c.fresh) > 0 && len(c.pend) == 0 && !failed {
		n, _, err := s.write(c, c.fresh)
		progress = progress || n > 0
		written = n
		failed = err != nil
	}
	s.keepFresh(c, written)
	if failed {
		s.drop(c)
		return false
	}
	if c.pendBytes == 0 && c.closing && c.unsent() == 0 {
		if c.discard {
			c.discard = false
			s.lingerOn(c)
			return false
		}
		s.drop(c)
		return false
	}
	if progress || c.backlog() == 0 || c.events&unix.EPOLLOUT == 0 {
		// Progress, nothing queued, or replies queued just now: the stall
		// clock (see scan) starts over.
		c.lastWrite = s.now
	}
	if !s.account(c) {
		return false
	}
	if c.waiting() && !c.queued && c.backlog() < s.cfg.MaxOutput {
		// Requests left at a limit, and room for their replies: no
		// socket event will come for bytes already read, so serve them
		// on the next Poll. (At MaxOutput, EPOLLOUT resumes them.)
		s.stats.Deferred++
		c.queued = true
		s.backlog = append(s.backlog, c)
	}
	s.watch(c)
	return true
}

// write writes b to c's socket until it is all written (done) or the socket
// is full; err is a write error other than EAGAIN.
func (s *Server) write(c *conn, b []byte) (n int, done bool, err error) {
	if c.tls != nil {
		return s.sendTLS(c, b)
	}
	for n < len(b) {
		m, err := unix.Write(c.fd, b[n:])
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			if err == unix.EAGAIN {
				return n, false, nil
			}
			return n, false, err
		}
		n += m
		s.stats.BytesOut += int64(m)
	}
	return n, true, nil
}

// keepFresh ends a serve-and-flush whose write took the first written
// bytes of c.fresh: the replies the socket did not take become a block of
// c's own, copied out of the shared buffer, or, when a large reply made
// the shared buffer grow (append moved it), the grown array itself, so
// nothing large is copied twice. The shared buffer is left as it was, or
// takes the grown array when it was all written and is not too big.
func (s *Server) keepFresh(c *conn, written int) {
	f := c.fresh
	if f == nil {
		return
	}
	c.fresh = nil
	grown := cap(f) != cap(s.wbuf) || (cap(f) > 0 && &f[:1][0] != &s.wbuf[:1][0])
	rest := f[written:]
	switch {
	case len(rest) == 0:
		if grown && cap(f) <= sharedWriteKeep {
			s.wbuf = f[:0] // the grown buffer becomes the shared one
		}
		return
	case grown:
		// Keep the whole array (and charge all of it); only an empty
		// queue gets fresh replies written, so written is where the
		// block's next byte is.
		if len(c.pend) == 0 {
			c.wpos = written
		}
		c.pend = append(c.pend, f)
		c.pendBytes += len(rest)
		c.pendCap += cap(f)
	default:
		c.pend = append(c.pend, append(make([]byte, 0, len(rest)), rest...))
		c.pendBytes += len(rest)
		c.pendCap += len(rest)
	}
}

// watched returns the events epoll should report for c: input while it is
// served (not while it is closing or its replies are at MaxOutput, which
// holds a pipelining client back until it reads), output while replies are
// queued.
func (s *Server) watched(c *conn) uint32 {
	pending := c.backlog()
	var ev uint32
	if c.linger != 0 {
		return unix.EPOLLIN | unix.EPOLLRDHUP
	}
	if !c.closing && pending < s.cfg.MaxOutput && c.paused == 0 {
		ev = unix.EPOLLIN | unix.EPOLLRDHUP
	}
	if pending > 0 {
		ev |= unix.EPOLLOUT
	}
	return ev
}

// watch tells epoll what to report for c, when that changed.
func (s *Server) watch(c *conn) {
	ev := s.watched(c)
	if ev == c.events {
		return
	}
	c.events = ev
	unix.EpollCtl(s.epfd, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: ev, Fd: int32(c.fd)})
}
