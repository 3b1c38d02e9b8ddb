package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// CI reports whether the tests run in CI (CI=true in the environment),
// where every prerequisite must be present and a missing one fails.
func CI() bool { return os.Getenv("CI") == "true" }

// Missing stops tb because a prerequisite it needs is missing (a program,
// the Aeron jar, root for network namespaces): outside CI the test is
// skipped with the reason; under CI=true it fails with it, so CI can never
// pass while a part of the product did not run. It is the one way a test
// here gives up for want of something; Need, NeedRoot and Require are its
// shorthands.
func Missing(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if CI() {
		tb.Fatalf("missing prerequisite (CI=true: scripts/setup.sh installs it): %s", msg)
	}
	tb.Skipf("skipping, missing prerequisite: %s", msg)
}

// Need returns the path of the program name, which the test needs for
// why. When it is not installed, Missing stops the test.
func Need(tb testing.TB, name, why string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(tb, "%s is not installed (needed for %s)", name, why)
	}
	return p
}

// NeedRoot calls Missing unless the test runs as root, which it needs for
// why (network namespaces, processes as other users).
func NeedRoot(tb testing.TB, why string) {
	tb.Helper()
	if os.Geteuid() != 0 {
		Missing(tb, "root, needed for %s", why)
	}
}

// Require calls Missing when err, the result of looking for the
// prerequisite what, is not nil.
func Require(tb testing.TB, what string, err error) {
	tb.Helper()
	if err != nil {
		Missing(tb, "%s: %v", what, err)
	}
}
