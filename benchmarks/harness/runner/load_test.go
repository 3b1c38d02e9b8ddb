package runner

import (
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/benchmarks/harness"
	"github.com/goblin-kv/goblin/benchmarks/harness/report"
)

// TestLoadWarning: a run that starts or ends with the load average far
// above the CPU count says so, on stderr and at the top of summary.md; a
// quiet machine gets no warning.
func TestLoadWarning(t *testing.T) {
	for _, c := range []struct {
		line string
		ncpu int
		warn bool
	}{
		{"0.52 0.40 0.33 1/234 5678", 2, false},
		{"3.00 2.00 1.00 3/234 5678", 2, false}, // exactly 1.5 per CPU
		{"7.85 6.10 4.02 9/812 31337", 2, true},
		{"7.85 6.10 4.02 9/812 31337", 8, false},
		{"unknown", 2, false},
		{"", 2, false},
	} {
		if got := loadWarning("start", c.line, c.ncpu); (got != "") != c.warn {
			t.Errorf("loadWarning(%q, %d CPUs) = %q, want a warning: %v", c.line, c.ncpu, got, c.warn)
		}
	}
	w := loadWarning("end", "7.85 6.10 4.02 9/812 31337", 2)
	if !strings.Contains(w, "7.85") || !strings.Contains(w, "2 logical CPUs") || !strings.Contains(w, "at the end") {
		t.Errorf("the warning does not give the load, the CPUs and when: %q", w)
	}

	var stderr strings.Builder
	cfg := harness.DefaultConfig()
	cfg.Progress = &stderr
	rep := &harness.Report{Config: cfg}
	warnLoad(rep, &cfg, "start", "1000.00 900.00 800.00 9/812 31337") // far above any CPU count
	if len(rep.Warnings) != 1 || !strings.Contains(stderr.String(), "goblin-bench: warning: the 1-minute load average at the start") {
		t.Fatalf("warnings %q, stderr %q", rep.Warnings, stderr.String())
	}
	if md := report.SummaryMarkdown(rep, nil); !strings.Contains(md, "**Warning:** the 1-minute load average at the start of the run was 1000.00") {
		t.Errorf("summary.md does not carry the load warning:\n%s", md)
	}
}
