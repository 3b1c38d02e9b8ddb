package harness

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// graceStop is how long a server gets to exit after SIGTERM.
const graceStop = 10 * time.Second

// goblinServer measures a freshly started goblin-server process on one
// transport. Stream transports (uds, tcp) speaking RESP can be measured by
// the harness's raw client; everything else needs the goblin client
// library (see DialLibrary).
type goblinServer struct{ transport string }

// NewGoblin returns the goblin-server provider for a transport.
func NewGoblin(transport string) Provider { return goblinServer{transport: transport} }

func (g goblinServer) System() string    { return SysGoblin }
func (g goblinServer) Transport() string { return g.transport }
func (g goblinServer) Protocols() []Protocol {
	return []Protocol{RESP, SBE}
}
func (g goblinServer) Ops() []Op { return AllOps }

func (g goblinServer) Check(cfg *Config, p Protocol) error {
	if err := goblinCheckTransport(g.transport, p); err != nil {
		return err
	}
	if _, err := lookTool(cfg.GoblinServer, "goblin-server"); err != nil {
		return fmt.Errorf("%w (build it: go build -o BIN/goblin-server ./cmd/goblin-server)", err)
	}
	return nil
}

type goblinInstance struct {
	cfg     *Config
	proc    *process
	target  string // what the client dials
	listen  string // what the server was told
	network string // unix or tcp for the raw client; "" for message transports
	addr    string
	proto   Protocol
	info    map[string]string
	msg     *msgSetup // message transports: drivers and directories to clean up
}

// portSeq hands out ports when the server runs in another network
// namespace, where the harness cannot ask the kernel for a free one.
var portSeq atomic.Int32

// serverPort returns a TCP port for a server to listen on.
func serverPort(cfg *Config) (int, error) {
	if len(cfg.ServerWrap) > 0 {
		return 41000 + int(portSeq.Add(1)), nil
	}
	return freePort(cfg.ServerHost)
}

func (g goblinServer) Start(ctx context.Context, cfg *Config, p Protocol, dir string) (Instance, error) {
	bin, err := lookTool(cfg.GoblinServer, "goblin-server")
	if err != nil {
		return nil, err
	}
	prof := cfg.Profile.ForTransport(g.transport)
	proto := strings.ToLower(string(p))
	in := &goblinInstance{cfg: cfg, proto: p, info: map[string]string{}}
	var ready func() error
	switch g.transport {
	case TUDS:
		in.network, in.addr = "unix", filepath.Join(dir, "goblin.sock")
		in.listen = "uds://" + in.addr + "?proto=" + proto
		ready = dialable(in.network, in.addr)
	case TTCP:
		port, err := serverPort(cfg)
		if err != nil {
			return nil, err
		}
		in.network, in.addr = "tcp", net.JoinHostPort(cfg.ServerHost, strconv.Itoa(port))
		in.listen = "tcp://" + in.addr + "?proto=" + proto
		ready = dialable(in.network, in.addr)
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
	}
	args := []string{bin, "--listen", in.listen, "--idle", prof.ServerIdle, "--metrics", "off"}
	args = append(args, goblinExtraArgs(cfg, prof, g.transport, dir)...)
	in.proc, err = startProcess(cfg, dir, "goblin-server", true, prof.ServerCPU, nil, args...)
	if err != nil {
		in.cleanup()
		return nil, err
	}
	if ready == nil {
		ready = in.logSays("msg=ready")
	}
	if err := waitFor(ctx, in.proc, "goblin-server on "+in.listen, ready); err != nil {
		in.proc.stop(graceStop)
		in.cleanup()
		if unsupportedListen.MatchString(in.proc.tail()) {
			return nil, fmt.Errorf("%w: goblin-server cannot listen on %s: %s", ErrUnavailable, in.listen, in.proc.tail())
		}
		return nil, err
	}
	in.info["server.command"] = in.proc.commandLine()
	in.info["server.listen"] = in.listen
	in.info["server.idle"] = prof.ServerIdle
	in.info["server.affinity"] = orAny(prof.ServerCPU)
	in.info["client.target"] = in.target
	return in, nil
}

// goblinExtraArgs are the flags beyond --listen and --idle: the loop's CPU
// pin when the profile pins the server.
func goblinExtraArgs(cfg *Config, prof Profile, transport, dir string) []string {
	var args []string
	if cpus, _ := ParseCPUList(prof.ServerCPU); len(cpus) == 1 {
		args = append(args, "--cpu", strconv.Itoa(cpus[0]))
	}
	return append(args, transportServerArgs(cfg, prof, transport, dir)...)
}

func (in *goblinInstance) Dial(ctx context.Context) (Prober, error) {
	wait := in.cfg.Profile.ForTransport(in.transportName()).ClientWait
	if in.cfg.Client == ClientRaw && in.network != "" && in.proto == RESP {
		p, err := dialRawRESP(in.network, in.addr, in.cfg, wait)
		if err != nil {
			return nil, err
		}
		return p, p.preload()
	}
	if libraryDial == nil {
		return nil, fmt.Errorf("%w: measuring %s over %s needs the goblin client library (package client)", ErrUnavailable, in.proto, in.target)
	}
	return libraryDial(ctx, in.cfg, in.target, wait)
}

func (in *goblinInstance) transportName() string {
	switch {
	case in.network == "unix":
		return TUDS
	case in.network == "tcp":
		return TTCP
	case strings.HasPrefix(in.listen, "ring:"):
		return TRing
	case strings.HasPrefix(in.listen, "aeron:ipc"):
		return TAeronIPC
	}
	return TAeronUDP
}

func (in *goblinInstance) Info() map[string]string { return in.info }

func (in *goblinInstance) Close() error {
	err := in.proc.stop(graceStop)
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
		in.msg.procs[i].stop(graceStop)
	}
	for _, d := range in.msg.cleanupDirs {
		os.RemoveAll(d)
	}
	in.msg = nil
}

// logSays is a readiness check: the server's log contains s.
func (in *goblinInstance) logSays(s string) func() error {
	return func() error {
		b, err := os.ReadFile(in.proc.log)
		if err != nil {
			return err
		}
		if !strings.Contains(string(b), s) {
			return fmt.Errorf("goblin-server has not logged %q yet", s)
		}
		return nil
	}
}

// libraryDial connects the goblin client library when it is compiled in
// (library.go); nil means the harness's raw client measures.
var libraryDial func(ctx context.Context, cfg *Config, target, wait string) (Prober, error)
