package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"
)

// Status of a result row.
const (
	StatusOK          = "ok"
	StatusUnavailable = "unavailable"
	StatusFailed      = "failed"
)

// Result is one operation of one case in one run.
type Result struct {
	Run     int
	Case    Case
	Op      Op
	Status  string
	Note    string // why a case is unavailable or failed
	Summary Summary
	Dist    []int64 // sample values at DistributionPoints (ok rows only)
	Profile string  // the profile's name for this case
	Client  string  // which measuring client
}

// CaseRecord is what the archive says about one case in one run.
type CaseRecord struct {
	Run     int
	Case    Case
	Status  string
	Note    string
	Profile Profile
	Client  string
	Info    map[string]string
}

// Report is everything one harness run measured.
type Report struct {
	Config  Config
	Started time.Time
	Ended   time.Time
	// LoadStart is /proc/loadavg when the run began: on a shared machine
	// the other work running beside the benchmark shows in the tails.
	LoadStart string
	// Commit is the checkout's commit when the run began (the binaries
	// were built from it).
	Commit  string
	Results []Result
	Cases   []CaseRecord
	Meta    Metadata
}

// PlannedCase is a case with its provider and availability.
type PlannedCase struct {
	c     Case
	prov  Provider
	avail error
}

// Case is the planned case.
func (pc PlannedCase) Case() Case { return pc.c }

// Unavailable is nil when the case can run, else why not.
func (pc PlannedCase) Unavailable() error { return pc.avail }

// Plan lists the cases cfg selects from providers, in table order, with the
// reason each unavailable case cannot run.
func Plan(cfg *Config, providers []Provider) []PlannedCase {
	var out []PlannedCase
	for _, pr := range providers {
		for _, p := range pr.Protocols() {
			if !cfg.wants(pr.System(), pr.Transport(), p) {
				continue
			}
			ops := cfg.ops(pr.Ops())
			if len(ops) == 0 {
				continue
			}
			c := Case{System: pr.System(), Transport: pr.Transport(), Protocol: p, Ops: ops}
			out = append(out, PlannedCase{c: c, prov: pr, avail: pr.Check(cfg, p)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return caseLess(out[i].c, out[j].c) })
	return out
}

// caseLess orders cases by transport, then protocol, then system (goblin
// first, then its peers).
func caseLess(a, b Case) bool {
	ta, tb := indexOf(AllTransports, a.Transport), indexOf(AllTransports, b.Transport)
	if ta != tb {
		return ta < tb
	}
	sa, sb := indexOf(systemOrder, a.System), indexOf(systemOrder, b.System)
	if sa != sb {
		return sa < sb
	}
	return protoRank(a.Protocol) < protoRank(b.Protocol)
}

var systemOrder = []string{SysGoblin, SysRedis, SysAeronRaw, SysShmFloor}

func protoRank(p Protocol) int {
	switch p {
	case SBE:
		return 0
	case RESP:
		return 1
	}
	return 2
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return len(list)
}

// Run measures the matrix and writes the archive into cfg.OutDir.
func Run(ctx context.Context, cfg Config, providers []Provider) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return nil, err
	}
	rep := &Report{Config: cfg, Started: time.Now().UTC(), LoadStart: readTrim("/proc/loadavg", "unknown"), Commit: gitCommit()}
	plan := Plan(&cfg, providers)
	if len(plan) == 0 {
		return nil, fmt.Errorf("%w: the filters select no case", ErrConfig)
	}
	prog := newProgress(&cfg, plan)
	prog.start()
	defer prog.stop()

	for run := 1; run <= cfg.Runs; run++ {
		for _, pc := range plan {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if pc.avail != nil {
				rep.addUnavailable(run, pc, pc.avail)
				continue
			}
			rec, results := runCase(ctx, &cfg, prog, run, pc)
			rep.Cases = append(rep.Cases, rec)
			rep.Results = append(rep.Results, results...)
		}
	}
	rep.Ended = time.Now().UTC()
	rep.Meta = collectMetadata(&cfg, rep)
	if err := WriteArchive(rep); err != nil {
		return rep, err
	}
	return rep, nil
}

func (rep *Report) addUnavailable(run int, pc PlannedCase, why error) {
	rep.Cases = append(rep.Cases, CaseRecord{Run: run, Case: pc.c, Status: StatusUnavailable, Note: why.Error(),
		Profile: rep.Config.Profile.ForTransport(pc.c.Transport)})
	for _, op := range pc.c.Ops {
		rep.Results = append(rep.Results, Result{Run: run, Case: pc.c, Op: op, Status: StatusUnavailable, Note: why.Error(),
			Profile: rep.Config.Profile.ForTransport(pc.c.Transport).Name})
	}
}

