// Package docs_test keeps README.md and the pages in docs/ honest. It
// extracts their code blocks and
//
//   - runs the shell commands a CI machine can run (goblin-client,
//     goblin-server, redis-cli, redis-benchmark, curl, go build) against
//     real processes, comparing the output with the reply a command's
//     comment shows (`goblin-client get k   # "v"`) or the lines a console
//     block shows after it;
//   - checks the commands it does not run as far as it can: `go test`
//     names packages that exist and patterns that match their tests and
//     benchmarks, `make` targets exist, paths exist;
//   - type-checks the Go snippets against the packages they use
//     (gosnippets_test.go);
//   - compares the flag tables of docs/cli.md and docs/server.md with the
//     binaries' --help, and docs/metrics.md's series with a scrape
//     (reference_test.go).
//
// A block is opted out with the comment <!-- doccheck: skip REASON --> on
// the line before its fence; `go test -v` lists every command that is not
// run, with the reason.
//
// What a command needs from the machine is moved out of the way of other
// programs: /dev/shm/goblin, the default socket, ports 6380, 9380, 40123
// and 40124, 10.0.0.1 and the Aeron directories become the test's own
// (docEnv.rewrite), `go run ./cmd/X` runs the binary built once, redis-cli
// prints as on a terminal (--no-raw) and redis-benchmark sends 2,000
// requests instead of 100,000.
package docs_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

func TestMain(m *testing.M) { testproc.Main(m) }

// block is one fenced code block of a Markdown file.
type block struct {
	file  string // relative to the module root
	line  int    // of the opening fence, 1-based
	lang  string
	lines []string
	skip  string // the reason given by a doccheck marker
}

func (b block) where() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

var (
	fenceRe  = regexp.MustCompile("^\\s*(```+|~~~+)\\s*([\\w+-]*)")
	markerRe = regexp.MustCompile(`<!--\s*doccheck:\s*skip\s+(.*?)\s*-->`)
)

// docFiles are the Markdown files the tests read: README.md, docs/*.md
// and the dated measurements of docs/results/*.md.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs/*.md under %s: %v", root, err)
	}
	results, err := filepath.Glob(filepath.Join(root, "docs", "results", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, results...)
	slices.Sort(pages)
	return append([]string{filepath.Join(root, "README.md")}, pages...)
}

// readBlocks returns the fenced code blocks of every doc file.
func readBlocks(t *testing.T, root string) []block {
	t.Helper()
	var out []block
	for _, path := range docFiles(t, root) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		lines := strings.Split(string(data), "\n")
		prev := "" // the last non-blank line before the current one
		for i := 0; i < len(lines); i++ {
			m := fenceRe.FindStringSubmatch(lines[i])
			if m == nil {
				if strings.TrimSpace(lines[i]) != "" {
					prev = lines[i]
				}
				continue
			}
			b := block{file: rel, line: i + 1, lang: m[2]}
			if mm := markerRe.FindStringSubmatch(prev); mm != nil {
				b.skip = mm[1]
			}
			for i++; i < len(lines); i++ {
				if c := fenceRe.FindStringSubmatch(lines[i]); c != nil && c[2] == "" &&
					strings.HasPrefix(c[1], m[1][:1]) && len(c[1]) >= len(m[1]) {
					break
				}
				b.lines = append(b.lines, lines[i])
			}
			out = append(out, b)
			prev = ""
		}
	}
	return out
}

// command is one shell command of a block.
type command struct {
	where string
	text  string   // continuation lines joined, the comment removed
	note  string   // the comment after it, if any
	want  []string // the output the doc shows, nil when it shows none
}

// commandWordRe recognises a shell command by its first word (after
// environment assignments); blocks without a language tag are commands
// when their first line is one.
var commandWordRe = regexp.MustCompile(`^(?:[A-Z_][A-Z0-9_]*=\S*\s+)*` +
	`(goblin-client|goblin-server|go|make|redis-cli|redis-benchmark|curl|env|sudo|cd|cat|printf|echo|\./\S+|benchmarks/\S+)(\s|$)`)

func isShell(b block) bool {
	switch b.lang {
	case "sh", "bash", "shell", "console":
		return true
	case "":
		for _, l := range b.lines {
			l = strings.TrimSpace(l)
			if l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			return commandWordRe.MatchString(strings.TrimPrefix(l, "$ "))
		}
	}
	return false
}

