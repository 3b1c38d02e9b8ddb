package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/goblin-kv/goblin/benchmarks/harness"
)

// ProbeSpec is how the measuring client connects to one case's server and
// what it measures: all a goblin-bench on the client host (goblin-bench
// probe, a fresh process per case) needs to measure the case exactly as
// the harness does in its own process on one machine.
type ProbeSpec struct {
	Client  string           `json:"client"`            // ClientLibrary or ClientRaw
	Target  string           `json:"target"`            // the client library's target
	Network string           `json:"network,omitempty"` // stream sockets: unix or tcp, for the raw client
	Addr    string           `json:"addr,omitempty"`
	Proto   harness.Protocol `json:"proto"`
	Wait    string           `json:"wait"` // spin or block

	// The workload, filled in by the runner.
	CPUs      string        `json:"cpus,omitempty"` // the measuring thread's CPU list
	Ops       []harness.Op  `json:"ops"`
	Warmup    int           `json:"warmup"`
	Samples   int           `json:"samples"`
	ValueSize int           `json:"value_size"`
	Keys      int           `json:"keys"`
	Depth     int           `json:"depth"`
	Timeout   time.Duration `json:"timeout"`
}

// ProbeResult is what a probe measured: per operation the summary, the
// distribution and the measuring thread's CPUs, or the error.
type ProbeResult struct {
	Client string    `json:"client"`
	Err    string    `json:"error,omitempty"` // connecting failed
	Ops    []ProbeOp `json:"ops"`
}

// ProbeOp is one measured operation of a probe.
type ProbeOp struct {
	Op       harness.Op      `json:"op"`
	Summary  harness.Summary `json:"summary"`
	Dist     []int64         `json:"dist"`
	Affinity string          `json:"affinity"`
	Err      string          `json:"error,omitempty"`
}

// probeSpecer is implemented by instances a measuring client on another
// host can measure (goblin-server, redis-server).
type probeSpecer interface {
	probeSpec() ProbeSpec
}

// withWorkload fills in the workload of a probe from the run's knobs.
func (s ProbeSpec) withWorkload(cfg *harness.Config, prof harness.Profile, ops []harness.Op) ProbeSpec {
	s.CPUs, s.Ops = prof.ClientCPU, ops
	s.Warmup, s.Samples, s.ValueSize, s.Keys, s.Depth = cfg.Warmup, cfg.Samples, cfg.ValueSize, cfg.Keys, cfg.Depth
	s.Timeout = cfg.CaseTimeout
	return s
}

// dialProbe connects the measuring client a spec names: the harness's raw
// RESP client for RESP over a stream socket when asked for (or when the
// client library is not built in), the goblin client library otherwise.
func dialProbe(ctx context.Context, cfg *harness.Config, s ProbeSpec) (harness.Prober, error) {
	switch s.Client {
	case harness.ClientUDPFloor:
		p, err := dialUDPFloor(s.Target)
		if err != nil {
			return nil, err
		}
		return p, nil
	case harness.ClientAeronGo:
		p, err := dialAeronGo(s.Target)
		if err != nil {
			return nil, err
		}
		return p, nil
	}
	raw := s.Network != "" && s.Proto == harness.RESP
	if raw && (s.Client == harness.ClientRaw || libraryDial == nil) {
		p, err := dialRawRESP(s.Network, s.Addr, cfg, s.Wait)
		if err != nil {
			return nil, err
		}
		return p, p.preload()
	}
	if libraryDial == nil {
		return nil, fmt.Errorf("%w: measuring %s over %s needs the goblin client library (package client)", harness.ErrUnavailable, s.Proto, s.Target)
	}
	return libraryDial(ctx, cfg, s.Target, s.Wait)
}

