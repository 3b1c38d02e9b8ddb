package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testproc"
)

func TestMain(m *testing.M) { testproc.Main(m) }

// cliResult is one run of the goblin-client binary.
type cliResult struct {
	stdout, stderr string
	code           int
}

// runCLI runs the real goblin-client binary with args and stdin.
func runCLI(t *testing.T, stdin string, args ...string) cliResult {
	t.Helper()
	bin := testproc.Build(t, "./cmd/goblin-client")
	cmd := exec.Command(bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	// A private runtime dir: the default target must not find a server
	// someone else started on this machine.
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "XDG_RUNTIME_DIR="+t.TempDir(), "XDG_STATE_HOME=",
		"GOBLIN_TARGET=", "GOBLIN_PASSWORD=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return cliResult{out.String(), errb.String(), code}
}

func (r cliResult) expect(t *testing.T, code int, stdout string) {
	t.Helper()
	if r.code != code || r.stdout != stdout {
		t.Fatalf("exit %d, stdout %q (stderr %q); want exit %d, stdout %q", r.code, r.stdout, r.stderr, code, stdout)
	}
}

// startRedis starts redis-server on a temp Unix socket, skipping when it
// is not installed; it stands in for any RESP server.
func startRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	testproc.Start(t, bin, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir)
	testproc.WaitDial(t, "unix", sock, 30*time.Second)
	return sock
}

