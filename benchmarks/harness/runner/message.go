package runner

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/goblin-kv/goblin/benchmarks/harness"
)

// msgSetup is what a message transport (ring, Aeron IPC, Aeron UDP) needs
// around goblin-server: the target it listens on, the target the client
// dials, how to tell it is ready, processes started for it (media drivers)
// and directories to remove afterwards.
type msgSetup struct {
	listen       string
	clientTarget string
	ready        harness.Readiness // zero: wait for the server's "ready" log line
	info         map[string]string
	procs        []harness.Proc
	cleanupDirs  []string
}

// messageSetup prepares a message transport for one goblin case.
func messageSetup(ctx context.Context, cfg *harness.Config, prof harness.Profile, transport, proto, dir string) (*msgSetup, error) {
	switch transport {
	case harness.TRing:
		// The ring directory goes on /dev/shm (tmpfs: the rings' pages never
		// touch a disk) when there is one, else in the case directory. Its
		// name carries the run's id, so leftover checks see only this run's.
		rdir := filepath.Join(dir, "ring")
		var cleanup []string
		if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
			if rdir, err = os.MkdirTemp("/dev/shm", RingDirPrefix(cfg.RunID)); err != nil {
				return nil, err
			}
			cleanup = append(cleanup, rdir)
		} else if err := os.MkdirAll(rdir, 0o700); err != nil {
			return nil, err
		}
		listen := "ring://" + rdir + "?proto=" + proto
		wait := "spin"
		if prof.ClientWait == "block" {
			wait = "park"
		}
		// The client declares the server gone when its heartbeat stops for
		// server_timeout (3 s by default); on a loaded machine a server
		// pinned to a busy CPU can miss that without being gone.
		cfg.Channel("ring", listen, 0)
		return &msgSetup{
			listen:       listen,
			clientTarget: listen + "&wait=" + wait + "&server_timeout=60s",
			ready:        harness.Readiness{What: "goblin-server on " + listen, Dial: "unix " + filepath.Join(rdir, "ctl.sock")},
			info:         map[string]string{"ring.dir": rdir},
			cleanupDirs:  cleanup,
		}, nil
	case harness.TAeronIPC, harness.TAeronUDP:
		return aeronSetup(ctx, cfg, prof, transport, proto, dir)
	}
	return nil, fmt.Errorf("%w: goblin over %s", harness.ErrUnavailable, transport)
}

// RingDirPrefix is the name prefix of the ring directories a run with this
// id makes under /dev/shm.
func RingDirPrefix(runID string) string { return "goblin-bench-" + runID + "-" }

// aeronSetup starts the media drivers of a goblin Aeron case itself (so the
// server's driver runs where the server runs, with the profile's threading,
// idle strategies and CPUs, configured exactly as the raw Aeron floor's) and
// points goblin at them with driver=external: one driver for IPC, one per
// side for UDP. The UDP channels are Goblin's response channels, both
// addresses on the server (the path's server address):
//
//	request:  aeron:udp?endpoint=SERVER:REQ
//	response: aeron:udp?control=SERVER:RESP|control-mode=response
//
// The server's response publications bind the control address; the
// client's response subscription names the same server control URI and
// Aeron's response correlation learns the client's return address. The
// client's own address never appears in a goblin channel.
func aeronSetup(ctx context.Context, cfg *harness.Config, prof harness.Profile, transport, proto, dir string) (*msgSetup, error) {
	srvHost, cliHost := cfg.ServerSideHost(), cfg.ClientSideHost()
	s := &msgSetup{info: map[string]string{}}
	ok := false
	defer func() {
		if !ok {
			for _, p := range s.procs {
				p.Stop(graceStop)
			}
		}
	}()
	wait := "spin"
	if prof.ClientWait == "block" {
		wait = "park"
	}
	if cfg.Driver.Kind == harness.DriverInProcess {
		return inProcessSetup(cfg, prof, transport, proto, dir, wait)
	}
	srv, err := startDriver(ctx, cfg, srvHost, prof, cfg.HostDir(srvHost, dir), "driver-server")
	if err != nil {
		return nil, err
	}
	s.procs = append(s.procs, srv)
	s.info["driver.server"] = srv.Info
	if transport == harness.TAeronIPC {
		base := "aeron:ipc?proto=" + proto + "|dir=" + srv.Dir
		s.listen = base + "|driver=external"
		s.clientTarget = base + "|wait=" + wait
		s.info["channel.request"] = "aeron:ipc (the server's subscription; clients add response-correlation-id)"
		s.info["channel.response"] = "aeron:ipc?control-mode=response (one per client)"
		cfg.Channel("request", "aeron:ipc (clients' publications add response-correlation-id)", 1001)
		cfg.Channel("response", "aeron:ipc?control-mode=response (the server's publications add response-correlation-id)", 1002)
		ok = true
		return s, nil
	}
	cli, err := startDriver(ctx, cfg, cliHost, prof, cfg.HostDir(cliHost, dir), "driver-client")
	if err != nil {
		return nil, err
	}
	s.procs = append(s.procs, cli)
	s.info["driver.client"] = cli.Info
	endpoint, controlAddr, err := udpServerAddrs(cfg, srvHost)
	if err != nil {
		return nil, err
	}
	base := "aeron:udp?endpoint=" + endpoint + "|control=" + controlAddr + "|proto=" + proto
	s.listen = base + "|dir=" + srv.Dir + "|driver=external"
	s.clientTarget = base + "|dir=" + cli.Dir + "|wait=" + wait
	s.info["channel.request"] = "aeron:udp?endpoint=" + endpoint
	s.info["channel.response"] = "aeron:udp?control=" + controlAddr + "|control-mode=response"
	cfg.Channel("request", "aeron:udp?endpoint="+endpoint+" (server subscription; client publication adds response-correlation-id)", 1001)
	cfg.Channel("response", "aeron:udp?control="+controlAddr+"|control-mode=response (client subscription; server publication adds response-correlation-id)", 1002)
	cfg.Channel("server target", s.listen, 0)
	cfg.Channel("client target", s.clientTarget, 0)
	ok = true
	return s, nil
}

