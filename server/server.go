package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/goblin-kv/goblin/engine"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/proto/sbe"
	"github.com/goblin-kv/goblin/replica"
	"github.com/goblin-kv/goblin/replica/aeronsource"
	"github.com/goblin-kv/goblin/replica/forward"
	"github.com/goblin-kv/goblin/replication/aeronfeed"
	"github.com/goblin-kv/goblin/store"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/uds"
)

// Server is one goblin server: the store, the command engine, the
// transports built from Options.Listen, the loop that owns them all, and
// the metrics that report on them.
type Server struct {
	opts       Options
	log        *slog.Logger
	store      *store.Store
	engine     *engine.Engine
	loop       *Loop
	transports []transport.Server
	targets    []transport.Target
	streams    []streamStats
	metrics    *Metrics
	registry   *prometheus.Registry
	started    time.Time

	ran atomic.Bool // Run started (or Shutdown ran instead)

	link    *replica.Link // the link to a primary (replica.go)
	repl    replicaSettings
	budget  *uds.Budget // the socket clients' buffer memory
	release *releaser
	auth    *authGuard

	// Replication over Aeron (aeronrepl.go), nil when off.
	aeronPub *aeronfeed.Publisher
	aeronSrc *aeronsource.Source
	// forwarder is the replica's forwarded writes (aeronrepl.go), nil when off.
	forwarder *forward.Forwarder
	fwdCtl    engine.ReplicaControl // what a forwarder follows (aeronrepl.go)

	lastPublish atomic.Int64 // unix ns of the loop's last publish (written by the loop, read by /healthz)
	stopping    atomic.Bool  // Shutdown was asked for (read by /readyz)
	byCommand   atomic.Bool  // SHUTDOWN stopped the loop

	finalSave error // the shutdown's save failed (written by the loop before Done)

	// The load of the snapshot file at start (load.go): loadErr is why it
	// failed (written by the loop before Done); loadDone is closed when it
	// ends, or at once without one; loadingNow is read by /readyz.
	loadErr    error
	loadDone   chan struct{}
	loadingNow atomic.Bool

	// TLS (tls.go): the configuration the TLS listeners share, nil
	// without one; tlsDirty says a tls-* parameter changed since it was
	// built (loop goroutine).
	tls      *uds.TLSSource
	tlsDirty bool
	// tls-port (tls.go): the port CONFIG SET asked for and whether it
	// differs from the listeners'; env and listen are what New built the
	// listeners from, for those CONFIG SET tls-port opens.
	tlsPortWant  int
	tlsPortDirty bool
	tlsAtStart   bool       // a TLS listener was opened at start (configfile.go)
	bus          busConfigs // tls-cluster (tlscluster.go)
	env          Env
	listen       []string
}

// streamStats are the command counters of one stream transport.
type streamStats struct {
	name  string
	stats *engine.Stats
}

