package client

import (
	"context"
	"fmt"
	"strconv"
)

// Do sends any command, e.g. c.Do(ctx, "SET", "k", "v", "EX", 10), and
// returns its reply copied into a Value. Arguments may be string, []byte,
// any integer type, float64, bool or fmt.Stringer. An error reply is
// returned both as the Value (KindError) and as a *ServerError.
func (c *Client) Do(ctx context.Context, args ...any) (Value, error) {
	if len(args) == 0 {
		return Value{}, fmt.Errorf("client: Do needs a command name")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.doLocked(ctx, args)
}

// doLocked is Do for a caller that holds c.mu.
func (c *Client) doLocked(ctx context.Context, args []any) (Value, error) {
	c.args, c.num = c.args[:0], c.num[:0]
	for _, a := range args {
		b, err := c.formatArg(a)
		if err != nil {
			return Value{}, err
		}
		c.args = append(c.args, b)
	}
	if err := modeCommand(c.args); err != nil {
		return Value{}, err
	}
	if err := c.multiLost(); err != nil {
		return Value{}, err
	}
	ch, changes := changeOf(c.args)
	w := multiWordOf(c.args)
	r, err := c.exec(ctx)
	if err != nil {
		if w == wordExec || w == wordDiscard {
			// The transaction's fate is this error's; the next command
			// starts afresh.
			c.multi = multiState{changes: c.multi.changes[:0]}
		}
		return Value{}, err
	}
	v := r.value()
	c.track(w, ch, changes, &v)
	if v.Kind == KindError {
		return v, v.Err
	}
	return v, nil
}

// formatArg turns one Do argument into bytes.
func (c *Client) formatArg(a any) ([]byte, error) {
	start := len(c.num)
	switch v := a.(type) {
	case string:
		return bytesOf(v), nil
	case []byte:
		return v, nil
	case int:
		return c.appendNum(int64(v)), nil
	case int64:
		return c.appendNum(v), nil
	case int32:
		return c.appendNum(int64(v)), nil
	case uint:
		c.num = strconv.AppendUint(c.num, uint64(v), 10)
	case uint64:
		c.num = strconv.AppendUint(c.num, v, 10)
	case uint32:
		c.num = strconv.AppendUint(c.num, uint64(v), 10)
	case float64:
		c.num = strconv.AppendFloat(c.num, v, 'f', -1, 64)
	case bool:
		if v {
			c.num = append(c.num, '1')
		} else {
			c.num = append(c.num, '0')
		}
	case fmt.Stringer:
		return []byte(v.String()), nil
	default:
		return nil, fmt.Errorf("client: cannot send argument of type %T", a)
	}
	return c.num[start:len(c.num):len(c.num)], nil
}
