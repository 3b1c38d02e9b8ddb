package client

import (
	"fmt"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/argv"
	"github.com/goblin-kv/goblin/proto/resp"
)

// respCodec speaks RESP2 through package proto/resp: requests are arrays
// of bulk strings (a typed call's request written in Redis syntax by
// proto/argv), replies are parsed in place from the read buffer and need
// no allocation unless they hold arrays larger than any seen before.
type respCodec struct {
	enc argv.Encoder
}

func (*respCodec) reset() {}

func (*respCodec) appendRequest(dst []byte, args [][]byte, _ uint64) ([]byte, error) {
	return resp.AppendCommand(dst, args...), nil
}

func (c *respCodec) appendTyped(dst []byte, r *command.Request) ([]byte, error) {
	// A depth-one PING, GET or SET without options is written directly:
	// the bytes Words and AppendCommand make of it
	// (TestRESPAppendHotMatchesWords), without the argument vector.
	switch r.Op {
	case command.OpPing:
		if len(r.Args) == 0 {
			return append(dst, "*1\r\n$4\r\nPING\r\n"...), nil
		}
	case command.OpGet:
		return appendHotBulk(append(dst, "*2\r\n$3\r\nGET\r\n"...), r.Key), nil
	case command.OpSet:
		if r.Flags&(command.FlagNX|command.FlagXX|command.FlagKeepTTL|command.FlagGet) == 0 && r.Expiry == command.ExpiryNone {
			return appendHotBulk(appendHotBulk(append(dst, "*3\r\n$3\r\nSET\r\n"...), r.Key), r.Value), nil
		}
	}
	words, err := c.enc.Words(r)
	if err != nil {
		return dst, err
	}
	return resp.AppendCommand(dst, words...), nil
}

// appendHotBulk is resp.AppendBulk with a length below 100 written as
// its digits directly (a key or a small value), not through
// strconv.AppendInt.
func appendHotBulk(dst, v []byte) []byte {
	switch n := len(v); {
	case n < 10:
		dst = append(dst, '$', byte('0'+n), '\r', '\n')
	case n < 100:
		dst = append(dst, '$', byte('0'+n/10), byte('0'+n%10), '\r', '\n')
	default:
		return resp.AppendBulk(dst, v)
	}
	dst = append(dst, v...)
	return append(dst, '\r', '\n')
}

// Limits that mark a reply as malformed rather than merely large.
const (
	maxArrayLen = 1 << 24
	maxDepth    = 16
	// maxPendingReply bounds the bytes the client buffers for one reply
	// that has not completed yet (a bulk of up to 1 GiB plus its header).
	maxPendingReply = 1<<30 + 64<<10
)

func (c *respCodec) parseReply(buf []byte, r *result) (int, error) {
	if n := parseHot(buf, r); n > 0 {
		return n, nil
	}
	return c.parse(buf, r, 0)
}

// parseHot reads the replies of a depth-one PING, GET or SET in one pass:
// a status ("+PONG", "+OK"), a bulk string of up to 99 bytes or a nil
// bulk, complete in buf. It returns 0, with r untouched, for anything else
// or anything it would have to look at twice (a CR inside the line, a
// length of three digits or more, a malformed or incomplete reply), which
// parse then reads: where parseHot reads a reply, it leaves r as parse
// does (TestRESPParseHotMatchesParse).
func parseHot(buf []byte, r *result) int {
	if len(buf) < 4 {
		return 0
	}
	switch buf[0] {
	case '+':
		// A short status: its CRLF within the first 16 bytes.
		for i := 1; i < len(buf)-1 && i < 16; i++ {
			switch buf[i] {
			case '\r':
				if buf[i+1] != '\n' {
					return 0
				}
				r.reset()
				r.kind, r.str = KindStatus, buf[1:i]
				return i + 2
			case '\n':
				return 0
			}
		}
		return 0
	case '$':
		var n, next int
		switch d := buf[1]; {
		case d == '-':
			if buf[2] == '1' && len(buf) >= 5 && buf[3] == '\r' && buf[4] == '\n' {
				r.reset() // kind nil
				return 5
			}
			return 0
		case d == '0' && buf[2] == '\r':
			n, next = 0, 2
		case d >= '1' && d <= '9' && buf[2] == '\r':
			n, next = int(d-'0'), 2
		case d >= '1' && d <= '9' && buf[2] >= '0' && buf[2] <= '9' && len(buf) >= 5 && buf[3] == '\r':
			n, next = int(d-'0')*10+int(buf[2]-'0'), 3
		default:
			return 0
		}
		if buf[next+1] != '\n' {
			return 0
		}
		start := next + 2
		end := start + n
		if end+2 > len(buf) || buf[end] != '\r' || buf[end+1] != '\n' {
			return 0
		}
		r.reset()
		r.kind, r.str = KindBulk, buf[start:end:end]
		return end + 2
	}
	return 0
}

