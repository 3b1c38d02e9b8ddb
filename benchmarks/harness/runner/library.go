package runner

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/goblin-kv/goblin/benchmarks/harness"
	"github.com/goblin-kv/goblin/client"

	// The library measures every transport: link the ring's and Aeron's
	// dialers (a socket-only program would not).
	_ "github.com/goblin-kv/goblin/transport/aeron"
	_ "github.com/goblin-kv/goblin/transport/ring"
)

// The goblin client library is the default measuring client: what a Go user
// of goblin gets, over every transport and both protocols, and the same
// client for goblin-server and for redis-server.
func init() { libraryDial = dialLibrary }

// libProber drives one client.Client.
type libProber struct {
	c        *client.Client
	ctx      context.Context
	cancel   context.CancelFunc
	keys     []string
	value    []byte
	next     int
	buf      []byte
	depth    int
	describe string
}

func dialLibrary(ctx context.Context, cfg *harness.Config, tgt, wait string) (harness.Prober, error) {
	// Connecting is bounded by the case's timeout, not the library's
	// default of seconds: on a loaded machine two backing-off media
	// drivers can take longer than that to set up a response channel.
	opts := client.Options{DialTimeout: cfg.CaseTimeout}
	if wait == "spin" {
		// Spin on non-blocking reads for as long as a reply can take in a
		// measured run rather than parking in the network poller.
		opts.BusyPoll = time.Second
	}
	c, err := opts.Dial(ctx, tgt)
	if err != nil {
		return nil, err
	}
	w := newWorkload(cfg)
	desc := fmt.Sprintf("goblin client library (package client), wait=%s", wait)
	p := &libProber{c: c, ctx: context.Background(), value: w.value, buf: make([]byte, 0, len(w.value)*cfg.Depth+64), depth: cfg.Depth,
		describe: desc}
	for _, k := range w.keys {
		p.keys = append(p.keys, string(k))
	}
	// Preload every key so GET finds a value.
	for range p.keys {
		if err := p.Do(harness.Set); err != nil {
			c.Close()
			return nil, fmt.Errorf("preload: %w", err)
		}
	}
	return p, nil
}

// Do runs one synchronous round trip (a pipeline of depth requests when
// depth > 1). At depth one it does not allocate.
func (p *libProber) Do(op harness.Op) error {
	key := p.keys[p.next]
	if p.next++; p.next == len(p.keys) {
		p.next = 0
	}
	if p.depth > 1 {
		return p.pipeline(op, key)
	}
	switch op {
	case harness.Ping:
		return p.c.Ping(p.ctx)
	case harness.Set:
		return p.c.Set(p.ctx, key, p.value, client.SetOptions{})
	default:
		v, err := p.c.GetAppend(p.ctx, p.buf[:0], key)
		if err != nil {
			return err
		}
		if !bytes.Equal(v, p.value) {
			return fmt.Errorf("%w: GET %s returned %q", harness.ErrBadReply, key, v)
		}
		return nil
	}
}

// pipeline sends depth requests in one write and reads every reply.
func (p *libProber) pipeline(op harness.Op, key string) error {
	pl := p.c.Pipeline()
	for i := 0; i < p.depth; i++ {
		switch op {
		case harness.Ping:
			pl.Do("PING")
		case harness.Set:
			pl.Do("SET", key, p.value)
		default:
			pl.Do("GET", key)
		}
	}
	vals, err := pl.Exec(p.ctx)
	if err != nil {
		return err
	}
	if len(vals) != p.depth {
		return fmt.Errorf("%w: pipeline of %d returned %d replies", harness.ErrBadReply, p.depth, len(vals))
	}
	for _, v := range vals {
		if v.Kind == client.KindError {
			return fmt.Errorf("%w: %w", harness.ErrBadReply, v.Err)
		}
	}
	return nil
}

// Bound makes the following calls fail once deadline passes, so a hung
// server ends the case instead of the run. The context is made once per
// operation; the calls themselves allocate nothing.
func (p *libProber) Bound(deadline time.Time) {
	if p.cancel != nil {
		p.cancel()
	}
	p.ctx, p.cancel = context.WithDeadline(context.Background(), deadline)
}

func (p *libProber) Describe() string { return p.describe }
func (p *libProber) Close() error {
	if p.cancel != nil {
		p.cancel()
	}
	return p.c.Close()
}
