package aeron_test

// Helpers shared by the tests and benchmarks: the goblin binaries, media
// drivers, free UDP ports, and the client role (the test binary
// re-executed with GOBLIN_AERON_ROLE=client) that runs a checked
// SET/GET/PING workload through the client library.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron/javadriver"
	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

func TestMain(m *testing.M) {
	switch os.Getenv("GOBLIN_AERON_ROLE") {
	case "":
		testproc.Main(m)
	case "client":
		os.Exit(clientMain())
	default:
		fmt.Fprintln(os.Stderr, "unknown GOBLIN_AERON_ROLE")
		os.Exit(2)
	}
}

// needDriver stops the test when the Java media driver cannot be started
// here (no java or no aeron-all jar: `make setup` fetches it): a skip
// saying so, or a failure under CI=true.
func needDriver(tb testing.TB) {
	tb.Helper()
	_, err := javadriver.FindJava()
	testkit.Require(tb, "the Java media driver", err)
	_, err = javadriver.FindJar("")
	testkit.Require(tb, "the Java media driver", err)
}

// startDriver starts a media driver in a private directory, stopped in
// cleanup.
func startDriver(tb testing.TB, o javadriver.Options) *javadriver.Driver {
	tb.Helper()
	d, err := javadriver.Start(context.Background(), o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { d.Stop() })
	return d
}

// shmDir returns a fresh path (not created) for a driver directory, removed
// in cleanup with the driver's log beside it.
func shmDir(tb testing.TB) string {
	tb.Helper()
	base := os.TempDir()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		base = "/dev/shm"
	}
	root, err := os.MkdirTemp(base, "goblin-aeron-test-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(root) })
	return filepath.Join(root, "aeron")
}

// freeUDPPort returns a loopback UDP port that was free a moment ago.
func freeUDPPort(tb testing.TB) int {
	tb.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

func loopback(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

// startServer runs goblin-server with the listen targets (and any --flag=value
// among them) and waits until it is ready.
func startServer(t *testing.T, listen ...string) *testproc.Proc {
	t.Helper()
	bin := testproc.Build(t, "./cmd/goblin-server")
	// backoff, not yield (CI time): a yielding loop took a core from the
	// parallel tests beside it for each server's whole life;
	// TestChunkedEcho, TestLargeValues and TestChurn together took 20 s
	// instead of 27 with it (non-race binary, load 8, same CPU-s).
	args := []string{"--metrics", "off", "--idle", "backoff", "--log-level", "debug"}
	for _, l := range listen {
		if strings.HasPrefix(l, "--") {
			args = append(args, l)
			continue
		}
		args = append(args, "--listen", l)
	}
	p := testproc.Start(t, bin, args...)
	p.WaitLog(t, `msg=ready`, 120*time.Second)
	return p
}

// cli runs goblin-client once and returns its output.
func cli(t *testing.T, tgt string, args ...string) (string, error) {
	t.Helper()
	bin := testproc.Build(t, "./cmd/goblin-client")
	cmd := exec.Command(bin, append([]string{"--target", tgt, "--timeout", "60s"}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// startClientRole starts the client role on tgt: n rounds (0: until
// killed) of SET, GET (checked) and PING on keys of its own.
func startClientRole(t *testing.T, tgt string, id int, n int) *testproc.Proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GOBLIN_AERON_ROLE=client", "GOBLIN_AERON_TARGET="+tgt,
		"GOBLIN_AERON_ID="+strconv.Itoa(id), "GOBLIN_AERON_N="+strconv.Itoa(n))
	p, err := testproc.StartCmd(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop(10 * time.Second)
		if t.Failed() {
			t.Logf("log of client %d (pid %d):\n%s", id, p.PID, p.Log())
		}
	})
	return p
}

func waitOK(t *testing.T, p *testproc.Proc, timeout time.Duration) {
	t.Helper()
	code, err := p.Wait(timeout)
	if err != nil || code != 0 {
		t.Fatalf("pid %d: exit %d, %v\n%s", p.PID, code, err, p.Log())
	}
}

// clientMain is the client role.
func clientMain() int {
	tgt := os.Getenv("GOBLIN_AERON_TARGET")
	id, _ := strconv.Atoi(os.Getenv("GOBLIN_AERON_ID"))
	n, _ := strconv.Atoi(os.Getenv("GOBLIN_AERON_N"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := client.Options{DialTimeout: time.Minute}.Dial(ctx, tgt)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dial:", err)
		return 1
	}
	defer c.Close()
	if err := workload(ctx, c, id, n, func() { fmt.Println("running") }); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("done", n)
	return 0
}

// workload runs n rounds (0: forever) of SET k v, GET k (must be v) and,
// every tenth round, PING, on keys only client id uses.
func workload(ctx context.Context, c *client.Client, id, n int, started func()) error {
	val := make([]byte, 0, 64)
	var got []byte
	for i := 0; n == 0 || i < n; i++ {
		key := "c" + strconv.Itoa(id) + ":" + strconv.Itoa(i%64)
		val = strconv.AppendInt(append(val[:0], "value-"...), int64(i*7919+id), 10)
		if err := c.Set(ctx, key, val, client.SetOptions{}); err != nil {
			return fmt.Errorf("round %d: SET: %w", i, err)
		}
		var err error
		if got, err = c.GetAppend(ctx, got[:0], key); err != nil {
			return fmt.Errorf("round %d: GET: %w", i, err)
		}
		if string(got) != string(val) {
			return fmt.Errorf("round %d: GET %s = %q, want %q", i, key, got, val)
		}
		if i%10 == 0 {
			if err := c.Ping(ctx); err != nil {
				return fmt.Errorf("round %d: PING: %w", i, err)
			}
		}
		if i == 0 && started != nil {
			started()
		}
	}
	return nil
}

// connectedClients asks the server (INFO clients) how many clients it
// serves, the asking one included.
func connectedClients(ctx context.Context, c *client.Client) (int, error) {
	v, err := c.Do(ctx, "INFO", "clients")
	if err != nil {
		return 0, err
	}
	m := regexp.MustCompile(`connected_clients:(\d+)`).FindSubmatch(v.Str)
	if m == nil {
		return 0, errors.New("INFO clients has no connected_clients: " + string(v.Str))
	}
	return strconv.Atoi(string(m[1]))
}
