package client

import (
	"context"
	"time"

	"github.com/goblin-kv/goblin/command"
)

// hotUnlock: Ping, Set and GetAppend, the calls a latency-bound caller
// repeats, unlock c.mu by hand where the other typed calls defer it: the
// deferred Unlock cost 20-35 instructions a call (callgrind, the
// client's BenchmarkOneThreadLibrary) on an SBE PING of about 600. Nothing between
// their begin and Unlock panics but a caller's OnPush, which its doc
// forbids to.

// begin takes the lock and starts the typed call's request. The caller
// must c.mu.Unlock().
func (c *Client) begin(op command.Op) *command.Request {
	c.mu.Lock()
	c.req.Reset()
	c.req.Op = op
	c.num = c.num[:0]
	return &c.req
}

// Ping checks the server answers.
func (c *Client) Ping(ctx context.Context) error {
	var r *result
	var err error
	if c.msgSBE != nil {
		c.mu.Lock()
		r, err = c.roundTrip(ctx, &compactPing) // no request to build: see compactPing
	} else {
		c.begin(command.OpPing)
		r, err = c.execReq(ctx)
	}
	if err == nil {
		err = r.okOrErr()
	}
	c.mu.Unlock() // no defer on the hot calls: see hotUnlock
	return err
}

// SetOptions are SET's options. The zero value sets unconditionally and
// removes any time to live.
type SetOptions struct {
	// NX sets only when the key does not exist; XX only when it does.
	NX, XX bool
	// TTL, when positive, expires the key after it: sent as EX when it is
	// a whole number of seconds, PX (milliseconds) otherwise.
	TTL time.Duration
	// KeepTTL keeps the key's existing time to live.
	KeepTTL bool
}

func setRequest(r *command.Request, key string, val []byte, o SetOptions) {
	r.Key, r.Value = bytesOf(key), val
	if o.NX {
		r.Flags |= command.FlagNX
	}
	if o.XX {
		r.Flags |= command.FlagXX
	}
	if o.KeepTTL {
		r.Flags |= command.FlagKeepTTL
	}
	if o.TTL > 0 {
		r.Expiry, r.Expire = ttlExpiry(o.TTL)
	}
}

// ttlExpiry sends a positive d as EX when it is a whole number of seconds,
// PX (milliseconds, at least 1) otherwise.
func ttlExpiry(d time.Duration) (command.Expiry, int64) {
	if d%time.Second == 0 {
		return command.ExpiryEX, int64(d / time.Second)
	}
	return command.ExpiryPX, max(int64(d/time.Millisecond), 1)
}

// Set stores val under key. With NX or XX it returns ErrNil when the
// condition was not met.
func (c *Client) Set(ctx context.Context, key string, val []byte, o SetOptions) error {
	setRequest(c.begin(command.OpSet), key, val, o)
	err := c.okReply(ctx) // no defer on the hot calls: see hotUnlock
	c.mu.Unlock()
	return err
}

// SetGet is Set with the GET option: it stores val and appends the key's
// previous value to dst. It returns ErrNil when the key had no value (the
// new value is still stored unless NX or XX prevented it).
func (c *Client) SetGet(ctx context.Context, dst []byte, key string, val []byte, o SetOptions) ([]byte, error) {
	req := c.begin(command.OpSet)
	defer c.mu.Unlock()
	setRequest(req, key, val, o)
	req.Flags |= command.FlagGet
	return c.bulkInto(ctx, dst)
}

// Get returns a copy of key's value, or ErrNil when the key is missing.
func (c *Client) Get(ctx context.Context, key string) ([]byte, error) {
	v, err := c.GetAppend(ctx, nil, key)
	if err == nil && v == nil {
		v = []byte{}
	}
	return v, err
}

// GetAppend appends key's value to dst and returns the extended slice, or
// dst and ErrNil when the key is missing. It does not allocate when dst
// has room.
func (c *Client) GetAppend(ctx context.Context, dst []byte, key string) ([]byte, error) {
	c.begin(command.OpGet).Key = bytesOf(key)
	dst, err := c.bulkInto(ctx, dst) // no defer on the hot calls: see hotUnlock
	c.mu.Unlock()
	return dst, err
}

// keysRequest puts keys in r: the first in Key, the rest in Args (whose
// backing array is the client's and reused).
func (c *Client) keysRequest(r *command.Request, keys []string) {
	c.args = c.args[:0]
	for i, k := range keys {
		if i == 0 {
			r.Key = bytesOf(k)
		} else {
			c.args = append(c.args, bytesOf(k))
		}
	}
	r.Args = c.args
}

func (c *Client) keysInt(ctx context.Context, op command.Op, keys []string) (int64, error) {
	c.keysRequest(c.begin(op), keys)
	defer c.mu.Unlock()
	r, err := c.execReq(ctx)
	if err != nil {
		return 0, err
	}
	return r.intOrErr()
}

