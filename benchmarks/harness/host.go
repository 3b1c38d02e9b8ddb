package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/aeron"
)

// Host is a machine the harness places processes on. A run has two: the
// server side (servers, the server's media driver, Aeron's Pong) and the
// client side (the measuring client and its media driver). By default both
// are this machine (LocalHost), the server side optionally wrapped in a
// network namespace; with -hosts each is another machine reached over ssh
// (sshHost), where a goblin-bench agent runs the same operations.
//
// Paths given to a Host are paths on that host.
type Host interface {
	// Role is "server" or "client".
	Role() string
	// Describe names the host for the archive: "this machine", "this
	// machine, ip netns exec NS", "ssh DEST".
	Describe() string
	// Remote reports whether the host's files live elsewhere than the
	// archive: its case directories are then copied back (Collect).
	Remote() bool
	// Dir maps a path relative to the run's output directory (run-1/case)
	// to the directory the host keeps that case's runtime files in.
	Dir(rel string) string
	// Tool finds a program on the host: a staged file (goblin-server,
	// goblin-bench, the driver), else the configured path, else PATH.
	Tool(cfg *Config, name string) (string, error)
	// Start launches a long-running process in its own process group.
	Start(ctx context.Context, s ProcSpec) (Proc, error)
	// WaitReady polls r until it holds, p exits, or ctx ends.
	WaitReady(ctx context.Context, p Proc, r Readiness) error
	// Run runs a process to completion (bounded by ctx) and returns its
	// combined output; with s.Name set, the output goes to s.Dir/Name.log
	// instead and the tail of that log is returned.
	Run(ctx context.Context, s ProcSpec) ([]byte, error)
	// ReadFile reads a file on the host.
	ReadFile(path string) ([]byte, error)
	// FreePort picks an unused port ("tcp" or "udp") on addr.
	FreePort(network, addr string) (int, error)
	// Threads lists a process's threads with their CPU affinity.
	Threads(pid int) ([]ThreadInfo, error)
	// PinAgents waits (up to ctx) for the named agent threads of pid and
	// restricts each to its CPU list.
	PinAgents(ctx context.Context, pid int, pins []AgentPin) error
	// Counters dumps the counters and distinct error log of the media
	// driver whose Aeron directory is dir.
	Counters(dir string) (string, error)
	// Collect returns the small files (logs, text) under dir, by path
	// relative to dir; Remove deletes dir. Both only act on remote hosts.
	Collect(dir string) (map[string][]byte, error)
	Remove(dir string) error
	// Close stops everything the host still runs for the harness.
	Close() error
}

// ProcSpec describes a process to start on a host.
type ProcSpec struct {
	Name  string   // log file Dir/Name.log; "" for Run to capture output
	Dir   string   // working directory (created when missing)
	Argv  []string // program and arguments
	Env   []string // added to the host's environment
	CPUs  string   // CPU list for taskset -c; "" = not pinned
	Stdin string   // written to the process's standard input
}

// Proc is a process a Host started.
type Proc interface {
	Name() string
	PID() int
	// StartTicks is the process's start time in clock ticks after boot
	// (/proc/PID/stat field 22): with the PID, it names the process
	// uniquely, so the archive shows that every case had fresh ones.
	StartTicks() int64
	CommandLine() string
	// Log is the process's log file on its host.
	Log() string
	// Exited is nil while the process runs, else says how it ended with
	// the tail of its log.
	Exited() error
	// Tail is the end of the process's log.
	Tail() string
	// Stop ends the process group: SIGTERM, then SIGKILL after grace.
	Stop(grace time.Duration) error
}

// Readiness is a condition a host checks for a process it started.
type Readiness struct {
	What string // for error messages: "goblin-server on tcp://…"
	Dial string // "tcp HOST:PORT" or "unix PATH": accepts a connection
	File string // exists and is not empty (a driver's cnc.dat)
	Log  string // the process's log contains this text
}

// ThreadInfo is one thread of a process and where it may run.
type ThreadInfo struct {
	TID  int    `json:"tid"`
	Comm string `json:"comm"`
	CPUs string `json:"cpus"` // Cpus_allowed_list
}

// AgentPin restricts a media-driver agent thread (conductor, sender or
// receiver: a substring of its thread name) to a CPU list.
type AgentPin struct {
	Agent string `json:"agent"`
	CPUs  string `json:"cpus"`
}

