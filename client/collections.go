package client

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/goblin-kv/goblin/command"
)

// The common hash, list, set and sorted-set commands as typed calls. Each
// builds its request directly, key in Key and the other words in Args as
// the server's decoder reads them, so it travels over RESP and over SBE
// (schema version 3, where these operations ride in MultiRequest's
// wideOp) alike, on every transport.

// FieldValue is one hash field and its value, for HSet and HGetAll.
type FieldValue struct {
	Field string
	Value []byte
}

// Z is one sorted-set member and its score.
type Z struct {
	Score  float64
	Member string
}

// words begins op's request on key with args (the client's reused array).
func (c *Client) words(op command.Op, key string) *command.Request {
	r := c.begin(op)
	r.Key = bytesOf(key)
	c.args = c.args[:0]
	return r
}

func (c *Client) argsReply(ctx context.Context) (*result, error) {
	c.req.Args = c.args
	return c.execReq(ctx)
}

func (c *Client) argsInt(ctx context.Context) (int64, error) {
	r, err := c.argsReply(ctx)
	if err != nil {
		return 0, err
	}
	return r.intOrErr()
}

// HSet sets fields of the hash at key and returns how many were new.
func (c *Client) HSet(ctx context.Context, key string, fields ...FieldValue) (int64, error) {
	c.words(command.OpHSet, key)
	defer c.mu.Unlock()
	for _, f := range fields {
		c.args = append(c.args, bytesOf(f.Field), f.Value)
	}
	return c.argsInt(ctx)
}

// HGet returns a copy of a hash field's value, or ErrNil when the field
// or the key is missing.
func (c *Client) HGet(ctx context.Context, key, field string) ([]byte, error) {
	c.words(command.OpHGet, key)
	defer c.mu.Unlock()
	c.args = append(c.args, bytesOf(field))
	c.req.Args = c.args
	return c.bulkCopy(ctx)
}

// HGetAppend appends a hash field's value to dst and returns the extended
// slice, or dst and ErrNil when the field or the key is missing. It does not
// allocate when dst has room.
func (c *Client) HGetAppend(ctx context.Context, dst []byte, key, field string) ([]byte, error) {
	c.words(command.OpHGet, key)
	defer c.mu.Unlock()
	c.args = append(c.args, bytesOf(field))
	c.req.Args = c.args
	return c.bulkInto(ctx, dst)
}

// HDel removes fields of the hash at key and returns how many existed.
func (c *Client) HDel(ctx context.Context, key string, fields ...string) (int64, error) {
	c.words(command.OpHDel, key)
	defer c.mu.Unlock()
	for _, f := range fields {
		c.args = append(c.args, bytesOf(f))
	}
	return c.argsInt(ctx)
}

// HGetAll returns the hash's fields and values (none for a missing key),
// in the server's order.
func (c *Client) HGetAll(ctx context.Context, key string) ([]FieldValue, error) {
	c.words(command.OpHGetAll, key)
	defer c.mu.Unlock()
	r, err := c.argsReply(ctx)
	if err != nil {
		return nil, err
	}
	flat, err := pairs(r, "map")
	if err != nil {
		return nil, err
	}
	out := make([]FieldValue, 0, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		out = append(out, FieldValue{Field: string(flat[i].str), Value: append([]byte{}, flat[i+1].str...)})
	}
	return out, nil
}

// LPush prepends values to the list at key (the last ends up first) and
// returns the list's length.
func (c *Client) LPush(ctx context.Context, key string, values ...[]byte) (int64, error) {
	return c.listPush(ctx, command.OpLPush, key, values)
}

// RPush appends values to the list at key and returns its length.
func (c *Client) RPush(ctx context.Context, key string, values ...[]byte) (int64, error) {
	return c.listPush(ctx, command.OpRPush, key, values)
}

func (c *Client) listPush(ctx context.Context, op command.Op, key string, values [][]byte) (int64, error) {
	c.words(op, key)
	defer c.mu.Unlock()
	c.args = append(c.args, values...)
	return c.argsInt(ctx)
}

