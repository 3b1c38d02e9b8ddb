package engine

import (
	"encoding/binary"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/rdb"
)

// dumpValues are the strings DUMP is compared on: every encoding Redis
// chooses for a string payload (int8, int16, int32, a 64-bit integer as
// text, LZF, raw with each length size) and the strings that look like
// integers without being canonical ones.
func dumpValues() []string {
	return []string{
		"", "a", "hello", "0", "-1", "127", "-128", "128", "-32768", "32767", "32768", "65535",
		"2147483647", "-2147483648", "2147483648", "-2147483649", "9223372036854775807", "-9223372036854775808",
		"9223372036854775808", "007", "-0", "+1", " 1", "1.5", "12345678901", "123456789012345678901234",
		"\x00\xff\r\n binary \x01", strings.Repeat("abc", 20), strings.Repeat("x", 21), strings.Repeat("goblin ", 2000),
		"0123456789abcdefghijklmnopqrstuvwxyz", // over 20 bytes and incompressible: raw
		strings.Repeat("y", 70000),             // a 32-bit length before LZF
	}
}

// redisDo sends one command to the oracle redis-server on c and returns its
// reply, parsed.
func redisDo(t *testing.T, c net.Conn, args ...string) node {
	t.Helper()
	out := roundTrip(t, c, resp.AppendCommandString(nil, args...))
	n, _, err := parseNode(out)
	if err != nil {
		t.Fatalf("%q: redis reply %q: %v", args, out, err)
	}
	return n
}

