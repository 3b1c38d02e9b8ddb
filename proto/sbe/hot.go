package sbe

import (
	"encoding/binary"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/sbe/goblinsbe"
)

// requestHeader is the first six bytes of a Request's message header
// (block length, template id, schema id) with this schema's block length,
// as the low 48 bits of the header read as one uint64 (the top 16 are the
// schema version, which may be any).
const requestHeader = uint64(goblinsbe.RequestSbeBlockLength) | uint64(templateRequest)<<16 | uint64(SchemaID)<<32

// AsRequest decodes msg into r when it is a Request message with the
// block length of this schema (GET, SET and every other single-key
// command as goblin's clients send them) whose key and value lie within
// msg, and reports whether it did: DecodeRequest's answer, with its
// header's checks folded into one 48-bit compare. On false r may have been
// written; DecodeRequest then decodes msg, or explains why it cannot. As
// with DecodeRequest, r.Key and r.Value point into msg and r.Args keeps its
// backing array, emptied.
func AsRequest(msg []byte, r *command.Request) bool {
	if len(msg) < headerLen+reqBlockV2+2*varHdrLen {
		return false
	}
	h := binary.LittleEndian.Uint64(msg)
	if h&headerNoVersion != requestHeader {
		return false
	}
	b := msg[headerLen : headerLen+reqBlockV2+varHdrLen]
	klen := uint64(binary.LittleEndian.Uint32(b[reqBlockV2:]))
	kpos := uint64(headerLen + reqBlockV2 + varHdrLen)
	// The key and the value's length header fit: klen is at most 2^32-1,
	// so the sum cannot wrap.
	if klen+varHdrLen > uint64(len(msg))-kpos {
		return false
	}
	vpos := kpos + klen + varHdrLen
	vlen := uint64(binary.LittleEndian.Uint32(msg[vpos-varHdrLen:]))
	if vlen > uint64(len(msg))-vpos {
		return false
	}
	r.Args = r.Args[:0]
	r.Compact, r.Version = false, uint16(h>>48)
	requestFixed(b, r)
	r.Key = msg[kpos : kpos+klen : kpos+klen]
	r.Value = msg[vpos : vpos+vlen : vpos+vlen]
	return true
}

// requestFixed reads a Request's fixed block b (at least reqBlockV2 bytes)
// into r at the generated layout's offsets (TestOffsetsMatchGenerated),
// without a flyweight: AsRequest's and DecodeRequest's one reader.
func requestFixed(b []byte, r *command.Request) {
	r.CorrelationID = binary.LittleEndian.Uint64(b[reqCorrelationID:])
	r.Op, r.Flags = command.Op(b[reqOp]), command.Flags(b[reqFlags])&allFlags
	r.Expiry = command.Expiry(b[reqExpiry])
	r.Expire = int64(binary.LittleEndian.Uint64(b[reqExpire:]))
	r.Amount, r.Amount2 = int64(binary.LittleEndian.Uint64(b[reqAmount:])), 0
}
