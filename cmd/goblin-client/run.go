package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/uds"
	// Linking the ring and Aeron transports lets the client dial ring:// and
	// aeron: targets; their errors are also told apart below.
	"github.com/goblin-kv/goblin/transport/aeron"
	"github.com/goblin-kv/goblin/transport/ring"
	"github.com/peterh/liner"
)

// Exit codes.
const (
	exitOK          = 0
	exitServerError = 1
	exitUsage       = 2
	exitConnect     = 3
)

const usageText = `Usage: goblin-client [flags] [command [arg ...]]

Sends one command to a goblin server and prints the reply the way
redis-cli does. With no command it reads commands from standard input,
one per line, or opens an interactive prompt when standard input is a
terminal (type help there).

Targets (--target, or $GOBLIN_TARGET):
  uds:///path/goblin.sock           a Unix socket (a bare path works too)
  tcp://127.0.0.1:6380              TCP (a bare host:port works too)
  ring:///dev/shm/goblin            goblin's shared-memory ring, on this machine
  aeron:ipc                         Aeron IPC through the media driver in its default directory
  aeron:udp?endpoint=H:P|control=H:P2
                                    Aeron UDP: requests to endpoint, replies to control
  proto=resp or proto=sbe among the parameters picks the protocol (uds:///g.sock?proto=sbe,
  aeron:udp?endpoint=H:P|control=H:P2|proto=sbe); see docs/transports.md for the rest

Examples:
  goblin-client ping
  goblin-client set greeting "hello world"
  goblin-client --json mget a b c
  goblin-client --target tcp://127.0.0.1:6380 --proto sbe get greeting
  goblin-client --target 'ring:///dev/shm/goblin?proto=sbe' set k v
  goblin-client --target 'aeron:ipc?proto=sbe' get k
  goblin-client --target 'aeron:udp?endpoint=10.0.0.1:40123|control=10.0.0.1:40124' ping
  printf 'set a 1\nincr a\n' | goblin-client
  goblin-client -x set photo < photo.jpg     the last argument from stdin, byte for byte
  goblin-client --raw mget a b c             values unquoted, one a line, as redis-cli --raw
  goblin-client -n 3 -3 config get 'max*'    database 3, RESP3 replies (as redis-cli -n 3 -3)
  goblin-client monitor                      every command the server runs, until Ctrl-C
  goblin-client --cluster --target 127.0.0.1:7001 dbsize   all nodes' keys

Flags:
`

const exitText = `
Exit status:
  0  every command succeeded
  1  the server answered with an error reply (e.g. wrong type)
  2  usage error (bad flag, target or quoting)
  3  cannot connect to the server, or the connection was lost
`

type config struct {
	target   string
	proto    string
	json     bool
	raw      bool
	noRaw    bool
	stdinArg bool // -x: the last argument is standard input
	resp3    bool
	db       int
	timeout  time.Duration
	password string
	history  string
	trustUID int
	cluster  bool

	// TLS, as redis-cli's --tls options.
	tls     bool
	tlsFile uds.ClientTLSFiles
}

