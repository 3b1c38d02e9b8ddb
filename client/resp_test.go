package client

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/argv"
	"github.com/goblin-kv/goblin/proto/resp"
)

func TestRESPEncode(t *testing.T) {
	got, _ := (&respCodec{}).appendRequest(nil, [][]byte{[]byte("SET"), []byte("k"), []byte("a\r\nb\x00")}, 0)
	want := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\na\r\nb\x00\r\n"
	if string(got) != want {
		t.Fatalf("encoded %q, want %q", got, want)
	}
}

var respReplies = []struct {
	wire string
	want Value
}{
	{"+OK\r\n", Value{Kind: KindStatus, Str: []byte("OK")}},
	{"-ERR syntax error\r\n", Value{Kind: KindError, Err: &ServerError{Code: "ERR", Message: "ERR syntax error"}}},
	{":-42\r\n", Value{Kind: KindInt, Int: -42}},
	{":9223372036854775807\r\n", Value{Kind: KindInt, Int: 1<<63 - 1}},
	{":-9223372036854775808\r\n", Value{Kind: KindInt, Int: -1 << 63}},
	{"$-1\r\n", Value{Kind: KindNil}},
	{"$0\r\n\r\n", Value{Kind: KindBulk, Str: []byte{}}},
	{"$5\r\na\r\nb\x00\r\n", Value{Kind: KindBulk, Str: []byte("a\r\nb\x00")}},
	{"*-1\r\n", Value{Kind: KindNil}},
	{"*0\r\n", Value{Kind: KindArray, Array: []Value{}}},
	{"*3\r\n$1\r\na\r\n$-1\r\n*1\r\n:7\r\n", Value{Kind: KindArray, Array: []Value{
		{Kind: KindBulk, Str: []byte("a")}, {Kind: KindNil},
		{Kind: KindArray, Array: []Value{{Kind: KindInt, Int: 7}}},
	}}},
}

func equalValue(a, b Value) bool {
	if a.Kind != b.Kind || a.Int != b.Int || !bytes.Equal(a.Str, b.Str) || len(a.Array) != len(b.Array) ||
		a.Format != b.Format || len(a.Attrs) != len(b.Attrs) || (a.Float != b.Float && a.Float == a.Float) {
		return false
	}
	for i := range a.Attrs {
		if !equalValue(a.Attrs[i], b.Attrs[i]) {
			return false
		}
	}
	if (a.Err == nil) != (b.Err == nil) || (a.Err != nil && *a.Err != *b.Err) {
		return false
	}
	for i := range a.Array {
		if !equalValue(a.Array[i], b.Array[i]) {
			return false
		}
	}
	return true
}