// Del removes keys and returns how many existed.
func (c *Client) Del(ctx context.Context, keys ...string) (int64, error) {
	return c.keysInt(ctx, command.OpDel, keys)
}

// Exists returns how many of keys exist (a key named twice counts twice).
func (c *Client) Exists(ctx context.Context, keys ...string) (int64, error) {
	return c.keysInt(ctx, command.OpExists, keys)
}

// Expire sets key to expire after d (millisecond resolution) and reports
// whether the key exists.
func (c *Client) Expire(ctx context.Context, key string, d time.Duration) (bool, error) {
	req := c.begin(command.OpPExpire)
	defer c.mu.Unlock()
	req.Key, req.Amount = bytesOf(key), int64(d/time.Millisecond)
	r, err := c.execReq(ctx)
	if err != nil {
		return false, err
	}
	n, err := r.intOrErr()
	return n == 1, err
}

// NoExpiry is what TTL returns for a key without a time to live.
const NoExpiry time.Duration = -1

// TTL returns the time key has left to live (millisecond resolution),
// NoExpiry when it has no time to live, and ErrNil when it does not exist.
func (c *Client) TTL(ctx context.Context, key string) (time.Duration, error) {
	c.begin(command.OpPTTL).Key = bytesOf(key)
	defer c.mu.Unlock()
	r, err := c.execReq(ctx)
	if err != nil {
		return 0, err
	}
	ms, err := r.intOrErr()
	switch {
	case err != nil:
		return 0, err
	case ms == -2:
		return 0, ErrNil
	case ms == -1:
		return NoExpiry, nil
	}
	return time.Duration(ms) * time.Millisecond, nil
}

func (c *Client) keyNum(ctx context.Context, op command.Op, key string, n int64) (int64, error) {
	req := c.begin(op)
	defer c.mu.Unlock()
	req.Key, req.Amount = bytesOf(key), n
	r, err := c.execReq(ctx)
	if err != nil {
		return 0, err
	}
	return r.intOrErr()
}

// Incr adds one to the integer stored at key (0 when missing) and returns
// the result.
func (c *Client) Incr(ctx context.Context, key string) (int64, error) {
	return c.keyNum(ctx, command.OpIncr, key, 0)
}

// IncrBy adds delta to the integer stored at key and returns the result.
func (c *Client) IncrBy(ctx context.Context, key string, delta int64) (int64, error) {
	return c.keyNum(ctx, command.OpIncrBy, key, delta)
}

// Decr subtracts one from the integer stored at key and returns the result.
func (c *Client) Decr(ctx context.Context, key string) (int64, error) {
	return c.keyNum(ctx, command.OpDecr, key, 0)
}

// DecrBy subtracts delta from the integer stored at key and returns the
// result.
func (c *Client) DecrBy(ctx context.Context, key string, delta int64) (int64, error) {
	return c.keyNum(ctx, command.OpDecrBy, key, delta)
}

// MGet returns the values of keys in order; a missing key's entry is nil.
func (c *Client) MGet(ctx context.Context, keys ...string) ([][]byte, error) {
	c.keysRequest(c.begin(command.OpMGet), keys)
	defer c.mu.Unlock()
	r, err := c.execReq(ctx)
	if err != nil {
		return nil, err
	}
	if r.kind != KindArray {
		return nil, r.err("array")
	}
	out := make([][]byte, len(r.elems))
	for i := range r.elems {
		switch e := &r.elems[i]; e.kind {
		case KindBulk:
			out[i] = append([]byte{}, e.str...)
		case KindNil:
		default:
			return nil, e.err("bulk")
		}
	}
	return out, nil
}

// KV is one key and value for MSet.
type KV struct {
	Key   string
	Value []byte
}

// MSet stores every pair in one request.
func (c *Client) MSet(ctx context.Context, pairs ...KV) error {
	req := c.begin(command.OpMSet)
	defer c.mu.Unlock()
	c.args = c.args[:0]
	for i, p := range pairs {
		if i == 0 {
			req.Key, req.Value = bytesOf(p.Key), p.Value
		} else {
			c.args = append(c.args, bytesOf(p.Key), p.Value)
		}
	}
	req.Args = c.args
	r, err := c.execReq(ctx)
	if err != nil {
		return err
	}
	return r.okOrErr()
}

// FlushAll removes every key.
func (c *Client) FlushAll(ctx context.Context) error {
	c.begin(command.OpFlushAll)
	defer c.mu.Unlock()
	return c.okReply(ctx)
}

// DBSize returns the number of keys.
func (c *Client) DBSize(ctx context.Context) (int64, error) {
	c.begin(command.OpDBSize)
	defer c.mu.Unlock()
	r, err := c.execReq(ctx)
	if err != nil {
		return 0, err
	}
	return r.intOrErr()
}
