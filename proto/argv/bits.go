package argv

import (
	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/resp"
)

// The bit commands' syntax.

const errBitOffset = "ERR bit offset is not an integer or out of range"

// maxBitOffset bounds a bit offset as Redis does (its byte within
// proto-max-bulk-len, 512 MiB); the engine also holds it to the store's
// value limit.
const maxBitOffset = 512 << 20 << 3

// bitOffset reads a bit offset; with bits > 0 the "#N" form means N*bits.
func (d *Decoder) bitOffset(b []byte, bits int, dst *uint64) bool {
	hash := bits > 0 && len(b) > 0 && b[0] == '#'
	if hash {
		b = b[1:]
	}
	v, ok := resp.ParseInt(b)
	if ok && hash {
		v *= int64(bits)
	}
	if !ok || v < 0 || v >= maxBitOffset {
		return d.fail(command.OutOfRange, errBitOffset)
	}
	*dst = uint64(v)
	return true
}

// parseSetBit reads SETBIT key offset value: the offset in Amount, the bit
// in Amount2.
func parseSetBit(d *Decoder, r *command.Request, args [][]byte) bool {
	r.Key = args[1]
	var off uint64
	if !d.bitOffset(args[2], 0, &off) {
		return false
	}
	r.Amount = int64(off)
	v, ok := resp.ParseInt(args[3])
	if !ok || v&^1 != 0 {
		return d.fail(command.OutOfRange, "ERR bit is not an integer or out of range")
	}
	r.Amount2 = v
	return true
}

// parseGetBit reads GETBIT key offset.
func parseGetBit(d *Decoder, r *command.Request, args [][]byte) bool {
	r.Key = args[1]
	var off uint64
	if !d.bitOffset(args[2], 0, &off) {
		return false
	}
	r.Amount = int64(off)
	return true
}

// unitWord reads BYTE or BIT into r's flags.
func unitWord(r *command.Request, w []byte) bool {
	switch {
	case eq(w, "bit"):
		r.Flags |= command.FlagBit
	case eq(w, "byte"):
	default:
		return false
	}
	return true
}

// parseBitCount reads BITCOUNT key [start end [BYTE|BIT]].
func parseBitCount(d *Decoder, r *command.Request, args [][]byte) bool {
	r.Key = args[1]
	switch len(args) {
	case 2:
		return true
	case 4, 5:
		if !d.integer(args[2], &r.Amount) || !d.integer(args[3], &r.Amount2) {
			return false
		}
		if len(args) == 5 && !unitWord(r, args[4]) {
			return d.syntax()
		}
		r.Flags |= command.FlagStart | command.FlagEnd
		return true
	}
	return d.syntax()
}

// parseBitPos reads BITPOS key bit [start [end [BYTE|BIT]]]. The bit is
// checked at once; a bad range is only flagged, since Redis answers a
// missing key before it reads the range.
func parseBitPos(d *Decoder, r *command.Request, args [][]byte) bool {
	r.Key = args[1]
	var bit int64
	if !d.integer(args[2], &bit) {
		return false
	}
	if bit != 0 && bit != 1 {
		return d.fail(command.Err, "ERR The bit argument must be 1 or 0.")
	}
	if bit == 1 {
		r.Flags |= command.FlagOne
	}
	if len(args) > 6 {
		r.Flags |= command.FlagBadRange
		return true
	}
	if len(args) >= 4 {
		if !d.deferInt(r, args[3], &r.Amount) {
			return true
		}
		r.Flags |= command.FlagStart
	}
	if len(args) == 6 && !unitWord(r, args[5]) {
		r.Flags |= command.FlagBadRange
		return true
	}
	if len(args) >= 5 {
		if !d.deferInt(r, args[4], &r.Amount2) {
			return true
		}
		r.Flags |= command.FlagEnd
	}
	return true
}

// deferInt reads an integer, flagging a bad one instead of failing.
func (d *Decoder) deferInt(r *command.Request, b []byte, dst *int64) bool {
	v, ok := resp.ParseInt(b)
	if !ok {
		r.Flags |= command.FlagBadRange | command.FlagBadInt
		return false
	}
	*dst = v
	return true
}

// The BITOP operations, in Amount.
const (
	BitAnd = 0
	BitOr  = 1
	BitXor = 2
	BitNot = 3
)

