package aeron

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// aeronJar finds the aeron-all jar: $AERON_JAR, else the version in
// scripts/aeron.version (default 1.51.0) in the local Maven repository.
func aeronJar() string {
	if j := os.Getenv("AERON_JAR"); j != "" {
		return j
	}
	version := "1.51.0"
	if b, err := os.ReadFile("../scripts/aeron.version"); err == nil && strings.TrimSpace(string(b)) != "" {
		version = strings.TrimSpace(string(b))
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".m2", "repository", "io", "aeron", "aeron-all", version, "aeron-all-"+version+".jar")
}

// testDriverEnv switches the tests from the Java media driver to goblin's
// Go driver (aeron/cmd/aeronmd, run as a process): GOBLIN_AERON_TEST_DRIVER=go.
const testDriverEnv = "GOBLIN_AERON_TEST_DRIVER"

func goDriver() bool { return os.Getenv(testDriverEnv) == "go" }

// needJavaDriver skips a test that needs a feature only the Java driver
// has (its debug loss generator) when the tests run against the Go driver.
func needJavaDriver(t testing.TB, what string) {
	t.Helper()
	if goDriver() {
		t.Skipf("skipping: %s=go selects goblin's Go driver, and the test needs the Java driver's %s", testDriverEnv, what)
	}
}

// testDriver is a real media driver in a private directory: the Java
// driver, or goblin's aeronmd under GOBLIN_AERON_TEST_DRIVER=go.
type testDriver struct {
	dir string
	cmd *exec.Cmd
	out *lockedBuffer
}

// lockedBuffer collects a driver's output: exec's copying goroutine writes
// it while the test may read it (a failed connect prints it), so both take
// the lock.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startDriver starts the Java media driver for a test, or skips the test
// when java or the jar is missing. The driver is killed in t.Cleanup.
func startDriver(t testing.TB, props ...string) *testDriver {
	t.Helper()
	if goDriver() {
		return startGoDriver(t, props)
	}
	java := testkit.Need(t, "java", "the real Aeron media driver")
	jar := aeronJar()
	if _, err := os.Stat(jar); err != nil {
		testkit.Missing(t, "aeron-all jar not found at %s (run make setup or set AERON_JAR)", jar)
	}
	base := "/dev/shm"
	if st, err := os.Stat(base); err != nil || !st.IsDir() {
		base = ""
	}
	dir, err := os.MkdirTemp(base, "aeron-gotest-")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{
		"--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
		"--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
		"--add-opens", "java.base/java.nio=ALL-UNNAMED",
		"-XX:+UseSerialGC", "-Xmx256m",
		"-cp", jar,
		"-Daeron.dir=" + dir,
		"-Daeron.dir.delete.on.start=true",
		"-Daeron.threading.mode=SHARED",
		"-Daeron.print.configuration=false",
	}
	for _, p := range props {
		args = append(args, "-D"+p)
	}
	args = append(args, "io.aeron.driver.MediaDriver")
	d := &testDriver{dir: dir, out: &lockedBuffer{}}
	d.cmd = exec.Command(java, args...)
	d.cmd.Stdout = d.out
	d.cmd.Stderr = d.out
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("start media driver: %v", err)
	}
	t.Cleanup(func() {
		d.kill()
		os.RemoveAll(dir)
		if t.Failed() {
			t.Logf("media driver output:\n%s", d.out.String())
		}
	})
	return d
}

// startGoDriver runs aeronmd with the same properties.
func startGoDriver(t testing.TB, props []string) *testDriver {
	t.Helper()
	bin := testproc.Build(t, "./aeron/cmd/aeronmd")
	dir := filepath.Join(t.TempDir(), "aeron")
	args := []string{"-Daeron.dir=" + dir}
	for _, p := range props {
		args = append(args, "-D"+p)
	}
	d := &testDriver{dir: dir, out: &lockedBuffer{}}
	d.cmd = exec.Command(bin, args...)
	d.cmd.Stdout = d.out
	d.cmd.Stderr = d.out
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("start aeronmd: %v", err)
	}
	t.Cleanup(func() {
		d.kill()
		if t.Failed() {
			t.Logf("aeronmd output:\n%s", d.out.String())
		}
	})
	return d
}

// restart starts a new driver process in the same directory with the same
// arguments (the old one must be gone); the cleanup kills it. It removes
// the dead driver's directory first, as the Java driver does when it
// starts (goblin's Go driver refuses a directory whose heartbeat is fresh).
func (d *testDriver) restart(t testing.TB) {
	t.Helper()
	if err := os.RemoveAll(d.dir); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(d.cmd.Path, d.cmd.Args[1:]...)
	cmd.Stdout, cmd.Stderr, cmd.SysProcAttr = d.out, d.out, d.cmd.SysProcAttr
	if err := cmd.Start(); err != nil {
		t.Fatalf("restart media driver: %v", err)
	}
	d.cmd = cmd
}

// kill stops the driver at once (SIGKILL), as a crash would.
func (d *testDriver) kill() {
	if d.cmd.Process != nil && d.cmd.ProcessState == nil {
		d.cmd.Process.Kill()
		d.cmd.Wait()
	}
}

func connectTest(t testing.TB, d *testDriver, o Options) *Client {
	t.Helper()
	o.Dir = d.dir
	if o.DriverTimeout == 0 {
		o.DriverTimeout = 20 * time.Second // JVM start-up on a busy CI core
	}
	c, err := Connect(o)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, d.out.String())
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// awaitReady waits until the driver's CnC file shows a fresh heartbeat, so
// tests can connect with a short driver timeout.
func (d *testDriver) awaitReady(t testing.TB) {
	t.Helper()
	testkit.Eventually(t, 30*time.Second, "media driver start", func() (bool, string) {
		c, err := OpenCnC(d.dir)
		if err != nil {
			return false, ""
		}
		defer c.Close()
		hb := c.DriverHeartbeat()
		return hb > 0 && time.Now().UnixMilli()-hb < 2000, ""
	})
}
