package command

import "encoding/binary"

// BITFIELD travels as its key and one Args entry per operation, each a
// fixed 20-byte record in the request (the SBE form is these bytes too):
//
//	byte 0     kind: BitGet, BitSet or BitIncrBy
//	byte 1     1 for a signed type (iN), 0 for unsigned (uN)
//	byte 2     width in bits: 1..64 signed, 1..63 unsigned
//	byte 3     overflow: BitWrap, BitSat or BitFail (OVERFLOW before it)
//	bytes 4-11 bit offset, little-endian (the #N form already multiplied)
//	bytes 12-19 SET's value or INCRBY's increment, little-endian two's complement
type BitFieldOp struct {
	Kind     uint8
	Signed   bool
	Bits     uint8
	Overflow uint8
	Offset   uint64
	Value    int64
}

// The BITFIELD operation kinds and overflow behaviours.
const (
	BitGet    = 0
	BitSet    = 1
	BitIncrBy = 2

	BitWrap = 0
	BitSat  = 1
	BitFail = 2
)

// BitFieldOpLen is the size of one encoded operation.
const BitFieldOpLen = 20

// AppendBitFieldOp appends op's record to dst.
func AppendBitFieldOp(dst []byte, op BitFieldOp) []byte {
	signed := byte(0)
	if op.Signed {
		signed = 1
	}
	dst = append(dst, op.Kind, signed, op.Bits, op.Overflow)
	dst = binary.LittleEndian.AppendUint64(dst, op.Offset)
	return binary.LittleEndian.AppendUint64(dst, uint64(op.Value))
}

// ParseBitFieldOp reads one record; ok is false for a record of the wrong
// size or with values out of range.
func ParseBitFieldOp(b []byte) (op BitFieldOp, ok bool) {
	if len(b) != BitFieldOpLen {
		return op, false
	}
	op = BitFieldOp{Kind: b[0], Signed: b[1] == 1, Bits: b[2], Overflow: b[3],
		Offset: binary.LittleEndian.Uint64(b[4:]), Value: int64(binary.LittleEndian.Uint64(b[12:]))}
	max := uint8(63)
	if op.Signed {
		max = 64
	}
	ok = op.Kind <= BitIncrBy && b[1] <= 1 && op.Bits >= 1 && op.Bits <= max && op.Overflow <= BitFail
	return op, ok
}
