package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/goblin-kv/goblin/benchmarks/clusterbench"
	"github.com/goblin-kv/goblin/benchmarks/harness"
	"github.com/goblin-kv/goblin/benchmarks/harness/remote"
	"github.com/goblin-kv/goblin/benchmarks/harness/report"
	"github.com/goblin-kv/goblin/benchmarks/harness/runner"
)

var clusterCommand = &command{
	name:  "cluster",
	short: "throughput of N local goblin-server nodes as a cluster against one node, pipelined",
	about: `Measures throughput: starts one goblin-server node, then -nodes nodes as a cluster (slots split
evenly), each a separate process on loopback TCP, and drives each with goblin's cluster client:
-clients goroutines sending pipelined batches of -pipeline commands, SET and GET half and half over
-keys keys spread over every slot, for -duration. Prints commands per second, batch latency and the CPU
the nodes and the client used, one row per setup. See docs/cluster.md.`,
	flags: func(fs *flag.FlagSet) func(context.Context, []string) int {
		def := harness.DefaultConfig()
		nodes := fs.Int("nodes", 0, "nodes of the cluster, 1 or more (one node alone is measured first); required")
		clients := fs.Int("clients", 4, "client goroutines")
		pipeline := fs.Int("pipeline", 64, "commands per pipelined batch")
		duration := fs.Duration("duration", 5*time.Second, "measured time of each run")
		keys := fs.Int("keys", 100_000, "distinct keys, spread over every slot")
		valueSize := fs.Int("value-size", def.ValueSize, "bytes per SET value")
		idle := fs.String("server-idle", "", "goblin-server --idle spin|yield|backoff (default: goblin-server's)")
		server := fs.String("goblin-server", "", "goblin-server binary (default: PATH)")
		quiet := fs.Bool("quiet", false, "no progress lines on stderr")
		return func(ctx context.Context, _ []string) int {
			if *nodes < 1 {
				return fail(2, "cluster needs -nodes N, 1 or more (got %d)", *nodes)
			}
			bin := *server
			if bin == "" {
				var err error
				if bin, err = exec.LookPath("goblin-server"); err != nil {
					return fail(2, "cluster needs goblin-server: -goblin-server BIN or PATH (go build -o BIN/goblin-server ./cmd/goblin-server)")
				}
			}
			o := clusterbench.Options{Server: bin, Nodes: *nodes, Clients: *clients, Pipeline: *pipeline,
				Duration: *duration, Keys: *keys, ValueSize: *valueSize, Idle: *idle, Log: os.Stderr}
			if *quiet {
				o.Log = nil
			}
			rs, err := clusterbench.Run(ctx, o)
			if err != nil {
				return fail(1, "%v", err)
			}
			clusterbench.Print(os.Stdout, o, rs)
			return 0
		}
	},
}

var tailsCommand = &command{
	name:    "tails",
	args:    "TIMELINE.csv...",
	minArgs: 1, maxArgs: -1,
	short: "put each slow round trip of a -timeline run down to what a kernel trace shows during it",
	about: `Reads <op>.timeline.csv files that ` + "`goblin-bench matrix -timeline`" + ` wrote and a tracefs trace of the same
run recorded with trace_clock mono (benchmarks/kernel_trace.sh), and puts each slow round trip (more
than 3x the median) down to the first thing the kernel did while it lasted: a switch to another
thread, an interrupt, a softirq, a page fault. Prints a table per timeline: each cause, how many slow
round trips it accounts for and how often it shows in fast ones. See
docs/results/transport-latency.md, "Tails on this VM".`,
	flags: func(fs *flag.FlagSet) func(context.Context, []string) int {
		trace := fs.String("kernel-trace", "", "the tracefs trace of the same run, recorded with trace_clock mono; required")
		procs := fs.String("procs", "goblin-bench,goblin-server", "the benchmark's process names (a switch between two of their threads is the benchmark's own)")
		return func(_ context.Context, args []string) int {
			if err := tailReport(os.Stdout, args, *trace, *procs); err != nil {
				return fail(1, "%v", err)
			}
			return 0
		}
	},
}

// tailReport is `tails`: every timeline's slow round trips against one
// kernel trace.
func tailReport(w io.Writer, timelines []string, trace, procs string) error {
	if trace == "" {
		return fmt.Errorf("tails needs -kernel-trace FILE (a tracefs trace of the same run, trace_clock mono)")
	}
	f, err := os.Open(trace)
	if err != nil {
		return err
	}
	events, err := report.ParseKernelTrace(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", trace, err)
	}
	if len(events) == 0 {
		return fmt.Errorf("%s: no trace events in it", trace)
	}
	for _, path := range timelines {
		rounds, err := report.ReadTimeline(path)
		if err != nil {
			return err
		}
		if len(rounds) > 0 && (rounds[0].Start < events[0].At || rounds[len(rounds)-1].Start > events[len(events)-1].At) {
			fmt.Fprintf(w, "warning: %s is not wholly inside the trace (events %d-%d ns, round trips from %d ns): was it recorded with trace_clock mono during this run?\n",
				path, events[0].At, events[len(events)-1].At, rounds[0].Start)
		}
		report.WriteTailReport(w, path, report.AttributeTails(rounds, events, strings.Split(procs, ",")))
		fmt.Fprintln(w)
	}
	return nil
}

