package forward

import (
	"bufio"
	"strings"
	"testing"
)

// TestReadReplyTakesExactlyOneReply: each RESP2/RESP3 reply kind is read
// whole, byte for byte, and the next one is left in the reader.
func TestReadReplyTakesExactlyOneReply(t *testing.T) {
	replies := []string{
		"+OK\r\n", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", ":42\r\n",
		"$5\r\nhello\r\n", "$-1\r\n", "$0\r\n\r\n", "*-1\r\n", "_\r\n", "#t\r\n", ",1.5\r\n", "(123\r\n",
		"*2\r\n$1\r\na\r\n*1\r\n:1\r\n", "%1\r\n+k\r\n$1\r\nv\r\n", "~2\r\n:1\r\n:2\r\n", "=8\r\ntxt:abcd\r\n",
		"|1\r\n+ttl\r\n:3\r\n$1\r\nx\r\n", "$4\r\na\r\nb\r\n",
	}
	br := bufio.NewReader(strings.NewReader(strings.Join(replies, "")))
	for _, want := range replies {
		got, err := readReply(br, nil)
		if err != nil || string(got) != want {
			t.Fatalf("readReply: %q %v, want %q", got, err, want)
		}
	}
	if _, err := readReply(br, nil); err == nil {
		t.Fatal("readReply past the end: no error")
	}
	for _, bad := range []string{"?x\r\n", "$x\r\n", "+OK\n"} {
		if _, err := readReply(bufio.NewReader(strings.NewReader(bad)), nil); err == nil {
			t.Errorf("readReply(%q): no error", bad)
		}
	}
}

// TestRoleOffset: a primary's ROLE gives its offset; a replica's, or
// anything else, -1 (nothing to wait for).
func TestRoleOffset(t *testing.T) {
	for in, want := range map[string]int64{
		"*3\r\n$6\r\nmaster\r\n:1707022\r\n*0\r\n":                                             1707022,
		"*3\r\n$6\r\nmaster\r\n:0\r\n*1\r\n*3\r\n$9\r\n127.0.0.1\r\n$4\r\n6380\r\n$1\r\n0\r\n": 0,
		"*5\r\n$5\r\nslave\r\n$9\r\n127.0.0.1\r\n:6379\r\n$9\r\nconnected\r\n:5\r\n":           -1,
		"-ERR unknown command\r\n":                                                             -1,
	} {
		if got := roleOffset([]byte(in)); got != want {
			t.Errorf("roleOffset(%q) = %d, want %d", in, got, want)
		}
	}
}
