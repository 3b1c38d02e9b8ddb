package testkit

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMissing runs itself as a child with a missing prerequisite: under
// CI=true the child fails saying what is missing, elsewhere it skips
// saying so.
func TestMissing(t *testing.T) {
	if os.Getenv("GOBLIN_TESTKIT_MISSING") == "1" {
		Need(t, "goblin-no-such-program", "this test")
		t.Fatal("Need returned for a missing program")
	}
	for _, c := range []struct {
		ci   string
		fail bool
		want string
	}{
		{"true", true, "--- FAIL"},
		{"", false, "--- SKIP"},
		{"false", false, "--- SKIP"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMissing$", "-test.v")
		cmd.Env = append(os.Environ(), "GOBLIN_TESTKIT_MISSING=1", "CI="+c.ci)
		out, err := cmd.CombinedOutput()
		if (err != nil) != c.fail || !strings.Contains(string(out), c.want) ||
			!strings.Contains(string(out), "goblin-no-such-program is not installed (needed for this test)") {
			t.Errorf("CI=%q: err %v, want failure %v and %q naming the program:\n%s", c.ci, err, c.fail, c.want, out)
		}
	}
}
