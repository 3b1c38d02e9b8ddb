package remote

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/benchmarks/harness/internal/sshlab"
)

// Staging over real ssh: the files land on both hosts, each host's
// sha256sum agrees with the build, and a copy that differs on one host
// refuses the run, naming the host and the file.
func TestStageHashesFromBothHosts(t *testing.T) {
	t.Parallel() // its own namespaces, sshds and processes; mostly waits on them
	lab := sshlab.New(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	src := t.TempDir()
	a, b := filepath.Join(src, "goblin-server"), filepath.Join(src, "aeronmd")
	os.WriteFile(a, []byte("pretend server build\n"), 0o755)
	os.WriteFile(b, []byte("pretend driver build\n"), 0o755)
	base := t.TempDir()
	roots := map[string]string{"server": filepath.Join(base, "srv"), "client": filepath.Join(base, "cli")}
	opts := HostsOptions{SSH: lab.SSH(), Server: lab.Server, Client: lab.Client,
		Files: []StageFile{{Tool: "goblin-server", Local: a}, {Tool: "aeronmd", Local: b}}}
	rec := t.TempDir()
	// One master connection per host carries every command, as a run's do.
	ms, mc := startMaster(ctx, lab.SSH(), lab.Server), startMaster(ctx, lab.SSH(), lab.Client)
	defer ms.close()
	defer mc.close()
	if ms.cmd == nil || mc.cmd == nil {
		t.Fatal("no ssh master connection")
	}
	sshs := map[string]SSH{"server": ms.ssh, "client": mc.ssh}
	rep, err := Stage(ctx, opts, sshs, roots, rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"server", "client"} {
		got := parseSums(rep.Seen[role], rep.Dirs[role])
		for _, f := range rep.Files {
			if got[f.Name] != f.SHA256 {
				t.Errorf("%s host sees %s with hash %q, the build has %s", role, f.Name, got[f.Name], f.SHA256)
			}
		}
		if _, err := os.Stat(filepath.Join(rec, "SHA256SUMS."+role)); err != nil {
			t.Error(err)
		}
	}
	if rep.Dirs["server"] == rep.Dirs["client"] {
		t.Fatalf("both hosts staged into %s", rep.Dirs["server"])
	}

	// One byte changes on the client host: the run is refused.
	staged := filepath.Join(rep.Dirs["client"], "aeronmd")
	os.WriteFile(staged, []byte("pretend driver build!\n"), 0o755)
	opts.StageNoCopy = true
	_, err = Stage(ctx, opts, sshs, roots, rec)
	if !errors.Is(err, ErrStaged) || !strings.Contains(err.Error(), "client host") || !strings.Contains(err.Error(), "aeronmd") {
		t.Fatalf("a changed staged file on the client host gave %v, want ErrStaged naming the client host and aeronmd", err)
	}
	if strings.Contains(err.Error(), "server host") {
		t.Errorf("the server host's copies are fine, but: %v", err)
	}
	// A shared prefix is written once and seen by both.
	opts.StageDir, opts.StageShared, opts.StageNoCopy = filepath.Join(base, "shared"), true, false
	rep, err = Stage(ctx, opts, sshs, roots, rec)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Dirs["server"] != opts.StageDir || rep.Dirs["client"] != opts.StageDir {
		t.Errorf("shared staging used %v", rep.Dirs)
	}
	ms.close()
	mc.close()
	if s := lab.SettledStrangers(); len(s) > 0 {
		t.Errorf("left running: %v", s)
	}
	lab.Close()
	lab.Gone(t)
}
