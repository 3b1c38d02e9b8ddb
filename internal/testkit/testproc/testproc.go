// Package testproc builds goblin's binaries once per test run and runs
// them as real processes in tests: start with captured logs, wait for a log
// line or a listening socket, stop gracefully, and read the process's open
// descriptors and resident memory from /proc to prove it leaks neither.
//
// Typical use in an end-to-end test:
//
//	func TestMain(m *testing.M) { testproc.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		bin := testproc.Build(t, "./cmd/goblin-server")
//		p := testproc.Start(t, bin, "--listen", "tcp://127.0.0.1:0")
//		line := p.WaitLog(t, `listening.*addr=(\S+)`, 30*time.Second)
//		...
//	}
//
// Every process Start launches is stopped in t.Cleanup (SIGTERM, then
// SIGKILL after a grace period), and its log is printed when the test fails.
// Set GOBLIN_TEST_RACE=1 to build the binaries with -race.
package testproc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// ErrTimeout is wrapped when a wait gives up.
var ErrTimeout = errors.New("testproc: timed out")

var (
	buildMu  sync.Mutex
	buildDir string                // this test binary's links to the cached binaries
	builds   = map[string]string{} // package → binary path
	buildErr = map[string]error{}
)

// Main runs the tests and removes the links to the binaries Build made.
// Call it from TestMain; without it the links stay in a temporary
// directory. (The binaries themselves stay in Build's cache for the test
// binaries of other packages; see buildCached.)
//
// The tests run with XDG_STATE_HOME pointing at a temporary directory of
// their own (removed after), so a server they start without --dir (or a
// server.Options without Dir) neither loads nor saves the machine's real
// snapshot (server.DefaultDir: /var/lib/goblin for root): a dump.rdb that
// `make run` left there would otherwise appear in the tests' keyspaces.
func Main(m *testing.M) {
	state, err := os.MkdirTemp("", "goblin-test-state-")
	if err == nil {
		os.Setenv("XDG_STATE_HOME", state)
	}
	code := m.Run()
	buildMu.Lock()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	buildMu.Unlock()
	if state != "" {
		os.RemoveAll(state)
	}
	os.Exit(code)
}

// ModuleRoot returns the directory holding goblin's go.mod, found by walking
// up from the working directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testproc: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Root returns the module root (ModuleRoot), failing tb when there is
// none.
func Root(tb testing.TB) string {
	tb.Helper()
	root, err := ModuleRoot()
	if err != nil {
		tb.Fatal(err)
	}
	return root
}

// Build compiles the main package pkg (a path relative to the module root,
// such as "./cmd/goblin-server") and returns the path of the executable, a
// link in a directory that holds every binary this test binary built (so
// one runs beside another) to the one binary every test binary of a
// `go test ./...` run shares: the first one to
// need it builds it into a cache keyed by its sources (GOBLIN_TEST_BIN_CACHE
// names the cache directory; see buildCached), the others reuse it. It
// fails the test if the build fails.
func Build(tb testing.TB, pkg string) string {
	tb.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if bin, ok := builds[pkg]; ok {
		return bin
	}
	if err, ok := buildErr[pkg]; ok {
		tb.Fatal(err)
	}
	bin, err := build(pkg)
	if err != nil {
		buildErr[pkg] = err
		tb.Fatal(err)
	}
	builds[pkg] = bin
	return bin
}

func build(pkg string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	goTool := "go"
	if g := os.Getenv("GO"); g != "" {
		goTool = g
	}
	var args []string
	if os.Getenv("GOBLIN_TEST_RACE") == "1" {
		args = append(args, "-race")
	}
	cached, err := buildCached(goTool, root, pkg, args)
	if err != nil {
		return "", err
	}
	// Every binary of this test binary sits in one directory, as tests
	// that run one beside another (make run's BIN) expect: a link to the
	// cached one.
	if buildDir == "" {
		if buildDir, err = os.MkdirTemp("", "goblin-testproc-"); err != nil {
			return "", err
		}
	}
	out := filepath.Join(buildDir, filepath.Base(pkg))
	if err := os.Symlink(cached, out); err != nil {
		return "", fmt.Errorf("testproc: %w", err)
	}
	return out, nil
}

// Proc is a process started by Start.
type Proc struct {
	Cmd *exec.Cmd
	// PID is the process id.
	PID  int
	name string
	log  logBuffer
	done chan struct{}
	err  error // Wait's result, valid once done is closed
}

