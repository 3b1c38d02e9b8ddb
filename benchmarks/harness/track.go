package harness

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// CaseTrack records what one case started, on which host, with which CPU
// placement, and the channels it used, for the per-case archive files
// (processes.txt, affinity.txt, channels.txt, driver counters) and the
// affinity check after start.
type CaseTrack struct {
	mu       sync.Mutex
	procs    []trackedProc
	drivers  []*DriverProc
	Channels []string
}

// trackedProc is one process of a case and the placement asked for it.
type trackedProc struct {
	host   Host
	proc   Proc
	cpus   string     // the process's CPU list ("" = not pinned)
	agents []AgentPin // threads pinned one by one: driver agents, the store loop
}

// Launch starts a process of the current case on h and records it.
func (c *Config) Launch(ctx context.Context, h Host, s ProcSpec, agents []AgentPin) (Proc, error) {
	p, err := h.Start(ctx, s)
	if err != nil {
		return nil, err
	}
	if c.Track != nil {
		c.Track.mu.Lock()
		c.Track.procs = append(c.Track.procs, trackedProc{host: h, proc: p, cpus: s.CPUs, agents: agents})
		c.Track.mu.Unlock()
	}
	return p, nil
}

// Channel records one line of channels.txt: what, the exact URI, the
// stream id (0 when the channel has none).
func (c *Config) Channel(what, uri string, stream int) {
	if c.Track == nil {
		return
	}
	line := fmt.Sprintf("%-22s %s", what+":", uri)
	if stream != 0 {
		line += fmt.Sprintf("  stream %d", stream)
	}
	c.Track.mu.Lock()
	c.Track.Channels = append(c.Track.Channels, line)
	c.Track.mu.Unlock()
}

func (t *CaseTrack) AddDriver(d *DriverProc) {
	t.mu.Lock()
	t.drivers = append(t.drivers, d)
	t.mu.Unlock()
}

// DriverList is a copy of the media drivers the case started so far.
func (t *CaseTrack) DriverList() []*DriverProc {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.drivers)
}

// ProcessesText is processes.txt: one line per process the case started.
func (t *CaseTrack) ProcessesText() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b strings.Builder
	b.WriteString("# host role, process, pid, start time (clock ticks after boot), CPUs asked for (the process's, then single threads'), command\n")
	for _, p := range t.procs {
		cpus := OrAny(p.cpus)
		if len(p.agents) > 0 {
			cpus += " threads " + FormatAgentPins(p.agents)
		}
		fmt.Fprintf(&b, "%s %s pid=%d start=%d cpus=%s cmd=%s\n", p.host.Role(), p.proc.Name(), p.proc.PID(),
			p.proc.StartTicks(), cpus, p.proc.CommandLine())
	}
	return b.String()
}

func FormatAgentPins(pins []AgentPin) string {
	parts := make([]string, len(pins))
	for i, p := range pins {
		parts[i] = p.Agent + "=" + p.CPUs
	}
	return strings.Join(parts, ",")
}

// SettleAffinity is checkAffinity, repeated while it fails for up to
// settle: a process pins its threads after it starts (goblin-server's
// store loop pins itself once it runs, which may be after the server
// answers), so the first look can come too early.
func (t *CaseTrack) SettleAffinity(ctx context.Context, settle time.Duration) (string, error) {
	deadline := time.Now().Add(settle)
	for delay := 10 * time.Millisecond; ; delay = min(2*delay, 500*time.Millisecond) {
		text, err := t.CheckAffinity()
		if err == nil || time.Now().After(deadline) {
			return text, err
		}
		select {
		case <-ctx.Done():
			return text, err
		case <-time.After(delay):
		}
	}
}

