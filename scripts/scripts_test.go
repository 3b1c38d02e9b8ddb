// Package scripts_test checks the entry points a newcomer runs first,
// `make run` and scripts/setup.sh (which `make test` runs), on a terminal
// as a newcomer does.
package scripts_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

func TestMain(m *testing.M) { testproc.Main(m) }

// terminal is a command running on a pseudo-terminal (through util-linux's
// script), with Java and Maven replaced by shims that log their calls to
// calls before running the real programs.
type terminal struct {
	p     *testproc.Proc
	stdin io.WriteCloser
	calls string
}

func startOnTerminal(t *testing.T, command string, env ...string) *terminal {
	t.Helper()
	scriptBin := testkit.Need(t, "script", "a pseudo-terminal (util-linux)")
	dir := t.TempDir()
	shims := filepath.Join(dir, "shims")
	calls := filepath.Join(dir, "calls.log")
	if err := os.Mkdir(shims, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, prog := range []string{"java", "mvn"} {
		real, err := exec.LookPath(prog)
		if err != nil {
			real = "false" // absent: the shim still logs the attempt
		}
		shim := "#!/bin/sh\necho \"" + prog + " $*\" >> '" + calls + "'\nexec '" + real + "' \"$@\"\n"
		if err := os.WriteFile(filepath.Join(shims, prog), []byte(shim), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(scriptBin, "-q", "-e", "-c", command, "/dev/null")
	cmd.Env = append(append(os.Environ(),
		"PATH="+shims+string(os.PathListSeparator)+os.Getenv("PATH"), "TERM=xterm-256color"), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	p, err := testproc.StartCmd(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		p.Stop(30 * time.Second)
		if t.Failed() {
			t.Logf("output on the terminal:\n%q", p.Log())
		}
	})
	return &terminal{p: p, stdin: stdin, calls: calls}
}

// javaCalls returns the java and mvn command lines the command ran.
func (term *terminal) javaCalls(t *testing.T) []string {
	b, err := os.ReadFile(term.calls)
	if os.IsNotExist(err) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// checkNoEscapes fails t if out holds a terminal escape sequence (colour
// codes and the like).
func checkNoEscapes(t *testing.T, what, out string) {
	t.Helper()
	if i := strings.IndexByte(out, 0x1b); i >= 0 {
		t.Errorf("%s left a terminal escape code: %q", what, out[max(0, i-40):min(len(out), i+40)])
	}
}

// TestMakeRun runs `make run` with the same four listeners moved to a temp
// dir: goblin-server starts (its Aeron media driver in process) with no
// Java or Maven run at all (neither the interop peers built nor a jar
// fetched), nothing on the terminal but the build and the server's log,
// and Ctrl-C stops it.
func TestMakeRun(t *testing.T) {
	makeBin := testkit.Need(t, "make", "make run")
	root := testproc.Root(t)
	dir := t.TempDir()
	sock := filepath.Join(dir, "goblin.sock")
	listen := "uds://" + sock + ",tcp://127.0.0.1:0,ring://" + filepath.Join(dir, "ring") + "?proto=sbe," +
		"aeron:ipc?proto=sbe|dir=" + filepath.Join(dir, "aeron")
	term := startOnTerminal(t, makeBin+" --no-print-directory -C '"+root+"' run BIN='"+filepath.Join(dir, "bin")+
		"' RUN_FLAGS='--metrics off --listen \""+listen+"\"'",
		"MAVEN_REPO="+filepath.Join(dir, "m2")) // were make run to fetch jars, it would
	term.p.WaitLog(t, `msg=ready`, 5*time.Minute)
	testproc.WaitDial(t, "unix", sock, 30*time.Second)

	// Ctrl-C on the terminal stops the server, and make with it.
	if _, err := term.stdin.Write([]byte{3}); err != nil {
		t.Fatal(err)
	}
	if _, err := term.p.Wait(60 * time.Second); err != nil {
		t.Fatalf("make run did not stop on Ctrl-C: %v", err)
	}
	out := term.p.Log()
	if strings.Count(out, "msg=listening") != 4 || !strings.Contains(out, "msg=stopped exit_code=0") {
		t.Errorf("goblin-server did not serve four listeners and stop cleanly")
	}
	checkNoEscapes(t, "make run", out)
	if calls := term.javaCalls(t); len(calls) > 0 {
		t.Errorf("make run ran %q: the server needs neither Java nor Maven", calls)
	}
}

// TestSetupLeavesNoColourCodes runs scripts/setup.sh on a terminal with the
// Maven artifacts made to look missing, so it runs Maven: its output says
// what it fetches and nothing else (Maven 3.8 writes colour codes to a
// terminal even in batch mode).
func TestSetupLeavesNoColourCodes(t *testing.T) {
	testkit.Need(t, "mvn", "the Maven artifacts setup.sh fetches")
	root := testproc.Root(t)
	term := startOnTerminal(t, filepath.Join(root, "scripts", "setup.sh"), "MAVEN_REPO="+t.TempDir())
	code, err := term.p.Wait(10 * time.Minute)
	if err != nil || code != 0 {
		t.Fatalf("setup.sh: exit %d, %v", code, err)
	}
	out := term.p.Log()
	if !strings.Contains(out, "setup: fetching io.aeron:aeron-all:") {
		t.Fatalf("setup.sh did not fetch the (missing) Aeron jar")
	}
	if len(term.javaCalls(t)) == 0 {
		t.Fatalf("setup.sh fetched the Aeron jar without Maven?")
	}
	checkNoEscapes(t, "setup.sh", out)
	for _, line := range strings.Split(strings.TrimSpace(strings.ReplaceAll(out, "\r", "")), "\n") {
		if !strings.HasPrefix(line, "setup: ") {
			t.Errorf("setup.sh printed %q: only its own setup: lines belong on a successful run", line)
		}
	}
}
