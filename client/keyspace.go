package client

import (
	"context"
	"time"

	"github.com/goblin-kv/goblin/command"
)

// The keyspace commands as typed calls.

// Unlink removes keys (as Del; goblin frees memory at once either way)
// and returns how many existed.
func (c *Client) Unlink(ctx context.Context, keys ...string) (int64, error) {
	return c.keysInt(ctx, command.OpUnlink, keys)
}

// Touch returns how many of keys exist, marking them as used for
// eviction.
func (c *Client) Touch(ctx context.Context, keys ...string) (int64, error) {
	return c.keysInt(ctx, command.OpTouch, keys)
}

// Rename renames key to newKey, replacing newKey; a missing key is a
// *ServerError ("ERR no such key").
func (c *Client) Rename(ctx context.Context, key, newKey string) error {
	c.renameRequest(command.OpRename, key, newKey)
	defer c.mu.Unlock()
	return c.okReply(ctx)
}

// RenameNX renames key to newKey only if newKey does not exist, and
// reports whether it did.
func (c *Client) RenameNX(ctx context.Context, key, newKey string) (bool, error) {
	c.renameRequest(command.OpRenameNX, key, newKey)
	defer c.mu.Unlock()
	n, err := c.intReply(ctx)
	return n == 1, err
}

func (c *Client) renameRequest(op command.Op, key, newKey string) {
	req := c.begin(op)
	c.args = append(c.args[:0], bytesOf(newKey))
	req.Key, req.Args = bytesOf(key), c.args
}

// CopyOptions are COPY's options.
type CopyOptions struct {
	// DB, when not nil, is the destination database (default: the
	// connection's).
	DB *int
	// Replace overwrites an existing destination.
	Replace bool
}

// Copy copies src's value and time to live to dst and reports whether it
// did (false when src is missing, or dst exists without Replace).
func (c *Client) Copy(ctx context.Context, src, dst string, o CopyOptions) (bool, error) {
	c.renameRequest(command.OpCopy, src, dst)
	defer c.mu.Unlock()
	if o.Replace {
		c.req.Flags |= command.FlagReplace
	}
	if o.DB != nil {
		c.req.Flags |= command.FlagDB
		c.req.Amount = int64(*o.DB)
	}
	n, err := c.intReply(ctx)
	return n == 1, err
}

// ExpireAt sets key to expire at t (millisecond resolution, PEXPIREAT)
// and reports whether the key exists. A time in the past deletes it.
func (c *Client) ExpireAt(ctx context.Context, key string, t time.Time) (bool, error) {
	n, err := c.keyNum(ctx, command.OpPExpireAt, key, t.UnixMilli())
	return n == 1, err
}

// Keys returns every key matching the glob pattern (Redis's syntax: *, ?,
// [a-z], [^a], \ escapes). It walks the whole keyspace in one command;
// Scan does it in steps.
func (c *Client) Keys(ctx context.Context, pattern string) ([]string, error) {
	c.begin(command.OpKeys).Value = bytesOf(pattern)
	defer c.mu.Unlock()
	r, err := c.execReq(ctx)
	if err != nil {
		return nil, err
	}
	return stringElems(r)
}

// stringElems copies an array of bulk strings.
func stringElems(r *result) ([]string, error) {
	if r.kind != KindArray {
		return nil, r.err("array")
	}
	out := make([]string, len(r.elems))
	for i := range r.elems {
		e := &r.elems[i]
		if e.kind != KindBulk {
			return nil, e.err("bulk")
		}
		out[i] = string(e.str)
	}
	return out, nil
}

// ScanOptions filter and size SCAN's steps; the zero value returns every
// key, about ten per step.
type ScanOptions struct {
	Match string // glob pattern, as for Keys ("" matches everything)
	Count int64  // keys examined per step (0: the server's default, 10)
	Type  string // only keys of this type ("string"), "" for all
}

// ScanPage runs one SCAN step from cursor and returns the keys it found
// and the cursor of the next step (0 when the walk is complete).
func (c *Client) ScanPage(ctx context.Context, cursor uint64, o ScanOptions) ([]string, uint64, error) {
	req := c.begin(command.OpScan)
	defer c.mu.Unlock()
	req.Amount, req.Amount2 = int64(cursor), o.Count
	if o.Match != "" {
		req.Flags |= command.FlagMatch
		req.Value = bytesOf(o.Match)
	}
	if o.Type != "" {
		req.Flags |= command.FlagType
		c.args = append(c.args[:0], bytesOf(o.Type))
		req.Args = c.args
	}
	r, err := c.execReq(ctx)
	if err != nil {
		return nil, 0, err
	}
	if r.kind != KindArray || len(r.elems) != 2 || r.elems[0].kind != KindBulk {
		return nil, 0, r.err("[cursor, keys]")
	}
	next, ok := parseCursor(r.elems[0].str)
	if !ok {
		return nil, 0, r.err("[cursor, keys]")
	}
	keys, err := stringElems(&r.elems[1])
	return keys, next, err
}

func parseCursor(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var v uint64
	for _, ch := range b {
		if ch < '0' || ch > '9' || v > (1<<64-1-uint64(ch-'0'))/10 {
			return 0, false
		}
		v = v*10 + uint64(ch-'0')
	}
	return v, true
}

// Scan walks the keyspace with SCAN, a step at a time:
//
//	it := c.Scan(ctx, client.ScanOptions{Match: "user:*"})
//	for it.Next() {
//		use(it.Key())
//	}
//	if err := it.Err(); err != nil { ... }
//
// As with Redis, every key present for the whole walk is returned at
// least once (a key may come twice if the index grew or shrank meanwhile);
// keys added or removed during the walk may or may not be.
func (c *Client) Scan(ctx context.Context, o ScanOptions) *ScanIterator {
	return &ScanIterator{c: c, ctx: ctx, o: o}
}

// ScanIterator is a walk started by Scan. It is not safe for concurrent
// use (the Client is).
type ScanIterator struct {
	c       *Client
	ctx     context.Context
	o       ScanOptions
	cursor  uint64
	started bool
	page    []string
	key     string
	err     error
}

// Next advances to the next key, running SCAN steps as needed, and
// reports whether there is one.
func (it *ScanIterator) Next() bool {
	for len(it.page) == 0 {
		if it.err != nil || (it.started && it.cursor == 0) {
			return false
		}
		it.started = true
		it.page, it.cursor, it.err = it.c.ScanPage(it.ctx, it.cursor, it.o)
	}
	it.key, it.page = it.page[0], it.page[1:]
	return true
}

// Key is the key Next moved to.
func (it *ScanIterator) Key() string { return it.key }

// Err is the error that ended the walk, if any.
func (it *ScanIterator) Err() error { return it.err }