// resp3Replies are RESP3's reply types, with how redis-cli -3 prints them
// (redis-cli 7.0's output, where it knows the type; see
// TestRESP3PrintsLikeRedisCLI in cmd/goblin-client for the comparison run
// against it).
var resp3Replies = []struct {
	wire string
	want Value
	text string
}{
	{"_\r\n", Value{Kind: KindNil}, "(nil)"},
	{"#t\r\n", Value{Kind: KindBool, Int: 1}, "(true)"},
	{"#f\r\n", Value{Kind: KindBool}, "(false)"},
	{",3.141\r\n", Value{Kind: KindDouble, Str: []byte("3.141"), Float: 3.141}, "(double) 3.141"},
	{",-inf\r\n", Value{Kind: KindDouble, Str: []byte("-inf"), Float: math.Inf(-1)}, "(double) -inf"},
	{"(1234567999999999999999999999999999999\r\n", Value{Kind: KindBigNumber, Str: []byte("1234567999999999999999999999999999999")},
		"(big number) 1234567999999999999999999999999999999"},
	{"!21\r\nSYNTAX invalid syntax\r\n", Value{Kind: KindError, Err: &ServerError{Code: "SYNTAX", Message: "SYNTAX invalid syntax"}},
		"(error) SYNTAX invalid syntax"},
	{"=29\r\ntxt:This is a verbatim\nstring\r\n", Value{Kind: KindVerbatim, Format: "txt", Str: []byte("This is a verbatim\nstring")},
		"This is a verbatim\nstring"},
	{"%2\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nmodules\r\n*0\r\n", Value{Kind: KindMap, Array: []Value{
		{Kind: KindBulk, Str: []byte("server")}, {Kind: KindBulk, Str: []byte("redis")},
		{Kind: KindBulk, Str: []byte("modules")}, {Kind: KindArray, Array: []Value{}}}},
		"1# \"server\" => \"redis\"\n2# \"modules\" => (empty array)"},
	{"%0\r\n", Value{Kind: KindMap, Array: []Value{}}, "(empty hash)"},
	{"~3\r\n:0\r\n:1\r\n:2\r\n", Value{Kind: KindSet, Array: []Value{{Kind: KindInt}, {Kind: KindInt, Int: 1}, {Kind: KindInt, Int: 2}}},
		"1~ (integer) 0\n2~ (integer) 1\n3~ (integer) 2"},
	{"~0\r\n", Value{Kind: KindSet, Array: []Value{}}, "(empty set)"},
	{"%1\r\n:1\r\n*2\r\n:2\r\n#t\r\n", Value{Kind: KindMap, Array: []Value{{Kind: KindInt, Int: 1},
		{Kind: KindArray, Array: []Value{{Kind: KindInt, Int: 2}, {Kind: KindBool, Int: 1}}}}},
		"1# (integer) 1 => 1) (integer) 2\n   2) (true)"},
	{">2\r\n$7\r\nmessage\r\n$2\r\nhi\r\n", Value{Kind: KindPush, Array: []Value{{Kind: KindBulk, Str: []byte("message")}, {Kind: KindBulk, Str: []byte("hi")}}},
		"1) \"message\"\n2) \"hi\""},
	{"|1\r\n+key-popularity\r\n*1\r\n,0.1923\r\n*1\r\n:2039123\r\n", Value{Kind: KindArray, Array: []Value{{Kind: KindInt, Int: 2039123}},
		Attrs: []Value{{Kind: KindStatus, Str: []byte("key-popularity")}, {Kind: KindArray, Array: []Value{{Kind: KindDouble, Str: []byte("0.1923"), Float: 0.1923}}}}},
		"1) (integer) 2039123"},
}

// TestRESP3ParseAndPrint: each RESP3 type parses whole (and needs more
// bytes when cut short) into its Kind, and prints as redis-cli -3 does.
func TestRESP3ParseAndPrint(t *testing.T) {
	var r result
	for _, tc := range resp3Replies {
		for cut := 0; cut < len(tc.wire); cut++ {
			n, err := (&respCodec{}).parseReply([]byte(tc.wire[:cut]), &r)
			if n != 0 || err != nil {
				t.Fatalf("%q cut at %d: n=%d err=%v, want need-more", tc.wire, cut, n, err)
			}
		}
		n, err := (&respCodec{}).parseReply([]byte(tc.wire+"+NEXT\r\n"), &r)
		if err != nil || n != len(tc.wire) {
			t.Fatalf("%q: n=%d err=%v, want %d", tc.wire, n, err, len(tc.wire))
		}
		got := r.value()
		if !equalValue(got, tc.want) {
			t.Errorf("%q decoded to %+v, want %+v", tc.wire, got, tc.want)
		}
		if s := got.String(); s != tc.text {
			t.Errorf("%q prints\n%s\nwant\n%s", tc.wire, s, tc.text)
		}
	}
	for _, wire := range []string{"#x\r\n", "_x\r\n", "%-1\r\n", "~x\r\n", "!-1\r\n"} {
		if _, err := (&respCodec{}).parseReply([]byte(wire), &r); !errors.Is(err, ErrProtocol) {
			t.Errorf("%q: %v, want ErrProtocol", wire, err)
		}
	}
}

func TestRESPParseWholeAndSplit(t *testing.T) {
	var r result
	for _, tc := range respReplies {
		// Every proper prefix needs more bytes; the whole reply parses
		// exactly, with trailing bytes left alone.
		for cut := 0; cut < len(tc.wire); cut++ {
			n, err := (&respCodec{}).parseReply([]byte(tc.wire[:cut]), &r)
			if n != 0 || err != nil {
				t.Fatalf("%q cut at %d: n=%d err=%v, want need-more", tc.wire, cut, n, err)
			}
		}
		n, err := (&respCodec{}).parseReply([]byte(tc.wire+"+NEXT\r\n"), &r)
		if err != nil || n != len(tc.wire) {
			t.Fatalf("%q: n=%d err=%v, want %d", tc.wire, n, err, len(tc.wire))
		}
		if got := r.value(); !equalValue(got, tc.want) {
			t.Errorf("%q decoded to %+v, want %+v", tc.wire, got, tc.want)
		}
	}
}

