package client

import (
	"bytes"
	"fmt"
	"strconv"
)

// respCodec speaks RESP2: requests are arrays of bulk strings, replies are
// parsed in place from the read buffer and need no allocation unless they
// nest arrays.
type respCodec struct{}

func (respCodec) appendRequest(dst []byte, args [][]byte, _ uint64) ([]byte, error) {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(len(args)), 10)
	dst = append(dst, '\r', '\n')
	for _, a := range args {
		dst = append(dst, '$')
		dst = strconv.AppendInt(dst, int64(len(a)), 10)
		dst = append(dst, '\r', '\n')
		dst = append(dst, a...)
		dst = append(dst, '\r', '\n')
	}
	return dst, nil
}

// Limits that mark a reply as malformed rather than merely large.
const (
	maxBulkLen  = 1 << 30
	maxArrayLen = 1 << 24
	maxDepth    = 16
	maxLineLen  = 64 << 10
)

func (c respCodec) parseReply(buf []byte, r *reply) (int, error) {
	return c.parse(buf, r, 0)
}

// parse decodes one reply at the start of buf into r. It returns the
// number of bytes used, or 0 when buf does not yet hold a whole reply.
func (c respCodec) parse(buf []byte, r *reply, depth int) (int, error) {
	if depth > maxDepth {
		return 0, fmt.Errorf("%w: replies nested deeper than %d", ErrProtocol, maxDepth)
	}
	line, n, err := respLine(buf)
	if n == 0 {
		return 0, err
	}
	r.reset()
	switch line[0] {
	case '+':
		r.kind, r.str = KindStatus, line[1:]
		return n, nil
	case '-':
		r.kind, r.str = KindError, line[1:]
		return n, nil
	case ':':
		v, err := respInt(line[1:])
		if err != nil {
			return 0, err
		}
		r.kind, r.n = KindInt, v
		return n, nil
	case '$':
		l, err := respInt(line[1:])
		if err != nil {
			return 0, err
		}
		if l < 0 {
			r.kind = KindNil
			return n, nil
		}
		if l > maxBulkLen {
			return 0, fmt.Errorf("%w: bulk length %d exceeds %d", ErrProtocol, l, maxBulkLen)
		}
		end := n + int(l)
		if len(buf) < end+2 {
			return 0, nil
		}
		if buf[end] != '\r' || buf[end+1] != '\n' {
			return 0, fmt.Errorf("%w: bulk string not terminated by CRLF", ErrProtocol)
		}
		r.kind, r.str = KindBulk, buf[n:end]
		return end + 2, nil
	case '*':
		l, err := respInt(line[1:])
		if err != nil {
			return 0, err
		}
		if l < 0 {
			r.kind = KindNil
			return n, nil
		}
		if l > maxArrayLen {
			return 0, fmt.Errorf("%w: array length %d exceeds %d", ErrProtocol, l, maxArrayLen)
		}
		r.kind = KindArray
		if cap(r.elems) < int(l) {
			r.elems = make([]reply, l)
		}
		r.elems = r.elems[:l]
		off := n
		for i := range r.elems {
			m, err := c.parse(buf[off:], &r.elems[i], depth+1)
			if m == 0 || err != nil {
				return 0, err
			}
			off += m
		}
		return off, nil
	}
	return 0, fmt.Errorf("%w: unexpected reply type %q", ErrProtocol, line[0])
}

// respLine returns the line at the start of buf without its CRLF and the
// length including it, or n == 0 when no full line has arrived yet.
func respLine(buf []byte) (line []byte, n int, err error) {
	i := bytes.IndexByte(buf, '\n')
	switch {
	case i < 0:
		if len(buf) > maxLineLen {
			return nil, 0, fmt.Errorf("%w: reply line longer than %d bytes", ErrProtocol, maxLineLen)
		}
		return nil, 0, nil
	case i == 0 || buf[i-1] != '\r':
		return nil, 0, fmt.Errorf("%w: reply line not terminated by CRLF", ErrProtocol)
	case i == 1:
		return nil, 0, fmt.Errorf("%w: empty reply line", ErrProtocol)
	}
	return buf[:i-1], i + 1, nil
}

func respInt(b []byte) (int64, error) {
	if len(b) == 0 || len(b) > 20 {
		return 0, fmt.Errorf("%w: bad integer %q", ErrProtocol, b)
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
		if len(b) == 0 {
			return 0, fmt.Errorf("%w: bad integer \"-\"", ErrProtocol)
		}
	}
	var v uint64
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, fmt.Errorf("%w: bad integer %q", ErrProtocol, b)
		}
		nv := v*10 + uint64(ch-'0')
		if nv < v || nv > 1<<63 {
			return 0, fmt.Errorf("%w: integer %q out of range", ErrProtocol, b)
		}
		v = nv
	}
	if neg {
		return -int64(v), nil
	}
	if v > 1<<63-1 {
		return 0, fmt.Errorf("%w: integer %q out of range", ErrProtocol, b)
	}
	return int64(v), nil
}
