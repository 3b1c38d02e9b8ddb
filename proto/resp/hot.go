package resp

import "encoding/binary"

// Hot names the command shapes ReadHot recognises: the requests a
// latency-bound client sends most, as every client library encodes them.
type Hot uint8

const (
	HotNone Hot = iota // not one of the shapes: parse with ReadCommand
	HotPing            // *1 $4 PING
	HotGet             // *2 $3 GET $n key
	HotSet             // *3 $3 SET $n key $m value
)

// The first eight bytes of each shape, little-endian, and the four bytes
// after them ORed with 0x20 each: a byte ORed with 0x20 equals a lower-case
// letter only if it is that letter in either case, and GET's and SET's CR
// (0x0d) becomes '-' (0x2d), so the CR itself is checked apart.
var (
	hotHead1 = binary.LittleEndian.Uint64([]byte("*1\r\n$4\r\n"))
	hotHead2 = binary.LittleEndian.Uint64([]byte("*2\r\n$3\r\n"))
	hotHead3 = binary.LittleEndian.Uint64([]byte("*3\r\n$3\r\n"))
	hotPing  = binary.LittleEndian.Uint32([]byte("ping"))
	hotGet   = binary.LittleEndian.Uint32([]byte("get-"))
	hotSet   = binary.LittleEndian.Uint32([]byte("set-"))
)

// ReadHot reads a PING, GET or SET of the exact shapes Hot names from the
// front of buf when the parser is between commands, and appends the
// command's arguments, sub-slices of buf, to args[:0] as ReadCommand would
// (the name first). It answers HotNone, with nothing consumed, for any
// other bytes (another command, a partial one, an inline one, one that
// lim may refuse): ReadCommand then parses them, so ReadHot only shortens
// the path of the commonest requests, never changes what a stream means.
func (p *Parser) ReadHot(buf []byte, args [][]byte, lim *Limits) (Hot, [][]byte, int) {
	hot, key, value, n := p.PeekHot(buf, lim)
	if hot == HotNone {
		return HotNone, args, 0
	}
	p.examined += uint64(n)
	return hot, HotArgs(buf, hot, key, value, args), n
}

// HotArgs appends to args[:0] the arguments of the command PeekHot read
// at the front of buf as hot, key and value, as ReadCommand would (the
// name first).
func HotArgs(buf []byte, hot Hot, key, value []byte, args [][]byte) [][]byte {
	switch hot {
	case HotPing:
		return append(args[:0], buf[8:12:12])
	case HotGet:
		return append(args[:0], buf[8:11:11], key)
	}
	return append(args[:0], buf[8:11:11], key, value)
}

// PeekHot is ReadHot without the arguments and without consuming: the
// shape at the front of buf, its key and value (sub-slices of buf; nil
// where the shape has none) and its length n. A caller that serves the
// command from these calls Skip(n); one that does not reads it with
// ReadHot or ReadCommand as if PeekHot had not been called.
func (p *Parser) PeekHot(buf []byte, lim *Limits) (hot Hot, key, value []byte, n int) {
	// The "*1" and "$4" lines are header lines too, and the command's name
	// a bulk string (lim's smallest values refuse them).
	// hotBulk's header lines are at most five bytes.
	maxBulk := lim.maxBulk()
	if lim.maxInline() < 5 || maxBulk < 4 {
		return HotNone, nil, nil, 0
	}
	hot, key, value, n = p.PeekHotBulk(buf, maxBulk)
	if args := lim.maxArgs(); hot == HotGet && args < 2 || hot == HotSet && args < 3 {
		return HotNone, nil, nil, 0
	}
	return hot, key, value, n
}

// HotBulk is the largest bulk length under l, for PeekHotBulk, when l
// allows every shape Hot names (header lines of five bytes, three
// arguments, a command name's four bytes); else 0, with which PeekHotBulk
// reads nothing. l's fields are read now: a caller keeps the answer for
// as long as they do not change.
func (l *Limits) HotBulk() int {
	if l.maxInline() < 5 || l.maxArgs() < 3 || l.maxBulk() < 4 {
		return 0
	}
	return l.maxBulk()
}

