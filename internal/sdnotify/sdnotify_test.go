package sdnotify

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// listen opens a notification socket the way a service manager does and
// returns its name.
func listen(t *testing.T, name string) *net.UnixConn {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func receive(t *testing.T, c *net.UnixConn) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b := make([]byte, 4096)
	n, err := c.Read(b)
	if err != nil {
		t.Fatalf("no notification arrived: %v", err)
	}
	return string(b[:n])
}

func TestReadyAndStoppingReachTheManager(t *testing.T) {
	for _, name := range []string{filepath.Join(t.TempDir(), "notify"), "@goblin-sdnotify-test-" + strconv.Itoa(os.Getpid())} {
		t.Run(name[:1], func(t *testing.T) {
			c := listen(t, name)
			t.Setenv(Socket, name)
			n, err := FromEnv()
			if err != nil || !n.Enabled() {
				t.Fatalf("FromEnv: %v, enabled %v", err, n.Enabled())
			}
			if err := n.Ready("serving 2 listeners"); err != nil {
				t.Fatal(err)
			}
			want := "READY=1\nSTATUS=serving 2 listeners\nMAINPID=" + strconv.Itoa(os.Getpid())
			if got := receive(t, c); got != want {
				t.Errorf("got %q, want %q", got, want)
			}
			if err := n.Stopping("SIGTERM"); err != nil {
				t.Fatal(err)
			}
			if got := receive(t, c); got != "STOPPING=1\nSTATUS=SIGTERM" {
				t.Errorf("got %q", got)
			}
		})
	}
}

func TestNoManagerIsNoOp(t *testing.T) {
	t.Setenv(Socket, "")
	n, err := FromEnv()
	if err != nil || n.Enabled() {
		t.Fatalf("FromEnv: %v, enabled %v", err, n.Enabled())
	}
	if err := n.Ready("x"); err != nil {
		t.Errorf("Ready without a manager: %v", err)
	}
}

func TestBadSocketName(t *testing.T) {
	t.Setenv(Socket, "relative/path")
	if _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), "absolute path") {
		t.Errorf("FromEnv: %v, want an error naming the rule", err)
	}
}

func TestManagerGoneIsAnError(t *testing.T) {
	t.Setenv(Socket, filepath.Join(t.TempDir(), "nobody"))
	n, _ := FromEnv()
	if err := n.Ready("x"); err == nil {
		t.Error("Ready to a socket nobody listens on: no error")
	}
}

func TestWatchdogInterval(t *testing.T) {
	t.Setenv("WATCHDOG_USEC", "")
	if _, err := WatchdogInterval(); !errors.Is(err, ErrNoWatchdog) {
		t.Errorf("unset: %v", err)
	}
	t.Setenv("WATCHDOG_USEC", "2000000")
	t.Setenv("WATCHDOG_PID", strconv.Itoa(os.Getpid()))
	if d, err := WatchdogInterval(); err != nil || d != time.Second {
		t.Errorf("2 s watchdog: %v %v, want 1s", d, err)
	}
	t.Setenv("WATCHDOG_PID", "1")
	if _, err := WatchdogInterval(); !errors.Is(err, ErrNoWatchdog) {
		t.Errorf("another process's watchdog: %v", err)
	}
	t.Setenv("WATCHDOG_PID", "")
	t.Setenv("WATCHDOG_USEC", "soon")
	if _, err := WatchdogInterval(); err == nil || errors.Is(err, ErrNoWatchdog) {
		t.Errorf("bad value: %v", err)
	}
}
