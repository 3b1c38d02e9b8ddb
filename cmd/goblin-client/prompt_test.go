package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/peterh/liner"

	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// scriptedInput feeds the prompt typed lines, then err (io.EOF for Ctrl-D,
// liner.ErrPromptAborted for Ctrl-C). Like liner, it writes each prompt to
// the terminal, here the session's output.
type scriptedInput struct {
	lines   []string
	err     error
	out     io.Writer
	history []string
}

func (in *scriptedInput) Prompt(p string) (string, error) {
	fmt.Fprint(in.out, p)
	if len(in.lines) == 0 {
		return "", in.err
	}
	l := in.lines[0]
	in.lines = in.lines[1:]
	return l, nil
}

func (in *scriptedInput) AppendHistory(l string) { in.history = append(in.history, l) }

// promptSession runs the prompt on lines against goblin-server and returns
// what it printed on stdout and stderr.
func promptSession(t *testing.T, tgt string, end error, lines ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, tgt)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out, errb bytes.Buffer
	s := &session{cfg: config{timeout: 30 * time.Second}, c: c, name: c.Target().String(), short: shortTarget(c.Target()),
		out: &out, errw: &errb}
	code := s.prompt(&scriptedInput{lines: lines, err: end, out: &out})
	return out.String(), errb.String(), code
}

// TestPrompt drives the interactive prompt through its input: clear and
// help are answered locally, INFO prints as lines, and Ctrl-D and Ctrl-C
// leave the terminal on a new line.
func TestPrompt(t *testing.T) {
	t.Parallel()
	tgt := testproc.StartGoblinServer(t)["uds/resp"]
	out, errs, code := promptSession(t, tgt, io.EOF,
		"flushall", "set a 1", "clear", "info keyspace", "help get", "  ", "get a")
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	prompt := ".../resp.sock> "
	for _, want := range []string{
		prompt + "OK\n" + prompt + "OK\n",
		prompt + clearScreen + prompt,               // clear: the screen is cleared, nothing sent
		"# Keyspace\r\ndb0:keys=1,",                 // INFO: its lines as they are, not one quoted string
		prompt + "  GET key\n",                      // help: from the command table
		prompt + prompt + "\"1\"\n" + prompt + "\n", // blank line skipped; Ctrl-D ends the line
	} {
		if !strings.Contains(out, want) {
			t.Errorf("prompt output lacks %q:\n%q", want, out)
		}
	}
	if strings.Contains(out, "unknown command") || strings.Contains(out, `"# Keyspace`) {
		t.Errorf("prompt output:\n%q", out)
	}

	// quit leaves at once, without a reply from the server; Ctrl-C also
	// leaves a newline.
	out, _, code = promptSession(t, tgt, io.EOF, "quit", "get a")
	if code != exitOK || strings.Contains(out, `"1"`) || strings.HasSuffix(out, "\n") {
		t.Errorf("quit: exit %d, output %q", code, out)
	}
	out, _, _ = promptSession(t, tgt, liner.ErrPromptAborted)
	if !strings.HasSuffix(out, "> \n") {
		t.Errorf("Ctrl-C: output %q does not end with a newline", out)
	}
}

// TestInfoPrintsLikeRedisCLI compares a one-shot INFO with what redis-cli
// prints for the same reply, byte for byte.
func TestInfoPrintsLikeRedisCLI(t *testing.T) {
	t.Parallel()
	sock := startRedis(t)
	redisCLI := testkit.Need(t, "redis-cli", "the reference output")
	runCLI(t, "", "--target", sock, "set", "a", "1").expect(t, 0, "OK\n")
	want, err := exec.Command(redisCLI, "--no-raw", "-s", sock, "info", "keyspace").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(want, []byte("# Keyspace\r\ndb0:keys=1")) {
		t.Fatalf("redis-cli printed %q", want)
	}
	runCLI(t, "", "--target", sock, "info", "keyspace").expect(t, 0, string(want))
	// Other replies keep redis-cli's quoting.
	runCLI(t, "", "--target", sock, "echo", "a\r\nb").expect(t, 0, "\"a\\r\\nb\"\n")
}
