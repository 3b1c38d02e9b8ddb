package javadriver

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/accesstest"
)

// reachableDir returns a path (not created) for a driver directory whose
// parents another user can enter, so what it can see depends on the
// driver's modes alone.
func reachableDir(t *testing.T) string { return accesstest.ShmDir(t, "goblin-javadriver-test-") }

// withLogs makes the driver create log buffers: an IPC publication and a
// subscription, as a goblin server and client would. It returns the files
// a client needs (the CnC file and the log buffer).
func withLogs(t *testing.T, dir string) []string {
	t.Helper()
	c, err := aeron.Connect(aeron.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.AddSubscription("aeron:ipc", 77); err != nil {
		t.Fatal(err)
	}
	p, err := c.AddExclusivePublication("aeron:ipc", 77)
	if err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "publications", "*.logbuffer"))
	if len(logs) == 0 {
		t.Fatalf("no log buffer in %s after adding publication %d", dir, p.RegistrationID())
	}
	return append([]string{filepath.Join(dir, aeron.CnCFile)}, logs...)
}

// TestDirectoryIsPrivate: another user can read, write or enter nothing of
// a driver's directory, its log buffers included, nor its log.
func TestDirectoryIsPrivate(t *testing.T) {
	needDriver(t)
	accesstest.Need(t)
	dir := reachableDir(t)
	d := startDriver(t, Options{Dir: dir})
	files := withLogs(t, dir)
	n := accesstest.CheckPrivate(t, dir, accesstest.Nobody)
	for _, p := range []string{dir, files[0], files[1], d.LogPath()} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is %v", p, st.Mode())
		}
	}
	t.Logf("checked %d paths under %s from uid %d", n, dir, accesstest.Nobody.UID)
}

// TestDirectoryForGroup: with Group, members of the group can use the
// driver (enter the directory, read and write the CnC file and log
// buffers, including ones created after the start); other users still
// get nothing.
func TestDirectoryForGroup(t *testing.T) {
	needDriver(t)
	accesstest.Need(t)
	const gid = 4242 // no /etc/group entry needed
	dir := reachableDir(t)
	startDriver(t, Options{Dir: dir, Group: strconv.Itoa(gid)})
	files := withLogs(t, dir)
	accesstest.CheckGroup(t, dir, accesstest.Member(gid), files)
	accesstest.CheckPrivate(t, dir, accesstest.Nobody)
	accesstest.CheckGroupFiles(t, files, gid, 0o660)
}

// TestClaim: a live driver's directory is refused; a directory whose
// driver is a zombie with a fresh heartbeat, or an orphan whose supervisor
// died, is free at once.
func TestClaim(t *testing.T) {
	needDriver(t)
	dir := reachableDir(t)
	live := startDriver(t, Options{Dir: dir})
	if err := Claim(dir, 0); !errors.Is(err, ErrInUse) {
		t.Fatalf("Claim of a live driver's directory: %v", err)
	}
	if _, err := Start(context.Background(), Options{Dir: dir}); !errors.Is(err, ErrInUse) {
		t.Fatalf("Start over a live driver: %v", err)
	}
	if age, err := live.HeartbeatAge(); err != nil || age > 5*time.Second {
		t.Fatalf("the live driver after the refused start: heartbeat %v, %v", age, err)
	}
	live.Stop()

	t.Run("zombie", func(t *testing.T) {
		// A driver this test starts and never reaps: killed, it stays a
		// zombie while its heartbeat is fresh.
		o, err := Options{Dir: dir}.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		if o.JarPath, err = FindJar(""); err != nil {
			t.Fatal(err)
		}
		if o.JavaPath, err = FindJava(); err != nil {
			t.Fatal(err)
		}
		props, _ := o.systemProperties()
		cmd := exec.Command(o.JavaPath, append(append(append([]string{}, JVMFlags...), props...), "-cp", o.JarPath, "io.aeron.driver.MediaDriver")...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, time.Minute, "the unreaped driver's CnC", func() (bool, string) {
			st, err := readCnC(dir)
			return err == nil && st.pid == int64(cmd.Process.Pid) && st.heartbeatMs > 0, ""
		})
		cmd.Process.Signal(syscall.SIGKILL)
		testkit.Eventually(t, time.Minute, "the zombie", func() (bool, string) {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat")
			return err == nil && parseStatState(b) == 'Z', ""
		})
		start := time.Now()
		if err := Claim(dir, 0); err != nil {
			t.Fatalf("Claim with the driver a zombie: %v", err)
		}
		claimed := time.Since(start)
		d := startDriver(t, Options{Dir: dir})
		t.Logf("zombie pid %d with a fresh heartbeat: claimed in %v, a new driver ready %v after the claim began",
			cmd.Process.Pid, claimed.Round(time.Microsecond), time.Since(start).Round(time.Millisecond))
		cmd.Wait()
		d.Stop()
	})

	t.Run("orphan", func(t *testing.T) {
		// The test binary, run as a helper, starts a driver and is killed;
		// the driver, stopped first so that the SIGTERM its parent's death
		// sends stays pending, lives on as an orphan with a fresh heartbeat.
		helper := exec.Command(os.Args[0], "-test.run=^$")
		helper.Env = append(os.Environ(), "GOBLIN_JAVADRIVER_HELPER="+dir)
		out, err := helper.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := helper.Start(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64)
		n, _ := out.Read(buf)
		pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
		if err != nil {
			helper.Process.Kill()
			t.Fatalf("helper said %q: %v", buf[:n], err)
		}
		syscall.Kill(pid, syscall.SIGSTOP)
		helper.Process.Kill()
		helper.Wait()
		defer syscall.Kill(pid, syscall.SIGKILL)
		testkit.Eventually(t, time.Minute, "the driver to be orphaned", func() (bool, string) {
			p := inspect(pid, 0)
			return p.alive && p.ppid != p.supervisor, ""
		})
		start := time.Now()
		if err := Claim(dir, 0); err != nil {
			t.Fatalf("Claim with the driver an orphan: %v", err)
		}
		took := time.Since(start)
		if inspect(pid, 0).alive {
			t.Fatalf("the orphan %d still runs after Claim", pid)
		}
		d := startDriver(t, Options{Dir: dir})
		t.Logf("orphan %d killed in %v, new driver %d", pid, took.Round(time.Millisecond), d.PID())
	})
}

// TestMain runs the orphan helper when asked: it starts a driver in the
// directory, prints its pid and waits to be killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("GOBLIN_JAVADRIVER_HELPER"); dir != "" {
		d, err := Start(context.Background(), Options{Dir: dir})
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString(strconv.Itoa(d.PID()) + "\n")
		select {}
	}
	os.Exit(m.Run())
}

func parseStatState(b []byte) byte {
	state, _, _, ok := parseStat(b)
	if !ok {
		return 0
	}
	return state
}
