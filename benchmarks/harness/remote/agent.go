package remote

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/goblin-kv/goblin/benchmarks/harness"
)

// The agent is goblin-bench agent ROOT on each host of a two-host run,
// started by the controller over ssh. It reads one JSON request a line from
// its standard input, performs it on its own host (the operations of a
// local Host, with runtime files under ROOT) and writes one JSON reply a
// line to its standard output. When its input ends (the controller closed
// the connection, or died and ssh with it) it stops every process it
// started and exits: a lost controller leaves nothing running.

// agentProtocol is the version both ends must speak.
const agentProtocol = 1

// agentRequest is one operation for the agent.
type agentRequest struct {
	Op   string          `json:"op"`
	Args json.RawMessage `json:"args,omitempty"`
}

// agentReply is the agent's answer to one request.
type agentReply struct {
	Result      json.RawMessage `json:"result,omitempty"`
	Err         string          `json:"error,omitempty"`
	Unavailable bool            `json:"unavailable,omitempty"` // Err wraps ErrUnavailable
}

// The arguments and results of the agent's operations.
type (
	agentHello struct {
		Protocol int    `json:"protocol"`
		PID      int    `json:"pid"`
		Root     string `json:"root"`
		Hostname string `json:"hostname"`
	}
	agentProcID struct {
		ID    int           `json:"id"`
		Grace time.Duration `json:"grace,omitempty"`
	}
	agentProc struct {
		ID    int    `json:"id"`
		Name  string `json:"name"`
		PID   int    `json:"pid"`
		Ticks int64  `json:"ticks"`
		Cmd   string `json:"cmd"`
		Log   string `json:"log"`
	}
	agentReady struct {
		ID      int               `json:"id"`
		Ready   harness.Readiness `json:"ready"`
		Timeout time.Duration     `json:"timeout"`
	}
	agentRun struct {
		Spec    harness.ProcSpec `json:"spec"`
		Timeout time.Duration    `json:"timeout"`
	}
	agentRunResult struct {
		Out []byte `json:"out"`
		Err string `json:"error,omitempty"`
	}
	agentTool struct {
		Configured string `json:"configured"`
		Name       string `json:"name"`
	}
	agentPort struct {
		Network string `json:"network"`
		Addr    string `json:"addr"`
	}
	agentPin struct {
		PID     int                `json:"pid"`
		Pins    []harness.AgentPin `json:"pins"`
		Timeout time.Duration      `json:"timeout"`
	}
	agentPath struct {
		Path string `json:"path"`
		PID  int    `json:"pid,omitempty"`
	}
)

// agent is the state of one agent process.
type agent struct {
	root  string
	host  *harness.LocalHost
	mu    sync.Mutex
	procs map[int]*harness.Process
	next  int
}

// ServeAgent runs the agent: requests from r, replies to w, runtime files
// under root. It returns when r ends, after stopping every process it
// started.
func ServeAgent(r io.Reader, w io.Writer, root, role string) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	a := &agent{root: root, host: harness.NewLocalHost(role, nil, root), procs: map[int]*harness.Process{}}
	host, _ := os.Hostname()
	a.logf("%s agent on %s: pid %d, protocol %d, runtime files under %s", role, host, os.Getpid(), agentProtocol, root)
	defer func() {
		a.logf("input ended: stopping what still runs")
		a.stopAll()
		a.logf("done")
	}()
	in := bufio.NewReaderSize(r, 1<<20)
	enc := json.NewEncoder(w)
	dec := json.NewDecoder(in)
	for {
		var req agentRequest
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("agent: reading a request: %w", err)
		}
		result, err := a.do(req)
		a.logRequest(req, result, err)
		rep := agentReply{}
		if err != nil {
			rep.Err = err.Error()
			rep.Unavailable = errors.Is(err, harness.ErrUnavailable)
		} else if rep.Result, err = json.Marshal(result); err != nil {
			rep.Err = err.Error()
		}
		if err := enc.Encode(rep); err != nil {
			return fmt.Errorf("agent: writing a reply: %w", err)
		}
	}
}

// logf writes one line of the agent's log (its standard error, which the
// controller archives).
func (a *agent) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s %s\n", time.Now().UTC().Format("15:04:05.000000"), fmt.Sprintf(format, args...))
}

// logRequest logs the requests that change something on the host, and
// every failure.
func (a *agent) logRequest(req agentRequest, result any, err error) {
	var what string
	switch req.Op {
	case "start":
		if p, ok := result.(agentProc); ok {
			what = fmt.Sprintf("%s: pid %d: %s", p.Name, p.PID, p.Cmd)
		}
	case "run":
		var r agentRun
		json.Unmarshal(req.Args, &r)
		what = strings.Join(r.Spec.Argv, " ")
		if res, ok := result.(agentRunResult); ok && res.Err != "" {
			what += ": " + res.Err
		}
	case "stop", "pin", "remove":
		what = string(req.Args)
	default:
		if err == nil {
			return
		}
		what = string(req.Args)
	}
	if len(what) > 600 {
		what = what[:600] + "…"
	}
	if err != nil {
		what += ": " + err.Error()
	}
	a.logf("%s %s", req.Op, what)
}

