package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/benchmarks/harness"
)

// launcherTree copies the launchers into a scratch checkout whose
// scripts/setup.sh only records that it ran, and returns the checkout and
// a PATH whose `go` writes stand-in binaries: goblin-bench records its
// arguments in bench-args. With failGo set `go` fails instead, which stops
// a launcher just after its setup step.
func launcherTree(t *testing.T, failGo bool) (root, path string) {
	t.Helper()
	root = t.TempDir()
	src := harness.RepoRoot()
	for _, f := range []string{"benchmarks/local_transport_latency.sh", "benchmarks/aeron_network_latency.sh",
		"benchmarks/knobs.sh", "scripts/aeron.version"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeScript(t, filepath.Join(root, "scripts", "setup.sh"), `touch "$(dirname "$0")/../setup-ran"`)
	stub := t.TempDir()
	goScript := `exit 3`
	if !failGo {
		// go build -o BIN PKG: BIN records its arguments.
		goScript = `out=$3
printf '#!/bin/sh\nprintf "%%s\\n" "$@" > "` + root + `/bench-args"\n' > "$out"
chmod +x "$out"`
	}
	writeScript(t, filepath.Join(stub, "go"), goScript)
	return root, stub + string(os.PathListSeparator) + os.Getenv("PATH")
}

func writeScript(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// runIn runs a launcher of the scratch checkout with the prerequisites
// pointed at paths that do not exist.
func runIn(t *testing.T, root, path, launcher string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{filepath.Join(root, "benchmarks", launcher)}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+path, "REDIS_SERVER=/nonexistent/redis-server", "JAVA=/nonexistent/java",
		"MAVEN_REPO="+filepath.Join(root, "m2"), "OUT_DIR="+filepath.Join(root, "out"), "HOSTS=", "PATHS=", "SKIP_SETUP=")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestLaunchersRunSetupOnlyWithFlag: the benchmark launchers run
// scripts/setup.sh (which as root installs packages, adds a system user
// and stops the system redis-server) only when given --setup; without it
// they install nothing and name what is missing, and --setup never
// reaches goblin-bench.
func TestLaunchersRunSetupOnlyWithFlag(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("bash is needed to run the launchers")
	}
	root, path := launcherTree(t, false)
	out, err := runIn(t, root, path, "local_transport_latency.sh", "-quiet")
	if err != nil {
		t.Fatalf("local launcher: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(root, "setup-ran")); err == nil {
		t.Errorf("local launcher ran scripts/setup.sh without --setup:\n%s", out)
	}
	for _, want := range []string{"missing on this machine", "redis-server (looked for /nonexistent/redis-server)",
		"java (looked for /nonexistent/java)", "io.aeron:aeron-all", "--setup"} {
		if !strings.Contains(out, want) {
			t.Errorf("without --setup the local launcher does not say %q:\n%s", want, out)
		}
	}
	benchArgs, err := os.ReadFile(filepath.Join(root, "bench-args"))
	if err != nil {
		t.Fatalf("goblin-bench did not run: %v\n%s", err, out)
	}
	if !strings.Contains(string(benchArgs), "-quiet\n") {
		t.Errorf("goblin-bench did not get the launcher's extra argument: %q", benchArgs)
	}
	if !strings.HasPrefix(string(benchArgs), "matrix\n") {
		t.Errorf("the local launcher does not run goblin-bench matrix: %q", benchArgs)
	}

	out, err = runIn(t, root, path, "local_transport_latency.sh", "--setup", "-quiet")
	if err != nil {
		t.Fatalf("local launcher --setup: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(root, "setup-ran")); err != nil {
		t.Errorf("local launcher --setup did not run scripts/setup.sh:\n%s", out)
	}
	if benchArgs, _ := os.ReadFile(filepath.Join(root, "bench-args")); strings.Contains(string(benchArgs), "--setup") {
		t.Errorf("--setup reached goblin-bench: %q", benchArgs)
	}

	// The network launcher stops before its setup step unless it runs as
	// root with ip(8); a failing `go` stops it right after.
	if _, err := exec.LookPath("ip"); err != nil || os.Geteuid() != 0 {
		return
	}
	root, path = launcherTree(t, true)
	out, _ = runIn(t, root, path, "aeron_network_latency.sh")
	if _, err := os.Stat(filepath.Join(root, "setup-ran")); err == nil {
		t.Errorf("network launcher ran scripts/setup.sh without --setup:\n%s", out)
	}
	if !strings.Contains(out, "missing on this machine") {
		t.Errorf("without --setup the network launcher does not say what is missing:\n%s", out)
	}
	out, _ = runIn(t, root, path, "aeron_network_latency.sh", "--setup")
	if _, err := os.Stat(filepath.Join(root, "setup-ran")); err != nil {
		t.Errorf("network launcher --setup did not run scripts/setup.sh:\n%s", out)
	}
}

// TestBenchResultsIgnoredByGit: the launchers' and goblin-bench's default
// output directory is not something git offers to commit.
func TestBenchResultsIgnoredByGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed to check .gitignore")
	}
	for _, p := range []string{"bench-results/local-20260101T000000Z/summary.md", "benchmarks/bench-results/latency.csv"} {
		if err := exec.Command("git", "-C", harness.RepoRoot(), "check-ignore", "-q", "--no-index", p).Run(); err != nil {
			t.Errorf("git does not ignore %s (%v): add bench-results/ to .gitignore", p, err)
		}
	}
}
