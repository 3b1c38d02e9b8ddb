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

// hotMaxLen bounds the key and value lengths ReadHot reads (four digits):
// anything longer goes through ReadCommand, whose limit checks it needs.
const hotMaxLen = 9999

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
	// The "*1" and "$4" lines are header lines too, and the command's name
	// a bulk string (lim's smallest values refuse them).
	if p.state != stIdle || len(buf) < 14 || lim.maxInline() < 2 || lim.maxBulk() < 4 {
		return HotNone, args, 0
	}
	head := binary.LittleEndian.Uint64(buf)
	name := binary.LittleEndian.Uint32(buf[8:]) | 0x20202020
	switch {
	case head == hotHead1 && name == hotPing && buf[12] == '\r' && buf[13] == '\n':
		p.examined += 14
		return HotPing, append(args[:0], buf[8:12:12]), 14
	case head == hotHead2 && name == hotGet && buf[11] == '\r' && buf[12] == '\n':
		if lim.maxArgs() < 2 {
			return HotNone, args, 0
		}
		key, n, ok := hotBulk(buf, 13, lim)
		if !ok {
			return HotNone, args, 0
		}
		p.examined += uint64(n)
		return HotGet, append(args[:0], buf[8:11:11], key), n
	case head == hotHead3 && name == hotSet && buf[11] == '\r' && buf[12] == '\n':
		if lim.maxArgs() < 3 {
			return HotNone, args, 0
		}
		key, n, ok := hotBulk(buf, 13, lim)
		if !ok {
			return HotNone, args, 0
		}
		val, n, ok := hotBulk(buf, n, lim)
		if !ok {
			return HotNone, args, 0
		}
		p.examined += uint64(n)
		return HotSet, append(args[:0], buf[8:11:11], key, val), n
	}
	return HotNone, args, 0
}

// hotBulk reads the bulk string whose "$" is at buf[pos]: a length of one
// to four digits without a leading zero, within lim, and the payload with
// its CRLF, all in buf. ok is false for anything else (ReadCommand's to
// answer, an error included).
func hotBulk(buf []byte, pos int, lim *Limits) (v []byte, next int, ok bool) {
	if pos+3 > len(buf) || buf[pos] != '$' || buf[pos+1] == '0' {
		return nil, 0, false
	}
	size, i := 0, pos+1
	for ; i < len(buf) && i < pos+5 && buf[i]-'0' < 10; i++ {
		size = size*10 + int(buf[i]-'0')
	}
	if i == pos+1 || i+1 >= len(buf) || buf[i] != '\r' || buf[i+1] != '\n' || size > hotMaxLen ||
		size > lim.maxBulk() || i-pos > lim.maxInline() {
		return nil, 0, false
	}
	start := i + 2
	end := start + size
	if end+2 > len(buf) || buf[end] != '\r' || buf[end+1] != '\n' {
		return nil, 0, false
	}
	return buf[start:end:end], end + 2, true
}