// LPop removes and returns the list's first element; ErrNil when the list
// is empty or missing.
func (c *Client) LPop(ctx context.Context, key string) ([]byte, error) {
	c.words(command.OpLPop, key)
	defer c.mu.Unlock()
	c.req.Args = c.args
	return c.bulkCopy(ctx)
}

// RPop removes and returns the list's last element; ErrNil when the list
// is empty or missing.
func (c *Client) RPop(ctx context.Context, key string) ([]byte, error) {
	c.words(command.OpRPop, key)
	defer c.mu.Unlock()
	c.req.Args = c.args
	return c.bulkCopy(ctx)
}

// RPopAppend removes the list's last element and appends it to dst, or
// returns dst and ErrNil when the list is empty or missing. It does not
// allocate when dst has room.
func (c *Client) RPopAppend(ctx context.Context, dst []byte, key string) ([]byte, error) {
	c.words(command.OpRPop, key)
	defer c.mu.Unlock()
	c.req.Args = c.args
	return c.bulkInto(ctx, dst)
}

// LRange returns the list's elements from start to stop (LRANGE's
// indexes: negative ones count from the end).
func (c *Client) LRange(ctx context.Context, key string, start, stop int64) ([][]byte, error) {
	c.words(command.OpLRange, key)
	defer c.mu.Unlock()
	c.args = append(c.args, c.appendNum(start), c.appendNum(stop))
	return c.bulks(ctx)
}

// bulks runs the request and copies an array (or set) of bulk strings.
func (c *Client) bulks(ctx context.Context) ([][]byte, error) {
	r, err := c.argsReply(ctx)
	if err != nil {
		return nil, err
	}
	if r.kind != KindArray && r.kind != KindSet {
		return nil, r.err("array")
	}
	out := make([][]byte, len(r.elems))
	for i := range r.elems {
		e := &r.elems[i]
		if e.kind != KindBulk {
			return nil, e.err("bulk")
		}
		out[i] = append([]byte{}, e.str...)
	}
	return out, nil
}

// SAdd adds members to the set at key and returns how many were new.
func (c *Client) SAdd(ctx context.Context, key string, members ...string) (int64, error) {
	return c.keyWords(ctx, command.OpSAdd, key, members)
}

// SRem removes members of the set at key and returns how many existed.
func (c *Client) SRem(ctx context.Context, key string, members ...string) (int64, error) {
	return c.keyWords(ctx, command.OpSRem, key, members)
}

func (c *Client) keyWords(ctx context.Context, op command.Op, key string, words []string) (int64, error) {
	c.words(op, key)
	defer c.mu.Unlock()
	for _, w := range words {
		c.args = append(c.args, bytesOf(w))
	}
	return c.argsInt(ctx)
}

// SIsMember reports whether member is in the set at key.
func (c *Client) SIsMember(ctx context.Context, key, member string) (bool, error) {
	c.words(command.OpSIsMember, key)
	defer c.mu.Unlock()
	c.args = append(c.args, bytesOf(member))
	return c.argsBool(ctx)
}

// SMembers returns the members of the set at key, in the server's order.
func (c *Client) SMembers(ctx context.Context, key string) ([][]byte, error) {
	c.words(command.OpSMembers, key)
	defer c.mu.Unlock()
	return c.bulks(ctx)
}

// ZAdd sets members' scores in the sorted set at key and returns how many
// were new.
func (c *Client) ZAdd(ctx context.Context, key string, members ...Z) (int64, error) {
	c.words(command.OpZAdd, key)
	defer c.mu.Unlock()
	for _, m := range members {
		c.args = append(c.args, c.appendScore(m.Score), bytesOf(m.Member))
	}
	return c.argsInt(ctx)
}

