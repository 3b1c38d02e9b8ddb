package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/goblin-kv/goblin/benchmarks/harness"
)

// redisRef names the Redis case a goblin case is compared with: Redis on the
// same socket type for uds and tcp, Redis on a Unix socket (its fastest
// local path) for everything else.
func redisRef(c harness.Case) (transport string) {
	if c.Transport == harness.TTCP {
		return harness.TTCP
	}
	return harness.TUDS
}

// floorRef names the raw floor a case is compared with: the raw Aeron
// ping-pong on the same medium for Aeron cases, the shared-memory floor for
// everything else.
func floorRef(c harness.Case) (system, transport string) {
	switch c.Transport {
	case harness.TAeronIPC, harness.TAeronUDP:
		return harness.SysAeronRaw, c.Transport
	}
	return harness.SysShmFloor, harness.TRing
}

// floorAgg is the floor row a case is compared with: on aeron-udp the raw
// UDP socket floor when the run measured it (the Java pair's aeron-raw is
// then a row compared with it, like goblin's), floorRef's otherwise.
func floorAgg(aggs []Aggregate, c harness.Case) *Aggregate {
	if c.Transport == harness.TAeronUDP {
		if f := findAgg(aggs, harness.SysUDPFloor, harness.TAeronUDP, c.Path, harness.Ping); f != nil {
			return f
		}
	}
	fs, ft := floorRef(c)
	return findAgg(aggs, fs, ft, c.Path, harness.Ping)
}

// findAgg finds a reference row: on the same network path when the
// reference crosses the network.
func findAgg(aggs []Aggregate, system, transport, path string, op harness.Op) *Aggregate {
	if !harness.NetworkTransport(transport) {
		path = ""
	}
	for i := range aggs {
		a := &aggs[i]
		if a.Case.System == system && a.Case.Transport == transport && a.Case.Path == path && a.Op == op && a.Status == harness.StatusOK {
			return a
		}
	}
	return nil
}

// ratio formats a/b, or "—" when either side is missing.
func ratio(a float64, b *Aggregate, pick func(*Aggregate) float64) string {
	if b == nil || pick(b) == 0 {
		return "—"
	}
	r := a / pick(b)
	if r < 0.01 {
		return "<0.01×"
	}
	return fmt.Sprintf("%.2f×", r)
}

// idleOf is the idle part of the profile case c ran with: how the server
// loop, the measuring client and the media driver agents wait
// ("spin/spin/backoff").
func idleOf(cfg *harness.Config, c harness.Case) string {
	p := cfg.ForCase(c.System, c.Transport)
	return orDash(p.ServerIdle) + "/" + orDash(p.ClientWait) + "/" + orDash(p.DriverIdle)
}

// crossProfile marks a ratio whose reference ran with another idle
// profile than the row: such a ratio mixes what the two ways of waiting
// cost with what the transports cost. It returns the ratio, with † when
// marked, and the note that explains the mark ("" when none); refName
// prefixes the reference's label there ("the floor ").
func crossProfile(cfg *harness.Config, row Aggregate, ref *Aggregate, r, refName string) (string, string) {
	if ref == nil || r == "—" || ref.Case.ID() == row.Case.ID() {
		return r, ""
	}
	ri, fi := idleOf(cfg, row.Case), idleOf(cfg, ref.Case)
	if ri == fi {
		return r, ""
	}
	return r + "†", fmt.Sprintf("%s (%s: %s) against %s%s (%s: %s)", row.Case.Label(), row.Profile, ri,
		refName, ref.Case.Label(), ref.Profile, fi)
}

// loadTriple keeps the three load averages of a /proc/loadavg line.
func loadTriple(s string) string {
	f := strings.Fields(s)
	if len(f) < 3 {
		return s
	}
	return strings.Join(f[:3], ", ")
}

