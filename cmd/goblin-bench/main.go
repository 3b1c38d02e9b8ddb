// Command goblin-bench runs goblin's transport-latency matrix and writes the
// archive (latency.csv, aggregate.csv, metadata.txt, summary.md, charts,
// SHA256SUMS) into -out. With -hosts SERVER:CLIENT it drives two machines
// over ssh: it stages itself, goblin-server and the media driver on both,
// checks their hashes from each side, and runs a goblin-bench agent on
// each. See docs/benchmarks.md.
//
// The agent (-agent), the measuring client of a two-host case (-probe),
// the counter reader (-aeron-stat) and the servers of the udp-floor and
// aeron-go cases (-udp-echo, -aeron-pong) are modes of the same binary,
// which is what gets staged.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/goblin-kv/goblin/benchmarks/clusterbench"
	"github.com/goblin-kv/goblin/benchmarks/harness"
)

// multiFlag collects a repeatable flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, "; ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// cpuListFlag is a CPU-list override that may be set to the empty string
// (no pinning), which is not the same as leaving it unset (the profile's
// list). Its zero value prints no default in -h.
type cpuListFlag struct {
	value string
	set   bool
}

func (f *cpuListFlag) String() string     { return f.value }
func (f *cpuListFlag) Set(v string) error { f.value, f.set = v, true; return nil }

func main() { os.Exit(run()) }

