package docs_test

// Tests for statements in the pages' prose and in --help that a command
// can check but that are not a shell command of their own: the messages
// docs/cli.md quotes, what docs/cli.md says goes over SBE, the default
// socket rule of docs/server.md and the media driver --aeron-dir's help
// and docs/server.md promise.

import (
	"bytes"
	"errors"
	"fmt"
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

func readDoc(t *testing.T, page string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testproc.Root(t), page))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// runCLI runs goblin-client with args and env added to the test's
// environment and returns its stderr and exit code.
func runCLI(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(testproc.Build(t, "./cmd/goblin-client"), args...)
	cmd.Env = append(append(os.Environ(), "GOBLIN_TARGET=", "GOBLIN_PASSWORD=", "AERON_DIR="), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("goblin-client %q: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// TestDocCLIMessages runs the commands behind every message docs/cli.md
// quotes, against a real goblin-server and redis-server where one is
// needed, and checks that each line the command prints on stderr, with the
// test's own paths put back to the page's, is a line of the page, and that
// the exit code is the one the page's table gives.
func TestDocCLIMessages(t *testing.T) {
	redisServer := testkit.Need(t, "redis-server", "the RESP-only server of docs/cli.md's SBE section")
	page := readDoc(t, "docs/cli.md")
	dir := t.TempDir()
	ring, aeronDir := filepath.Join(dir, "ring"), filepath.Join(dir, "aeron")
	srv := testproc.StartGoblinServer(t, "--listen", "ring://"+ring+"?proto=sbe",
		"--listen", "aeron:ipc?proto=sbe|dir="+aeronDir)
	redisSock := filepath.Join(dir, "redis.sock")
	rp := testproc.Start(t, redisServer, "--port", "0", "--unixsocket", redisSock, "--save", "", "--appendonly", "no")
	testkit.Eventually(t, 30*time.Second, "redis-server to create "+redisSock, func() (bool, string) {
		_, err := os.Stat(redisSock)
		return err == nil || rp.Exited(), ""
	})
	missingSock := filepath.Join(dir, "goblin-1000", "goblin.sock")
	noDriver := filepath.Join(dir, "x")
	// The page's paths for the test's own, longest first.
	sbeSock := strings.TrimSuffix(strings.TrimPrefix(srv["uds/sbe"], "uds://"), "?proto=sbe")
	docPaths := strings.NewReplacer(missingSock, "/tmp/goblin-1000/goblin.sock", redisSock, "/tmp/redis.sock", sbeSock, "/tmp/goblin.sock",
		aeronDir, "/dev/shm/goblin-aeron-1000", noDriver, "/dev/shm/x", ring, "/dev/shm/goblin")

	cases := []struct {
		what string
		env  []string
		args []string
		code int
	}{
		{"nothing listens (with the hint)", nil, []string{"--target", "uds://" + missingSock, "ping"}, 3},
		{"ring, the other protocol", nil, []string{"--target", "ring://" + ring + "?proto=resp", "ping"}, 3},
		{"aeron:ipc, the other protocol", []string{"AERON_DIR=" + aeronDir}, []string{"--target", "aeron:ipc?proto=resp", "ping"}, 3},
		{"aeron:udp without control", nil, []string{"--target", "aeron:udp?proto=resp|endpoint=10.0.0.1:40123", "ping"}, 2},
		{"ring: with one slash", nil, []string{"--target", "ring:/dev/shm/goblin", "ping"}, 2},
		{"tcp, unknown parameter", nil, []string{"--target", "tcp://127.0.0.1:6380?proto=resp&nosuch=1", "ping"}, 2},
		{"$AERON_DIR without a driver", []string{"AERON_DIR=" + noDriver}, []string{"--target", "aeron:ipc?proto=resp", "ping"}, 3},
		{"SBE, no encoding", nil, []string{"--target", srv["uds/sbe"], "slowlog", "len"}, 2},
		{"monitor over SBE", nil, []string{"--target", srv["uds/sbe"], "monitor"}, 2},
		{"SBE to a RESP-only server", nil, []string{"--target", "uds://" + redisSock + "?proto=sbe", "--timeout", "1s", "ping"}, 3},
	}
	for _, c := range cases {
		_, stderr, code := runCLI(t, c.env, c.args...)
		if code != c.code {
			t.Errorf("%s: goblin-client %q exited %d, docs/cli.md's table gives %d\nstderr: %s", c.what, c.args, code, c.code, stderr)
		}
		for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
			if l := docPaths.Replace(line); !strings.Contains(page, "\n"+l+"\n") {
				t.Errorf("%s: goblin-client %q prints a line docs/cli.md does not quote:\n  %s", c.what, c.args, l)
			}
		}
	}
}

var (
	sbeWorksRe   = regexp.MustCompile(`subcommands\s+included\s+\(([^)]*)\)`)
	sbeRefusedRe = regexp.MustCompile(`A\s+command\s+outside\s+the\s+table\s+\(([^)]*)\)`)
	codeSpanRe   = regexp.MustCompile("`([^`]+)`")
)

// TestDocCLISBE: the commands docs/cli.md's SBE section names as going
// over SBE work over SBE, the ones it names as refused are refused with
// exit code 2 and nothing sent, and both protocols work against any of
// goblin-server's socket listeners, as the section says.
func TestDocCLISBE(t *testing.T) {
	page := readDoc(t, "docs/cli.md")
	works, refused := sbeWorksRe.FindStringSubmatch(page), sbeRefusedRe.FindStringSubmatch(page)
	if works == nil || refused == nil {
		t.Fatalf("docs/cli.md's SBE section names no commands that work (%q) or none that are refused (%q)", sbeWorksRe, sbeRefusedRe)
	}
	srv := testproc.StartGoblinServer(t)
	for _, m := range codeSpanRe.FindAllStringSubmatch(works[1], -1) {
		args := append([]string{"--target", srv["uds/sbe"]}, strings.Fields(m[1])...)
		if _, stderr, code := runCLI(t, nil, args...); code != 0 {
			t.Errorf("docs/cli.md says %q goes over SBE; goblin-client %q exits %d: %s", m[1], args, code, stderr)
		}
	}
	for _, m := range codeSpanRe.FindAllStringSubmatch(refused[1], -1) {
		args := append([]string{"--target", srv["uds/sbe"]}, strings.Fields(m[1])...)
		_, stderr, code := runCLI(t, nil, args...)
		if code != 2 || !strings.Contains(stderr, "command has no SBE encoding") || !strings.Contains(stderr, "Nothing was sent") {
			t.Errorf("docs/cli.md says SBE refuses %q; goblin-client %q exits %d: %s", m[1], args, code, stderr)
		}
	}
	for _, tgt := range []string{srv["uds/resp"], srv["uds/sbe"], srv["tcp/resp"], srv["tcp/sbe"]} {
		for _, p := range []string{"resp", "sbe"} {
			if stdout, stderr, code := runCLI(t, nil, "--target", tgt, "--proto", p, "ping"); code != 0 || stdout != "PONG\n" {
				t.Errorf("docs/cli.md says both protocols work against any socket listener; --proto %s to %s: exit %d, %q %q",
					p, tgt, code, stdout, stderr)
			}
		}
	}
}

var socketExprRe = regexp.MustCompile(`redis-cli -s ("\$\{XDG_RUNTIME_DIR.*/goblin\.sock")`)

// TestDocDefaultSocket: the socket path docs/server.md's redis-cli command
// computes is the one goblin-server listens on and goblin-client dials by
// default (the default target goblin-client --help shows), with and
// without XDG_RUNTIME_DIR and TMPDIR, for the test's user and, when the
// test runs as root, for an unprivileged one (nobody).
func TestDocDefaultSocket(t *testing.T) {
	m := socketExprRe.FindStringSubmatch(readDoc(t, "docs/server.md"))
	if m == nil {
		t.Fatalf("docs/server.md has no redis-cli -s \"${XDG_RUNTIME_DIR...}/goblin.sock\" command (%s)", socketExprRe)
	}
	// A copy of goblin-client any user may run.
	bin := filepath.Join(t.TempDir(), "bin")
	data, err := os.ReadFile(testproc.Build(t, "./cmd/goblin-client"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "goblin-client"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	users := [][]string{nil}
	if os.Geteuid() == 0 {
		if setpriv, err := exec.LookPath("setpriv"); err == nil {
			users = append(users, []string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"})
		}
	}
	defaultRe := regexp.MustCompile(`\(default "uds://([^"?]+)\?proto=resp"\)`)
	for _, as := range users {
		for _, env := range [][]string{{"XDG_RUNTIME_DIR=/run/user/1234"}, {"XDG_RUNTIME_DIR="}, {"XDG_RUNTIME_DIR=", "TMPDIR=/var/tmp"}} {
			run := func(args ...string) string {
				cmd := exec.Command(args[0], args[1:]...)
				if as != nil {
					cmd = exec.Command(as[0], append(as[1:], args...)...)
				}
				cmd.Env = append([]string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=/"}, env...)
				out, _ := cmd.CombinedOutput()
				return string(out)
			}
			doc := run("bash", "-c", "printf %s "+m[1])
			help := run(filepath.Join(bin, "goblin-client"), "--help")
			d := defaultRe.FindStringSubmatch(help)
			if d == nil {
				t.Fatalf("%v %v: goblin-client --help shows no default uds target:\n%s", as, env, help)
			}
			if doc != d[1] {
				t.Errorf("as %v with %v: docs/server.md's command uses the socket %q, goblin-client dials %q", as, env, doc, d[1])
			}
		}
	}
}

// TestDocAeronDirHelp: goblin-server --help's --aeron-dir and
// docs/server.md's row say that every aeron: listener, IPC or UDP, runs
// goblin's Go media driver when not given one, and a server started with
// an aeron:ipc and an aeron:udp listener and no driver= does so.
func TestDocAeronDirHelp(t *testing.T) {
	const claim = "IPC or UDP, runs goblin's Go media driver inside goblin-server"
	out, _ := exec.Command(testproc.Build(t, "./cmd/goblin-server"), "--help").CombinedOutput()
	if !strings.Contains(string(out), claim) {
		t.Errorf("goblin-server --help's --aeron-dir does not say %q:\n%s", claim, out)
	}
	if row := regexp.MustCompile("(?m)^\\| `--aeron-dir.*$").FindString(readDoc(t, "docs/server.md")); !strings.Contains(row, claim) {
		t.Errorf("docs/server.md's --aeron-dir row does not say %q: %s", claim, row)
	}
	dir := t.TempDir()
	ports := testproc.FreeUDPPorts(t, 2)
	ipc := "aeron:ipc?dir=" + filepath.Join(dir, "ipc")
	udp := fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d|control=127.0.0.1:%d|dir=%s", ports[0], ports[1], filepath.Join(dir, "udp"))
	p := testproc.Start(t, testproc.Build(t, "./cmd/goblin-server"), "--metrics", "off", "--listen", ipc, "--listen", udp)
	p.WaitLog(t, `msg=ready`, 60*time.Second)
	var aeron []string
	for _, tgt := range testproc.ListeningTargets(p.Log()) {
		if strings.HasPrefix(tgt, "aeron:") {
			aeron = append(aeron, tgt)
			if !strings.Contains(tgt, "driver=go") {
				t.Errorf("a listener given no driver= runs %s, not goblin's Go driver (driver=go)", tgt)
			}
		}
	}
	if len(aeron) != 2 {
		t.Errorf("goblin-server logged aeron listeners %q, want the IPC and the UDP one:\n%s", aeron, p.Log())
	}
}

var (
	mdLinkRe  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRe = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	slugDrop  = regexp.MustCompile(`[^\p{L}\p{N} _-]`)
)

// anchors returns the GitHub anchors of a Markdown page's headings.
func anchors(page string) map[string]bool {
	out := map[string]bool{}
	inFence := false
	for _, l := range strings.Split(page, "\n") {
		if fenceRe.MatchString(l) {
			inFence = !inFence
		}
		if m := headingRe.FindStringSubmatch(l); m != nil && !inFence {
			slug := strings.ReplaceAll(slugDrop.ReplaceAllString(strings.ToLower(m[1]), ""), " ", "-")
			a := slug
			for i := 1; out[a]; i++ {
				a = fmt.Sprintf("%s-%d", slug, i)
			}
			out[a] = true
		}
	}
	return out
}

// TestDocLinks: every relative link of README.md, docs/*.md and
// docs/results/*.md names a file that exists and, with a #fragment, a
// heading of that page; pages move (the dated results did), links must
// follow.
func TestDocLinks(t *testing.T) {
	root := testproc.Root(t)
	for _, path := range docFiles(t, root) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		for _, m := range mdLinkRe.FindAllStringSubmatch(string(data), -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(link, "#")
			target := path
			if file != "" {
				target = filepath.Join(filepath.Dir(path), file)
			}
			st, err := os.Stat(target)
			if err != nil {
				t.Errorf("%s links %s, which does not exist", rel, link)
				continue
			}
			if frag == "" || st.IsDir() {
				continue
			}
			page, err := os.ReadFile(target)
			if err != nil {
				t.Fatal(err)
			}
			if !anchors(string(page))[frag] {
				t.Errorf("%s links %s: no heading of %s has the anchor #%s", rel, link, file, frag)
			}
		}
	}
}

var (
	flagDefaultRowRe = regexp.MustCompile("(?m)^\\| `--([\\w-]+)[^|]*\\| `([^`]+)`")
	helpFlagRe       = regexp.MustCompile(`^  -([\w-]+)`)
	helpDefaultRe    = regexp.MustCompile(`\(default:? ([^()]*(?:\([^()]*\)[^()]*)*)\)`)
)

// helpDefaults returns, for each flag of a binary's --help, the text of
// its "(default ...)" remarks.
func helpDefaults(t *testing.T, bin string) map[string][]string {
	t.Helper()
	out, err := exec.Command(bin, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --help: %v\n%s", bin, err, out)
	}
	desc := map[string]string{}
	flag := ""
	for _, l := range strings.Split(string(out), "\n") {
		if m := helpFlagRe.FindStringSubmatch(l); m != nil {
			flag = m[1]
			desc[flag] = l
			continue
		}
		if flag != "" && strings.HasPrefix(l, "    \t") {
			desc[flag] += " " + strings.TrimSpace(l)
			continue
		}
		flag = ""
	}
	defaults := map[string][]string{}
	for f, d := range desc {
		for _, m := range helpDefaultRe.FindAllStringSubmatch(d, -1) {
			defaults[f] = append(defaults[f], strings.ReplaceAll(m[1], `"`, ""))
		}
	}
	return defaults
}

// TestDocFlagDefaults: where a page's flag table gives a default in code
// font and the binary's --help states one, --help's names it.
func TestDocFlagDefaults(t *testing.T) {
	root := testproc.Root(t)
	for page, pkg := range flagTables {
		t.Run(page, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(root, page))
			if err != nil {
				t.Fatal(err)
			}
			defaults := helpDefaults(t, testproc.Build(t, pkg))
			checked := 0
			for _, m := range flagDefaultRowRe.FindAllStringSubmatch(string(data), -1) {
				flag, doc := m[1], m[2]
				if strings.Contains(doc, "<") || len(defaults[flag]) == 0 {
					continue // a placeholder, or a default --help does not state
				}
				if !slices.ContainsFunc(defaults[flag], func(h string) bool { return strings.Contains(h, doc) }) {
					t.Errorf("%s gives --%s's default as %q; %s --help says (default %s)", page, flag, doc,
						filepath.Base(pkg), strings.Join(defaults[flag], "; "))
				}
				checked++
			}
			if checked < 3 {
				t.Errorf("%s: only %d defaults compared with --help: does its flag table still read | `--flag` | `default` |?", page, checked)
			}
		})
	}
}