// run is the whole program, minus os.Exit, so tests can drive it.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var cfg config
	fs := flag.NewFlagSet("goblin-client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.target, "target", envOr("GOBLIN_TARGET", transport.DefaultTarget().String()),
		"server to talk to: uds:///path.sock, tcp://host:port, ring:///dir, aeron:ipc, aeron:udp?endpoint=H:P|control=H:P2,\na socket path or host:port (default from $GOBLIN_TARGET, else goblin-server's default socket)")
	fs.StringVar(&cfg.proto, "proto", "", "wire protocol, resp or sbe (default: the target's proto parameter, else resp)")
	fs.BoolVar(&cfg.json, "json", false, "print each reply as one line of JSON")
	fs.BoolVar(&cfg.raw, "raw", false, "print replies raw, as redis-cli --raw does: bulk strings as their bytes, no quotes, numbers or (nil); one line per array element")
	fs.BoolVar(&cfg.noRaw, "no-raw", false, "print replies quoted, as redis-cli --no-raw does (the default)")
	fs.BoolVar(&cfg.stdinArg, "x", false, "read the last argument of the command from standard input, whole, byte for byte (a file as a value: goblin-client -x set k < file)")
	fs.BoolVar(&cfg.resp3, "3", false, "speak RESP3 (HELLO 3 on every connection) and print its replies as redis-cli -3 does")
	fs.IntVar(&cfg.db, "n", 0, "database number: every connection selects it, and the prompt shows it (as redis-cli -n)")
	fs.BoolVar(&cfg.cluster, "cluster", false, "treat --target as a seed of a goblin (or Redis) cluster: send each command to the node owning its keys' slot, over the first transport the node advertises that answers, following MOVED and ASK (docs/cluster.md)")
	fs.DurationVar(&cfg.timeout, "timeout", 10*time.Second, "deadline for connecting and for each command (0: none)")
	fs.StringVar(&cfg.password, "password", os.Getenv("GOBLIN_PASSWORD"), "send AUTH with this password after connecting (default $GOBLIN_PASSWORD)")
	fs.StringVar(&cfg.history, "history", defaultHistory(), "interactive prompt history file (empty: no history)")
	fs.IntVar(&cfg.trustUID, "server-uid", -1, "also send the password to a server on a Unix socket run by this user id (by default only to one run by you or root)")
	fs.BoolVar(&cfg.tls, "tls", false, "connect with TLS (as redis-cli --tls): a tcp:// or host:port target becomes tls://; tls:// and rediss:// targets need no flag")
	fs.StringVar(&cfg.tlsFile.CACert, "cacert", "", "CA certificate `file` to verify the server with (default: the system's roots)")
	fs.StringVar(&cfg.tlsFile.CACertDir, "cacertdir", "", "`directory` of CA certificate files to verify the server with")
	fs.StringVar(&cfg.tlsFile.Cert, "cert", "", "client certificate `file`, for a server with tls-auth-clients yes")
	fs.StringVar(&cfg.tlsFile.Key, "key", "", "private key `file` of --cert")
	fs.StringVar(&cfg.tlsFile.ServerName, "sni", "", "server name to ask for and verify (default: the target's host)")
	fs.BoolVar(&cfg.tlsFile.Insecure, "insecure", false, "do not verify the server's certificate")
	fs.Usage = func() {} // errors get a short hint; --help prints the full text to stdout
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usageText)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			fmt.Fprint(stdout, exitText)
			return exitOK
		}
		fmt.Fprintln(stderr, "Run goblin-client --help for usage.")
		return exitUsage
	}
	t, err := transport.ParseTarget(cfg.target)
	if err != nil {
		fmt.Fprintf(stderr, "goblin-client: %v\n", err)
		return exitUsage
	}
	if cfg.proto != "" {
		p, err := proto.Parse(cfg.proto)
		if err != nil {
			fmt.Fprintf(stderr, "goblin-client: --proto: %v\n", err)
			return exitUsage
		}
		t.Proto, t.ProtoSet = p, true // whatever the target says
	}
	if cfg.raw && cfg.noRaw || cfg.raw && cfg.json {
		fmt.Fprintln(stderr, "goblin-client: pick one of --raw, --no-raw and --json")
		return exitUsage
	}
	if cfg.stdinArg && fs.NArg() == 0 {
		fmt.Fprintln(stderr, "goblin-client: -x needs a command, e.g. goblin-client -x set k < file")
		return exitUsage
	}
	if cfg.cluster && cfg.db != 0 {
		fmt.Fprintln(stderr, "goblin-client: -n: a cluster has only database 0")
		return exitUsage
	}
	if cfg.db < 0 {
		fmt.Fprintf(stderr, "goblin-client: -n %d: database numbers start at 0\n", cfg.db)
		return exitUsage
	}
	opts := client.Options{Password: cfg.password, DialTimeout: cfg.timeout, DB: cfg.db}
	if cfg.tls && t.Scheme == transport.TCP {
		t.Scheme = transport.TLS
	}
	if t.Scheme == transport.TLS {
		if opts.TLS, err = uds.ClientTLSConfig(cfg.tlsFile); err != nil {
			fmt.Fprintf(stderr, "goblin-client: %v\n", err)
			return exitUsage
		}
	} else if cfg.tls {
		fmt.Fprintf(stderr, "goblin-client: --tls: the target %s is not TCP\n", t)
		return exitUsage
	}
	if cfg.resp3 {
		opts.Protocol = 3
	}
	if cfg.trustUID >= 0 {
		opts.TrustedServerUIDs = []int{cfg.trustUID}
	}
	if cfg.timeout <= 0 {
		opts.DialTimeout = -1 // --timeout 0: no deadline for the dial either, not the library's default
	}
	s := &session{cfg: cfg, out: stdout, errw: stderr}
	ctx, cancel := s.ctx()
	var c commander
	if cfg.cluster {
		c, err = client.ClusterOptions{Seeds: []string{t.String()}, Options: opts}.Dial(ctx)
		s.name, s.short = "cluster "+t.String(), "cluster "+shortTarget(t)
	} else {
		var one *client.Client
		one, err = opts.DialTarget(ctx, t)
		if err == nil {
			c, s.name, s.short = one, one.Target().String(), shortTarget(one.Target())
		}
	}
	cancel()
	if err != nil {
		return s.report(err)
	}
	defer c.Close()
	s.c = c

	if fs.NArg() > 0 {
		words := fs.Args()
		if cfg.stdinArg {
			b, err := io.ReadAll(stdin)
			if err != nil {
				fmt.Fprintf(stderr, "goblin-client: -x: reading standard input: %v\n", err)
				return exitUsage
			}
			words = append(words, string(b))
		}
		return s.exec(words)
	}
	if f, ok := stdin.(*os.File); ok && isTerminal(f) {
		return s.interactive()
	}
	return s.script(stdin)
}

