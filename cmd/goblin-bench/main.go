// Command goblin-bench measures goblin. Each job is a subcommand with its
// own flags:
//
//	goblin-bench matrix      the transport-latency matrix on this host
//	goblin-bench remote      the same matrix across two hosts over ssh
//	goblin-bench cluster     throughput of N local nodes as a cluster against one node
//	goblin-bench tails       slow round trips of a -timeline run against a kernel trace
//	goblin-bench aeron-stat  the counters of a media driver
//	goblin-bench help [cmd]  what each one measures, and its flags
//
// matrix and remote write the archive (latency.csv, aggregate.csv,
// metadata.txt, summary.md, charts, SHA256SUMS) into -out. remote stages
// itself, goblin-server and the media driver on both hosts, checks their
// hashes from each side, and runs `goblin-bench agent` on each.
//
// The agent, the measuring client of a two-host case (probe) and the
// servers of the udp-floor and aeron-go cases (udp-echo, aeron-pong) are
// subcommands of the same binary, which is what gets staged; the harness
// starts them, not a user. See docs/benchmarks.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() { os.Exit(run(os.Args[1:])) }

// command is one subcommand.
type command struct {
	name  string
	args  string // what follows the flags in the usage line
	short string // one line for `goblin-bench help`
	about string // what it measures, for its --help
	// internal commands are started by goblin-bench itself (on a host of
	// a run), not by a user; help lists them apart.
	internal bool
	// minArgs and maxArgs bound the arguments after the flags (maxArgs
	// -1: no bound).
	minArgs, maxArgs int
	// flags defines the command's flags on fs and returns what runs it.
	flags func(fs *flag.FlagSet) func(ctx context.Context, args []string) int
}

// commands are goblin-bench's subcommands in the order help lists them.
var commands []*command

func init() {
	commands = []*command{matrixCommand, remoteCommand, clusterCommand, tailsCommand, aeronStatCommand,
		agentCommand, probeCommand, udpEchoCommand, aeronPongCommand}
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// flagSet is c's flag set, defined, and what runs c. It prints nothing
// itself: run reports errors and help.
func (c *command) flagSet() (*flag.FlagSet, func(context.Context, []string) int) {
	fs := flag.NewFlagSet("goblin-bench "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	do := c.flags(fs)
	return fs, do
}

// usage writes c's help: the usage line, what it measures, its flags.
func (c *command) usage(w io.Writer) {
	fs, _ := c.flagSet()
	fmt.Fprintf(w, "usage: goblin-bench %s [flags]", c.name)
	if c.args != "" {
		fmt.Fprintf(w, " %s", c.args)
	}
	fmt.Fprintf(w, "\n\n%s\n", c.about)
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprintf(w, "\nflags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
}

// usage writes the list of subcommands.
func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: goblin-bench <command> [flags] [arguments]\n\n")
	fmt.Fprintf(w, "goblin-bench measures goblin; see docs/benchmarks.md. The commands:\n\n")
	for _, c := range commands {
		if !c.internal {
			fmt.Fprintf(w, "  %-11s %s\n", c.name, c.short)
		}
	}
	fmt.Fprintf(w, "  %-11s %s\n", "help", "this list, or what one command measures and its flags: goblin-bench help <command>")
	fmt.Fprintf(w, "\nStarted by goblin-bench itself on the hosts of a run, not by hand:\n\n")
	for _, c := range commands {
		if c.internal {
			fmt.Fprintf(w, "  %-11s %s\n", c.name, c.short)
		}
	}
	fmt.Fprintf(w, "\n`goblin-bench <command> -h` prints the command's flags.\n")
}

// names lists the subcommands a user runs.
func names() string {
	var out []string
	for _, c := range commands {
		if !c.internal {
			out = append(out, c.name)
		}
	}
	return strings.Join(append(out, "help"), ", ")
}

func run(args []string) int {
	if len(args) == 0 {
		usage(os.Stderr)
		return 2
	}
	name := args[0]
	switch {
	case name == "help" || name == "-h" || name == "-help" || name == "--help":
		return help(args[1:])
	case strings.HasPrefix(name, "-"):
		return fail(2, "%s: the command comes first, its flags after it (goblin-bench matrix %s …); the commands: %s (goblin-bench help)",
			name, name, names())
	}
	c := lookup(name)
	if c == nil {
		return fail(2, "unknown command %q; the commands: %s (goblin-bench help)", name, names())
	}
	fs, do := c.flagSet()
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.usage(os.Stdout)
			return 0
		}
		return fail(2, "%s: %v%s (goblin-bench %s -h lists its flags)", c.name, err, otherMode(c, err), c.name)
	}
	rest := fs.Args()
	if len(rest) < c.minArgs || (c.maxArgs >= 0 && len(rest) > c.maxArgs) {
		what := "no arguments after its flags"
		if c.args != "" {
			what = c.args + " after its flags"
		}
		for _, a := range rest {
			if strings.HasPrefix(a, "-") {
				what += " (flags go before the arguments)"
				break
			}
		}
		return fail(2, "%s takes %s; got %q (goblin-bench %s -h)", c.name, what, rest, c.name)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return do(ctx, rest)
}

// help is `goblin-bench help [command]`.
func help(args []string) int {
	switch len(args) {
	case 0:
		usage(os.Stdout)
		return 0
	case 1:
		if c := lookup(args[0]); c != nil {
			c.usage(os.Stdout)
			return 0
		}
		return fail(2, "help: unknown command %q; the commands: %s", args[0], names())
	}
	return fail(2, "help takes one command at most; got %q", args)
}

// otherMode says which commands own a flag c does not define, when err is
// flag's "not defined" error: the flags of the old single command were
// split among the subcommands.
func otherMode(c *command, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return ""
	}
	var owners []string
	for _, o := range commands {
		if o == c {
			continue
		}
		if fs, _ := o.flagSet(); fs.Lookup(name) != nil {
			owners = append(owners, "goblin-bench "+o.name)
		}
	}
	if len(owners) == 0 {
		return ""
	}
	return fmt.Sprintf(": -%s is a flag of %s", name, strings.Join(owners, ", "))
}

func fail(code int, format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "goblin-bench: "+format+"\n", args...)
	return code
}
