package resp

import (
	"bytes"
	"math"
)

// MaxRequestLen is the longest command, in bytes, a Parser accepts: it
// keeps the positions of a partial command's arguments as 32-bit offsets.
const MaxRequestLen = math.MaxUint32

// keepOffsets is the most argument offsets a Parser keeps allocated once a
// long partial command has completed; a larger array is dropped so that
// one 1M-argument request does not pin 8 MB for the connection's life.
const keepOffsets = 2 * 1024

// fastArgs is the most arguments a Parser reads with readWhole, in one
// go; a command with more goes to the resumable parse at once, so that its
// arguments are never parsed twice (see Parser.ReadCommand).
const fastArgs = 16

// Parser reads the commands of one connection's byte stream. Like
// ReadCommand it parses in place and returns the arguments as sub-slices
// of the buffer, but when the buffer ends inside a command it remembers how
// far it got: the multibulk count, the arguments complete so far (as
// offsets from the command's first byte) and where the search for the
// current header line's end stopped. The next call resumes there, so the
// bytes of a command that arrives in many pieces are examined once, not
// once per piece (which costs the square of the command's length).
//
// The contract that makes this work: after a call that returns n == 0 and
// no error, the next call must be given the same bytes from the same first
// byte, followed by any that arrived since (the buffer itself may have been
// moved or grown). A call given fewer bytes than the parser has already
// examined returns n == 0 at once. Reset forgets a partial command (call it
// before offering a different stream).
//
// The zero value is ready to use. A Parser is not safe for concurrent use.
type Parser struct {
	state parseState
	// stCount, stInline, stArgs: where the search for the end of the
	// current line resumes.
	scan int
	// stArgs:
	count int      // arguments the multibulk header announced
	done  int      // arguments complete
	pos   int      // bytes parsed: the header, complete arguments and, when bulk >= 0, the "$" line of the next
	bulk  int      // length of the bulk whose "$" line ends at pos; -1 when a "$" line starts at pos
	offs  []uint32 // start and end of each complete argument, relative to the command's first byte

	examined uint64
}

type parseState uint8

const (
	stIdle   parseState = iota // no command started
	stInline                   // an inline command: looking for its '\n'
	stCount                    // a multibulk: looking for the end of the "*<count>" line
	stArgs                     // a multibulk: reading "$<len>" lines and payloads
)

// ReadCommand parses one command from the front of buf and appends its
// arguments, as sub-slices of buf, to args[:0]. It returns the same results
// as the package-level ReadCommand; see Parser for what it remembers when
// buf ends inside a command.
func (p *Parser) ReadCommand(buf []byte, args [][]byte, lim *Limits) (out [][]byte, n int, err error) {
	if p.state == stIdle {
		// The usual case: a command of a few arguments, all in buf.
		out, n, err := readWhole(buf, args[:0], lim, fastArgs)
		if n > 0 || err != nil {
			p.examined += uint64(n) // read in one go: at most its length
			return out, n, err
		}
		// buf ends inside the command, or the command has many
		// arguments: parse it again from its first byte, resumably,
		// keeping its arguments' offsets (the caller may move buf before
		// the command completes). For a command of at most fastArgs
		// arguments this costs their headers once more (payloads are
		// skipped by length), once per command.
	}
	return p.parse(buf, args[:0], lim)
}

// Reset forgets any partial command; the next call starts at a command's
// first byte.
func (p *Parser) Reset() {
	offs, examined := p.offs, p.examined
	if cap(offs) > keepOffsets {
		offs = nil
	}
	*p = Parser{offs: offs[:0], examined: examined}
}

// Examined returns the bytes the parser has examined since it was made,
// for tests that prove the work per byte received is constant. The
// resumable parse counts every byte searched for a line end, every digit
// of a length and the two bytes after each bulk payload (payloads are
// skipped by length); a command read in one go counts as its length, which
// is more than the bytes examined.
func (p *Parser) Examined() uint64 { return p.examined }

// Buffered returns the bytes of memory the parser holds for a partial
// command (the offsets of its complete arguments).
func (p *Parser) Buffered() int { return 4 * cap(p.offs) }

