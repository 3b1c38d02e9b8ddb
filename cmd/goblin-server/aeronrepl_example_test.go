package main

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// docBlocks returns the shell blocks of the section of doc that starts
// with heading, up to the next heading of its level.
func docBlocks(t *testing.T, doc, heading string) [][]string {
	t.Helper()
	f, err := os.Open(doc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks [][]string
	var in, inBlock bool
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == heading:
			in = true
		case in && !inBlock && strings.HasPrefix(line, "## "):
			return blocks
		case in && line == "```sh":
			inBlock = true
			blocks = append(blocks, nil)
		case in && line == "```":
			inBlock = false
		case inBlock:
			blocks[len(blocks)-1] = append(blocks[len(blocks)-1], line)
		}
	}
	return blocks
}

// joinContinued joins the lines a trailing backslash continues.
func joinContinued(lines []string) []string {
	var out []string
	cur := ""
	for _, l := range lines {
		if strings.HasSuffix(l, "\\") {
			cur += strings.TrimSuffix(l, "\\")
			continue
		}
		out = append(out, cur+l)
		cur = ""
	}
	return out
}

// TestAeronTwoHostExample runs docs/replication-aeron.md's worked
// two-host example as written: two network namespaces on one bridged LAN
// stand for hosts A and B (their addresses in place of 10.0.0.1 and
// 10.0.0.2, a temporary ring directory in place of /dev/shm/goblin), the
// goblin-server commands of a channel block (multicast, then MDC) run in
// their host's namespace, then every redis-cli command of the checks block
// runs in host B's until it answers what its comment says; and a GET over
// host B's ring returns the value written on A.
func TestAeronTwoHostExample(t *testing.T) {
	t.Parallel() // its own namespaces, processes and directories; it times nothing
	blocks := docBlocks(t, "../../docs/replication-aeron.md", "## A worked example: two hosts")
	if len(blocks) != 3 {
		t.Fatalf("docs/replication-aeron.md's worked example has %d shell blocks, want 3 (multicast, MDC, checks)", len(blocks))
	}
	cli := testkit.Need(t, "redis-cli", "the example's checks")
	for i, name := range []string{"multicast", "mdc"} {
		t.Run(name, func(t *testing.T) { runTwoHostExample(t, cli, blocks[i], blocks[2]) })
	}
}

func runTwoHostExample(t *testing.T, cli string, servers, checks []string) {
	a := newAeronLAN(t, 1, nil)
	ring := filepath.Join(t.TempDir(), "ring")
	if filepath.Base(a.bin) != "goblin-server" {
		t.Fatalf("the built binary is %s: the block's goblin-server would not find it", a.bin)
	}
	bin := filepath.Dir(a.bin)
	subst := strings.NewReplacer("10.0.0.1", a.lan.Addr[0].String(), "10.0.0.2", a.lan.Addr[1].String(), "/dev/shm/goblin", ring)
	host := -1
	started := 0
	for _, line := range joinContinued(servers) {
		switch {
		case line == "# host A":
			host = 0
		case line == "# host B":
			host = 1
		case strings.HasPrefix(line, "goblin-server "):
			if host < 0 {
				t.Fatalf("%q comes before a # host line", line)
			}
			cmd := a.lan.Command(host, "sh", "-c", "exec "+subst.Replace(line))
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
			p, err := testproc.StartCmd(cmd)
			if err != nil {
				t.Fatal(err)
			}
			h := host
			t.Cleanup(func() {
				p.Stop(10 * time.Second)
				if t.Failed() {
					log := p.Log()
					if len(log) > 4000 {
						log = "…" + log[len(log)-4000:]
					}
					t.Logf("log of host %d's goblin-server:\n%s", h, log)
				}
			})
			p.WaitLog(t, `msg=ready`, startTimeout)
			started++
		default:
			t.Fatalf("a line the test cannot run in the servers' block: %q", line)
		}
	}
	if started != 2 {
		t.Fatalf("the block started %d servers, want 2", started)
	}

	for _, line := range joinContinued(checks) {
		cmdline, want, ok := strings.Cut(line, "#")
		if !strings.HasPrefix(line, "redis-cli ") || !ok {
			t.Fatalf("a check without its answer after #: %q", line)
		}
		cmdline, want = subst.Replace(strings.TrimSpace(cmdline)), strings.TrimSpace(want)
		cmdline = strings.Replace(cmdline, "redis-cli", cli, 1)
		testkit.Eventually(t, 30*time.Second, "host B's `"+cmdline+"` to answer "+want, func() (bool, string) {
			out, err := a.lan.Command(1, "sh", "-c", cmdline).CombinedOutput()
			got := strings.TrimSpace(strings.ReplaceAll(string(out), "\r", ""))
			return err == nil && got == want, got
		})
	}

	c, err := client.Dial(context.Background(), "ring://"+ring+"?proto=sbe")
	if err != nil {
		t.Fatalf("dialling host B's ring: %v", err)
	}
	defer c.Close()
	if v, err := c.GetAppend(context.Background(), nil, "greeting"); err != nil || string(v) != "hello" {
		t.Errorf("GET greeting over host B's ring: %q %v, want hello", v, err)
	}
}
