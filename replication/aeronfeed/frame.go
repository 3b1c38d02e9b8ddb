package aeronfeed

import (
	"encoding/binary"
	"errors"
)

// The frame header, little-endian:
//
//	0   magic   "GBR1"
//	4   kind    1 byte (KindData, KindHeartbeat, KindAnswer), 3 bytes zero
//	8   offset  int64: master_repl_offset before the payload
//	16  replid  40 bytes: the replication id
//	56  payload the stream bytes offset+1 … offset+len(payload)
const (
	magicOff  = 0
	kindOff   = 4
	offsetOff = 8
	idOff     = 16
	IDLen     = 40
	// HeaderLen is the length of a frame's header.
	HeaderLen = idOff + IDLen
)

var magic = [4]byte{'G', 'B', 'R', '1'}

// The frame kinds.
const (
	KindData      = 0 // stream bytes
	KindHeartbeat = 1 // no payload: the stream is at Offset
	KindAnswer    = 2 // a forwarded write's answer (forwarded.go): not stream bytes
)

// MaxPayload is the most stream bytes one frame carries: well under the
// receiver window (128 KiB by default), so a frame never waits for its
// own tail to be consumed (see aeron.Image.ReadMessage).
const MaxPayload = 32 << 10

// ErrFrame is returned for a message that is not a replication frame.
var ErrFrame = errors.New("aeronfeed: not a replication frame")

// Frame is one decoded frame; ID and Payload alias the message.
type Frame struct {
	Kind    byte
	Offset  int64 // the stream offset before Payload
	ID      []byte
	Payload []byte
}

// End returns the stream offset after the frame's payload.
func (f *Frame) End() int64 { return f.Offset + int64(len(f.Payload)) }

// AppendHeader appends a frame header for a payload at offset.
func AppendHeader(dst []byte, kind byte, id string, offset int64) []byte {
	dst = append(dst, magic[:]...)
	dst = append(dst, kind, 0, 0, 0)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(offset))
	var pad [IDLen]byte
	copy(pad[:], id)
	return append(dst, pad[:]...)
}

// Parse decodes msg into f (no copy).
func Parse(msg []byte, f *Frame) error {
	if len(msg) < HeaderLen || [4]byte(msg[magicOff:magicOff+4]) != magic || msg[kindOff] > KindAnswer {
		return ErrFrame
	}
	f.Kind = msg[kindOff]
	f.Offset = int64(binary.LittleEndian.Uint64(msg[offsetOff:]))
	f.ID = msg[idOff : idOff+IDLen]
	f.Payload = msg[HeaderLen:]
	if f.Offset < 0 || (f.Kind == KindHeartbeat && len(f.Payload) > 0) {
		return ErrFrame
	}
	return nil
}
