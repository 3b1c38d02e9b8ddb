package client

import (
	"context"
	"strconv"
	"time"

	"github.com/goblin-kv/goblin/command"
)

// The string commands as typed calls. Each builds its request
// directly (no Redis text in between) and so travels over RESP and SBE
// alike.

// bulkInto runs the request begun by the caller (which holds c.mu) and
// appends a bulk reply to dst; a nil reply is ErrNil.
func (c *Client) bulkInto(ctx context.Context, dst []byte) ([]byte, error) {
	r, err := c.execReq(ctx)
	if err != nil {
		return dst, err
	}
	if r.kind != KindBulk {
		return dst, r.err("bulk")
	}
	return append(dst, r.str...), nil
}

// bulkCopy is bulkInto into a new slice (empty, not nil, for an empty
// value).
func (c *Client) bulkCopy(ctx context.Context) ([]byte, error) {
	v, err := c.bulkInto(ctx, nil)
	if err == nil && v == nil {
		v = []byte{}
	}
	return v, err
}

// intReply runs the request begun by the caller and returns its integer.
func (c *Client) intReply(ctx context.Context) (int64, error) {
	r, err := c.execReq(ctx)
	if err != nil {
		return 0, err
	}
	return r.intOrErr()
}

// okReply runs the request begun by the caller and accepts a status.
func (c *Client) okReply(ctx context.Context) error {
	r, err := c.execReq(ctx)
	if err != nil {
		return err
	}
	return r.okOrErr()
}

// SetEx stores val under key with a time to live (SETEX, or PSETEX when
// ttl is not a whole number of seconds). ttl must be positive.
func (c *Client) SetEx(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	req := c.begin(command.OpSetEX)
	defer c.mu.Unlock()
	req.Key, req.Value = bytesOf(key), val
	req.Expiry, req.Expire = ttlExpiry(ttl)
	if req.Expiry == command.ExpiryPX {
		req.Op = command.OpPSetEX
	}
	return c.okReply(ctx)
}

// SetNX stores val under key only if the key does not exist, and reports
// whether it did.
func (c *Client) SetNX(ctx context.Context, key string, val []byte) (bool, error) {
	req := c.begin(command.OpSetNX)
	defer c.mu.Unlock()
	req.Key, req.Value = bytesOf(key), val
	n, err := c.intReply(ctx)
	return n == 1, err
}

// GetDel returns key's value and deletes the key; ErrNil when it is
// missing.
func (c *Client) GetDel(ctx context.Context, key string) ([]byte, error) {
	c.begin(command.OpGetDel).Key = bytesOf(key)
	defer c.mu.Unlock()
	return c.bulkCopy(ctx)
}

// GetExOptions say how GetEx changes the key's time to live; the zero
// value leaves it as it is.
type GetExOptions struct {
	// TTL, when positive, sets the time to live (EX for whole seconds,
	// PX otherwise).
	TTL time.Duration
	// At, when not zero, expires the key at that time (PXAT).
	At time.Time
	// Persist removes the time to live.
	Persist bool
}

// GetEx returns key's value (ErrNil when missing) and changes its time to
// live as o says.
func (c *Client) GetEx(ctx context.Context, key string, o GetExOptions) ([]byte, error) {
	req := c.begin(command.OpGetEX)
	defer c.mu.Unlock()
	req.Key = bytesOf(key)
	switch {
	case o.Persist:
		req.Expiry = command.ExpiryPersist
	case !o.At.IsZero():
		req.Expiry, req.Expire = command.ExpiryPXAT, o.At.UnixMilli()
	case o.TTL > 0:
		req.Expiry, req.Expire = ttlExpiry(o.TTL)
	}
	return c.bulkCopy(ctx)
}

// Append appends val to key's value (creating the key) and returns the
// new length.
func (c *Client) Append(ctx context.Context, key string, val []byte) (int64, error) {
	req := c.begin(command.OpAppend)
	defer c.mu.Unlock()
	req.Key, req.Value = bytesOf(key), val
	return c.intReply(ctx)
}

// StrLen returns the length of key's value (0 when missing).
func (c *Client) StrLen(ctx context.Context, key string) (int64, error) {
	c.begin(command.OpStrLen).Key = bytesOf(key)
	defer c.mu.Unlock()
	return c.intReply(ctx)
}

// GetRange returns the bytes of key's value from start to end inclusive;
// negative offsets count from the end, as in Redis.
func (c *Client) GetRange(ctx context.Context, key string, start, end int64) ([]byte, error) {
	req := c.begin(command.OpGetRange)
	defer c.mu.Unlock()
	req.Key, req.Amount, req.Amount2 = bytesOf(key), start, end
	return c.bulkCopy(ctx)
}

// SetRange overwrites key's value from offset with val (padding with zero
// bytes) and returns the new length.
func (c *Client) SetRange(ctx context.Context, key string, offset int64, val []byte) (int64, error) {
	req := c.begin(command.OpSetRange)
	defer c.mu.Unlock()
	req.Key, req.Amount, req.Value = bytesOf(key), offset, val
	return c.intReply(ctx)
}

// IncrByFloat adds delta to the number stored at key and returns the
// result. The server computes in long double precision, as Redis does,
// and the result is read back into a float64.
func (c *Client) IncrByFloat(ctx context.Context, key string, delta float64) (float64, error) {
	req := c.begin(command.OpIncrByFloat)
	defer c.mu.Unlock()
	c.num = strconv.AppendFloat(c.num[:0], delta, 'g', -1, 64)
	req.Key, req.Value = bytesOf(key), c.num
	v, err := c.bulkInto(ctx, c.num[len(c.num):])
	if err != nil {
		return 0, err
	}
	return strconv.ParseFloat(string(v), 64)
}