// parse decodes one reply at the start of buf into r. It returns the
// number of bytes used, or 0 when buf does not yet hold a whole reply.
// RESP3's types are accepted whatever the connection's protocol: a
// connection that sent HELLO 3 gets them.
func (c *respCodec) parse(buf []byte, r *result, depth int) (int, error) {
	if depth > maxDepth {
		return 0, fmt.Errorf("%w: replies nested deeper than %d", ErrProtocol, maxDepth)
	}
	if len(buf) > 0 {
		switch resp.Type(buf[0]) {
		case resp.SimpleString, resp.Error, resp.Integer, resp.BulkString, resp.Array,
			resp.Null, resp.Boolean, resp.Double, resp.BigNumber, resp.BlobError, resp.Verbatim,
			resp.Map, resp.Set, resp.Push, resp.Attribute:
		default: // fail now rather than wait for a line end that may never come
			return 0, fmt.Errorf("%w: unexpected reply type %q", ErrProtocol, buf[0])
		}
	}
	el, n, err := resp.ReadReply(buf)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrProtocol, err)
	}
	if n == 0 {
		return 0, nil
	}
	r.reset()
	switch el.Type {
	case resp.SimpleString:
		r.kind, r.str = KindStatus, el.Data
	case resp.Error, resp.BlobError:
		r.kind, r.str = KindError, el.Data
	case resp.Integer:
		r.kind, r.n = KindInt, el.Int
	case resp.Null:
		r.kind = KindNil
	case resp.Boolean:
		r.kind, r.n = KindBool, el.Int
	case resp.Double:
		r.kind, r.str = KindDouble, el.Data
	case resp.BigNumber:
		r.kind, r.str = KindBigNumber, el.Data
	case resp.Verbatim:
		r.kind, r.str = KindVerbatim, el.Data
	case resp.BulkString:
		if el.Null {
			r.kind = KindNil
		} else {
			r.kind, r.str = KindBulk, el.Data
		}
	case resp.Attribute:
		// The attribute's pairs, then the reply they describe, which r
		// becomes (carrying the pairs).
		var attrs []result
		off, err := c.parseElems(buf, n, &attrs, el.Children(), depth)
		if off == 0 || err != nil {
			return 0, err
		}
		m, err := c.parse(buf[off:], r, depth+1)
		if m == 0 || err != nil {
			return 0, err
		}
		r.attrs = attrs
		return off + m, nil
	case resp.Array, resp.Map, resp.Set, resp.Push:
		if el.Null {
			r.kind = KindNil
			return n, nil
		}
		switch el.Type {
		case resp.Array:
			r.kind = KindArray
		case resp.Map:
			r.kind = KindMap
		case resp.Set:
			r.kind = KindSet
		default:
			r.kind = KindPush
		}
		return c.parseElems(buf, n, &r.elems, el.Children(), depth)
	default:
		return 0, fmt.Errorf("%w: unexpected reply type %q", ErrProtocol, el.Type)
	}
	return n, nil
}

// parseElems decodes k elements from buf[off:] into *elems, reusing its
// storage, and returns the offset after the last, or 0 when buf does not
// yet hold them all.
func (c *respCodec) parseElems(buf []byte, off int, elems *[]result, k int64, depth int) (int, error) {
	if k < 0 || k > maxArrayLen {
		return 0, fmt.Errorf("%w: aggregate of %d elements exceeds %d", ErrProtocol, k, maxArrayLen)
	}
	if int64(cap(*elems)) < k {
		*elems = make([]result, k)
	}
	*elems = (*elems)[:k]
	for i := range *elems {
		m, err := c.parse(buf[off:], &(*elems)[i], depth+1)
		if m == 0 || err != nil {
			return 0, err
		}
		off += m
	}
	return off, nil
}
