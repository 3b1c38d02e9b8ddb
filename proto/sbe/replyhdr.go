package sbe

import (
	"encoding/binary"

	"github.com/goblin-kv/goblin/command"
)

// ReplyHeaderLen is the length of what AppendReplyHeader appends: a
// Reply's message header, fixed block and value length, everything of a
// non-aggregate Reply but the value's bytes.
const ReplyHeaderLen = headerLen + repBlock + varHdrLen

// AppendReplyHeader appends the start of a non-aggregate Reply (kind,
// status, integer 0, for correlationID) whose value is valueLen bytes: the
// caller appends the value right after, straight from where it lives (a
// store's arena, say) instead of through a command.Reply. If the length is
// known only once the value is appended, pass 0 and fix it with
// SetReplyValueLen. The bytes equal AppendReply's for the same Reply
// (TestAppendReplyHeader).
func AppendReplyHeader(dst []byte, correlationID uint64, st command.Status, kind command.Kind, valueLen int) []byte {
	dst, off := grow(dst, ReplyHeaderLen)
	b := dst[off : off+ReplyHeaderLen]
	binary.LittleEndian.PutUint64(b, replyHeader)
	f := b[headerLen:]
	binary.LittleEndian.PutUint64(f[repCorrelationID:], correlationID)
	f[repStatus], f[repKind] = uint8(st), uint8(kind)
	binary.LittleEndian.PutUint64(f[repInteger:], 0)
	binary.LittleEndian.PutUint32(f[repBlock:], uint32(valueLen))
	return dst
}

// SetReplyValueLen sets the value length of the reply AppendReplyHeader
// began at msg[0] to n.
func SetReplyValueLen(msg []byte, n int) {
	binary.LittleEndian.PutUint32(msg[headerLen+repBlock:], uint32(n))
}

// AppendFrameStart appends the SOFH of a frame whose message follows and
// whose length FinishFrame sets once it is appended: AppendReplyHeader's
// counterpart for stream transports.
func AppendFrameStart(dst []byte) []byte {
	dst, _ = grow(dst, SOFHLen)
	return dst
}

// FinishFrame sets the SOFH at frame[0] (AppendFrameStart's) to the
// frame's length, len(frame).
func FinishFrame(frame []byte) { putSOFH(frame, len(frame)) }
