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
// FinishReplyValue (or SetReplyValueLen). The bytes equal AppendReply's for the same Reply
// (TestAppendReplyHeader).
func AppendReplyHeader(dst []byte, correlationID uint64, st command.Status, kind command.Kind, valueLen int) []byte {
	dst, off := grow(dst, ReplyHeaderLen)
	PutReplyHeader(dst[off:], correlationID, st, kind, valueLen)
	return dst
}

// PutReplyHeader's stores rely on this layout of a Reply's fixed block
// (pinned to the generated one by TestOffsetsMatchGenerated): the status,
// the kind and the integer adjacent, the value's length right after.
var _ = [1]struct{}{}[repKind-repStatus-1+repInteger-repKind-1+repBlock-repInteger-8]

// PutReplyHeader writes what AppendReplyHeader appends into
// b[:ReplyHeaderLen], with four 8-byte stores (the status and kind are
// adjacent bytes, the integer's 8 zero bytes lie between them and the
// value's length): small enough to be inlined into a hot path that has
// made room in its buffer itself.
func PutReplyHeader(b []byte, correlationID uint64, st command.Status, kind command.Kind, valueLen int) {
	_ = b[ReplyHeaderLen-1]
	binary.LittleEndian.PutUint64(b, replyHeader)
	binary.LittleEndian.PutUint64(b[headerLen+repCorrelationID:], correlationID)
	binary.LittleEndian.PutUint64(b[headerLen+repStatus:], uint64(st)|uint64(kind)<<8) // and the integer's first 6 bytes
	binary.LittleEndian.PutUint64(b[ReplyHeaderLen-8:], uint64(uint32(valueLen))<<32)  // the integer's last 4, the length
}

// PutSimpleOK writes a whole Simple "OK" reply for correlationID, as
// AppendReplyHeader and the text would make it, into
// b[:ReplyHeaderLen+2].
func PutSimpleOK(b []byte, correlationID uint64) {
	_ = b[ReplyHeaderLen+1]
	PutReplyHeader(b, correlationID, command.OK, command.Simple, 2)
	b[ReplyHeaderLen], b[ReplyHeaderLen+1] = 'O', 'K'
}

// SetReplyValueLen sets the value length of the reply AppendReplyHeader
// began at msg[0] to n.
func SetReplyValueLen(msg []byte, n int) {
	binary.LittleEndian.PutUint32(msg[headerLen+repBlock:], uint32(n))
}

// FinishReplyValue sets the value length of the reply AppendReplyHeader
// began at msg[0], whose value runs to msg's end: SetReplyValueLen with
// len(msg)-ReplyHeaderLen, with one bounds check where the engine's
// out[at:] and that subtraction cost three (callgrind, BenchmarkServe
// GET).
func FinishReplyValue(msg []byte) {
	_ = msg[ReplyHeaderLen-1] // the length's 4 bytes end the header
	binary.LittleEndian.PutUint32(msg[ReplyHeaderLen-4:], uint32(len(msg)-ReplyHeaderLen))
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
