package main

import (
	"errors"
	"fmt"
)

var errUnbalanced = errors.New("unbalanced quotes")

// splitArgs splits a command line the way redis-cli does: words separated
// by spaces; "double quotes" take \n \r \t \b \a \" \\ and \xHH escapes;
// 'single quotes' take only \'. A closing quote must be followed by a space
// or the end of the line.
func splitArgs(line string) ([]string, error) {
	var out []string
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			return out, nil
		}
		var cur []byte
		inDouble, inSingle := false, false
		for done := false; !done; {
			switch {
			case inDouble:
				if i == len(line) {
					return nil, errUnbalanced
				}
				c := line[i]
				switch {
				case c == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]):
					cur = append(cur, hexVal(line[i+2])<<4|hexVal(line[i+3]))
					i += 3
				case c == '\\' && i+1 < len(line):
					i++
					switch line[i] {
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
						cur = append(cur, line[i])
					}
				case c == '"':
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, fmt.Errorf("closing quote must be followed by a space")
					}
					done = true
				default:
					cur = append(cur, c)
				}
			case inSingle:
				if i == len(line) {
					return nil, errUnbalanced
				}
				c := line[i]
				switch {
				case c == '\\' && i+1 < len(line) && line[i+1] == '\'':
					cur = append(cur, '\'')
					i++
				case c == '\'':
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, fmt.Errorf("closing quote must be followed by a space")
					}
					done = true
				default:
					cur = append(cur, c)
				}
			default:
				if i == len(line) {
					done = true
					break
				}
				switch c := line[i]; c {
				case ' ', '\t', '\n', '\r':
					done = true
				case '"':
					inDouble = true
				case '\'':
					inSingle = true
				default:
					cur = append(cur, c)
				}
			}
			if i < len(line) {
				i++
			}
		}
		out = append(out, string(cur))
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

func hexVal(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
