package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/goblin-kv/goblin/benchmarks/harness"
)

// driverProperties are the settings every driver kind gets, as -D
// properties: the Java driver reads them as system properties and the C
// driver's -D names the same settings (aeron.dir → AERON_DIR).
func driverProperties(aeronDir, threading, idle string) []string {
	return []string{
		"aeron.dir=" + aeronDir,
		"aeron.dir.delete.on.start=true",
		"aeron.dir.delete.on.shutdown=true",
		"aeron.threading.mode=" + threading,
		"aeron.conductor.idle.strategy=" + idle,
		"aeron.sender.idle.strategy=" + idle,
		"aeron.receiver.idle.strategy=" + idle,
		"aeron.shared.idle.strategy=" + idle,
		"aeron.sharednetwork.idle.strategy=" + idle,
		"aeron.term.buffer.sparse.file=true",
		"aeron.socket.so_sndbuf=2m", "aeron.socket.so_rcvbuf=2m",
	}
}

// startDriver starts a fresh media driver of the configured kind on h, in
// dir/name, and waits for its CnC file. The driver runs with the profile's
// idle strategy (noop when spinning: the next duty cycle at once), its
// threads within DriverCPU, and, when the profile pins the agents of this
// side's driver one by one, dedicated threading with each agent on its own
// CPUs: the Java driver's threads are pinned by name once they exist, an
// aeronmd pins itself (aeron.AGENT.cpu.affinity) when an agent has one CPU.
// The case's affinity check verifies both.
func startDriver(ctx context.Context, cfg *harness.Config, h harness.Host, prof harness.Profile, dir, name string) (*harness.DriverProc, error) {
	spec := prof.ServerAgents
	if h.Role() == "client" {
		spec = prof.ClientAgents
	}
	agents, err := harness.ParseAgentPins(spec)
	if err != nil {
		return nil, err
	}
	aeronDir := filepath.Join(dir, name)
	dc, err := driverCommand(cfg, h, prof, aeronDir, agents)
	if err != nil {
		return nil, err
	}
	argv, pinLater, threading, idle := dc.argv, dc.pinLater, dc.threading, dc.idle
	env := cfg.CaseDriverEnv()
	p, err := cfg.Launch(ctx, h, harness.ProcSpec{Name: name, Dir: dir, Argv: argv, Env: env, CPUs: prof.DriverCPU}, agents)
	if err != nil {
		return nil, err
	}
	if err := h.WaitReady(ctx, p, harness.Readiness{What: "media driver " + name, File: filepath.Join(aeronDir, "cnc.dat")}); err != nil {
		p.Stop(graceStop)
		return nil, err
	}
	if len(pinLater) > 0 {
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := h.PinAgents(pctx, p.PID(), pinLater)
		cancel()
		if err != nil {
			p.Stop(graceStop)
			return nil, fmt.Errorf("media driver %s: %w", name, err)
		}
	}
	info := fmt.Sprintf("%s (kind %s, threading %s, agents %s", p.CommandLine(), cfg.Driver, threading, idle)
	if len(agents) > 0 {
		info += ", pinned " + harness.FormatAgentPins(agents)
	}
	if len(env) > 0 {
		info += ", environment " + strings.Join(env, " ")
	}
	d := &harness.DriverProc{Proc: p, Host: h, Dir: aeronDir, Info: info + ")"}
	if cfg.Track != nil {
		cfg.Track.AddDriver(d)
	}
	return d, nil
}

// driverCmd is a driver's command line and what is left to do after it
// starts.
type driverCmd struct {
	argv      []string
	pinLater  []harness.AgentPin // agents to pin by thread once the driver runs
	threading string             // SHARED or DEDICATED
	idle      string             // the agents' idle strategy
}

// driverCommand builds the command line of a driver of the configured kind
// with its Aeron directory at aeronDir.
// DriverInProcess starts a Java driver: only the Java ping-pong asks for a
// driver process then.
func driverCommand(cfg *harness.Config, h harness.Host, prof harness.Profile, aeronDir string, agents []harness.AgentPin) (driverCmd, error) {
	dc := driverCmd{idle: aeronIdle(prof.DriverIdle), threading: "SHARED"}
	if prof.DriverIdle == "spin" || len(agents) > 0 {
		dc.threading = "DEDICATED"
	}
	props := driverProperties(aeronDir, dc.threading, dc.idle)
	switch cfg.Driver.Kind {
	case "", harness.DriverJava, harness.DriverInProcess:
		java, jar, err := javaTools(cfg, h)
		if err != nil {
			return dc, err
		}
		dc.argv = append(append([]string{java}, jvmFlags...), "-cp", jar)
		for _, p := range props {
			dc.argv = append(dc.argv, "-D"+p)
		}
		dc.argv = append(dc.argv, "io.aeron.driver.MediaDriver")
		dc.pinLater = agents
	case harness.DriverAeronmd:
		bin, err := h.Tool(cfg, "aeronmd")
		if err != nil {
			return dc, err
		}
		for _, a := range agents {
			if cpus, _ := harness.ParseCPUList(a.CPUs); len(cpus) == 1 {
				props = append(props, fmt.Sprintf("aeron.%s.cpu.affinity=%d", a.Agent, cpus[0]))
			} else {
				dc.pinLater = append(dc.pinLater, a)
			}
		}
		dc.argv = []string{bin}
		for _, p := range props {
			dc.argv = append(dc.argv, "-D"+p)
		}
	default:
		return dc, fmt.Errorf("%w: driver kind %q", harness.ErrConfig, cfg.Driver.Kind)
	}
	return dc, nil
}