// New builds a server: it validates o, creates the store and the engine,
// and binds every listener (so address errors surface here, before Run).
func New(o Options) (*Server, error) {
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	s := &Server{opts: o, log: o.Logger, started: time.Now()}
	s.repl = replicaSettings{priority: o.ReplicaPriority, neverPromote: o.NeverPromote, announceIP: o.AnnounceIP,
		announcePort: o.AnnouncePort, hidden: o.ReplicaHidden}
	s.opts.Replication.TimeoutChanged = s.replTimeoutChanged
	// A key may be as long as a bulk string may be, like a value (Redis's
	// proto-max-bulk-len bounds both).
	st, err := store.New(store.Options{MaxMemory: o.MaxMemory, Eviction: o.MaxMemoryPolicy, MaxValueLen: o.MaxValueLen,
		MaxKeyLen: min(o.MaxValueLen, store.HardMaxKeyLen)})
	if err != nil {
		return nil, fmt.Errorf("server: store: %w", err)
	}
	lfuFactor, lfuDecay := store.DefaultLFULogFactor, store.DefaultLFUDecayTime
	if o.LFULogFactor != nil {
		lfuFactor = *o.LFULogFactor
	}
	if o.LFUDecayTime != nil {
		lfuDecay = *o.LFUDecayTime
	}
	if err := st.SetLFUParams(lfuFactor, lfuDecay); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s.store = st
	dir, err := stateDir(o.Dir, s.log)
	if err != nil {
		return nil, err
	}
	s.opts.Dir = dir
	co, err := s.clusterOptions()
	if err != nil {
		return nil, err
	}
	s.engine = engine.NewEngine(st, engine.Options{
		Cluster:     co,
		RequirePass: o.RequirePass,
		Databases:   o.Databases,
		Info:        s.info,
		// A bulk string or SBE frame may carry the largest value the
		// store takes, and no more (a key is far shorter).
		Limits:       resp.Limits{MaxBulkLen: o.MaxValueLen},
		MaxFrame:     o.MaxValueLen + sbe.SOFHLen + frameSlack,
		Params:       s.params(),
		Rewrite:      s.rewriter(),
		ACLFile:      o.ACLFile,
		ACLLogMaxLen: o.ACLLogMaxLen,

		Replica: engine.ReplicaOptions{WritableReplica: o.WritableReplica, NoStaleData: o.NoStaleData,
			SkipUnsupported: o.SkipUnsupported},

		SlowlogSlowerThan: o.SlowlogSlowerThan,
		SlowlogMaxLen:     o.SlowlogMaxLen,
		PubSubLog:         s.log,

		Replication:             s.opts.Replication,
		NotifyKeyspaceEvents:    o.NotifyKeyspaceEvents,
		LatencyMonitorThreshold: o.LatencyMonitorThreshold,
		LatencyTrackingOff:      o.LatencyTrackingOff,
		LatencyPercentiles:      o.LatencyPercentiles,

		Persistence: engine.Persistence{
			Dir: dir, DBFilename: o.DBFilename, Save: o.Save, NoCompression: o.NoCompression,
			NoChecksum: o.NoChecksum, KeepWritingOnError: o.KeepWritingOnSaveError, ProtectedConfig: o.ProtectedConfig, SaveSlice: o.SaveSlice,
			WriterPriority: o.SaveWriterPriority, LoopRest: o.SaveLoopRest,
			Log: s.log,
			Shutdown: func() { // SHUTDOWN, on the loop
				s.byCommand.Store(true)
				s.stopping.Store(true)
				s.loop.Stop()
			},
		},
	})
	if err := s.engine.LoadACLFile(); err != nil {
		return nil, fmt.Errorf("%w: aclfile %s: %w", ErrOptions, o.ACLFile, err)
	}
	s.budget = &uds.Budget{Limit: max(o.MaxClientMemory, 0)}
	s.auth = &authGuard{log: s.log}
	s.release = newReleaser()
	if err := s.setupTLS(); err != nil {
		return nil, err
	}
	s.env = Env{Options: &s.opts, Logger: s.log, Handler: s.handler, SocketBudget: s.budget, Protected: s.protected, TLS: s.tls}
	env := &s.env
	s.listen = o.Listen
	for _, l := range o.Listen {
		t, err := transport.ParseTarget(l)
		if err != nil {
			s.closeTransports()
			return nil, fmt.Errorf("%w: listen: %w", ErrOptions, err)
		}
		tr, err := Build(t, env)
		if err != nil {
			s.closeTransports()
			return nil, fmt.Errorf("server: listen %s: %w", l, err)
		}
		s.transports = append(s.transports, tr)
		if a, ok := tr.(interface{ Target() transport.Target }); ok {
			t = a.Target()
		}
		s.targets = append(s.targets, t)
	}
	s.tlsPortWant = s.currentTLSPort()
	s.tlsAtStart = s.tls != nil
	if err := s.setupReplica(); err != nil {
		s.closeTransports()
		return nil, err
	}
	if err := s.setupClusterBus(); err != nil {
		s.closeTransports()
		return nil, err
	}
	s.logProtectedMode()
	s.setupMetrics()
	s.loop, err = NewLoop(LoopConfig{
		Transports: s.transports,
		Idle:       o.Idle,
		Options:    &s.opts,
		CPUs:       o.CPUs,
		BeginCycle: s.engine.BeginCycle,
		TickEvery:  idleTickEvery,
		Tick: func(budget int) int {
			w := s.engine.Tick(budget)
			if s.engine.Saving() || s.engine.Loading() {
				// A save or the load at start works in slices between
				// cycles: look at the sockets every cycle, not every
				// SocketCheckEvery busy ones, so a request waits behind
				// one slice at most.
				s.loop.CheckSockets()
				if d := s.engine.SaveRest(s.loop.Served()); d > 0 && s.loop.Rest(d) {
					s.engine.SaveRested()
				}
			}
			return w
		},
		// Replication moving data over sockets alone: park at once (see
		// LoopConfig); at rest, spin first as a standalone server does.
		ParkAtOnce: s.engine.ReplStreaming,
		// The doze strategy's long parks end at the engine's next timer.
		Timers: s.engine.TimerSlack,
		BeforeClose: func() {
			if err := s.engine.ShutdownSave(); err != nil {
				s.finalSave = err
			}
			// A load at start still running (ShutdownSave saved nothing
			// then) stops: its decoder goroutine and file go with it.
			s.engine.StopLoad()
		},
		Publish: func(*LoopStats) {
			s.metrics.Publish()
			s.releaseMemory()
			s.lastPublish.Store(time.Now().UnixNano())
		},
	})
	if err != nil {
		s.closeTransports()
		return nil, err
	}
	if err := s.beginLoad(); err != nil {
		s.closeTransports()
		s.loop.closeParkFD() // the loop never runs: its epoll and Stop fds
		s.release.stop()
		return nil, err
	}
	// New ran on its caller's goroutine (the LFU parameters, the load's
	// first step); from Run on, the loop's goroutine owns the stores.
	s.engine.HandOffStores()
	return s, nil
}

