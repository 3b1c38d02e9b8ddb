package aeron

// goblin's own frames on the Aeron streams. Requests and replies travel as
// they are, one RESP command or bare SBE message per Aeron message, with
// nothing added: the small-message path carries no header. Two kinds of
// message are goblin's own and start with a 16-byte frame header instead:
//
//	 0  magic    uint32  0x41_62_67_A7 ("\xA7gbA" on the wire)
//	 4  kind     uint8   1 hello, 2 chunk
//	 5  version  uint8   1
//	 6  …        kind-specific (below), little-endian
//
//	hello (server → client, the first message on every response stream):
//	 6  proto    uint8   the listener's protocol (0 RESP, 1 SBE)
//	 7  0
//	 8  max      uint32  the longest request the server accepts, in bytes
//	12  0        uint32
//
//	chunk (either way: one piece of a message longer than the stream's
//	maximum message length, term length / 8):
//	 6  0        uint16
//	 8  offset   uint32  where this piece starts in the whole message
//	12  total    uint32  the whole message's length
//	16  piece    offset+len(piece) ≤ total; pieces follow in order
//
// No request or reply starts with the magic: RESP messages start with a
// printable type byte ('*', '+', '-', '$', ':', …), and goblin's SBE
// messages with their root block length, a few dozen bytes, never 0x67A7
// (they also carry schema id 27500 in bytes 4–5, where a frame has its
// kind and version). A receiver tells a frame from a message with one
// 4-byte comparison.

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/proto/sbe"
)

// frameMagic opens every goblin frame on an Aeron stream (a uint32, little
// endian); RESP and SBE messages never start with it.
const frameMagic uint32 = 0x416267A7

const (
	frameHeaderLen = 16
	frameVersion   = 1
	kindHello      = 1
	kindChunk      = 2
	// MaxChunkedMessage is the longest message the chunk header can
	// describe (its total is a uint32).
	MaxChunkedMessage = 1<<32 - 1
)

// errFrame is wrapped by every malformed frame.
var errFrame = errors.New("aeron transport: malformed goblin frame")

// isFrame reports whether msg starts with a goblin frame header rather
// than a request or reply. It is the one check the message path pays.
func isFrame(msg []byte) bool {
	return len(msg) >= 4 && binary.LittleEndian.Uint32(msg) == frameMagic
}

// hello is a decoded hello frame.
type hello struct {
	proto      proto.Protocol
	maxRequest int
}

func appendHello(dst []byte, h hello) []byte {
	var b [frameHeaderLen]byte
	binary.LittleEndian.PutUint32(b[0:], frameMagic)
	b[4], b[5], b[6] = kindHello, frameVersion, byte(h.proto)
	binary.LittleEndian.PutUint32(b[8:], uint32(min(h.maxRequest, MaxChunkedMessage)))
	return append(dst, b[:]...)
}

// parseHello decodes a hello frame. Later versions may add fields after
// the 16 bytes; a client ignores them.
func parseHello(msg []byte) (hello, error) {
	if !isFrame(msg) || len(msg) < frameHeaderLen || msg[4] != kindHello {
		return hello{}, fmt.Errorf("%w: want a hello, got %s", errFrame, describe(msg))
	}
	if msg[5] < frameVersion {
		return hello{}, fmt.Errorf("%w: hello version %d", errFrame, msg[5])
	}
	p := proto.Protocol(msg[6])
	if p != proto.RESP && p != proto.SBE {
		return hello{}, fmt.Errorf("%w: hello names protocol %d", errFrame, msg[6])
	}
	return hello{proto: p, maxRequest: int(binary.LittleEndian.Uint32(msg[8:]))}, nil
}

// chunk is a decoded chunk frame: the piece at offset of a message of
// total bytes.
type chunk struct {
	offset, total int
	piece         []byte // aliases the frame
}

// putChunkHeader writes the header of the piece at offset of a total-byte
// message into b.
func putChunkHeader(b *[frameHeaderLen]byte, offset, total int) {
	binary.LittleEndian.PutUint32(b[0:], frameMagic)
	b[4], b[5], b[6], b[7] = kindChunk, frameVersion, 0, 0
	binary.LittleEndian.PutUint32(b[8:], uint32(offset))
	binary.LittleEndian.PutUint32(b[12:], uint32(total))
}

