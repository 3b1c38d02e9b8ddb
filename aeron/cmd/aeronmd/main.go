// Command aeronmd is goblin's Aeron media driver (package aeron/driver) with
// the C media driver's command line, so scripts and test harnesses that
// launch the C driver's aeronmd can launch this one instead:
//
//	aeronmd [-v] [--help] [-Dname=value]... [properties-file-or-url]...
//
// Configuration comes, lowest precedence first, from the environment
// (AERON_DIR, AERON_IPC_TERM_BUFFER_LENGTH, ...), then every -D definition,
// then every properties file or URL, in order; an empty value unsets. It
// serves Aeron IPC and UDP (unicast, multicast, multi-destination sends and
// response channels). SIGINT or SIGTERM, or a
// TERMINATE_DRIVER command a termination validator allows, stop it after
// it has deleted its logs and marked its CnC file shut down; it then exits
// 0. See docs/aeron.md.
package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"github.com/goblin-kv/goblin/aeron/driver"
)

const usage = `Usage: aeronmd [-v] [--help] [-Dname=value]... [properties-file-or-url]...

goblin's Aeron media driver (IPC and UDP), configured like the C driver's aeronmd:
the environment (AERON_DIR, ...) first, then each -D definition, then each
properties file (name=value lines, a path, file:// or http(s):// URL).

  -v         print the version and exit
  -h, --help print this help and exit
  -Dname=value
             set a property (aeron.dir=/dev/shm/x, or AERON_DIR's spelling)

Properties:
`

func main() {
	if os.Getenv("GOMAXPROCS") == "" {
		// The driver is one agent on one thread: one P is all it needs,
		// and with one P an idle driver's goroutine can pass through the
		// scheduler before each park without waking another thread,
		// which keeps the scheduler from preempting it (and waking
		// threads) every 10 ms: see aeron/driver/idle.go.
		runtime.GOMAXPROCS(1)
	}
	os.Exit(run(os.Args[1:], os.Environ(), os.Stdout, os.Stderr))
}

func run(args, environ []string, stdout, stderr io.Writer) int {
	props := driver.PropertiesFromEnv(environ)
	var sources []string
	for _, a := range args {
		switch {
		case a == "-h" || a == "--help" || a == "-help":
			fmt.Fprint(stdout, usage+driver.PropertyHelp()+"\n")
			return 0
		case a == "-v":
			fmt.Fprintf(stdout, "aeronmd %s, Aeron %s protocol\n", driver.Build(), driver.Version)
			return 0
		case strings.HasPrefix(a, "-D"):
			if err := props.Define(a[2:]); err != nil {
				fmt.Fprintf(stderr, "aeronmd: %v\n", err)
				return 1
			}
		case strings.HasPrefix(a, "-"):
			fmt.Fprintf(stderr, "aeronmd: unknown option %q\n%s", a, usage)
			return 1
		default:
			sources = append(sources, a)
		}
	}
	for _, s := range sources {
		if err := props.Load(s); err != nil {
			fmt.Fprintf(stderr, "aeronmd: %v\n", err)
			return 1
		}
	}
	o, err := props.Options()
	if err != nil {
		fmt.Fprintf(stderr, "aeronmd: %v\n", err)
		return 1
	}
	o.Warn = func(msg string) { fmt.Fprintln(stderr, msg) }
	// Like the C aeronmd, stdout carries the configuration and the
	// start and exit lines only when aeron.print.configuration asks, and
	// stderr only what stops the driver (and the start-up warnings the C
	// driver prints there): harnesses fail a run whose driver wrote to
	// stderr.
	verbose := false
	if v, _ := props.Get("aeron.print.configuration"); v == "true" {
		verbose = true
		fmt.Fprintf(stdout, "aeronmd configuration: %+v\n", o)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	d, err := driver.Start(o)
	if err != nil {
		fmt.Fprintf(stderr, "aeronmd: %v\n", err)
		return 1
	}
	say := func(format string, a ...any) {
		if verbose {
			fmt.Fprintf(stdout, format, a...)
		}
	}
	say("aeronmd: serving %s (pid %d)\n", d.Dir(), os.Getpid())
	select {
	case s := <-sigs:
		say("aeronmd: %v: shutting down\n", s)
	case <-d.Done():
		say("aeronmd: terminated by a client: shutting down\n")
	}
	if err := d.Close(); err != nil {
		fmt.Fprintf(stderr, "aeronmd: close: %v\n", err)
		return 1
	}
	return 0
}
