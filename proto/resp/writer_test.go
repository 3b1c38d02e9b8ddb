package resp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	tresp "github.com/tidwall/resp"
)

// TestWriterOracle decodes what the Append* functions write with
// tidwall/resp, an independent RESP implementation.
func TestWriterOracle(t *testing.T) {
	var b []byte
	b = AppendSimpleString(b, "PONG")
	b = AppendOK(b)
	b = AppendError(b, "ERR bad\r\nthing")
	b = AppendInt(b, -42)
	b = AppendBulk(b, []byte("bin\r\n\x00"))
	b = AppendBulkString(b, "")
	b = AppendBulkInt(b, 1234)
	b = AppendNull(b)
	b = AppendArray(b, 2)
	b = AppendBulkString(b, "a")
	b = AppendNull(b)
	rd := tresp.NewReader(bytes.NewReader(b))
	want := []string{`+"PONG"`, `+"OK"`, `-"ERR bad  thing"`, `:"-42"`, "$\"bin\\r\\n\\x00\"", `$""`, `$"1234"`, "null", `*"[a ]"`}
	for i, w := range want {
		v, _, err := rd.ReadValue()
		if err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
		got := fmt.Sprintf("%c%q", v.Type(), v.String())
		if v.IsNull() {
			got = "null"
		}
		if got != w {
			t.Errorf("value %d = %s, want %s", i, got, w)
		}
	}
	if _, _, err := rd.ReadValue(); err != io.EOF {
		t.Fatalf("trailing bytes: %v", err)
	}
}

func TestCommandRoundTrip(t *testing.T) {
	wire := AppendCommandString(nil, "SET", "key", "")
	wire = AppendCommand(wire, []byte("GET"), []byte("key"))
	v, _, err := tresp.NewReader(bytes.NewReader(wire)).ReadValue()
	if err != nil || len(v.Array()) != 3 || v.Array()[0].String() != "SET" {
		t.Fatalf("tidwall/resp reads %v, %v", v, err)
	}
	args, n, err := ReadCommand(wire, nil, nil)
	if err != nil || len(args) != 3 || string(args[1]) != "key" {
		t.Fatalf("ReadCommand: %q %d %v", args, n, err)
	}
	args, _, err = ReadCommand(wire[n:], args, nil)
	if err != nil || len(args) != 2 || string(args[0]) != "GET" {
		t.Fatalf("ReadCommand: %q %v", args, err)
	}
}

func TestReadReply(t *testing.T) {
	wire := []byte("*3\r\n$1\r\na\r\n$-1\r\n*1\r\n:7\r\n+OK\r\n")
	n, err := ReplySize(wire)
	if err != nil || n != len(wire)-5 {
		t.Fatalf("ReplySize = %d, %v; want %d", n, err, len(wire)-5)
	}
	for i := 0; i < n; i++ {
		if m, err := ReplySize(wire[:i]); m != 0 || err != nil {
			t.Fatalf("ReplySize(prefix %d) = %d, %v; want need-more", i, m, err)
		}
	}
	r, k, _ := ReadReply(wire)
	if r.Type != Array || r.Int != 3 {
		t.Fatalf("header %+v", r)
	}
	r, k2, _ := ReadReply(wire[k:])
	if r.Type != BulkString || string(r.Data) != "a" {
		t.Fatalf("elem %+v", r)
	}
	r, _, _ = ReadReply(wire[k+k2:])
	if !r.Null {
		t.Fatalf("want null, got %+v", r)
	}
	if _, _, err := ReadReply([]byte("?x\r\n")); !errors.Is(err, ErrMalformedReply) {
		t.Fatalf("want ErrMalformedReply, got %v", err)
	}
}

// TestReplySizeRESP3: RESP3's aggregates count their children (a map and
// an attribute two per pair, an attribute also the reply it describes),
// and its scalars are one element each; what the RESP3 writers of this
// package produce is measured whole.
func TestReplySizeRESP3(t *testing.T) {
	var w []byte
	w = AppendMap(w, 2)
	w = AppendBulkString(w, "k")
	w = AppendSet(w, 2)
	w = AppendBool(w, true)
	w = AppendNull3(w)
	w = AppendBulkString(w, "d")
	w = AppendDouble(w, []byte("1.5"))
	attr := "|1\r\n+ttl\r\n:3\r\n=7\r\ntxt:abc\r\n"
	big := "(12345678901234567890\r\n"
	for _, wire := range []string{string(w), attr, big, ">2\r\n$7\r\nmessage\r\n!3\r\nERR\r\n", "_\r\n"} {
		n, err := ReplySize([]byte(wire + "+NEXT\r\n"))
		if err != nil || n != len(wire) {
			t.Errorf("ReplySize(%q) = %d, %v; want %d", wire, n, err, len(wire))
		}
		for i := 0; i < len(wire); i++ {
			if m, err := ReplySize([]byte(wire[:i])); m != 0 || err != nil {
				t.Fatalf("ReplySize(%q cut at %d) = %d, %v; want need-more", wire, i, m, err)
			}
		}
	}
	// A map or attribute count whose doubling wraps int64 negative.
	for _, bad := range []string{"#x\r\n", "_1\r\n", "%-1\r\n", "=-1\r\n", "%4611686018427387905\r\n", "|4611686018427387904\r\n+a\r\n"} {
		if _, _, err := ReadReply([]byte(bad)); !errors.Is(err, ErrMalformedReply) {
			t.Errorf("ReadReply(%q) = %v, want ErrMalformedReply", bad, err)
		}
	}
}

func TestWriterAllocs(t *testing.T) {
	b := make([]byte, 0, 256)
	v := []byte("0123456789abcdef")
	allocs := testing.AllocsPerRun(1000, func() {
		b = AppendBulk(b[:0], v)
		b = AppendInt(b, 123456)
		b = AppendSimpleString(b, "PONG")
		b = AppendCommand(b, v, v)
		_, _ = ReplySize(b)
	})
	if allocs != 0 {
		t.Fatalf("writers allocate %.1f times per run", allocs)
	}
}

func FuzzReadReply(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "*2\r\n$1\r\na\r\n:1\r\n", "$-1\r\n", "-ERR x\r\n", "*-1\r\n", "%4611686018427387905\r\n", "|4611686018427387904\r\n+a\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		n, err := ReplySize(in)
		if err == nil && (n < 0 || n > len(in)) {
			t.Fatalf("ReplySize = %d for %d bytes", n, len(in))
		}
		if n > 0 {
			if m, _ := ReplySize(in[:n]); m != n {
				t.Fatalf("ReplySize of exact reply = %d, want %d", m, n)
			}
		}
	})
}

func ExampleReadCommand() {
	buf := []byte("*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\nPING\r\n*1\r\n$4\r\nPI")
	var args [][]byte
	for {
		var n int
		var err error
		args, n, err = ReadCommand(buf, args, nil)
		if err != nil || n == 0 {
			fmt.Printf("need more bytes: %d buffered\n", len(buf))
			break
		}
		fmt.Printf("%q\n", args)
		buf = buf[n:]
	}
	// Output:
	// ["ECHO" "hi"]
	// ["PING"]
	// need more bytes: 10 buffered
}