// idleTickEvery spaces the loop's store maintenance while it finds
// nothing to do (LoopConfig.TickEvery): its timers and clock are in
// milliseconds, and an idle Tick cost every spinning cycle two thirds of
// its time.
const idleTickEvery = 10 * time.Microsecond

// frameSlack is what an SBE request frame may hold besides its value: the
// fixed block, the key and the other fields.
const frameSlack = 64 << 10

// handler gives each transport its own command counters.
func (s *Server) handler(name string) EngineHandler {
	for _, ss := range s.streams {
		if ss.name == name { // a second listener of the same kind shares them
			return EngineHandler{e: s.engine, st: ss.stats, name: name, guard: s.auth}
		}
	}
	h := EngineHandler{e: s.engine, st: new(engine.Stats), name: name, guard: s.auth}
	s.streams = append(s.streams, streamStats{name: name, stats: h.st})
	return h
}

func (s *Server) closeTransports() {
	for _, t := range s.transports {
		t.Close()
	}
}

// Targets returns the listeners' targets, with the real addresses (a tcp
// port 0 becomes the port the kernel chose).
func (s *Server) Targets() []transport.Target { return s.targets }

// ErrRunning is returned by a second call of Run, or by Run after
// Shutdown.
var ErrRunning = errors.New("server: Run already called")

// Run runs the loop on the calling goroutine until Shutdown, then returns
// the first error closing the transports gave.
func (s *Server) Run() error {
	if !s.ran.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer s.release.stop()
	err := s.loop.Run()
	if s.loadErr != nil {
		return s.loadErr
	}
	if s.finalSave != nil {
		return fmt.Errorf("server: the shutdown's save failed (the previous snapshot is intact): %w", s.finalSave)
	}
	return err
}

// StoppedByCommand reports whether a client's SHUTDOWN stopped the server.
func (s *Server) StoppedByCommand() bool { return s.byCommand.Load() }

