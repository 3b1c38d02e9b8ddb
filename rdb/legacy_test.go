package rdb

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// Encodings Redis 7.0 reads but no longer writes (RDB versions ≤ 9): built
// here byte by byte from src/ziplist.c and src/zipmap.c, decoded, and —
// where Redis is installed — checked by redis-check-rdb and loaded by
// redis-server, whose view must be the Decoder's.

// zlEntry encodes one ziplist entry body (encoding and data, no prevlen).
func zlEntry(s string) []byte {
	if v, ok := parseInt([]byte(s)); ok {
		switch {
		case v >= 0 && v <= 12:
			return []byte{0xF1 + byte(v)}
		case v >= -128 && v <= 127:
			return []byte{0xFE, byte(v)}
		case v >= -32768 && v <= 32767:
			return binary.LittleEndian.AppendUint16([]byte{0xC0}, uint16(v))
		case v >= -8388608 && v <= 8388607:
			u := uint32(v)
			return []byte{0xF0, byte(u), byte(u >> 8), byte(u >> 16)}
		case v >= -2147483648 && v <= 2147483647:
			return binary.LittleEndian.AppendUint32([]byte{0xD0}, uint32(v))
		default:
			return binary.LittleEndian.AppendUint64([]byte{0xE0}, uint64(v))
		}
	}
	n := len(s)
	switch {
	case n <= 63:
		return append([]byte{byte(n)}, s...)
	case n <= 16383:
		return append([]byte{0x40 | byte(n>>8), byte(n)}, s...)
	default:
		return append(binary.BigEndian.AppendUint32([]byte{0x80}, uint32(n)), s...)
	}
}

func ziplist(items ...string) []byte {
	b := make([]byte, 10)
	prev, tail := 0, 10
	for _, s := range items {
		tail = len(b)
		if prev < 254 {
			b = append(b, byte(prev))
		} else {
			b = binary.LittleEndian.AppendUint32(append(b, 0xFE), uint32(prev))
		}
		b = append(b, zlEntry(s)...)
		prev = len(b) - tail
	}
	b = append(b, 0xFF)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	binary.LittleEndian.PutUint32(b[4:], uint32(tail))
	binary.LittleEndian.PutUint16(b[8:], uint16(len(items)))
	return b
}

func zipmap(pairs ...string) []byte {
	b := []byte{byte(len(pairs) / 2)}
	for i, s := range pairs {
		b = append(b, byte(len(s)))
		if i%2 == 1 {
			b = append(b, 0) // no free bytes
		}
		b = append(b, s...)
	}
	return append(b, 0xFF)
}

func rawString(b, s []byte) []byte { return append(appendLen(b, uint64(len(s))), s...) }

// legacyFile is an RDB version 9 file holding every legacy encoding.
func legacyFile() ([]byte, map[string]string) {
	long := strings.Repeat("L", 100)
	huge := strings.Repeat("H", 20000)
	b := []byte("REDIS0009")
	b = append(b, opSelectDB, 0)
	key := func(t byte, k string) { b = rawString(append(b, t), []byte(k)) }
	key(typeListZiplist, "zl:list")
	b = rawString(b, ziplist("a", long, huge, "0", "12", "13", "-100", "1000", "-70000", "3000000000", "-9223372036854775808", ""))
	key(typeHashZiplist, "zl:hash")
	b = rawString(b, ziplist("f1", "v1", "f2", "7"))
	key(typeZSetZiplist, "zl:zset")
	b = rawString(b, ziplist("m1", "1", "m2", "2.5"))
	key(typeListQuicklist, "ql:v1")
	b = appendLen(b, 2)
	b = rawString(b, ziplist("x", "y"))
	b = rawString(b, ziplist("z"))
	key(typeHashZipmap, "zm:hash")
	b = rawString(b, zipmap("name", "goblin", "n", "1"))
	key(typeList, "plain:list")
	b = appendLen(b, 2)
	b = rawString(b, []byte("p"))
	b = rawString(b, []byte("q"))
	key(typeZSet, "text:zset")
	b = appendLen(b, 3)
	b = rawString(b, []byte("a"))
	b = append(b, 3, '1', '.', '5')
	b = rawString(b, []byte("b"))
	b = append(b, 254) // +inf
	b = rawString(b, []byte("c"))
	b = append(b, 255) // -inf
	b = binary.LittleEndian.AppendUint32(append(b, opExpireTime), 2100000000)
	key(typeString, "sec:expiry")
	b = rawString(b, []byte("v"))
	b = append(b, opEOF)
	b = binary.LittleEndian.AppendUint64(b, CRC64(0, b))

	list := func(items ...string) string { return canon(&Value{Kind: KindList, Items: strs(items...)}) }
	want := map[string]string{
		"0/zl:list":    "exp=-9223372036854775808 " + list("a", long, huge, "0", "12", "13", "-100", "1000", "-70000", "3000000000", "-9223372036854775808", ""),
		"0/zl:hash":    "exp=-9223372036854775808 " + canon(&Value{Kind: KindHash, Items: strs("f1", "v1", "f2", "7")}),
		"0/zl:zset":    "exp=-9223372036854775808 " + canon(&Value{Kind: KindZSet, Items: strs("m1", "m2"), Scores: []float64{1, 2.5}}),
		"0/ql:v1":      "exp=-9223372036854775808 " + list("x", "y", "z"),
		"0/zm:hash":    "exp=-9223372036854775808 " + canon(&Value{Kind: KindHash, Items: strs("name", "goblin", "n", "1")}),
		"0/plain:list": "exp=-9223372036854775808 " + list("p", "q"),
		"0/text:zset": "exp=-9223372036854775808 " + canon(&Value{Kind: KindZSet, Items: strs("a", "b", "c"),
			Scores: []float64{1.5, inf(1), inf(-1)}}),
		"0/sec:expiry": "exp=2100000000000 " + canon(&Value{Kind: KindString, Str: []byte("v")}),
	}
	return b, want
}

func TestLegacyEncodings(t *testing.T) {
	data, want := legacyFile()
	got, _, d := decodeAll(t, data, DecoderOptions{})
	diffMaps(t, "legacy", got, want)
	if d.Version() != 9 || !d.Stats().Checksum {
		t.Errorf("version %d stats %+v", d.Version(), d.Stats())
	}
}

// TestRedisReadsLegacyFile proves the hand-built legacy file is what Redis
// means by those encodings: redis-check-rdb passes it and redis-server
// loads it to the same contents the Decoder reads.
func TestRedisReadsLegacyFile(t *testing.T) {
	bin := testkit.Need(t, "redis-check-rdb", "checking the legacy RDB files")
	data, want := legacyFile()
	dir := t.TempDir()
	path := filepath.Join(dir, "legacy.rdb")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, path).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("RDB looks OK")) {
		t.Fatalf("redis-check-rdb: %v\n%s", err, out)
	}
	p := startRedis(t, dir, "legacy.rdb")
	diffMaps(t, "redis-server holds", p.allContents(t, 0), want)
}
