package javadriver

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// needDriver skips the test when java or the jar is missing, saying how to
// get them, or fails it under CI=true (CI runs `make setup` first).
func needDriver(t *testing.T) {
	t.Helper()
	_, err := FindJava()
	testkit.Require(t, "java", err)
	_, err = FindJar("")
	testkit.Require(t, "the Aeron jar", err)
}

func startDriver(t *testing.T, o Options) *Driver {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, err := Start(ctx, o)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { d.Stop() })
	return d
}

func TestVersionMatchesSetup(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "scripts", "aeron.version"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(b)); got != AeronVersion {
		t.Fatalf("scripts/aeron.version says %q, AeronVersion is %q: keep them equal", got, AeronVersion)
	}
}

func TestMissingJarSaysRunSetup(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("MAVEN_REPO", empty)
	t.Setenv(JarEnv, "")
	for name, o := range map[string]Options{
		"maven repo": {},
		"option":     {JarPath: filepath.Join(empty, "nope.jar")},
	} {
		t.Run(name, func(t *testing.T) {
			d, err := Start(context.Background(), o)
			if err == nil {
				d.Stop()
				t.Fatal("Start succeeded without a jar")
			}
			if !errors.Is(err, ErrJarNotFound) {
				t.Fatalf("err = %v, want ErrJarNotFound", err)
			}
			if !strings.Contains(err.Error(), "make setup") || !strings.Contains(err.Error(), AeronVersion) {
				t.Fatalf("error does not tell the user what to do: %v", err)
			}
		})
	}
	t.Run("env", func(t *testing.T) {
		missing := filepath.Join(empty, "env.jar")
		t.Setenv(JarEnv, missing)
		_, err := FindJar("")
		if !errors.Is(err, ErrJarNotFound) || !strings.Contains(err.Error(), missing) {
			t.Fatalf("err = %v, want ErrJarNotFound naming %s", err, missing)
		}
		if err := os.WriteFile(missing, []byte("PK"), 0o644); err != nil {
			t.Fatal(err)
		}
		if p, err := FindJar(""); err != nil || p != missing {
			t.Fatalf("FindJar = %q, %v; want the $%s path", p, err, JarEnv)
		}
	})
}

func TestInvalidOptions(t *testing.T) {
	for name, o := range map[string]Options{
		"term not power of two": {TermLength: 100 << 10},
		"term too small":        {TermLength: 32 << 10},
		"ipc term too big":      {IPCTermLength: 2 << 30},
		"mtu not multiple":      {MTU: 1000},
		"mtu too big":           {IPCMTU: 65536},
		"profile":               {Profile: Profile(42)},
		"unblock below liveness": {
			ClientLivenessTimeout: 5 * time.Second, PublicationUnblockTimeout: 4 * time.Second,
		},
	} {
		if _, err := Start(context.Background(), o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%s: err = %v, want ErrInvalidOptions", name, err)
		}
	}
}

func TestProfiles(t *testing.T) {
	for _, p := range []Profile{Frugal, SpinShared, Spin, SpinDedicated} {
		got, err := ParseProfile(strings.ToUpper(p.String()))
		if err != nil || got != p {
			t.Errorf("ParseProfile(%q) = %v, %v", p.String(), got, err)
		}
		props, err := p.properties()
		if err != nil {
			t.Fatal(err)
		}
		if props[0][0] != "aeron.threading.mode" {
			t.Errorf("%v does not set the threading mode first: %v", p, props)
		}
		if p.Spins() == (p == Frugal) {
			t.Errorf("%v.Spins() = %v", p, p.Spins())
		}
	}
	if _, err := ParseProfile("turbo"); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("ParseProfile(turbo) err = %v", err)
	}
	var zero Options
	if zero.Profile != Frugal {
		t.Fatal("the zero Options must be Frugal")
	}
}

func TestSystemPropertiesCarryKnobs(t *testing.T) {
	o, err := Options{
		Dir: "/x", Profile: Spin, TermLength: 64 << 10, MTU: 8192,
		ClientLivenessTimeout: 20 * time.Second, TimerInterval: 100 * time.Millisecond,
		Properties: map[string]string{"aeron.mtu.length": "4096"},
	}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	args, err := o.systemProperties()
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(args, " ")
	for _, want := range []string{
		"-Daeron.dir=/x", "-Daeron.threading.mode=SHARED_NETWORK", "-Daeron.conductor.idle.strategy=spin",
		"-Daeron.term.buffer.length=65536", "-Daeron.mtu.length=4096", // Properties win over MTU
		"-Daeron.client.liveness.timeout=20000000000", "-Daeron.publication.unblock.timeout=25000000000",
		"-Daeron.timer.interval=100000000", "-Daeron.dir.delete.on.start=true",
	} {
		if !strings.Contains(joined, want+" ") && !strings.HasSuffix(joined, want) {
			t.Errorf("missing %s in %s", want, joined)
		}
	}
}

