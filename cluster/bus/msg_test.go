package bus

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

func testName(c byte) (n Name) {
	for i := range n {
		n[i] = c
	}
	return n
}

// TestHeaderOffsets: each field lands at the offset cluster.h's
// static_asserts fix, and Decode reads back what Append wrote.
func TestHeaderOffsets(t *testing.T) {
	h := Header{Ver: 1, Port: 0x1234, Type: Update, Count: 3, CurrentEpoch: 0x0102030405060708, ConfigEpoch: 9,
		Offset: 0xabcdef, Sender: testName('a'), SlaveOf: testName('b'), Extensions: 2, PPort: 7, CPort: 0x2345,
		Flags: FlagMaster | FlagMyself, State: StateFail, MFlags: [3]byte{MFlagExtData, 0, 0}}
	h.Slots.Set(0)
	h.Slots.Set(16383)
	h.IP.SetString("10.1.2.3")
	b := h.Append(nil)
	if len(b) != HeaderSize {
		t.Fatalf("header is %d bytes, want %d", len(b), HeaderSize)
	}
	be := binary.BigEndian
	checks := []struct {
		name      string
		got, want uint64
	}{
		{"port@10", uint64(be.Uint16(b[10:])), 0x1234},
		{"type@12", uint64(be.Uint16(b[12:])), 7},
		{"count@14", uint64(be.Uint16(b[14:])), 3},
		{"currentEpoch@16", be.Uint64(b[16:]), 0x0102030405060708},
		{"configEpoch@24", be.Uint64(b[24:]), 9},
		{"offset@32", be.Uint64(b[32:]), 0xabcdef},
		{"sender@40", uint64(b[40]), 'a'},
		{"slot0@80", uint64(b[80]), 1},
		{"slot16383@2127", uint64(b[2127]), 0x80},
		{"slaveof@2128", uint64(b[2128]), 'b'},
		{"myip@2168", uint64(b[2168]), '1'},
		{"extensions@2214", uint64(be.Uint16(b[2214:])), 2},
		{"pport@2246", uint64(be.Uint16(b[2246:])), 7},
		{"cport@2248", uint64(be.Uint16(b[2248:])), 0x2345},
		{"flags@2250", uint64(be.Uint16(b[2250:])), 17},
		{"state@2252", uint64(b[2252]), 1},
		{"mflags@2253", uint64(b[2253]), 4},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %#x, want %#x", c.name, c.got, c.want)
		}
	}
	var d Header
	if err := d.Decode(b); err != nil {
		t.Fatal(err)
	}
	if d != h {
		t.Errorf("decode(append(h)) differs from h")
	}
}

// reencode builds msg again from its decoded parts with this package's
// encoders: a message goblin would send with the same content.
func reencode(t testing.TB, msg []byte) []byte {
	var h Header
	if err := h.Decode(msg); err != nil {
		t.Fatal(err)
	}
	out := h.Append(nil)
	switch h.Type {
	case Ping, Pong, Meet:
		var g Gossip
		for i := range int(h.Count) {
			GossipAt(msg, i, &g)
			out = g.Append(out)
		}
		x := Extensions(msg)
		var e Ext
		n := 0
		for x.Next(&e) {
			if e.Type != ExtHostname {
				t.Fatalf("extension type %d in a 7.0 message", e.Type)
			}
			out = AppendHostnameExt(out, string(e.Hostname()))
			n++
		}
		return Finish(out, int(h.Count), n)
	case Fail:
		n := FailName(msg)
		return Finish(AppendFail(out, &n), 0, 0)
	case Publish, PublishShard:
		c, m := PublishData(msg)
		return Finish(AppendPublish(out, c, m), 0, 0)
	case Update:
		var n Name
		var s Slotmap
		e := UpdateData(msg, &n, &s)
		return Finish(AppendUpdate(out, e, &n, &s), 0, 0)
	}
	return Finish(out, 0, 0)
}