// parseBitOp reads BITOP AND|OR|XOR|NOT destkey key [key ...]: the
// operation in Amount, destkey in Key, the sources in Args.
func parseBitOp(d *Decoder, r *command.Request, args [][]byte) bool {
	switch o := args[1]; {
	case eq(o, "and"):
		r.Amount = BitAnd
	case eq(o, "or"):
		r.Amount = BitOr
	case eq(o, "xor"):
		r.Amount = BitXor
	case eq(o, "not"):
		r.Amount = BitNot
	default:
		return d.syntax()
	}
	if r.Amount == BitNot && len(args) != 4 {
		return d.fail(command.Err, "ERR BITOP NOT must be called with a single source key.")
	}
	r.Key, r.Args = args[2], args[3:]
	return true
}

const errBitfieldType = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."

// bitfieldType reads i1..i64 or u1..u63.
func (d *Decoder) bitfieldType(b []byte, op *command.BitFieldOp) bool {
	if len(b) == 0 || (b[0] != 'i' && b[0] != 'u') {
		return d.fail(command.Err, errBitfieldType)
	}
	op.Signed = b[0] == 'i'
	n, ok := resp.ParseInt(b[1:])
	if !ok || n < 1 || (op.Signed && n > 64) || (!op.Signed && n > 63) {
		return d.fail(command.Err, errBitfieldType)
	}
	op.Bits = uint8(n)
	return true
}

// parseBitField reads BITFIELD and BITFIELD_RO key [GET type offset] [SET
// type offset value] [INCRBY type offset increment] [OVERFLOW
// WRAP|SAT|FAIL]...: every operation becomes a command.BitFieldOp record
// in Args (the records live in the Decoder until its next call).
func parseBitField(d *Decoder, r *command.Request, args [][]byte) bool {
	r.Key = args[1]
	d.recs = d.recs[:0]
	overflow := uint8(command.BitWrap)
	readonly := true
	for j := 2; j < len(args); j++ {
		left := len(args) - j - 1
		var op command.BitFieldOp
		switch w := args[j]; {
		case eq(w, "get") && left >= 2:
			op.Kind = command.BitGet
		case eq(w, "set") && left >= 3:
			op.Kind = command.BitSet
		case eq(w, "incrby") && left >= 3:
			op.Kind = command.BitIncrBy
		case eq(w, "overflow") && left >= 1:
			j++
			switch t := args[j]; {
			case eq(t, "wrap"):
				overflow = command.BitWrap
			case eq(t, "sat"):
				overflow = command.BitSat
			case eq(t, "fail"):
				overflow = command.BitFail
			default:
				return d.fail(command.Err, "ERR Invalid OVERFLOW type specified")
			}
			continue
		default:
			return d.syntax()
		}
		if !d.bitfieldType(args[j+1], &op) || !d.bitOffset(args[j+2], int(op.Bits), &op.Offset) {
			return false
		}
		op.Overflow = overflow
		if op.Kind != command.BitGet {
			readonly = false
			if !d.integer(args[j+3], &op.Value) {
				return false
			}
			j++
		}
		d.recs = command.AppendBitFieldOp(d.recs, op)
		j += 2
	}
	if !readonly && r.Op == command.OpBitFieldRO {
		return d.fail(command.Err, "ERR BITFIELD_RO only supports the GET subcommand")
	}
	d.recArgs = d.recArgs[:0]
	for i := 0; i < len(d.recs); i += command.BitFieldOpLen {
		d.recArgs = append(d.recArgs, d.recs[i:i+command.BitFieldOpLen:i+command.BitFieldOpLen])
	}
	r.Args = d.recArgs
	return true
}

// parseLCS reads LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN]:
// key2 in Args[0], MINMATCHLEN in Amount (negative as 0).
func parseLCS(d *Decoder, r *command.Request, args [][]byte) bool {
	r.Key, r.Args = args[1], args[2:3]
	for j := 3; j < len(args); j++ {
		switch o := args[j]; {
		case eq(o, "idx"):
			r.Flags |= command.FlagIdx
		case eq(o, "len"):
			r.Flags |= command.FlagLen
		case eq(o, "withmatchlen"):
			r.Flags |= command.FlagWithMatchLen
		case eq(o, "minmatchlen") && j+1 < len(args):
			j++
			if !d.integer(args[j], &r.Amount) {
				return false
			}
			r.Amount = max(r.Amount, 0)
		default:
			return d.syntax()
		}
	}
	if r.Flags&command.FlagIdx != 0 && r.Flags&command.FlagLen != 0 {
		return d.fail(command.Err, "ERR If you want both the length and indexes, please just use IDX.")
	}
	return true
}