// stopAll stops every process the agent started.
func (a *agent) stopAll() {
	a.mu.Lock()
	procs := make([]*harness.Process, 0, len(a.procs))
	for _, p := range a.procs {
		procs = append(procs, p)
	}
	a.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.Stop(5 * time.Second)
		}()
	}
	wg.Wait()
}

func (a *agent) proc(id int) (*harness.Process, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.procs[id]
	if !ok {
		return nil, fmt.Errorf("agent: no process %d", id)
	}
	return p, nil
}

// do performs one request.
func (a *agent) do(req agentRequest) (any, error) {
	args := func(v any) error {
		if err := json.Unmarshal(req.Args, v); err != nil {
			return fmt.Errorf("agent: arguments of %s: %w", req.Op, err)
		}
		return nil
	}
	bounded := func(d time.Duration) (context.Context, context.CancelFunc) {
		if d <= 0 {
			d = time.Hour
		}
		return context.WithTimeout(context.Background(), d)
	}
	switch req.Op {
	case "hello":
		host, _ := os.Hostname()
		return agentHello{Protocol: agentProtocol, PID: os.Getpid(), Root: a.root, Hostname: host}, nil
	case "tool":
		var t agentTool
		if err := args(&t); err != nil {
			return nil, err
		}
		return harness.LookTool(t.Configured, t.Name)
	case "start":
		var s harness.ProcSpec
		if err := args(&s); err != nil {
			return nil, err
		}
		p, err := a.host.Start(context.Background(), s)
		if err != nil {
			return nil, err
		}
		lp := p.(*harness.Process)
		a.mu.Lock()
		a.next++
		id := a.next
		a.procs[id] = lp
		a.mu.Unlock()
		return agentProc{ID: id, Name: lp.Name(), PID: lp.PID(), Ticks: lp.StartTicks(), Cmd: lp.CommandLine(), Log: lp.Log()}, nil
	case "ready":
		var r agentReady
		if err := args(&r); err != nil {
			return nil, err
		}
		p, err := a.proc(r.ID)
		if err != nil {
			return nil, err
		}
		ctx, cancel := bounded(r.Timeout)
		defer cancel()
		return struct{}{}, a.host.WaitReady(ctx, p, r.Ready)
	case "exited", "tail", "stop":
		var id agentProcID
		if err := args(&id); err != nil {
			return nil, err
		}
		p, err := a.proc(id.ID)
		if err != nil {
			// Stopped already (Stop is idempotent): it has ended.
			if req.Op == "tail" {
				return nil, err
			}
			return "stopped", nil
		}
		switch req.Op {
		case "exited":
			if err := p.Exited(); err != nil {
				return err.Error(), nil
			}
			return "", nil
		case "tail":
			return p.Tail(), nil
		}
		err = p.Stop(id.Grace)
		a.mu.Lock()
		delete(a.procs, id.ID)
		a.mu.Unlock()
		return struct{}{}, err
	case "run":
		var r agentRun
		if err := args(&r); err != nil {
			return nil, err
		}
		ctx, cancel := bounded(r.Timeout)
		defer cancel()
		out, err := a.host.Run(ctx, r.Spec)
		res := agentRunResult{Out: out}
		if err != nil {
			res.Err = err.Error()
		}
		return res, nil
	case "read":
		var p agentPath
		if err := args(&p); err != nil {
			return nil, err
		}
		return os.ReadFile(p.Path)
	case "freeport":
		var p agentPort
		if err := args(&p); err != nil {
			return nil, err
		}
		return a.host.FreePort(p.Network, p.Addr)
	case "threads":
		var p agentPath
		if err := args(&p); err != nil {
			return nil, err
		}
		return harness.ProcThreads(p.PID)
	case "pin":
		var p agentPin
		if err := args(&p); err != nil {
			return nil, err
		}
		ctx, cancel := bounded(p.Timeout)
		defer cancel()
		return struct{}{}, harness.PinAgents(ctx, p.PID, p.Pins)
	case "counters":
		var p agentPath
		if err := args(&p); err != nil {
			return nil, err
		}
		return harness.DriverCounters(p.Path)
	case "collect":
		var p agentPath
		if err := args(&p); err != nil {
			return nil, err
		}
		return collectDir(p.Path)
	case "remove":
		var p agentPath
		if err := args(&p); err != nil {
			return nil, err
		}
		if !within(a.root, p.Path) {
			return nil, fmt.Errorf("agent: %s is outside the agent's directory %s", p.Path, a.root)
		}
		return struct{}{}, os.RemoveAll(p.Path)
	}
	return nil, fmt.Errorf("agent: unknown operation %q", req.Op)
}

// within reports whether path lies strictly inside root.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != "." && !strings.HasPrefix(rel, "..") && !filepath.IsAbs(rel)
}

// collectLimit bounds one collected file: logs and text, never a driver's
// memory-mapped files.
const collectLimit = 16 << 20

// collectDir reads the small regular files under dir (logs, text, JSON),
// skipping Aeron's mapped files (*.dat, *.logbuffer), by path relative to
// dir.
func collectDir(dir string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		if strings.HasSuffix(path, ".dat") || strings.HasSuffix(path, ".logbuffer") {
			return nil
		}
		if st, err := d.Info(); err != nil || st.Size() > collectLimit {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil // gone meanwhile
		}
		rel, _ := filepath.Rel(dir, path)
		out[filepath.ToSlash(rel)] = b
		return nil
	})
	return out, err
}