// ReadCommand parses one command from the front of buf and appends its
// arguments, as sub-slices of buf, to args[:0].
//
//   - n > 0, err == nil: a command of len(out) arguments used n bytes.
//     len(out) == 0 means an empty command (a blank inline line, "*0" or
//     "*-1"), which Redis skips silently; so should the caller.
//   - n == 0, err == nil: buf holds only part of a command; call again with
//     more bytes. Nothing was consumed or modified.
//   - err != nil: the frame is malformed or breaks lim (nil means the
//     defaults); err wraps ErrProtocol and the connection must close.
//
// An inline command with quoted arguments is unescaped in place, so buf's
// bytes for that command may be rewritten.
//
// ReadCommand remembers nothing between calls: given a partial command it
// parses it again from its first byte each time, so a connection that
// receives long commands in many pieces should use a Parser.
func ReadCommand(buf []byte, args [][]byte, lim *Limits) (out [][]byte, n int, err error) {
	return readWhole(buf, args[:0], lim, int(^uint(0)>>1))
}

// readWhole parses the command at the front of buf in one go, in local
// variables. It has no answer (n == 0 and a nil error) when buf ends inside
// the command or the command has more than most arguments; an empty
// command has one (n > 0). It applies the same rules, in the same order,
// as the resumable parse, so the two agree however the bytes are split
// (FuzzParser).
func readWhole(buf []byte, out [][]byte, lim *Limits, most int) ([][]byte, int, error) {
	if len(buf) == 0 {
		return out, 0, nil
	}
	maxInline := lim.maxInline()
	if buf[0] != '*' {
		nl := bytes.IndexByte(buf, '\n')
		if nl < 0 {
			if len(buf) > maxInline {
				return out, 0, ErrBigInline
			}
			return out, 0, nil
		}
		if nl > maxInline {
			return out, 0, ErrBigInline
		}
		return inlineLine(buf, nl, out, lim)
	}
	count, next, h := header(buf, 0, maxInline)
	switch {
	case h == headerLong:
		return out, 0, ErrBigMultibulkCount
	case h == headerPartial:
		return out, 0, nil
	case h == headerBad || count > int64(lim.maxArgs()):
		return out, 0, ErrInvalidMultibulkLength
	}
	if count <= 0 {
		return out, next, nil
	}
	if count > int64(most) {
		return out, 0, nil
	}
	maxBulk := int64(lim.maxBulk())
	pos := next
	for i := int64(0); i < count; i++ {
		if pos >= len(buf) {
			return out[:0], 0, nil
		}
		if buf[pos] != '$' {
			return out[:0], 0, errExpectedDollar(buf[pos])
		}
		// The common "$<len>" line inline (no call: the loop's locals stay
		// in registers); any other through header.
		size, next, ok := fastHeader(buf, pos)
		if !ok || next-2-pos > maxInline {
			var h headerState
			size, next, h = header(buf, pos, maxInline)
			switch {
			case h == headerLong:
				return out[:0], 0, ErrBigBulkCount
			case h == headerPartial:
				return out[:0], 0, nil
			case h == headerBad:
				return out[:0], 0, ErrInvalidBulkLength
			}
		}
		if size < 0 || size > maxBulk {
			return out[:0], 0, ErrInvalidBulkLength
		}
		end := next + int(size)
		if end+2 > len(buf) || end < next {
			return out[:0], 0, nil
		}
		if buf[end] != '\r' || buf[end+1] != '\n' {
			return out[:0], 0, ErrBulkTerminator
		}
		if uint64(end) > MaxRequestLen {
			return out[:0], 0, ErrBigRequest
		}
		out = append(out, buf[next:end:end])
		pos = end + 2
	}
	return out, pos, nil
}

// headerState is what header found.
type headerState uint8

const (
	headerOK      headerState = iota // a number, and next is after its CRLF
	headerPartial                    // the line's CRLF has not arrived
	headerLong                       // the line is longer than a header may be
	headerBad                        // the line is not a number ParseInt accepts
)