func readGolden(t testing.TB, name string) []byte {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGoldenRedis70: messages a redis-server 7.0.15 sent (captured by
// TestCaptureRedis70 into testdata) pass Check, decode to what that node
// was (a master with slots 0-2 and 5000, hostname myhost.example), and
// this package's encoders rebuild them byte for byte.
func TestGoldenRedis70(t *testing.T) {
	for _, name := range []string{"meet-7.0.15.bin", "ping-7.0.15.bin"} {
		t.Run(name, func(t *testing.T) {
			msg := readGolden(t, name)
			if err := Check(msg); err != nil {
				t.Fatal(err)
			}
			checkRedisSender(t, msg)
			if got := reencode(t, msg); !bytes.Equal(got, msg) {
				t.Fatalf("re-encoded message differs from redis-server's:\n got %x\nwant %x", got, msg)
			}
		})
	}
}

// checkRedisSender asserts what the capture's sender was.
func checkRedisSender(t testing.TB, msg []byte) {
	var h Header
	_ = h.Decode(msg)
	if h.Ver != 1 || h.Flags != FlagMaster|FlagMyself || !h.SlaveOf.Zero() {
		t.Errorf("ver %d flags %d slaveof %q: want 1, master|myself, none", h.Ver, h.Flags, h.SlaveOf[:])
	}
	for s := range Slots {
		if want := s <= 2 || s == 5000; h.Slots.Has(s) != want {
			t.Errorf("slot %d set=%v, want %v", s, h.Slots.Has(s), want)
		}
	}
	if h.Slots.Count() != 4 {
		t.Errorf("%d slots, want 4", h.Slots.Count())
	}
	if h.MFlags[0]&MFlagExtData == 0 || h.Extensions != 1 {
		t.Errorf("mflags %x extensions %d: want EXT_DATA and 1", h.MFlags, h.Extensions)
	}
	x := Extensions(msg)
	var e Ext
	if !x.Next(&e) || e.Type != ExtHostname || string(e.Hostname()) != "myhost.example" || len(e.Data) != 16 {
		t.Errorf("hostname extension: type %d %q (%d bytes), want 0 \"myhost.example\" in 16", e.Type, e.Hostname(), len(e.Data))
	}
}

// TestCheckLengths: Check drops what clusterProcessPacket drops.
func TestCheckLengths(t *testing.T) {
	me := testName('c')
	base := Header{Ver: 1, Sender: me}
	mk := func(typ Type, body func([]byte) []byte, count, ext int) []byte {
		h := base
		h.Type = typ
		b := h.Append(nil)
		if body != nil {
			b = body(b)
		}
		return Finish(b, count, ext)
	}
	g := Gossip{Name: testName('d'), Port: 1, CPort: 2}
	good := map[string][]byte{
		"ping":    mk(Ping, func(b []byte) []byte { return AppendHostnameExt(g.Append(b), "h") }, 1, 1),
		"meet":    mk(Meet, nil, 0, 0),
		"fail":    mk(Fail, func(b []byte) []byte { return AppendFail(b, &me) }, 0, 0),
		"publish": mk(Publish, func(b []byte) []byte { return AppendPublish(b, []byte("ch"), []byte("hello")) }, 0, 0),
		"authreq": mk(FailoverAuthRequest, nil, 0, 0),
		"update":  mk(Update, func(b []byte) []byte { var s Slotmap; return AppendUpdate(b, 3, &me, &s) }, 0, 0),
		"unknown": mk(Type(77), func(b []byte) []byte { return append(b, 1, 2, 3) }, 0, 0),
	}
	for name, m := range good {
		if err := Check(m); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if len(good["update"]) != MaxSize {
		t.Errorf("UPDATE is %d bytes, want %d", len(good["update"]), MaxSize)
	}
	if len(good["fail"]) != 2296 {
		t.Errorf("FAIL is %d bytes, want 2296", len(good["fail"]))
	}
	bad := map[string][]byte{
		"ping count past end": mk(Ping, nil, 2, 0),
		"fail short":          mk(Fail, nil, 0, 0),
		"authack with body":   mk(FailoverAuthAck, func(b []byte) []byte { return append(b, 0) }, 0, 0),
		"publish lengths":     mk(Publish, func(b []byte) []byte { return AppendPublish(b, []byte("ch"), []byte("x"))[:len(b)+9] }, 0, 0),
	}
	for name, m := range bad {
		if err := Check(m); err == nil {
			t.Errorf("%s: Check passed it", name)
		}
	}
	v2 := mk(MFStart, nil, 0, 0)
	v2[9] = 2
	if err := Check(v2); err == nil {
		t.Error("version 2 passed")
	}
	// A 7.2 extension (SHARDID) is skipped by its length.
	h := base
	h.Type = Pong
	b := h.Append(nil)
	b = binary.BigEndian.AppendUint32(b, 8+40)
	b = binary.BigEndian.AppendUint16(b, ExtShardID)
	b = append(b, 0, 0)
	b = append(b, make([]byte, 40)...)
	b = AppendHostnameExt(b, "after")
	b = Finish(b, 0, 2)
	if err := Check(b); err != nil {
		t.Fatal(err)
	}
	x := Extensions(b)
	var e Ext
	var types []uint16
	var host string
	for x.Next(&e) {
		types = append(types, e.Type)
		if e.Type == ExtHostname {
			host = string(e.Hostname())
		}
	}
	if len(types) != 2 || types[0] != ExtShardID || host != "after" {
		t.Errorf("extensions %v, hostname %q: want [3 0] and \"after\"", types, host)
	}
}

// TestReaderChunks: a stream of messages cut into random pieces comes out
// of a Reader as the same messages, in order.
func TestReaderChunks(t *testing.T) {
	msgs := [][]byte{readGolden(t, "meet-7.0.15.bin"), readGolden(t, "ping-7.0.15.bin")}
	var h Header
	h.Ver, h.Type = 1, FailoverAuthAck
	msgs = append(msgs, Finish(h.Append(nil), 0, 0))
	var stream []byte
	var want [][]byte
	for i := range 200 {
		m := msgs[i%len(msgs)]
		stream = append(stream, m...)
		want = append(want, m)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, maxChunk := range []int{1, 7, 100, 3000, 100000} {
		var rd Reader
		var got [][]byte
		for p := stream; len(p) > 0; {
			n := min(len(p), 1+rng.IntN(maxChunk))
			if rng.IntN(2) == 0 {
				rd.Write(p[:n])
			} else {
				buf := rd.Buffer(n)
				copy(buf, p[:n])
				rd.Wrote(n)
			}
			p = p[n:]
			for {
				m, err := rd.Next()
				if err != nil {
					t.Fatal(err)
				}
				if m == nil {
					break
				}
				got = append(got, bytes.Clone(m))
			}
		}
		if len(got) != len(want) {
			t.Fatalf("chunks ≤ %d: %d messages, want %d", maxChunk, len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("chunks ≤ %d: message %d differs", maxChunk, i)
			}
		}
	}
	var rd Reader
	rd.Write([]byte("RCmx\x00\x00\x10\x00"))
	if _, err := rd.Next(); err == nil {
		t.Error("bad signature accepted")
	}
	rd = Reader{}
	rd.Write([]byte("RCmb\x00\x00\x00\x10"))
	if _, err := rd.Next(); err == nil {
		t.Error("length below the header's accepted")
	}
}

// TestPingAllocs: building a PING with gossip and a hostname into a kept
// buffer, and decoding one, allocate nothing.
func TestPingAllocs(t *testing.T) {
	var h Header
	h.Ver, h.Type, h.Sender = 1, Ping, testName('e')
	gs := []Gossip{{Name: testName('f')}, {Name: testName('0')}, {Name: testName('1')}}
	buf := make([]byte, 0, MaxSize)
	var msg []byte
	allocs := testing.AllocsPerRun(100, func() {
		b := h.Append(buf[:0])
		for i := range gs {
			b = gs[i].Append(b)
		}
		b = AppendHostnameExt(b, "host.example")
		msg = Finish(b, len(gs), 1)
	})
	if allocs != 0 {
		t.Errorf("encoding a PING: %v allocations", allocs)
	}
	var d Header
	var g Gossip
	var e Ext
	allocs = testing.AllocsPerRun(100, func() {
		if Check(msg) != nil {
			t.Fatal("check")
		}
		_ = d.Decode(msg)
		for i := range int(d.Count) {
			GossipAt(msg, i, &g)
		}
		x := Extensions(msg)
		for x.Next(&e) {
		}
	})
	if allocs != 0 {
		t.Errorf("decoding a PING: %v allocations", allocs)
	}
}

// FuzzMessage: Check never panics; a message it passes decodes without
// panicking, re-encodes (for the types goblin sends) to the same bytes
// up to the unused fields, and a Reader given it whole or split in two
// returns it unchanged.
func FuzzMessage(f *testing.F) {
	for _, name := range []string{"meet-7.0.15.bin", "ping-7.0.15.bin"} {
		f.Add(readGolden(f, name))
	}
	var h Header
	h.Ver = 1
	for _, typ := range []Type{Fail, Publish, Update, MFStart, Module} {
		h.Type = typ
		b := h.Append(nil)
		switch typ {
		case Fail:
			b = AppendFail(b, &h.Sender)
		case Publish:
			b = AppendPublish(b, []byte("c"), []byte("m"))
		case Update:
			b = AppendUpdate(b, 1, &h.Sender, &h.Slots)
		case Module:
			b = append(b, make([]byte, 13)...)
		}
		f.Add(Finish(b, 0, 0))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		if Check(msg) != nil {
			return
		}
		var rd Reader
		half := len(msg) / 2
		rd.Write(msg[:half])
		if m, _ := rd.Next(); m != nil && half < len(msg) {
			t.Fatal("message returned before its end arrived")
		}
		rd.Write(msg[half:])
		m, err := rd.Next()
		if err != nil || !bytes.Equal(m, msg) {
			t.Fatalf("reader: %v", err)
		}
		typ := PeekType(msg)
		if typ >= NumTypes || typ == Module {
			return
		}
		var d Header
		_ = d.Decode(msg)
		if (typ == Ping || typ == Pong || typ == Meet) && d.MFlags[0]&MFlagExtData != 0 {
			x := Extensions(msg)
			var e Ext
			for x.Next(&e) {
				if e.Type != ExtHostname {
					return // reencode rebuilds hostname extensions only
				}
				if len(e.Data) != (len(e.Hostname())+1+7)&^7 {
					return // padding other than goblin's own
				}
			}
		}
		got := reencode(t, msg)
		want := bytes.Clone(msg)
		clear(want[offNotUsed : offNotUsed+30])
		if typ == Ping || typ == Pong || typ == Meet {
			if want[offMFlags]&MFlagExtData == 0 {
				return // extensions counted but not flagged: ignored by Redis, not re-sent
			}
		} else if d.MFlags[0]&MFlagExtData == 0 && d.Extensions != 0 {
			return
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("re-encoded differs:\n got %x\nwant %x", got, want)
		}
	})
}