// stateDir returns the snapshot directory: dir, which must exist, or the
// default one, created if need be. A default directory that cannot be
// created does not stop the start (there is nothing to load from it): it
// is logged, and saves fail with the reason until --dir or CONFIG SET dir
// names another.
func stateDir(dir string, log *slog.Logger) (string, error) {
	if dir == "" {
		dir = DefaultDir()
		if err := os.MkdirAll(dir, 0o700); err != nil {
			log.Warn("cannot create the default snapshot directory: SAVE and BGSAVE will fail until --dir or CONFIG SET dir names one", "dir", dir, "err", err)
		}
		return dir, nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("%w: dir: %w", ErrOptions, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%w: dir %s is not a directory", ErrOptions, dir)
	}
	return dir, nil
}

// Shutdown asks the loop to stop accepting, answer what it has read, close
// every client and return, and waits for that until ctx ends. Called before
// Run, it closes the listeners itself.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopping.Store(true)
	s.loop.Stop()
	if s.ran.CompareAndSwap(false, true) {
		defer s.release.stop()
		return s.loop.shutdown()
	}
	select {
	case <-s.loop.Done():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("server: shutdown: %w", ctx.Err())
	}
}

// Collector returns the server's Prometheus collector.
func (s *Server) Collector() prometheus.Collector { return s.metrics }

// MetricsHandler serves the server's metrics (and the Go runtime's and
// the process's) in the Prometheus text format.
func (s *Server) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// info adds the server's lines to INFO's server and clients sections. It
// runs on the loop.
func (s *Server) info(dst []byte, section string) []byte {
	switch section {
	case "server":
		dst = append(dst, "goblin_idle_strategy:"...)
		dst = append(dst, s.opts.Idle...)
		dst = append(dst, "\r\n"...)
		if port := s.tcpPort(); port != "" {
			dst = append(dst, "tcp_port:"...)
			dst = append(dst, port...)
			dst = append(dst, "\r\n"...)
		}
	case "clients":
		dst = append(dst, "maxclients:"...)
		dst = strconv.AppendInt(dst, int64(s.opts.MaxClients), 10)
		dst = append(dst, "\r\n"...)
	}
	return dst
}

// tcpPort returns the first TCP listener's port, "" without one.
func (s *Server) tcpPort() string {
	for _, t := range s.targets {
		if t.Scheme == transport.TCP {
			if _, port, err := net.SplitHostPort(t.Address); err == nil {
				return port
			}
		}
	}
	return ""
}

// protected reports whether protected mode is in force: on, and the
// default user without a password. Loop goroutine.
func (s *Server) protected() bool {
	return !s.opts.ProtectedModeOff && s.engine.DefaultUserNoPass()
}

// logProtectedMode says at start-up when protected mode will refuse
// clients: a TCP listener beyond the loopback interface while it is in
// force.
func (s *Server) logProtectedMode() {
	if !s.protected() {
		return
	}
	for _, t := range s.targets {
		if t.Scheme != transport.TCP && t.Scheme != transport.TLS {
			continue
		}
		host, _, err := net.SplitHostPort(t.Address)
		if ip := net.ParseIP(host); err == nil && (ip == nil || !ip.IsLoopback()) {
			s.log.Warn("protected mode: no password is set for the default user, so TCP clients from beyond the loopback interface are refused (DENIED) until one is set (requirepass, ACL SETUSER default) or protected-mode is no",
				"target", t.String())
		}
	}
}

