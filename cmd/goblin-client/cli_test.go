package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
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
	bin := testkit.Need(t, "redis-server", "a reference RESP server")
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
	t.Parallel()
	exerciseCLI(t, "uds://"+startRedis(t))
}

func TestCLIServerAbsent(t *testing.T) {
	t.Parallel()
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
	// Every transport's target syntax, with an example to copy.
	for _, want := range []string{"ring:///", "aeron:ipc", "aeron:udp?endpoint=", "control=",
		"--target 'ring:///dev/shm/goblin?proto=sbe'", "--target 'aeron:ipc?proto=sbe'"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--help does not mention %q", want)
		}
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

// TestHelpText: the prompt's help lists the command groups, each group's
// help lists its commands (every command and subcommand of goblin's
// command table is in one), and one command's help shows its usage and
// summary.
func TestHelpText(t *testing.T) {
	var b bytes.Buffer
	printHelp(&b, nil)
	top := b.String()
	if n := strings.Count(top, "\n"); n > 20 {
		t.Errorf("help prints %d lines, want a screenful:\n%s", n, top)
	}
	names, by := groups()
	for _, g := range []string{"string", "generic", "server", "connection", "cluster", "transactions"} {
		if !slices.Contains(names, g) || !strings.Contains(top, "@"+g) {
			t.Errorf("help does not list the group @%s:\n%s", g, top)
		}
	}
	for _, want := range []string{"quit", "clear", "help @GROUP", "monitor"} {
		if !strings.Contains(top, want) {
			t.Errorf("help lacks %q", want)
		}
	}
	listed := 0
	for _, g := range names {
		b.Reset()
		printHelp(&b, []string{"@" + strings.ToUpper(g)})
		for _, s := range by[g] {
			listed++
			if !strings.Contains(b.String(), "  "+s.Usage()+"\n") {
				t.Errorf("help @%s does not list %s", g, s.Usage())
			}
		}
	}
	if listed != len(listedCommands()) {
		t.Errorf("the groups list %d commands, the table has %d", listed, len(listedCommands()))
	}
	for topic, want := range map[string]string{"set": "NX|XX", "client setname": "CLIENT SETNAME connection-name",
		"GET": "GET key", "@nosuch": "no group", "select": "@connection"} {
		b.Reset()
		printHelp(&b, strings.Fields(topic))
		if !strings.Contains(b.String(), want) {
			t.Errorf("help %s = %q, want %q in it", topic, b.String(), want)
		}
	}
	b.Reset()
	printHelp(&b, []string{"nosuch"})
	if !strings.Contains(b.String(), "no such command") {
		t.Errorf("help nosuch = %q", b.String())
	}
}

func TestComplete(t *testing.T) {
	for line, want := range map[string][]string{
		"se":             {"SET", "SELECT"},
		"FLUSH":          {"FLUSHALL", "FLUSHDB"},
		"client s":       {"client SETNAME", "client SETINFO"},
		"CONFIG ":        {"CONFIG GET"},
		"help cl":        {"help CLIENT", "help CLUSTER"},
		"help @st":       {"help @string"},
		"help ":          {"help @string", "help @generic"},
		"help client se": {"help client SETNAME"},
		"get k":          nil,
		"nosuch":         nil,
		"set k v e":      nil,
		"help nosuch":    nil,
	} {
		got := complete(line)
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("complete(%q) = %q, lacks %q", line, got, w)
			}
		}
		if want == nil && len(got) > 0 {
			t.Errorf("complete(%q) = %q, want nothing", line, got)
		}
	}
}

// TestCLIInteractive runs the prompt on a pseudo-terminal (through
// util-linux's script) and checks replies, help and the history file.
func TestCLIInteractive(t *testing.T) {
	t.Parallel()
	scriptBin := testkit.Need(t, "script", "a pseudo-terminal to run the prompt on (util-linux)")
	sock := startRedis(t)
	bin := testproc.Build(t, "./cmd/goblin-client")
	hist := filepath.Join(t.TempDir(), "state", "history")
	cmd := exec.Command(scriptBin, "-q", "-e", "-c", bin+" --history "+hist+" --target "+sock, "/dev/null")
	// clear is the prompt's own; INFO prints as lines; Ctrl-D (\x04)
	// leaves.
	cmd.Stdin = strings.NewReader("set a 1\nhelp set\nget a\nget \"oops\nclear\ninfo keyspace\n\x04")
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
	for _, want := range []string{"Connected to uds://" + sock, "OK\n", "NX|XX", "\"1\"\n", "(error) unbalanced quotes",
		clearScreen, "# Keyspace\ndb0:keys=1,"} {
		i := strings.Index(rest, want)
		if i < 0 {
			t.Fatalf("interactive output lacks %q after the earlier replies:\n%q", want, text)
		}
		rest = rest[i+len(want):]
	}
	if strings.Contains(text, "unknown command") {
		t.Errorf("a command of the prompt's own went to the server:\n%q", text)
	}
	// Ctrl-D at the prompt leaves the shell a line of its own.
	if !strings.HasSuffix(text, "> \n") {
		t.Errorf("the session does not end with a newline after the last prompt:\n%q", text)
	}
	h, err := os.ReadFile(hist)
	if err != nil || !strings.Contains(string(h), "get a\n") {
		t.Fatalf("history file: %q, %v", h, err)
	}
}
