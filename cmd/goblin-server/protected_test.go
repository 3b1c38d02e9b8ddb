package main

import (
	"bufio"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// hostAddr returns an IPv4 address of this host beyond the loopback
// interface: a client connecting to it from this host has it as its
// source address, so the server sees a non-loopback peer while the
// traffic stays inside the host.
func hostAddr(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
				return n.IP.String()
			}
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("no IPv4 address beyond loopback on this host (%v): protected mode cannot be tested", err)
	}
	t.Skipf("no IPv4 address beyond loopback on this host (%v)", err)
	return ""
}

// firstReply connects to addr, sends PING and returns the first reply
// line (without CRLF) and whether the server then closed the connection.
func firstReply(t *testing.T, addr string) (string, bool) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	c.Write([]byte("PING\r\n"))
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("reply from %s: %v (got %q)", addr, err, line)
	}
	_ = c.SetDeadline(time.Now().Add(time.Second))
	c.Write([]byte("PING\r\n"))
	_, err = r.ReadString('\n')
	return strings.TrimSuffix(line, "\r\n"), err != nil
}

// TestProtectedMode: a server listening on every address with no password
// for the default user refuses a TCP client from beyond loopback with
// Redis 7.0's DENIED text and closes it, serves loopback clients, says so
// in its start-up log; CONFIG SET protected-mode no (from loopback) or a
// password lifts it, and --protected-mode no starts without it.
func TestProtectedMode(t *testing.T) {
	host := hostAddr(t)
	bin := buildServer(t)
	p := startProc(t, bin, "--listen", "tcp://0.0.0.0:0", "--metrics", "off")
	port := p.WaitLog(t, `msg=listening target="?tcp://0\.0\.0\.0:(\d+)`, startTimeout)
	p.WaitLog(t, `level=WARN msg="protected mode: no password is set for the default user`, startTimeout)
	p.WaitLog(t, `msg=ready`, startTimeout)
	outside, local := net.JoinHostPort(host, port), net.JoinHostPort("127.0.0.1", port)

	if line, closed := firstReply(t, outside); line != "-"+command.DeniedProtectedMode || !closed {
		t.Fatalf("client from %s: %q, closed %v; want Redis's DENIED text, then closed", host, line, closed)
	}
	// redis-server 7.0 gives the same client the same bytes.
	if theirs := redisDenied(t, host); theirs != "-"+command.DeniedProtectedMode {
		t.Fatalf("redis-server's DENIED text differs from goblin's:\nredis  %q\ngoblin %q", theirs, command.DeniedProtectedMode)
	}
	if line, closed := firstReply(t, local); line != "+PONG" || closed {
		t.Fatalf("loopback client: %q, closed %v", line, closed)
	}
	cli := func(args ...string) string {
		return strings.TrimSpace(string(runTool(t, nil, "redis-cli", append([]string{"-h", "127.0.0.1", "-p", port}, args...)...)))
	}
	needTool(t, "redis-cli")
	if got := cli("CONFIG", "GET", "protected-mode"); got != "protected-mode\nyes" {
		t.Fatalf("CONFIG GET protected-mode: %q", got)
	}
	// A password for the default user lifts it: the client gets NOAUTH,
	// not DENIED.
	cli("CONFIG", "SET", "requirepass", "pw")
	if line, _ := firstReply(t, outside); line != "-NOAUTH Authentication required." {
		t.Fatalf("with a password, client from %s: %q", host, line)
	}
	cli("-a", "pw", "--no-auth-warning", "CONFIG", "SET", "requirepass", "")
	if line, _ := firstReply(t, outside); line != "-"+command.DeniedProtectedMode {
		t.Fatalf("password removed again: %q", line)
	}
	cli("CONFIG", "SET", "protected-mode", "no")
	if line, closed := firstReply(t, outside); line != "+PONG" || closed {
		t.Fatalf("protected-mode no, client from %s: %q, closed %v", host, line, closed)
	}

	off := startProc(t, bin, "--listen", "tcp://0.0.0.0:0", "--metrics", "off", "--protected-mode", "no")
	port = off.WaitLog(t, `msg=listening target="?tcp://0\.0\.0\.0:(\d+)`, startTimeout)
	off.WaitLog(t, `msg=ready`, startTimeout)
	if line, _ := firstReply(t, net.JoinHostPort(host, port)); line != "+PONG" {
		t.Fatalf("--protected-mode no, client from %s: %q", host, line)
	}
}

// redisDenied starts redis-server 7.0 on every address (a free port) in
// protected mode and returns its first reply to a client from host.
func redisDenied(t *testing.T, host string) string {
	t.Helper()
	bin := needTool(t, "redis-server")
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	dir := t.TempDir()
	p := startProc(t, bin, "--port", port, "--bind", "0.0.0.0", "--protected-mode", "yes", "--save", "", "--appendonly", "no", "--dir", dir)
	t.Cleanup(func() { p.Stop(5 * time.Second) })
	testproc.WaitDial(t, "tcp", "127.0.0.1:"+port, 20*time.Second)
	line, _ := firstReply(t, net.JoinHostPort(host, port))
	return line
}
