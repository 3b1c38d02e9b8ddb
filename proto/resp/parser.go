package resp

import (
	"errors"
	"math"
)

// Default limits, the same as Redis's defaults.
const (
	// DefaultMaxBulkLen is the largest bulk string a command may carry
	// (Redis's proto-max-bulk-len).
	DefaultMaxBulkLen = 512 << 20
	// DefaultMaxArgs is the largest multi-bulk count (Redis allows 1024*1024).
	DefaultMaxArgs = 1024 * 1024
	// DefaultMaxInlineLen is the longest inline command line and the longest
	// "*<count>" or "$<len>" header line (Redis's PROTO_INLINE_MAX_SIZE).
	DefaultMaxInlineLen = 64 << 10
)

// Limits bounds what one command may hold. The zero value means the
// defaults above.
type Limits struct {
	MaxBulkLen   int // largest bulk string; 0 = DefaultMaxBulkLen
	MaxArgs      int // largest multi-bulk count; 0 = DefaultMaxArgs
	MaxInlineLen int // longest inline line or header line; 0 = DefaultMaxInlineLen
}

func (l *Limits) maxBulk() int {
	if l == nil || l.MaxBulkLen <= 0 {
		return DefaultMaxBulkLen
	}
	return l.MaxBulkLen
}

func (l *Limits) maxArgs() int {
	if l == nil || l.MaxArgs <= 0 {
		return DefaultMaxArgs
	}
	return l.MaxArgs
}

func (l *Limits) maxInline() int {
	if l == nil || l.MaxInlineLen <= 0 {
		return DefaultMaxInlineLen
	}
	return l.MaxInlineLen
}

// ErrProtocol is wrapped by every error ReadCommand returns: the frame is
// malformed or breaks a limit, and the connection must be closed after the
// error reply is written.
var ErrProtocol = errors.New("resp: protocol error")

// ProtocolError is a malformed-frame error. Its text is Redis's, e.g.
// "Protocol error: invalid bulk length", so a server answers with
// AppendError(b, "ERR "+err.Error()).
type ProtocolError struct{ Text string }

func (e *ProtocolError) Error() string { return e.Text }

// Is makes errors.Is(err, ErrProtocol) true.
func (e *ProtocolError) Is(target error) bool { return target == ErrProtocol }

// The protocol errors, with Redis 7's wording.
var (
	ErrInvalidBulkLength      = &ProtocolError{"Protocol error: invalid bulk length"}
	ErrInvalidMultibulkLength = &ProtocolError{"Protocol error: invalid multibulk length"}
	ErrBigInline              = &ProtocolError{"Protocol error: too big inline request"}
	ErrBigMultibulkCount      = &ProtocolError{"Protocol error: too big mbulk count string"}
	ErrBigBulkCount           = &ProtocolError{"Protocol error: too big bulk count string"}
	ErrUnbalancedQuotes       = &ProtocolError{"Protocol error: unbalanced quotes in request"}
	// ErrBulkTerminator: a bulk payload not followed by CRLF (Redis skips
	// the two bytes unchecked; goblin refuses the frame).
	ErrBulkTerminator = &ProtocolError{"Protocol error: invalid bulk data terminator"}
	// ErrBigRequest: one command longer than MaxRequestLen bytes.
	ErrBigRequest = &ProtocolError{"Protocol error: request longer than 4 GiB"}
)

func errExpectedDollar(got byte) error {
	return &ProtocolError{"Protocol error: expected '$', got '" + printable(got) + "'"}
}

func printable(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return string(rune(c))
	}
	const hex = "0123456789abcdef"
	return "\\x" + string([]byte{hex[c>>4], hex[c&15]})
}

