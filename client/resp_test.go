package client

import (
	"bytes"
	"errors"
	"testing"
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
	if a.Kind != b.Kind || a.Int != b.Int || !bytes.Equal(a.Str, b.Str) || len(a.Array) != len(b.Array) {
		return false
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

func FuzzRESPParse(f *testing.F) {
	for _, tc := range respReplies {
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