// header reads the number on the "*<count>" or "$<len>" line whose type
// byte is at buf[pos], and returns it and the position after its CRLF. The
// common form, one to 18 digits without sign or leading zero followed by
// CRLF, is read in one pass in registers; any other line (a sign, a zero,
// a partial or malformed line, a longer number) is left to readLine and
// ParseInt. Both give the same answer for the common form, so the rules and
// their order are those of the resumable parse either way (FuzzParser).
func header(buf []byte, pos, maxInline int) (v int64, next int, h headerState) {
	if v, next, ok := fastHeader(buf, pos); ok && next-2-pos <= maxInline {
		return v, next, headerOK
	}
	line, next, ok := readLine(buf, pos+1)
	if lineEnd(buf, next, ok)-pos > maxInline {
		return 0, 0, headerLong
	}
	if !ok {
		return 0, 0, headerPartial
	}
	v, ok = ParseInt(line)
	if !ok {
		return 0, 0, headerBad
	}
	return v, next, headerOK
}

// fastHeader is header for a line of the common form, one to 18 digits
// without sign or leading zero followed by CRLF: ok is false for any other
// line. The caller checks the line against maxInline (next-2-pos is its
// length). It is small enough to be inlined, so that readWhole's loop
// keeps its locals in registers.
func fastHeader(buf []byte, pos int) (v int64, next int, ok bool) {
	i := pos + 1
	for ; i < len(buf) && buf[i]-'0' < 10; i++ {
		v = v*10 + int64(buf[i]-'0')
	}
	// i-pos-1 digits, from 1 to 18 (which cannot overflow), the first not
	// 0, then CRLF.
	ok = uint(i-pos-2) < 18 && buf[pos+1] != '0' && i+1 < len(buf) && buf[i] == '\r' && buf[i+1] == '\n'
	return v, i + 2, ok
}

// lineEnd is where a header line's CR is, given readLine's answer (next
// when ok): on a partial line, its CR when that is buf's last byte (its LF
// has not arrived), else the end of buf. Parser.line leaves the same in
// p.scan, so both parses measure a line alike.
func lineEnd(buf []byte, next int, ok bool) int {
	if ok {
		return next - 2
	}
	if buf[len(buf)-1] == '\r' {
		return len(buf) - 1
	}
	return len(buf)
}

// parse continues the command at the front of buf from the parser's state,
// keeping the complete arguments' offsets in p.offs; out gets them once the
// command is complete.
func (p *Parser) parse(buf []byte, out [][]byte, lim *Limits) ([][]byte, int, error) {
	if len(buf) == 0 {
		return out, 0, nil
	}
	switch p.state {
	case stIdle:
		if buf[0] != '*' {
			p.state, p.scan = stInline, 0
			return p.inline(buf, out, lim)
		}
		p.state, p.scan = stCount, 1
	case stInline:
		return p.inline(buf, out, lim)
	}
	if p.state == stCount {
		line, next, ok := p.line(buf, 1)
		if p.scan > lim.maxInline() {
			// The "*<count>" line is longer than a header may be, whether
			// or not its end has arrived: the same error however the
			// bytes are split.
			return p.fail(out, ErrBigMultibulkCount)
		}
		if !ok {
			return out, 0, nil
		}
		count, ok := p.parseInt(line)
		if !ok || count > int64(lim.maxArgs()) {
			return p.fail(out, ErrInvalidMultibulkLength)
		}
		if count <= 0 {
			p.Reset()
			return out, next, nil
		}
		p.state, p.count, p.done, p.pos, p.bulk, p.scan = stArgs, int(count), 0, next, -1, next
		p.offs = p.offs[:0]
	}
	maxBulk := int64(lim.maxBulk())
	for p.done < p.count {
		if p.bulk < 0 {
			if p.pos >= len(buf) {
				return out[:0], 0, nil
			}
			if buf[p.pos] != '$' {
				return p.fail(out, errExpectedDollar(buf[p.pos]))
			}
			line, next, ok := p.line(buf, p.pos+1)
			if p.scan-p.pos > lim.maxInline() {
				return p.fail(out, ErrBigBulkCount) // as for the count line
			}
			if !ok {
				return out[:0], 0, nil
			}
			size, ok := p.parseInt(line)
			if !ok || size < 0 || size > maxBulk {
				return p.fail(out, ErrInvalidBulkLength)
			}
			p.pos, p.bulk = next, int(size)
		}
		start := p.pos
		end := start + p.bulk
		if end+2 > len(buf) || end < start {
			return out[:0], 0, nil
		}
		p.examined += 2
		if buf[end] != '\r' || buf[end+1] != '\n' {
			return p.fail(out, ErrBulkTerminator)
		}
		if uint64(end) > MaxRequestLen {
			return p.fail(out, ErrBigRequest)
		}
		p.offs = append(p.offs, uint32(start), uint32(end))
		p.done++
		p.pos, p.bulk, p.scan = end+2, -1, end+2
	}
	for i := 0; i < len(p.offs); i += 2 {
		s, e := p.offs[i], p.offs[i+1]
		out = append(out, buf[s:e:e])
	}
	n := p.pos
	p.Reset()
	return out, n, nil
}