// udpServerAddrs picks the server's request endpoint and response
// control address (IP:PORT each) for goblin's two-driver UDP channels.
func udpServerAddrs(cfg *harness.Config, srvHost harness.Host) (endpoint, control string, err error) {
	ctl := cfg.Path.ControlAddr()
	if ctl == "" {
		ctl = cfg.ServerHost
	}
	reqPort, err := srvHost.FreePort("udp", cfg.ServerHost)
	if err != nil {
		return "", "", err
	}
	respPort, err := srvHost.FreePort("udp", ctl)
	if err != nil {
		return "", "", err
	}
	return net.JoinHostPort(cfg.ServerHost, strconv.Itoa(reqPort)), net.JoinHostPort(ctl, strconv.Itoa(respPort)), nil
}

// inProcessSetup is aeronSetup with goblin's defaults: goblin-server runs
// the Go media driver inside its store loop (driver=go, in the case
// directory) and the measuring client its own inside its process (a UDP
// target without dir), so no driver process runs on either side and, with
// a spinning loop and a spinning client, one thread per process moves
// every message. Channels as aeronSetup's.
func inProcessSetup(cfg *harness.Config, prof harness.Profile, transport, proto, dir, wait string) (*msgSetup, error) {
	srvHost := cfg.ServerSideHost()
	srvDir := filepath.Join(cfg.HostDir(srvHost, dir), "driver-server")
	s := &msgSetup{info: map[string]string{"driver.server": "goblin's Go media driver inside goblin-server (driver=go), " + srvDir}}
	if transport == harness.TAeronIPC {
		base := "aeron:ipc?proto=" + proto + "|dir=" + srvDir
		s.listen = base + "|driver=go"
		s.clientTarget = base + "|wait=" + wait
		cfg.Channel("server target", s.listen, 0)
		cfg.Channel("client target", s.clientTarget, 0)
		return s, nil
	}
	endpoint, controlAddr, err := udpServerAddrs(cfg, srvHost)
	if err != nil {
		return nil, err
	}
	base := "aeron:udp?endpoint=" + endpoint + "|control=" + controlAddr + "|proto=" + proto
	s.listen = base + "|dir=" + srvDir + "|driver=go"
	s.clientTarget = base + "|wait=" + wait
	s.info["driver.client"] = "goblin's Go media driver inside the measuring client's process (a UDP target without dir)"
	s.info["channel.request"] = "aeron:udp?endpoint=" + endpoint
	s.info["channel.response"] = "aeron:udp?control=" + controlAddr + "|control-mode=response"
	cfg.Channel("server target", s.listen, 0)
	cfg.Channel("client target", s.clientTarget, 0)
	return s, nil
}

// transportServerArgs are goblin-server flags a message transport needs
// beyond its target; none today (drivers and profiles travel in the target).
func transportServerArgs(cfg *harness.Config, prof harness.Profile, transport, dir string) []string {
	return nil
}

// goblinCheckTransport reports whether the build can measure goblin over a
// transport at all.
func goblinCheckTransport(cfg *harness.Config, transport string, p harness.Protocol) error {
	if err := cfg.OneHostOnly(transport); err != nil {
		return err
	}
	switch transport {
	case harness.TUDS, harness.TTCP:
		if p == harness.RESP || libraryDial != nil {
			return nil
		}
		return fmt.Errorf("%w: goblin %s over %s needs the goblin client library (package client)", harness.ErrUnavailable, p, transport)
	case harness.TRing, harness.TAeronIPC, harness.TAeronUDP:
		return nil // the client library dials every transport
	}
	return fmt.Errorf("%w: goblin over %s", harness.ErrUnavailable, transport)
}

// unsupportedListen recognises goblin-server refusing a target scheme it
// was built without, so the case is reported unavailable, not failed.
var unsupportedListen = regexp.MustCompile(`(?i)no [a-z-]+ transport in this build|unknown (target )?scheme|(scheme|transport)[^\n]{0,60}(unsupported|not supported|not registered)`)
