package sbe

import (
	"encoding/binary"

	"github.com/goblin-kv/goblin/proto/sbe/goblinsbe"
)

// PingLen is the length of a compact Ping message, and of the Pong that
// answers it: the 8-byte message header and the correlation id.
const PingLen = headerLen + 8

// The first six bytes of a Ping's and a Pong's message header (block
// length, template id, schema id), little-endian, as the low 48 bits of the
// header read as one uint64; the top 16 bits are the schema version.
const (
	headerNoVersion = 1<<48 - 1
	pingHeader      = uint64(goblinsbe.PingSbeBlockLength) | uint64(templatePing)<<16 | uint64(SchemaID)<<32
	pongHeader      = uint64(goblinsbe.PongSbeBlockLength) | uint64(templatePong)<<16 | uint64(SchemaID)<<32 |
		uint64(SchemaVersion)<<48
)

// AsPing reports whether msg is exactly a compact Ping (of any schema
// version) and returns its correlation id. It is the whole decode a PING
// needs: one length test and one 48-bit compare. A message it does not
// recognise (a Ping with a longer block from a newer schema, say) is for
// DecodeRequest, which accepts everything AsPing does.
func AsPing(msg []byte) (correlationID uint64, ok bool) {
	if len(msg) != PingLen || binary.LittleEndian.Uint64(msg)&headerNoVersion != pingHeader {
		return 0, false
	}
	return binary.LittleEndian.Uint64(msg[headerLen:]), true
}

// AsPong reports whether msg starts with a compact Pong of this schema
// version and returns its correlation id: a message transport's client
// reads the reply to its PING with one length test and one compare, and
// leaves anything else to DecodeReplyLen (which reads such a Pong the
// same way: TestAsPongMatchesDecodeReplyLen).
func AsPong(msg []byte) (correlationID uint64, ok bool) {
	if len(msg) < PingLen || binary.LittleEndian.Uint64(msg) != pongHeader {
		return 0, false
	}
	return binary.LittleEndian.Uint64(msg[headerLen:]), true
}

// AppendPong appends the compact Pong answering correlationID: the bytes
// AppendReply writes for a compact reply PONG.
func AppendPong(dst []byte, correlationID uint64) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, pongHeader)
	return binary.LittleEndian.AppendUint64(dst, correlationID)
}
