// Package rdb reads and writes Redis's RDB snapshot format, version 10 (the
// format of Redis 7.0), and the DUMP payloads that DUMP, RESTORE and
// MIGRATE exchange.
//
// An Encoder writes a file a Redis 7.0 loads and redis-check-rdb accepts:
// the REDIS0010 magic, the AUX fields Redis writes, SELECTDB and RESIZEDB
// per database, millisecond expiries, and each value in the encoding Redis
// 7.0 itself would write for it (strings as integers, LZF or raw; lists as
// quicklists of listpacks; sets as intsets or plain sets; hashes and sorted
// sets as listpacks or their plain forms, by the same limits as Redis's
// *-max-listpack-* settings), then EOF and the CRC64.
//
// A Decoder reads a file from an io.Reader one key at a time. It accepts
// everything Redis 7.0 writes for strings, lists, sets, hashes and sorted
// sets, and the encodings of older versions (ziplist, zipmap, quicklist of
// ziplists, text scores, second expiries). Streams, module values, module
// AUX data and functions, which goblin does not store, are refused with the
// key and type named, or skipped and counted with
// DecoderOptions.SkipUnsupported. Corrupt or truncated input is refused
// with an *Error naming the byte offset and the reason; the Decoder never
// panics on bad input and bounds what a forged length can make it
// allocate.
//
// AppendDump and Decoder.DecodeDump handle DUMP payloads: type byte, value,
// RDB version and CRC64, with RESTORE's rules on the version and checksum.
//
// The CRC is Redis's CRC-64 (Jones polynomial, reflected, initial value 0,
// no final xor), which hash/crc64 cannot produce directly; CRC64 computes it
// eight bytes at a time.
//
// Neither the Encoder nor the Decoder is safe for concurrent use; each is
// meant to be owned by one goroutine. Writing a key allocates nothing once
// the Encoder's scratch buffers have grown; the Decoder reuses its buffers
// from key to key, so an Entry is valid only until the next call to Next.
//
// docs/rdb.md describes the format choices and how the server uses this
// package.
package rdb