// exerciseCLI drives a RESP server at tgt through the binary: one-shot
// commands, --json, a stdin script and the exit codes.
func exerciseCLI(t *testing.T, tgt string, extra ...string) {
	cli := func(stdin string, args ...string) cliResult {
		return runCLI(t, stdin, append(append([]string{"--target", tgt}, extra...), args...)...)
	}
	cli("", "flushall").expect(t, 0, "OK\n")
	cli("", "ping").expect(t, 0, "PONG\n")
	cli("", "set", "greeting", "hello world").expect(t, 0, "OK\n")
	cli("", "get", "greeting").expect(t, 0, "\"hello world\"\n")
	cli("", "get", "missing").expect(t, 0, "(nil)\n")
	cli("", "incr", "n").expect(t, 0, "(integer) 1\n")
	// argv cannot hold NUL: binary values with NUL go through a script.
	cli("set bin \"a\\r\\n\\x00b\"\n").expect(t, 0, "OK\n")
	cli("", "get", "bin").expect(t, 0, "\"a\\r\\n\\x00b\"\n")
	cli("", "mget", "greeting", "missing", "n").expect(t, 0, "1) \"hello world\"\n2) (nil)\n3) \"1\"\n")
	// An error reply prints like redis-cli and exits 1.
	r := cli("", "incr", "greeting")
	if r.code != 1 || !strings.HasPrefix(r.stdout, "(error) ") {
		t.Fatalf("incr on a string: exit %d, stdout %q", r.code, r.stdout)
	}
	// --json: one JSON value per reply.
	r = cli("", "--json", "mget", "greeting", "missing", "n", "bin")
	var got []any
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != 0 {
		t.Fatalf("--json mget: %q, exit %d: %v", r.stdout, r.code, err)
	}
	want := []any{"hello world", nil, "1", "a\r\n\x00b"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("--json mget element %d = %#v, want %#v", i, got[i], want[i])
		}
	}
	cli("", "--json", "set", "raw", "\xff\xfe").expect(t, 0, "\"OK\"\n")
	cli("", "--json", "get", "raw").expect(t, 0, "{\"base64\":\"//4=\"}\n")
	cli("", "--json", "incr", "n").expect(t, 0, "2\n")
	r = cli("", "--json", "incr", "greeting")
	if r.code != 1 || !strings.HasPrefix(r.stdout, "{\"error\":") {
		t.Fatalf("--json error: exit %d, %q", r.code, r.stdout)
	}
	// A script on stdin: comments and blank lines skipped, quoting honoured,
	// every line run, the worst exit code wins (2 for the bad quoting).
	script := "# set up\nset s \"two words\"\n\nget s\nincr s\nget 'it''s'\ndbsize\n"
	r = cli(script)
	if r.code != 2 {
		t.Fatalf("script with an error reply and bad quoting: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 4 || lines[0] != "OK" || lines[1] != "\"two words\"" ||
		!strings.HasPrefix(lines[2], "(error) ") || !strings.HasPrefix(lines[3], "(integer) ") {
		t.Fatalf("script output %q", r.stdout)
	}
	if !strings.Contains(r.stderr, "line 6") {
		t.Fatalf("bad quoting on line 6 not reported: %q", r.stderr)
	}
	cli("set a 1\nincr a\nget a\n").expect(t, 0, "OK\n(integer) 2\n\"2\"\n")
	r = cli("incr greeting\nping\n")
	if r.code != 1 || !strings.HasSuffix(r.stdout, "PONG\n") {
		t.Fatalf("script with an error reply: exit %d, stdout %q", r.code, r.stdout)
	}
}

func TestCLIAgainstRedis(t *testing.T) {
	exerciseCLI(t, "uds://"+startRedis(t))
}

func TestCLIServerAbsent(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "nobody.sock")
	for _, args := range [][]string{
		{"--target", sock, "ping"},
		{"--target", sock}, // the stdin path reports it too
	} {
		r := runCLI(t, "ping\n", args...)
		if r.code != 3 || !strings.Contains(r.stderr, "uds://"+sock) || !strings.Contains(r.stderr, "goblin-server") {
			t.Fatalf("server absent: exit %d, stderr %q; want exit 3 naming the target and goblin-server", r.code, r.stderr)
		}
	}
	// The default target is goblin-server's default socket,
	// $XDG_RUNTIME_DIR/goblin.sock.
	r := runCLI(t, "", "ping")
	if r.code != 3 || !strings.Contains(r.stderr, "/goblin.sock?proto=resp") {
		t.Fatalf("default target: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestCLIUsage(t *testing.T) {
	r := runCLI(t, "", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "Usage: goblin-client") || !strings.Contains(r.stdout, "-target") ||
		!strings.Contains(r.stdout, "Exit status") {
		t.Fatalf("--help: exit %d, stdout %q", r.code, r.stdout)
	}
	for _, args := range [][]string{
		{"--bogus"},
		{"--target", "nope://x", "ping"},
		{"--target", "/tmp/x.sock", "--proto", "xml", "ping"},
	} {
		if r := runCLI(t, "", args...); r.code != 2 || r.stderr == "" {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 with a message", args, r.code, r.stderr)
		}
	}
}

func TestHelpText(t *testing.T) {
	var b bytes.Buffer
	printHelp(&b, nil)
	if !strings.Contains(b.String(), "SET") || !strings.Contains(b.String(), "quit") {
		t.Fatalf("help: %q", b.String())
	}
	b.Reset()
	printHelp(&b, []string{"set"})
	if !strings.Contains(b.String(), "NX|XX") {
		t.Fatalf("help set: %q", b.String())
	}
	b.Reset()
	printHelp(&b, []string{"client", "setname"})
	if !strings.Contains(b.String(), "CLIENT SETNAME connection-name") {
		t.Fatalf("help client setname: %q", b.String())
	}
}

// TestCompletion: completion offers the table's command names, and a
// container's subcommands after its name.
func TestCompletion(t *testing.T) {
	has := func(list []string, want string) bool {
		for _, s := range list {
			if s == want {
				return true
			}
		}
		return false
	}
	if got := complete("inc"); !has(got, "INCR") || !has(got, "INCRBY") || has(got, "GET") {
		t.Fatalf("complete(inc) = %q", got)
	}
	if got := complete("client "); !has(got, "CLIENT SETNAME") || has(got, "CONFIG GET") {
		t.Fatalf("complete(client ) = %q", got)
	}
	if got := complete("config g"); len(got) != 1 || got[0] != "CONFIG GET" {
		t.Fatalf("complete(config g) = %q", got)
	}
}

// TestCLIInteractive runs the prompt on a pseudo-terminal (through
// util-linux's script) and checks replies, help and the history file.
func TestCLIInteractive(t *testing.T) {
	scriptBin, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script (util-linux) is not installed: no pseudo-terminal to test the prompt on")
	}
	sock := startRedis(t)
	bin := testproc.Build(t, "./cmd/goblin-client")
	hist := filepath.Join(t.TempDir(), "state", "history")
	cmd := exec.Command(scriptBin, "-q", "-e", "-c", bin+" --history "+hist+" --target "+sock, "/dev/null")
	cmd.Stdin = strings.NewReader("set a 1\nhelp set\nget a\nget \"oops\nquit\n")
	cmd.Env = append(os.Environ(), "TERM=dumb")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("interactive session: %v\n%s", err, out)
	}
	// The terminal echoes the typed lines as soon as they are written, so
	// echo and prompts interleave with the replies however the scheduler
	// ran the two processes; only the replies' order is fixed.
	text := strings.ReplaceAll(string(out), "\r", "")
	rest := text
	for _, want := range []string{"Connected to uds://" + sock, "OK\n", "NX|XX", "\"1\"\n", "(error) unbalanced quotes"} {
		i := strings.Index(rest, want)
		if i < 0 {
			t.Fatalf("interactive output lacks %q after the earlier replies:\n%s", want, text)
		}
		rest = rest[i+len(want):]
	}
	h, err := os.ReadFile(hist)
	if err != nil || !strings.Contains(string(h), "get a\n") {
		t.Fatalf("history file: %q, %v", h, err)
	}
}