// commander is what the CLI needs of a client: one server's
// (client.Client) or a cluster's (client.Cluster, --cluster).
type commander interface {
	Do(ctx context.Context, args ...any) (client.Value, error)
	Close() error
}

type session struct {
	cfg   config
	c     commander
	name  string // the target, whole
	short string // the target as the prompt shows it
	out   io.Writer
	errw  io.Writer
}

func (s *session) ctx() (context.Context, context.CancelFunc) {
	if s.cfg.timeout > 0 {
		return context.WithTimeout(context.Background(), s.cfg.timeout)
	}
	return context.WithCancel(context.Background())
}

// exec runs one command and prints its reply; it returns the exit code.
func (s *session) exec(words []string) int {
	args := make([]any, len(words))
	for i, w := range words {
		args[i] = w
	}
	if strings.EqualFold(words[0], "monitor") && len(words) == 1 {
		return s.monitor()
	}
	ctx, cancel := s.ctx()
	defer cancel()
	v, err := s.c.Do(ctx, args...)
	var se *client.ServerError
	switch {
	case err == nil:
	case errors.As(err, &se):
		// Printed below like any reply, to stdout as redis-cli does.
	default:
		return s.report(err)
	}
	switch {
	case s.cfg.json:
		b, _ := json.Marshal(jsonValue(v))
		fmt.Fprintf(s.out, "%s\n", b)
	case s.cfg.raw:
		s.out.Write(append(appendRaw(nil, v), '\n'))
	case v.Kind == client.KindBulk && printsRaw(words):
		s.out.Write(v.Str)
		if len(v.Str) > 0 && v.Str[len(v.Str)-1] != '\n' {
			fmt.Fprintln(s.out)
		}
	default:
		fmt.Fprintf(s.out, "%s\n", v.String())
	}
	if v.Kind == client.KindError {
		return exitServerError
	}
	return exitOK
}

// printsRaw reports whether the reply to words is text made to be read,
// which redis-cli prints as it is, line by line, instead of as one quoted
// string: INFO, CLIENT LIST and the like.
func printsRaw(words []string) bool {
	switch strings.ToLower(words[0]) {
	case "info", "lolwut":
		return true
	}
	if len(words) < 2 {
		return false
	}
	switch strings.ToLower(words[0]) + " " + strings.ToLower(words[1]) {
	case "client list", "client info", "memory doctor", "memory malloc-stats", "latency doctor",
		"cluster info", "cluster nodes":
		return true
	}
	return false
}

