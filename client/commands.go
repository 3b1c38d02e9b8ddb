package client

import (
	"context"
	"time"
)

// Command names, kept as byte slices so encoding them does not allocate.
var (
	cmdPING     = []byte("PING")
	cmdSET      = []byte("SET")
	cmdGET      = []byte("GET")
	cmdDEL      = []byte("DEL")
	cmdEXISTS   = []byte("EXISTS")
	cmdPEXPIRE  = []byte("PEXPIRE")
	cmdPTTL     = []byte("PTTL")
	cmdINCR     = []byte("INCR")
	cmdINCRBY   = []byte("INCRBY")
	cmdDECR     = []byte("DECR")
	cmdDECRBY   = []byte("DECRBY")
	cmdMGET     = []byte("MGET")
	cmdMSET     = []byte("MSET")
	cmdFLUSHALL = []byte("FLUSHALL")
	cmdDBSIZE   = []byte("DBSIZE")
	optNX       = []byte("NX")
	optXX       = []byte("XX")
	optKEEPTTL  = []byte("KEEPTTL")
	optGET      = []byte("GET")
	optEX       = []byte("EX")
	optPX       = []byte("PX")
)

// begin takes the lock and starts an argument list. The caller must
// c.mu.Unlock().
func (c *Client) begin(name []byte) {
	c.mu.Lock()
	c.args = append(c.args[:0], name)
	c.num = c.num[:0]
}

// Ping checks the server answers.
func (c *Client) Ping(ctx context.Context) error {
	c.begin(cmdPING)
	defer c.mu.Unlock()
	r, err := c.exec(ctx)
	if err != nil {
		return err
	}
	return r.okOrErr()
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

func (c *Client) setArgs(key string, val []byte, o SetOptions) {
	c.args = append(c.args, bytesOf(key), val)
	if o.NX {
		c.args = append(c.args, optNX)
	}
	if o.XX {
		c.args = append(c.args, optXX)
	}
	if o.KeepTTL {
		c.args = append(c.args, optKEEPTTL)
	}
	if o.TTL > 0 {
		if o.TTL%time.Second == 0 {
			c.args = append(c.args, optEX, c.appendNum(int64(o.TTL/time.Second)))
		} else {
			ms := int64(o.TTL / time.Millisecond)
			if ms == 0 {
				ms = 1
			}
			c.args = append(c.args, optPX, c.appendNum(ms))
		}
	}
}

// Set stores val under key. With NX or XX it returns ErrNil when the
// condition was not met.
func (c *Client) Set(ctx context.Context, key string, val []byte, o SetOptions) error {
	c.begin(cmdSET)
	defer c.mu.Unlock()
	c.setArgs(key, val, o)
	r, err := c.exec(ctx)
	if err != nil {
		return err
	}
	return r.okOrErr()
}

// SetGet is Set with the GET option: it stores val and appends the key's
// previous value to dst. It returns ErrNil when the key had no value (the
// new value is still stored unless NX or XX prevented it).
func (c *Client) SetGet(ctx context.Context, dst []byte, key string, val []byte, o SetOptions) ([]byte, error) {
	c.begin(cmdSET)
	defer c.mu.Unlock()
	c.setArgs(key, val, o)
	c.args = append(c.args, optGET)
	r, err := c.exec(ctx)
	if err != nil {
		return dst, err
	}
	if r.kind != KindBulk {
		return dst, r.err("bulk")
	}
	return append(dst, r.str...), nil
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
	c.begin(cmdGET)
	defer c.mu.Unlock()
	c.args = append(c.args, bytesOf(key))
	r, err := c.exec(ctx)
	if err != nil {
		return dst, err
	}
	if r.kind != KindBulk {
		return dst, r.err("bulk")
	}
	return append(dst, r.str...), nil
}

func (c *Client) keysInt(ctx context.Context, name []byte, keys []string) (int64, error) {
	c.begin(name)
	defer c.mu.Unlock()
	for _, k := range keys {
		c.args = append(c.args, bytesOf(k))
	}
	r, err := c.exec(ctx)
	if err != nil {
		return 0, err
	}
	return r.intOrErr()
}

// Del removes keys and returns how many existed.
func (c *Client) Del(ctx context.Context, keys ...string) (int64, error) {
	return c.keysInt(ctx, cmdDEL, keys)
}

// Exists returns how many of keys exist (a key named twice counts twice).
func (c *Client) Exists(ctx context.Context, keys ...string) (int64, error) {
	return c.keysInt(ctx, cmdEXISTS, keys)
}

// Expire sets key to expire after d (millisecond resolution) and reports
// whether the key exists.
func (c *Client) Expire(ctx context.Context, key string, d time.Duration) (bool, error) {
	c.begin(cmdPEXPIRE)
	defer c.mu.Unlock()
	c.args = append(c.args, bytesOf(key), c.appendNum(int64(d/time.Millisecond)))
	r, err := c.exec(ctx)
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
	c.begin(cmdPTTL)
	defer c.mu.Unlock()
	c.args = append(c.args, bytesOf(key))
	r, err := c.exec(ctx)
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

func (c *Client) keyNum(ctx context.Context, name []byte, key string, n int64, withN bool) (int64, error) {
	c.begin(name)
	defer c.mu.Unlock()
	c.args = append(c.args, bytesOf(key))
	if withN {
		c.args = append(c.args, c.appendNum(n))
	}
	r, err := c.exec(ctx)
	if err != nil {
		return 0, err
	}
	return r.intOrErr()
}

// Incr adds one to the integer stored at key (0 when missing) and returns
// the result.
func (c *Client) Incr(ctx context.Context, key string) (int64, error) {
	return c.keyNum(ctx, cmdINCR, key, 0, false)
}

// IncrBy adds delta to the integer stored at key and returns the result.
func (c *Client) IncrBy(ctx context.Context, key string, delta int64) (int64, error) {
	return c.keyNum(ctx, cmdINCRBY, key, delta, true)
}

// Decr subtracts one from the integer stored at key and returns the result.
func (c *Client) Decr(ctx context.Context, key string) (int64, error) {
	return c.keyNum(ctx, cmdDECR, key, 0, false)
}

// DecrBy subtracts delta from the integer stored at key and returns the
// result.
func (c *Client) DecrBy(ctx context.Context, key string, delta int64) (int64, error) {
	return c.keyNum(ctx, cmdDECRBY, key, delta, true)
}

// MGet returns the values of keys in order; a missing key's entry is nil.
func (c *Client) MGet(ctx context.Context, keys ...string) ([][]byte, error) {
	c.begin(cmdMGET)
	defer c.mu.Unlock()
	for _, k := range keys {
		c.args = append(c.args, bytesOf(k))
	}
	r, err := c.exec(ctx)
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
	c.begin(cmdMSET)
	defer c.mu.Unlock()
	for _, p := range pairs {
		c.args = append(c.args, bytesOf(p.Key), p.Value)
	}
	r, err := c.exec(ctx)
	if err != nil {
		return err
	}
	return r.okOrErr()
}

// FlushAll removes every key.
func (c *Client) FlushAll(ctx context.Context) error {
	c.begin(cmdFLUSHALL)
	defer c.mu.Unlock()
	r, err := c.exec(ctx)
	if err != nil {
		return err
	}
	return r.okOrErr()
}

// DBSize returns the number of keys.
func (c *Client) DBSize(ctx context.Context) (int64, error) {
	c.begin(cmdDBSIZE)
	defer c.mu.Unlock()
	r, err := c.exec(ctx)
	if err != nil {
		return 0, err
	}
	return r.intOrErr()
}
