// Command goblin-bench runs goblin's transport-latency matrix and writes the
// archive (latency.csv, aggregate.csv, metadata.txt, summary.md, charts,
// SHA256SUMS) into -out. See docs/benchmarks.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/goblin-kv/goblin/benchmarks/harness"
)

func main() {
	cfg := harness.DefaultConfig()
	profiles := harness.Profiles(runtime.NumCPU())
	var (
		profile    = flag.String("profile", cfg.Profile.Name, "idle/CPU profile: fit2 (fits 2 cores), spin (one core per spinning thread) or backoff")
		serverIdle = flag.String("server-idle", "", "override the profile: goblin-server --idle spin|yield|backoff")
		clientWait = flag.String("client-wait", "", "override the profile: the measuring client waits by spin or block")
		driverIdle = flag.String("driver-idle", "", "override the profile: Aeron driver agents spin or backoff")
		serverCPU  = flag.String("server-cpu", "\x00", "override the profile: CPU list for the server ('' = no pinning)")
		clientCPU  = flag.String("client-cpu", "\x00", "override the profile: CPU list for the measuring thread")
		driverCPU  = flag.String("driver-cpu", "\x00", "override the profile: CPU list for Aeron media drivers")
		systems    = flag.String("systems", "", "comma-separated systems to run: goblin,redis,aeron-raw,shm-floor (default all)")
		transports = flag.String("transports", "", "comma-separated transports: ring,aeron-ipc,uds,tcp,aeron-udp (default all)")
		protocols  = flag.String("protocols", "", "comma-separated protocols: RESP,SBE (default both)")
		ops        = flag.String("ops", "", "comma-separated operations: PING,SET,GET (default all)")
		netns      = flag.String("server-netns", "", "run servers inside this network namespace (ip netns exec NAME)")
		list       = flag.Bool("list", false, "print the planned cases and whether each can run, then exit")
		quiet      = flag.Bool("quiet", false, "no progress lines on stderr")
	)
	flag.StringVar(&cfg.OutDir, "out", cfg.OutDir, "run directory to write")
	flag.IntVar(&cfg.Runs, "runs", cfg.Runs, "complete runs of the matrix (averaged)")
	flag.IntVar(&cfg.Warmup, "warmup", cfg.Warmup, "warm-up round trips per operation")
	flag.IntVar(&cfg.Samples, "samples", cfg.Samples, "measured round trips per operation")
	flag.IntVar(&cfg.ValueSize, "value-size", cfg.ValueSize, "bytes per SET value")
	flag.IntVar(&cfg.Keys, "keys", cfg.Keys, "distinct keys SET and GET cycle over")
	flag.IntVar(&cfg.Depth, "depth", cfg.Depth, "requests in flight per round trip (1 = synchronous)")
	flag.StringVar(&cfg.GoblinServer, "goblin-server", "", "goblin-server binary (default: PATH)")
	flag.StringVar(&cfg.RedisServer, "redis-server", "", "redis-server binary (default: PATH)")
	flag.StringVar(&cfg.Java, "java", "", "java binary for the Aeron media driver and raw ping-pong (default: PATH)")
	flag.StringVar(&cfg.AeronJar, "aeron-jar", "", "io.aeron:aeron-all jar (default: ~/.m2, version in scripts/aeron.version)")
	flag.StringVar(&cfg.Client, "client", cfg.Client, "measuring client: library (goblin client library) or raw (pre-encoded RESP over write/read; SBE and message transports still use the library)")
	flag.StringVar(&cfg.ServerHost, "server-host", cfg.ServerHost, "address servers listen on (TCP, Aeron UDP)")
	flag.StringVar(&cfg.ClientHost, "client-host", "", "the client's own address (Aeron UDP; default: server host)")
	flag.DurationVar(&cfg.CaseTimeout, "case-timeout", cfg.CaseTimeout, "bound on starting a server, and on each operation's round trips")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: goblin-bench [flags]\n\nRuns the transport-latency matrix; see docs/benchmarks.md.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()

	p, ok := profiles[*profile]
	if !ok {
		fatalf("unknown profile %q (want fit2, spin or backoff)", *profile)
	}
	override := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	for _, pp := range []*harness.Profile{&p, p.UDP} {
		if pp == nil {
			continue
		}
		override(&pp.ServerIdle, *serverIdle)
		override(&pp.ClientWait, *clientWait)
		override(&pp.DriverIdle, *driverIdle)
		for _, c := range []struct {
			dst *string
			v   string
		}{{&pp.ServerCPU, *serverCPU}, {&pp.ClientCPU, *clientCPU}, {&pp.DriverCPU, *driverCPU}} {
			if c.v != "\x00" {
				*c.dst = c.v
			}
		}
	}
	if *serverIdle != "" || *clientWait != "" || *driverIdle != "" || *serverCPU != "\x00" || *clientCPU != "\x00" || *driverCPU != "\x00" {
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
	if !*quiet {
		cfg.Progress = os.Stderr
	}
	cfg.Command = strings.Join(os.Args, " ")
	if err := cfg.Validate(); err != nil {
		fatalf("%v", err)
	}
	if *list {
		for _, pc := range harness.Plan(&cfg, harness.DefaultProviders()) {
			status := "ok"
			if err := pc.Unavailable(); err != nil {
				status = err.Error()
			}
			fmt.Printf("%-28s %s\n", pc.Case().Label(), status)
		}
		return
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	t0 := time.Now()
	rep, err := harness.Run(ctx, cfg, harness.DefaultProviders())
	if err != nil {
		if errors.Is(err, context.Canceled) {
			fatalf("interrupted; servers stopped, archive not written")
		}
		fatalf("%v", err)
	}
	failed := 0
	for _, c := range rep.Cases {
		if c.Status == harness.StatusFailed {
			failed++
			fmt.Fprintf(os.Stderr, "goblin-bench: run %d %s failed: %s\n", c.Run, c.Case.Label(), c.Note)
		}
	}
	fmt.Fprintf(os.Stderr, "goblin-bench: wrote %s in %s\n", cfg.OutDir, time.Since(t0).Round(time.Second))
	b, _ := os.ReadFile(cfg.OutDir + "/" + harness.SummaryMD)
	os.Stdout.Write(b)
	if failed > 0 {
		os.Exit(1)
	}
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

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "goblin-bench: "+format+"\n", args...)
	os.Exit(2)
}
