package client

import (
	"fmt"
	"math"
	"strconv"

	"github.com/goblin-kv/goblin/proto/resp"
)

// Kind is the type of a reply.
type Kind uint8

// The reply kinds both protocols share.
const (
	KindNil    Kind = iota // no value: a missing key, an unmet condition (RESP3's null too)
	KindStatus             // a status line such as OK or PONG
	KindBulk               // a byte string
	KindInt                // an integer
	KindArray              // a list of replies
	KindError              // an error reply (RESP3's blob error too)
)

// The kinds only RESP3 replies have (Options.Protocol 3, or HELLO 3 sent
// with Do).
const (
	KindDouble    Kind = iota + 16 // a floating-point number: Float, and its text in Str
	KindBool                       // true or false: Int is 1 or 0
	KindBigNumber                  // an integer of any size: its decimal digits in Str
	KindVerbatim                   // text with a format: Str, and Format ("txt" or "mkd")
	KindMap                        // key/value pairs: Array holds key, value, key, value...
	KindSet                        // an unordered collection: Array
	KindPush                       // out-of-band data (pub/sub, invalidation): Array
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
	case KindDouble:
		return "double"
	case KindBool:
		return "boolean"
	case KindBigNumber:
		return "big number"
	case KindVerbatim:
		return "verbatim"
	case KindMap:
		return "map"
	case KindSet:
		return "set"
	case KindPush:
		return "push"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// result is a decoded reply whose bytes alias the client's read buffer.
type result struct {
	kind  Kind
	str   []byte
	n     int64
	elems []result
	attrs []result // a RESP3 attribute's key/value pairs sent before the reply
}

func (r *result) reset() {
	r.kind, r.str, r.n, r.elems, r.attrs = KindNil, nil, 0, r.elems[:0], r.attrs[:0]
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
	case KindStatus, KindBulk, KindBigNumber:
		v.Str = append([]byte{}, r.str...)
	case KindDouble:
		v.Str = append([]byte{}, r.str...)
		v.Float = parseDouble(r.str)
	case KindVerbatim:
		// The payload is "fmt:text": three letters of format, a colon.
		if len(r.str) >= 4 && r.str[3] == ':' {
			v.Format, v.Str = string(r.str[:3]), append([]byte{}, r.str[4:]...)
		} else {
			v.Str = append([]byte{}, r.str...)
		}
	case KindError:
		v.Err = newServerError(r.str)
	case KindArray, KindMap, KindSet, KindPush:
		v.Array = make([]Value, len(r.elems))
		for i := range r.elems {
			v.Array[i] = r.elems[i].value()
		}
	}
	if len(r.attrs) > 0 {
		v.Attrs = make([]Value, len(r.attrs))
		for i := range r.attrs {
			v.Attrs[i] = r.attrs[i].value()
		}
	}
	return v
}

// parseDouble reads a RESP3 double's text: a decimal number, inf, -inf or
// nan (the protocol's spellings, which strconv also accepts).
func parseDouble(b []byte) float64 {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return math.NaN()
	}
	return f
}

// Value is a reply returned by Do and Pipeline.Exec, copied out of the
// client's buffers.
type Value struct {
	Kind   Kind
	Str    []byte       // KindStatus, KindBulk, KindVerbatim; the text of KindDouble and KindBigNumber
	Int    int64        // KindInt; KindBool (1 true, 0 false)
	Float  float64      // KindDouble
	Format string       // KindVerbatim: "txt" or "mkd"
	Array  []Value      // KindArray, KindSet, KindPush; KindMap as key, value, key, value...
	Err    *ServerError // KindError
	// Attrs are the key/value pairs of a RESP3 attribute the server sent
	// before this reply (key, value, key, value...), or nil.
	Attrs []Value
}

// String renders v the way redis-cli does (with -3 for RESP3's kinds):
// (nil), (integer) 1, "quoted" bulk strings, bare status lines, (error)
// messages, numbered arrays, (double) 1.5, (true), (big number) 123,
// verbatim text as it is, "1# key => value" maps and "1~ member" sets.
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
	case KindDouble:
		dst = append(dst, "(double) "...)
		return append(dst, v.Str...)
	case KindBigNumber:
		dst = append(dst, "(big number) "...)
		return append(dst, v.Str...)
	case KindBool:
		if v.Int != 0 {
			return append(dst, "(true)"...)
		}
		return append(dst, "(false)"...)
	case KindVerbatim:
		return append(dst, v.Str...)
	case KindArray, KindMap, KindSet, KindPush:
		return v.appendAggregate(dst, indent)
	}
	return append(dst, "(unknown)"...)
}

// appendAggregate renders an array, map, set or push as redis-cli does:
// numbered "1)" for arrays and pushes, "1~" for sets and "1# key =>
// value" for maps, nested aggregates indented under their number.
func (v Value) appendAggregate(dst []byte, indent string) []byte {
	n, sep, empty := len(v.Array), byte(')'), "(empty array)"
	switch v.Kind {
	case KindMap:
		n, sep, empty = n/2, '#', "(empty hash)"
	case KindSet:
		sep, empty = '~', "(empty set)"
	case KindPush:
		empty = "(empty push)"
	}
	if n == 0 {
		return append(dst, empty...)
	}
	w := len(strconv.Itoa(n))
	inner := indent + spaces(w+2)
	for i := 0; i < n; i++ {
		if i > 0 {
			dst = append(dst, '\n')
			dst = append(dst, indent...)
		}
		num := strconv.Itoa(i + 1)
		for j := len(num); j < w; j++ {
			dst = append(dst, ' ')
		}
		dst = append(dst, num...)
		dst = append(dst, sep, ' ')
		if v.Kind == KindMap {
			dst = v.Array[2*i].AppendText(dst, inner)
			dst = append(dst, " => "...)
			dst = v.Array[2*i+1].AppendText(dst, inner)
		} else {
			dst = v.Array[i].AppendText(dst, inner)
		}
	}
	return dst
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