// RunProbe measures what spec says in this process and returns the result.
func RunProbe(ctx context.Context, spec ProbeSpec) ProbeResult {
	cfg := harness.DefaultConfig()
	cfg.Client = spec.Client
	cfg.Warmup, cfg.Samples, cfg.ValueSize, cfg.Keys, cfg.Depth = spec.Warmup, spec.Samples, spec.ValueSize, spec.Keys, spec.Depth
	if spec.Timeout > 0 {
		cfg.CaseTimeout = spec.Timeout
	}
	prof := harness.Profile{Name: "probe", ClientWait: spec.Wait, ClientCPU: spec.CPUs}
	dctx, cancel := context.WithTimeout(ctx, cfg.CaseTimeout)
	defer cancel()
	pr, err := dialProbe(dctx, &cfg, spec)
	if err != nil {
		return ProbeResult{Err: err.Error()}
	}
	defer pr.Close()
	res := ProbeResult{Client: pr.Describe()}
	prog := newProgress(&cfg, nil, 1)
	for _, op := range spec.Ops {
		s, dist, affinity, err := measure(&cfg, prof, pr, op, prog, "")
		po := ProbeOp{Op: op, Summary: s, Dist: dist, Affinity: affinity}
		if err != nil {
			po.Err = err.Error()
		}
		res.Ops = append(res.Ops, po)
		if err != nil {
			break
		}
	}
	return res
}

// ServeProbe reads a ProbeSpec from r, measures it and writes the
// ProbeResult to w: goblin-bench probe, the measuring client on the
// client host of a two-host run.
func ServeProbe(ctx context.Context, r io.Reader, w io.Writer) error {
	var spec ProbeSpec
	if err := json.NewDecoder(r).Decode(&spec); err != nil {
		return fmt.Errorf("probe: reading the spec: %w", err)
	}
	js, _ := json.Marshal(spec)
	fmt.Fprintf(os.Stderr, "probe: pid %d measuring %s\n", os.Getpid(), js)
	res := RunProbe(ctx, spec)
	for _, o := range res.Ops {
		fmt.Fprintf(os.Stderr, "probe: %s: %d samples, p50 %d ns, p99 %d ns, measuring thread on CPU %s %s\n",
			o.Op, o.Summary.Samples, o.Summary.P50, o.Summary.P99, o.Affinity, o.Err)
	}
	if res.Err != "" {
		fmt.Fprintf(os.Stderr, "probe: %s\n", res.Err)
	}
	return json.NewEncoder(w).Encode(res)
}

// measureOn measures a case with a fresh goblin-bench probe on host h (the
// client host of a two-host run), in h's case directory dir: the spec goes
// in on its standard input, the result comes back in probe-result.json and
// its log is probe.log.
func measureOn(ctx context.Context, cfg *harness.Config, h harness.Host, spec ProbeSpec, dir string) (ProbeResult, error) {
	bench, err := h.Tool(cfg, "goblin-bench")
	if err != nil {
		return ProbeResult{}, err
	}
	js, err := json.Marshal(spec)
	if err != nil {
		return ProbeResult{}, err
	}
	resultPath := filepath.Join(dir, "probe-result.json")
	// Every operation's warm-up and samples are bounded by the case
	// timeout; connecting adds one more.
	cctx, cancel := context.WithTimeout(ctx, time.Duration(len(spec.Ops)+1)*cfg.CaseTimeout)
	defer cancel()
	// With housekeeping CPUs the probe's process runs there and only its
	// measuring thread moves to the client's CPUs.
	probe := harness.ProcSpec{Name: "probe", Dir: dir, Argv: []string{bench, "probe", resultPath}, Stdin: string(js), CPUs: cfg.Profile.HousekeepingCPU}
	if _, err := h.Run(cctx, probe); err != nil {
		return ProbeResult{}, err
	}
	b, err := h.ReadFile(resultPath)
	if err != nil {
		return ProbeResult{}, fmt.Errorf("reading the probe's result: %w", err)
	}
	var res ProbeResult
	if err := json.Unmarshal(b, &res); err != nil {
		return ProbeResult{}, fmt.Errorf("the probe's result: %w", err)
	}
	if res.Err != "" {
		return res, errors.New(res.Err)
	}
	return res, nil
}