func TestStartStop(t *testing.T) {
	needDriver(t)
	d := startDriver(t, Options{
		TermLength: 64 << 10, MTU: 4096, TimerInterval: 200 * time.Millisecond,
		ClientLivenessTimeout: 3 * time.Second,
		Properties:            map[string]string{"aeron.print.configuration": "true"},
	})
	if _, err := os.Stat(filepath.Join(d.Dir(), "cnc.dat")); err != nil {
		t.Fatalf("no CnC file: %v", err)
	}
	st, err := readCnC(d.Dir())
	if err != nil || st.pid != int64(d.PID()) || st.version != 0x200 {
		t.Fatalf("cnc = %+v, %v; want version 0x200 and PID %d", st, err, d.PID())
	}
	age, err := d.HeartbeatAge()
	if err != nil || age > d.Options().DriverTimeout {
		t.Fatalf("HeartbeatAge = %v, %v", age, err)
	}
	// The knobs reached the driver: it prints its configuration.
	testkit.Eventually(t, time.Minute, "configuration in the log", func() (bool, string) {
		b, _ := d.Log()
		return bytes.Contains(b, []byte("publicationTermBufferLength=65536")) &&
			bytes.Contains(b, []byte("mtuLength=4096")) &&
			bytes.Contains(b, []byte("timerIntervalNs=200000000")) &&
			bytes.Contains(b, []byte("threadingMode=SHARED")), ""
	})
	select {
	case <-d.Done():
		t.Fatalf("driver exited: %v", d.Wait())
	default:
	}
	root := filepath.Dir(d.Dir())
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.Done():
	default:
		t.Fatal("Done not closed after Stop")
	}
	if err := d.Wait(); !errors.Is(err, ErrStopped) {
		t.Fatalf("Wait after Stop = %v, want ErrStopped", err)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Fatalf("private directory %s not removed: %v", root, err)
	}
	if err := d.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}

func TestDeathIsNoticedAndRestartRecovers(t *testing.T) {
	needDriver(t)
	d := startDriver(t, Options{Profile: SpinShared, StopGrace: 5 * time.Second})
	dir := d.Dir()
	// Kill it from outside, as the OOM killer or an operator would.
	if err := syscall.Kill(d.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.Done():
	case <-time.After(time.Minute):
		t.Fatal("Done not closed after the driver was killed")
	}
	err := d.Wait()
	if !errors.Is(err, ErrExited) || errors.Is(err, ErrStopped) {
		t.Fatalf("Wait = %v, want ErrExited", err)
	}
	if !strings.Contains(err.Error(), "killed") {
		t.Errorf("error does not say how it died: %v", err)
	}
	// The dead driver's CnC file stays behind with a stale heartbeat; a new
	// driver on the same directory replaces it.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nd, err := d.Restart(ctx)
	if err != nil {
		t.Fatalf("Restart: %v", err)
	}
	t.Cleanup(func() { nd.Stop() })
	if nd.Dir() != dir || nd.PID() == d.PID() {
		t.Fatalf("restarted driver: dir %s pid %d, old dir %s pid %d", nd.Dir(), nd.PID(), dir, d.PID())
	}
	if st, err := readCnC(dir); err != nil || st.pid != int64(nd.PID()) {
		t.Fatalf("cnc after restart = %+v, %v", st, err)
	}
	root := filepath.Dir(dir)
	if err := nd.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Fatalf("restarted driver did not remove %s: %v", root, err)
	}
}

func TestEarlyExitQuotesLog(t *testing.T) {
	needDriver(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, err := Start(ctx, Options{Properties: map[string]string{"aeron.threading.mode": "BOGUS"}})
	if err == nil {
		d.Stop()
		t.Fatal("a driver with a bogus threading mode started")
	}
	if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "BOGUS") {
		t.Fatalf("err = %v, want ErrExited quoting the driver's complaint", err)
	}
}

func TestExplicitDir(t *testing.T) {
	needDriver(t)
	dir := filepath.Join(t.TempDir(), "aeron")
	d := startDriver(t, Options{Dir: dir})
	if d.Dir() != dir || d.LogPath() != dir+".driver.log" {
		t.Fatalf("Dir %s LogPath %s", d.Dir(), d.LogPath())
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	// A clean shutdown deletes the Aeron directory (dir-delete-on-shutdown)
	// and the log this package placed beside it, so nothing is left behind.
	testkit.Eventually(t, time.Minute, "driver to delete its directory", func() (bool, string) {
		_, err := os.Stat(dir)
		return os.IsNotExist(err), ""
	})
	if _, err := os.Stat(dir + ".driver.log"); !os.IsNotExist(err) {
		t.Fatalf("driver log left after a clean stop: %v", err)
	}
}
