package sbe

import (
	"encoding/binary"

	"github.com/goblin-kv/goblin/command"
)

// The client's side of the hot path: a depth-one PING, GET or SET sends a
// Ping or a Request and reads a Pong or a Reply. AppendRequest and
// DecodeReply serve every message through the generated flyweights (some
// 250 instructions to encode a Ping, 350 to decode a Pong, and a message
// transport's client measured the reply's length by decoding it a second
// time); these read and write the two fixed layouts at their offsets and
// leave everything else to the general code.

// requestHeaderVersioned is a Request's whole message header as
// AppendRequest writes it (hot.go's requestHeader and this version).
const requestHeaderVersioned = requestHeader | uint64(SchemaVersion)<<48

// plainRequest reports whether r is encoded as a Request message (not a
// Ping, a MultiRequest or a typed collection message), the one
// appendPlainRequest writes.
func plainRequest(r *command.Request) bool {
	return !multi(r) && !compactPing(r) && typedTemplate(r) == 0
}

// appendPlainRequest appends the Request message of r, for which
// plainRequest holds, writing its header and fixed block at the
// generated layout's offsets (TestOffsetsMatchGenerated) instead of
// through the flyweight's setters: the bytes requestAt writes
// (TestAppendPlainRequestMatchesRequestAt).
func appendPlainRequest(dst []byte, r *command.Request) []byte {
	n := headerLen + reqBlockV2 + 2*varHdrLen + len(r.Key) + len(r.Value)
	dst, off := grow(dst, n)
	b := dst[off : off+headerLen+reqBlockV2]
	binary.LittleEndian.PutUint64(b, requestHeaderVersioned)
	f := b[headerLen:]
	binary.LittleEndian.PutUint64(f[reqCorrelationID:], r.CorrelationID)
	f[reqOp], f[reqFlags], f[reqExpiry] = uint8(r.Op), flagBits(r.Flags), uint8(r.Expiry)
	binary.LittleEndian.PutUint64(f[reqExpire:], uint64(r.Expire))
	binary.LittleEndian.PutUint64(f[reqAmount:], uint64(r.Amount))
	pos := putVar(dst, off+headerLen+reqBlockV2, r.Key)
	putVar(dst, pos, r.Value)
	return dst
}

// pingHeaderVersioned is a compact Ping's whole message header as
// AppendRequest writes it (this schema version).
const pingHeaderVersioned = pingHeader | uint64(SchemaVersion)<<48

// AppendPing appends the compact Ping of correlationID: the bytes
// AppendRequest writes for a Request with Compact set, Op PING and nothing
// else (TestAppendPingMatchesAppendRequest).
func AppendPing(dst []byte, correlationID uint64) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, pingHeaderVersioned)
	return binary.LittleEndian.AppendUint64(dst, correlationID)
}

// DecodeReplyLen is DecodeReply that also returns the decoded message's
// length, for a message transport's client, whose buffer holds exactly
// one message: MessageLen and DecodeReply in one pass. A Pong or a Reply
// of this schema version (the exact header) is read at its fixed
// offsets; anything else goes through DecodeReply's general decode. r
// ends up as DecodeReply leaves it (TestDecodeReplyLenMatchesDecodeReply).
func (c *Codec) DecodeReplyLen(msg []byte, r *command.Reply) (int, error) {
	if len(msg) >= headerLen {
		switch binary.LittleEndian.Uint64(msg) {
		case replyHeader:
			if len(msg) < ReplyHeaderLen {
				break
			}
			f := msg[headerLen:ReplyHeaderLen]
			k := command.Kind(f[repKind])
			n := uint64(binary.LittleEndian.Uint32(f[repBlock:]))
			if k.Aggregate() || n > uint64(len(msg)-ReplyHeaderLen) {
				break // malformed: the general decode says how
			}
			r.CorrelationID = binary.LittleEndian.Uint64(f[repCorrelationID:])
			r.Status = command.Status(f[repStatus])
			r.Kind = k
			r.Integer = int64(binary.LittleEndian.Uint64(f[repInteger:]))
			end := ReplyHeaderLen + int(n)
			r.Value = msg[ReplyHeaderLen:end:end]
			r.Items = r.Items[:0]
			r.Compact = false
			return end, nil
		case pongHeader:
			if len(msg) < PingLen {
				break
			}
			r.CorrelationID = binary.LittleEndian.Uint64(msg[headerLen:])
			r.Status, r.Kind, r.Integer = command.OK, command.Simple, 0
			r.Value, r.Items, r.Compact = txtPong, r.Items[:0], true
			return PingLen, nil
		}
	}
	end, err := c.decodeReply(msg, r)
	return int(end), err
}