// CheckAffinity reads every thread of every process the case started and
// checks it runs where it was asked to: a pinned agent thread on exactly
// its CPUs, every other thread within the process's CPU list. It returns
// affinity.txt and the first violation.
func (t *CaseTrack) CheckAffinity() (string, error) {
	t.mu.Lock()
	procs := slices.Clone(t.procs)
	t.mu.Unlock()
	var b strings.Builder
	b.WriteString("# host role, process, pid, thread id, thread name, Cpus_allowed_list (/proc/PID/task/TID/status), verdict\n")
	var first error
	for _, p := range procs {
		threads, err := p.host.Threads(p.proc.PID())
		if err != nil {
			fmt.Fprintf(&b, "%s %s pid=%d: %v\n", p.host.Role(), p.proc.Name(), p.proc.PID(), err)
			if first == nil && p.proc.Exited() == nil {
				first = fmt.Errorf("affinity check of %s: %w", p.proc.Name(), err)
			}
			continue
		}
		verdicts, err := judgeAffinity(p, threads)
		if err != nil && first == nil {
			first = fmt.Errorf("affinity check: %s on the %s host: %w", p.proc.Name(), p.host.Role(), err)
		}
		for i, th := range threads {
			fmt.Fprintf(&b, "%s %s pid=%d tid=%d %-16q cpus=%s %s\n", p.host.Role(), p.proc.Name(), p.proc.PID(),
				th.TID, th.Comm, th.CPUs, verdicts[i])
		}
	}
	return b.String(), first
}

// judgeAffinity gives each thread a verdict and returns the first
// violation. Agent threads are found by name; a driver that does not name
// its threads passes when some thread runs on exactly the agent's CPUs.
func judgeAffinity(p trackedProc, threads []ThreadInfo) ([]string, error) {
	verdicts := make([]string, len(threads))
	var first error
	fail := func(i int, format string, args ...any) {
		verdicts[i] = "WRONG: " + fmt.Sprintf(format, args...)
		if first == nil {
			first = fmt.Errorf("thread %d (%s) %s", threads[i].TID, threads[i].Comm, fmt.Sprintf(format, args...))
		}
	}
	claimed := make([]bool, len(threads))
	for _, pin := range p.agents {
		want := NormCPUs(pin.CPUs)
		named := false
		for i, th := range threads {
			if agentOf(th.Comm) != pin.Agent {
				continue
			}
			named, claimed[i] = true, true
			if NormCPUs(th.CPUs) == want {
				verdicts[i] = "ok (" + pin.Agent + " asked " + pin.CPUs + ")"
			} else {
				fail(i, "runs on %s, its %s pin asked for %s", th.CPUs, pin.Agent, pin.CPUs)
			}
		}
		if named {
			continue
		}
		found := false
		for i, th := range threads {
			if !claimed[i] && NormCPUs(th.CPUs) == want {
				claimed[i], found = true, true
				verdicts[i] = "ok (unnamed; on " + pin.Agent + "'s " + pin.CPUs + ")"
				break
			}
		}
		if !found && first == nil {
			first = fmt.Errorf("no thread runs on exactly CPU %s, which the %s agent asked for", pin.CPUs, pin.Agent)
		}
	}
	within, _ := ParseCPUList(p.cpus)
	for i, th := range threads {
		if claimed[i] {
			continue
		}
		if len(within) == 0 {
			verdicts[i] = "ok (not pinned)"
			continue
		}
		got, err := ParseCPUList(th.CPUs)
		if err != nil {
			fail(i, "unreadable CPU list %q", th.CPUs)
			continue
		}
		inside := true
		for _, c := range got {
			inside = inside && slices.Contains(within, c)
		}
		if inside {
			verdicts[i] = "ok (within " + p.cpus + ")"
		} else {
			fail(i, "runs on %s, outside the %s asked for", th.CPUs, p.cpus)
		}
	}
	return verdicts, first
}

// NormCPUs writes a CPU list in its canonical form ("1,2,3" → "1-3").
func NormCPUs(s string) string {
	list, err := ParseCPUList(s)
	if err != nil {
		return s
	}
	slices.Sort(list)
	return formatCPUList(slices.Compact(list))
}

// DriverProc is a media driver a case started on one host.
type DriverProc struct {
	Proc
	Host Host
	Dir  string // its Aeron directory, on its host
	Info string // command line, threading and environment, for the archive
}

// HostDir maps a case directory in the archive to the directory the case
// keeps its runtime files in on h (the same directory on this machine).
func (c *Config) HostDir(h Host, dir string) string {
	rel, err := filepath.Rel(c.OutDir, dir)
	if err != nil || strings.HasPrefix(rel, "..") {
		return dir
	}
	return h.Dir(rel)
}
