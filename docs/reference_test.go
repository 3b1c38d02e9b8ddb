package docs_test

import (
	"fmt"
	"io"
	"net/http"
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
	"github.com/goblin-kv/goblin/server"
)

// flagTables are the pages whose flag table documents a binary.
var flagTables = map[string]string{
	"docs/cli.md":    "./cmd/goblin-client",
	"docs/server.md": "./cmd/goblin-server",
}

var flagRowRe = regexp.MustCompile("(?m)^\\| `--?([\\w-]+)") // --flag, or -x, -n, -3 as redis-cli spells them

// TestDocFlagTables: a page's flag table and its binary's --help name the
// same flags.
func TestDocFlagTables(t *testing.T) {
	root := testproc.Root(t)
	for page, pkg := range flagTables {
		t.Run(page, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(root, page))
			if err != nil {
				t.Fatal(err)
			}
			var documented []string
			for _, m := range flagRowRe.FindAllStringSubmatch(string(data), -1) {
				documented = append(documented, m[1])
			}
			help := helpText(t, testproc.Build(t, pkg))
			bin := filepath.Base(pkg)
			for _, f := range documented {
				if f != "help" && !slices.Contains(help, f) {
					t.Errorf("%s documents --%s, which %s --help does not list", page, f, bin)
				}
			}
			for _, f := range help {
				if !slices.Contains(documented, f) {
					t.Errorf("%s --help lists -%s, which %s's flag table does not document", bin, f, page)
				}
			}
		})
	}
}

var (
	seriesRowRe    = regexp.MustCompile("(?m)^\\| (`goblin_.*?) \\|")
	seriesNameRe   = regexp.MustCompile("`(goblin_\\w+)")
	scrapedRe      = regexp.MustCompile(`(?m)^(goblin_\w+)(\{[^}]*\})? `)
	transportLblRe = regexp.MustCompile(`transport="([^"]+)"`)
)

// TestDocMetrics scrapes the server make run starts, after a request on
// each of its transports, and compares the series with docs/metrics.md's
// table: every series documented, every documented series served, every
// transport label named.
func TestDocMetrics(t *testing.T) {
	root := testproc.Root(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, row := range seriesRowRe.FindAllStringSubmatch(string(doc), -1) {
		for _, m := range seriesNameRe.FindAllStringSubmatch(row[1], -1) {
			documented = append(documented, m[1])
		}
	}
	if len(documented) < 10 {
		t.Fatalf("docs/metrics.md's table names only %q", documented)
	}

	r := newRunner(t, root)
	for _, tgt := range []string{"", "tcp://127.0.0.1:6380", "ring:///dev/shm/goblin", "aeron:ipc"} {
		args := "goblin-client ping"
		if tgt != "" {
			args = "goblin-client --target '" + tgt + "' ping"
		}
		r.sh(command{where: "TestDocMetrics", text: args}, r.env.rewrite(args))
	}

	// The loop publishes every 100 ms: wait for the PINGs to show, each
	// counted under its transport.
	var page string
	pinged := func(transport string) bool {
		return regexp.MustCompile(`goblin_requests_total\{command="ping",protocol="\w+",transport="` + transport + `"\} 1\n`).
			MatchString(page)
	}
	err = testkit.Poll(30*time.Second, "a PING counted under every transport", func() (bool, string) {
		page = scrape(t, "http://127.0.0.1:"+r.shared.metrics+"/metrics")
		return pinged("uds") && pinged("tcp") && pinged("ring") && pinged("aeron-ipc"), ""
	})
	for _, tr := range []string{"uds", "tcp", "ring", "aeron-ipc"} {
		if !pinged(tr) {
			t.Errorf("no PING counted under transport=%q after one on it (%v)", tr, err)
		}
	}
	var served []string
	for _, m := range scrapedRe.FindAllStringSubmatch(page, -1) {
		if !slices.Contains(served, m[1]) {
			served = append(served, m[1])
		}
		if lbl := transportLblRe.FindStringSubmatch(m[2]); lbl != nil && !strings.Contains(string(doc), "`"+lbl[1]+"`") {
			t.Errorf("the server labels series transport=%q, which docs/metrics.md does not name", lbl[1])
		}
	}
	for _, s := range served {
		if !slices.Contains(documented, s) {
			t.Errorf("the server exports %s, which docs/metrics.md's table does not document", s)
		}
	}
	for _, s := range documented {
		if !slices.Contains(served, s) {
			t.Errorf("docs/metrics.md documents %s, which the server does not export", s)
		}
	}
}

var aeronCounterRowRe = regexp.MustCompile("(?m)^\\| (\\d+) \\| `goblin ([a-z ]+): …` \\|")

// TestDocAeronCounters: docs/metrics.md's table of the server's Aeron
// counters names every one of server.AeronCounters, with its type id, in
// order, and no other.
func TestDocAeronCounters(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(testproc.Root(t), "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	var documented, served []string
	for _, m := range aeronCounterRowRe.FindAllStringSubmatch(string(doc), -1) {
		documented = append(documented, m[1]+" "+m[2])
	}
	for _, c := range server.AeronCounters {
		served = append(served, fmt.Sprint(c.TypeID, " ", c.Name))
	}
	if !slices.Equal(documented, served) {
		t.Errorf("docs/metrics.md's Aeron counters:\n  %q\nthe server's (server.AeronCounters):\n  %q", documented, served)
	}
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", url, resp.Status, err)
	}
	return string(b)
}

var layoutRowRe = regexp.MustCompile("(?m)^\\| (`[^|]*) \\|")

// TestDocPackageTables: the paths the layout tables of README.md and
// docs/architecture.md name exist, and architecture.md's table covers
// every package of the module (itself or a directory above it).
func TestDocPackageTables(t *testing.T) {
	root := testproc.Root(t)
	var covered []string
	for _, page := range []string{"README.md", "docs/architecture.md"} {
		data, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range layoutRowRe.FindAllStringSubmatch(string(data), -1) {
			for _, m := range regexp.MustCompile("`([\\w./-]+)`").FindAllStringSubmatch(row[1], -1) {
				p := strings.TrimSuffix(m[1], "/")
				if !strings.HasSuffix(m[1], "/") && !strings.Contains(p, "/") {
					if st, err := os.Stat(filepath.Join(root, p)); err != nil || !st.IsDir() {
						continue // a word in code font, not a path
					}
				}
				if _, err := os.Stat(filepath.Join(root, p)); err != nil {
					t.Errorf("%s's table names %s, which does not exist", page, m[1])
				}
				if page == "docs/architecture.md" {
					covered = append(covered, p)
				}
			}
		}
	}
	list := exec.Command(goTool(), "list", "-f", "{{.Dir}}", "./...")
	list.Dir = root
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dir := range strings.Fields(string(out)) {
		rel, _ := filepath.Rel(root, dir)
		if strings.Contains(rel, "/internal/") || strings.Contains(rel, "/cmd/") || strings.HasSuffix(rel, "/goblinsbe") {
			continue // a package's own parts: its doc covers them
		}
		if !slices.ContainsFunc(covered, func(c string) bool { return rel == c || strings.HasPrefix(rel, c+"/") }) {
			t.Errorf("package %s is not in docs/architecture.md's package table", rel)
		}
	}
}