// params are the server's CONFIG parameters. Those that change live apply
// to every socket listener at once (CONFIG SET runs on the loop).
func (s *Server) params() []engine.Param {
	socket := func(apply func(*uds.Server)) {
		for _, t := range s.transports {
			if u, ok := t.(*uds.Server); ok {
				apply(u)
			}
		}
	}
	// Redis reads an integer parameter with string2ll: no '+', no leading
	// zeros or spaces (strconv.ParseInt takes "+5" and "007").
	return append([]engine.Param{
		{Name: "timeout", Get: func() string { return strconv.FormatInt(int64(s.opts.IdleTimeout/time.Second), 10) },
			Set: func(v string) error {
				n, err := intParam(v, 0, math.MaxInt32)
				if err == nil {
					s.opts.IdleTimeout = time.Duration(n) * time.Second
					socket(func(u *uds.Server) { u.SetIdleTimeout(s.opts.IdleTimeout) })
				}
				return err
			}},
		{Name: "maxclients", Get: func() string { return strconv.Itoa(s.opts.MaxClients) },
			Set: func(v string) error {
				n, err := intParam(v, 1, math.MaxUint32)
				if err == nil {
					s.opts.MaxClients = int(n)
					socket(func(u *uds.Server) { u.SetMaxClients(int(n)) })
				}
				return err
			}},
		{Name: "maxmemory-clients", Get: func() string { return strconv.FormatInt(s.budget.Limit, 10) },
			Set: func(v string) error {
				n, ok := engine.ParseMemory(v)
				if !ok || n > math.MaxInt64 {
					return errors.New("argument must be a memory value")
				}
				s.budget.Limit = int64(n)
				return nil
			}},
		engine.YesNoParam("protected-mode", func() bool { return !s.opts.ProtectedModeOff }, func(on bool) { s.opts.ProtectedModeOff = !on }),
		{Name: "port", Get: func() string {
			if p := s.tcpPort(); p != "" {
				return p
			}
			return "0"
		}},
		{Name: "unixsocket", Get: func() string {
			for _, t := range s.targets {
				if t.Scheme == transport.UDS {
					return t.Path
				}
			}
			return ""
		}},
	}, append(append(append(s.tlsParams(), s.replicaParams()...), s.aeronReplParams()...), s.clusterParams()...)...)
}

// rewriter returns CONFIG REWRITE's Rewrite: nil without a configuration
// file.
func (s *Server) rewriter() func() error {
	if s.opts.ConfigFile == "" {
		return nil
	}
	return s.rewriteConfig
}

// EngineHandler hands out sessions of the command engine, all counting into
// one transport's request counters: a transport.StreamHandler for the
// stream transports (uds, tcp) and a transport.MessageHandler for the
// message transports (ring, Aeron). It is the one adapter between the
// engine and the transports; tests that run a transport on a bare engine
// make theirs with NewEngineHandler.
type EngineHandler struct {
	e     *engine.Engine
	st    *engine.Stats
	name  string     // the transport, for logs
	guard *authGuard // nil: wrong passwords are neither logged nor delayed
}

// NewEngineHandler returns a handler whose sessions run on e and count
// into st, named name in logs. The server makes its own with Env.Handler.
func NewEngineHandler(e *engine.Engine, st *engine.Stats, name string) EngineHandler {
	return EngineHandler{e: e, st: st, name: name}
}

// OpenStream implements transport.StreamHandler: the session of one
// socket client, a byte stream of pipelined requests.
func (h EngineHandler) OpenStream(p proto.Protocol) transport.StreamSession {
	return &engineSession{e: h.e, s: h.e.Open(p, h.st), name: h.name, guard: h.guard}
}

// OpenMessage implements transport.MessageHandler: the session of one
// message-transport client (ring, Aeron), one request message in, its
// reply out, executed inline.
func (h EngineHandler) OpenMessage(p proto.Protocol) transport.MessageSession {
	return &messageSession{e: h.e, s: h.e.Open(p, h.st), name: h.name, guard: h.guard}
}

// messageSession serves one message-transport client.
type messageSession struct {
	e      *engine.Engine
	s      *engine.Session
	name   string
	guard  *authGuard
	fails  uint64
	parked bool // its last request waits for an answer (SetAnswer)
}

// SetAnswer implements transport.LaterAware: a blocking pop that finds no
// data parks the request, and its answer goes out later through answer.
func (s *messageSession) SetAnswer(answer func(reply []byte) bool) {
	s.s.AttachLater(func() { s.parked = true }, func(b []byte) bool {
		s.parked = false
		return answer(b)
	})
}

// Parked implements transport.LaterAware.
func (s *messageSession) Parked() bool { return s.parked }

// ServeMessage executes one request message and appends its reply to out.
// A wrong password is logged and counts toward the server-wide burst (see
// authGuard); the message transports cannot hold one client back yet.
func (s *messageSession) ServeMessage(msg, out []byte) ([]byte, bool) {
	out, closeConn := s.e.ServeMessage(s.s, msg, out)
	if s.guard != nil && s.s.AuthFailures() != s.fails { // checked here: the call cost every message some 20 instructions
		noteAuthFailures(s.s, s.guard, s.name, &s.fails)
	}
	return out, closeConn
}

