package rdb

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc64"
	"math"
	"strings"
	"testing"
	"time"
)

func TestCRC64(t *testing.T) {
	if got := CRC64(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("crc64(123456789) = %#x, want 0xe9c6d914c4b8d9ca", got)
	}
	// The compensated form of hash/crc64 is the same CRC; compare on
	// every length around the 8-byte stride and in pieces.
	tab := crc64.MakeTable(crcPoly)
	data := binaryString(1000)
	for n := 0; n <= len(data); n += 1 + n/10 {
		p := data[:n]
		want := ^crc64.Update(^uint64(0), tab, p)
		if got := CRC64(0, p); got != want {
			t.Fatalf("len %d: %#x, want %#x", n, got, want)
		}
		if got := CRC64(CRC64(0, p[:n/3]), p[n/3:]); got != want {
			t.Fatalf("len %d in pieces: %#x, want %#x", n, got, want)
		}
	}
}

func TestLZF(t *testing.T) {
	// Redis's DUMP of 40 × "a" holds this block.
	blk, _ := hex.DecodeString("016161e01b00016161")
	out, ok := lzfDecompress(nil, blk, 40)
	if !ok || string(out) != strings.Repeat("a", 40) {
		t.Fatalf("decompress = %q, %v", out, ok)
	}
	if _, ok := lzfDecompress(nil, blk, 41); ok {
		t.Fatal("decompress accepted a wrong length")
	}
	var ht lzfTable
	inputs := [][]byte{
		[]byte(strings.Repeat("a", 40)),
		[]byte(strings.Repeat("goblin-rdb ", 2000)),
		binaryString(5000),
		append(binaryString(9000), binaryString(9000)...), // a repeat beyond the 8 KiB window
		[]byte("abcabcabcabcabcabcabcabcabcabc"),
	}
	// Back-references overlapping what they write, of every distance from
	// 1 to 40 (a period-p pattern), run past one reference's 264 bytes.
	for p := 1; p <= 40; p++ {
		pat := binaryString(p)
		inputs = append(inputs, append([]byte("head:"), bytes.Repeat(pat, 1000/p+3)...))
	}
	for i, in := range inputs {
		dst := make([]byte, len(in)+len(in)/32+16)
		n := lzfCompress(dst, in, &ht)
		if n == 0 {
			t.Fatalf("input %d: did not fit", i)
		}
		got, ok := lzfDecompress(nil, dst[:n], len(in))
		if !ok || !bytes.Equal(got, in) {
			t.Fatalf("input %d: round trip failed", i)
		}
	}
	// Incompressible input does not fit in len-4 bytes: Redis then writes it raw.
	noise := binaryString(300)
	if n := lzfCompress(make([]byte, len(noise)-4), noise, &ht); n != 0 {
		t.Fatalf("noise compressed to %d bytes", n)
	}
}

// The DUMP payloads Redis 7.0.15 returns for these values, recorded in
// ../shared/redis-interop.md (sections 1.6, 1.9, 1.10, 1.12, 2): the
// Encoder must produce the same bytes, footer included.
func TestDumpMatchesRedisBytes(t *testing.T) {
	cases := []struct {
		name string
		v    Value
		body string // hex, type byte and value, before the footer
	}{
		{"string", Value{Kind: KindString, Str: []byte("hello")}, "000568656c6c6f"},
		{"int16", Value{Kind: KindString, Str: []byte("12345")}, "00c13930"},
		{"lzf", Value{Kind: KindString, Str: []byte(strings.Repeat("a", 40))}, "00c30928016161e01b00016161"},
		{"hash", Value{Kind: KindHash, Items: strs("f1", "v1", "f2", "123")}, "10" + "15" + "150000000400826631038276310382663203" + "7b01ff"},
		{"zset", Value{Kind: KindZSet, Items: strs("m2", "m1"), Scores: []float64{2.5, 1}}, "11" + "16" + "160000000400826d310301018" + "26d3203833" + "22e3504ff"},
		{"list", Value{Kind: KindList, Items: strs("a", "1", "-5000")}, "12" + "0102" + "10" + "1000000003008161020101f178ec03ff"},
		{"intset", Value{Kind: KindSet, Items: strs("3", "1", "2")}, "0b" + "0e" + "0200000003000000010002000300"},
		{"set", Value{Kind: KindSet, Items: strs("x", "y")}, "02" + "02" + "0178" + "0179"},
	}
	for _, c := range cases {
		got, err := AppendDump(nil, &c.v)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		body := hex.EncodeToString(got[:len(got)-10])
		if body != c.body {
			t.Errorf("%s: body %s, want %s", c.name, body, c.body)
		}
		if got[len(got)-10] != 10 || got[len(got)-9] != 0 {
			t.Errorf("%s: version footer % x", c.name, got[len(got)-10:len(got)-8])
		}
		var d Decoder
		v, err := d.DecodeDump(got)
		if err != nil {
			t.Fatalf("%s: DecodeDump: %v", c.name, err)
		}
		if canon(v) != canon(&c.v) {
			t.Errorf("%s: decoded %s, want %s", c.name, canon(v), canon(&c.v))
		}
	}
}

