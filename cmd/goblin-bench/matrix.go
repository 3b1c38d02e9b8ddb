package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/goblin-kv/goblin/benchmarks/harness"
	"github.com/goblin-kv/goblin/benchmarks/harness/remote"
	"github.com/goblin-kv/goblin/benchmarks/harness/report"
	"github.com/goblin-kv/goblin/benchmarks/harness/runner"
)

var matrixCommand = &command{
	name:  "matrix",
	short: "the transport-latency matrix on this host: every system × transport × protocol × operation",
	about: `Measures the round-trip latency of every selected case on this host: goblin over each transport
(ring, aeron-ipc, uds, tcp, aeron-udp) and protocol (RESP, SBE) beside its peers (redis, the raw Aeron
ping-pong, the UDP and shared-memory floors), one fresh server per case, -warmup round trips and then
-samples measured ones per operation, -runs times. Writes the archive (latency.csv, aggregate.csv,
metadata.txt, summary.md, charts/, SHA256SUMS) into -out and prints summary.md.
benchmarks/local_transport_latency.sh runs it; with -server-netns the servers run in a network
namespace (benchmarks/aeron_network_latency.sh). See docs/benchmarks.md.`,
	flags: func(fs *flag.FlagSet) func(context.Context, []string) int {
		m := defineMatrixFlags(fs)
		netns := fs.String("server-netns", "", "run servers inside this network namespace (ip netns exec NAME)")
		return func(ctx context.Context, _ []string) int {
			if *netns != "" {
				m.cfg.ServerWrap = []string{"ip", "netns", "exec", *netns}
			}
			return m.run(ctx, fs, nil)
		}
	},
}

var remoteCommand = &command{
	name:  "remote",
	short: "the same matrix across two hosts over ssh (tcp and aeron-udp by default)",
	about: `Measures the matrix between two real hosts: -hosts SERVER:CLIENT, two ssh destinations. The
controller (this process) stages goblin-bench, goblin-server and the media driver on both hosts, checks
their hashes from each side, starts ` + "`goblin-bench agent`" + ` on each over ssh, and runs every case with the
servers on the server host and a fresh ` + "`goblin-bench probe`" + ` measuring on the client host. The network
cases need the server's address on the benchmark path: -paths, or -server-host and -client-host.
Writes the same archive as matrix, plus hosts/ (the staged files' hashes as each host saw them, the
hosts' facts). benchmarks/aeron_network_latency.sh with HOSTS= runs it. See docs/benchmarks.md, "Across
two hosts".`,
	flags: func(fs *flag.FlagSet) func(context.Context, []string) int {
		m := defineMatrixFlags(fs)
		r := &remoteFlags{
			hosts:      fs.String("hosts", "", "two hosts over ssh: SERVER:CLIENT, two ssh destinations ([user@]host or a Host of the ssh config); required"),
			sshCmd:     fs.String("ssh", "ssh", "the ssh command and options, e.g. 'ssh -F ~/.ssh/bench_config'"),
			remoteDir:  fs.String("remote-dir", "/tmp", "where each host keeps the run's runtime files (removed at the end)"),
			stageDir:   fs.String("stage-dir", "", "where the build is staged on each host (default: inside the runtime directory, removed at the end)"),
			stageShare: fs.Bool("stage-shared", false, "-stage-dir is one filesystem both hosts see (NFS): write it once, through the server host"),
			stageNo:    fs.Bool("stage-no-copy", false, "stage nothing: the files are in -stage-dir already (a read-only prefix); their hashes decide"),
		}
		return func(ctx context.Context, _ []string) int { return m.run(ctx, fs, r) }
	},
}

// matrixFlags are the flags matrix and remote share: what to measure, how,
// and where the archive goes.
type matrixFlags struct {
	cfg                               harness.Config
	profile, serverIdle, clientWait   *string
	driverIdle, systems, transports   *string
	protocols, ops, paths, driverKind *string
	aeronmd, statsCmd                 *string
	list, quiet, qualify              *bool
	serverCPU, clientCPU, driverCPU   cpuListFlag
	srvAgents, cliAgents, housekeep   cpuListFlag
	driverEnv                         multiFlag
}