func TestRESPParseMalformed(t *testing.T) {
	for _, wire := range []string{
		"?what\r\n", "\r\n", "?", ":12a\r\n", ":\r\n", ":-\r\n", ":99999999999999999999\r\n",
		"$3\r\nabcX\r\n", "*99999999\r\n", "$x\r\n", "$-2\r\n",
	} {
		var r result
		n, err := (&respCodec{}).parseReply([]byte(wire), &r)
		if !errors.Is(err, ErrProtocol) {
			t.Errorf("%.40q: n=%d err=%v, want ErrProtocol", wire, n, err)
		}
	}
	deep := bytes.Repeat([]byte("*1\r\n"), maxDepth+2)
	var r result
	if _, err := (&respCodec{}).parseReply(append(deep, ":1\r\n"...), &r); !errors.Is(err, ErrProtocol) {
		t.Errorf("deep nesting: %v, want ErrProtocol", err)
	}
}

// TestHugeMapCountIsAnError: a RESP3 map or attribute count whose pair
// count doubled wraps int64 is a protocol error, not a panic on a negative
// slice bound.
func TestHugeMapCountIsAnError(t *testing.T) {
	for _, wire := range []string{"%4611686018427387905\r\n", "|4611686018427387904\r\n+a\r\n", "%9223372036854775807\r\n"} {
		var r result
		if _, err := (&respCodec{}).parseReply([]byte(wire), &r); err == nil {
			t.Errorf("parseReply(%q): no error", wire)
		}
	}
}

func FuzzRESPParse(f *testing.F) {
	for _, tc := range respReplies {
		f.Add([]byte(tc.wire))
	}
	f.Add([]byte("%4611686018427387905\r\n"))
	for _, tc := range resp3Replies {
		f.Add([]byte(tc.wire))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var r result
		n, err := (&respCodec{}).parseReply(b, &r)
		if err != nil {
			return
		}
		if n < 0 || n > len(b) {
			t.Fatalf("n=%d for %d bytes", n, len(b))
		}
		if n == 0 {
			return
		}
		// Parsing the exact reply again, and its two halves fed as a
		// growing buffer, agree.
		var r2 result
		if m, err := (&respCodec{}).parseReply(b[:n], &r2); m != n || err != nil {
			t.Fatalf("reparse of %q: %d %v", b[:n], m, err)
		}
		if !equalValue(r.value(), r2.value()) {
			t.Fatalf("reparse differs for %q", b[:n])
		}
		if m, err := (&respCodec{}).parseReply(b[:n/2], &r2); n/2 < n && (m != 0 || err != nil) {
			t.Fatalf("half of %q parsed: %d %v", b[:n], m, err)
		}
	})
}

