package redisconf

import (
	"errors"

	"github.com/goblin-kv/goblin/proto/resp"
)

// ErrUnbalancedQuotes is returned by SplitArgs for a line Redis's sdssplitargs
// refuses: a quote that is never closed, or a closing quote followed by
// something other than a space. Redis reports both as "Unbalanced quotes in
// configuration line".
//
//lint:ignore ST1005 Redis's own wording, which operators search for
var ErrUnbalancedQuotes = errors.New("Unbalanced quotes in configuration line")

// SplitArgs splits one line into arguments exactly as Redis's sdssplitargs
// does (the tokenizer of redis.conf, redis-cli and inline commands):
//
//   - arguments are separated by spaces, tabs, CR or LF (leading blanks may
//     also be vertical tabs and form feeds, as C's isspace);
//   - "double quotes" take the escapes \n \r \t \b \a \xHH and \<any> for that
//     character (so \\ and \");
//   - 'single quotes' take only \' as an escape; every other byte is literal;
//   - a quote may start in the middle of an argument (a"b c" is one argument,
//     "ab c"), but a closing quote must be followed by a blank or the end of the
//     line;
//   - a NUL byte ends the line, as it ends a C string.
//
// It returns ErrUnbalancedQuotes where sdssplitargs returns NULL. An empty or
// blank line yields no arguments and no error.
func SplitArgs(line string) ([]string, error) {
	var args []string
	p := 0
	at := func(i int) byte { // the byte at i, or 0 past the end as C sees it
		if i < len(line) {
			return line[i]
		}
		return 0
	}
	if i := indexNUL(line); i >= 0 {
		line = line[:i]
	}
	for {
		for p < len(line) && isCSpace(line[p]) {
			p++
		}
		if p >= len(line) {
			return args, nil
		}
		var cur []byte
		inq, insq, done := false, false, false
		for !done {
			c := at(p)
			switch {
			case inq:
				switch {
				case c == '\\' && at(p+1) == 'x' && isHex(at(p+2)) && isHex(at(p+3)):
					cur = append(cur, hexVal(at(p+2))<<4|hexVal(at(p+3)))
					p += 3
				case c == '\\' && at(p+1) != 0:
					p++
					switch e := at(p); e {
					case 'n':
						cur = append(cur, '\n')
					case 'r':
						cur = append(cur, '\r')
					case 't':
						cur = append(cur, '\t')
					case 'b':
						cur = append(cur, '\b')
					case 'a':
						cur = append(cur, '\a')
					default:
						cur = append(cur, e)
					}
				case c == '"':
					if n := at(p + 1); n != 0 && !isCSpace(n) {
						return nil, ErrUnbalancedQuotes
					}
					done = true
				case c == 0:
					return nil, ErrUnbalancedQuotes
				default:
					cur = append(cur, c)
				}
			case insq:
				switch {
				case c == '\\' && at(p+1) == '\'':
					p++
					cur = append(cur, '\'')
				case c == '\'':
					if n := at(p + 1); n != 0 && !isCSpace(n) {
						return nil, ErrUnbalancedQuotes
					}
					done = true
				case c == 0:
					return nil, ErrUnbalancedQuotes
				default:
					cur = append(cur, c)
				}
			default:
				switch c {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					cur = append(cur, c)
				}
			}
			if at(p) != 0 {
				p++
			}
		}
		args = append(args, string(cur))
	}
}

func indexNUL(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return i
		}
	}
	return -1
}

// isCSpace is C's isspace in the "C" locale.
func isCSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// Quote returns s as Redis's sdscatrepr writes it, the form CONFIG REWRITE
// gives string values: always in double quotes, with \\ \" \n \r \t \a \b
// escaped and every other byte outside printable ASCII as \xHH. SplitArgs
// reads it back as s.
func Quote(s string) string {
	return string(resp.AppendQuoted(make([]byte, 0, len(s)+2), []byte(s)))
}
