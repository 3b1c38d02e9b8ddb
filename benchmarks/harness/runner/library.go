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
	c                          *client.Client
	ctx                        context.Context
	cancel                     context.CancelFunc
	keys, hashes, lists, zsets []string
	members                    []string // the sorted set's (zsetMember)
	zadds                      []int    // per key: ZADD requests sent (zsetAdd's n)
	zrange                     [][]byte // ZRANGE's reply, reused
	value                      []byte
	next                       int
	buf                        []byte
	depth                      int
	describe                   string
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
	for i, k := range w.keys {
		p.keys = append(p.keys, string(k))
		p.hashes = append(p.hashes, string(w.hashes[i]))
		p.lists = append(p.lists, string(w.lists[i]))
		p.zsets = append(p.zsets, string(w.zsets[i]))
	}
	p.zadds = make([]int, len(p.keys))
	for m := range zsetMembers {
		p.members = append(p.members, zsetMember(m))
	}
	p.zrange = make([][]byte, zsetFixed)
	for i := range p.zrange {
		p.zrange[i] = make([]byte, 0, 16)
	}
	if err := p.preload(ctx, w); err != nil {
		c.Close()
		return nil, fmt.Errorf("preload: %w", err)
	}
	return p, nil
}

// preload writes every key (string, hash, list, sorted set) once, so that
// GET, HGET and RPOP find a value and HSET and ZADD rewrite existing ones.
func (p *libProber) preload(ctx context.Context, w workload) error {
	elems := make([][]byte, 1000)
	for i := range elems {
		elems[i] = p.value
	}
	zs := make([]client.Z, zsetMembers)
	for m := range zs {
		zs[m] = client.Z{Score: float64(zsetPreloadScore(m)), Member: p.members[m]}
	}
	for i := range p.keys {
		if err := p.c.Set(ctx, p.keys[i], p.value, client.SetOptions{}); err != nil {
			return err
		}
		if w.withHash {
			if _, err := p.c.HSet(ctx, p.hashes[i], client.FieldValue{Field: zsetField, Value: p.value}); err != nil {
				return err
			}
		}
		for left := w.listPreload; w.withList && left > 0; left -= len(elems) {
			if _, err := p.c.LPush(ctx, p.lists[i], elems[:min(left, len(elems))]...); err != nil {
				return err
			}
		}
		if !w.withZset {
			continue
		}
		if _, err := p.c.ZAdd(ctx, p.zsets[i], zs...); err != nil {
			return err
		}
	}
	return nil
}

// Do runs one synchronous round trip (a pipeline of depth requests when
// depth > 1) and checks the reply. At depth one it does not allocate.
func (p *libProber) Do(op harness.Op) error {
	i := p.next
	if p.next++; p.next == len(p.keys) {
		p.next = 0
	}
	if p.depth > 1 {
		return p.pipeline(op, i)
	}
	switch op {
	case harness.Ping:
		return p.c.Ping(p.ctx)
	case harness.Set:
		return p.c.Set(p.ctx, p.keys[i], p.value, client.SetOptions{})
	case harness.Get:
		v, err := p.c.GetAppend(p.ctx, p.buf[:0], p.keys[i])
		return p.checkValue(op, v, err)
	case harness.HSet:
		n, err := p.c.HSet(p.ctx, p.hashes[i], client.FieldValue{Field: zsetField, Value: p.value})
		return p.checkInt(op, n, 0, err)
	case harness.HGet:
		v, err := p.c.HGetAppend(p.ctx, p.buf[:0], p.hashes[i], zsetField)
		return p.checkValue(op, v, err)
	case harness.LPush:
		_, err := p.c.LPush(p.ctx, p.lists[i], p.value)
		return err
	case harness.RPop:
		v, err := p.c.RPopAppend(p.ctx, p.buf[:0], p.lists[i])
		return p.checkValue(op, v, err)
	case harness.ZAdd:
		m, score := zsetAdd(p.zadds[i])
		p.zadds[i]++
		n, err := p.c.ZAdd(p.ctx, p.zsets[i], client.Z{Score: float64(score), Member: p.members[m]})
		return p.checkInt(op, n, 0, err)
	case harness.ZRange:
		var err error
		p.zrange, err = p.c.ZRangeAppend(p.ctx, p.zrange, p.zsets[i], 0, 9)
		if err != nil {
			return err
		}
		if len(p.zrange) != zsetFixed {
			return fmt.Errorf("%w: ZRANGE 0 9 returned %d members", harness.ErrBadReply, len(p.zrange))
		}
		for m, v := range p.zrange {
			if string(v) != p.members[m] {
				return fmt.Errorf("%w: ZRANGE 0 9 returned %q at rank %d, want %q", harness.ErrBadReply, v, m, p.members[m])
			}
		}
		return nil
	}
	return fmt.Errorf("harness: the client library does not measure %s", op)
}

// checkValue checks a GET, HGET or RPOP reply: the value written.
func (p *libProber) checkValue(op harness.Op, v []byte, err error) error {
	if err != nil {
		return err
	}
	if !bytes.Equal(v, p.value) {
		return fmt.Errorf("%w: %s returned %q", harness.ErrBadReply, op, v)
	}
	return nil
}

// checkInt checks an integer reply: HSET and ZADD rewrite, adding nothing.
func (p *libProber) checkInt(op harness.Op, got, want int64, err error) error {
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("%w: %s returned %d, want %d", harness.ErrBadReply, op, got, want)
	}
	return nil
}

// pipeline sends depth requests in one write and reads every reply.
func (p *libProber) pipeline(op harness.Op, i int) error {
	pl := p.c.Pipeline()
	for range p.depth {
		switch op {
		case harness.Ping:
			pl.Do("PING")
		case harness.Set:
			pl.Do("SET", p.keys[i], p.value)
		case harness.Get:
			pl.Do("GET", p.keys[i])
		case harness.HSet:
			pl.Do("HSET", p.hashes[i], zsetField, p.value)
		case harness.HGet:
			pl.Do("HGET", p.hashes[i], zsetField)
		case harness.LPush:
			pl.Do("LPUSH", p.lists[i], p.value)
		case harness.RPop:
			pl.Do("RPOP", p.lists[i])
		case harness.ZAdd:
			m, score := zsetAdd(p.zadds[i])
			p.zadds[i]++
			pl.Do("ZADD", p.zsets[i], score, p.members[m])
		case harness.ZRange:
			pl.Do("ZRANGE", p.zsets[i], 0, 9)
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
