package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

func TestMain(m *testing.M) { testproc.Main(m) }

func TestHelpAndBadArguments(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"--help"}, nil, &out, &errOut); code != 0 ||
		!strings.Contains(out.String(), "aeron.ipc.term.buffer.length") || !strings.Contains(out.String(), "AERON_DIR") {
		t.Fatalf("--help: %d\n%s", code, out.String())
	}
	out.Reset()
	if code := run([]string{"-v"}, nil, &out, &errOut); code != 0 || !strings.Contains(out.String(), "1.51.0") {
		t.Fatalf("-v: %d %q", code, out.String())
	}
	for _, args := range [][]string{{"-x"}, {"-Dnovalue"}, {"/no/such/file.properties"},
		{"-Daeron.ipc.term.buffer.length=12345", "-Daeron.dir=" + t.TempDir()}} {
		errOut.Reset()
		if code := run(args, nil, &out, &errOut); code != 1 || errOut.Len() == 0 {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut.String())
		}
	}
}

// TestAeronmdLikeTheCDriver runs the binary as a script would run the C
// driver: configuration from the environment, -D definitions and a
// properties file (later sources win), a client served, a second driver
// refused, and exit 0 on SIGTERM with the logs deleted and the CnC marked
// shut down.
func TestAeronmdLikeTheCDriver(t *testing.T) {
	bin := testproc.Build(t, "./aeron/cmd/aeronmd")
	dir := filepath.Join(t.TempDir(), "aeron")
	props := filepath.Join(t.TempDir(), "driver.properties")
	// The file beats the -D (64k term), which beats the environment.
	if err := os.WriteFile(props, []byte("# goblin test\naeron.ipc.term.buffer.length=128k\n! comment\naeron.counters.buffer.length:\\\n 1m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-Daeron.ipc.term.buffer.length=64k", "-Daeron.dir="+dir, props)
	cmd.Env = append(os.Environ(), "AERON_DIR=/nonexistent/should/be/overridden", "AERON_IPC_TERM_BUFFER_LENGTH=1m")
	p, err := testproc.StartCmd(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(10 * time.Second) })
	p.WaitLog(t, "serving", time.Minute)
	c, err := aeron.Connect(aeron.Options{Dir: dir, DriverTimeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, p.Log())
	}
	pub, err := c.AddExclusivePublication("aeron:ipc", 1)
	if err != nil {
		t.Fatal(err)
	}
	if pub.TermBufferLength() != 128<<10 {
		t.Fatalf("term length %d, want the properties file's 128k", pub.TermBufferLength())
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "publications", "*.logbuffer"))
	if len(logs) != 1 {
		t.Fatalf("logs %v", logs)
	}
	// A second aeronmd on the same directory is refused while this one lives.
	second := exec.Command(bin, "-Daeron.dir="+dir)
	out, err := second.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "active media driver detected") {
		t.Fatalf("second driver: %v\n%s", err, out)
	}
	c.Close()
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code, err := p.Wait(time.Minute)
	if err != nil || code != 0 {
		t.Fatalf("exit %d, %v\n%s", code, err, p.Log())
	}
	if _, err := os.Stat(logs[0]); !os.IsNotExist(err) {
		t.Fatalf("log buffer left behind: %v", err)
	}
	cnc, err := aeron.OpenCnC(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer cnc.Close()
	if hb := cnc.DriverHeartbeat(); hb != -1 {
		t.Fatalf("heartbeat %d after shutdown, want -1", hb)
	}
}
