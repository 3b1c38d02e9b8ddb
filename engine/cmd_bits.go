package engine

import (
	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/engine/internal/bitmap"
	"github.com/goblin-kv/goblin/proto/argv"
	"github.com/goblin-kv/goblin/store"
)

const errBitOffset = "ERR bit offset is not an integer or out of range"

// bitLimit reports whether a value holding bit off fits the store's value
// limit; if not it answers Redis's offset error.
func (e *Engine) bitLimit(off uint64) bool {
	if off>>3 >= uint64(e.st.Options().MaxValueLen) {
		e.errText(command.OutOfRange, errBitOffset)
		return false
	}
	return true
}

// growTo extends v with zero bytes to at least n bytes.
func growTo(v []byte, n int) []byte {
	for len(v) < n {
		v = append(v, 0)
	}
	return v
}

func (e *Engine) setBit(_ *Session, r *command.Request) {
	if e.notString(r.Key) {
		return
	}
	off := uint64(r.Amount)
	if !e.bitLimit(off) {
		return
	}
	var old uint64
	_, err := e.st.Update(r.Key, func(v []byte) []byte {
		v = growTo(v, int(off>>3)+1)
		old = bitmap.Unsigned(v, off, 1)
		bitmap.Put(v, off, 1, uint64(r.Amount2))
		return v
	})
	if err != nil {
		e.sizeError(err)
		return
	}
	e.integer(int64(old))
}

func (e *Engine) getBit(_ *Session, r *command.Request) {
	if e.notString(r.Key) {
		return
	}
	off := uint64(r.Amount)
	b := e.st.GetRange(e.scratch[:0], r.Key, int64(off>>3), int64(off>>3))
	e.scratch = b[:0]
	if len(b) == 0 {
		e.integer(0)
		return
	}
	e.integer(int64(bitmap.Unsigned(b, off&7, 1)))
}

func (e *Engine) bitCount(_ *Session, r *command.Request) {
	if e.notString(r.Key) {
		return
	}
	v, _ := e.st.Get(e.scratch[:0], r.Key)
	e.scratch = v[:0]
	e.integer(bitmap.Count(v, r.Amount, r.Amount2, r.Flags&command.FlagStart != 0, r.Flags&command.FlagBit != 0))
}

// bitPos answers BITPOS in Redis's order: a missing key first (0 when
// looking for a 0, -1 for a 1), then the range's errors.
func (e *Engine) bitPos(_ *Session, r *command.Request) {
	if e.notString(r.Key) {
		return
	}
	bit := int(b2i(r.Flags&command.FlagOne != 0))
	v, found := e.st.Get(e.scratch[:0], r.Key)
	e.scratch = v[:0]
	switch {
	case !found: // an endless run of zero bits
		e.integer(-int64(bit))
	case r.Flags&command.FlagBadInt != 0:
		e.errText(command.NotInteger, "ERR value is not an integer or out of range")
	case r.Flags&command.FlagBadRange != 0:
		e.errText(command.Syntax, "ERR syntax error")
	default:
		e.integer(bitmap.Pos(v, bit, r.Amount, r.Amount2, r.Flags&command.FlagStart != 0,
			r.Flags&command.FlagEnd != 0, r.Flags&command.FlagBit != 0))
	}
}

