package resp

import (
	"bytes"
	"errors"
	"fmt"
	"math"
)

// AppendCommand appends a command as a multi-bulk request, the form every
// Redis client sends: *<n>\r\n then each argument as a bulk string.
func AppendCommand(dst []byte, args ...[]byte) []byte {
	dst = AppendArray(dst, len(args))
	for _, a := range args {
		dst = AppendBulk(dst, a)
	}
	return dst
}

// AppendCommandString is AppendCommand for string arguments.
func AppendCommandString(dst []byte, args ...string) []byte {
	dst = AppendArray(dst, len(args))
	for _, a := range args {
		dst = AppendBulkString(dst, a)
	}
	return dst
}

// Type is the first byte of a reply element.
type Type byte

// The RESP2 reply types.
const (
	SimpleString Type = '+'
	Error        Type = '-'
	Integer      Type = ':'
	BulkString   Type = '$'
	Array        Type = '*'
)

// The types RESP3 adds (a connection that sent HELLO 3 gets them).
const (
	Null      Type = '_' // Null is set
	Boolean   Type = '#' // Int is 1 or 0
	Double    Type = ',' // Data is the number's text: 1.5, inf, -inf, nan
	BigNumber Type = '(' // Data is the number's decimal digits
	BlobError Type = '!' // Data is the error text, as for Error
	Verbatim  Type = '=' // Data is "txt:..." or "mkd:...": the format, a colon, the text
	Map       Type = '%' // Int key/value pairs follow, 2*Int elements
	Set       Type = '~' // Int elements follow
	Push      Type = '>' // Int elements follow: out-of-band data
	Attribute Type = '|' // Int key/value pairs follow, then the reply they describe
)

// Children returns how many elements follow an aggregate header r (2*Int
// for a map or an attribute; an attribute is followed by its reply too,
// which is not counted here), or 0 for other types.
func (r Reply) Children() int64 {
	switch r.Type {
	case Array, Set, Push:
		if r.Null {
			return 0
		}
		return r.Int
	case Map, Attribute:
		return 2 * r.Int
	}
	return 0
}

// Reply is one parsed reply element. Data points into the buffer ReadReply
// was given.
type Reply struct {
	Type Type
	// Data is the text of a simple string or error, or a bulk string's
	// bytes.
	Data []byte
	// Int is an integer reply's value, an array's, set's or push's
	// element count, a map's or attribute's pair count, or a boolean
	// (1 or 0).
	Int int64
	// Null is set for the null bulk string ($-1), the null array (*-1)
	// and RESP3's null (_).
	Null bool
}

// ErrMalformedReply is wrapped by the errors ReadReply and ReplySize return
// for bytes that are not a RESP2 or RESP3 reply.
var ErrMalformedReply = errors.New("resp: malformed reply")

// ReadReply parses one reply element, RESP2 or RESP3, from the front of
// buf. For an aggregate (array, map, set, push, attribute) it returns the
// header (Children elements follow as further elements). n == 0 with
// a nil error means buf holds only part of the element.
func ReadReply(buf []byte) (r Reply, n int, err error) {
	if len(buf) == 0 {
		return r, 0, nil
	}
	line, next, ok := readLine(buf, 1)
	if !ok {
		return r, 0, nil
	}
	if bytes.IndexByte(line, '\r') >= 0 {
		return Reply{}, 0, fmt.Errorf("%w: CR without LF", ErrMalformedReply)
	}
	r.Type = Type(buf[0])
	switch r.Type {
	case SimpleString, Error, Double, BigNumber:
		r.Data = line
		return r, next, nil
	case Null:
		if len(line) != 0 {
			return Reply{}, 0, fmt.Errorf("%w: bad null %q", ErrMalformedReply, line)
		}
		r.Null = true
		return r, next, nil
	case Boolean:
		switch string(line) {
		case "t":
			r.Int = 1
		case "f":
		default:
			return Reply{}, 0, fmt.Errorf("%w: bad boolean %q", ErrMalformedReply, line)
		}
		return r, next, nil
	case Map, Set, Push, Attribute:
		v, ok := ParseInt(line)
		// A map or attribute counts pairs, so Children doubles it: a count
		// past MaxInt64/2 would wrap negative there and reach a caller's
		// slice bound.
		if !ok || v < 0 || ((r.Type == Map || r.Type == Attribute) && v > math.MaxInt64/2) {
			return Reply{}, 0, fmt.Errorf("%w: bad length %q", ErrMalformedReply, line)
		}
		r.Int = v
		return r, next, nil
	case Integer:
		v, ok := ParseInt(line)
		if !ok {
			return Reply{}, 0, fmt.Errorf("%w: bad integer %q", ErrMalformedReply, line)
		}
		r.Int = v
		return r, next, nil
	case BulkString, Array, BlobError, Verbatim:
		v, ok := ParseInt(line)
		if !ok || v < -1 || (v == -1 && (r.Type == BlobError || r.Type == Verbatim)) {
			return Reply{}, 0, fmt.Errorf("%w: bad length %q", ErrMalformedReply, line)
		}
		if v == -1 {
			r.Null = true
			r.Int = -1
			return r, next, nil
		}
		if r.Type == Array {
			r.Int = v
			return r, next, nil
		}
		end := next + int(v)
		if end < next || end+2 > len(buf) {
			return Reply{}, 0, nil
		}
		if buf[end] != '\r' || buf[end+1] != '\n' {
			return Reply{}, 0, fmt.Errorf("%w: bulk string not followed by CRLF", ErrMalformedReply)
		}
		r.Data = buf[next:end:end]
		return r, end + 2, nil
	}
	return Reply{}, 0, fmt.Errorf("%w: unknown type byte %q", ErrMalformedReply, buf[0])
}

// readLine returns the bytes from start up to a CRLF and the position after
// it; ok is false when the CRLF has not arrived yet. Like Redis, a header
// line must end in CRLF: a CR followed by anything else makes the line end
// there with the stray byte included, so that parsing it fails the same way
// however the bytes are split (Parser.line does the same, resumably).
func readLine(buf []byte, start int) (line []byte, next int, ok bool) {
	i := bytes.IndexByte(buf[start:], '\r')
	if i < 0 || start+i+1 >= len(buf) {
		return nil, 0, false
	}
	if buf[start+i+1] != '\n' {
		return buf[start : start+i+2], start + i + 2, true
	}
	return buf[start : start+i], start + i + 2, true
}

// ReplySize returns the length of the one complete reply at the front of
// buf, every element of nested arrays included, or 0 when more bytes are
// needed. A client reads until ReplySize > 0, then walks the reply with
// ReadReply.
func ReplySize(buf []byte) (int, error) {
	pos := 0
	pending := int64(1)
	for pending > 0 {
		r, n, err := ReadReply(buf[pos:])
		if err != nil || n == 0 {
			return 0, err
		}
		pos += n
		pending--
		if k := r.Children(); k > 0 {
			if k > int64(len(buf)) { // each element takes at least 3 bytes
				return 0, nil
			}
			pending += k
		}
		if r.Type == Attribute {
			pending++ // the reply the attribute describes
		}
	}
	return pos, nil
}
