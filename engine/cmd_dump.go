package engine

import (
	"errors"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/argv"
	"github.com/goblin-kv/goblin/rdb"
	"github.com/goblin-kv/goblin/store"
)

// DUMP and RESTORE in Redis 7.0's payload format (package rdb): the RDB
// type byte, the value as an RDB file holds it, the RDB version (2 bytes,
// little-endian) and Redis's CRC-64 of all that (8 bytes, little-endian).
// A string is written as Redis writes it (an integer that fits 32 bits in
// its integer form, LZF when that saves space, else raw), so goblin's DUMP
// is byte for byte Redis's and either restores the other's payloads.

// bigDump is the size of value above which DUMP and RESTORE use a
// throw-away encoder or decoder, so that the engine's own keep only the
// buffers of ordinary values.
const bigDump = 1 << 20

func (e *Engine) dump(_ *Session, r *command.Request) {
	p, _, ok := e.appendDump(e.dumpBuf[:0], r.Key)
	e.dumpBuf = p[:0]
	if !ok {
		e.null()
		return
	}
	e.st.Touch(r.Key) // DUMP reads the key as Redis's lookupKeyRead: an access (OBJECT IDLETIME)
	e.bulk(p)
}

// appendDump appends key's DUMP payload to dst and returns it with the
// key's expiry (unix ms, 0 for none); ok is false, and dst returned
// unchanged, when the key is missing.
func (e *Engine) appendDump(dst, key []byte) (payload []byte, expireAt int64, ok bool) {
	val, _, at, ok := e.st.Export(e.scratch[:0], key)
	e.scratch = val[:0]
	if !ok {
		if val, at, ok = e.st.ExportCollection(key, &e.dumpVal, val); !ok {
			return dst, 0, false
		}
		e.scratch = val[:0]
	} else {
		e.dumpVal = rdb.Value{Kind: rdb.KindString, Str: val, Items: e.dumpVal.Items[:0]}
	}
	var err error
	if len(val) > bigDump {
		payload, err = rdb.NewEncoder(nil, e.rdbOptions()).AppendDump(dst, &e.dumpVal)
	} else {
		if e.dumpEnc == nil || e.dumpLimits != e.st.Options().Limits {
			e.dumpEnc = rdb.NewEncoder(nil, e.rdbOptions())
			e.dumpLimits = e.st.Options().Limits
		}
		payload, err = e.dumpEnc.AppendDump(dst, &e.dumpVal)
	}
	e.dumpVal.Str = nil
	clear(e.dumpVal.Items)
	e.dumpVal.Items = e.dumpVal.Items[:0]
	if err != nil { // a live value always encodes: strings, and collections are never empty
		panic("engine: DUMP: " + err.Error())
	}
	return payload, at, true
}

// restore answers RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s]
// [FREQ f] as Redis 7.0 does: the ttl, if any, is in r.Expire (relative:
// PX, absolute: PXAT); IDLETIME's seconds (FlagIdle, in r.Amount) become
// the key's idle time, as Redis's objectSetLRUOrLFU sets its LRU clock;
// FREQ's counter (FlagFreq, in r.Amount) becomes the key's LFU counter.
// Each counts only under the policy that keeps it (IDLETIME an LRU one,
// FREQ an LFU one), as in Redis.
func (e *Engine) restore(_ *Session, r *command.Request) {
	replace := r.Flags&command.FlagReplace != 0
	if !replace && e.st.Exists(r.Key) {
		e.errText(command.BusyKey, "BUSYKEY Target key name already exists.")
		return
	}
	if r.Expire < 0 { // checked after BUSYKEY, as Redis does
		if r.Expire == argv.RestoreTTLNotInteger {
			e.errText(command.NotInteger, "ERR value is not an integer or out of range")
		} else {
			e.errText(command.Err, "ERR Invalid TTL value, must be >= 0")
		}
		return
	}
	p := r.Value
	if len(p) < 10 { // Redis's verifyDumpPayload: no room for the footer
		e.errText(command.Err, "ERR DUMP payload version or checksum are wrong")
		return
	}
	dec := e.dumpDec
	if len(p) > bigDump {
		dec = rdb.NewDecoder(nil, rdb.DecoderOptions{})
	} else if dec == nil {
		dec = rdb.NewDecoder(nil, rdb.DecoderOptions{})
		e.dumpDec = dec
	}
	v, err := dec.DecodeDump(p)
	if err != nil {
		var re *rdb.Error
		switch {
		case errors.Is(err, rdb.ErrVersion), errors.Is(err, rdb.ErrChecksum):
			e.errText(command.Err, "ERR DUMP payload version or checksum are wrong")
		case errors.Is(err, rdb.ErrUnsupported) && errors.As(err, &re):
			e.errText(command.Err, "ERR Bad data format: the payload holds a "+re.Type+", a type goblin does not store")
		default:
			e.errText(command.Err, "ERR Bad data format")
		}
		return
	}
	if v.Kind != rdb.KindString && v.Kind != rdb.KindHash && v.Kind != rdb.KindSet && v.Kind != rdb.KindList && v.Kind != rdb.KindZSet {
		e.errText(command.Err, "ERR Bad data format: the payload holds a "+rdb.TypeName(p[0])+", a type goblin does not store")
		return
	}
	var at int64
	if r.Expiry != command.ExpiryNone {
		at = r.Expire
		if r.Expiry == command.ExpiryPX {
			at += e.clock.NowMillis()
		}
	}
	if replace {
		e.st.Del(r.Key)
	}
	if at != 0 && at <= e.clock.NowMillis() && !e.st.NoExpiry() {
		e.ok() // already expired: nothing to create, as Redis (whose replica creates it: its primary sends the DEL)
		return
	}
	if v.Kind != rdb.KindString {
		if err := e.st.ImportCollection(r.Key, v, at); err != nil {
			e.collError(err)
			return
		}
		e.restored(r)
		return
	}
	// Kept as SET keeps it: Redis's RESTORE runs tryObjectEncoding on the
	// string it loads, so OBJECT ENCODING says int, embstr or raw as after SET.
	if _, err := e.st.Import(r.Key, v.Str, store.AsSet, at, true); err != nil {
		e.storeError(err)
		return
	}
	e.restored(r)
}

// restored finishes a RESTORE that created its key: IDLETIME or FREQ
// applied.
func (e *Engine) restored(r *command.Request) {
	if r.Flags&command.FlagIdle != 0 {
		e.st.SetIdleTime(r.Key, r.Amount)
	}
	if r.Flags&command.FlagFreq != 0 {
		e.st.SetFreq(r.Key, int(r.Amount))
	}
	e.ok()
}

// rdbOptions are the encoder options of DUMP: the store's thresholds
// choose each collection's encoding, as Redis's do.
func (e *Engine) rdbOptions() rdb.EncoderOptions {
	l := e.st.Options().Limits
	return rdb.EncoderOptions{Limits: rdb.Limits{
		HashMaxListpackEntries: max(l.HashMaxListpackEntries, 1), HashMaxListpackValue: max(l.HashMaxListpackValue, 1),
		SetMaxIntsetEntries:    max(l.SetMaxIntsetEntries, 1),
		ZSetMaxListpackEntries: max(l.ZSetMaxListpackEntries, 1), ZSetMaxListpackValue: max(l.ZSetMaxListpackValue, 1),
	}}
}
