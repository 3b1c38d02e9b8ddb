package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/goblin-kv/goblin/client"
)

// msgSetup is what a message transport (ring, Aeron IPC, Aeron UDP) needs
// around goblin-server: the target it listens on, the target the client
// dials, how to tell it is ready, processes started for it (media drivers)
// and directories to remove afterwards.
type msgSetup struct {
	listen       string
	clientTarget string
	ready        func() error // nil: wait for the server's "ready" log line
	info         map[string]string
	procs        []*process
	cleanupDirs  []string
}

// messageSetup prepares a message transport for one goblin case.
func messageSetup(ctx context.Context, cfg *Config, prof Profile, transport, proto, dir string) (*msgSetup, error) {
	switch transport {
	case TRing:
		// The ring directory goes on /dev/shm (tmpfs: the rings' pages never
		// touch a disk) when there is one, else in the case directory.
		rdir := filepath.Join(dir, "ring")
		var cleanup []string
		if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
			if rdir, err = os.MkdirTemp("/dev/shm", "goblin-bench-"); err != nil {
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
		return &msgSetup{
			listen:       listen,
			clientTarget: listen + "&wait=" + wait + "&server_timeout=60s",
			ready:        dialable("unix", filepath.Join(rdir, "ctl.sock")),
			info:         map[string]string{"ring.dir": rdir},
			cleanupDirs:  cleanup,
		}, nil
	case TAeronIPC, TAeronUDP:
		return aeronSetup(ctx, cfg, prof, transport, proto, dir)
	}
	return nil, fmt.Errorf("%w: goblin over %s", ErrUnavailable, transport)
}

// aeronSetup starts the media drivers of a goblin Aeron case itself (so the
// server's driver runs where the server runs, with the profile's threading,
// idle strategies and CPUs, configured exactly as the raw Aeron floor's) and
// points goblin at them with driver=external: one driver for IPC, one per
// side for UDP. The UDP channels are Goblin's response channels:
//
//	server: aeron:udp?endpoint=SERVER:REQ|control=SERVER:RESP
//	client: the same URIs; its response subscription targets the server's
//	        control address, never the client's own.
func aeronSetup(ctx context.Context, cfg *Config, prof Profile, transport, proto, dir string) (*msgSetup, error) {
	java, err := lookTool(cfg.Java, "java")
	if err != nil {
		return nil, err
	}
	jar, err := aeronJar(cfg)
	if err != nil {
		return nil, err
	}
	s := &msgSetup{info: map[string]string{}}
	ok := false
	defer func() {
		if !ok {
			for _, p := range s.procs {
				p.stop(graceStop)
			}
		}
	}()
	srv, srvInfo, err := mediaDriver(ctx, cfg, prof, java, jar, dir, "driver-server", true)
	if err != nil {
		return nil, err
	}
	s.procs = append(s.procs, srv)
	s.info["driver.server"] = srvInfo
	srvDir := filepath.Join(dir, "driver-server")
	wait := "spin"
	if prof.ClientWait == "block" {
		wait = "park"
	}
	if transport == TAeronIPC {
		base := "aeron:ipc?proto=" + proto + "|dir=" + srvDir
		s.listen = base + "|driver=external"
		s.clientTarget = base + "|wait=" + wait
		s.info["channel.request"] = "aeron:ipc (the server's subscription; clients add response-correlation-id)"
		s.info["channel.response"] = "aeron:ipc?control-mode=response (one per client)"
		ok = true
		return s, nil
	}
	cli, cliInfo, err := mediaDriver(ctx, cfg, prof, java, jar, dir, "driver-client", false)
	if err != nil {
		return nil, err
	}
	s.procs = append(s.procs, cli)
	s.info["driver.client"] = cliInfo
	reqPort, err := udpPort(cfg, cfg.ServerHost)
	if err != nil {
		return nil, err
	}
	respPort, err := udpPort(cfg, cfg.ServerHost)
	if err != nil {
		return nil, err
	}
	endpoint := net.JoinHostPort(cfg.ServerHost, strconv.Itoa(reqPort))
	control := net.JoinHostPort(cfg.ServerHost, strconv.Itoa(respPort))
	base := "aeron:udp?endpoint=" + endpoint + "|control=" + control + "|proto=" + proto
	s.listen = base + "|dir=" + srvDir + "|driver=external"
	s.clientTarget = base + "|dir=" + filepath.Join(dir, "driver-client") + "|wait=" + wait
	s.info["channel.request"] = "aeron:udp?endpoint=" + endpoint
	s.info["channel.response"] = "aeron:udp?control=" + control + "|control-mode=response"
	ok = true
	return s, nil
}

// transportServerArgs are goblin-server flags a message transport needs
// beyond its target; none today (drivers and profiles travel in the target).
func transportServerArgs(cfg *Config, prof Profile, transport, dir string) []string { return nil }

// goblinCheckTransport reports whether the build can measure goblin over a
// transport at all.
func goblinCheckTransport(transport string, p Protocol) error {
	switch transport {
	case TUDS, TTCP:
		if p == RESP || libraryDial != nil {
			return nil
		}
		return fmt.Errorf("%w: goblin %s over %s needs the goblin client library (package client)", ErrUnavailable, p, transport)
	case TRing:
		return ringClientCheck()
	case TAeronIPC, TAeronUDP:
		return aeronClientCheck()
	}
	return fmt.Errorf("%w: goblin over %s", ErrUnavailable, transport)
}

var (
	aeronOnce sync.Once
	aeronErr  error
)

// aeronClientCheck reports whether the client library can dial aeron:
// targets in this build (the Aeron transport registers itself with it).
func aeronClientCheck() error {
	aeronOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := client.Dial(ctx, "aeron:ipc?dir=/nonexistent/goblin-bench-probe|driver-timeout=1ms")
		if errors.Is(err, client.ErrUnknownTransport) {
			aeronErr = fmt.Errorf("%w: the goblin client library cannot dial aeron: targets yet (transport/aeron does not register itself with package client in this build)", ErrUnavailable)
		}
	})
	return aeronErr
}

// unsupportedListen recognises goblin-server refusing a target scheme it
// was built without, so the case is reported unavailable, not failed.
var unsupportedListen = regexp.MustCompile(`(?i)no [a-z-]+ transport in this build|unknown (target )?scheme|(scheme|transport)[^\n]{0,60}(unsupported|not supported|not registered)`)