// remoteFlags are remote's own flags: the two hosts and the staging.
type remoteFlags struct {
	hosts, sshCmd, remoteDir, stageDir *string
	stageShare, stageNo                *bool
}

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

func defineMatrixFlags(fs *flag.FlagSet) *matrixFlags {
	m := &matrixFlags{cfg: harness.DefaultConfig()}
	cfg := &m.cfg
	m.profile = fs.String("profile", cfg.Profile.Name, "idle/CPU profile: fit2 (fits 2 cores), spin (one core per spinning thread) or backoff")
	m.serverIdle = fs.String("server-idle", "", "override the profile: goblin-server --idle spin|yield|backoff|doze")
	m.clientWait = fs.String("client-wait", "", "override the profile: the measuring client waits by spin or block")
	m.driverIdle = fs.String("driver-idle", "", "override the profile: Aeron driver agents spin or backoff")
	m.systems = fs.String("systems", "", "comma-separated systems to run: goblin,redis,aeron-go,aeron-raw,udp-floor,shm-floor (default all)")
	m.transports = fs.String("transports", "", "comma-separated transports: ring,aeron-ipc,uds,tcp,aeron-udp (default all; tcp,aeron-udp for remote)")
	m.protocols = fs.String("protocols", "", "comma-separated protocols: RESP,SBE (default both)")
	m.ops = fs.String("ops", "", "comma-separated operations: PING,SET,GET,HSET,HGET,LPUSH,RPOP,ZADD,ZRANGE (default PING,SET,GET)")
	m.list = fs.Bool("list", false, "print the planned cases and whether each can run, then exit")
	m.quiet = fs.Bool("quiet", false, "no progress lines on stderr")
	m.paths = fs.String("paths", "", "address pairs of the network cases: NAME=SERVER_ADDR/CLIENT_ADDR,… (default: -server-host/-client-host)")
	m.driverKind = fs.String("driver", "java", "media driver kind: java (Aeron's Java driver), aeronmd (an aeronmd-compatible binary, -aeronmd) or goblin (goblin's own, built from aeron/cmd/aeronmd, -aeronmd)")
	m.aeronmd = fs.String("aeronmd", "", "the aeronmd binary for -driver aeronmd or goblin")
	m.qualify = fs.Bool("qualify", false, "after the runs, run every case once more with a statistics collector attached to each media driver, archived in qualification/, never in the aggregate")
	m.statsCmd = fs.String("stats-cmd", "", "the qualification's collector, run by sh -c on each driver's host with {pid} and {dir} filled in, e.g. 'xlio_stats -p {pid} -i 1' (default: goblin-bench aeron-stat)")
	fs.Var(&m.serverCPU, "server-cpu", "override the profile: the `CPUs` of the server, a CPU list such as 0 or 2-3 ('' = no pinning; unset = the profile's)")
	fs.Var(&m.clientCPU, "client-cpu", "override the profile: the `CPUs` of the measuring thread ('' = no pinning; unset = the profile's)")
	fs.Var(&m.driverCPU, "driver-cpu", "override the profile: the `CPUs` of the Aeron media drivers ('' = no pinning; unset = the profile's)")
	fs.Var(&m.srvAgents, "server-agents", "override the profile: the server driver's `agents` one by one, e.g. conductor=2,sender=3,receiver=4 ('' = none pinned one by one)")
	fs.Var(&m.cliAgents, "client-agents", "override the profile: the client driver's `agents` one by one, e.g. conductor=2,sender=3,receiver=4 ('' = none pinned one by one)")
	fs.Var(&m.housekeep, "housekeeping-cpu", "override the profile: the `CPUs` of every thread no other list names (goblin-server then runs there with only its store loop on -server-cpu; '' = none)")
	fs.Var(&m.driverEnv, "driver-env", "'[PATH:]K=V K2=V2': added to the media drivers' environment (all paths, or the named one); repeatable")
	fs.StringVar(&cfg.OutDir, "out", cfg.OutDir, "run directory to write")
	fs.IntVar(&cfg.Runs, "runs", cfg.Runs, "complete runs of the matrix (averaged)")
	fs.IntVar(&cfg.Warmup, "warmup", cfg.Warmup, "warm-up round trips per operation")
	fs.IntVar(&cfg.Samples, "samples", cfg.Samples, "measured round trips per operation")
	fs.IntVar(&cfg.ValueSize, "value-size", cfg.ValueSize, "bytes per SET value")
	fs.IntVar(&cfg.Keys, "keys", cfg.Keys, "distinct keys SET and GET cycle over")
	fs.IntVar(&cfg.Depth, "depth", cfg.Depth, "requests in flight per round trip (1 = synchronous)")
	fs.StringVar(&cfg.GoblinServer, "goblin-server", "", "goblin-server binary (default: PATH; staged to both hosts by remote)")
	fs.StringVar(&cfg.RedisServer, "redis-server", "", "redis-server binary (default: PATH; for remote, a path on the server host)")
	fs.StringVar(&cfg.Java, "java", "", "java binary for the Aeron media driver and raw ping-pong (default: PATH; for remote, a path on the hosts)")
	fs.StringVar(&cfg.AeronJar, "aeron-jar", "", "io.aeron:aeron-all jar (default: ~/.m2, version in scripts/aeron.version)")
	fs.BoolVar(&cfg.Timeline, "timeline", false, "also write every measured round trip's latency in measured order to <op>.timeline.csv in the case directory (when slow round trips happen; a local measuring client only)")
	fs.StringVar(&cfg.Client, "client", cfg.Client, "measuring client: library (goblin client library) or raw (pre-encoded RESP over write/read; SBE and message transports still use the library)")
	fs.StringVar(&cfg.ServerHost, "server-host", cfg.ServerHost, "address servers listen on (TCP, Aeron UDP)")
	fs.StringVar(&cfg.ClientHost, "client-host", "", "the client's own address (Aeron UDP; default: server host)")
	fs.StringVar(&cfg.ControlHost, "control-host", "", "Aeron UDP response control host (default and only sound choice: the server's address)")
	fs.StringVar(&cfg.RunID, "run-id", "", "name of this run's files outside the archive (default: time and pid)")
	fs.DurationVar(&cfg.CaseTimeout, "case-timeout", cfg.CaseTimeout, "bound on starting a server, and on each operation's round trips")
	return m
}

