package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/goblin-kv/goblin/benchmarks/harness"
	"github.com/goblin-kv/goblin/benchmarks/harness/report"
)

// PlannedCase is a case with its provider and availability.
type PlannedCase struct {
	c     harness.Case
	path  harness.NetPath
	prov  harness.Provider
	avail error
}

// Case is the planned case.
func (pc PlannedCase) Case() harness.Case { return pc.c }

// Unavailable is nil when the case can run, else why not.
func (pc PlannedCase) Unavailable() error { return pc.avail }

// Plan lists the cases cfg selects from providers, in table order, with the
// reason each unavailable case cannot run. A network case (tcp, aeron-udp)
// is planned once per path when Config.Paths names several.
func Plan(cfg *harness.Config, providers []harness.Provider) []PlannedCase {
	var out []PlannedCase
	for _, pr := range providers {
		for _, p := range pr.Protocols() {
			if !cfg.Wants(pr.System(), pr.Transport(), p) {
				continue
			}
			ops := cfg.WantedOps(pr.Ops())
			if len(ops) == 0 {
				continue
			}
			avail := pr.Check(cfg, p)
			paths := []harness.NetPath{{}}
			if harness.NetworkTransport(pr.Transport()) {
				paths = cfg.NetPaths()
			}
			for _, path := range paths {
				c := harness.Case{System: pr.System(), Transport: pr.Transport(), Protocol: p, Ops: ops, Path: path.Name}
				out = append(out, PlannedCase{c: c, path: path, prov: pr, avail: avail})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return harness.CaseLess(out[i].c, out[j].c) })
	return out
}

// NewRunID returns a name for one run, unique on this machine: the time and
// the process id.
func NewRunID() string {
	return fmt.Sprintf("%s-%d", time.Now().UTC().Format("20060102T150405"), os.Getpid())
}

// Run measures the matrix and writes the archive into cfg.OutDir.
func Run(ctx context.Context, cfg harness.Config, providers []harness.Provider) (*harness.Report, error) {
	return RunStaged(ctx, cfg, providers, nil)
}

// RunStaged is Run for a two-host run whose hosts ConnectHosts connected:
// the staging record goes into the archive, and the remote hosts are
// closed (their agents stopped, their runtime directories removed) before
// the archive's hashes are written.
func RunStaged(ctx context.Context, cfg harness.Config, providers []harness.Provider, staging *harness.StageReport) (*harness.Report, error) {
	if cfg.RunID == "" {
		cfg.RunID = NewRunID()
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return nil, err
	}
	rep := &harness.Report{Config: cfg, Started: time.Now().UTC(), LoadStart: harness.ReadTrim("/proc/loadavg", "unknown"), Commit: report.GitCommit(),
		Staging: staging}
	plan := Plan(&cfg, providers)
	if len(plan) == 0 {
		return nil, fmt.Errorf("%w: the filters select no case", harness.ErrConfig)
	}
	network := slices.ContainsFunc(plan, func(pc PlannedCase) bool { return harness.NetworkTransport(pc.c.Transport) && pc.avail == nil })
	if network {
		warnings, err := report.CheckPaths(ctx, &cfg)
		if err != nil {
			return nil, err
		}
		rep.Warnings = append(rep.Warnings, warnings...)
		for _, w := range warnings {
			if cfg.Progress != nil {
				fmt.Fprintln(cfg.Progress, "goblin-bench: warning: "+w)
			}
		}
	}
	warnLoad(rep, &cfg, "start", rep.LoadStart)
	passes := cfg.Runs
	if cfg.Qualify != nil {
		passes++
	}
	prog := newProgress(&cfg, plan, passes)
	prog.start()
	defer prog.stop()

	for run := 1; run <= passes; run++ {
		qualifying := run > cfg.Runs
		base, n := "", run
		if qualifying {
			base, n = harness.QualificationDir, 1
		}
		if network {
			facts := report.CollectHostFacts(ctx, &cfg)
			if err := report.WriteHostFacts(filepath.Join(cfg.OutDir, base, fmt.Sprintf("run-%d", n)), facts); err != nil {
				return nil, err
			}
			if run == 1 {
				rep.Hosts = facts
			}
		}
		for _, pc := range plan {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			var rec harness.CaseRecord
			var results []harness.Result
			if pc.avail != nil {
				rec, results = unavailable(&cfg, n, pc, pc.avail)
			} else {
				rec, results = runCase(ctx, &cfg, prog, n, pc, base)
			}
			if qualifying {
				rep.QualificationCases = append(rep.QualificationCases, rec)
				rep.Qualification = append(rep.Qualification, results...)
			} else {
				rep.Cases = append(rep.Cases, rec)
				rep.Results = append(rep.Results, results...)
			}
		}
	}
	// The agents' logs are complete once they have stopped: close the
	// remote hosts before the archive's hashes are written.
	for _, h := range []harness.Host{cfg.ServerSide, cfg.ClientSide} {
		if h != nil && h.Remote() {
			if err := h.Close(); err != nil && cfg.Progress != nil {
				fmt.Fprintf(cfg.Progress, "goblin-bench: closing the %s host: %v\n", h.Role(), err)
			}
		}
	}
	rep.Ended = time.Now().UTC()
	rep.LoadEnd = harness.ReadTrim("/proc/loadavg", "unknown")
	warnLoad(rep, &cfg, "end", rep.LoadEnd)
	rep.Meta = report.CollectMetadata(&cfg, rep)
	if err := report.WriteArchive(rep); err != nil {
		return rep, err
	}
	return rep, nil
}

// loadFactor is how many runnable threads per logical CPU, on average
// over a minute, make a machine too busy for its latencies to stand for
// the system measured alone.
const loadFactor = 1.5

// loadWarning returns a warning when the 1-minute load average of a
// /proc/loadavg line is more than loadFactor times ncpu, and "" otherwise
// (also for a line it cannot read). when is "start" or "end".
func loadWarning(when, loadavg string, ncpu int) string {
	f := strings.Fields(loadavg)
	if len(f) == 0 || ncpu < 1 {
		return ""
	}
	load, err := strconv.ParseFloat(f[0], 64)
	if err != nil || load <= loadFactor*float64(ncpu) {
		return ""
	}
	msg := fmt.Sprintf("the 1-minute load average at the %s of the run was %.2f on this machine's %d logical CPUs "+
		"(more than %.1f per CPU): other work was competing for the CPUs, and the figures include its interference",
		when, load, ncpu, loadFactor)
	if when == "end" {
		msg += " (the run's own threads count in it too: up to one per CPU under the spinning profiles)"
	}
	return msg
}

// warnLoad records and prints loadWarning's warning, if any.
func warnLoad(rep *harness.Report, cfg *harness.Config, when, loadavg string) {
	w := loadWarning(when, loadavg, runtime.NumCPU())
	if w == "" {
		return
	}
	rep.Warnings = append(rep.Warnings, w)
	if cfg.Progress != nil {
		fmt.Fprintln(cfg.Progress, "goblin-bench: warning: "+w)
	}
}

// unavailable is the record and the rows of a case that cannot run.
func unavailable(cfg *harness.Config, run int, pc PlannedCase, why error) (harness.CaseRecord, []harness.Result) {
	prof := cfg.ForCase(pc.c.System, pc.c.Transport)
	rec := harness.CaseRecord{Run: run, Case: pc.c, Status: harness.StatusUnavailable, Note: why.Error(), Profile: prof}
	var results []harness.Result
	for _, op := range pc.c.Ops {
		results = append(results, harness.Result{Run: run, Case: pc.c, Op: op, Status: harness.StatusUnavailable, Note: why.Error(), Profile: prof.Name})
	}
	return rec, results
}

// runCase starts a fresh server (and its drivers) for one case, checks
// where every process runs, measures every operation, reads the drivers'
// counters, stops everything and archives the case: base is "" for the
// measured runs and QualificationDir for the qualification pass.
func runCase(ctx context.Context, cfg *harness.Config, prog *progress, run int, pc PlannedCase, base string) (harness.CaseRecord, []harness.Result) {
	prof := cfg.ForCase(pc.c.System, pc.c.Transport)
	rec := harness.CaseRecord{Run: run, Case: pc.c, Status: harness.StatusOK, Profile: prof, Info: map[string]string{}}
	results := make([]harness.Result, 0, len(pc.c.Ops))
	fail := func(err error) (harness.CaseRecord, []harness.Result) {
		if rec.Status == harness.StatusOK {
			rec.Status, rec.Note = harness.StatusFailed, err.Error()
			if errors.Is(err, harness.ErrUnavailable) {
				rec.Status = harness.StatusUnavailable
			}
		}
		done := map[harness.Op]bool{}
		for _, r := range results {
			done[r.Op] = true
		}
		for _, op := range pc.c.Ops {
			if !done[op] {
				results = append(results, harness.Result{Run: run, Case: pc.c, Op: op, Status: rec.Status, Note: rec.Note, Profile: prof.Name, Client: rec.Client})
				prog.skip(cfg)
			}
		}
		return rec, results
	}
	rel := filepath.Join(base, fmt.Sprintf("run-%d", run), pc.c.ID())
	dir := filepath.Join(cfg.OutDir, rel)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	prog.caseStarting(run, pc.c)
	caseCfg := *cfg
	caseCfg.Profile = prof
	caseCfg.Track = &harness.CaseTrack{}
	network := harness.NetworkTransport(pc.c.Transport)
	if network {
		caseCfg.Path = pc.path
		caseCfg.ServerHost, caseCfg.ClientHost = pc.path.Server, pc.path.Client
	}
	sides := []harness.Host{caseCfg.ServerSideHost(), caseCfg.ClientSideHost()}
	sideAddr := func(h harness.Host) string {
		if h.Role() == "server" {
			return caseCfg.ServerHost
		}
		return caseCfg.ClientHost
	}
	if network {
		for _, h := range sides {
			writeSideFile(dir, h, "nic-before.txt", report.NicSnapshot(ctx, h, sideAddr(h)))
		}
	}
	sctx, cancel := context.WithTimeout(ctx, cfg.CaseTimeout)
	defer cancel()
	var inst harness.Instance
	var collectors []harness.Proc
	// finish archives the case whatever happened: the drivers' counters
	// while they still run, then stop everything, NIC counters after, the
	// remote hosts' files, and the case's own records.
	defer func() {
		for _, c := range collectors {
			c.Stop(graceStop)
		}
		drivers := caseCfg.Track.DriverList()
		for _, d := range drivers {
			text, err := d.Host.Counters(d.Dir)
			if err != nil {
				text = "reading the driver's counters: " + err.Error() + "\n"
			}
			writeSideFile(dir, d.Host, d.Name()+".counters.txt", text)
		}
		if inst != nil {
			if err := inst.Close(); err != nil && rec.Status == harness.StatusOK {
				rec.Note = "stop: " + err.Error()
			}
			copyInfo(rec.Info, inst.Info())
		}
		if network {
			for _, h := range sides {
				writeSideFile(dir, h, "nic-after.txt", report.NicSnapshot(ctx, h, sideAddr(h)))
			}
		}
		for _, h := range sides {
			if !h.Remote() {
				continue
			}
			hdir := h.Dir(rel)
			files, err := h.Collect(hdir)
			if err != nil {
				writeSideFile(dir, h, "collect-error.txt", err.Error()+"\n")
			}
			for name, b := range files {
				writeSideFile(dir, h, name, string(b))
			}
			h.Remove(hdir)
		}
		os.WriteFile(filepath.Join(dir, "processes.txt"), []byte(caseCfg.Track.ProcessesText()), 0o644)
		if len(caseCfg.Track.Channels) > 0 {
			os.WriteFile(filepath.Join(dir, "channels.txt"), []byte(strings.Join(caseCfg.Track.Channels, "\n")+"\n"), 0o644)
		}
		report.WriteCaseInfo(dir, &rec)
	}()
	t0 := time.Now()
	var err error
	inst, err = pc.prov.Start(sctx, &caseCfg, pc.c.Protocol, dir)
	if err != nil {
		return fail(fmt.Errorf("start: %w", err))
	}
	affinity, err := caseCfg.Track.SettleAffinity(sctx, 10*time.Second)
	os.WriteFile(filepath.Join(dir, "affinity.txt"), []byte(affinity), 0o644)
	if err != nil {
		copyInfo(rec.Info, inst.Info())
		return fail(err)
	}
	if base == harness.QualificationDir {
		if collectors, err = startCollectors(sctx, &caseCfg, rel); err != nil {
			return fail(fmt.Errorf("statistics collector: %w", err))
		}
	}
	var measureOp func(op harness.Op) (harness.Summary, []int64, string, error)
	clientSide := caseCfg.ClientSideHost()
	if m, ok := inst.(harness.Measurer); ok {
		rec.Client = m.Describe()
		measureOp = func(op harness.Op) (harness.Summary, []int64, string, error) {
			prog.opStarting(op)
			prog.label.Store(prog.label.Load().(string) + " (Aeron's Ping measures; counted when it ends)")
			s, d, a, err := m.Measure(ctx, op, cfg.Warmup, cfg.Samples)
			prog.add(int64(cfg.Warmup + cfg.Samples))
			return s, d, a, err
		}
	} else if ps, ok := inst.(probeSpecer); ok && clientSide.Remote() {
		// The measuring client is a fresh goblin-bench probe on the client
		// host, measuring every operation of the case in one process.
		spec := ps.probeSpec().withWorkload(cfg, prof, pc.c.Ops)
		prog.label.Store(prog.label.Load().(string) + " (measured on the client host; counted when it ends)")
		res, err := measureOn(ctx, &caseCfg, clientSide, spec, clientSide.Dir(rel))
		if err != nil {
			copyInfo(rec.Info, inst.Info())
			return fail(fmt.Errorf("measuring client: %w", err))
		}
		rec.Client = res.Client
		byOp := map[harness.Op]ProbeOp{}
		for _, o := range res.Ops {
			byOp[o.Op] = o
		}
		measureOp = func(op harness.Op) (harness.Summary, []int64, string, error) {
			prog.add(int64(cfg.Warmup + cfg.Samples))
			o, ok := byOp[op]
			switch {
			case !ok:
				return harness.Summary{}, nil, "", fmt.Errorf("the measuring client did not get to it")
			case o.Err != "":
				return harness.Summary{}, nil, o.Affinity, errors.New(o.Err)
			}
			return o.Summary, o.Dist, o.Affinity, nil
		}
	} else {
		pr, err := inst.Dial(sctx)
		if err != nil {
			copyInfo(rec.Info, inst.Info())
			return fail(fmt.Errorf("dial: %w", err))
		}
		defer pr.Close()
		rec.Client = pr.Describe()
		measureOp = func(op harness.Op) (harness.Summary, []int64, string, error) {
			timeline := ""
			if cfg.Timeline {
				timeline = filepath.Join(dir, strings.ToLower(string(op))+".timeline.csv")
			}
			return measure(cfg, prof, pr, op, prog, timeline)
		}
	}
	prog.caseStarted(time.Since(t0))
	for _, op := range pc.c.Ops {
		s, dist, affinity, err := measureOp(op)
		if affinity != "" {
			rec.Info["client.affinity"] = affinity
		}
		if err != nil {
			return fail(fmt.Errorf("%s: %w", op, err))
		}
		if err := checkClientAffinity(prof.ClientCPU, affinity); err != nil {
			return fail(err)
		}
		results = append(results, harness.Result{Run: run, Case: pc.c, Op: op, Status: harness.StatusOK, Summary: s, Dist: dist, Profile: prof.Name, Client: rec.Client})
		if err := report.WriteDistribution(filepath.Join(dir, strings.ToLower(string(op))+".distribution.csv"), dist); err != nil {
			return fail(err)
		}
	}
	return rec, results
}

// checkClientAffinity checks that the measuring thread ran on the CPUs the
// profile asked for.
func checkClientAffinity(want, got string) error {
	if want == "" || got == "" || got == "any" {
		return nil
	}
	if harness.NormCPUs(got) != harness.NormCPUs(want) {
		return fmt.Errorf("affinity check: the measuring thread ran on CPU %s, the profile asked for %s", got, want)
	}
	return nil
}

// writeSideFile writes one of a host's files of a case into the case's
// server/ or client/ directory.
func writeSideFile(caseDir string, h harness.Host, name, text string) {
	d := filepath.Join(caseDir, h.Role(), filepath.Dir(name))
	if err := os.MkdirAll(d, 0o755); err != nil {
		return
	}
	os.WriteFile(filepath.Join(caseDir, h.Role(), name), []byte(text), 0o644)
}

func copyInfo(dst, src map[string]string) {
	for k, v := range src {
		dst[k] = v
	}
}

// measure runs the warm-up and the measured round trips of one operation on
// a goroutine locked to its own thread (pinned when the profile says so).
// A non-empty timeline is the file for every sample in measured order.
func measure(cfg *harness.Config, prof harness.Profile, pr harness.Prober, op harness.Op, prog *progress, timeline string) (harness.Summary, []int64, string, error) {
	type outcome struct {
		s        harness.Summary
		dist     []int64
		affinity string
		err      error
	}
	ch := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() { ch <- o }()
		restore, err := harness.PinThread(prof.ClientCPU)
		if err != nil {
			o.err = err
			return
		}
		defer restore()
		o.affinity = harness.ThreadAffinity()
		rec := harness.NewRecorder(cfg.Samples)
		prog.opStarting(op)
		if b, ok := pr.(harness.Bounded); ok {
			b.Bound(time.Now().Add(cfg.CaseTimeout))
		}
		for i := 0; i < cfg.Warmup; i++ {
			if err := pr.Do(op); err != nil {
				o.err = fmt.Errorf("warm-up round trip %d: %w", i, err)
				return
			}
			if i&1023 == 1023 {
				prog.add(1024)
			}
		}
		prog.add(int64(cfg.Warmup & 1023))
		// With a timeline, each round trip's start is kept too, as
		// CLOCK_MONOTONIC nanoseconds (the clock kernel traces can use), so
		// a slow one can be lined up with what the kernel did then.
		var starts []int64
		var clock harness.MonoClock
		if timeline != "" {
			starts = make([]int64, 0, cfg.Samples)
			clock = harness.NewMonoClock()
		}
		// Collect the garbage of starting, dialing and warming up now, and
		// with it any cycle the allocations above just started: a cycle
		// running during the measured round trips stops the measuring
		// thread and takes the other core for its workers (the first case
		// of a run saw one). With a hot path that allocates nothing, the
		// next cycle is then far off.
		runtime.GC()
		for i := 0; i < cfg.Samples; i++ {
			t0 := time.Now()
			err := pr.Do(op)
			d := time.Since(t0)
			if err != nil {
				o.err = fmt.Errorf("round trip %d: %w", i, err)
				return
			}
			rec.Record(int64(d))
			if starts != nil {
				starts = append(starts, clock.At(t0))
			}
			if i&1023 == 1023 {
				prog.add(1024)
			}
		}
		prog.add(int64(cfg.Samples & 1023))
		if timeline != "" {
			if o.err = report.WriteTimeline(timeline, rec.Samples, starts); o.err != nil {
				return
			}
		}
		sorted := rec.Sorted()
		o.s = harness.Summarize(sorted)
		o.dist = harness.Distribution(sorted)
	}()
	o := <-ch
	return o.s, o.dist, o.affinity, o.err
}

