package acl

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/proto/resp"
)

// value is a parsed RESP reply.
type value struct {
	typ  resp.Type
	s    string
	n    int64
	kids []value
}

type redisConn struct {
	c   net.Conn
	r   *bufio.Reader
	buf []byte
}

// startRedis runs a redis-server 7.0 on a unix socket in a temp dir; in
// CI a missing redis-server fails the test.
func startRedis(t testing.TB) *redisConn {
	t.Helper()
	path := testkit.Need(t, "redis-server", "the ACL oracle")
	dir := t.TempDir()
	sock := filepath.Join(dir, "r.sock")
	cmd := exec.Command(path, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var c net.Conn
	testkit.Eventually(t, 10*time.Second, "redis-server to accept on "+sock, func() (bool, string) {
		var err error
		c, err = net.Dial("unix", sock)
		return err == nil, fmt.Sprint(err)
	})
	rc := &redisConn{c: c, r: bufio.NewReader(c)}
	t.Cleanup(func() { c.Close() })
	v := rc.do(t, "INFO", "server")
	if !strings.Contains(v.s, "redis_version:7.0") {
		t.Fatalf("want redis-server 7.0, INFO says %.200q", v.s)
	}
	return rc
}

func (rc *redisConn) do(t testing.TB, args ...string) value {
	t.Helper()
	if _, err := rc.c.Write(resp.AppendCommandString(nil, args...)); err != nil {
		t.Fatal(err)
	}
	rc.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		if v, n, ok := parseValue(rc.buf); ok {
			rc.buf = rc.buf[n:]
			return v
		}
		chunk := make([]byte, 1<<16)
		n, err := rc.r.Read(chunk)
		if err != nil {
			t.Fatalf("reading the reply to %q: %v", args, err)
		}
		rc.buf = append(rc.buf, chunk[:n]...)
	}
}

func parseValue(b []byte) (value, int, bool) {
	r, n, err := resp.ReadReply(b)
	if err != nil || n == 0 {
		return value{}, 0, false
	}
	v := value{typ: r.Type, s: string(r.Data), n: r.Int}
	for i := int64(0); i < r.Children(); i++ {
		k, m, ok := parseValue(b[n:])
		if !ok {
			return value{}, 0, false
		}
		v.kids = append(v.kids, k)
		n += m
	}
	return v, n, true
}

// redisTable builds a Table of every command redis-server has, from
// COMMAND, so descriptions can be compared with Redis's word for word.
func redisTable(t testing.TB, rc *redisConn) (*Table, map[string]value) {
	v := rc.do(t, "COMMAND")
	infos := map[string]value{}
	var cmds []Command
	for _, c := range v.kids {
		cmds = append(cmds, commandFromInfo(t, c, infos))
	}
	return MustTable(cmds), infos
}

func commandFromInfo(t testing.TB, c value, infos map[string]value) Command {
	full := c.kids[0].s
	infos[full] = c
	name := full
	if i := strings.IndexByte(full, '|'); i >= 0 {
		name = full[i+1:]
	}
	cmd := Command{Name: name}
	for _, f := range c.kids[2].kids {
		if f.s == "no_auth" {
			cmd.NoAuth = true
		}
	}
	for _, cat := range c.kids[6].kids {
		cc, ok := categoryByName(strings.TrimPrefix(cat.s, "@"))
		if !ok {
			t.Fatalf("%s: unknown category %q", full, cat.s)
		}
		cmd.Categories |= cc
	}
	if len(c.kids) > 9 {
		for _, s := range c.kids[9].kids {
			cmd.Subcommands = append(cmd.Subcommands, commandFromInfo(t, s, infos))
		}
	}
	return cmd
}

func (v value) String() string {
	switch v.typ {
	case resp.Array:
		parts := make([]string, len(v.kids))
		for i, k := range v.kids {
			parts[i] = k.String()
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case resp.Integer:
		return fmt.Sprint(v.n)
	case resp.Error:
		return "-" + v.s
	}
	return v.s
}
