package client

import (
	"fmt"
	"strconv"

	"github.com/goblin-kv/goblin/proto/resp"
)

// Kind is the type of a reply.
type Kind uint8

// The reply kinds both protocols share.
const (
	KindNil    Kind = iota // no value: a missing key, an unmet condition
	KindStatus             // a status line such as OK or PONG
	KindBulk               // a byte string
	KindInt                // an integer
	KindArray              // a list of replies
	KindError              // an error reply
)

func (k Kind) String() string {
	switch k {
	case KindNil:
		return "nil"
	case KindStatus:
		return "status"
	case KindBulk:
		return "bulk"
	case KindInt:
		return "integer"
	case KindArray:
		return "array"
	case KindError:
		return "error"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// result is a decoded reply whose bytes alias the client's read buffer.
type result struct {
	kind  Kind
	str   []byte
	n     int64
	elems []result
}

func (r *result) reset() {
	r.kind, r.str, r.n, r.elems = KindNil, nil, 0, r.elems[:0]
}

// err returns the error a reply of an unwanted kind stands for.
func (r *result) err(want string) error {
	switch r.kind {
	case KindError:
		return newServerError(r.str)
	case KindNil:
		return ErrNil
	}
	return fmt.Errorf("%w: got %v, want %s", ErrUnexpectedReply, r.kind, want)
}

// okOrErr accepts any status reply.
func (r *result) okOrErr() error {
	if r.kind == KindStatus {
		return nil
	}
	return r.err("status")
}

func (r *result) intOrErr() (int64, error) {
	if r.kind == KindInt {
		return r.n, nil
	}
	return 0, r.err("integer")
}

// value copies r out of the read buffer.
func (r *result) value() Value {
	v := Value{Kind: r.kind, Int: r.n}
	switch r.kind {
	case KindStatus, KindBulk:
		v.Str = append([]byte{}, r.str...)
	case KindError:
		v.Err = newServerError(r.str)
	case KindArray:
		v.Array = make([]Value, len(r.elems))
		for i := range r.elems {
			v.Array[i] = r.elems[i].value()
		}
	}
	return v
}

// Value is a reply returned by Do and Pipeline.Exec, copied out of the
// client's buffers.
type Value struct {
	Kind  Kind
	Str   []byte       // KindStatus, KindBulk
	Int   int64        // KindInt
	Array []Value      // KindArray
	Err   *ServerError // KindError
}

// String renders v the way redis-cli does: (nil), (integer) 1, "quoted"
// bulk strings, bare status lines, (error) messages and numbered arrays.
func (v Value) String() string {
	return string(v.AppendText(nil, ""))
}

// AppendText appends v's redis-cli-style rendering to dst; indent prefixes
// the continuation lines of arrays.
func (v Value) AppendText(dst []byte, indent string) []byte {
	switch v.Kind {
	case KindNil:
		return append(dst, "(nil)"...)
	case KindStatus:
		return append(dst, v.Str...)
	case KindBulk:
		return Quote(dst, v.Str)
	case KindInt:
		dst = append(dst, "(integer) "...)
		return strconv.AppendInt(dst, v.Int, 10)
	case KindError:
		dst = append(dst, "(error)"...)
		if v.Err != nil {
			dst = append(dst, ' ')
			dst = append(dst, v.Err.Message...)
		}
		return dst
	case KindArray:
		if len(v.Array) == 0 {
			return append(dst, "(empty array)"...)
		}
		w := len(strconv.Itoa(len(v.Array)))
		for i, e := range v.Array {
			if i > 0 {
				dst = append(dst, '\n')
				dst = append(dst, indent...)
			}
			num := strconv.Itoa(i + 1)
			for j := len(num); j < w; j++ {
				dst = append(dst, ' ')
			}
			dst = append(dst, num...)
			dst = append(dst, ") "...)
			dst = e.AppendText(dst, indent+spaces(w+2))
		}
		return dst
	}
	return append(dst, "(unknown)"...)
}

func spaces(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = ' '
	}
	return string(b)
}

// Quote appends b as a double-quoted string the way redis-cli prints bulk
// replies: printable ASCII as is, \n \r \t \a \b \" \\ escaped, other bytes
// as \xHH (resp.AppendQuoted).
func Quote(dst, b []byte) []byte { return resp.AppendQuoted(dst, b) }