// parseChunk decodes a chunk frame and checks that its piece lies inside
// the message and is not empty.
func parseChunk(msg []byte) (chunk, error) {
	if !isFrame(msg) || len(msg) < frameHeaderLen || msg[4] != kindChunk {
		return chunk{}, fmt.Errorf("%w: want a chunk, got %s", errFrame, describe(msg))
	}
	if msg[5] != frameVersion {
		return chunk{}, fmt.Errorf("%w: chunk version %d", errFrame, msg[5])
	}
	c := chunk{
		offset: int(binary.LittleEndian.Uint32(msg[8:])),
		total:  int(binary.LittleEndian.Uint32(msg[12:])),
		piece:  msg[frameHeaderLen:],
	}
	if len(c.piece) == 0 || c.offset+len(c.piece) > c.total {
		return chunk{}, fmt.Errorf("%w: piece of %d bytes at %d of a %d-byte message", errFrame, len(c.piece), c.offset, c.total)
	}
	return c, nil
}

// describe names what a message that should have been a frame is, for
// error messages.
func describe(msg []byte) string {
	switch {
	case len(msg) >= frameHeaderLen && isFrame(msg):
		return fmt.Sprintf("a frame of kind %d, version %d, %d bytes", msg[4], msg[5], len(msg))
	case len(msg) > 0 && msg[0] >= 0x20 && msg[0] < 0x7f:
		return fmt.Sprintf("%d bytes starting %q (RESP?)", len(msg), msg[:min(len(msg), 16)])
	}
	return fmt.Sprintf("%d bytes starting % x", len(msg), msg[:min(len(msg), 16)])
}

// assembly gathers the pieces of one chunked message, in order. In discard
// mode (a request refused for its length) it checks and counts the pieces
// but keeps none.
type assembly struct {
	buf     []byte
	total   int // 0: no message in progress
	pos     int // bytes of the message received so far
	discard bool
}

// add takes the piece c; it returns true when the message is complete
// (then buf holds it, unless discarding).
func (a *assembly) add(c chunk) (bool, error) {
	if a.total == 0 {
		if c.offset != 0 {
			return false, fmt.Errorf("%w: a message starts with a piece at %d", errFrame, c.offset)
		}
		a.total, a.pos = c.total, 0
		a.buf = a.buf[:0]
	} else if c.total != a.total || c.offset != a.pos {
		return false, fmt.Errorf("%w: piece at %d of a %d-byte message, want %d of %d",
			errFrame, c.offset, c.total, a.pos, a.total)
	}
	if !a.discard {
		a.buf = append(a.buf, c.piece...)
	}
	a.pos += len(c.piece)
	if a.pos < a.total {
		return false, nil
	}
	a.total = 0
	return true, nil
}

// inProgress reports whether a message has started and not ended.
func (a *assembly) inProgress() bool { return a.total != 0 }

// reset forgets a message in progress and gives back a large buffer.
func (a *assembly) reset() {
	a.total, a.pos, a.discard = 0, 0, false
	a.buf = a.buf[:0]
	if cap(a.buf) > keepBuffer {
		a.buf = nil
	}
}

// keepBuffer is the largest assembly or backlog buffer a client keeps
// after a large message.
const keepBuffer = 1 << 20

// errorReply appends an error reply in protocol p: a RESP error, or an SBE
// Reply with the correlation id of the request whose first bytes are head
// (0 when head is too short to hold one). Every goblin SBE request starts
// with the 8-byte message header and its uint64 correlation id.
func errorReply(dst []byte, p proto.Protocol, head []byte, text string) []byte {
	if p == proto.RESP {
		return resp.AppendError(dst, text)
	}
	var id uint64
	if len(head) >= 16 {
		id = binary.LittleEndian.Uint64(head[8:])
	}
	var c sbe.Codec
	return c.AppendReply(dst, &command.Reply{CorrelationID: id, Status: command.Err, Kind: command.Error, Value: []byte(text)})
}
