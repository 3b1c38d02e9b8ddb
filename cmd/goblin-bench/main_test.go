package main

import (
	"flag"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// asMainEnv makes the test binary run goblin-bench's main instead of the
// tests, so a test can run the command as a user would.
const asMainEnv = "GOBLIN_BENCH_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) != "" {
		os.Exit(run(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// bench runs goblin-bench with args and returns its exit code, standard
// output and standard error.
func bench(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asMainEnv+"=1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("goblin-bench %q: %v", args, err)
	}
	return code, stdout.String(), stderr.String()
}

// TestHelpShowsNoPlaceholderDefaults: the CPU-list overrides, which an
// empty value sets to "no pinning", are unset by default, and -h says nothing about a
// default for them (it printed the sentinel `(default "\x00")`).
func TestHelpShowsNoPlaceholderDefaults(t *testing.T) {
	for _, name := range []string{"matrix", "remote"} {
		_, help, _ := bench(t, name, "-h") // -h exits 0 after printing the usage
		if !strings.Contains(help, "usage: goblin-bench "+name) {
			t.Fatalf("goblin-bench %s -h printed no usage:\n%s", name, help)
		}
		if strings.Contains(help, `\x00`) || strings.Contains(help, "\x00") {
			t.Errorf("goblin-bench %s -h shows a NUL placeholder:\n%s", name, help)
		}
		lines := strings.Split(help, "\n")
		for _, flag := range []string{"server-cpu", "client-cpu", "driver-cpu", "server-agents", "client-agents", "housekeeping-cpu"} {
			found := false
			for i, l := range lines {
				if !strings.HasPrefix(strings.TrimSpace(l), "-"+flag+" ") {
					continue
				}
				found = true
				if i+1 < len(lines) && strings.Contains(lines[i+1], "(default") {
					t.Errorf("%s -%s shows a default: %s", name, flag, strings.TrimSpace(lines[i+1]))
				}
			}
			if !found {
				t.Errorf("goblin-bench %s -h lists no -%s", name, flag)
			}
		}
	}
}

// TestCPUListFlagTellsEmptyFromUnset: an empty -server-cpu (no pinning) is a
// setting, distinct from leaving the flag out (the profile's list).
func TestCPUListFlagTellsEmptyFromUnset(t *testing.T) {
	var unset, empty cpuListFlag
	if err := empty.Set(""); err != nil {
		t.Fatal(err)
	}
	if unset.set || !empty.set || empty.value != "" {
		t.Fatalf("unset %+v, set to '' %+v", unset, empty)
	}
}

// TestHelpSaysWhatEachCommandMeasures: `goblin-bench help` lists every
// command a user runs, and `help CMD` and `CMD --help` both print the
// command's usage line, what it measures and its flags, exiting 0.
func TestHelpSaysWhatEachCommandMeasures(t *testing.T) {
	code, list, _ := bench(t, "help")
	if code != 0 {
		t.Fatalf("goblin-bench help exited %d", code)
	}
	for _, c := range commands {
		if !strings.Contains(list, "  "+c.name+" ") {
			t.Errorf("goblin-bench help does not list %s:\n%s", c.name, list)
		}
		for _, args := range [][]string{{"help", c.name}, {c.name, "--help"}} {
			code, out, errOut := bench(t, args...)
			if code != 0 {
				t.Errorf("goblin-bench %q exited %d: %s", args, code, errOut)
			}
			if !strings.HasPrefix(out, "usage: goblin-bench "+c.name) || !strings.Contains(out, firstLine(c.about)) {
				t.Errorf("goblin-bench %q does not say what %s measures:\n%s", args, c.name, out)
			}
			fs, _ := c.flagSet()
			fs.VisitAll(func(f *flag.Flag) {
				if !strings.Contains(out, "  -"+f.Name) {
					t.Errorf("goblin-bench %q does not list -%s", args, f.Name)
				}
			})
		}
	}
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

// TestUsageErrorsSayWhatToDo: an unknown command, the old flag-first form,
// a flag of another command and a missing argument each exit 2 with a
// message that names the way out.
func TestUsageErrorsSayWhatToDo(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"usage: goblin-bench <command>", "matrix", "remote", "cluster"}},
		{[]string{"bogus"}, []string{`unknown command "bogus"`, "matrix, remote, cluster, tails, aeron-stat, help"}},
		{[]string{"help", "bogus"}, []string{`unknown command "bogus"`}},
		{[]string{"-out", "/tmp/x"}, []string{"-out: the command comes first", "goblin-bench matrix -out"}},
		{[]string{"matrix", "-hosts", "a:b"}, []string{"matrix: flag provided but not defined: -hosts", "-hosts is a flag of goblin-bench remote"}},
		{[]string{"remote", "-server-netns", "ns"}, []string{"-server-netns is a flag of goblin-bench matrix"}},
		{[]string{"matrix", "-cluster", "3"}, []string{"not defined: -cluster", "goblin-bench matrix -h"}},
		{[]string{"cluster", "-runs", "3"}, []string{"-runs is a flag of goblin-bench matrix, goblin-bench remote"}},
		{[]string{"matrix", "extra"}, []string{`matrix takes no arguments after its flags; got ["extra"]`}},
		{[]string{"tails", "-kernel-trace", "t"}, []string{"tails takes TIMELINE.csv... after its flags"}},
		{[]string{"aeron-stat", "/dev/shm/x", "-watch", "1s"}, []string{"flags go before the arguments"}},
		{[]string{"cluster"}, []string{"cluster needs -nodes N"}},
		{[]string{"remote"}, []string{"remote needs -hosts SERVER:CLIENT"}},
	} {
		code, _, errOut := bench(t, tc.args...)
		if code != 2 {
			t.Errorf("goblin-bench %q exited %d, want 2: %s", tc.args, code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("goblin-bench %q: stderr does not say %q:\n%s", tc.args, w, errOut)
			}
		}
	}
}

// TestEveryOldFlagHasAHome: every flag of the single command goblin-bench
// was before it had subcommands is a flag of the command that now does
// that job (renamed where the command's name says it already), so no
// setting was lost in the split.
func TestEveryOldFlagHasAHome(t *testing.T) {
	matrix := "profile server-idle client-wait driver-idle systems transports protocols ops list quiet paths driver aeronmd " +
		"qualify stats-cmd server-cpu client-cpu driver-cpu server-agents client-agents housekeeping-cpu driver-env out runs " +
		"warmup samples value-size keys depth goblin-server redis-server java aeron-jar timeline client server-host " +
		"client-host control-host run-id case-timeout"
	homes := map[string][]string{
		"matrix":     strings.Fields(matrix + " server-netns"),
		"remote":     strings.Fields(matrix + " hosts ssh remote-dir stage-dir stage-shared stage-no-copy"),
		"cluster":    strings.Fields("nodes clients pipeline duration keys value-size server-idle goblin-server quiet"), // -cluster N, -cluster-*
		"tails":      strings.Fields("kernel-trace procs"),                                                              // -tails FILES, -tail-procs
		"aeron-stat": strings.Fields("watch"),                                                                           // -aeron-stat DIR
		"agent":      strings.Fields("role"),                                                                            // -agent ROOT, -agent-role
		"aeron-pong": strings.Fields("ping-channel pong-channel"),                                                       // -aeron-pong DIR
	}
	for name, flags := range homes {
		c := lookup(name)
		if c == nil {
			t.Errorf("no command %s", name)
			continue
		}
		fs, _ := c.flagSet()
		for _, f := range flags {
			if fs.Lookup(f) == nil {
				t.Errorf("goblin-bench %s has no -%s", name, f)
			}
		}
	}
}