func TestValueString(t *testing.T) {
	v := Value{Kind: KindArray, Array: []Value{
		{Kind: KindBulk, Str: []byte("a\"b\r\n\x00é")}, {Kind: KindNil}, {Kind: KindInt, Int: 3},
		{Kind: KindStatus, Str: []byte("OK")},
		{Kind: KindArray, Array: []Value{{Kind: KindInt, Int: 1}, {Kind: KindInt, Int: 2}}},
		{Kind: KindError, Err: &ServerError{Code: "ERR", Message: "ERR x"}},
		{Kind: KindArray}, {Kind: KindBulk}, {Kind: KindBulk}, {Kind: KindBulk},
	}}
	want := ` 1) "a\"b\r\n\x00\xc3\xa9"
 2) (nil)
 3) (integer) 3
 4) OK
 5) 1) (integer) 1
    2) (integer) 2
 6) (error) ERR x
 7) (empty array)
 8) ""
 9) ""
10) ""`
	if got := v.String(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// TestRESPAppendHotMatchesWords holds appendTyped's direct PING, GET and
// SET to the bytes the general encoder (Words, AppendCommand) makes of the
// same request, over key and value lengths around the digit boundaries,
// and checks that requests with options still take the general path.
func TestRESPAppendHotMatchesWords(t *testing.T) {
	var lens = []int{0, 1, 9, 10, 16, 99, 100, 101, 1000}
	var reqs []command.Request
	reqs = append(reqs, command.Request{Op: command.OpPing},
		command.Request{Op: command.OpPing, Args: [][]byte{[]byte("hello")}})
	for _, kl := range lens {
		key := bytes.Repeat([]byte{'k'}, kl)
		reqs = append(reqs, command.Request{Op: command.OpGet, Key: key})
		for _, vl := range lens {
			val := bytes.Repeat([]byte{'\r'}, vl)
			reqs = append(reqs, command.Request{Op: command.OpSet, Key: key, Value: val},
				command.Request{Op: command.OpSet, Key: key, Value: val, Flags: command.FlagNX},
				command.Request{Op: command.OpSet, Key: key, Value: val, Flags: command.FlagGet | command.FlagXX},
				command.Request{Op: command.OpSet, Key: key, Value: val, Flags: command.FlagKeepTTL},
				command.Request{Op: command.OpSet, Key: key, Value: val, Expiry: command.ExpiryPX, Expire: 1500})
		}
	}
	c := &respCodec{}
	var enc argv.Encoder
	for i := range reqs {
		r := &reqs[i]
		got, err := c.appendTyped([]byte("prefix"), r)
		if err != nil {
			t.Fatal(err)
		}
		words, err := enc.Words(r)
		if err != nil {
			t.Fatal(err)
		}
		if want := resp.AppendCommand([]byte("prefix"), words...); !bytes.Equal(got, want) {
			t.Errorf("%s key %d value %d flags %d expiry %d: %q, want %q", command.Name(r.Op), len(r.Key), len(r.Value), r.Flags, r.Expiry, got, want)
		}
	}
}

// TestRESPParseHotMatchesParse holds parseHot to parse: every reply it
// reads it leaves as parse does (kind, bytes, length used), and it
// reads the replies of a PING, GET and SET, so the direct path is the
// one taken; everything else (and every prefix of a reply) it leaves to
// parse.
func TestRESPParseHotMatchesParse(t *testing.T) {
	hot := []string{"+PONG\r\n", "+OK\r\n", "+x\r\n", "$-1\r\n", "$0\r\n\r\n", "$1\r\nx\r\n", "$9\r\n123456789\r\n",
		"$10\r\n0123456789\r\n", "$16\r\n0123456789abcdef\r\n", "$2\r\n\r\n\r\n",
		"$99\r\n" + strings.Repeat("v", 99) + "\r\n", "+OK\r\n+OK\r\n"}
	cold := []string{"+\r\n", "$100\r\n" + strings.Repeat("v", 100) + "\r\n", "+OK\rx\r\n", "+a\nb\r\n", "+" + strings.Repeat("s", 20) + "\r\n",
		"$01\r\nx\r\n", "$-2\r\n", "$-1\rx", "$3\r\nabcd\r\n", "$3\r\nab\r\n", "$1x\r\nx\r\n", "$1\rxx\r\n",
		":1\r\n", "-ERR x\r\n", "*1\r\n$1\r\nx\r\n", "_\r\n", ">1\r\n+x\r\n", "$", "+"}
	c := &respCodec{}
	check := func(wire string, wantHot bool) {
		t.Helper()
		buf := []byte(wire)
		var viaHot, viaParse result
		viaHot.kind, viaParse.kind = KindArray, KindArray // what a reset must clear
		n := parseHot(buf, &viaHot)
		if (n > 0) != wantHot {
			t.Errorf("parseHot(%q) = %d: want it read (%v)", wire, n, wantHot)
		}
		m, err := c.parse(buf, &viaParse, 0)
		if n == 0 {
			if viaHot.kind != KindArray {
				t.Errorf("parseHot(%q) touched the result it did not read", wire)
			}
			return
		}
		if err != nil || m != n || viaHot.kind != viaParse.kind || !bytes.Equal(viaHot.str, viaParse.str) ||
			(viaHot.str == nil) != (viaParse.str == nil) {
			t.Errorf("%q: parseHot %d %v %q, parse %d %v %q (%v)", wire, n, viaHot.kind, viaHot.str, m, viaParse.kind, viaParse.str, err)
		}
	}
	for _, w := range hot {
		check(w, true)
		for i := 0; i < len(w); i++ {
			if w == "+OK\r\n+OK\r\n" && i >= 5 {
				break // its first reply is whole from 5 bytes on
			}
			check(w[:i], false)
		}
	}
	for _, w := range cold {
		check(w, false)
	}
}