// ParseInt parses a base-10 int64 the way Redis's string2ll does: an
// optional '-', then digits with no leading zero (only "0" itself), no '+',
// no spaces, no overflow. The RESP parser reads lengths with it, so "*01"
// and "$-0" are protocol errors as they are in Redis, and the command layer
// reads integer arguments with it.
func ParseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || b[0] < '1' || b[0] > '9' {
		return 0, false
	}
	v, ok := ParseDigits(b, 1<<63)
	if !ok {
		return 0, false
	}
	if neg {
		return -int64(v-1) - 1, true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// ParseDigits parses b, decimal digits and nothing else, as a number no
// greater than max. It is small enough to be inlined into ParseInt.
func ParseDigits(b []byte, max uint64) (uint64, bool) {
	var v uint64
	for _, c := range b {
		d := uint64(c - '0') // a byte below '0' wraps round, above 9 too
		if d > 9 || v > (max-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func isHex(c byte) bool {
	_, ok := hexVal(c)
	return ok
}

// SplitArgs splits a command line into arguments as redis-cli does, and as
// the server splits an inline request: words separated by white space;
// "double quotes" take \n \r \t \b \a \" \\ and \xHH escapes; 'single
// quotes' take only \'. A closing quote must be followed by white space or
// the end, or the error is ErrUnbalancedQuotes. It is the allocating twin
// of the inline reader's in-place splitter, for command lines
// (goblin-client's prompt and scripts).
func SplitArgs(line string) ([]string, error) {
	args, err := splitArgs([]byte(line), nil, math.MaxInt)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range args {
		out = append(out, string(a))
	}
	return out, nil
}

// splitArgs splits line into arguments, unescaping quoted ones in place
// (the unescaped text is never longer than the source, so writing at w
// never overtakes reading at r).
func splitArgs(line []byte, out [][]byte, maxArgs int) ([][]byte, error) {
	r := 0
	for {
		for r < len(line) && isSpace(line[r]) {
			r++
		}
		if r == len(line) {
			return out, nil
		}
		if len(out) >= maxArgs {
			return out, ErrInvalidMultibulkLength
		}
		start, w := r, r
		inDouble, inSingle := false, false
		for {
			if inDouble {
				if r >= len(line) {
					return out, ErrUnbalancedQuotes
				}
				c := line[r]
				switch {
				case c == '\\' && r+3 < len(line) && line[r+1] == 'x' && isHex(line[r+2]) && isHex(line[r+3]):
					hi, _ := hexVal(line[r+2])
					lo, _ := hexVal(line[r+3])
					line[w] = hi<<4 | lo
					w++
					r += 4
				case c == '\\' && r+1 < len(line): // \x without two hex digits is x, as in Redis
					r++
					switch line[r] {
					case 'n':
						line[w] = '\n'
					case 'r':
						line[w] = '\r'
					case 't':
						line[w] = '\t'
					case 'b':
						line[w] = '\b'
					case 'a':
						line[w] = '\a'
					default:
						line[w] = line[r]
					}
					w++
					r++
				case c == '"':
					r++
					// The closing quote must be followed by a space or the end.
					if r < len(line) && !isSpace(line[r]) {
						return out, ErrUnbalancedQuotes
					}
					inDouble = false
					goto done
				default:
					line[w] = c
					w++
					r++
				}
			} else if inSingle {
				if r >= len(line) {
					return out, ErrUnbalancedQuotes
				}
				c := line[r]
				switch {
				case c == '\\' && r+1 < len(line) && line[r+1] == '\'':
					line[w] = '\''
					w++
					r += 2
				case c == '\'':
					r++
					if r < len(line) && !isSpace(line[r]) {
						return out, ErrUnbalancedQuotes
					}
					inSingle = false
					goto done
				default:
					line[w] = c
					w++
					r++
				}
			} else {
				if r >= len(line) || isSpace(line[r]) {
					goto done
				}
				c := line[r]
				switch c {
				case '"':
					inDouble = true
				case '\'':
					inSingle = true
				default:
					line[w] = c
					w++
				}
				r++
			}
		}
	done:
		out = append(out, line[start:w:w])
	}
}
