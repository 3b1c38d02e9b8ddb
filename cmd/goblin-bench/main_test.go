package main

import (
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
		os.Exit(run())
	}
	os.Exit(m.Run())
}

// TestHelpShowsNoPlaceholderDefaults: the CPU-list overrides, which an
// empty value sets to "no pinning", are unset by default, and -h says nothing about a
// default for them (it printed the sentinel `(default "\x00")`).
func TestHelpShowsNoPlaceholderDefaults(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-h")
	cmd.Env = append(os.Environ(), asMainEnv+"=1")
	out, _ := cmd.CombinedOutput() // -h exits 0 after printing the usage
	help := string(out)
	if !strings.Contains(help, "usage: goblin-bench") {
		t.Fatalf("goblin-bench -h printed no usage:\n%s", help)
	}
	if strings.Contains(help, `\x00`) || strings.Contains(help, "\x00") {
		t.Errorf("goblin-bench -h shows a NUL placeholder:\n%s", help)
	}
	lines := strings.Split(help, "\n")
	for _, name := range []string{"server-cpu", "client-cpu", "driver-cpu", "server-agents", "client-agents", "housekeeping-cpu"} {
		found := false
		for i, l := range lines {
			if !strings.HasPrefix(strings.TrimSpace(l), "-"+name+" ") {
				continue
			}
			found = true
			if i+1 < len(lines) && strings.Contains(lines[i+1], "(default") {
				t.Errorf("-%s shows a default: %s", name, strings.TrimSpace(lines[i+1]))
			}
		}
		if !found {
			t.Errorf("-h lists no -%s", name)
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
