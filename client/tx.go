package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/transport"
)

// ErrTxFailed is a transaction's Exec when a key watched by Watch changed
// (or expired, or was deleted) before EXEC: nothing was executed, and the
// caller may read again and retry.
var ErrTxFailed = errors.New("client: transaction not executed: a watched key changed")

// TxPipeline queues commands to run as one transaction, MULTI ... EXEC:
// Exec sends them in one batch and the server runs them one after the
// other with no other client's command in between. Make one with
// Client.TxPipeline, or Tx.TxPipeline inside Watch.
type TxPipeline struct {
	c    *Client
	tx   *Tx // set inside Watch
	cmds [][]any
}

// TxPipeline starts an empty transaction.
func (c *Client) TxPipeline() *TxPipeline { return &TxPipeline{c: c} }

// Do queues a command (arguments as for Client.Do).
func (p *TxPipeline) Do(args ...any) *TxPipeline {
	p.cmds = append(p.cmds, args)
	return p
}

// Len is the number of queued commands.
func (p *TxPipeline) Len() int { return len(p.cmds) }

// Exec runs the queued commands as one transaction and returns their
// replies in order (an error reply of one command, such as INCR of a
// non-number, is its KindError Value and does not undo the others, as in
// Redis). A command the server refuses to queue (unknown, wrong number of
// arguments) discards the whole transaction: Exec returns that refusal as
// a *ServerError. Inside Watch, a changed watched key makes it
// ErrTxFailed. Exec empties the pipeline.
func (p *TxPipeline) Exec(ctx context.Context) ([]Value, error) {
	cmds := p.cmds
	p.cmds = nil
	c := p.c
	if p.tx == nil {
		c.mu.Lock()
		defer c.mu.Unlock()
	} else if err := p.tx.usable(); err != nil {
		return nil, err
	}
	batch := make([][]any, 0, len(cmds)+2)
	batch = append(batch, []any{"MULTI"})
	batch = append(batch, cmds...)
	batch = append(batch, []any{"EXEC"})
	vals, err := c.runBatch(ctx, batch)
	if p.tx != nil {
		p.tx.done = true // EXEC (or the failure) ended the watch
	}
	if err != nil {
		return nil, err
	}
	if vals[0].Kind == KindError {
		return nil, vals[0].Err // MULTI refused (inside another MULTI, say)
	}
	last := vals[len(vals)-1]
	switch last.Kind {
	case KindArray:
		// runBatch applied each SELECT, CLIENT SETNAME or HELLO whose
		// reply in EXEC's says it took effect: later redials keep it.
		return last.Array, nil
	case KindNil:
		return nil, ErrTxFailed
	case KindError:
		for _, v := range vals[1 : len(vals)-1] {
			if v.Kind == KindError {
				return nil, v.Err // the refusal that made EXEC abort
			}
		}
		return nil, last.Err
	}
	return nil, fmt.Errorf("%w: EXEC answered %v", ErrUnexpectedReply, last.Kind)
}

// Watch runs fn with keys watched on the client's connection: a
// transaction fn runs with tx.TxPipeline() is executed only if none of
// the keys changed since the WATCH, else its Exec returns ErrTxFailed.
// fn reads with tx's calls, which use the same connection. Other callers
// of the Client wait until fn returns, since the watch belongs to the
// connection; the keys are unwatched when fn returns without running a
// transaction. A connection lost while watching fails the transaction
// rather than run it unwatched.
//
//	err := c.Watch(ctx, func(tx *client.Tx) error {
//		n, err := tx.Get(ctx, "counter")
//		if err != nil && !errors.Is(err, client.ErrNil) {
//			return err
//		}
//		_, err = tx.TxPipeline().Do("SET", "counter", next(n)).Exec(ctx)
//		return err // ErrTxFailed: someone else changed it; retry
//	}, "counter")
func (c *Client) Watch(ctx context.Context, fn func(tx *Tx) error, keys ...string) error {
	if len(keys) == 0 {
		return fmt.Errorf("client: Watch needs at least one key")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.req.Reset()
	c.req.Op = command.OpWatch
	c.num = c.num[:0]
	c.keysRequest(&c.req, keys)
	if err := c.okReply(ctx); err != nil {
		return err
	}
	tx := &Tx{c: c, conn: c.conn}
	defer func() {
		if !tx.done && tx.usable() == nil {
			c.req.Reset()
			c.req.Op = command.OpUnwatch
			_ = c.okReply(context.WithoutCancel(ctx))
		}
		tx.c = nil
	}()
	return fn(tx)
}

// Tx is the connection a Watch holds, for fn's reads and its
// transaction. It is valid only while fn runs.
type Tx struct {
	c    *Client
	conn transport.Conn // the connection the keys are watched on
	done bool           // a transaction ran: the watch is over
}

// usable reports why tx can no longer be used, if it cannot.
func (tx *Tx) usable() error {
	switch {
	case tx.c == nil:
		return fmt.Errorf("client: Tx used after its Watch returned")
	case tx.done:
		return fmt.Errorf("client: the watch already ended with a transaction")
	case tx.c.conn != tx.conn || tx.conn == nil:
		return fmt.Errorf("%w: the connection was lost while watching", ErrTxFailed)
	}
	return nil
}

// Do runs one command at once on the watched connection (arguments as
// for Client.Do).
func (tx *Tx) Do(ctx context.Context, args ...any) (Value, error) {
	if err := tx.usable(); err != nil {
		return Value{}, err
	}
	if len(args) == 0 {
		return Value{}, fmt.Errorf("client: Do needs a command name")
	}
	return tx.c.doLocked(ctx, args)
}

// Get returns a copy of key's value on the watched connection, or ErrNil.
func (tx *Tx) Get(ctx context.Context, key string) ([]byte, error) {
	if err := tx.usable(); err != nil {
		return nil, err
	}
	c := tx.c
	c.req.Reset()
	c.req.Op, c.req.Key = command.OpGet, bytesOf(key)
	return c.bulkCopy(ctx)
}

// TxPipeline starts the transaction the watch guards.
func (tx *Tx) TxPipeline() *TxPipeline { return &TxPipeline{c: tx.c, tx: tx} }