// PeekHotBulk is PeekHot under limits whose HotBulk is maxBulk, with their
// checks made once by the caller (Limits.HotBulk) instead of for every
// command: a connection's limits rarely change.
func (p *Parser) PeekHotBulk(buf []byte, maxBulk int) (hot Hot, key, value []byte, n int) {
	if p.state != stIdle || len(buf) < 14 || maxBulk < 4 {
		return HotNone, nil, nil, 0
	}
	head := binary.LittleEndian.Uint64(buf)
	name := binary.LittleEndian.Uint32(buf[8:]) | 0x20202020
	var ok bool
	switch {
	case head == hotHead1 && name == hotPing && buf[12] == '\r' && buf[13] == '\n':
		return HotPing, nil, nil, 14
	case head == hotHead2 && name == hotGet && buf[11] == '\r' && buf[12] == '\n':
		// A key of 10 to 99 bytes, hotBulk's commonest case, read here
		// without its call (about 20 instructions of a GET's): "$dd\r\n",
		// the key and its CRLF. Any other bytes hotBulk reads (or
		// refuses) as before.
		if b := buf[13:]; len(b) >= 5 && b[0] == '$' {
			if w := binary.LittleEndian.Uint32(b[1:5]); w&0xffff0000 == 0x0a0d0000 && byte(w)-'1' < 9 && byte(w>>8)-'0' < 10 {
				size := int(byte(w)-'0')*10 + int(byte(w>>8)-'0')
				if t := b[5:]; size <= maxBulk && size+2 <= len(t) && binary.LittleEndian.Uint16(t[size:]) == 0x0a0d {
					return HotGet, t[:size:size], nil, 13 + 5 + size + 2
				}
			}
		}
		if key, n, ok = hotBulk(buf, 13, maxBulk); ok {
			return HotGet, key, nil, n
		}
	case head == hotHead3 && name == hotSet && buf[11] == '\r' && buf[12] == '\n':
		if key, n, ok = hotBulk(buf, 13, maxBulk); !ok {
			return HotNone, nil, nil, 0
		}
		if value, n, ok = hotBulk(buf, n, maxBulk); ok {
			return HotSet, key, value, n
		}
	}
	return HotNone, nil, nil, 0
}

// Skip consumes the n bytes of a command PeekHot read and the caller
// served.
func (p *Parser) Skip(n int) { p.examined += uint64(n) }

// hotBulk reads the bulk string whose "$" is at buf[pos]: a length of one
// to four digits without a leading zero, at most maxBulk, and the payload
// with its CRLF, all in buf. ok is false for anything else (ReadCommand's
// to answer, an error included). Its header line is at most five bytes,
// which ReadHot checked the inline limit allows.
func hotBulk(buf []byte, pos, maxBulk int) (v []byte, next int, ok bool) {
	// Read from b, buf from the "$" on, and t, b from the payload on, at
	// offsets the checks before each read keep within them: the compiler
	// proves every access but the payload's CRLF in bounds (it checked
	// seven, and masked three slices, where the offsets were into buf).
	if uint(pos) > uint(len(buf)) {
		return nil, 0, false
	}
	b := buf[pos:]
	if len(b) < 7 || b[0] != '$' { // "$1\r\nk\r\n" is the shortest
		return nil, 0, false
	}
	// A length of one or two digits (a key's, a small value's) read as
	// one word: the digits and the CRLF after them.
	var size uint
	var t []byte
	switch w := binary.LittleEndian.Uint32(b[1:5]); {
	case w&0xffff0000 == 0x0a0d0000 && byte(w)-'1' < 9 && byte(w>>8)-'0' < 10: // "dd\r\n"
		size, t = uint(byte(w)-'0')*10+uint(byte(w>>8)-'0'), b[5:]
	case w&0x00ffff00 == 0x000a0d00 && byte(w)-'1' < 9: // "d\r\n"
		size, t = uint(byte(w)-'0'), b[4:]
	default:
		return hotBulkLong(buf, pos, maxBulk)
	}
	if int(size) > maxBulk || size > uint(len(t)-2) || binary.LittleEndian.Uint16(t[size:size+2]) != 0x0a0d { // len(t) >= 2
		return nil, 0, false
	}
	return t[:size:size], len(buf) - len(t) + int(size) + 2, true
}

// hotBulkLong is hotBulk for a length of three or four digits (or bytes
// that are no bulk header hotBulk takes).
func hotBulkLong(buf []byte, pos, maxBulk int) (v []byte, next int, ok bool) {
	size := int(buf[pos+1]) - '0'
	if uint(size-1) > 8 { // 1 to 9: a digit, not a leading zero
		return nil, 0, false
	}
	i := pos + 2
	for d := int(buf[i]) - '0'; uint(d) < 10; d = int(buf[i]) - '0' {
		size = size*10 + d
		if i++; i-pos > 5 || i >= len(buf) { // a fifth digit, or the end
			return nil, 0, false
		}
	}
	start := i + 2
	end := start + size
	if end+2 > len(buf) || buf[i] != '\r' || buf[i+1] != '\n' || size > maxBulk || buf[end] != '\r' || buf[end+1] != '\n' {
		return nil, 0, false
	}
	return buf[start:end:end], end + 2, true
}
