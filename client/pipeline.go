package client

import (
	"context"
	"fmt"
)

// Pipeline batches commands: Exec sends them all in one write and then
// reads every reply, saving a round trip per command. A Pipeline is not
// safe for concurrent use; the Client it came from is, and other callers
// wait while a pipeline executes.
type Pipeline struct {
	c    *Client
	cmds [][]any
}

// Pipeline starts an empty batch.
func (c *Client) Pipeline() *Pipeline { return &Pipeline{c: c} }

// Do queues a command (arguments as for Client.Do).
func (p *Pipeline) Do(args ...any) *Pipeline {
	p.cmds = append(p.cmds, args)
	return p
}

// Len is the number of queued commands.
func (p *Pipeline) Len() int { return len(p.cmds) }

// Exec sends the queued commands and returns one Value per command, in
// order. Error replies appear as KindError values and do not stop the
// batch; the returned error reports only connection, protocol or argument
// failures. Exec empties the pipeline.
func (p *Pipeline) Exec(ctx context.Context) ([]Value, error) {
	cmds := p.cmds
	p.cmds = nil
	if len(cmds) == 0 {
		return nil, nil
	}
	c := p.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.prepare(ctx); err != nil {
		return nil, err
	}
	c.compact()
	c.wbuf = c.wbuf[:0]
	out := make([]Value, 0, len(cmds))
	pending := 0
	// flush writes the encoded requests and reads their replies. Batches
	// stay under pipelineChunk bytes so neither side's buffers fill while
	// the other is still writing.
	flush := func() error {
		if len(c.wbuf) > 0 {
			if err := c.conn.Write(c.wbuf); err != nil {
				c.drop()
				return &ConnError{Target: c.tname, Op: "write", Err: err}
			}
			c.wbuf = c.wbuf[:0]
		}
		for ; pending > 0; pending-- {
			if err := c.readReply(&c.rep); err != nil {
				return err
			}
			out = append(out, c.rep.value())
		}
		c.compact()
		return nil
	}
	// A bad command found after others were encoded (or sent) would leave
	// the codec's correlation state and the stream out of step, so such a
	// failure drops the connection; the next call dials afresh.
	fail := func(i int, err error) ([]Value, error) {
		if i > 0 {
			c.drop()
		}
		c.wbuf = c.wbuf[:0]
		return nil, fmt.Errorf("client: pipeline command %d: %w", i, err)
	}
	for i, cmd := range cmds {
		if len(cmd) == 0 {
			return fail(i, fmt.Errorf("empty command"))
		}
		c.args, c.num = c.args[:0], c.num[:0]
		for _, a := range cmd {
			b, err := c.formatArg(a)
			if err != nil {
				return fail(i, err)
			}
			c.args = append(c.args, b)
		}
		c.nextID++
		var err error
		start := len(c.wbuf)
		if c.wbuf, err = c.codec.appendRequest(c.wbuf, c.args, c.nextID); err != nil {
			c.wbuf = c.wbuf[:start]
			return fail(i, err)
		}
		pending++
		if c.tr.Message {
			// Message transports carry one request per message.
			if err := c.conn.Write(c.wbuf[start:]); err != nil {
				c.drop()
				return nil, &ConnError{Target: c.tname, Op: "write", Err: err}
			}
			c.wbuf = c.wbuf[:start]
		}
		if len(c.wbuf) >= pipelineChunk || pending >= pipelineMaxPending {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

// Pipeline batching limits: at most this many request bytes or requests
// are in flight before Exec reads their replies.
const (
	pipelineChunk      = 64 << 10
	pipelineMaxPending = 1024
)