// appendScore formats f as a score the server reads back exactly:
// shortest round-trip decimal, "inf" and "-inf" for the infinities.
func (c *Client) appendScore(f float64) []byte {
	start := len(c.num)
	switch {
	case math.IsInf(f, 1):
		c.num = append(c.num, "inf"...)
	case math.IsInf(f, -1):
		c.num = append(c.num, "-inf"...)
	default:
		c.num = strconv.AppendFloat(c.num, f, 'g', -1, 64)
	}
	return c.num[start:len(c.num):len(c.num)]
}

// ZScore returns member's score in the sorted set at key; ErrNil when the
// member or the key is missing.
func (c *Client) ZScore(ctx context.Context, key, member string) (float64, error) {
	c.words(command.OpZScore, key)
	defer c.mu.Unlock()
	c.args = append(c.args, bytesOf(member))
	return c.argsDouble(ctx)
}

// ZRange returns the members of ranks start to stop (negative ranks count
// from the end), lowest score first.
func (c *Client) ZRange(ctx context.Context, key string, start, stop int64) ([][]byte, error) {
	c.words(command.OpZRange, key)
	defer c.mu.Unlock()
	c.args = append(c.args, c.appendNum(start), c.appendNum(stop))
	return c.bulks(ctx)
}

// ZRangeAppend is ZRange into the caller's buffers: dst is truncated and
// the members are copied into its elements, each reusing the backing array
// of the element already at its position (beyond len(dst), up to cap(dst))
// when it has room. Passing back the previous call's result, it does not
// allocate once every position has held a member as long.
func (c *Client) ZRangeAppend(ctx context.Context, dst [][]byte, key string, start, stop int64) ([][]byte, error) {
	c.words(command.OpZRange, key)
	defer c.mu.Unlock()
	c.args = append(c.args, c.appendNum(start), c.appendNum(stop))
	r, err := c.argsReply(ctx)
	if err != nil {
		return dst[:0], err
	}
	return bulksInto(dst, r)
}

// bulksInto copies an array (or set) reply of bulk strings into dst's
// elements (see ZRangeAppend).
func bulksInto(dst [][]byte, r *result) ([][]byte, error) {
	dst = dst[:0]
	if r.kind != KindArray && r.kind != KindSet {
		return dst, r.err("array")
	}
	for i := range r.elems {
		e := &r.elems[i]
		if e.kind != KindBulk {
			return dst, e.err("bulk")
		}
		var b []byte
		if len(dst) < cap(dst) {
			b = dst[: len(dst)+1 : cap(dst)][len(dst)]
		}
		dst = append(dst, append(b[:0], e.str...))
	}
	return dst, nil
}

// ZRangeWithScores is ZRange WITHSCORES: the members and their scores.
func (c *Client) ZRangeWithScores(ctx context.Context, key string, start, stop int64) ([]Z, error) {
	c.words(command.OpZRange, key)
	defer c.mu.Unlock()
	c.args = append(c.args, c.appendNum(start), c.appendNum(stop), bytesOf("WITHSCORES"))
	return c.zs(ctx)
}

// pairs flattens a reply of pairs, whichever shape it came in: a RESP2 (or
// SBE) flat array, a RESP3 map, or a RESP3 array of two-element arrays.
func pairs(r *result, want string) ([]result, error) {
	switch r.kind {
	case KindMap:
		return r.elems, nil
	case KindArray:
	default:
		return nil, r.err(want)
	}
	if len(r.elems) == 0 || r.elems[0].kind != KindArray {
		if len(r.elems)%2 != 0 {
			return nil, r.err("pairs")
		}
		return r.elems, nil
	}
	flat := make([]result, 0, 2*len(r.elems))
	for i := range r.elems {
		p := &r.elems[i]
		if p.kind != KindArray || len(p.elems) != 2 {
			return nil, p.err("pair")
		}
		flat = append(flat, p.elems...)
	}
	return flat, nil
}

