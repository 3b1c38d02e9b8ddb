package harness

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// redisPeer measures redis-server on a Unix socket or TCP with the same
// measuring client as goblin: Redis's answer to the same question on the
// same machine in the same run.
type redisPeer struct{ transport string }

// NewRedis returns the redis-server provider for transport uds or tcp.
func NewRedis(transport string) Provider { return redisPeer{transport: transport} }

func (r redisPeer) System() string        { return SysRedis }
func (r redisPeer) Transport() string     { return r.transport }
func (r redisPeer) Protocols() []Protocol { return []Protocol{RESP} }
func (r redisPeer) Ops() []Op             { return AllOps }

func (r redisPeer) Check(cfg *Config, _ Protocol) error {
	_, err := lookTool(cfg.RedisServer, "redis-server")
	return err
}

type redisInstance struct {
	proc    *process
	network string
	addr    string
	cfg     *Config
	version string
}

func (r redisPeer) Start(ctx context.Context, cfg *Config, _ Protocol, dir string) (Instance, error) {
	bin, err := lookTool(cfg.RedisServer, "redis-server")
	if err != nil {
		return nil, err
	}
	in := &redisInstance{cfg: cfg, version: redisVersion(bin)}
	// No persistence, no protected-mode surprises, logs in the case directory.
	args := []string{bin, "--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no",
		"--databases", "1"}
	switch r.transport {
	case TUDS:
		in.network, in.addr = "unix", filepath.Join(dir, "redis.sock")
		args = append(args, "--port", "0", "--unixsocket", in.addr, "--unixsocketperm", "700")
	case TTCP:
		port, err := serverPort(cfg)
		if err != nil {
			return nil, err
		}
		in.network, in.addr = "tcp", net.JoinHostPort(cfg.ServerHost, strconv.Itoa(port))
		args = append(args, "--port", strconv.Itoa(port), "--bind", cfg.ServerHost, "--protected-mode", "no")
	default:
		return nil, fmt.Errorf("%w: redis over %s", ErrUnavailable, r.transport)
	}
	in.proc, err = startProcess(cfg, dir, "redis-server", true, cfg.Profile.ServerCPU, nil, args...)
	if err != nil {
		return nil, err
	}
	if err := waitFor(ctx, in.proc, "redis-server", dialable(in.network, in.addr)); err != nil {
		in.proc.stop(graceStop)
		return nil, err
	}
	return in, nil
}

func (in *redisInstance) Dial(ctx context.Context) (Prober, error) {
	wait := in.cfg.Profile.ClientWait
	if in.cfg.Client == ClientLibrary && libraryDial != nil {
		tgt := "tcp://" + in.addr + "?proto=resp"
		if in.network == "unix" {
			tgt = "uds://" + in.addr + "?proto=resp"
		}
		return libraryDial(ctx, in.cfg, tgt, wait)
	}
	p, err := dialRawRESP(in.network, in.addr, in.cfg, wait)
	if err != nil {
		return nil, err
	}
	return p, p.preload()
}

func (in *redisInstance) Info() map[string]string {
	return map[string]string{
		"address":         in.network + ":" + in.addr,
		"server.command":  in.proc.commandLine(),
		"server.version":  in.version,
		"server.idle":     "epoll (redis has no idle knob)",
		"server.affinity": orAny(in.cfg.Profile.ServerCPU),
	}
}

func (in *redisInstance) Close() error { return in.proc.stop(graceStop) }

// redisVersion asks redis-server for its version line.
func redisVersion(bin string) string {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