func TestDumpVersionAndChecksum(t *testing.T) {
	p, _ := AppendDump(nil, &Value{Kind: KindString, Str: []byte("hello")})
	var d Decoder
	if _, err := d.DecodeDump(p[:9]); !errors.Is(err, ErrCorrupt) {
		t.Errorf("9 bytes: %v, want ErrCorrupt", err)
	}
	bad := bytes.Clone(p)
	bad[1] ^= 1
	if _, err := d.DecodeDump(bad); !errors.Is(err, ErrChecksum) {
		t.Errorf("flipped byte: %v, want ErrChecksum", err)
	}
	// An older version is accepted, a newer one refused, as RESTORE does.
	for _, c := range []struct {
		ver  uint16
		want error
	}{{9, nil}, {10, nil}, {11, ErrVersion}} {
		q := bytes.Clone(p[:len(p)-10])
		q = append(q, byte(c.ver), 0)
		q = append(q, make([]byte, 8)...)
		crc := CRC64(0, q[:len(q)-8])
		for i := range 8 {
			q[len(q)-8+i] = byte(crc >> (8 * i))
		}
		if _, err := d.DecodeDump(q); !errors.Is(err, c.want) && !(c.want == nil && err == nil) {
			t.Errorf("version %d: %v, want %v", c.ver, err, c.want)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	m := model()
	for _, opts := range []EncoderOptions{{}, {NoCompression: true}, {NoChecksum: true}} {
		data := writeModel(t, m, opts)
		got, _, d := decodeAll(t, data, DecoderOptions{})
		diffMaps(t, "round trip", got, modelMap(m, false))
		if st := d.Stats(); st.Checksum == opts.NoChecksum || st.Bytes != int64(len(data)) {
			t.Errorf("opts %+v: stats %+v (file %d bytes)", opts, st, len(data))
		}
		got, _, d = decodeAll(t, data, DecoderOptions{DropExpired: true})
		diffMaps(t, "drop expired", got, modelMap(m, true))
		if d.Stats().Expired != 1 {
			t.Errorf("expired = %d, want 1", d.Stats().Expired)
		}
	}
}

// TestEncodingsChosen checks the type byte of every model key against
// what Redis 7.0 would write for it under default limits.
func TestEncodingsChosen(t *testing.T) {
	want := map[string]byte{
		"s:": typeString, "l:": typeListQuicklist2,
		"set:int16": typeSetIntset, "set:int32": typeSetIntset, "set:int64": typeSetIntset,
		"set:strings": typeSet, "set:manyints": typeSet,
		"h:small": typeHashListpack, "h:many": typeHash, "h:longvalue": typeHash,
		"z:small": typeZSetListpack, "z:many": typeZSet2, "z:longmember": typeZSet2,
		"12": typeString,
	}
	_, types, _ := decodeAll(t, writeModel(t, model(), EncoderOptions{}), DecoderOptions{})
	for id, ty := range types {
		key := id[strings.IndexByte(id, '/')+1:]
		w, ok := want[key]
		if !ok {
			w, ok = want[key[:strings.IndexByte(key, ':')+1]]
		}
		if !ok {
			t.Fatalf("no expectation for %s", id)
		}
		if ty != w {
			t.Errorf("%s: type %s, want %s", id, TypeName(ty), TypeName(w))
		}
	}
}

func TestEncoderRefuses(t *testing.T) {
	e := NewEncoder(&bytes.Buffer{}, EncoderOptions{})
	if err := e.Write([]byte("k"), &Value{Kind: KindString}, NoExpiry); !errors.Is(err, ErrState) {
		t.Fatalf("write before header: %v", err)
	}
	e = NewEncoder(&bytes.Buffer{}, EncoderOptions{})
	_ = e.WriteHeader()
	_ = e.SelectDB(0, 1, 0)
	for _, c := range []struct {
		v    Value
		want error
	}{
		{Value{Kind: KindList}, ErrEmpty},
		{Value{Kind: KindHash, Items: strs("a")}, ErrBadValue},
		{Value{Kind: KindZSet, Items: strs("a"), Scores: []float64{math.NaN()}}, ErrBadValue},
		{Value{Kind: KindZSet, Items: strs("a")}, ErrBadValue},
		{Value{Kind: KindSet, Items: strs("1", "1")}, ErrBadValue},
		{Value{Kind: 99}, ErrBadValue},
	} {
		if err := e.Write([]byte("k"), &c.v, NoExpiry); !errors.Is(err, c.want) {
			t.Errorf("%+v: %v, want %v", c.v, err, c.want)
		}
	}
	// A refused value leaves the encoder usable.
	if err := e.Write([]byte("k"), &Value{Kind: KindString, Str: []byte("v")}, NoExpiry); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestTruncatedAndCorrupt: every prefix of a valid file, and the file with
// each byte changed, is refused with an *Error (never a panic, never a
// silent partial success); truncations name an offset within the input.
func TestTruncatedAndCorrupt(t *testing.T) {
	m := model()[:20]
	data := writeModel(t, m, EncoderOptions{Now: time.Unix(1700000000, 0)})
	for n := 0; n < len(data); n += 1 + n/64 {
		d := NewDecoder(bytes.NewReader(data[:n]), DecoderOptions{})
		for d.Next() {
		}
		var e *Error
		if !errors.As(d.Err(), &e) || e.Offset > int64(n) {
			t.Fatalf("prefix %d: err %v", n, d.Err())
		}
	}
	for i := 9; i < len(data); i += 1 + i/50 {
		bad := bytes.Clone(data)
		bad[i] ^= 0x5A
		d := NewDecoder(bytes.NewReader(bad), DecoderOptions{})
		for d.Next() {
		}
		if d.Err() == nil {
			t.Fatalf("byte %d flipped: accepted", i)
		}
	}
}

// TestUnsupportedTypes: a stream and a module value are refused with the
// key and type named, or skipped and counted when asked.
func TestUnsupportedTypes(t *testing.T) {
	var b []byte
	b = append(b, "REDIS0010"...)
	b = append(b, opSelectDB, 0)
	// A stream (type 19) with no listpacks and no groups.
	b = append(b, typeStreamListpack2, 6)
	b = append(b, "events"...)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	b = append(b, typeString, 1, 'k', 1, 'v')
	// A module value: id, a UINT field, a string field, end.
	id := uint64(0)
	for _, c := range []byte("ReJSON-RL") {
		id = id<<6 | uint64(strings.IndexByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", c))
	}
	id = id<<10 | 3
	b = append(b, typeModule2, 3, 'd', 'o', 'c')
	b = appendLen(b, id)
	b = append(b, 2, 5, 5, 2, 'h', 'i', 0)
	b = append(b, opEOF, 0, 0, 0, 0, 0, 0, 0, 0)

	d := NewDecoder(bytes.NewReader(b), DecoderOptions{})
	for d.Next() {
	}
	var e *Error
	if !errors.As(d.Err(), &e) || !errors.Is(e, ErrUnsupported) || string(e.Key) != "events" || e.Type != "stream" {
		t.Fatalf("stream: %v", d.Err())
	}
	d = NewDecoder(bytes.NewReader(b), DecoderOptions{SkipUnsupported: true})
	keys := 0
	for d.Next() {
		keys++
		if string(d.Entry().Key) != "k" {
			t.Fatalf("key %q", d.Entry().Key)
		}
	}
	if d.Err() != nil || keys != 1 || d.Stats().Skipped != 2 {
		t.Fatalf("skip: err %v keys %d stats %+v", d.Err(), keys, d.Stats())
	}
	// Without the stream, the module value is refused by name.
	b2 := append([]byte("REDIS0010"), b[len("REDIS0010")+2+2+6+10:]...)
	d = NewDecoder(bytes.NewReader(b2), DecoderOptions{})
	for d.Next() {
	}
	if !errors.As(d.Err(), &e) || !errors.Is(e, ErrUnsupported) || string(e.Key) != "doc" || !strings.Contains(e.Reason, "ReJSON-RL") {
		t.Fatalf("module: %v", d.Err())
	}
}

func TestBadHeader(t *testing.T) {
	for _, c := range []struct {
		in   string
		want error
	}{{"", ErrCorrupt}, {"REDIX0010", ErrCorrupt}, {"REDIS0013\xff", ErrVersion}, {"REDIS00a0", ErrCorrupt}} {
		d := NewDecoder(strings.NewReader(c.in), DecoderOptions{})
		if d.Next() || !errors.Is(d.Err(), c.want) {
			t.Errorf("%q: %v, want %v", c.in, d.Err(), c.want)
		}
	}
}

// TestAccessRecords: WriteAccess writes a key's LRU idle time or LFU
// counter before it as Redis does (RDB_OPCODE_IDLE, RDB_OPCODE_FREQ), the
// decoder hands them over with the key, and a key without one reads -1.
func TestAccessRecords(t *testing.T) {
	var buf bytes.Buffer
	enc := NewEncoder(&buf, EncoderOptions{})
	v := Value{Kind: KindString, Str: []byte("v")}
	if err := enc.WriteHeader(); err != nil {
		t.Fatal(err)
	}
	if err := enc.SelectDB(0, 3, 1); err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		key       string
		exp, idle int64
		freq      int
	}{{"idle", NoExpiry, 100000, -1}, {"freq", 1 << 42, -1, 255}, {"none", NoExpiry, -1, -1}} {
		if err := enc.WriteAccess([]byte(w.key), &v, w.exp, w.idle, w.freq); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	d := NewDecoder(&buf, DecoderOptions{})
	var got []string
	for d.Next() {
		e := d.Entry()
		got = append(got, fmt.Sprintf("%s:%d:%d:%d", e.Key, e.Expiry, e.Idle, e.Freq))
	}
	if d.Err() != nil {
		t.Fatal(d.Err())
	}
	want := []string{fmt.Sprintf("idle:%d:100000:-1", NoExpiry), fmt.Sprintf("freq:%d:-1:255", int64(1)<<42), fmt.Sprintf("none:%d:-1:-1", NoExpiry)}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("decoded %v, want %v", got, want)
	}
}