// LocalHost runs processes on this machine, the server side optionally
// inside a network namespace (wrap = ip netns exec NAME).
type LocalHost struct {
	role string
	wrap []string
	out  string // the run's output directory: case files live in the archive
}

// NewLocalHost is this machine in a role; wrap prefixes every command.
func NewLocalHost(role string, wrap []string, outDir string) *LocalHost {
	return &LocalHost{role: role, wrap: wrap, out: outDir}
}

func (h *LocalHost) Role() string { return h.role }
func (h *LocalHost) Describe() string {
	if len(h.wrap) > 0 {
		return "this machine, " + strings.Join(h.wrap, " ")
	}
	return "this machine"
}
func (h *LocalHost) Remote() bool          { return false }
func (h *LocalHost) Dir(rel string) string { return filepath.Join(h.out, rel) }
func (h *LocalHost) Close() error          { return nil }

func (h *LocalHost) Tool(cfg *Config, name string) (string, error) {
	switch name {
	case "goblin-server":
		return LookTool(cfg.GoblinServer, name)
	case "redis-server":
		return LookTool(cfg.RedisServer, name)
	case "java":
		return LookTool(cfg.Java, name)
	case "aeron-jar":
		return AeronJar(cfg)
	case "aeronmd":
		return LookTool(cfg.Driver.Binary, name)
	case "goblin-bench":
		return os.Executable()
	}
	return LookTool("", name)
}

// command builds the full argv: the wrap (namespace), then taskset.
func (h *LocalHost) command(s ProcSpec) ([]string, error) {
	full := s.Argv
	if s.CPUs != "" {
		ts, err := LookTool("", "taskset")
		if err != nil {
			return nil, fmt.Errorf("%w: pinning %s to CPU %s needs taskset (util-linux)", ErrUnavailable, s.Name, s.CPUs)
		}
		full = append([]string{ts, "-c", s.CPUs}, full...)
	}
	if len(h.wrap) > 0 {
		full = append(append([]string(nil), h.wrap...), full...)
	}
	return full, nil
}

func (h *LocalHost) Start(ctx context.Context, s ProcSpec) (Proc, error) {
	argv, err := h.command(s)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return nil, err
	}
	return startProcess(s.Dir, s.Name, argv, s.Env, s.Stdin)
}

func (h *LocalHost) WaitReady(ctx context.Context, p Proc, r Readiness) error {
	return waitFor(ctx, p, r.What, readiness(r, p))
}

func (h *LocalHost) Run(ctx context.Context, s ProcSpec) ([]byte, error) {
	argv, err := h.command(s)
	if err != nil {
		return nil, err
	}
	if s.Dir != "" {
		if err := os.MkdirAll(s.Dir, 0o755); err != nil {
			return nil, err
		}
	}
	return runProcess(ctx, s.Dir, s.Name, argv, s.Env, s.Stdin)
}

func (h *LocalHost) ReadFile(path string) ([]byte, error) { return os.ReadFile(path) }

// portSeq hands out ports when the server runs in another network
// namespace, where the harness cannot ask the kernel for a free one.
var portSeq atomic.Int32

func (h *LocalHost) FreePort(network, addr string) (int, error) {
	if len(h.wrap) > 0 {
		base := 41000
		if network == "udp" {
			base = 42000
		}
		return base + int(portSeq.Add(1)), nil
	}
	if network == "udp" {
		return FreeUDPPort(addr)
	}
	return freePort(addr)
}

func (h *LocalHost) Threads(pid int) ([]ThreadInfo, error) { return ProcThreads(pid) }

func (h *LocalHost) PinAgents(ctx context.Context, pid int, pins []AgentPin) error {
	return PinAgents(ctx, pid, pins)
}

func (h *LocalHost) Counters(dir string) (string, error) { return DriverCounters(dir) }

func (h *LocalHost) Collect(string) (map[string][]byte, error) { return nil, nil }
func (h *LocalHost) Remove(string) error                       { return nil }

