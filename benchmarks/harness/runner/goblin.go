package runner

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/goblin-kv/goblin/benchmarks/harness"
)

// graceStop is how long a server gets to exit after SIGTERM.
const graceStop = 10 * time.Second

// goblinServer measures a freshly started goblin-server process on one
// transport. Stream transports (uds, tcp) speaking RESP can be measured by
// the harness's raw client; everything else needs the goblin client
// library (see DialLibrary).
type goblinServer struct{ transport string }

// NewGoblin returns the goblin-server provider for a transport.
func NewGoblin(transport string) harness.Provider { return goblinServer{transport: transport} }

func (g goblinServer) System() string    { return harness.SysGoblin }
func (g goblinServer) Transport() string { return g.transport }
func (g goblinServer) Protocols() []harness.Protocol {
	return []harness.Protocol{harness.RESP, harness.SBE}
}
func (g goblinServer) Ops() []harness.Op { return harness.AllOps }

func (g goblinServer) Check(cfg *harness.Config, p harness.Protocol) error {
	if err := goblinCheckTransport(cfg, g.transport, p); err != nil {
		return err
	}
	if _, err := cfg.ServerSideHost().Tool(cfg, "goblin-server"); err != nil {
		return fmt.Errorf("%w (build it: go build -o BIN/goblin-server ./cmd/goblin-server)", err)
	}
	return nil
}

type goblinInstance struct {
	cfg     *harness.Config
	proc    harness.Proc
	target  string // what the client dials
	listen  string // what the server was told
	network string // unix or tcp for the raw client; "" for message transports
	addr    string
	proto   harness.Protocol
	info    map[string]string
	msg     *msgSetup // message transports: drivers and directories to clean up
}

func (g goblinServer) Start(ctx context.Context, cfg *harness.Config, p harness.Protocol, dir string) (harness.Instance, error) {
	sh := cfg.ServerSideHost()
	bin, err := sh.Tool(cfg, "goblin-server")
	if err != nil {
		return nil, err
	}
	sdir := cfg.HostDir(sh, dir)
	prof := cfg.ForCase(harness.SysGoblin, g.transport)
	proto := strings.ToLower(string(p))
	in := &goblinInstance{cfg: cfg, proto: p, info: map[string]string{}}
	var ready harness.Readiness
	switch g.transport {
	case harness.TUDS:
		in.network, in.addr = "unix", filepath.Join(sdir, "goblin.sock")
		in.listen = "uds://" + in.addr + "?proto=" + proto
		ready = harness.Readiness{Dial: "unix " + in.addr}
	case harness.TTCP:
		port, err := sh.FreePort("tcp", cfg.ServerHost)
		if err != nil {
			return nil, err
		}
		in.network, in.addr = "tcp", net.JoinHostPort(cfg.ServerHost, strconv.Itoa(port))
		in.listen = "tcp://" + in.addr + "?proto=" + proto
		ready = harness.Readiness{Dial: "tcp " + in.addr}
	default:
		ms, err := messageSetup(ctx, cfg, prof, g.transport, proto, dir)
		if err != nil {
			return nil, err
		}
		in.msg = ms
		in.listen, in.target, ready = ms.listen, ms.clientTarget, ms.ready
		for k, v := range ms.info {
			in.info[k] = v
		}
	}
	if in.target == "" {
		in.target = in.listen
		cfg.Channel("listen", in.listen, 0)
	}
	// The server listens on the case's addresses, beyond loopback on two
	// hosts, without a password: protected mode would refuse the client.
	// No save policy, so nothing is written; --dir keeps it from loading
	// a snapshot left in the default state directory.
	args := []string{bin, "--listen", in.listen, "--idle", prof.ServerIdle, "--metrics", "off", "--protected-mode", "no", "--dir", sdir}
	args = append(args, goblinExtraArgs(cfg, prof, g.transport, sdir)...)
	// With housekeeping CPUs, the process runs there and only the store
	// loop's thread moves to the server's CPUs (goblin-server --cpu); the
	// affinity check finds it there alone.
	cpus, pins := prof.ServerCPU, []harness.AgentPin(nil)
	if prof.HousekeepingCPU != "" && prof.ServerCPU != "" {
		cpus, pins = prof.HousekeepingCPU, []harness.AgentPin{{Agent: "store-loop", CPUs: prof.ServerCPU}}
	}
	in.proc, err = cfg.Launch(ctx, sh, harness.ProcSpec{Name: "goblin-server", Dir: sdir, Argv: args, CPUs: cpus}, pins)
	if err != nil {
		in.cleanup()
		return nil, err
	}
	if ready == (harness.Readiness{}) {
		ready = harness.Readiness{Log: "msg=ready"}
	}
	ready.What = "goblin-server on " + in.listen
	if err := sh.WaitReady(ctx, in.proc, ready); err != nil {
		tail := in.proc.Tail()
		in.proc.Stop(graceStop)
		in.cleanup()
		if unsupportedListen.MatchString(tail) {
			return nil, fmt.Errorf("%w: goblin-server cannot listen on %s: %s", harness.ErrUnavailable, in.listen, tail)
		}
		return nil, err
	}
	in.info["server.command"] = in.proc.CommandLine()
	in.info["server.listen"] = in.listen
	in.info["server.idle"] = prof.ServerIdle
	in.info["server.affinity"] = harness.OrAny(prof.ServerCPU)
	in.info["client.target"] = in.target
	return in, nil
}

