package report

import (
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/benchmarks/harness"
)

// TestSummaryMarksCrossProfileRatios: under fit2 the Aeron UDP cases run
// with everything backing off while the UDP socket floor spins; the
// summary shows each row's idle profile and marks the ratio between those
// two rows (it printed "48.85×" against the spinning floor without a
// word), but not a ratio within one profile.
func TestSummaryMarksCrossProfileRatios(t *testing.T) {
	cfg := harness.DefaultConfig()
	cfg.Profile = harness.Profiles(2)["fit2"]
	row := func(system, transport string, proto harness.Protocol, p50 float64) Aggregate {
		c := harness.Case{System: system, Transport: transport, Protocol: proto, Ops: []harness.Op{harness.Ping}}
		return Aggregate{Case: c, Op: harness.Ping, Status: harness.StatusOK, Profile: cfg.ForCase(system, transport).Name,
			Runs: 1, Samples: 1, P50: p50, P90: p50, P99: p50, P999: p50, Max: p50, Mean: p50}
	}
	aggs := []Aggregate{
		row(harness.SysGoblin, harness.TAeronUDP, harness.SBE, 48850),
		row(harness.SysUDPFloor, harness.TAeronUDP, harness.Raw, 1000),
		row(harness.SysGoblin, harness.TRing, harness.SBE, 3000),
		row(harness.SysShmFloor, harness.TRing, harness.Raw, 1000),
	}
	md := SummaryMarkdown(&harness.Report{Config: cfg}, aggs)
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
