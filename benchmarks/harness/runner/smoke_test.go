package runner

import (
	"context"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/benchmarks/harness"
	"github.com/goblin-kv/goblin/benchmarks/harness/report"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// buildGoblinServer builds cmd/goblin-server (once for the whole test run:
// testproc.Build). A checkout whose goblin-server does not build fails the
// test: the goblin cases must never pass as "unavailable" because the
// server is broken.
func buildGoblinServer(t *testing.T) string {
	t.Helper()
	return testproc.Build(t, "./cmd/goblin-server")
}

// children lists this process's live child processes.
func children(t *testing.T) []string {
	t.Helper()
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	var out []string
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		out = append(out, strings.Fields(string(b))...)
	}
	return out
}

// TestSmokeMatrix runs a tiny matrix end to end (1,000 samples, one run)
// with whatever this build and machine have, then checks that the archive
// is complete and well formed and that no server is left running.
func TestSmokeMatrix(t *testing.T) {
	cfg := harness.DefaultConfig()
	cfg.OutDir = filepath.Join(t.TempDir(), "run")
	cfg.Runs, cfg.Warmup, cfg.Samples = 1, 200, 1000
	cfg.Profile = harness.Profiles(2)["backoff"] // tests must not hog the shared cores
	cfg.GoblinServer = buildGoblinServer(t)
	cfg.Systems = []string{harness.SysGoblin, harness.SysRedis, harness.SysShmFloor}
	cfg.Transports = []string{harness.TRing, harness.TUDS, harness.TTCP}
	if !testing.Short() {
		cfg.Systems = append(cfg.Systems, harness.SysAeronRaw)
		cfg.Transports = append(cfg.Transports, harness.TAeronIPC)
	}
	cfg.CaseTimeout = 3 * time.Minute
	progress := &syncWriter{w: new(strings.Builder)}
	cfg.Progress = progress
	cfg.Command = "go test (smoke)"
	// Other runs may be under way on this machine: this run's ring
	// directories carry its own id, and only those are checked for.
	cfg.RunID = NewRunID() + "-smoke"

	rep, err := Run(context.Background(), cfg, DefaultProviders())
	if err != nil {
		t.Fatal(err)
	}
	if kids := children(t); len(kids) > 0 {
		t.Errorf("processes left running after Run: %v", kids)
	}
	if m, _ := filepath.Glob("/dev/shm/" + RingDirPrefix(cfg.RunID) + "*"); len(m) > 0 {
		t.Errorf("ring directories left behind: %v", m)
	}
	plan := Plan(&cfg, DefaultProviders())
	wantRows := 0
	for _, pc := range plan {
		wantRows += len(pc.c.Ops)
	}
	measured := 0
	for _, c := range rep.Cases {
		t.Logf("%-28s %s %s", c.Case.Label(), c.Status, c.Note)
		switch c.Status {
		case harness.StatusOK:
			measured++
		case harness.StatusFailed:
			t.Errorf("case %s failed: %s", c.Case.Label(), c.Note)
		case harness.StatusUnavailable:
			if testkit.CI() {
				t.Errorf("CI=true: case %s is unavailable: %s", c.Case.Label(), c.Note)
			}
			if !strings.Contains(c.Note, harness.ErrUnavailable.Error()) {
				t.Errorf("unavailable case %s does not say so: %q", c.Case.Label(), c.Note)
			}
		}
	}
	if measured == 0 {
		t.Fatal("no case was measured (the shared-memory floor at least always runs)")
	}

	dir := cfg.OutDir
	lat := readCSV(t, filepath.Join(dir, report.LatencyCSV), report.LatencyHeader, wantRows*cfg.Runs)
	checkRows(t, report.LatencyCSV, lat, report.LatencyHeader, cfg.Samples)
	agg := readCSV(t, filepath.Join(dir, report.AggregateCSV), report.AggregateHeader, wantRows)
	checkRows(t, report.AggregateCSV, agg, report.AggregateHeader, cfg.Samples)

	meta, err := os.ReadFile(filepath.Join(dir, report.MetadataTXT))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"cpu.model:", "cpu.logical:", "kernel:", "go.version:", "goblin.commit:", "aeron.version:",
		"profile:", "method.samples: 1000", "case.run-1.shm-floor-ring-raw.server.affinity:", "case.run-1.shm-floor-ring-raw.client.affinity:"} {
		if !strings.Contains(string(meta), "\n"+key) && !strings.HasPrefix(string(meta), key) {
			t.Errorf("metadata.txt lacks %q", key)
		}
	}
	summary, err := os.ReadFile(filepath.Join(dir, report.SummaryMD))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(summary), "## PING") || !strings.Contains(string(summary), "| transport | protocol | system | p50 |") {
		t.Errorf("summary.md has no PING table:\n%s", summary)
	}

	svgs, _ := filepath.Glob(filepath.Join(dir, report.ChartsDir, "*.svg"))
	if len(svgs) < 2 {
		t.Errorf("only %d charts written", len(svgs))
	}
	for _, f := range svgs {
		checkSVG(t, f)
	}
	if _, err := os.Stat(filepath.Join(dir, report.ChartsDir, "p50-p99-ping.svg")); err != nil {
		t.Errorf("no PING bar chart: %v", err)
	}

	if err := report.VerifySums(dir); err != nil {
		t.Errorf("SHA256SUMS: %v", err)
	}
	if sum, err := exec.LookPath("sha256sum"); err == nil {
		cmd := exec.Command(sum, "--quiet", "-c", report.SumsFile)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("sha256sum -c: %v: %s", err, out)
		}
	}
	// The check can fail: a changed byte is caught.
	f := filepath.Join(dir, report.AggregateCSV)
	b, _ := os.ReadFile(f)
	b[len(b)-2] ^= 1
	os.WriteFile(f, b, 0o644)
	if err := report.VerifySums(dir); err == nil {
		t.Error("VerifySums accepted a modified aggregate.csv")
	}
	if !strings.Contains(progress.String(), "ETA") && rep.Ended.Sub(rep.Started) > 3*time.Second {
		t.Errorf("no progress line with an ETA in %s of running:\n%s", rep.Ended.Sub(rep.Started), progress.String())
	}
}