func dialRedis(t *testing.T) net.Conn {
	t.Helper()
	c, err := net.Dial("unix", redisSocket(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	return c
}

// TestDumpAgainstRedis: goblin's DUMP reply is redis-server's byte for
// byte, for strings set by SET and for strings built by APPEND, SETRANGE,
// INCRBYFLOAT and INCR (which goblin keeps in other forms).
func TestDumpAgainstRedis(t *testing.T) {
	var script []oracleCase
	for i, v := range dumpValues() {
		k := "k" + strconv.Itoa(i)
		script = append(script, cases([]string{"SET", k, v}, []string{"DUMP", k})...)
	}
	script = append(script, cases(
		[]string{"SET", "b", "1"}, []string{"APPEND", "b", "2"}, []string{"DUMP", "b"},
		[]string{"SETRANGE", "r", "0", "123"}, []string{"DUMP", "r"},
		[]string{"SETRANGE", "r2", "30", "z"}, []string{"DUMP", "r2"},
		[]string{"INCRBYFLOAT", "f", "10"}, []string{"DUMP", "f"}, []string{"INCRBYFLOAT", "f2", "1.25"}, []string{"DUMP", "f2"},
		[]string{"INCR", "n"}, []string{"INCRBY", "n", "99999999999"}, []string{"DUMP", "n"},
		[]string{"DUMP", "nope"},
	)...)
	compareWithRedis(t, script, true)
}

// TestRestoreAgainstRedis: payloads DUMPed by redis-server and by goblin
// RESTORE into both with the same values, encodings and times to live,
// and damaged payloads are refused with the same error by both.
func TestRestoreAgainstRedis(t *testing.T) {
	c := dialRedis(t)
	redisDo(t, c, "FLUSHALL")
	e, _ := newEngine(t, Options{})
	s := NewSession(0, nil)
	var script []oracleCase
	for i, v := range dumpValues() {
		k := "k" + strconv.Itoa(i)
		redisDo(t, c, "SET", k, v)
		theirs := redisDo(t, c, "DUMP", k)
		do(t, e, s, "SET", k, v)
		ours := strings.TrimPrefix(do(t, e, s, "DUMP", k), "$")
		if ours != string(theirs.str) {
			t.Errorf("DUMP %q: goblin %q, redis %q", v, ours, theirs.str)
		}
		// Redis's payload restored by both, then goblin's.
		for j, p := range []string{string(theirs.str), ours} {
			r := "r" + strconv.Itoa(j) + "-" + k
			script = append(script, cases(
				[]string{"RESTORE", r, "0", p}, []string{"GET", r}, []string{"OBJECT", "ENCODING", r}, []string{"PTTL", r},
				[]string{"RESTORE", r, "0", p}, // BUSYKEY
				[]string{"RESTORE", r, "100000", p, "REPLACE"}, []string{"TTL", r}, []string{"GET", r},
				[]string{"RESTORE", r, "4102444800000", p, "REPLACE", "ABSTTL", "IDLETIME", "10"}, []string{"PEXPIRETIME", r},
				[]string{"RESTORE", r, "0", p, "REPLACE", "FREQ", "5"}, []string{"PTTL", r}, []string{"STRLEN", r},
				[]string{"RESTORE", r, "1", p, "REPLACE", "ABSTTL"}, []string{"EXISTS", r}, // already expired: deleted
				[]string{"RESTORE", r, "1", p, "ABSTTL"}, []string{"EXISTS", r},
			)...)
		}
	}
	// Damaged payloads, built from a real one (an LZF string).
	redisDo(t, c, "SET", "src", strings.Repeat("abc", 20))
	good := redisDo(t, c, "DUMP", "src").str
	resum := func(p []byte) string {
		binary.LittleEndian.PutUint64(p[len(p)-8:], rdb.CRC64(0, p[:len(p)-8]))
		return string(p)
	}
	edit := func(f func(p []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	bad := []string{
		"", "x", "123456789", string(good[:9]), string(good[1:]),
		string(edit(func(p []byte) []byte { p[3] ^= 1; return p })),                           // body changed, CRC not
		string(edit(func(p []byte) []byte { p[len(p)-1] ^= 1; return p })),                    // CRC changed
		resum(edit(func(p []byte) []byte { p[len(p)-10] = 11; return p })),                    // version 11, CRC right
		resum(edit(func(p []byte) []byte { p[len(p)-10] = 9; return p })),                     // version 9: accepted
		resum(edit(func(p []byte) []byte { p[0] = 0xEE; return p })),                          // unknown type
		resum(edit(func(p []byte) []byte { p[3] = 99; return p })),                            // LZF length wrong
		resum(edit(func(p []byte) []byte { return p[:len(p)-11+1] })),                         // cut short
		resum(append([]byte{0, 3, 'a', 'b', 'c', 'x', 'y'}, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0)),   // bytes after the value
		resum(append([]byte{0, 0xC0}, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0)),                         // an int8 with no byte
		resum(append([]byte{0, 0x80, 0xff, 0xff, 0xff, 0xff}, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0)), // a huge length
		string(append([]byte{0, 3, 'a', 'b', 'c'}, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0)),            // checksum zero
		resum(append([]byte{0, 3, 'a', 'b', 'c'}, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0)),             // well formed
	}
	for i, p := range bad {
		k := "bad" + strconv.Itoa(i)
		script = append(script, cases([]string{"RESTORE", k, "0", p}, []string{"GET", k})...)
	}
	script = append(script, cases(
		[]string{"SET", "busy", "v"}, []string{"RESTORE", "busy", "0", "garbage"}, []string{"RESTORE", "busy", "0", "garbage", "REPLACE"},
		[]string{"GET", "busy"}, []string{"RESTORE", "busy", "-1", "garbage"}, []string{"RESTORE", "busy", "x", "garbage"},
		[]string{"RESTORE", "busy", "-1", "garbage", "BOGUS"},
	)...)
	compareWithRedis(t, script, false)
}

// TestRestoreRefusesOtherTypes: a payload of a type goblin does not store
// (Redis's DUMP of a stream) is refused
// naming the type, and leaves the key as it was.
func TestRestoreRefusesOtherTypes(t *testing.T) {
	c := dialRedis(t)
	redisDo(t, c, "FLUSHALL")
	e, _ := newEngine(t, Options{})
	s := NewSession(0, nil)
	do(t, e, s, "SET", "k", "kept")
	for _, tc := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"XADD", "x", "1-1", "f", "v"}, "stream"},
	} {
		redisDo(t, c, "DEL", "x")
		if n := redisDo(t, c, tc.cmd...); n.typ == '-' {
			t.Fatalf("%q on redis: %s", tc.cmd, n.str)
		}
		p := redisDo(t, c, "DUMP", "x").str
		want := "-ERR Bad data format: the payload holds a " + tc.want + ", a type goblin does not store"
		if got := do(t, e, s, "RESTORE", "k", "0", string(p), "REPLACE"); got != want {
			t.Errorf("RESTORE of redis's %q:\n got %s\nwant %s", tc.cmd, got, want)
		}
		if got := do(t, e, s, "GET", "k"); got != "$kept" {
			t.Errorf("after a refused RESTORE REPLACE, GET k = %s", got)
		}
	}
}

// TestRestoreIdleTimeAgainstRedis: RESTORE ... IDLETIME n leaves the key
// idle for n seconds, as redis-server does: OBJECT IDLETIME reads n at
// once (redis-server's clock may tick once meanwhile) and n plus the time
// gone later; without IDLETIME a restored key is fresh; FREQ, kept only
// under an LFU policy goblin does not have, changes nothing.
func TestRestoreIdleTimeAgainstRedis(t *testing.T) {
	c := dialRedis(t)
	redisDo(t, c, "FLUSHALL")
	e, clock := newEngine(t, Options{})
	e.Tick(0) // the LRU clock, from the fake clock
	s := NewSession(0, nil)
	idle := func(k string) (ours, theirs int64) {
		t.Helper()
		o, err := strconv.ParseInt(strings.TrimPrefix(do(t, e, s, "OBJECT", "IDLETIME", k), ":"), 10, 64)
		if err != nil {
			t.Fatalf("goblin OBJECT IDLETIME %s: %v", k, err)
		}
		n := redisDo(t, c, "OBJECT", "IDLETIME", k)
		r, err := strconv.ParseInt(string(n.str), 10, 64)
		if err != nil {
			t.Fatalf("redis OBJECT IDLETIME %s: %q", k, n.str)
		}
		return o, r
	}
	redisDo(t, c, "SET", "s", "hello")
	redisDo(t, c, "HSET", "h", "f", "v")
	for _, src := range []string{"s", "h"} {
		p := string(redisDo(t, c, "DUMP", src).str)
		for _, tc := range []struct {
			key  string
			args []string
			want int64
		}{
			{src + "-idle", []string{"IDLETIME", "1000"}, 1000},
			{src + "-idle-abs", []string{"ABSTTL", "IDLETIME", "86400"}, 86400},
			{src + "-fresh", nil, 0},
			{src + "-freq", []string{"FREQ", "100"}, 0},
			{src + "-zero", []string{"IDLETIME", "0"}, 0},
		} {
			args := append([]string{"RESTORE", tc.key, "0", p}, tc.args...)
			if got := do(t, e, s, args...); got != "+OK" {
				t.Fatalf("goblin %q: %s", args[4:], got)
			}
			if n := redisDo(t, c, args...); string(n.str) != "OK" {
				t.Fatalf("redis %q: %q", args[4:], n.str)
			}
			ours, theirs := idle(tc.key)
			if ours != tc.want || theirs < tc.want || theirs > tc.want+1 {
				t.Errorf("RESTORE %s %q: OBJECT IDLETIME goblin %d, redis %d, want %d", src, tc.args, ours, theirs, tc.want)
			}
		}
	}
	// The idle time goes on from there.
	clock.Advance(5 * time.Second)
	e.Tick(0)
	if got := do(t, e, s, "OBJECT", "IDLETIME", "s-idle"); got != ":1005" {
		t.Errorf("OBJECT IDLETIME 5 s after RESTORE IDLETIME 1000: %s, want :1005", got)
	}
}
