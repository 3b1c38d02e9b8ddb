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

// PeekKeyed reads, in place, a GET or a plain SET (no flags, no expiry)
// in a Request message of this schema's block length and version 2 or
// later, as AsRequest would decode it: the command, correlation id, key
// and value (both pointing into msg; a GET's value is whatever msg holds
// there, usually empty), and whether msg is one. Nothing is written: the
// engine's hot path serves such a request from these without filling a
// Request. On false the message is decoded the general way.
func PeekKeyed(msg []byte) (op command.Op, correlationID uint64, key, value []byte, ok bool) {
	if len(msg) < headerLen+reqBlockV2+2*varHdrLen {
		return 0, 0, nil, nil, false
	}
	h := binary.LittleEndian.Uint64(msg)
	if h&headerNoVersion != requestHeader || h>>48 < 2 {
		return 0, 0, nil, nil, false
	}
	b := msg[headerLen : headerLen+reqBlockV2+varHdrLen]
	switch op = command.Op(b[reqOp]); op {
	case command.OpGet:
	case command.OpSet:
		if command.Flags(b[reqFlags])&allFlags != 0 || command.Expiry(b[reqExpiry]) != command.ExpiryNone {
			return 0, 0, nil, nil, false
		}
	default:
		return 0, 0, nil, nil, false
	}
	// Lengths as ints (klen < 0 only where int has 32 bits), and the value
	// read from what follows the key: in this form the compiler proves
	// every slice below in bounds (four bounds checks and two slices'
	// masks fewer than AsRequest's form). The same bounds as AsRequest's.
	klen := int(binary.LittleEndian.Uint32(b[reqBlockV2:]))
	const kpos = headerLen + reqBlockV2 + varHdrLen
	if klen < 0 || klen > len(msg)-kpos-varHdrLen {
		return 0, 0, nil, nil, false
	}
	key = msg[kpos : kpos+klen : kpos+klen]
	rest := msg[kpos+klen:]
	vlen := int(binary.LittleEndian.Uint32(rest))
	rest = rest[varHdrLen:]
	if vlen < 0 || vlen > len(rest) {
		return 0, 0, nil, nil, false
	}
	return op, binary.LittleEndian.Uint64(b[reqCorrelationID:]), key, rest[:vlen:vlen], true
}
