package uds

// This file enforces the limits on clients over time and memory: the
// budget charges (see Budget), eviction, and the periodic scan for idle,
// stalled and paused clients.

import (
	"github.com/goblin-kv/goblin/command"
)

// reserve charges c for extra bytes it is about to allocate; it reports
// false when that disconnected c.
func (s *Server) reserve(c *conn, extra int) bool {
	s.stats.Buffered += int64(extra)
	return s.budget.charge(c, c.mem+extra)
}

// account charges c's buffers and session state to the budget; it reports
// false when that disconnected c.
func (s *Server) account(c *conn) bool {
	mem := c.pendCap + cap(c.spare)
	if c.tls != nil && c.tls.lc != nil {
		mem += cap(c.tls.lc.out)
	}
	if !c.inShared {
		mem += cap(c.in)
	}
	if c.held != nil {
		mem += c.held.Buffered()
	}
	if mem == c.mem {
		return true
	}
	s.stats.Buffered += int64(mem - c.mem)
	return s.budget.charge(c, mem)
}

// evict disconnects c because the budget's total passed its limit.
func (s *Server) evict(c *conn, b *Budget) {
	s.stats.Evicted++
	s.log.Warn("client disconnected: client buffers passed their total limit", "transport", s.name,
		"client", c.name(), "client_bytes", c.mem, "total", b.used, "limit", b.Limit)
	s.sendNow(c, refusal(c.proto, command.Err, "ERR client memory limit reached: this client's buffers were the largest (maxmemory-clients)"))
	s.drop(c)
}

// scan disconnects idle clients (IdleTimeout) and clients whose queued
// replies have stayed at MaxOutput with nothing written for stallTimeout,
// and releases the buffers of clients quiet for idleRelease.
func (s *Server) scan(now int64) {
	idle := int64(s.cfg.IdleTimeout)
	for _, c := range s.conns {
		switch {
		case c == nil:
		case c.linger != 0:
			if now > c.linger {
				s.drop(c)
			}
		case idle > 0 && now-c.lastSeen > idle && now-c.lastWrite > idle && (c.exempt == nil || !c.exempt.IdleExempt()):
			s.stats.IdleTimeouts++
			s.log.Debug("client disconnected: idle timeout", "transport", s.name, "client", c.name())
			s.drop(c)
		case c.backlog() >= s.cfg.MaxOutput && now-c.lastWrite > int64(s.cfg.StallTimeout):
			s.slowConsumer(c)
		case c.paused != 0 && now >= c.paused:
			c.paused = 0 // its wait is over: serve what it sent meanwhile
			s.held--
			s.serve(c)
			if s.flush(c) && c.tls != nil && c.tls.unread {
				s.read(c, now) // and what its tls.Conn holds: no epoll event announces that
			}
		case c.mem > 0 && now-c.lastSeen > int64(idleRelease) && now-c.lastWrite > int64(idleRelease):
			if len(c.in) == 0 {
				c.in = nil
			}
			c.spare = nil
			s.account(c)
		}
	}
}

func (s *Server) slowConsumer(c *conn) {
	s.stats.SlowConsumers++
	s.log.Warn("client disconnected: it does not read its replies", "transport", s.name, "client", c.name(), "queued", c.pendBytes, "limit", s.cfg.MaxOutput)
	s.drop(c)
}