// Start starts bin with args, capturing its stdout and stderr together, and
// registers a cleanup that stops it and prints its log if the test failed.
func Start(tb testing.TB, bin string, args ...string) *Proc {
	tb.Helper()
	p, err := StartCmd(exec.Command(bin, args...))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		p.Stop(10 * time.Second)
		if tb.Failed() {
			tb.Logf("log of %s (pid %d):\n%s", p.name, p.PID, p.Log())
		}
	})
	return p
}

// StartCmd starts cmd with its output captured; the caller stops it.
func StartCmd(cmd *exec.Cmd) (*Proc, error) {
	p := &Proc{Cmd: cmd, name: filepath.Base(cmd.Path), done: make(chan struct{})}
	cmd.Stdout = &p.log
	cmd.Stderr = &p.log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("testproc: start %s: %w", cmd.Path, err)
	}
	p.PID = cmd.Process.Pid
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Log returns everything the process wrote so far.
func (p *Proc) Log() string { return p.log.String() }

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Signal sends sig to the process.
func (p *Proc) Signal(sig os.Signal) error { return p.Cmd.Process.Signal(sig) }

// Wait waits up to timeout for the process to exit and returns its exit
// code (-1 if it was killed by a signal).
func (p *Proc) Wait(timeout time.Duration) (int, error) {
	select {
	case <-p.done:
	case <-time.After(timeout):
		return 0, fmt.Errorf("%w: %s (pid %d) still running after %v", ErrTimeout, p.name, p.PID, timeout)
	}
	return p.Cmd.ProcessState.ExitCode(), nil
}

// Stop sends SIGTERM, waits up to grace for the process to exit, then kills
// it. It returns the exit code (-1 when it had to be killed) and is safe to
// call more than once.
func (p *Proc) Stop(grace time.Duration) int {
	if !p.Exited() {
		p.Signal(syscall.SIGTERM)
	}
	if code, err := p.Wait(grace); err == nil {
		return code
	}
	p.Cmd.Process.Kill()
	<-p.done
	return -1
}

// WaitLog waits until a line of the process's log matches the regular
// expression re and returns the first submatch (or the whole line when re
// has no group). It fails the test on timeout or if the process exits.
func (p *Proc) WaitLog(tb testing.TB, re string, timeout time.Duration) string {
	tb.Helper()
	rx := regexp.MustCompile(re)
	var got string
	testkit.Eventually(tb, timeout, fmt.Sprintf("%s to log %q", p.name, re), func() (bool, string) {
		log := p.Log()
		sc := bufio.NewScanner(strings.NewReader(log))
		sc.Buffer(nil, 1<<20)
		last := ""
		for sc.Scan() {
			last = sc.Text()
			if m := rx.FindStringSubmatch(sc.Text()); m != nil {
				got = m[len(m)-1]
				return true, ""
			}
		}
		if p.Exited() {
			tb.Fatalf("%s exited before logging %q:\n%s", p.name, re, p.Log())
		}
		return false, fmt.Sprintf("%d bytes logged, the last line %q", len(log), last)
	})
	return got
}

// FDs returns the number of the process's open file descriptors.
func (p *Proc) FDs() (int, error) {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.PID))
	if err != nil {
		return 0, err
	}
	return len(ents), nil
}

// RSS returns the process's resident set size in bytes.
func (p *Proc) RSS() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb * 1024, err
		}
	}
	return 0, errors.New("testproc: no VmRSS in /proc status")
}

// WaitDial waits until a connection to addr on network ("unix" or "tcp")
// succeeds, then closes it.
func WaitDial(tb testing.TB, network, addr string, timeout time.Duration) {
	tb.Helper()
	testkit.Eventually(tb, timeout, network+" "+addr+" to accept", func() (bool, string) {
		c, err := net.DialTimeout(network, addr, time.Second)
		if err != nil {
			return false, err.Error()
		}
		c.Close()
		return true, ""
	})
}

// Serve accepts connections on ln until the test ends and runs handle on
// each in a goroutine of its own, closing the connection when handle
// returns: an in-test peer. At the end of the test it closes ln and every
// connection still open, and waits for the accept loop to stop.
func Serve(tb testing.TB, ln net.Listener, handle func(net.Conn)) {
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() { defer c.Close(); handle(c) }()
		}
	}()
	tb.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
}

// logBuffer is a bytes.Buffer safe for the writer goroutines exec starts
// and the test goroutine reading it.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
