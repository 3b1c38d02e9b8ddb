package main

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// TestServiceManagerNotifications runs goblin-server as systemd runs a
// Type=notify unit with WatchdogSec=: it must send READY=1 (with its pid)
// once it serves, feed the watchdog while its loop cycles, and send
// STOPPING=1 when SIGTERM begins the shutdown.
func TestServiceManagerNotifications(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := filepath.Join(dir, "notify")
	l, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	bin := buildServer(t)
	cmd := exec.Command(bin, "--listen", "uds://"+filepath.Join(dir, "g.sock"), "--metrics", "off")
	cmd.Env = append(cmd.Environ(), "NOTIFY_SOCKET="+name, "WATCHDOG_USEC=200000")
	p, err := testproc.StartCmd(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(10 * time.Second)
	next := func(what string) string {
		t.Helper()
		l.SetReadDeadline(time.Now().Add(30 * time.Second))
		b := make([]byte, 4096)
		n, err := l.Read(b)
		if err != nil {
			t.Fatalf("the service manager never got %s: %v\nserver log:\n%s", what, err, p.Log())
		}
		return string(b[:n])
	}
	ready := next("READY=1")
	if !strings.HasPrefix(ready, "READY=1\n") || !strings.Contains(ready, "MAINPID="+strconv.Itoa(p.PID)) {
		t.Fatalf("first notification %q: want READY=1 with MAINPID=%d", ready, p.PID)
	}
	p.WaitLog(t, `msg=ready`, 10*time.Second)
	for i := 0; i < 2; i++ {
		if got := next("a watchdog keep-alive"); got != "WATCHDOG=1" {
			t.Fatalf("keep-alive %d: %q", i, got)
		}
	}
	p.Signal(syscall.SIGTERM)
	for {
		got := next("STOPPING=1 after SIGTERM")
		if got == "WATCHDOG=1" {
			continue // one may be in flight as the signal lands
		}
		if !strings.HasPrefix(got, "STOPPING=1\n") {
			t.Fatalf("after SIGTERM: %q, want STOPPING=1", got)
		}
		break
	}
	if code, err := p.Wait(30 * time.Second); err != nil || code != exitOK {
		t.Fatalf("exit %d, %v", code, err)
	}
}

// TestVersionFlag: --version prints one line to stdout, in redis-server's
// key=value shape, naming the revision the binary was built from.
func TestVersionFlag(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(buildServer(t), "--version").Output()
	if err != nil {
		t.Fatalf("--version: %v", err)
	}
	line := strings.TrimSuffix(string(out), "\n")
	if !regexp.MustCompile(`^goblin-server v=\S+ sha=\S+ go=go\S+ bits=64 arch=\S+ redis=7\.0\.\d+$`).MatchString(line) {
		t.Fatalf("--version printed %q", line)
	}
}

// TestClientEventsNameTheClient: the log lines an operator reads after an
// incident (a connect and disconnect at debug, a wrong password, a CLIENT
// KILL) name the client's address and the transport, and a request is
// never logged by itself.
func TestClientEventsNameTheClient(t *testing.T) {
	t.Parallel()
	port := freeTCPPort(t)
	bin := buildServer(t)
	p := testproc.Start(t, bin, "--listen", "tcp://127.0.0.1:"+strconv.Itoa(port), "--metrics", "off",
		"--dir", t.TempDir(), "--requirepass", "secret", "--log-level", "debug")
	p.WaitLog(t, `msg=ready`, 60*time.Second)
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatal(err)
		}
		return c, bufio.NewReader(c)
	}
	victim, vr := dial()
	defer victim.Close()
	fmt.Fprint(victim, "AUTH secret\r\nCLIENT ID\r\n")
	vr.ReadString('\n')
	vr.ReadString('\n')
	vaddr := victim.LocalAddr().String()
	c, r := dial()
	defer c.Close()
	addr := c.LocalAddr().String()
	fmt.Fprint(c, "AUTH wrong\r\n")
	if l, _ := r.ReadString('\n'); !strings.HasPrefix(l, "-WRONGPASS") {
		t.Fatalf("AUTH wrong: %q", l)
	}
	fmt.Fprint(c, "AUTH secret\r\nPING\r\nCLIENT KILL "+vaddr+"\r\n")
	for i := 0; i < 3; i++ {
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	p.WaitLog(t, `msg="client connected" transport=tcp\S* client=`+regexp.QuoteMeta(addr), 10*time.Second)
	p.WaitLog(t, `msg="authentication failed: wrong password" transport=tcp\S* client=`+regexp.QuoteMeta(addr), 10*time.Second)
	p.WaitLog(t, `msg="client killed by CLIENT KILL" transport=tcp\S* client=`+regexp.QuoteMeta(vaddr), 10*time.Second)
	p.WaitLog(t, `msg="client disconnected" transport=tcp\S* client=`+regexp.QuoteMeta(addr), 10*time.Second)
	if strings.Contains(p.Log(), "PING") {
		t.Errorf("a request was logged:\n%s", p.Log())
	}
}

// TestServiceManagerLoadExtendsStart: a snapshot file that takes longer
// than the load's first step makes the server extend the service manager's
// start timeout (EXTEND_TIMEOUT_USEC, with a loading STATUS) before it
// sends READY=1, so a long load under TimeoutStartSec= is not killed as a
// hung start.
func TestServiceManagerLoadExtendsStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeBigSnapshot(t, filepath.Join(dir, "dump.rdb"), 20_000, 1000) // 20 MB: ten first steps
	name := filepath.Join(dir, "notify")
	l, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cmd := exec.Command(buildServer(t), "--listen", "uds://"+filepath.Join(dir, "g.sock"), "--metrics", "off", "--dir", dir)
	cmd.Env = append(cmd.Environ(), "NOTIFY_SOCKET="+name)
	p, err := testproc.StartCmd(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(10 * time.Second)
	var got []string
	for len(got) == 0 || !strings.HasPrefix(got[len(got)-1], "READY=1\n") {
		l.SetReadDeadline(time.Now().Add(30 * time.Second))
		b := make([]byte, 4096)
		n, err := l.Read(b)
		if err != nil {
			t.Fatalf("the service manager never got READY=1 (got %q): %v\nserver log:\n%s", got, err, p.Log())
		}
		got = append(got, string(b[:n]))
	}
	want := fmt.Sprintf("EXTEND_TIMEOUT_USEC=%d\nSTATUS=loading the snapshot file", LoadExtendBy.Microseconds())
	if len(got) < 2 || got[0] != want {
		t.Fatalf("notifications %q: want %q before READY=1", got, want)
	}
	p.WaitLog(t, `msg="DB loaded from disk" .*keys=20000`, 10*time.Second)
}