// progress prints what is being measured and an estimate of what is left.
type progress struct {
	out       func(string)
	total     atomic.Int64 // round trips planned
	cases     int
	casesDone atomic.Int64
	done      atomic.Int64
	label     atomic.Value // string
	began     time.Time
	startCost atomic.Int64 // total ns spent starting servers
	tick      *time.Ticker
	quit      chan struct{}
	finished  chan struct{}
}

func newProgress(cfg *harness.Config, plan []PlannedCase, passes int) *progress {
	p := &progress{quit: make(chan struct{}), finished: make(chan struct{})}
	for _, pc := range plan {
		if pc.avail == nil {
			p.cases += passes
			p.total.Add(int64(passes) * int64(len(pc.c.Ops)) * int64(cfg.Warmup+cfg.Samples))
		}
	}
	p.label.Store("starting")
	if cfg.Progress != nil {
		w := cfg.Progress
		p.out = func(s string) { fmt.Fprintln(w, s) }
	}
	return p
}

func (p *progress) start() {
	p.began = time.Now()
	if p.out == nil {
		close(p.finished)
		return
	}
	p.out(fmt.Sprintf("goblin-bench: %d case runs, %d round trips planned", p.cases, p.total.Load()))
	p.tick = time.NewTicker(2 * time.Second)
	go func() {
		defer close(p.finished)
		for {
			select {
			case <-p.quit:
				return
			case <-p.tick.C:
				p.out(p.line())
			}
		}
	}()
}

