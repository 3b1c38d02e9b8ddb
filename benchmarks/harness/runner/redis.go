package runner

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"

	"github.com/goblin-kv/goblin/benchmarks/harness"
)

// redisPeer measures redis-server on a Unix socket or TCP with the same
// measuring client as goblin: Redis's answer to the same question on the
// same machine in the same run.
type redisPeer struct{ transport string }

// NewRedis returns the redis-server provider for transport uds or tcp.
func NewRedis(transport string) harness.Provider { return redisPeer{transport: transport} }

func (r redisPeer) System() string                { return harness.SysRedis }
func (r redisPeer) Transport() string             { return r.transport }
func (r redisPeer) Protocols() []harness.Protocol { return []harness.Protocol{harness.RESP} }
func (r redisPeer) Ops() []harness.Op             { return harness.AllOps }

func (r redisPeer) Check(cfg *harness.Config, _ harness.Protocol) error {
	if err := cfg.OneHostOnly(r.transport); err != nil {
		return err
	}
	_, err := cfg.ServerSideHost().Tool(cfg, "redis-server")
	return err
}

type redisInstance struct {
	proc    harness.Proc
	network string
	addr    string
	cfg     *harness.Config
	version string
}

func (r redisPeer) Start(ctx context.Context, cfg *harness.Config, _ harness.Protocol, dir string) (harness.Instance, error) {
	sh := cfg.ServerSideHost()
	bin, err := sh.Tool(cfg, "redis-server")
	if err != nil {
		return nil, err
	}
	sdir := cfg.HostDir(sh, dir)
	in := &redisInstance{cfg: cfg, version: harness.HostVersion(ctx, sh, bin, "--version")}
	// No persistence, no protected-mode surprises, logs in the case directory.
	args := []string{bin, "--save", "", "--appendonly", "no", "--dir", sdir, "--daemonize", "no",
		"--databases", "1"}
	switch r.transport {
	case harness.TUDS:
		in.network, in.addr = "unix", filepath.Join(sdir, "redis.sock")
		args = append(args, "--port", "0", "--unixsocket", in.addr, "--unixsocketperm", "700")
	case harness.TTCP:
		port, err := sh.FreePort("tcp", cfg.ServerHost)
		if err != nil {
			return nil, err
		}
		in.network, in.addr = "tcp", net.JoinHostPort(cfg.ServerHost, strconv.Itoa(port))
		args = append(args, "--port", strconv.Itoa(port), "--bind", cfg.ServerHost, "--protected-mode", "no")
	default:
		return nil, fmt.Errorf("%w: redis over %s", harness.ErrUnavailable, r.transport)
	}
	cfg.Channel("listen", in.network+":"+in.addr, 0)
	in.proc, err = cfg.Launch(ctx, sh, harness.ProcSpec{Name: "redis-server", Dir: sdir, Argv: args, CPUs: cfg.Profile.ServerCPU}, nil)
	if err != nil {
		return nil, err
	}
	if err := sh.WaitReady(ctx, in.proc, harness.Readiness{What: "redis-server", Dial: in.network + " " + in.addr}); err != nil {
		in.proc.Stop(graceStop)
		return nil, err
	}
	return in, nil
}

func (in *redisInstance) Dial(ctx context.Context) (harness.Prober, error) {
	return dialProbe(ctx, in.cfg, in.probeSpec())
}

// probeSpec says how the measuring client connects to this redis-server.
func (in *redisInstance) probeSpec() ProbeSpec {
	tgt := "tcp://" + in.addr + "?proto=resp"
	if in.network == "unix" {
		tgt = "uds://" + in.addr + "?proto=resp"
	}
	return ProbeSpec{Client: in.cfg.Client, Target: tgt, Network: in.network, Addr: in.addr, Proto: harness.RESP,
		Wait: in.cfg.Profile.ClientWait}
}

func (in *redisInstance) Info() map[string]string {
	return map[string]string{
		"address":         in.network + ":" + in.addr,
		"server.command":  in.proc.CommandLine(),
		"server.version":  in.version,
		"server.idle":     "epoll (redis has no idle knob)",
		"server.affinity": harness.OrAny(in.cfg.Profile.ServerCPU),
	}
}

func (in *redisInstance) Close() error { return in.proc.Stop(graceStop) }