// HMGet returns the values of fields of the hash at key, nil for each
// missing field (and for every field of a missing key).
func (c *Client) HMGet(ctx context.Context, key string, fields ...string) ([][]byte, error) {
	c.words(command.OpHMGet, key)
	defer c.mu.Unlock()
	for _, f := range fields {
		c.args = append(c.args, bytesOf(f))
	}
	r, err := c.argsReply(ctx)
	if err != nil {
		return nil, err
	}
	if r.kind != KindArray {
		return nil, r.err("array")
	}
	out := make([][]byte, len(r.elems))
	for i := range r.elems {
		switch e := &r.elems[i]; e.kind {
		case KindNil:
		case KindBulk:
			out[i] = append([]byte{}, e.str...)
		default:
			return nil, e.err("bulk")
		}
	}
	return out, nil
}

// HIncrBy adds incr to the integer in a hash field (a missing field counts
// as 0) and returns the new value.
func (c *Client) HIncrBy(ctx context.Context, key, field string, incr int64) (int64, error) {
	c.words(command.OpHIncrBy, key)
	defer c.mu.Unlock()
	c.args = append(c.args, bytesOf(field), c.appendNum(incr))
	return c.argsInt(ctx)
}

// HExists reports whether the hash at key has field.
func (c *Client) HExists(ctx context.Context, key, field string) (bool, error) {
	c.words(command.OpHExists, key)
	defer c.mu.Unlock()
	c.args = append(c.args, bytesOf(field))
	return c.argsBool(ctx)
}

// HLen returns the number of fields of the hash at key (0 when missing).
func (c *Client) HLen(ctx context.Context, key string) (int64, error) {
	return c.keyWords(ctx, command.OpHLen, key, nil)
}

// LLen returns the length of the list at key (0 when missing).
func (c *Client) LLen(ctx context.Context, key string) (int64, error) {
	return c.keyWords(ctx, command.OpLLen, key, nil)
}

// SCard returns the number of members of the set at key (0 when missing).
func (c *Client) SCard(ctx context.Context, key string) (int64, error) {
	return c.keyWords(ctx, command.OpSCard, key, nil)
}

// ZCard returns the number of members of the sorted set at key.
func (c *Client) ZCard(ctx context.Context, key string) (int64, error) {
	return c.keyWords(ctx, command.OpZCard, key, nil)
}

// ZRem removes members of the sorted set at key and returns how many
// existed.
func (c *Client) ZRem(ctx context.Context, key string, members ...string) (int64, error) {
	return c.keyWords(ctx, command.OpZRem, key, members)
}

// ZRank returns member's rank (0 for the lowest score) in the sorted set
// at key; ErrNil when the member or the key is missing.
func (c *Client) ZRank(ctx context.Context, key, member string) (int64, error) {
	c.words(command.OpZRank, key)
	defer c.mu.Unlock()
	c.args = append(c.args, bytesOf(member))
	return c.argsInt(ctx)
}

// ZIncrBy adds incr to member's score in the sorted set at key (a missing
// member starts at 0) and returns the new score.
func (c *Client) ZIncrBy(ctx context.Context, key string, incr float64, member string) (float64, error) {
	c.words(command.OpZIncrBy, key)
	defer c.mu.Unlock()
	c.args = append(c.args, c.appendScore(incr), bytesOf(member))
	return c.argsDouble(ctx)
}

// ZRangeBy bounds a ZRangeByScore: Min and Max in ZRANGEBYSCORE's syntax
// ("1.5", "(1.5" for an open bound, "-inf", "+inf"), and with Count > 0
// LIMIT Offset Count.
type ZRangeBy struct {
	Min, Max      string
	Offset, Count int64
}

// ZRangeByScore returns the members whose scores are within by's bounds,
// lowest score first.
func (c *Client) ZRangeByScore(ctx context.Context, key string, by ZRangeBy) ([][]byte, error) {
	c.zRangeByScore(key, by, false)
	defer c.mu.Unlock()
	return c.bulks(ctx)
}

// ZRangeByScoreWithScores is ZRangeByScore WITHSCORES: the members and
// their scores.
func (c *Client) ZRangeByScoreWithScores(ctx context.Context, key string, by ZRangeBy) ([]Z, error) {
	c.zRangeByScore(key, by, true)
	defer c.mu.Unlock()
	return c.zs(ctx)
}