// fail forgets the partial command and returns err.
func (p *Parser) fail(out [][]byte, err error) ([][]byte, int, error) {
	p.Reset()
	return out[:0], 0, err
}

// line returns the bytes from start up to a CRLF and the position after
// it; ok is false when the CRLF has not arrived yet, and then the search
// resumes where it stopped on the next call. Either way p.scan is where the
// line's CR is, or the end of buf when none has arrived, so p.scan less
// the line's first byte is the line's length so far. Like Redis, a header line must
// end in CRLF: a CR followed by anything else makes the line end there with
// the stray byte included, so that parsing it fails the same way however
// the bytes are split.
func (p *Parser) line(buf []byte, start int) (line []byte, next int, ok bool) {
	from := max(p.scan, start)
	if from >= len(buf) {
		return nil, 0, false
	}
	i := bytes.IndexByte(buf[from:], '\r')
	if i < 0 {
		p.examined += uint64(len(buf) - from)
		p.scan = len(buf)
		return nil, 0, false
	}
	cr := from + i
	p.examined += uint64(i + 1)
	p.scan = cr // on a partial line: look at this CR again once the byte after it arrives
	if cr+1 >= len(buf) {
		return nil, 0, false
	}
	p.examined++
	if buf[cr+1] != '\n' {
		return buf[start : cr+2], cr + 2, true
	}
	return buf[start:cr], cr + 2, true
}

// parseInt is ParseInt, counted.
func (p *Parser) parseInt(b []byte) (int64, bool) {
	p.examined += uint64(len(b))
	return ParseInt(b)
}

// inline parses one inline command: a line of space-separated arguments,
// with "double" (backslash escapes) and 'single' quotes as redis-cli's
// sdssplitargs understands them. The search for the '\n' resumes where it
// stopped.
func (p *Parser) inline(buf []byte, out [][]byte, lim *Limits) ([][]byte, int, error) {
	from := min(p.scan, len(buf))
	i := bytes.IndexByte(buf[from:], '\n')
	if i < 0 {
		p.examined += uint64(len(buf) - from)
		p.scan = len(buf)
		if len(buf) > lim.maxInline() {
			return p.fail(out, ErrBigInline)
		}
		return out, 0, nil
	}
	nl := from + i
	p.examined += uint64(i+1) + uint64(nl) // the search, then the split
	if nl > lim.maxInline() {
		return p.fail(out, ErrBigInline)
	}
	p.Reset()
	return inlineLine(buf, nl, out, lim)
}

// inlineLine splits the inline command that ends with the '\n' at buf[nl]
// (a '\r' before it is dropped) into out and returns the bytes it took:
// the last step of the one-go and of the resumable inline parse.
func inlineLine(buf []byte, nl int, out [][]byte, lim *Limits) ([][]byte, int, error) {
	line := buf[:nl]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	out, err := splitArgs(line, out, lim.maxArgs())
	if err != nil {
		return out[:0], 0, err
	}
	return out, nl + 1, nil
}