// Close implements transport.MessageSession.
func (s *messageSession) Close() { s.e.Close(s.s) }

// noteAuthFailures hands a session's new wrong passwords, if any since
// *seen, to the guard, and returns the delay it asks for; failed is false
// when there was nothing new (or no guard).
func noteAuthFailures(s *engine.Session, g *authGuard, name string, seen *uint64) (delay time.Duration, failed bool) {
	f := s.AuthFailures()
	if f == *seen || g == nil {
		return 0, false
	}
	*seen = f
	return g.failed(name, s.Addr(), f), true
}

// engineSession serves one stream-transport client.
type engineSession struct {
	e     *engine.Engine
	s     *engine.Session
	name  string
	guard *authGuard
	fails uint64        // AuthFailures already seen
	delay time.Duration // for Delay, after a wrong password
}

// Serve implements transport.StreamSession.
func (s *engineSession) Serve(in, out []byte, limit int) (int, []byte, bool) {
	n, out, closeConn := s.e.ServeStreamLimit(s.s, in, out, limit)
	if d, failed := noteAuthFailures(s.s, s.guard, s.name, &s.fails); failed {
		s.delay = d
	}
	return n, out, closeConn
}

// ProtocolError implements uds.ProtocolErrorer: why the engine asked for
// the connection to close, when it was a malformed request.
func (s *engineSession) ProtocolError() error { return s.s.ProtocolError() }

// Delay tells the socket transport to hold the client back this long
// before serving its next request (after a wrong password; see authGuard).
func (s *engineSession) Delay() time.Duration {
	d := max(s.delay, s.s.Hold()) // a wrong password, or CLIENT PAUSE
	s.delay = 0
	return d
}

// SetConn implements uds.ConnAware: the engine learns the connection's
// addresses (CLIENT LIST) and how to close it (CLIENT KILL) and write to it
// out of turn (MONITOR).
func (s *engineSession) SetConn(addr, laddr string, fd int, kill func(), push func([]byte) bool) {
	if s.guard != nil {
		close := kill
		kill = func() {
			// CLIENT KILL of this client by another: the operator's log
			// says who went, as Redis's does at verbose level.
			s.guard.log.Info("client killed by CLIENT KILL", "transport", s.name, "client", addr)
			close()
		}
	}
	s.s.Attach(engine.Conn{Addr: addr, LocalAddr: laddr, FD: fd, Kill: kill, Push: push})
}

// SetBufferStats implements uds.BufferAware: CLIENT LIST shows the
// connection's buffers as the socket transport holds them.
func (s *engineSession) SetBufferStats(f func(*uds.BufferStats)) {
	s.s.AttachBuffers(func(b *engine.ConnBuffers) {
		var u uds.BufferStats
		f(&u)
		*b = engine.ConnBuffers(u)
	})
}

func (s *engineSession) Close() { s.e.Close(s.s) }

// IdleExempt implements uds.IdleExempter: subscribers and monitors wait
// for the server, and the timeout spares them, as Redis's does.
func (s *engineSession) IdleExempt() bool { return s.s.WaitsForServer() }

// SetQueued implements uds.QueueAware: the engine reads how many bytes
// are queued for the client (Pub/Sub's client-output-buffer-limit).
func (s *engineSession) SetQueued(queued func() int) { s.s.SetQueued(queued) }

// Buffered reports the memory the session holds for a partial request, so
// the socket transport charges it to the clients' budget.
func (s *engineSession) Buffered() int { return s.s.Buffered() }

// intParam parses a CONFIG SET integer as Redis does (no sign, spaces or
// leading zeros beyond its own syntax) within lo..hi, with Redis's texts.
func intParam(v string, lo, hi int64) (int64, error) {
	n, ok := resp.ParseInt([]byte(v))
	switch {
	case !ok:
		return 0, errors.New("argument couldn't be parsed into an integer")
	case n < lo || n > hi:
		return 0, fmt.Errorf("argument must be between %d and %d inclusive", lo, hi)
	}
	return n, nil
}