func (c *Client) zRangeByScore(key string, by ZRangeBy, withScores bool) {
	c.words(command.OpZRangeByScore, key)
	c.args = append(c.args, bytesOf(by.Min), bytesOf(by.Max))
	if withScores {
		c.args = append(c.args, bytesOf("WITHSCORES"))
	}
	if by.Count > 0 {
		c.args = append(c.args, bytesOf("LIMIT"), c.appendNum(by.Offset), c.appendNum(by.Count))
	}
}

// BLPop pops the first element of the first non-empty list of keys,
// waiting up to timeout (0: for ever) for one to be pushed, and returns
// the key it came from and the element; ErrNil when the time ran out.
// It waits on every transport (the server parks the request without
// blocking its loop); inside MULTI the answer comes at once
// (docs/commands.md). A ctx deadline shorter than timeout ends the wait
// with a timeout error and drops the connection, whose answer is owed.
func (c *Client) BLPop(ctx context.Context, timeout time.Duration, keys ...string) (string, []byte, error) {
	return c.blockingPop(ctx, command.OpBLPop, timeout, keys)
}

// BRPop is BLPop from the lists' tails.
func (c *Client) BRPop(ctx context.Context, timeout time.Duration, keys ...string) (string, []byte, error) {
	return c.blockingPop(ctx, command.OpBRPop, timeout, keys)
}

func (c *Client) blockingPop(ctx context.Context, op command.Op, timeout time.Duration, keys []string) (string, []byte, error) {
	if len(keys) == 0 {
		return "", nil, fmt.Errorf("client: %s needs a key", command.Name(op))
	}
	c.words(op, keys[0])
	defer c.mu.Unlock()
	for _, k := range keys[1:] {
		c.args = append(c.args, bytesOf(k))
	}
	// Seconds, as the shortest decimal: BLPOP reads a float.
	start := len(c.num)
	c.num = strconv.AppendFloat(c.num, timeout.Seconds(), 'f', -1, 64)
	c.args = append(c.args, c.num[start:len(c.num):len(c.num)])
	r, err := c.argsReply(ctx)
	if err != nil {
		return "", nil, err
	}
	if r.kind != KindArray {
		return "", nil, r.err("array")
	}
	if len(r.elems) != 2 || r.elems[0].kind != KindBulk || r.elems[1].kind != KindBulk {
		return "", nil, fmt.Errorf("%w: %s answered %d elements, want key and value", ErrUnexpectedReply, command.Name(op), len(r.elems))
	}
	return string(r.elems[0].str), append([]byte{}, r.elems[1].str...), nil
}

// argsBool runs the request and reads a RESP3 boolean or a 0/1 integer.
func (c *Client) argsBool(ctx context.Context) (bool, error) {
	r, err := c.argsReply(ctx)
	if err != nil {
		return false, err
	}
	if r.kind == KindBool {
		return r.n != 0, nil
	}
	n, err := r.intOrErr()
	return n == 1, err
}

// argsDouble runs the request and reads a score (a bulk string or a RESP3 double).
func (c *Client) argsDouble(ctx context.Context) (float64, error) {
	r, err := c.argsReply(ctx)
	if err != nil {
		return 0, err
	}
	if r.kind != KindBulk && r.kind != KindDouble {
		return 0, r.err("double")
	}
	return parseDouble(r.str), nil
}

// zs runs the request and reads member/score pairs.
func (c *Client) zs(ctx context.Context) ([]Z, error) {
	r, err := c.argsReply(ctx)
	if err != nil {
		return nil, err
	}
	flat, err := pairs(r, "array")
	if err != nil {
		return nil, err
	}
	out := make([]Z, 0, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		out = append(out, Z{Member: string(flat[i].str), Score: parseDouble(flat[i+1].str)})
	}
	return out, nil
}