var (
	heredocRe = regexp.MustCompile(`<<-?\s*'?(\w+)'?`)
	// replyRe matches what goblin-client and redis-cli print for one
	// reply line, the way docs show it in a comment.
	replyRe = regexp.MustCompile(`^(OK|PONG|\(nil\)|\(integer\) -?\d+|\(error\) .+|\(empty array\)|` +
		`"(?:[^"\\]|\\.)*"|\d+\) .+|\[.*\]|\{.*\})$`)
)

// replyLines returns the output a comment shows ("OK", "OK / (integer) 2"
// for two lines), or nil when the comment is prose.
func replyLines(note string) []string {
	if note == "" {
		return nil
	}
	parts := strings.Split(note, " / ")
	for _, p := range parts {
		if !replyRe.MatchString(p) {
			return nil
		}
	}
	return parts
}

// shellCommands splits a shell block into commands: continuation lines
// joined, here-documents kept with their command, "$ " prompts with the
// output lines after them, and comment lines under a command's reply taken
// as its further reply lines.
func shellCommands(b block) []command {
	console := slices.ContainsFunc(b.lines, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "$ ") })
	var out []command
	for i := 0; i < len(b.lines); i++ {
		raw := b.lines[i]
		l := strings.TrimSpace(raw)
		switch {
		case l == "":
			continue
		case strings.HasPrefix(l, "#"):
			// "#   2) (nil)" under a command whose comment is its reply.
			if n := len(out); n > 0 && out[n-1].want != nil && raw[0] == ' ' {
				if r := strings.TrimSpace(l[1:]); replyRe.MatchString(r) {
					out[n-1].want = append(out[n-1].want, r)
				}
			}
			continue
		case console && !strings.HasPrefix(l, "$ "):
			if n := len(out); n > 0 {
				out[n-1].want = append(out[n-1].want, l)
			}
			continue
		}
		c := command{where: fmt.Sprintf("%s:%d", b.file, b.line+1+i)}
		text := strings.TrimPrefix(l, "$ ")
		code, note := splitComment(text)
		for strings.HasSuffix(code, `\`) && i+1 < len(b.lines) {
			i++
			code, note = splitComment(strings.TrimSuffix(code, `\`) + " " + strings.TrimSpace(b.lines[i]))
		}
		if m := heredocRe.FindStringSubmatch(code); m != nil {
			for i++; i < len(b.lines) && strings.TrimSpace(b.lines[i]) != m[1]; i++ {
				code += "\n" + b.lines[i]
			}
			code += "\n" + m[1]
		}
		c.text, c.note, c.want = code, note, replyLines(note)
		if console {
			c.want = []string{}
		}
		out = append(out, c)
	}
	return out
}

// splitComment splits a shell line at a # that starts a comment (after a
// blank, outside quotes).
func splitComment(s string) (code, note string) {
	var quote byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' {
				i++
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:])
		}
	}
	return strings.TrimSpace(s), ""
}

// docEnv is where one set of servers lives: the places the docs name,
// moved into the test's own directory and ports.
type docEnv struct {
	dir, runtime, ring, aeron string
	tcp, metrics, udp1, udp2  string
}

func newDocEnv(t *testing.T) *docEnv {
	dir := t.TempDir()
	e := &docEnv{dir: dir, runtime: filepath.Join(dir, "run"), ring: filepath.Join(dir, "ring"),
		aeron: filepath.Join(dir, "aeron"), tcp: freeTCPPort(t), metrics: freeTCPPort(t)}
	udp := testproc.FreeUDPPorts(t, 2)
	e.udp1, e.udp2 = fmt.Sprint(udp[0]), fmt.Sprint(udp[1])
	if err := os.Mkdir(e.runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	return e
}

func freeTCPPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

var (
	ringDirRe  = regexp.MustCompile(`/dev/shm/goblin([^\w-]|$)`)
	aeronIPCRe = regexp.MustCompile(`aeron:ipc(\?[^'"\s,]*)?`)
	goRunRe    = regexp.MustCompile(`go run \./cmd/(goblin-client|goblin-server)`)
)

// rewrite moves what a doc command names onto the test's own places.
func (e *docEnv) rewrite(s string) string {
	s = goRunRe.ReplaceAllString(s, "$1")
	s = ringDirRe.ReplaceAllString(s, e.ring+"$1")
	s = strings.ReplaceAll(s, "127.0.0.1:6380", "127.0.0.1:"+e.tcp)
	s = regexp.MustCompile(`-p 6380\b`).ReplaceAllString(s, "-p "+e.tcp)
	s = strings.ReplaceAll(s, "127.0.0.1:9380", "127.0.0.1:"+e.metrics)
	s = strings.ReplaceAll(s, "/tmp/goblin.sock", filepath.Join(e.runtime, "goblin.sock"))
	s = strings.ReplaceAll(s, "/dev/shm/goblin-aeron-$(id -u)", e.aeron) // aeron:ipc's default dir
	s = strings.ReplaceAll(s, "10.0.0.1", "127.0.0.1")
	s = regexp.MustCompile(`:40123\b`).ReplaceAllString(s, ":"+e.udp1)
	s = regexp.MustCompile(`:40124\b`).ReplaceAllString(s, ":"+e.udp2)
	return aeronIPCRe.ReplaceAllStringFunc(s, func(m string) string {
		if m == "aeron:ipc" {
			return "aeron:ipc?dir=" + e.aeron
		}
		return m + "|dir=" + e.aeron
	})
}

// vars is the environment commands run with: the binaries on PATH and
// the default socket in the env's runtime directory.
func (e *docEnv) vars(bin string) []string {
	return append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"XDG_RUNTIME_DIR="+e.runtime, "GOBLIN_TARGET=", "GOBLIN_PASSWORD=", "GOBLIN_REQUIREPASS=")
}

// runner runs the commands of the blocks, one block at a time.
type runner struct {
	t       *testing.T
	root    string
	bin     string // goblin-client and goblin-server
	shared  *docEnv
	env     *docEnv // the current block's
	servers []*testproc.Proc
	notRun  []string
}

// rule says what is done with the commands a pattern matches: run (do),
// or checked and not run (why says why).
type rule struct {
	re  *regexp.Regexp
	why string
	do  func(r *runner, c command)
}

// serverRe matches a command that starts goblin-server.
var serverRe = regexp.MustCompile(`^(goblin-server|go run \./cmd/goblin-server)\b`)

var rules = []rule{
	{re: regexp.MustCompile(`^sudo `), do: (*runner).checkPaths,
		why: "needs root, network namespaces and minutes of measurement; benchmarks/harness/runner's tests run the launchers"},
	{re: regexp.MustCompile(`benchmarks/\S+\.sh`), do: (*runner).checkPaths,
		why: "a benchmark launcher: minutes of measurement on an idle machine; benchmarks/harness/runner's tests run it with tiny sample counts"},
	{re: regexp.MustCompile(`goblin-bench tails -kernel-trace \S+`), do: func(r *runner, c command) { r.checkPaths(c); r.checkBenchFlags(c) },
		why: "reads the timelines and the kernel trace of a root-only benchmark run (the block's first command); benchmarks/harness/report's TestAttributeTails runs the attribution"},
	{re: regexp.MustCompile(`^cat > ~/\.ssh/`),
		why: "writes the reader's SSH configuration for a two-host lab"},
	{re: regexp.MustCompile(`^cd /tmp/\S+ && sha256sum`),
		why: "checks the archive a benchmark run leaves behind"},
	{re: regexp.MustCompile(`^make run\b`), do: (*runner).checkMake,
		why: "serves until Ctrl-C: scripts.TestMakeRun runs it on a terminal, and the server command it runs serves the other blocks here"},
	{re: regexp.MustCompile(`^make test\b`), do: (*runner).checkMake, why: "CI itself (.ci/run), which runs this test"},
	{re: regexp.MustCompile(`--idle spin|profile=spin|wait=spin`), do: (*runner).checkFlags,
		why: "a spinning loop, driver or client wants a core of its own, which a loaded CI machine does not have (the flags are checked)"},
	{re: regexp.MustCompile(`^make `), do: (*runner).checkMake, why: "make targets are checked with make -n"},
	{re: regexp.MustCompile(`^(?:[A-Z_][A-Z0-9_]*=\S*\s+)*go test `), do: (*runner).checkGoTest,
		why: "tests and benchmarks take minutes; make test and make bench run them (packages and patterns are checked)"},
	{re: regexp.MustCompile(`^go -C /tmp/\S+ build `),
		why: "builds a binary from another checkout the reader made (main before a change, in a temporary worktree), for a before/after benchmark"},
	{re: regexp.MustCompile(`^go build `), do: (*runner).goBuild},
	{re: regexp.MustCompile(`^\./[\w-]+ --help$`), do: (*runner).runBuilt},
	{re: regexp.MustCompile(`^bin/goblin-bench `), do: (*runner).runBench},
	{re: regexp.MustCompile(`(^|\s)\./aeronmd\b`),
		why: "starts a media driver that runs until stopped, with a properties file of the reader's; aeron/cmd/aeronmd's tests run it"},
	{re: regexp.MustCompile(`^go run \./aeron/cmd/aeron-stat\b`), do: (*runner).runAeronStat},
	{re: regexp.MustCompile(`^java .*\bio\.aeron\.samples\.AeronStat\b`), do: (*runner).runAeronStat},
	{re: serverRe, do: (*runner).startServer},
	{re: regexp.MustCompile(`(^|\| *)(goblin-client|go run \./cmd/goblin-client)\b`), do: (*runner).runClient},
	{re: regexp.MustCompile(`^redis-cli `), do: (*runner).runClient},
	{re: regexp.MustCompile(`^redis-benchmark `), do: (*runner).runBenchmark},
	{re: regexp.MustCompile(`^curl `), do: (*runner).runClient},
}

// TestDocCommands runs or checks every shell command of README.md and
// docs/*.md.
func TestDocCommands(t *testing.T) {
	root := testproc.Root(t)
	testkit.Need(t, "redis-cli", "the docs' redis-cli commands")
	testkit.Need(t, "redis-benchmark", "the README's redis-benchmark command")
	testkit.Need(t, "curl", "docs/metrics.md's curl command")
	r := newRunner(t, root)

	ran, other := 0, 0
	for _, b := range readBlocks(t, root) {
		if !isShell(b) {
			if b.lang != "go" {
				other++
			}
			continue
		}
		if b.skip != "" {
			r.notRun = append(r.notRun, fmt.Sprintf("%s (the whole block): %s", b.where(), b.skip))
			continue
		}
		t.Run(b.where(), func(t *testing.T) {
			ran += r.runBlock(t, b)
		})
	}
	t.Logf("%d commands run or checked; %d blocks are not commands (diagrams, output, configuration); not run:\n  %s",
		ran, other, strings.Join(r.notRun, "\n  "))
}

// newRunner builds goblin-client and goblin-server and starts the server
// make run starts, in the shared env.
func newRunner(t *testing.T, root string) *runner {
	r := &runner{t: t, root: root, bin: filepath.Dir(testproc.Build(t, "./cmd/goblin-client"))}
	testproc.Build(t, "./cmd/goblin-server") // beside goblin-client
	r.shared = newDocEnv(t)
	r.env = r.shared
	r.startMakeRunServer()
	return r
}

// runBlock runs a block's commands in order and returns how many it ran or
// checked. Servers a block starts live until its end, in a place of their
// own; the other blocks use the make run server, flushed first.
func (r *runner) runBlock(t *testing.T, b block) int {
	r.t = t
	defer func() { r.t = nil }()
	cmds := shellCommands(b)
	r.env = r.shared
	if slices.ContainsFunc(cmds, func(c command) bool { return serverRe.MatchString(c.text) }) {
		r.env = newDocEnv(t)
	} else {
		r.sh(command{where: b.where(), text: "goblin-client flushall"}, "goblin-client flushall")
	}
	defer func() {
		for _, p := range r.servers {
			p.Stop(30 * time.Second)
		}
		r.servers = nil
	}()
	n := 0
	for _, c := range cmds {
		i := slices.IndexFunc(rules, func(rl rule) bool { return rl.re.MatchString(c.text) })
		if i < 0 {
			t.Errorf("%s: no rule to run or check %q: add one to docs_test.go, or mark the block <!-- doccheck: skip REASON -->",
				c.where, c.text)
			continue
		}
		rl := rules[i]
		if rl.why != "" {
			r.notRun = append(r.notRun, fmt.Sprintf("%s %s: %s", c.where, firstLine(c.text), rl.why))
		}
		if rl.do != nil {
			rl.do(r, c)
		}
		n++
	}
	return n
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// sh runs text with bash in the module root and returns its output.
func (r *runner) sh(c command, text string) (stdout, stderr string, ok bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", text)
	cmd.Dir = r.root
	cmd.Env = r.env.vars(r.bin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		r.t.Errorf("%s: %s\nran: %s\n%v\nstdout: %q\nstderr: %q", c.where, c.text, text, err, out.String(), errb.String())
	}
	return out.String(), errb.String(), err == nil
}

// runClient runs a client command and compares its output with the doc's.
func (r *runner) runClient(c command) {
	text := r.env.rewrite(c.text)
	text = regexp.MustCompile(`^redis-cli `).ReplaceAllString(text, "redis-cli --no-raw ")
	stdout, _, ok := r.sh(c, text)
	if !ok || c.want == nil {
		return
	}
	got := strings.Split(strings.TrimSuffix(strings.ReplaceAll(stdout, "\r", ""), "\n"), "\n")
	if !slices.Equal(got, c.want) {
		r.t.Errorf("%s: %s\nprints %q, the doc shows %q", c.where, c.text, got, c.want)
	}
}

// aeronStatRe matches one of the server's counters in the output of
// goblin's aeron-stat or Aeron's AeronStat.
var aeronStatRe = regexp.MustCompile(`(?m)^\s*\d+:\s+[\d,]+ - (\[type 4005\] )?goblin requests: aeron:ipc stream=1001$`)

// runAeronStat runs goblin's aeron-stat (built once) or Aeron's AeronStat
// (with the JVM the docs name) against the driver of the server the
// command's directory names, and checks that the server's counters are
// listed.
func (r *runner) runAeronStat(c command) {
	text := r.env.rewrite(c.text)
	if strings.HasPrefix(text, "java ") {
		testkit.Need(r.t, "java", "Aeron's AeronStat of "+c.where)
	} else {
		text = strings.Replace(text, "go run ./aeron/cmd/aeron-stat", testproc.Build(r.t, "./aeron/cmd/aeron-stat"), 1)
	}
	if stdout, _, ok := r.sh(c, text); ok && !aeronStatRe.MatchString(stdout) {
		r.t.Errorf("%s: %s\nlists no \"goblin requests\" counter of the server's aeron:ipc listener:\n%s", c.where, c.text, stdout)
	}
}

func (r *runner) runBenchmark(c command) {
	text := regexp.MustCompile(`-n \d+`).ReplaceAllString(r.env.rewrite(c.text), "-n 2000")
	if stdout, _, ok := r.sh(c, text); ok && !strings.Contains(stdout, "requests per second") {
		r.t.Errorf("%s: %s printed no throughput: %q", c.where, text, stdout)
	}
}

func (r *runner) goBuild(c command) {
	text := regexp.MustCompile(`-o \S+`).ReplaceAllStringFunc(c.text, func(m string) string {
		return "-o " + filepath.Join(r.env.dir, "built", filepath.Base(m[3:]))
	})
	r.sh(c, text)
}

// runBuilt runs a binary an earlier go build of the block built.
func (r *runner) runBuilt(c command) {
	r.sh(c, filepath.Join(r.env.dir, "built", strings.TrimPrefix(c.text, "./")))
}

// startServer starts goblin-server as the doc says, with its default
// listeners and metrics moved out of the way, and waits until it is ready.
func (r *runner) startServer(c command) {
	text := r.env.rewrite(c.text)
	if strings.Contains(text, "aeron:udp") {
		testkit.Need(r.t, "java", "the Java media driver of "+c.where)
	}
	if !strings.Contains(text, "--listen") {
		text += " --listen 'uds://,tcp://127.0.0.1:" + r.env.tcp + "'"
	}
	if !strings.Contains(text, "--metrics") {
		text += " --metrics off"
	}
	r.servers = append(r.servers, r.start(c, text))
}

func (r *runner) start(c command, text string) *testproc.Proc {
	cmd := exec.Command("bash", "-c", "exec "+text)
	cmd.Dir = r.root
	cmd.Env = r.env.vars(r.bin)
	p, err := testproc.StartCmd(cmd)
	if err != nil {
		r.t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for !strings.Contains(p.Log(), "msg=ready") {
		if p.Exited() || time.Now().After(deadline) {
			p.Stop(10 * time.Second)
			r.t.Fatalf("%s: %s\nran: %s\ndid not become ready:\n%s", c.where, c.text, text, p.Log())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return p
}

// startMakeRunServer starts the server `make run` starts (its command from
// make -n), in the shared env, for the blocks that start none.
func (r *runner) startMakeRunServer() {
	makeBin := testkit.Need(r.t, "make", "the command make run runs")
	out, err := exec.Command(makeBin, "--no-print-directory", "-s", "-n", "-C", r.root, "run", "BIN="+r.bin).Output()
	if err != nil {
		r.t.Fatalf("make -n run: %v", err)
	}
	var line string
	for sc := bufio.NewScanner(strings.NewReader(string(out))); sc.Scan(); {
		if strings.HasPrefix(sc.Text(), filepath.Join(r.bin, "goblin-server")) {
			line = sc.Text()
		}
	}
	if line == "" {
		r.t.Fatalf("make -n run starts no goblin-server:\n%s", out)
	}
	c := command{where: "Makefile (make run)", text: line}
	p := r.start(c, r.shared.rewrite(line)+" --metrics 127.0.0.1:"+r.shared.metrics)
	r.t.Cleanup(func() { p.Stop(30 * time.Second) })
}

// checkPaths checks that the repository paths a command names exist.
func (r *runner) checkPaths(c command) {
	for _, f := range shellFields(c.text) {
		if strings.ContainsAny(f, "=:~$") || strings.HasPrefix(f, "/") || !strings.Contains(f, "/") {
			continue
		}
		p := filepath.Join(r.root, strings.TrimSuffix(strings.TrimPrefix(f, "./"), "/..."))
		if _, err := os.Stat(p); err != nil {
			r.t.Errorf("%s: %s names %s, which does not exist", c.where, firstLine(c.text), f)
		}
	}
}

func (r *runner) checkMake(c command) {
	args := shellFields(c.text)[1:]
	out, err := exec.Command("make", append([]string{"-n", "-C", r.root, "BIN=" + r.env.dir}, args...)...).CombinedOutput()
	if err != nil {
		r.t.Errorf("%s: %s: make -n: %v\n%s", c.where, c.text, err, out)
	}
}

// checkFlags checks that the flags a goblin-client or goblin-server
// command gives are in the binary's --help.
func (r *runner) checkFlags(c command) {
	f := shellFields(goRunRe.ReplaceAllString(c.text, "$1"))
	bin := f[0]
	if bin != "goblin-client" && bin != "goblin-server" {
		r.t.Errorf("%s: %s: flags of %s are not checked", c.where, c.text, bin)
		return
	}
	help := helpText(r.t, filepath.Join(r.bin, bin))
	for _, f := range f[1:] {
		if name, ok := strings.CutPrefix(f, "--"); ok {
			name, _, _ = strings.Cut(name, "=")
			if !slices.Contains(help, name) {
				r.t.Errorf("%s: %s --%s: no such flag in %s --help", c.where, bin, name, bin)
			}
		}
	}
}

// runBench runs a goblin-bench command with the binary an earlier go
// build of the block built, after checking its command and flags against
// that command's --help.
func (r *runner) runBench(c command) {
	if !r.checkBenchFlags(c) {
		return
	}
	r.sh(c, filepath.Join(r.env.dir, "built", strings.TrimPrefix(c.text, "bin/")))
}

// checkBenchFlags checks that a goblin-bench command line names one of
// its commands (help lists it) and only flags that command's --help lists.
func (r *runner) checkBenchFlags(c command) bool {
	f := shellFields(c.text)
	i := slices.IndexFunc(f, func(s string) bool { return strings.HasSuffix(s, "goblin-bench") })
	if i < 0 || i+1 >= len(f) {
		r.t.Errorf("%s: %s: no goblin-bench command", c.where, c.text)
		return false
	}
	bin := filepath.Join(r.bin, "goblin-bench")
	if _, err := os.Stat(bin); err != nil {
		build := exec.Command("go", "build", "-o", bin, "./cmd/goblin-bench")
		build.Dir = r.root
		if out, err := build.CombinedOutput(); err != nil {
			r.t.Fatalf("go build ./cmd/goblin-bench: %v\n%s", err, out)
		}
	}
	sub := f[i+1]
	if sub == "help" {
		return true
	}
	help := helpText(r.t, bin, sub, "--help")
	for _, a := range f[i+2:] {
		if name, ok := strings.CutPrefix(a, "-"); ok {
			if name, _, _ = strings.Cut(name, "="); !slices.Contains(help, name) {
				r.t.Errorf("%s: goblin-bench %s -%s: no such flag in goblin-bench %s --help", c.where, sub, name, sub)
				return false
			}
		}
	}
	return true
}

// shellFields splits a command line into words the way the shell does for
// the simple cases docs hold: blanks separate, quotes group.
func shellFields(s string) []string {
	var out []string
	var cur strings.Builder
	var quote byte
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// testFuncRe matches a test, a benchmark or an example; -run selects
// examples as well as tests.
var testFuncRe = regexp.MustCompile(`(?m)^func (Test|Benchmark|Example)(\w*)\(`)

// checkGoTest checks a go test command without running it: its packages
// exist, and its -run and -bench patterns match tests and benchmarks in
// them.
func (r *runner) checkGoTest(c command) {
	var pkgs []string
	patterns := map[string]string{} // "Test" or "Benchmark" -> pattern
	f := shellFields(c.text)
	for len(f) > 0 && strings.Contains(f[0], "=") {
		f = f[1:] // environment assignments
	}
	for i := 2; i < len(f); i++ {
		switch a := f[i]; {
		case a == "-run" || a == "-bench":
			if i+1 < len(f) {
				kind := map[string]string{"-run": "Test", "-bench": "Benchmark"}[a]
				patterns[kind] = f[i+1]
				i++
			}
		case slices.Contains([]string{"-benchtime", "-timeout", "-cpu", "-count", "-tags", "-fuzz", "-fuzztime"}, a):
			i++
		case !strings.HasPrefix(a, "-"):
			pkgs = append(pkgs, a)
		}
	}
	if len(pkgs) == 0 {
		r.t.Errorf("%s: %s names no package", c.where, c.text)
	}
	names := map[string][]string{}
	for _, pkg := range pkgs {
		dir := filepath.Join(r.root, strings.TrimSuffix(strings.TrimPrefix(pkg, "./"), "/..."))
		files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
		if strings.HasSuffix(pkg, "/...") {
			_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && strings.HasSuffix(p, "_test.go") && filepath.Dir(p) != dir {
					files = append(files, p)
				}
				return nil
			})
		}
		if len(files) == 0 {
			r.t.Errorf("%s: %s: %s has no tests", c.where, c.text, pkg)
		}
		for _, file := range files {
			src, err := os.ReadFile(file)
			if err != nil {
				r.t.Fatal(err)
			}
			for _, m := range testFuncRe.FindAllStringSubmatch(string(src), -1) {
				kind := m[1]
				if kind == "Example" {
					kind = "Test"
				}
				names[kind] = append(names[kind], m[1]+m[2])
			}
		}
	}
	for kind, pat := range patterns {
		if pat == "^$" || pat == "." {
			continue // none, or all
		}
		top, _, _ := strings.Cut(pat, "/")
		re, err := regexp.Compile(top)
		if err != nil {
			r.t.Errorf("%s: %s: bad pattern %q: %v", c.where, c.text, pat, err)
			continue
		}
		if !slices.ContainsFunc(names[kind], re.MatchString) {
			r.t.Errorf("%s: %s: no %s in %s matches %q", c.where, c.text, strings.ToLower(kind), strings.Join(pkgs, " "), pat)
		}
	}
}

// helpText returns the flag names bin's --help lists (args: the
// arguments that print it; default --help).
func helpText(t *testing.T, bin string, args ...string) []string {
	t.Helper()
	if len(args) == 0 {
		args = []string{"--help"}
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s --help: %v\n%s", bin, err, out)
	}
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^  -([\w-]+)`).FindAllStringSubmatch(string(out), -1) {
		names = append(names, m[1])
	}
	if len(names) == 0 {
		t.Fatalf("%s --help lists no flags:\n%s", bin, out)
	}
	return names
}
