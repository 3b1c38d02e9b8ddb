package command

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tresp "github.com/tidwall/resp"

	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
)

// oracleScript is a pipeline whose replies must be byte for byte what
// Redis 7 answers (nothing time- or build-dependent).
var oracleScript = [][]string{
	{"PING"}, {"PING", "hi"}, {"ECHO", "a\r\nb"}, {"GET", "k"}, {"SET", "k", "v"}, {"GET", "k"},
	{"SET", "k", "w", "NX"}, {"SET", "k", "w", "XX", "GET"}, {"SET", "k", "v", "NX", "XX"},
	{"SET", "k", "v", "EX", "0"}, {"SET", "k", "v", "EX", "x"}, {"SET", "k", "v", "PX", "-1"},
	{"SET", "k", "v", "KEEPTTL", "EX", "1"}, {"SET", "k", "v", "EX", "100"}, {"TTL", "k"},
	{"PERSIST", "k"}, {"PERSIST", "k"}, {"TTL", "k"}, {"TTL", "nope"}, {"EXPIRE", "k", "100"},
	{"TTL", "k"}, {"EXPIRE", "k", "x"}, {"EXPIRE", "k", "99999999999999999"},
	{"EXPIRE", "k", "50", "NX"}, {"EXPIRE", "k", "50", "XX"}, {"TTL", "k"}, {"EXPIRE", "k", "40", "GT"},
	{"EXPIRE", "k", "60", "GT"}, {"TTL", "k"}, {"EXPIRE", "k", "70", "LT"}, {"EXPIRE", "k", "30", "lt"},
	{"TTL", "k"}, {"EXPIRE", "k", "30", "NX", "XX"}, {"EXPIRE", "k", "30", "GT", "LT"},
	{"EXPIRE", "k", "30", "FOO"}, {"EXPIRE", "k", "x", "FOO"}, {"EXPIRE", "nope", "30", "XX"},
	{"PERSIST", "k"}, {"EXPIRE", "k", "30", "XX"}, {"EXPIRE", "k", "30", "GT"}, {"EXPIRE", "k", "30", "LT"},
	{"TTL", "k"}, {"PERSIST", "k"}, {"EXPIRE", "k", "30", "NX"}, {"TTL", "k"}, {"INCR", "n"},
	{"INCRBY", "n", "41"}, {"DECR", "n"}, {"DECRBY", "n", "2"}, {"INCR", "k"},
	{"SET", "max", "9223372036854775807"}, {"INCR", "max"}, {"INCRBY", "n", "1.5"},
	{"MSET", "a", "1", "b", "2"}, {"MSET", "a"}, {"MGET", "a", "nope", "b"}, {"DEL", "a", "b", "nope"},
	{"EXISTS", "k", "k", "nope"}, {"TYPE", "k"}, {"TYPE", "nope"}, {"DBSIZE"}, {"SELECT", "0"},
	{"SELECT", "x"}, {"CONFIG", "GET", "save"}, {"CONFIG", "GET", "appendonly"},
	{"CONFIG", "GET", "nosuch"}, {"CLIENT", "GETNAME"}, {"CLIENT", "SETNAME", "a b"},
	{"CLIENT", "SETNAME", "me"}, {"CLIENT", "GETNAME"}, {"CLIENT", "NOPE"}, {"AUTH", "x"},
	{"AUTH", "u", "x"}, {"HELLO", "4"}, {"HELLO", "x"}, {"GET"}, {"GET", "a", "b"}, {"PING", "a", "b"},
	{"foo"}, {"foo", "a", "b"}, {"FOO", "x\r\ny"}, {"FLUSHALL", "x"}, {"FLUSHALL"}, {"DBSIZE"},
}

func oraclePipeline() []byte {
	var in []byte
	for _, c := range oracleScript {
		in = resp.AppendCommandString(in, c...)
	}
	return in
}

// TestRESPOracle reads what the engine writes with tidwall/resp, an
// independent RESP implementation: one well-formed value per command, in
// order, nothing left over.
func TestRESPOracle(t *testing.T) {
	e, _ := newEngine(t, Options{})
	s := NewSession(proto.RESP, nil)
	in := oraclePipeline()
	n, out, closeConn := e.ServeStream(s, in, nil)
	if n != len(in) || closeConn {
		t.Fatalf("consumed %d of %d, close %v", n, len(in), closeConn)
	}
	rd := tresp.NewReader(bytes.NewReader(out))
	for i, c := range oracleScript {
		v, _, err := rd.ReadValue()
		if err != nil {
			t.Fatalf("reply %d to %q: tidwall/resp says %v", i, c, err)
		}
		ours, k := respText(t, out)
		out = out[k:]
		if theirs := tidwallText(v); theirs != ours {
			t.Errorf("reply %d to %q: tidwall/resp reads %s, goblin's reader %s", i, c, theirs, ours)
		}
	}
	if _, _, err := rd.ReadValue(); err != io.EOF {
		t.Fatalf("bytes after the last reply: %v", err)
	}
}

// tidwallText renders a tidwall/resp value in respText's form.
func tidwallText(v tresp.Value) string {
	switch {
	case v.IsNull():
		return "nil"
	case v.Type() == tresp.Array:
		var sb strings.Builder
		sb.WriteString("[")
		for i, e := range v.Array() {
			if i > 0 {
				sb.WriteString(" ")
			}
			sb.WriteString(tidwallText(e))
		}
		sb.WriteString("]")
		return sb.String()
	case v.Type() == tresp.Integer:
		return fmt.Sprintf(":%d", v.Integer())
	case v.Type() == tresp.Error:
		return "-" + v.Error().Error()
	}
	return fmt.Sprintf("%c%s", byte(v.Type()), v.String())
}

// TestAgainstRedis sends the oracle script to a real redis-server 7 (when
// one is installed) and to the engine, and requires byte-identical replies.
func TestAgainstRedis(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed")
	}
	// The error texts compared are Redis 7's; other majors word some
	// differently.
	if v, err := exec.Command(bin, "--version").Output(); err != nil || !bytes.Contains(v, []byte(" v=7.")) {
		t.Skipf("want redis-server 7.x, have %q (%v)", v, err)
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var conn net.Conn
	for deadline := time.Now().Add(20 * time.Second); ; {
		if conn, err = net.Dial("unix", sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server did not listen: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := conn.Write(oraclePipeline()); err != nil {
		t.Fatal(err)
	}
	var redisOut []byte
	buf := make([]byte, 64<<10)
	for replies := 0; replies < len(oracleScript); {
		k, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("reading redis replies (%d so far): %v", replies, err)
		}
		redisOut = append(redisOut, buf[:k]...)
		replies, _ = countReplies(redisOut)
	}

	e, _ := newEngine(t, Options{})
	s := NewSession(proto.RESP, nil)
	_, ours, _ := e.ServeStream(s, oraclePipeline(), nil)
	for i, c := range oracleScript {
		a, _ := resp.ReplySize(ours)
		b, _ := resp.ReplySize(redisOut)
		if a == 0 || b == 0 || !bytes.Equal(ours[:a], redisOut[:b]) {
			t.Errorf("reply %d to %q:\ngoblin %q\n redis %q", i, c, ours[:a], redisOut[:b])
		}
		ours, redisOut = ours[a:], redisOut[b:]
	}
}

func countReplies(b []byte) (int, error) {
	n := 0
	for {
		k, err := resp.ReplySize(b)
		if err != nil || k == 0 {
			return n, err
		}
		n++
		b = b[k:]
	}
}