// run measures the matrix: on this host, or across the two hosts of r.
func (m *matrixFlags) run(ctx context.Context, fs *flag.FlagSet, r *remoteFlags) int {
	cfg := m.cfg
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	if cfg.Driver, err = harness.ParseDriver(*m.driverKind, *m.aeronmd); err != nil {
		return fail(2, "%v", err)
	}
	if cfg.Paths, err = harness.ParsePaths(*m.paths); err != nil {
		return fail(2, "%v", err)
	}
	for _, e := range m.driverEnv {
		path, env, err := harness.ParseDriverEnv(e)
		if err != nil {
			return fail(2, "%v", err)
		}
		if cfg.DriverEnv == nil {
			cfg.DriverEnv = map[string][]string{}
		}
		cfg.DriverEnv[path] = append(cfg.DriverEnv[path], env...)
	}
	if *m.qualify || *m.statsCmd != "" {
		cfg.Qualify = &harness.Qualification{Collector: *m.statsCmd}
	}
	if cfg.RunID == "" {
		cfg.RunID = runner.NewRunID()
	}
	if !*m.quiet {
		cfg.Progress = os.Stderr
	}
	cfg.Command = strings.Join(os.Args, " ")

	profiles := harness.Profiles(runtime.NumCPU())
	profile, transports := *m.profile, *m.transports
	var staging *harness.StageReport
	if r != nil {
		if *r.hosts == "" {
			return fail(2, "remote needs -hosts SERVER:CLIENT, two ssh destinations")
		}
		server, client, ok := strings.Cut(*r.hosts, ":")
		if !ok || server == "" || client == "" || strings.Contains(client, ":") {
			return fail(2, "-hosts %q: want SERVER:CLIENT, two ssh destinations (ports and keys go in the ssh config, -ssh 'ssh -F FILE')", *r.hosts)
		}
		if len(cfg.Paths) == 0 && !set["server-host"] {
			return fail(2, "-hosts needs the server's address on the benchmark path: -paths NAME=SERVER_ADDR/CLIENT_ADDR or -server-host and -client-host")
		}
		if transports == "" {
			transports = "tcp,aeron-udp"
		}
		files, err := remote.StageFiles(&cfg)
		if err != nil {
			return fail(2, "%v", err)
		}
		opts := remote.HostsOptions{SSH: strings.Fields(*r.sshCmd), Server: server, Client: client, RemoteBase: *r.remoteDir,
			StageDir: *r.stageDir, StageShared: *r.stageShare, StageNoCopy: *r.stageNo, Files: files}
		if !*m.quiet {
			fmt.Fprintf(os.Stderr, "goblin-bench: staging %d files on %s and %s, checking their hashes from both\n", len(files), server, client)
		}
		srv, cli, rep, err := remote.ConnectHosts(ctx, opts, cfg.OutDir, cfg.RunID)
		if err != nil {
			return fail(2, "%v", err)
		}
		defer srv.Close()
		defer cli.Close()
		cfg.ServerSide, cfg.ClientSide, staging = srv, cli, rep
		ncpu := min(hostCPUs(ctx, srv), hostCPUs(ctx, cli))
		profiles = harness.HostsProfiles(ncpu)
		if !set["profile"] {
			profile = harness.DefaultHostsProfile(ncpu).Name
		}
	}

	p, ok := profiles[profile]
	if !ok {
		return fail(2, "unknown profile %q (want fit2, spin or backoff)", profile)
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
		override(&pp.ServerIdle, *m.serverIdle)
		override(&pp.ClientWait, *m.clientWait)
		override(&pp.DriverIdle, *m.driverIdle)
		for _, c := range []struct {
			dst *string
			v   cpuListFlag
		}{{&pp.ServerCPU, m.serverCPU}, {&pp.ClientCPU, m.clientCPU}, {&pp.DriverCPU, m.driverCPU},
			{&pp.ServerAgents, m.srvAgents}, {&pp.ClientAgents, m.cliAgents}, {&pp.HousekeepingCPU, m.housekeep}} {
			if c.v.set {
				*c.dst = c.v.value
				custom = true
			}
		}
	}
	if custom || *m.serverIdle != "" || *m.clientWait != "" || *m.driverIdle != "" {
		p.Name += "+custom"
		if p.UDP != nil {
			p.UDP.Name += "+custom"
		}
	}
	cfg.Profile = p
	cfg.Systems = split(*m.systems)
	cfg.Transports = split(transports)
	for _, s := range split(*m.protocols) {
		cfg.Protocols = append(cfg.Protocols, harness.Protocol(strings.ToUpper(s)))
	}
	for _, s := range split(*m.ops) {
		cfg.Ops = append(cfg.Ops, harness.Op(strings.ToUpper(s)))
	}
	if err := cfg.Validate(); err != nil {
		return fail(2, "%v", err)
	}
	if *m.list {
		for _, pc := range runner.Plan(&cfg, runner.DefaultProviders()) {
			status := "ok"
			if err := pc.Unavailable(); err != nil {
				status = err.Error()
			}
			fmt.Printf("%-36s %s\n", pc.Case().Label(), status)
		}
		return 0
	}

	t0 := time.Now()
	rep, err := runner.RunStaged(ctx, cfg, runner.DefaultProviders(), staging)
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
	b, _ := os.ReadFile(cfg.OutDir + "/" + report.SummaryMD)
	os.Stdout.Write(b)
	if failed > 0 {
		return 1
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