func (p *progress) stop() {
	if p.tick != nil {
		p.tick.Stop()
		close(p.quit)
	}
	<-p.finished
	if p.out != nil {
		p.out(fmt.Sprintf("goblin-bench: done in %s", time.Since(p.began).Round(time.Second)))
	}
}

func (p *progress) add(n int64) { p.done.Add(n) }

func (p *progress) skip(cfg *harness.Config) {
	p.total.Add(-int64(cfg.Warmup + cfg.Samples)) // planned work that will not happen
}

func (p *progress) caseStarting(run int, c harness.Case) {
	n := p.casesDone.Add(1)
	p.label.Store(fmt.Sprintf("[%d/%d] run %d %s", n, p.cases, run, c.Label()))
}

func (p *progress) caseStarted(d time.Duration) { p.startCost.Add(int64(d)) }

func (p *progress) opStarting(op harness.Op) {
	l := p.label.Load().(string)
	if i := strings.LastIndex(l, " · "); i >= 0 {
		l = l[:i]
	}
	p.label.Store(l + " · " + string(op))
}

// line is one progress line: where we are, the share done, and the ETA
// (remaining round trips at the rate measured so far, plus the server starts
// still to come at their average cost).
func (p *progress) line() string {
	done, total := p.done.Load(), p.total.Load()
	if total < done {
		total = done
	}
	elapsed := time.Since(p.began)
	pct := 0.0
	if total > 0 {
		pct = 100 * float64(done) / float64(total)
	}
	eta := "estimating"
	if done > 0 {
		started := p.casesDone.Load()
		startCost := time.Duration(p.startCost.Load())
		measuring := elapsed - startCost
		perRT := float64(measuring) / float64(done)
		left := time.Duration(perRT * float64(total-done))
		if started > 0 {
			left += startCost / time.Duration(started) * time.Duration(int64(p.cases)-started)
		}
		eta = left.Round(time.Second).String()
	}
	return fmt.Sprintf("%s  %5.1f%%  elapsed %s  ETA %s", p.label.Load().(string), pct, elapsed.Round(time.Second), eta)
}