// goblinExtraArgs are the flags beyond --listen and --idle: the loop's CPU
// pin when the profile pins the server.
func goblinExtraArgs(cfg *harness.Config, prof harness.Profile, transport, dir string) []string {
	var args []string
	if cpus, _ := harness.ParseCPUList(prof.ServerCPU); len(cpus) == 1 || len(cpus) > 1 && prof.HousekeepingCPU != "" {
		list := make([]string, len(cpus))
		for i, c := range cpus {
			list[i] = strconv.Itoa(c)
		}
		args = append(args, "--cpu", strings.Join(list, ","))
	}
	return append(args, transportServerArgs(cfg, prof, transport, dir)...)
}

func (in *goblinInstance) Dial(ctx context.Context) (harness.Prober, error) {
	return dialProbe(ctx, in.cfg, in.probeSpec())
}

// probeSpec says how the measuring client connects to this server.
func (in *goblinInstance) probeSpec() ProbeSpec {
	return ProbeSpec{Client: in.cfg.Client, Target: in.target, Network: in.network, Addr: in.addr, Proto: in.proto,
		Wait: in.cfg.ForCase(harness.SysGoblin, in.transportName()).ClientWait}
}

func (in *goblinInstance) transportName() string {
	switch {
	case in.network == "unix":
		return harness.TUDS
	case in.network == "tcp":
		return harness.TTCP
	case strings.HasPrefix(in.listen, "ring:"):
		return harness.TRing
	case strings.HasPrefix(in.listen, "aeron:ipc"):
		return harness.TAeronIPC
	}
	return harness.TAeronUDP
}

func (in *goblinInstance) Info() map[string]string { return in.info }

func (in *goblinInstance) Close() error {
	err := in.proc.Stop(graceStop)
	in.cleanup()
	return err
}

// cleanup stops what the case started besides the server (media drivers)
// and removes directories it made outside its case directory (the ring
// directory under /dev/shm).
func (in *goblinInstance) cleanup() {
	if in.msg == nil {
		return
	}
	for i := len(in.msg.procs) - 1; i >= 0; i-- {
		in.msg.procs[i].Stop(graceStop)
	}
	for _, d := range in.msg.cleanupDirs {
		os.RemoveAll(d)
	}
	in.msg = nil
}

// libraryDial connects the goblin client library when it is compiled in
// (library.go); nil means the harness's raw client measures.
var libraryDial func(ctx context.Context, cfg *harness.Config, target, wait string) (harness.Prober, error)