// SummaryMarkdown renders summary.md: the ratios first, absolute times beside them,
// then the cases that were not available and the profile of every figure.
func SummaryMarkdown(rep *harness.Report, aggs []Aggregate) string {
	cfg := rep.Config
	var b strings.Builder
	fmt.Fprintf(&b, "# goblin transport latency\n\n")
	machine := "Machine"
	if cfg.TwoHosts() {
		machine = "Controller (ran ssh and wrote this archive; the hosts below ran the cases)"
	}
	fmt.Fprintf(&b, "%s: %s, %s logical CPUs (%s physical cores), %s; Go %s; goblin %s.\n\n", machine,
		rep.Meta.Get("cpu.model"), rep.Meta.Get("cpu.logical"), rep.Meta.Get("cpu.physical_cores"),
		rep.Meta.Get("kernel"), rep.Meta.Get("go.version"), rep.Meta.Get("goblin.commit"))
	fmt.Fprintf(&b, "Load average (1, 5, 15 min) at the start: %s; at the end: %s.\n\n",
		loadTriple(rep.Meta.Get("load.start")), loadTriple(rep.Meta.Get("load.end")))
	if cfg.TwoHosts() {
		for _, hf := range rep.Hosts {
			fmt.Fprintf(&b, "%s host: %s — %s, %s logical CPUs, governor %s; %s.\n\n", hf.Role, hf.Host,
				hf.Facts.Get("cpu.model"), hf.Facts.Get("cpu.logical"), hf.Facts.Get("cpu.governor"), hf.Facts.Get("uname"))
		}
		for _, p := range cfg.NetPaths() {
			fmt.Fprintf(&b, "Path %s: server %s, client %s; Aeron UDP request endpoint and response control address on %s.\n\n",
				p.Label(), p.Server, p.Client, p.ControlAddr())
		}
		fmt.Fprintf(&b, "Media driver: %s.\n\n", cfg.Driver)
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(&b, "**Warning:** %s\n\n", w)
	}
	fmt.Fprintf(&b, "Method: mean of %d run(s); per operation %d warm-up then %d measured synchronous round trips at depth %d; "+
		"%d-byte value, %d key(s); a fresh server per case; exact nearest-rank percentiles. Times in µs.\n\n",
		cfg.Runs, cfg.Warmup, cfg.Samples, cfg.Depth, cfg.ValueSize, cfg.Keys)
	fmt.Fprintf(&b, "Profile: %s", cfg.Profile)
	if cfg.Profile.UDP != nil {
		fmt.Fprintf(&b, " (Aeron UDP: %s)", *cfg.Profile.UDP)
	}
	b.WriteString(".\n\n")
	b.WriteString("Ratios are p50 over the reference's p50 for the same operation: Redis on the same socket type " +
		"(tcp to tcp, everything else to Redis's Unix socket) and the raw floor (on aeron-udp the raw UDP socket " +
		"ping-pong when measured, else the raw Aeron ping-pong on the same medium for Aeron, the shared-memory ping-pong " +
		"otherwise; the floors have no command, so every operation is compared with their one round trip). " +
		"Each row's profile column names its profile and how it waits (server loop / measuring client / driver agents); " +
		"a ratio marked † compares rows measured with different idle profiles, and the note under its table names them.\n\n")
	p50 := func(a *Aggregate) float64 { return a.P50 }
	p99 := func(a *Aggregate) float64 { return a.P99 }
	for _, op := range harness.AllOps {
		rows := okRows(aggs, op)
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(&b, "## %s\n\n", op)
		paths := slices.ContainsFunc(rows, func(a Aggregate) bool { return a.Case.Path != "" })
		if paths {
			b.WriteString("| path ")
		}
		b.WriteString("| transport | protocol | system | p50 | p50 ÷ Redis | p50 ÷ floor | p99 | p99 ÷ Redis | p99.9 | max | mean | profile (idle: server/client/driver) |\n")
		if paths {
			b.WriteString("|---")
		}
		b.WriteString("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
		var notes []string
		note := func(n string) {
			if n != "" && !slices.Contains(notes, n) {
				notes = append(notes, n)
			}
		}
		for _, a := range rows {
			red := findAgg(aggs, harness.SysRedis, redisRef(a.Case), a.Case.Path, op)
			fl := floorAgg(aggs, a.Case)
			rr, fr, rr99 := ratio(a.P50, red, p50), ratio(a.P50, fl, p50), ratio(a.P99, red, p99)
			if a.Case.Protocol == harness.Raw {
				// The floors and raw ping-pongs have no command to
				// compare with Redis's.
				rr, rr99 = "—", "—"
				if fl == nil || fl.Case.System == a.Case.System {
					fr = "1.00×"
				}
			}
			if a.Case.System == harness.SysRedis {
				rr, rr99 = "1.00×", "1.00×"
				if red != nil && red.Case.Transport != a.Case.Transport {
					rr, rr99 = ratio(a.P50, red, p50), ratio(a.P99, red, p99)
				}
			}
			var n1, n2, n3 string
			rr, n1 = crossProfile(&cfg, a, red, rr, "")
			rr99, n2 = crossProfile(&cfg, a, red, rr99, "")
			fr, n3 = crossProfile(&cfg, a, fl, fr, "the floor ")
			note(n1)
			note(n2)
			note(n3)
			proto := string(a.Case.Protocol)
			if a.Case.Protocol == harness.Raw {
				proto = "—"
			}
			if paths {
				fmt.Fprintf(&b, "| %s ", orDash(a.Case.Path))
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				a.Case.Transport, proto, a.Case.System, us(a.P50), rr, fr, us(a.P99), rr99, us(a.P999), us(a.Max), us(a.Mean),
				a.Profile+" ("+idleOf(&cfg, a.Case)+")")
		}
		b.WriteString("\n")
		if len(notes) > 0 {
			b.WriteString("† Measured with different idle profiles, so the ratio includes what waiting differently costs, " +
				"not only what the transport costs (compare within one profile, or rerun with one: -profile backoff, " +
				"or -server-idle, -client-wait and -driver-idle):\n\n")
			for _, n := range notes {
				fmt.Fprintf(&b, "- %s\n", n)
			}
			b.WriteString("\n")
		}
	}
	var missing []string
	seen := map[string]bool{}
	for _, a := range aggs {
		if a.Status == harness.StatusOK || seen[a.Case.ID()] {
			continue
		}
		seen[a.Case.ID()] = true
		missing = append(missing, fmt.Sprintf("- %s: **%s** — %s", a.Case.Label(), a.Status, a.Note))
	}
	if len(missing) > 0 {
		b.WriteString("## Not measured\n\n")
		b.WriteString(strings.Join(missing, "\n"))
		b.WriteString("\n\n")
	}
	if len(rep.QualificationCases) > 0 {
		ok := 0
		for _, c := range rep.QualificationCases {
			if c.Status == harness.StatusOK {
				ok++
			}
		}
		fmt.Fprintf(&b, "## Qualification\n\n%d of %d cases ran once more with a statistics collector attached to every media driver "+
			"(%s). Those runs are in `%s/` (their own `latency.csv`, the collectors' logs beside each driver's) and in none of the figures above.\n\n",
			ok, len(rep.QualificationCases), rep.Meta.Get("qualification"), harness.QualificationDir)
	}
	b.WriteString("## Files\n\n")
	b.WriteString("`latency.csv` every case and run; `aggregate.csv` the mean of the runs; `metadata.txt` machine, versions, " +
		"channels and affinities of every case; `run-N/<case>/` per-case distributions, server logs, `case.txt`, `processes.txt`, " +
		"`affinity.txt` and, for network cases, `channels.txt` and each side's NIC counters and driver counters under `server/` and `client/`; " +
		"`charts/` SVG charts; `SHA256SUMS` covers every other file (`sha256sum -c SHA256SUMS`).\n")
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
