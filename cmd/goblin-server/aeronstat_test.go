package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron/javadriver"
	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
	"github.com/goblin-kv/goblin/server"
)

// goblinCounterRe matches one of goblin's counters in a line of Aeron's
// AeronStat ("  45:                   10 - goblin requests: aeron:ipc
// stream=1001", the value with thousands separators) or of goblin's
// aeron-stat (which adds "[type 4005] " before the label).
var goblinCounterRe = regexp.MustCompile(`^\s*\d+:\s+(-?[\d,]+) - (?:\[type\s*(\d+)\] )?goblin ([a-z ]+): aeron:ipc stream=1001$`)

// goblinCounters reads a stat tool's output: goblin's counters by name.
// With types (aeron-stat's output) it checks each counter's type id.
func goblinCounters(t *testing.T, out string, types bool) map[string]int64 {
	t.Helper()
	byName := map[string]int32{}
	for _, c := range server.AeronCounters {
		byName[c.Name] = c.TypeID
	}
	got := map[string]int64{}
	for _, line := range strings.Split(out, "\n") {
		m := goblinCounterRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		v, err := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
		if err != nil {
			t.Fatalf("value in %q: %v", line, err)
		}
		if types && m[2] != fmt.Sprint(byName[m[3]]) {
			t.Errorf("%q: type %s, want %d", line, m[2], byName[m[3]])
		}
		got[m[3]] = v
	}
	return got
}

// aeronStat runs Aeron's own io.aeron.samples.AeronStat, from the aeron-all
// jar, once against the driver in dir.
func aeronStat(t *testing.T, java, jar, dir string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append(append([]string{}, javadriver.JVMFlags...), "-Daeron.dir="+dir, "-cp", jar, "io.aeron.samples.AeronStat", "watch=false")
	out, err := exec.CommandContext(ctx, java, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("AeronStat: %v\n%s", err, out)
	}
	return string(out)
}

// goblinStat runs goblin's aeron-stat once against the driver in dir.
func goblinStat(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command(testproc.Build(t, "./aeron/cmd/aeron-stat"), "-dir", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("aeron-stat: %v\n%s", err, out)
	}
	return string(out)
}

// TestAeronStatShowsServerCounters starts goblin-server with an Aeron IPC
// listener on goblin's in-process Go driver, on the Java driver it
// supervises (driver=java) and on a Java driver it shares
// (driver=external), sends requests over it, and reads the server's own
// counters with Aeron's AeronStat and goblin's aeron-stat: every one of
// them listed with its label, the requests and keys counted. With the
// shared driver, which outlives the server, the counters are gone once
// the server stopped, and once the driver timed out a server killed with
// SIGKILL.
func TestAeronStatShowsServerCounters(t *testing.T) {
	t.Parallel()
	java, err := javadriver.FindJava()
	testkit.Require(t, "java, to run Aeron's AeronStat", err)
	jar, err := javadriver.FindJar("")
	testkit.Require(t, "the aeron-all jar, for AeronStat", err)
	for _, kind := range []string{"go", "java", "external", "external-killed"} {
		t.Run(kind, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "aeron")
			listen := "aeron:ipc?proto=resp|dir=" + dir
			switch kind {
			case "java":
				listen += "|driver=java"
			case "external", "external-killed":
				// A short client liveness timeout: the driver frees a
				// killed server's counters 2 s after its last keepalive.
				d, err := javadriver.Start(context.Background(), javadriver.Options{Dir: dir, ClientLivenessTimeout: 2 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { d.Stop() })
				listen += "|driver=external"
			}
			s := startServer(t, "--listen", listen)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			c, err := client.Dial(ctx, listen)
			if err != nil {
				t.Fatal(err)
			}
			const sets = 25
			for i := range sets {
				if err := c.Set(ctx, fmt.Sprint("k", i), []byte("v"), client.SetOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			// The server publishes every 100 ms: wait with goblin's tool,
			// which starts in no time, then ask Aeron's.
			var mine map[string]int64
			testkit.Eventually(t, 60*time.Second, "the SETs in aeron-stat's listing", func() (bool, string) {
				mine = goblinCounters(t, goblinStat(t, dir), true)
				return mine["requests"] >= sets && mine["clients"] == 1, ""
			})
			theirs := goblinCounters(t, aeronStat(t, java, jar, dir), false)
			for name, got := range map[string]map[string]int64{"aeron-stat": mine, "AeronStat": theirs} {
				for _, st := range server.AeronCounters {
					if _, ok := got[st.Name]; !ok {
						t.Errorf("%s lists no %q counter", name, st.Name)
					}
				}
				if got["requests"] < sets || got["keys"] != sets || got["clients"] != 1 || got["accepted clients"] < 1 ||
					got["received bytes"] < sets*int64(len("SETk0v")) || got["used memory bytes"] <= 0 {
					t.Errorf("%s: %v", name, got)
				}
			}
			t.Logf("AeronStat, goblin's counters: %v", theirs)
			c.Close()
			switch kind {
			case "external":
				s.p.Stop(30 * time.Second)
				if left := goblinCounters(t, goblinStat(t, dir), false); len(left) != 0 {
					t.Errorf("counters left in the driver after the server stopped: %v", left)
				}
			case "external-killed":
				if err := s.p.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				testkit.Eventually(t, 60*time.Second, "the driver to free a killed server's counters", func() (bool, string) {
					return len(goblinCounters(t, goblinStat(t, dir), false)) == 0, ""
				})
			default:
				return
			}
			if left := goblinCounters(t, aeronStat(t, java, jar, dir), false); len(left) != 0 {
				t.Errorf("AeronStat lists counters after the server stopped: %v", left)
			}
		})
	}
}
