package main

import (
	"errors"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/goblin-kv/goblin/engine"
	"github.com/goblin-kv/goblin/internal/buildinfo"
	"github.com/goblin-kv/goblin/internal/sdnotify"
	"github.com/goblin-kv/goblin/server"
	"golang.org/x/sys/unix"
)

// versionLine is what --version prints, in redis-server's shape:
//
//	goblin-server v=devel sha=2ed253b1a2c3-dirty go=go1.26.8 bits=64 redis=7.0.0
func versionLine(in buildinfo.Info) string {
	sha := in.ShortRevision()
	if sha == "" {
		sha = "unknown"
	}
	return "goblin-server v=" + in.Version + " sha=" + sha + " go=" + in.GoVersion +
		" bits=" + strconv.Itoa(strconv.IntSize) + " arch=" + runtime.GOARCH + " redis=" + engine.DefaultVersion
}

// Extending the service manager's start timeout while the snapshot file
// loads: every LoadExtendEvery, EXTEND_TIMEOUT_USEC= of LoadExtendBy, so a
// load longer than TimeoutStartSec= (90 s by default) is not killed as a
// hung start, while a load that stops making the loop cycle still is.
const (
	LoadExtendEvery = 10 * time.Second
	LoadExtendBy    = 30 * time.Second
)

// notifyReady tells a service manager (systemd Type=notify) the server is
// serving, and keeps its watchdog fed while the store loop cycles: a loop
// that stalls stops the keep-alives, so WatchdogSec= restarts a server that
// no longer answers. While the snapshot file loads (loading: the load went
// on past New's first step), it extends the start timeout. The returned
// func stops the watchdog.
func notifyReady(n *sdnotify.Notifier, srv *server.Server, loading bool, log *slog.Logger) (stop func()) {
	if !n.Enabled() {
		return func() {}
	}
	status := "serving " + strconv.Itoa(len(srv.Targets())) + " listeners"
	go func() {
		if loading {
			t := time.NewTicker(LoadExtendEvery)
			defer t.Stop()
		extend:
			for {
				if ok, _ := srv.Healthy(); ok {
					msg := "EXTEND_TIMEOUT_USEC=" + strconv.FormatInt(LoadExtendBy.Microseconds(), 10) +
						"\nSTATUS=loading the snapshot file"
					if err := n.Send(msg); err != nil {
						log.Warn("cannot extend the service manager's start timeout", "err", err)
					}
				}
				select {
				case <-srv.LoadDone():
					break extend
				case <-t.C:
				}
			}
		}
		// Ready once the snapshot file is loaded, as Redis's supervised
		// mode: until then clients get LOADING (never if the load fails).
		<-srv.LoadDone()
		if err := n.Ready(status); err != nil {
			log.Warn("cannot tell the service manager the server is ready", "err", err)
		}
	}()
	every, err := sdnotify.WatchdogInterval()
	if errors.Is(err, sdnotify.ErrNoWatchdog) {
		return func() {}
	}
	if err != nil {
		log.Warn("watchdog not fed", "err", err)
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if ok, why := srv.Healthy(); !ok {
				log.Error("watchdog not fed: the store loop is stalled", "why", why)
				continue
			}
			if err := n.Send("WATCHDOG=1"); err != nil {
				log.Warn("cannot feed the watchdog", "err", err)
			}
		}
	}()
	return func() { close(done) }
}

// logStart is the first line a server logs: what is running, and the
// limits in effect after the defaults are filled, so an operator reading
// the log of an incident knows them without the configuration at hand.
func logStart(log *slog.Logger, o server.Options) {
	o.EnsureDefaults()
	in := buildinfo.Read()
	var nofile unix.Rlimit
	unix.Getrlimit(unix.RLIMIT_NOFILE, &nofile)
	clientMem := strconv.FormatInt(o.MaxClientMemory, 10)
	if o.MaxClientMemory < 0 {
		clientMem = "none"
	}
	log.Info("goblin-server starting", "version", in.Label(), "go", in.GoVersion, "pid", os.Getpid(),
		"maxmemory", o.MaxMemory, "maxmemory_policy", o.MaxMemoryPolicy.String(), "maxclients", o.MaxClients,
		"databases", o.Databases, "client_output_limit", o.MaxOutput, "client_input_limit", o.MaxInput,
		"maxmemory_clients", clientMem, "open_files_limit", nofile.Cur)
}