// report prints err once, whole (every wrapper's words, none twice), and
// returns its exit code. Only when nothing listens at the target does it
// add how to start a server there.
func (s *session) report(err error) int {
	var ce *client.ConnError
	switch {
	case errors.Is(err, client.ErrModeCommand):
		fmt.Fprintf(s.errw, "goblin-client: %v\n", err)
		fmt.Fprintf(s.errw, "Nothing was sent: goblin-client keeps its connection answering one reply per command (monitor alone streams, on a connection of its own).\n")
		return exitUsage
	case errors.Is(err, client.ErrNoSBEEncoding):
		fmt.Fprintf(s.errw, "goblin-client: %v\n", err)
		fmt.Fprintf(s.errw, "Nothing was sent: SBE has a message for each command goblin knows and no generic one; --proto resp sends any command.\n")
		return exitUsage
	case errors.As(err, &ce) && ce.Op == "dial":
		// ce.Err is the transport's whole chain; the ConnError's own
		// prefix would only repeat the target named here.
		fmt.Fprintf(s.errw, "goblin-client: cannot connect to %s: %v\n", ce.Target, ce.Err)
		if errors.Is(err, aeron.ErrConfig) || errors.Is(err, transport.ErrTargetParam) {
			return exitUsage // a bad target: nothing was dialled
		}
		if nothingListens(err) {
			fmt.Fprintf(s.errw, "Is goblin-server running? Start it with:  goblin-server --listen '%s'\n", ce.Target)
			fmt.Fprintf(s.errw, "or point goblin-client elsewhere with --target.\n")
		}
		return exitConnect
	case errors.As(err, &ce):
		fmt.Fprintf(s.errw, "goblin-client: %s: %s failed: %v\n", ce.Target, ce.Op, ce.Err)
		return exitConnect
	case errors.Is(err, client.ErrUntrustedServer):
		fmt.Fprintf(s.errw, "goblin-client: %v\n", err)
		return exitConnect
	case errors.Is(err, client.ErrUnknownTransport):
		fmt.Fprintf(s.errw, "goblin-client: %v\n", err)
		return exitUsage
	}
	var se *client.ServerError
	if errors.As(err, &se) {
		fmt.Fprintf(s.errw, "goblin-client: %s\n", se.Message)
		return exitServerError
	}
	fmt.Fprintf(s.errw, "goblin-client: %v\n", err)
	return exitUsage
}

// nothingListens reports whether a dial failed because no server is there
// at all: a refused connection, a socket path that does not exist, a ring
// directory or Aeron channel nobody serves. A failed name lookup, a
// protocol mismatch or a bad target is something else, and starting a
// server would not fix it.
func nothingListens(err error) bool {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) ||
		errors.Is(err, ring.ErrNoServer) || errors.Is(err, aeron.ErrNoServer)
}

// script runs one command per line from r. Blank lines and lines starting
// with # are skipped. It stops at a connection error; the exit code is the
// worst seen.
func (s *session) script(r io.Reader) int {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 512<<20)
	code := exitOK
	for lineNo := 1; sc.Scan(); lineNo++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		words, err := splitArgs(line)
		if err != nil {
			fmt.Fprintf(s.errw, "goblin-client: line %d: %v\n", lineNo, err)
			code = max(code, exitUsage)
			continue
		}
		switch c := s.exec(words); c {
		case exitConnect:
			return c
		default:
			code = max(code, c)
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(s.errw, "goblin-client: reading stdin: %v\n", err)
		return max(code, exitUsage)
	}
	return code
}

// lineReader is what the prompt reads lines from: liner on a terminal; a
// script in tests.
type lineReader interface {
	// Prompt shows prompt and returns the line typed, io.EOF at Ctrl-D or
	// liner.ErrPromptAborted at Ctrl-C.
	Prompt(prompt string) (string, error)
	AppendHistory(line string)
}