// readiness turns a Readiness into a check run where the process runs.
func readiness(r Readiness, p Proc) func() error {
	switch {
	case r.Dial != "":
		network, addr, _ := strings.Cut(r.Dial, " ")
		return dialable(network, addr)
	case r.File != "":
		return func() error {
			st, err := os.Stat(r.File)
			if err != nil {
				return err
			}
			if st.Size() == 0 {
				return fmt.Errorf("%s is empty", r.File)
			}
			return nil
		}
	case r.Log != "":
		return func() error {
			b, err := os.ReadFile(p.Log())
			if err != nil {
				return err
			}
			if !strings.Contains(string(b), r.Log) {
				return fmt.Errorf("%s has not logged %q yet", p.Name(), r.Log)
			}
			return nil
		}
	}
	return func() error { return nil }
}

// ProcThreads reads every thread's name and allowed CPUs from /proc.
func ProcThreads(pid int) ([]ThreadInfo, error) {
	dirs, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/[0-9]*", pid))
	if err != nil {
		return nil, err
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("process %d is not running", pid)
	}
	var out []ThreadInfo
	for _, d := range dirs {
		tid, _ := strconv.Atoi(filepath.Base(d))
		status, err := os.ReadFile(filepath.Join(d, "status"))
		if err != nil {
			continue // the thread ended meanwhile
		}
		t := ThreadInfo{TID: tid, Comm: ReadTrim(filepath.Join(d, "comm"), "?")}
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				t.CPUs = strings.TrimSpace(v)
			}
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TID < out[j].TID })
	return out, nil
}

// PinAgents waits for the agent threads named in pins and restricts each to
// its CPUs (sched_setaffinity on the thread id).
func PinAgents(ctx context.Context, pid int, pins []AgentPin) error {
	for _, pin := range pins {
		cpus, err := ParseCPUList(pin.CPUs)
		if err != nil || len(cpus) == 0 {
			return fmt.Errorf("%w: agent %s CPU list %q", ErrConfig, pin.Agent, pin.CPUs)
		}
		var set unix.CPUSet
		for _, c := range cpus {
			set.Set(c)
		}
		for delay := time.Millisecond; ; {
			threads, err := ProcThreads(pid)
			if err != nil {
				return err
			}
			found := 0
			for _, t := range threads {
				if agentOf(t.Comm) != pin.Agent {
					continue
				}
				found++
				if err := unix.SchedSetaffinity(t.TID, &set); err != nil {
					return fmt.Errorf("pin %s thread %d to CPU %s: %w", pin.Agent, t.TID, pin.CPUs, err)
				}
			}
			if found > 0 {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("no %s thread appeared in process %d (threads: %s): %w", pin.Agent, pid, threadNames(threads), ctx.Err())
			case <-time.After(delay):
			}
			delay = min(2*delay, 100*time.Millisecond)
		}
	}
	return nil
}

// agentOf names the media-driver agent a thread runs, from its name: the
// Java driver's dedicated threads are "driver-conductor" (cut to
// "driver-conducto" by the kernel), "sender" and "receiver", and the C
// driver's the same, with or without brackets. Any other name (a
// composite agent of the shared threading modes, a JVM thread) is none.
func agentOf(comm string) string {
	name := strings.TrimSuffix(strings.TrimPrefix(comm, "["), "]")
	switch name {
	case "driver-conductor", "driver-conducto", "conductor":
		return "conductor"
	case "sender", "receiver":
		return name
	}
	return ""
}

// driverAgents are the media driver's agents, in the order the archive
// lists them.
var driverAgents = []string{"conductor", "sender", "receiver"}

func threadNames(ts []ThreadInfo) string {
	names := make([]string, 0, len(ts))
	for _, t := range ts {
		names = append(names, t.Comm)
	}
	return strings.Join(names, ",")
}

// DriverCounters dumps a media driver's counters and distinct errors, as
// AeronStat and ErrorStat print them, read from its cnc.dat.
func DriverCounters(dir string) (string, error) {
	cnc, err := aeron.OpenCnC(dir)
	if err != nil {
		return "", err
	}
	defer cnc.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "%s - driver pid %d, heartbeat age %d ms, directory %s\n", time.Now().UTC().Format(time.RFC3339),
		cnc.DriverPID(), time.Now().UnixMilli()-cnc.DriverHeartbeat(), dir)
	if err := aeron.WriteCounters(&b, cnc.Counters()); err != nil {
		return "", err
	}
	b.WriteString("\n")
	if _, err := aeron.WriteErrors(&b, cnc); err != nil {
		return "", err
	}
	return b.String(), nil
}