// runCase starts a fresh server, measures every operation and stops it.
func runCase(ctx context.Context, cfg *Config, prog *progress, run int, pc PlannedCase) (CaseRecord, []Result) {
	prof := cfg.Profile.ForTransport(pc.c.Transport)
	rec := CaseRecord{Run: run, Case: pc.c, Status: StatusOK, Profile: prof, Info: map[string]string{}}
	results := make([]Result, 0, len(pc.c.Ops))
	fail := func(err error) (CaseRecord, []Result) {
		rec.Status, rec.Note = StatusFailed, err.Error()
		if errors.Is(err, ErrUnavailable) {
			rec.Status = StatusUnavailable
		}
		done := map[Op]bool{}
		for _, r := range results {
			done[r.Op] = true
		}
		for _, op := range pc.c.Ops {
			if !done[op] {
				results = append(results, Result{Run: run, Case: pc.c, Op: op, Status: rec.Status, Note: rec.Note, Profile: prof.Name, Client: rec.Client})
				prog.skip(cfg)
			}
		}
		return rec, results
	}
	dir := filepath.Join(cfg.OutDir, fmt.Sprintf("run-%d", run), pc.c.ID())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	prog.caseStarting(run, pc.c)
	caseCfg := *cfg
	caseCfg.Profile = prof
	sctx, cancel := context.WithTimeout(ctx, cfg.CaseTimeout)
	defer cancel()
	t0 := time.Now()
	inst, err := pc.prov.Start(sctx, &caseCfg, pc.c.Protocol, dir)
	if err != nil {
		return fail(fmt.Errorf("start: %w", err))
	}
	defer func() {
		if err := inst.Close(); err != nil && rec.Status == StatusOK {
			rec.Note = "stop: " + err.Error()
		}
		writeCaseInfo(dir, &rec)
	}()
	var measureOp func(op Op) (Summary, []int64, string, error)
	if m, ok := inst.(Measurer); ok {
		rec.Client = m.Describe()
		measureOp = func(op Op) (Summary, []int64, string, error) {
			prog.opStarting(op)
			prog.label.Store(prog.label.Load().(string) + " (Aeron's Ping measures; counted when it ends)")
			s, d, a, err := m.Measure(ctx, op, cfg.Warmup, cfg.Samples)
			prog.add(int64(cfg.Warmup + cfg.Samples))
			return s, d, a, err
		}
	} else {
		pr, err := inst.Dial(sctx)
		if err != nil {
			copyInfo(rec.Info, inst.Info())
			return fail(fmt.Errorf("dial: %w", err))
		}
		defer pr.Close()
		rec.Client = pr.Describe()
		measureOp = func(op Op) (Summary, []int64, string, error) { return measure(cfg, prof, pr, op, prog) }
	}
	prog.caseStarted(time.Since(t0))
	defer func() { copyInfo(rec.Info, inst.Info()) }()
	for _, op := range pc.c.Ops {
		s, dist, affinity, err := measureOp(op)
		if affinity != "" {
			rec.Info["client.affinity"] = affinity
		}
		if err != nil {
			return fail(fmt.Errorf("%s: %w", op, err))
		}
		results = append(results, Result{Run: run, Case: pc.c, Op: op, Status: StatusOK, Summary: s, Dist: dist, Profile: prof.Name, Client: rec.Client})
		if err := writeDistribution(filepath.Join(dir, strings.ToLower(string(op))+".distribution.csv"), dist); err != nil {
			return fail(err)
		}
	}
	return rec, results
}

func copyInfo(dst, src map[string]string) {
	for k, v := range src {
		dst[k] = v
	}
}

// measure runs the warm-up and the measured round trips of one operation on
// a goroutine locked to its own thread (pinned when the profile says so).
func measure(cfg *Config, prof Profile, pr Prober, op Op, prog *progress) (Summary, []int64, string, error) {
	type outcome struct {
		s        Summary
		dist     []int64
		affinity string
		err      error
	}
	ch := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() { ch <- o }()
		restore, err := pinThread(prof.ClientCPU)
		if err != nil {
			o.err = err
			return
		}
		defer restore()
		o.affinity = threadAffinity()
		rec := NewRecorder(cfg.Samples)
		prog.opStarting(op)
		if b, ok := pr.(Bounded); ok {
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
		for i := 0; i < cfg.Samples; i++ {
			t0 := time.Now()
			err := pr.Do(op)
			d := time.Since(t0)
			if err != nil {
				o.err = fmt.Errorf("round trip %d: %w", i, err)
				return
			}
			rec.Record(int64(d))
			if i&1023 == 1023 {
				prog.add(1024)
			}
		}
		prog.add(int64(cfg.Samples & 1023))
		sorted := rec.Sorted()
		o.s = Summarize(sorted)
		o.dist = Distribution(sorted)
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

func newProgress(cfg *Config, plan []PlannedCase) *progress {
	p := &progress{quit: make(chan struct{}), finished: make(chan struct{})}
	for _, pc := range plan {
		if pc.avail == nil {
			p.cases += cfg.Runs
			p.total.Add(int64(cfg.Runs) * int64(len(pc.c.Ops)) * int64(cfg.Warmup+cfg.Samples))
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

func (p *progress) skip(cfg *Config) {
	p.total.Add(-int64(cfg.Warmup + cfg.Samples)) // planned work that will not happen
}

func (p *progress) caseStarting(run int, c Case) {
	n := p.casesDone.Add(1)
	p.label.Store(fmt.Sprintf("[%d/%d] run %d %s", n, p.cases, run, c.Label()))
}

func (p *progress) caseStarted(d time.Duration) { p.startCost.Add(int64(d)) }

func (p *progress) opStarting(op Op) {
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