// interactive runs the prompt on the terminal with line editing,
// completion and history.
func (s *session) interactive() int {
	ln := liner.NewLiner()
	defer ln.Close()
	ln.SetCtrlCAborts(true)
	ln.SetCompleter(complete)
	if s.cfg.history != "" {
		if f, err := os.Open(s.cfg.history); err == nil {
			_, _ = ln.ReadHistory(f)
			f.Close()
		}
	}
	code := s.prompt(ln)
	s.saveHistory(ln)
	return code
}

// clearScreen moves the cursor home and erases the terminal, as Ctrl-L
// does.
const clearScreen = "\x1b[H\x1b[2J"

// prompt reads commands from in until Ctrl-D, Ctrl-C, quit or exit. help
// and clear are answered here; everything else goes to the server.
func (s *session) prompt(in lineReader) int {
	fmt.Fprintf(s.out, "Connected to %s. Type help for commands, quit to leave.\n", s.name)
	for {
		line, err := in.Prompt(s.promptText())
		if err != nil { // io.EOF (Ctrl-D) or liner.ErrPromptAborted (Ctrl-C)
			// The terminal's cursor is still after the prompt: leave
			// the shell a line of its own.
			fmt.Fprintln(s.out)
			return exitOK
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		in.AppendHistory(line)
		words, err := splitArgs(line)
		if err != nil {
			fmt.Fprintf(s.errw, "(error) %v\n", err)
			continue
		}
		switch strings.ToLower(words[0]) {
		case "quit", "exit":
			return exitOK
		case "help":
			printHelp(s.out, words[1:])
			continue
		case "clear":
			fmt.Fprint(s.out, clearScreen)
			continue
		}
		// Connection errors are reported and the next command redials.
		_ = s.exec(words)
	}
}

func (s *session) saveHistory(ln *liner.State) {
	if s.cfg.history == "" {
		return
	}
	_ = os.MkdirAll(filepath.Dir(s.cfg.history), 0o700)
	if f, err := os.OpenFile(s.cfg.history, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600); err == nil {
		_, _ = ln.WriteHistory(f)
		f.Close()
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func defaultHistory() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "goblin", "history")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".goblin_history")
	}
	return ""
}

// jsonValue maps a reply to JSON: nil → null, status and bulk → string
// (bulk bytes that are not UTF-8 → {"base64": "..."}), integer → number,
// array and set → array, map → object (or [key, value] pairs when a key
// is not a string), double → number, boolean → true/false, big number and
// verbatim → string, error → {"error": "message"}.
func jsonValue(v client.Value) any {
	switch v.Kind {
	case client.KindNil:
		return nil
	case client.KindStatus:
		return string(v.Str)
	case client.KindBulk:
		if utf8.Valid(v.Str) {
			return string(v.Str)
		}
		return map[string]string{"base64": base64.StdEncoding.EncodeToString(v.Str)}
	case client.KindInt:
		return v.Int
	case client.KindArray, client.KindSet, client.KindPush:
		out := make([]any, len(v.Array))
		for i, e := range v.Array {
			out[i] = jsonValue(e)
		}
		return out
	case client.KindMap:
		// An object when every key is a string, else [key, value] pairs.
		obj := map[string]any{}
		pairs := make([]any, 0, len(v.Array)/2)
		for i := 0; i+1 < len(v.Array); i += 2 {
			k, val := v.Array[i], jsonValue(v.Array[i+1])
			pairs = append(pairs, []any{jsonValue(k), val})
			if obj != nil && (k.Kind == client.KindBulk || k.Kind == client.KindStatus) && utf8.Valid(k.Str) {
				obj[string(k.Str)] = val
			} else {
				obj = nil
			}
		}
		if obj != nil {
			return obj
		}
		return pairs
	case client.KindError:
		return map[string]string{"error": v.Err.Message}
	case client.KindDouble:
		return jsonFloat(v)
	case client.KindBool:
		return v.Int != 0
	case client.KindBigNumber, client.KindVerbatim:
		return string(v.Str)
	}
	return nil
}