func run() int {
	cfg := harness.DefaultConfig()
	var (
		profile    = flag.String("profile", cfg.Profile.Name, "idle/CPU profile: fit2 (fits 2 cores), spin (one core per spinning thread) or backoff")
		serverIdle = flag.String("server-idle", "", "override the profile: goblin-server --idle spin|yield|backoff")
		clientWait = flag.String("client-wait", "", "override the profile: the measuring client waits by spin or block")
		driverIdle = flag.String("driver-idle", "", "override the profile: Aeron driver agents spin or backoff")
		systems    = flag.String("systems", "", "comma-separated systems to run: goblin,redis,aeron-go,aeron-raw,udp-floor,shm-floor (default all)")
		transports = flag.String("transports", "", "comma-separated transports: ring,aeron-ipc,uds,tcp,aeron-udp (default all; tcp,aeron-udp with -hosts)")
		protocols  = flag.String("protocols", "", "comma-separated protocols: RESP,SBE (default both)")
		ops        = flag.String("ops", "", "comma-separated operations: PING,SET,GET (default all)")
		netns      = flag.String("server-netns", "", "run servers inside this network namespace (ip netns exec NAME)")
		list       = flag.Bool("list", false, "print the planned cases and whether each can run, then exit")
		quiet      = flag.Bool("quiet", false, "no progress lines on stderr")

		hosts      = flag.String("hosts", "", "two hosts over ssh: SERVER:CLIENT, two ssh destinations ([user@]host or a Host of the ssh config)")
		sshCmd     = flag.String("ssh", "ssh", "the ssh command and options for -hosts, e.g. 'ssh -F ~/.ssh/bench_config'")
		remoteDir  = flag.String("remote-dir", "/tmp", "where each host keeps the run's runtime files (removed at the end)")
		stageDir   = flag.String("stage-dir", "", "where the build is staged on each host (default: inside the runtime directory, removed at the end)")
		stageShare = flag.Bool("stage-shared", false, "-stage-dir is one filesystem both hosts see (NFS): write it once, through the server host")
		stageNo    = flag.Bool("stage-no-copy", false, "stage nothing: the files are in -stage-dir already (a read-only prefix); their hashes decide")
		paths      = flag.String("paths", "", "address pairs of the network cases: NAME=SERVER_ADDR/CLIENT_ADDR,… (default: -server-host/-client-host)")
		driverKind = flag.String("driver", "java", "media driver kind: java (Aeron's Java driver), aeronmd (an aeronmd-compatible binary, -aeronmd) or goblin (goblin's own, built from aeron/cmd/aeronmd, -aeronmd)")
		aeronmd    = flag.String("aeronmd", "", "the aeronmd binary for -driver aeronmd or goblin")
		qualify    = flag.Bool("qualify", false, "after the runs, run every case once more with a statistics collector attached to each media driver, archived in qualification/, never in the aggregate")
		statsCmd   = flag.String("stats-cmd", "", "the qualification's collector, run by sh -c on each driver's host with {pid} and {dir} filled in, e.g. 'xlio_stats -p {pid} -i 1' (default: goblin-bench -aeron-stat)")

		agentRoot = flag.String("agent", "", "internal: serve as the agent of a two-host run, runtime files under this directory")
		agentRole = flag.String("agent-role", "server", "internal: the agent's role")
		probeOut  = flag.String("probe", "", "internal: measure the ProbeSpec on standard input and write the result to this file")
		clNodes   = flag.Int("cluster", 0, "cluster mode: throughput of this many local goblin-server nodes as a cluster against one node, pipelined (docs/cluster.md); prints a table and exits")
		clClients = flag.Int("cluster-clients", 4, "with -cluster: client goroutines")
		clBatch   = flag.Int("cluster-pipeline", 64, "with -cluster: commands per pipelined batch")
		clTime    = flag.Duration("cluster-duration", 5*time.Second, "with -cluster: measured time of each run")
		clKeys    = flag.Int("cluster-keys", 100_000, "with -cluster: distinct keys, spread over every slot")
		statDir   = flag.String("aeron-stat", "", "print the counters of the media driver in this Aeron directory (the qualification's default collector)")
		statEvery = flag.Duration("watch", 0, "with -aeron-stat: repeat every interval until stopped")
		tails     = flag.String("tails", "", "comma-separated <op>.timeline.csv files (-timeline): put each slow round trip (> 3x p50) down to what -kernel-trace shows during it, print a table per file and exit")
		ktrace    = flag.String("kernel-trace", "", "with -tails: a tracefs trace of the same run, recorded with trace_clock mono (docs/results/transport-latency.md, \"Tails on this VM\")")
		tailProcs = flag.String("tail-procs", "goblin-bench,goblin-server", "with -tails: the benchmark's process names (a switch between two of their threads is the benchmark's own)")
		udpEcho   = flag.String("udp-echo", "", "internal: the udp-floor case's server: echo datagrams on IP:PORT, busy-polling")
		aeronPong = flag.String("aeron-pong", "", "internal: the aeron-go case's server: a Go media driver in this Aeron directory inside the process, echoing -ping-channel on -pong-channel")
		pingCh    = flag.String("ping-channel", "", "internal: with -aeron-pong, the channel it subscribes to (stream 1002)")
		pongCh    = flag.String("pong-channel", "", "internal: with -aeron-pong, the channel it answers on (stream 1003)")
	)
	var (
		serverCPU cpuListFlag
		clientCPU cpuListFlag
		driverCPU cpuListFlag
		srvAgents cpuListFlag
		cliAgents cpuListFlag
		housekeep cpuListFlag
	)
	flag.Var(&serverCPU, "server-cpu", "override the profile: the `CPUs` of the server, a CPU list such as 0 or 2-3 ('' = no pinning; unset = the profile's)")
	flag.Var(&clientCPU, "client-cpu", "override the profile: the `CPUs` of the measuring thread ('' = no pinning; unset = the profile's)")
	flag.Var(&driverCPU, "driver-cpu", "override the profile: the `CPUs` of the Aeron media drivers ('' = no pinning; unset = the profile's)")
	flag.Var(&srvAgents, "server-agents", "override the profile: the server driver's `agents` one by one, e.g. conductor=2,sender=3,receiver=4 ('' = none pinned one by one)")
	flag.Var(&cliAgents, "client-agents", "override the profile: the client driver's `agents` one by one, e.g. conductor=2,sender=3,receiver=4 ('' = none pinned one by one)")
	flag.Var(&housekeep, "housekeeping-cpu", "override the profile: the `CPUs` of every thread no other list names (goblin-server then runs there with only its store loop on -server-cpu; '' = none)")
	var driverEnv multiFlag
	flag.Var(&driverEnv, "driver-env", "'[PATH:]K=V K2=V2': added to the media drivers' environment (all paths, or the named one); repeatable")
	flag.StringVar(&cfg.OutDir, "out", cfg.OutDir, "run directory to write")
	flag.IntVar(&cfg.Runs, "runs", cfg.Runs, "complete runs of the matrix (averaged)")
	flag.IntVar(&cfg.Warmup, "warmup", cfg.Warmup, "warm-up round trips per operation")
	flag.IntVar(&cfg.Samples, "samples", cfg.Samples, "measured round trips per operation")
	flag.IntVar(&cfg.ValueSize, "value-size", cfg.ValueSize, "bytes per SET value")
	flag.IntVar(&cfg.Keys, "keys", cfg.Keys, "distinct keys SET and GET cycle over")
	flag.IntVar(&cfg.Depth, "depth", cfg.Depth, "requests in flight per round trip (1 = synchronous)")
	flag.StringVar(&cfg.GoblinServer, "goblin-server", "", "goblin-server binary (default: PATH; staged to both hosts with -hosts)")
	flag.StringVar(&cfg.RedisServer, "redis-server", "", "redis-server binary (default: PATH; with -hosts, a path on the server host)")
	flag.StringVar(&cfg.Java, "java", "", "java binary for the Aeron media driver and raw ping-pong (default: PATH; with -hosts, a path on the hosts)")
	flag.StringVar(&cfg.AeronJar, "aeron-jar", "", "io.aeron:aeron-all jar (default: ~/.m2, version in scripts/aeron.version)")
	flag.BoolVar(&cfg.Timeline, "timeline", false, "also write every measured round trip's latency in measured order to <op>.timeline.csv in the case directory (when slow round trips happen; a local measuring client only)")
	flag.StringVar(&cfg.Client, "client", cfg.Client, "measuring client: library (goblin client library) or raw (pre-encoded RESP over write/read; SBE and message transports still use the library)")
	flag.StringVar(&cfg.ServerHost, "server-host", cfg.ServerHost, "address servers listen on (TCP, Aeron UDP)")
	flag.StringVar(&cfg.ClientHost, "client-host", "", "the client's own address (Aeron UDP; default: server host)")
	flag.StringVar(&cfg.ControlHost, "control-host", "", "Aeron UDP response control host (default and only sound choice: the server's address)")
	flag.StringVar(&cfg.RunID, "run-id", "", "name of this run's files outside the archive (default: time and pid)")
	flag.DurationVar(&cfg.CaseTimeout, "case-timeout", cfg.CaseTimeout, "bound on starting a server, and on each operation's round trips")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: goblin-bench [flags]\n\nRuns the transport-latency matrix; see docs/benchmarks.md.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch {
	case *agentRoot != "":
		if err := harness.ServeAgent(os.Stdin, os.Stdout, *agentRoot, *agentRole); err != nil {
			return fail(2, "%v", err)
		}
		return 0
	case *probeOut != "":
		return probe(ctx, *probeOut)
	case *udpEcho != "":
		runtime.LockOSThread()
		if err := harness.ServeUDPEcho(ctx, *udpEcho); err != nil {
			return fail(1, "%v", err)
		}
		return 0
	case *aeronPong != "":
		runtime.LockOSThread()
		if err := harness.ServeAeronPong(ctx, *aeronPong, *pingCh, *pongCh); err != nil {
			return fail(1, "%v", err)
		}
		return 0
	case *clNodes > 0:
		bin := cfg.GoblinServer
		if bin == "" {
			var err error
			if bin, err = exec.LookPath("goblin-server"); err != nil {
				return fail(2, "-cluster needs goblin-server: -goblin-server BIN or PATH (go build -o BIN/goblin-server ./cmd/goblin-server)")
			}
		}
		o := clusterbench.Options{Server: bin, Nodes: *clNodes, Clients: *clClients, Pipeline: *clBatch,
			Duration: *clTime, Keys: *clKeys, ValueSize: cfg.ValueSize, Idle: *serverIdle, Log: os.Stderr}
		if *quiet {
			o.Log = nil
		}
		rs, err := clusterbench.Run(ctx, o)
		if err != nil {
			return fail(1, "%v", err)
		}
		clusterbench.Print(os.Stdout, o, rs)
		return 0
	case *tails != "":
		if err := tailReport(os.Stdout, *tails, *ktrace, *tailProcs); err != nil {
			return fail(1, "%v", err)
		}
		return 0
	case *statDir != "":
		if err := harness.WatchCounters(ctx, os.Stdout, *statDir, *statEvery); err != nil {
			return fail(1, "%v", err)
		}
		return 0
	}

	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	if cfg.Driver, err = harness.ParseDriver(*driverKind, *aeronmd); err != nil {
		return fail(2, "%v", err)
	}
	if cfg.Paths, err = harness.ParsePaths(*paths); err != nil {
		return fail(2, "%v", err)
	}
	for _, e := range driverEnv {
		path, env, err := harness.ParseDriverEnv(e)
		if err != nil {
			return fail(2, "%v", err)
		}
		if cfg.DriverEnv == nil {
			cfg.DriverEnv = map[string][]string{}
		}
		cfg.DriverEnv[path] = append(cfg.DriverEnv[path], env...)
	}
	if *qualify || *statsCmd != "" {
		cfg.Qualify = &harness.Qualification{Collector: *statsCmd}
	}
	if cfg.RunID == "" {
		cfg.RunID = harness.NewRunID()
	}
	if !*quiet {
		cfg.Progress = os.Stderr
	}
	cfg.Command = strings.Join(os.Args, " ")

	profiles := harness.Profiles(runtime.NumCPU())
	var staging *harness.StageReport
	if *hosts != "" {
		if *netns != "" {
			return fail(2, "-hosts and -server-netns are separate modes")
		}
		server, client, ok := strings.Cut(*hosts, ":")
		if !ok || server == "" || client == "" || strings.Contains(client, ":") {
			return fail(2, "-hosts %q: want SERVER:CLIENT, two ssh destinations (ports and keys go in the ssh config, -ssh 'ssh -F FILE')", *hosts)
		}
		if len(cfg.Paths) == 0 && !set["server-host"] {
			return fail(2, "-hosts needs the server's address on the benchmark path: -paths NAME=SERVER_ADDR/CLIENT_ADDR or -server-host and -client-host")
		}
		if *transports == "" {
			*transports = "tcp,aeron-udp"
		}
		files, err := harness.StageFiles(&cfg)
		if err != nil {
			return fail(2, "%v", err)
		}
		opts := harness.HostsOptions{SSH: strings.Fields(*sshCmd), Server: server, Client: client, RemoteBase: *remoteDir,
			StageDir: *stageDir, StageShared: *stageShare, StageNoCopy: *stageNo, Files: files}
		if !*quiet {
			fmt.Fprintf(os.Stderr, "goblin-bench: staging %d files on %s and %s, checking their hashes from both\n", len(files), server, client)
		}
		srv, cli, rep, err := harness.ConnectHosts(ctx, opts, cfg.OutDir, cfg.RunID)
		if err != nil {
			return fail(2, "%v", err)
		}
		defer srv.Close()
		defer cli.Close()
		cfg.ServerSide, cfg.ClientSide, staging = srv, cli, rep
		ncpu := min(hostCPUs(ctx, srv), hostCPUs(ctx, cli))
		profiles = harness.HostsProfiles(ncpu)
		if !set["profile"] {
			*profile = harness.DefaultHostsProfile(ncpu).Name
		}
	}

	p, ok := profiles[*profile]
	if !ok {
		return fail(2, "unknown profile %q (want fit2, spin or backoff)", *profile)
	}
	override := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	custom := false
	for _, pp := range []*harness.Profile{&p, p.UDP} {
		if pp == nil {
			continue
		}
		override(&pp.ServerIdle, *serverIdle)
		override(&pp.ClientWait, *clientWait)
		override(&pp.DriverIdle, *driverIdle)
		for _, c := range []struct {
			dst *string
			v   cpuListFlag
		}{{&pp.ServerCPU, serverCPU}, {&pp.ClientCPU, clientCPU}, {&pp.DriverCPU, driverCPU},
			{&pp.ServerAgents, srvAgents}, {&pp.ClientAgents, cliAgents}, {&pp.HousekeepingCPU, housekeep}} {
			if c.v.set {
				*c.dst = c.v.value
				custom = true
			}
		}
	}
	if custom || *serverIdle != "" || *clientWait != "" || *driverIdle != "" {
		p.Name += "+custom"
		if p.UDP != nil {
			p.UDP.Name += "+custom"
		}
	}
	cfg.Profile = p
	cfg.Systems = split(*systems)
	cfg.Transports = split(*transports)
	for _, s := range split(*protocols) {
		cfg.Protocols = append(cfg.Protocols, harness.Protocol(strings.ToUpper(s)))
	}
	for _, s := range split(*ops) {
		cfg.Ops = append(cfg.Ops, harness.Op(strings.ToUpper(s)))
	}
	if *netns != "" {
		cfg.ServerWrap = []string{"ip", "netns", "exec", *netns}
	}
	if err := cfg.Validate(); err != nil {
		return fail(2, "%v", err)
	}
	if *list {
		for _, pc := range harness.Plan(&cfg, harness.DefaultProviders()) {
			status := "ok"
			if err := pc.Unavailable(); err != nil {
				status = err.Error()
			}
			fmt.Printf("%-36s %s\n", pc.Case().Label(), status)
		}
		return 0
	}

	t0 := time.Now()
	rep, err := harness.RunStaged(ctx, cfg, harness.DefaultProviders(), staging)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return fail(2, "interrupted; servers stopped, archive not written")
		}
		return fail(2, "%v", err)
	}
	failed := 0
	for _, c := range append(rep.Cases, rep.QualificationCases...) {
		if c.Status == harness.StatusFailed {
			failed++
			fmt.Fprintf(os.Stderr, "goblin-bench: run %d %s failed: %s\n", c.Run, c.Case.Label(), c.Note)
		}
	}
	fmt.Fprintf(os.Stderr, "goblin-bench: wrote %s in %s\n", cfg.OutDir, time.Since(t0).Round(time.Second))
	b, _ := os.ReadFile(cfg.OutDir + "/" + harness.SummaryMD)
	os.Stdout.Write(b)
	if failed > 0 {
		return 1
	}
	return 0
}

