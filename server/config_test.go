package server

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
	"github.com/goblin-kv/goblin/proto/resp"
)

// startRedis starts a redis-server 7.0 on a Unix socket in a temp dir and
// returns the socket; the test stops it.
func startRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	testkit.Require(t, "redis-server", err)
	if v, err := exec.Command(bin, "--version").Output(); err != nil || !bytes.Contains(v, []byte(" v=7.0.")) {
		testkit.Missing(t, "want redis-server 7.0.x, have %q (%v)", v, err)
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	p := testproc.Start(t, bin, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir)
	t.Cleanup(func() { p.Stop(5 * time.Second) })
	testproc.WaitDial(t, "unix", sock, 20*time.Second)
	return sock
}

// roundTrips sends each command on c and returns each reply's line.
func roundTrips(t *testing.T, c net.Conn, cmds [][]string) []string {
	t.Helper()
	var in []byte
	for _, cmd := range cmds {
		in = resp.AppendCommandString(in, cmd...)
	}
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write(in); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	out := make([]string, len(cmds))
	for i := range out {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reply %d to %q: %v", i, cmds[i], err)
		}
		out[i] = line
	}
	return out
}

// TestConfigSetNumbersAgainstRedis: the server's own integer and memory
// parameters read their values as redis-server 7.0 does (string2ll for
// integers: no '+', leading zeros or spaces; memtoull's units for memory),
// with the same error texts for the integers.
func TestConfigSetNumbersAgainstRedis(t *testing.T) {
	redisSock := startRedis(t)
	s, sock := newTestServer(t)
	errc := make(chan error, 1)
	go func() { errc <- s.Run() }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		if err := <-errc; err != nil {
			t.Error(err)
		}
	}()
	forms := []string{"+5", "007", " 5", "5 ", "5\x00", "0x5", "-1", "0", "5", "1e3", "2147483648", "4294967295",
		"4294967296", "9223372036854775808", "", "x", "1mb", "1KB", "5x"}
	var cmds [][]string
	for _, param := range []string{"timeout", "maxclients", "maxmemory-clients"} {
		for _, v := range forms {
			if param == "maxmemory-clients" && (v == "" || strings.Contains(v, "\x00")) {
				continue // Redis reads "" as 0 and stops at a NUL; goblin refuses both (docs/commands.md)
			}
			if param == "maxclients" && (v == "2147483648" || v == "4294967295") {
				continue // Redis would spend minutes lowering the file limit 16 at a time to fit
			}
			cmds = append(cmds, []string{"CONFIG", "SET", param, v})
		}
	}
	// Back to the defaults, so the redis-server is left as found.
	cmds = append(cmds, []string{"CONFIG", "SET", "timeout", "0", "maxclients", "10000", "maxmemory-clients", "0"})
	dial := func(sock string) net.Conn {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	theirs := roundTrips(t, dial(redisSock), cmds)
	ours := roundTrips(t, dial(sock), cmds)
	for i, cmd := range cmds {
		a, b := ours[i], theirs[i]
		if cmd[2] == "maxmemory-clients" {
			// goblin takes no percentage, so its error names a memory value only.
			a, b = a[:1], b[:1]
		}
		if a != b {
			t.Errorf("%q:\ngoblin %q\n redis %q", cmd, ours[i], theirs[i])
		}
	}
}
