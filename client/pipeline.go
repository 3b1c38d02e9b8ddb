package client

import (
	"context"
	"fmt"

	"github.com/goblin-kv/goblin/transport"
)

// Pipeline batches commands: Exec sends them and reads every reply,
// saving a round trip per command, for a batch of any length on every
// transport. A Pipeline is not safe for concurrent use; the Client it came
// from is, and other callers wait while a pipeline executes.
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
//
// How much is in flight depends on the transport, so that neither side
// ever waits for the other while that one waits too:
//   - a message transport that can tell when a request would have to wait
//     (transport.TryWriter: the ring) gets requests while it has room, and
//     whenever it has none Exec reads a reply instead: a reply is then
//     surely on its way, and reading it makes the room the server needs.
//     A request too long ever to fit at once is written once every reply
//     is in;
//   - other message transports (Aeron) and the socket transports get at
//     most pipelineChunk bytes or pipelineMaxPending requests before Exec
//     reads all their replies: less than the kernel's socket buffers and
//     an Aeron publication's window hold, so the requests never wait for
//     a server that waits for Exec to read. On sockets the chunk goes out
//     in one write.
func (p *Pipeline) Exec(ctx context.Context) ([]Value, error) {
	cmds := p.cmds
	p.cmds = nil
	if len(cmds) == 0 {
		return nil, nil
	}
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	return p.c.runBatch(ctx, cmds)
}

// runBatch is Exec's work, for a caller that holds c.mu (Exec, and the
// transactions of tx.go).
func (c *Client) runBatch(ctx context.Context, cmds [][]any) ([]Value, error) {
	if err := c.prepare(ctx); err != nil {
		return nil, err
	}
	c.compact()
	c.wbuf = c.wbuf[:0]
	e := pipelineExec{c: c, out: make([]Value, 0, len(cmds))}
	e.tw, _ = c.conn.(transport.TryWriter)
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
	// A mode command anywhere refuses the whole batch before anything
	// is sent, so the connection stays usable.
	for i, cmd := range cmds {
		if err := modeCommandOf(cmd); err != nil {
			c.wbuf = c.wbuf[:0]
			return nil, fmt.Errorf("client: pipeline command %d: %w", i, err)
		}
	}
	if err := c.multiLost(); err != nil {
		return nil, err
	}
	var marks []batchMark // SELECT, CLIENT SETNAME, HELLO, MULTI, EXEC, DISCARD: followed once answered
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
		ch, ok := changeOf(c.args)
		if w := multiWordOf(c.args); ok || w != wordOther {
			marks = append(marks, batchMark{i, w, ch, ok})
		}
		c.nextID++
		var err error
		start := len(c.wbuf)
		if c.wbuf, err = c.codec.appendRequest(c.wbuf, c.args, c.nextID); err != nil {
			c.wbuf = c.wbuf[:start]
			return fail(i, err)
		}
		if c.tr.message {
			// Message transports carry one request per message.
			msg := c.wbuf[start:]
			c.wbuf = c.wbuf[:start]
			err = e.send(msg)
		} else {
			e.pending++
			if len(c.wbuf) >= pipelineChunk || e.pending >= pipelineMaxPending {
				err = e.flush()
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if err := e.flush(); err != nil {
		return nil, err
	}
	// Every reply counts while a MULTI is open (each QUEUED one takes a
	// place in EXEC's reply); otherwise only the marked ones matter.
	for i := range e.out {
		if len(marks) > 0 && marks[0].i == i {
			m := marks[0]
			marks = marks[1:]
			c.track(m.w, m.ch, m.changes, &e.out[i])
		} else if c.multi.conn != nil {
			c.track(wordOther, stateChange{}, false, &e.out[i])
		}
	}
	return e.out, nil
}

// batchMark is what a pipeline's command i does to the connection's state.
type batchMark struct {
	i       int
	w       multiWord
	ch      stateChange
	changes bool
}

// indexedChange is the state change of a pipeline's command i.
type indexedChange struct {
	i  int
	ch stateChange
}

// pipelineExec is the state of one Exec.
type pipelineExec struct {
	c        *Client
	tw       transport.TryWriter // the connection's, if it has one
	out      []Value
	pending  int // requests sent (or encoded, on sockets) whose replies are not read
	inflight int // their bytes, on message transports without TryWrite
}

// send writes one request on a message transport, reading replies first
// as the transport needs (see Exec).
func (e *pipelineExec) send(msg []byte) error {
	c := e.c
	if e.tw != nil {
		for e.pending > 0 {
			ok, err := e.tw.TryWrite(msg)
			if err != nil {
				c.drop()
				return &ConnError{Target: c.tname, Op: "write", Err: err}
			}
			if ok {
				e.pending++
				return nil
			}
			if err := e.readOne(); err != nil {
				return err
			}
		}
	} else if e.pending > 0 && (e.inflight+len(msg) > pipelineChunk || e.pending >= pipelineMaxPending) {
		if err := e.flush(); err != nil {
			return err
		}
	}
	if err := c.conn.Write(msg); err != nil {
		c.drop()
		return &ConnError{Target: c.tname, Op: "write", Err: err}
	}
	e.pending++
	e.inflight += len(msg)
	return nil
}

// readOne reads the oldest outstanding reply.
func (e *pipelineExec) readOne() error {
	c := e.c
	if err := c.readReply(&c.rep); err != nil {
		return err
	}
	e.out = append(e.out, c.rep.value())
	e.pending--
	if c.roff == len(c.rbuf) {
		c.rbuf, c.roff = c.rbuf[:0], 0 // value copied the reply out
	}
	return nil
}

// flush writes what is encoded and not yet written (sockets), then reads
// every outstanding reply.
func (e *pipelineExec) flush() error {
	c := e.c
	if len(c.wbuf) > 0 {
		if err := c.conn.Write(c.wbuf); err != nil {
			c.drop()
			return &ConnError{Target: c.tname, Op: "write", Err: err}
		}
		c.wbuf = c.wbuf[:0]
	}
	for e.pending > 0 {
		if err := e.readOne(); err != nil {
			return err
		}
	}
	e.inflight = 0
	c.compact()
	return nil
}

// Pipeline batching limits for transports without TryWrite: at most this
// many request bytes or requests are in flight before Exec reads their
// replies.
const (
	pipelineChunk      = 64 << 10
	pipelineMaxPending = 1024
)
