package testproc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestBuildCacheBuildsOncePerSource builds a small module's program from
// several goroutines at once, as the test binaries of a `go test ./...`
// run do from several processes, through a go wrapper that counts the
// builds: one build for all of them, and a new one once a source changes.
func TestBuildCacheBuildsOncePerSource(t *testing.T) {
	goPath, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(cacheEnv, t.TempDir())
	work := t.TempDir()
	count := filepath.Join(work, "builds")
	wrapper := filepath.Join(work, "go")
	script := "#!/bin/sh\n[ \"$1\" = build ] && echo x >> '" + count + "'\nexec '" + goPath + "' \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(work, "mod")
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(mod, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mod, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	write("msg/msg.go", "package msg\n\nconst Text = \"one\"\n")
	write("hello/main.go", "package main\n\nimport \"example.com/m/msg\"\n\nfunc main() { println(msg.Text) }\n")
	builds := func() int {
		b, _ := os.ReadFile(count)
		return strings.Count(string(b), "x")
	}
	run := func(bin string) string {
		out, err := exec.Command(bin).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", bin, err, out)
		}
		return strings.TrimSpace(string(out))
	}

	var wg sync.WaitGroup
	bins := make([]string, 4)
	errs := make([]error, 4)
	for i := range bins {
		wg.Go(func() { bins[i], errs[i] = buildCached(wrapper, mod, "./hello", nil) })
	}
	wg.Wait()
	for i := range bins {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if bins[i] != bins[0] {
			t.Fatalf("builds gave %q and %q for the same sources", bins[0], bins[i])
		}
	}
	if n := builds(); n != 1 {
		t.Fatalf("%d builds for four requests of the same sources, want 1", n)
	}
	if got := run(bins[0]); got != "one" {
		t.Fatalf("the binary says %q, want one", got)
	}

	// A change in an imported package of the module is a new binary.
	write("msg/msg.go", "package msg\n\nconst Text = \"two\"\n")
	bin, err := buildCached(wrapper, mod, "./hello", nil)
	if err != nil {
		t.Fatal(err)
	}
	if bin == bins[0] || builds() != 2 {
		t.Fatalf("after an edit: %q (was %q), %d builds; want a new binary from a second build", bin, bins[0], builds())
	}
	if got := run(bin); got != "two" {
		t.Fatalf("the rebuilt binary says %q, want two", got)
	}
	// Other build flags (-race) are another binary too.
	plain, err1 := sourceKey(wrapper, mod, "./hello", nil)
	race, err2 := sourceKey(wrapper, mod, "./hello", []string{"-race"})
	if err1 != nil || err2 != nil || plain == race {
		t.Fatalf("keys %q (%v) and with -race %q (%v); want two keys", plain, err1, race, err2)
	}
}

// TestBuildPutsBinariesSideBySide: the binaries one test binary builds sit
// in one directory, as tests that run one beside another (the docs' make
// run BIN=) expect, although each lives in its own cache entry.
func TestBuildPutsBinariesSideBySide(t *testing.T) {
	hello := Build(t, "./internal/testkit/testproc/testdata/hello")
	beside := Build(t, "./internal/testkit/testproc/testdata/beside")
	if filepath.Dir(hello) != filepath.Dir(beside) {
		t.Fatalf("Build put hello in %s and beside in %s, want one directory", filepath.Dir(hello), filepath.Dir(beside))
	}
	if out, err := exec.Command(filepath.Join(filepath.Dir(hello), "beside")).Output(); err != nil || strings.TrimSpace(string(out)) != "beside" {
		t.Fatalf("running beside from hello's directory: %q, %v", out, err)
	}
}