// bitOp answers BITOP: the result of the sources (missing ones are empty,
// shorter ones padded with zero bytes) replaces destkey, or deletes it
// when every source is empty; the reply is its length.
func (e *Engine) bitOp(_ *Session, r *command.Request) {
	for _, k := range r.Args {
		if e.notString(k) { // a hash, set or list source
			return
		}
	}
	// Each source is read into scratch; offs marks where each starts.
	buf := e.scratch[:0]
	e.ints = e.ints[:0]
	maxLen := 0
	for _, k := range r.Args {
		start := len(buf)
		buf, _ = e.st.Get(buf, k)
		e.ints = append(e.ints, start, len(buf))
		maxLen = max(maxLen, len(buf)-start)
	}
	res := growTo(buf[len(buf):], maxLen)[:maxLen]
	for i := range res {
		var acc byte
		for s := 0; s < len(e.ints); s += 2 {
			src := buf[e.ints[s]:e.ints[s+1]]
			c := byte(0)
			if i < len(src) {
				c = src[i]
			}
			switch {
			case s == 0:
				acc = c
			case r.Amount == argv.BitAnd:
				acc &= c
			case r.Amount == argv.BitOr:
				acc |= c
			case r.Amount == argv.BitXor:
				acc ^= c
			}
		}
		if r.Amount == argv.BitNot {
			acc = ^acc
		}
		res[i] = acc
	}
	e.scratch = buf[:0]
	if maxLen == 0 {
		e.st.Del(r.Key)
		e.integer(0)
		return
	}
	if _, _, _, err := e.st.Set(nil, r.Key, res, store.SetOptions{Kind: store.AsBuilt}); err != nil {
		e.storeError(err)
		return
	}
	e.integer(int64(maxLen))
}

// bitField answers BITFIELD and BITFIELD_RO: the operations were checked
// by the decoder; writes grow the value to the farthest bit written, then
// every operation runs in order on it.
func (e *Engine) bitField(_ *Session, r *command.Request) {
	if e.notString(r.Key) {
		return
	}
	var highest uint64
	write := false
	for _, rec := range r.Args {
		op, ok := command.ParseBitFieldOp(rec)
		if !ok {
			e.errText(command.Err, "ERR malformed BITFIELD operation")
			return
		}
		if op.Kind != command.BitGet {
			write = true
			highest = max(highest, op.Offset+uint64(op.Bits)-1)
		}
	}
	if write && r.Op == command.OpBitFieldRO {
		e.errText(command.Err, "ERR BITFIELD_RO only supports the GET subcommand")
		return
	}
	if write && !e.bitLimit(highest) {
		return
	}
	e.begin(command.Array)
	run := func(v []byte) []byte {
		for _, rec := range r.Args {
			op, _ := command.ParseBitFieldOp(rec)
			e.bitFieldOp(v, op)
		}
		return v
	}
	if !write {
		v, _ := e.st.Get(e.scratch[:0], r.Key)
		e.scratch = v[:0]
		run(v)
		e.end()
		return
	}
	_, err := e.st.Update(r.Key, func(v []byte) []byte {
		return run(growTo(v, int(highest>>3)+1))
	})
	if err != nil {
		e.resetResult()
		e.sizeError(err)
		return
	}
	e.end()
}

// bitFieldOp runs one operation on v and adds its reply.
func (e *Engine) bitFieldOp(v []byte, op command.BitFieldOp) {
	if op.Kind == command.BitGet {
		if op.Signed {
			e.addInt(bitmap.Signed(v, op.Offset, op.Bits))
		} else {
			e.addInt(int64(bitmap.Unsigned(v, op.Offset, op.Bits)))
		}
		return
	}
	behaviour := int(op.Overflow)
	var put uint64
	var ret int64
	var overflow bool
	if op.Signed {
		old := bitmap.Signed(v, op.Offset, op.Bits)
		if op.Kind == command.BitIncrBy {
			n, of := bitmap.AddSigned(old, op.Value, op.Bits, behaviour)
			put, ret, overflow = uint64(n), n, of
		} else {
			n, of := bitmap.AddSigned(op.Value, 0, op.Bits, behaviour)
			put, ret, overflow = uint64(n), old, of
		}
	} else {
		old := bitmap.Unsigned(v, op.Offset, op.Bits)
		if op.Kind == command.BitIncrBy {
			n, of := bitmap.AddUnsigned(old, op.Value, op.Bits, behaviour)
			put, ret, overflow = n, int64(n), of
		} else {
			n, of := bitmap.AddUnsigned(uint64(op.Value), 0, op.Bits, behaviour)
			put, ret, overflow = n, int64(old), of
		}
	}
	if overflow && behaviour == bitmap.Fail {
		e.add(command.Nil, 0, nil)
		return
	}
	bitmap.Put(v, op.Offset, op.Bits, put)
	e.addInt(ret)
}