var aeronStatCommand = &command{
	name:    "aeron-stat",
	args:    "AERON_DIR",
	minArgs: 1, maxArgs: 1,
	short: "print the counters of the media driver in an Aeron directory (the qualification's default collector)",
	about: `Prints the counters of the media driver whose CnC file is in AERON_DIR: once, or every -watch
interval until stopped. It is the default statistics collector of a qualification pass
(` + "`goblin-bench matrix -qualify`" + `), started on each driver's host.`,
	flags: func(fs *flag.FlagSet) func(context.Context, []string) int {
		every := fs.Duration("watch", 0, "repeat every interval until stopped")
		return func(ctx context.Context, args []string) int {
			if err := runner.WatchCounters(ctx, os.Stdout, args[0], *every); err != nil {
				return fail(1, "%v", err)
			}
			return 0
		}
	},
}

var agentCommand = &command{
	name:    "agent",
	args:    "ROOT",
	minArgs: 1, maxArgs: 1,
	internal: true,
	short:    "the agent of a remote run on one host, runtime files under ROOT (speaks JSON on stdin/stdout)",
	about: `Serves as the agent of a two-host run (goblin-bench remote) on one host: it reads the
controller's requests (start a process, wait for it, read a file, ...) as JSON on standard input,
answers on standard output, keeps its runtime files under ROOT, and stops everything it started when
the controller goes. The controller starts it over ssh.`,
	flags: func(fs *flag.FlagSet) func(context.Context, []string) int {
		role := fs.String("role", "server", "the host's role in the run: server or client")
		return func(_ context.Context, args []string) int {
			if err := remote.ServeAgent(os.Stdin, os.Stdout, args[0], *role); err != nil {
				return fail(2, "%v", err)
			}
			return 0
		}
	},
}

var probeCommand = &command{
	name:    "probe",
	args:    "RESULT_FILE",
	minArgs: 1, maxArgs: 1,
	internal: true,
	short:    "the measuring client of one case of a remote run: measures the ProbeSpec on stdin",
	about: `Measures one case of a two-host run on the client host: reads the ProbeSpec (JSON) on standard
input, runs its warm-up and measured round trips against the server, and writes the result (JSON) to
RESULT_FILE. The agent starts it, one fresh process per case.`,
	flags: func(fs *flag.FlagSet) func(context.Context, []string) int {
		return func(ctx context.Context, args []string) int {
			f, err := os.Create(args[0])
			if err != nil {
				return fail(2, "%v", err)
			}
			defer f.Close()
			if err := runner.ServeProbe(ctx, os.Stdin, f); err != nil {
				return fail(2, "%v", err)
			}
			return 0
		}
	},
}

var udpEchoCommand = &command{
	name:    "udp-echo",
	args:    "IP:PORT",
	minArgs: 1, maxArgs: 1,
	internal: true,
	short:    "the udp-floor case's server: echo datagrams on IP:PORT, busy-polling",
	about: `The server of the udp-floor case: binds IP:PORT and sends every datagram back to its sender,
busy-polling a non-blocking socket on a locked OS thread, until stopped.`,
	flags: func(fs *flag.FlagSet) func(context.Context, []string) int {
		return func(ctx context.Context, args []string) int {
			runtime.LockOSThread()
			if err := runner.ServeUDPEcho(ctx, args[0]); err != nil {
				return fail(1, "%v", err)
			}
			return 0
		}
	},
}

var aeronPongCommand = &command{
	name:    "aeron-pong",
	args:    "AERON_DIR",
	minArgs: 1, maxArgs: 1,
	internal: true,
	short:    "the aeron-go case's server: a Go media driver in AERON_DIR echoing ping to pong",
	about: `The server of the aeron-go case: runs a Go media driver in AERON_DIR inside this process and
echoes every message of -ping-channel (stream 1002) on -pong-channel (stream 1003), until stopped.`,
	flags: func(fs *flag.FlagSet) func(context.Context, []string) int {
		ping := fs.String("ping-channel", "", "the channel it subscribes to (stream 1002)")
		pong := fs.String("pong-channel", "", "the channel it answers on (stream 1003)")
		return func(ctx context.Context, args []string) int {
			runtime.LockOSThread()
			if err := runner.ServeAeronPong(ctx, args[0], *ping, *pong); err != nil {
				return fail(1, "%v", err)
			}
			return 0
		}
	},
}