func readCSV(t *testing.T, path string, header []string, rows int) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	all, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(all) == 0 || strings.Join(all[0], ",") != strings.Join(header, ",") {
		t.Fatalf("%s: header %v, want %v", path, all[0], header)
	}
	if len(all)-1 != rows {
		t.Errorf("%s: %d rows, want %d", path, len(all)-1, rows)
	}
	return all[1:]
}

// checkRows: ok rows carry ordered, positive numbers and the sample count;
// other rows carry no numbers and a reason.
func checkRows(t *testing.T, name string, rows [][]string, header []string, samples int) {
	t.Helper()
	col := func(n string) int {
		for i, h := range header {
			if h == n {
				return i
			}
		}
		t.Fatalf("no column %s", n)
		return -1
	}
	st, sm, note := col("status"), col("samples"), col("note")
	nums := []int{col("p50_us"), col("p90_us"), col("p99_us"), col("p999_us"), col("max_us")}
	for _, r := range rows {
		if r[st] != harness.StatusOK {
			if r[note] == "" {
				t.Errorf("%s: %v row without a reason", name, r[st])
			}
			for _, c := range nums {
				if r[c] != "" {
					t.Errorf("%s: %s row carries a number: %v", name, r[st], r)
				}
			}
			continue
		}
		if r[sm] != strconv.Itoa(samples) {
			t.Errorf("%s: samples %s, want %d", name, r[sm], samples)
		}
		prev := 0.0
		for _, c := range nums {
			v, err := strconv.ParseFloat(r[c], 64)
			if err != nil || v <= 0 || v < prev {
				t.Errorf("%s: %s = %q is not a positive, non-decreasing latency in %v", name, header[c], r[c], r)
			}
			prev = v
		}
	}
}

func checkSVG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := xml.NewDecoder(f)
	root := ""
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Errorf("%s is not well-formed XML: %v", path, err)
			return
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Errorf("%s: root element %q, want svg", path, root)
	}
}
