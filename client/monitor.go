package client

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/transport"
)

// Monitor is a MONITOR stream: a connection of its own on which the
// server reports every command it runs, one line each, until Close or
// until the connection ends. Next is for one goroutine at a time; Close
// may be called from another, and ends a waiting Next.
type Monitor struct {
	c      *Client
	closed atomic.Bool
}

// Monitor opens a connection to the client's server with the client's
// options (and its current database and name), sends MONITOR and returns
// the stream once the server has accepted it. The Client itself stays
// free for other calls. MONITOR needs a RESP target.
func (c *Client) Monitor(ctx context.Context) (*Monitor, error) {
	c.mu.Lock()
	o, t := c.opts, c.t
	o.DB, o.ClientName = c.state.db, c.state.name
	o.Protocol = 2
	if c.state.resp3 {
		o.Protocol = 3
	}
	c.mu.Unlock()
	if t.Proto != proto.RESP {
		return nil, fmt.Errorf("client: MONITOR needs a RESP target (proto=resp); %s speaks %v", t, t.Proto)
	}
	mc, err := o.DialTarget(ctx, t)
	if err != nil {
		return nil, err
	}
	mc.mu.Lock()
	defer mc.mu.Unlock()
	mc.args = append(mc.args[:0], []byte("MONITOR"))
	r, err := mc.exec(ctx)
	if err == nil {
		err = r.okOrErr()
	}
	if err != nil {
		mc.closeLocked()
		return nil, err
	}
	return &Monitor{c: mc}, nil
}

// ErrMonitorClosed is Next's error after Close, or after the connection
// ended (the error that ended it was returned once before).
var ErrMonitorClosed = errors.New("client: monitor closed")

// Next waits for the next command the server reports and returns its
// line, e.g. `1700000000.123456 [0 127.0.0.1:51234] "SET" "k" "v"`. It
// returns ctx's error when ctx ends first (the stream stays usable), and
// a *ConnError when the connection ends; after that, ErrMonitorClosed.
func (m *Monitor) Next(ctx context.Context) (string, error) {
	c := m.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.conn == nil {
		return "", ErrMonitorClosed
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if c.roff == len(c.rbuf) {
		c.rbuf, c.roff = c.rbuf[:0], 0
	}
	if err := c.readReplyKeep(ctx, &c.rep, &m.closed); err != nil {
		return "", err
	}
	switch c.rep.kind {
	case KindStatus, KindBulk:
		return string(c.rep.str), nil
	}
	return "", c.rep.err("status")
}

// Close ends the stream and closes its connection; a Next waiting in
// another goroutine returns ErrMonitorClosed.
func (m *Monitor) Close() error {
	m.closed.Store(true)
	return m.c.Close()
}

// closeLocked is Close for a caller that holds c.mu.
func (c *Client) closeLocked() {
	c.closed = true
	c.drop()
}

// monitorPoll is how often a waiting Next looks at its context: reads
// wait at most this long, so a cancel (Ctrl-C in goblin-client) is seen
// within it.
const monitorPoll = 100 * time.Millisecond

// readReplyKeep is readReply that, when ctx ends first, keeps the
// connection (nothing was lost: a partial reply stays buffered) and
// returns ctx's error; when closed is set it returns ErrMonitorClosed.
func (c *Client) readReplyKeep(ctx context.Context, r *result, closed *atomic.Bool) error {
	for {
		if c.roff < len(c.rbuf) {
			n, err := c.codec.parseReply(c.rbuf[c.roff:], r)
			if err != nil {
				c.drop()
				return &ConnError{Target: c.tname, Op: "read", Err: err}
			}
			if n > 0 {
				c.roff += n
				if r.kind == KindPush {
					c.push(r)
					continue
				}
				return nil
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if closed.Load() {
			return ErrMonitorClosed
		}
		dl := time.Now().Add(monitorPoll)
		if d, ok := ctx.Deadline(); ok && d.Before(dl) {
			dl = d
		}
		if err := c.conn.SetDeadline(dl); err != nil {
			c.drop()
			return &ConnError{Target: c.tname, Op: "set deadline", Err: err}
		}
		c.dl = dl
		var err error
		c.rbuf, err = c.conn.ReadAppend(c.rbuf)
		if errors.Is(err, transport.ErrTimeout) {
			continue // look at ctx again
		}
		if err != nil {
			c.drop()
			return &ConnError{Target: c.tname, Op: "read", Err: err}
		}
	}
}
