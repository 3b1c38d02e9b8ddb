package command

import (
	"encoding/binary"
	"hash/crc64"

	"github.com/goblin-kv/goblin/reply"
	"github.com/goblin-kv/goblin/request"
	"github.com/goblin-kv/goblin/store"
)

// DUMP and RESTORE in goblin's own payload format, versioned so that a
// goblin server can hand keys to another (cluster mode's MIGRATE):
//
//	byte 0      'g' (0x67), goblin's mark: a Redis payload starts with its
//	            RDB type byte, 0 for a string, so neither is taken for the other
//	byte 1      format version, dumpVersion
//	byte 2      how the value is kept (store.ValueKind: 0 as SET keeps it,
//	            1 a string that spells an integer, 2 built in place)
//	bytes 3..   the value
//	last 8      CRC-64 (ECMA) of everything before, little-endian
//
// A payload of another version, or whose checksum fails, is refused with
// Redis's text; a Redis payload is refused the same way.
const (
	dumpMark    = 'g'
	dumpVersion = 1
	dumpHeader  = 3
	dumpTrailer = 8
)

var crcTable = crc64.MakeTable(crc64.ECMA)

func (e *Engine) dump(_ *Session, r *request.Request) {
	val, _, ok := e.appendDump(e.scratch[:0], r.Key)
	e.scratch = val[:0]
	if !ok {
		e.null()
		return
	}
	e.bulk(val)
}

// appendDump appends key's DUMP payload to dst and returns it with the
// key's expiry (unix ms, 0 for none); ok is false, and dst returned
// unchanged, when the key is missing.
func (e *Engine) appendDump(dst, key []byte) (payload []byte, expireAt int64, ok bool) {
	b := append(dst, dumpMark, dumpVersion, 0)
	val, kind, at, ok := e.st.Export(b, key)
	if !ok {
		return dst, 0, false
	}
	val[len(dst)+2] = byte(kind)
	val = binary.LittleEndian.AppendUint64(val, crc64.Checksum(val[len(dst):], crcTable))
	return val, at, true
}

// restore answers RESTORE key ttl payload [REPLACE] [ABSTTL]: the ttl, if
// any, is in r.Expire (relative: PX, absolute: PXAT).
func (e *Engine) restore(_ *Session, r *request.Request) {
	replace := r.Flags&request.FlagReplace != 0
	if !replace && e.st.Exists(r.Key) {
		e.errText(reply.BusyKey, "BUSYKEY Target key name already exists.")
		return
	}
	p := r.Value
	if len(p) < dumpHeader+dumpTrailer || p[0] != dumpMark || p[1] != dumpVersion ||
		binary.LittleEndian.Uint64(p[len(p)-dumpTrailer:]) != crc64.Checksum(p[:len(p)-dumpTrailer], crcTable) {
		e.errText(reply.Err, "ERR DUMP payload version or checksum are wrong")
		return
	}
	kind := store.ValueKind(p[2])
	if kind > store.AsBuilt {
		e.errText(reply.Err, "ERR Bad data format")
		return
	}
	var at int64
	if r.Expiry != request.ExpiryNone {
		at = r.Expire
		if r.Expiry == request.ExpiryPX {
			at += e.clock.NowMillis()
		}
	}
	if replace {
		e.st.Del(r.Key)
	}
	if at != 0 && at <= e.clock.NowMillis() {
		e.ok() // already expired: nothing to create, as Redis
		return
	}
	if _, err := e.st.Import(r.Key, p[dumpHeader:len(p)-dumpTrailer], kind, at, true); err != nil {
		e.storeError(err)
		return
	}
	e.ok()
}
