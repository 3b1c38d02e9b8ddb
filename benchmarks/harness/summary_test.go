package harness

import (
	"strings"
	"testing"
)

// TestSummaryMarksCrossProfileRatios: under fit2 the Aeron UDP cases run
// with everything backing off while the UDP socket floor spins; the
// summary shows each row's idle profile and marks the ratio between those
// two rows (it printed "48.85×" against the spinning floor without a
// word), but not a ratio within one profile.
func TestSummaryMarksCrossProfileRatios(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Profile = Profiles(2)["fit2"]
	row := func(system, transport string, proto Protocol, p50 float64) Aggregate {
		c := Case{System: system, Transport: transport, Protocol: proto, Ops: []Op{Ping}}
		return Aggregate{Case: c, Op: Ping, Status: StatusOK, Profile: cfg.ForCase(system, transport).Name,
			Runs: 1, Samples: 1, P50: p50, P90: p50, P99: p50, P999: p50, Max: p50, Mean: p50}
	}
	aggs := []Aggregate{
		row(SysGoblin, TAeronUDP, SBE, 48850),
		row(SysUDPFloor, TAeronUDP, Raw, 1000),
		row(SysGoblin, TRing, SBE, 3000),
		row(SysShmFloor, TRing, Raw, 1000),
	}
	md := SummaryMarkdown(&Report{Config: cfg}, aggs)
	line := func(prefix string) string {
		for _, l := range strings.Split(md, "\n") {
			if strings.HasPrefix(l, prefix) {
				return l
			}
		}
		t.Fatalf("no row %q in:\n%s", prefix, md)
		return ""
	}
	udp := line("| aeron-udp | SBE | goblin |")
	if !strings.Contains(udp, "48.85×†") || !strings.Contains(udp, "fit2/udp-backoff (backoff/block/backoff)") {
		t.Errorf("the cross-profile ratio is not marked, or the row's idle profile not shown: %s", udp)
	}
	if floor := line("| aeron-udp | — | udp-floor |"); !strings.Contains(floor, "fit2 (spin/spin/backoff)") {
		t.Errorf("the floor's idle profile is not shown: %s", floor)
	}
	if ring := line("| ring | SBE | goblin |"); strings.Contains(ring, "†") || !strings.Contains(ring, "3.00×") {
		t.Errorf("a ratio within one profile is marked: %s", ring)
	}
	want := "goblin aeron-udp SBE (fit2/udp-backoff: backoff/block/backoff) against the floor udp-floor aeron-udp (fit2: spin/spin/backoff)"
	if !strings.Contains(md, "† Measured with different idle profiles") || !strings.Contains(md, want) {
		t.Errorf("the note under the table does not name both profiles (want %q):\n%s", want, md)
	}
}

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
	cfg := DefaultConfig()
	cfg.Progress = &stderr
	rep := &Report{Config: cfg}
	rep.warnLoad(&cfg, "start", "1000.00 900.00 800.00 9/812 31337") // far above any CPU count
	if len(rep.Warnings) != 1 || !strings.Contains(stderr.String(), "goblin-bench: warning: the 1-minute load average at the start") {
		t.Fatalf("warnings %q, stderr %q", rep.Warnings, stderr.String())
	}
	if md := SummaryMarkdown(rep, nil); !strings.Contains(md, "**Warning:** the 1-minute load average at the start of the run was 1000.00") {
		t.Errorf("summary.md does not carry the load warning:\n%s", md)
	}
}