// probe is -probe: the measuring client of one case of a two-host run.
func probe(ctx context.Context, out string) int {
	f, err := os.Create(out)
	if err != nil {
		return fail(2, "%v", err)
	}
	defer f.Close()
	if err := harness.ServeProbe(ctx, os.Stdin, f); err != nil {
		return fail(2, "%v", err)
	}
	return 0
}

// hostCPUs is the number of CPUs a host reports (1 when it cannot say).
func hostCPUs(ctx context.Context, h harness.Host) int {
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := h.Run(cctx, harness.ProcSpec{Argv: []string{"nproc"}})
	n := 0
	if err == nil {
		fmt.Sscan(strings.TrimSpace(string(out)), &n)
	}
	return max(n, 1)
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func fail(code int, format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "goblin-bench: "+format+"\n", args...)
	return code
}

// tailReport is -tails: every timeline's slow round trips against one
// kernel trace.
func tailReport(w io.Writer, timelines, trace, procs string) error {
	if trace == "" {
		return fmt.Errorf("-tails needs -kernel-trace FILE (a tracefs trace of the same run, trace_clock mono)")
	}
	f, err := os.Open(trace)
	if err != nil {
		return err
	}
	events, err := harness.ParseKernelTrace(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", trace, err)
	}
	if len(events) == 0 {
		return fmt.Errorf("%s: no trace events in it", trace)
	}
	for _, path := range strings.Split(timelines, ",") {
		rounds, err := harness.ReadTimeline(path)
		if err != nil {
			return err
		}
		if len(rounds) > 0 && (rounds[0].Start < events[0].At || rounds[len(rounds)-1].Start > events[len(events)-1].At) {
			fmt.Fprintf(w, "warning: %s is not wholly inside the trace (events %d-%d ns, round trips from %d ns): was it recorded with trace_clock mono during this run?\n",
				path, events[0].At, events[len(events)-1].At, rounds[0].Start)
		}
		harness.WriteTailReport(w, path, harness.AttributeTails(rounds, events, strings.Split(procs, ",")))
		fmt.Fprintln(w)
	}
	return nil
}
