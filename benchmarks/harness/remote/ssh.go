package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/goblin-kv/goblin/benchmarks/harness"
)

// ErrHost is wrapped by every failure to reach or drive a remote host.
var ErrHost = errors.New("harness: remote host")

// SSH is how the controller reaches the hosts: the ssh command and its
// options (e.g. ssh -F CONFIG). BatchMode is always on: the harness never
// waits for a password.
type SSH []string

// command is the argv that runs script on dest.
func (s SSH) command(dest, script string) []string {
	argv := append([]string(nil), s.orDefault()...)
	return append(argv, "-T", "-o", "BatchMode=yes", "-o", "ServerAliveInterval=15", dest, script)
}

// run runs script on dest over ssh, stdin from in (nil for none), and
// returns its standard output; the error carries standard error.
func (s SSH) run(ctx context.Context, dest, script string, in io.Reader) ([]byte, error) {
	argv := s.command(dest, script)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%w %s: ssh %s %q: %w: %s", ErrHost, dest, dest, script, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// sshMaster is one master connection to a host: every other ssh command
// to it rides on it (ControlPath), so a run pays for one handshake per
// host instead of one per command.
type sshMaster struct {
	cmd *exec.Cmd
	dir string // holds the control socket
	ssh SSH    // the ssh command that uses the master
}

// startMaster opens a master connection to dest and waits until it
// serves. When ssh cannot multiplex, the plain command is used instead.
func startMaster(ctx context.Context, s SSH, dest string) *sshMaster {
	m := &sshMaster{ssh: s}
	dir, err := os.MkdirTemp("", "gbssh-")
	if err != nil {
		return m
	}
	control := "ControlPath=" + path.Join(dir, "master")
	base := s.command(dest, "")
	base = base[:len(base)-2] // without the destination and script
	argv := append(append([]string(nil), base...), "-M", "-N", "-o", "ControlPersist=no", "-o", control, dest)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return m
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	check := append(append([]string(nil), base...), "-o", control, "-O", "check", dest)
	deadline := time.Now().Add(time.Minute)
	for {
		if exec.CommandContext(ctx, check[0], check[1:]...).Run() == nil {
			m.cmd, m.dir = cmd, dir
			m.ssh = append(append(SSH(nil), s.orDefault()...), "-o", control, "-o", "ControlMaster=no")
			return m
		}
		select {
		case <-done:
			os.RemoveAll(dir)
			return m // the master failed: plain connections then
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			os.RemoveAll(dir)
			return m
		}
	}
}

// close ends the master connection and removes its socket.
func (m *sshMaster) close() {
	if m == nil || m.cmd == nil {
		return
	}
	syscall.Kill(-m.cmd.Process.Pid, syscall.SIGTERM)
	m.cmd.Process.Wait()
	os.RemoveAll(m.dir)
	m.cmd = nil
}

func (s SSH) orDefault() SSH {
	if len(s) == 0 {
		return SSH{"ssh"}
	}
	return s
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// sshHost is a host of a two-host run: a goblin-bench agent started over
// ssh performs every operation there. Its runtime files live under root,
// removed when it closes; staged maps the staged tools to their paths.
type sshHost struct {
	role   string
	dest   string
	ssh    SSH
	root   string
	staged map[string]string
	master *sshMaster // closed last

	cmd     *exec.Cmd
	stdin   io.WriteCloser
	dec     *json.Decoder
	stderr  *os.File // the agent's standard error (and ssh's), in the archive
	logPath string   // stderr's path
	mu      sync.Mutex
	broken  error
	closing sync.Once
	hello   agentHello

	waiting sync.Once
	gone    chan struct{} // closed when ssh has exited (see exited)
	waitErr error         // cmd.Wait's error, set before gone is closed
}

// dialAgent starts goblin-bench agent on dest (bench is its staged path)
// and checks that it answers. The agent's standard error goes to logPath.
func dialAgent(ctx context.Context, s SSH, role, dest, root, bench, logPath string, staged map[string]string) (*sshHost, error) {
	h := &sshHost{role: role, dest: dest, ssh: s, root: root, staged: staged, logPath: logPath}
	script := "exec " + shellQuote(bench) + " agent -role " + role + " " + shellQuote(root)
	argv := s.command(dest, script)
	h.cmd = exec.Command(argv[0], argv[1:]...)
	h.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var err error
	if h.stderr, err = os.Create(logPath); err != nil {
		return nil, err
	}
	h.cmd.Stderr = h.stderr
	if h.stdin, err = h.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := h.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := h.cmd.Start(); err != nil {
		h.stderr.Close()
		return nil, fmt.Errorf("%w %s: start ssh: %w", ErrHost, dest, err)
	}
	h.dec = json.NewDecoder(out)
	hctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := h.call(hctx, "hello", nil, &h.hello); err != nil {
		h.Close()
		if errors.Is(err, ErrHost) {
			return nil, err // the connection was lost; the error quotes the agent's log
		}
		return nil, fmt.Errorf("%w %s: the agent did not answer hello: %w", ErrHost, dest, err)
	}
	if h.hello.Protocol != agentProtocol {
		h.Close()
		return nil, fmt.Errorf("%w %s: the agent speaks protocol %d, this goblin-bench %d", ErrHost, dest, h.hello.Protocol, agentProtocol)
	}
	return h, nil
}

// call sends one request and decodes the reply into result. When ctx ends
// first, the connection is cut: the agent then stops everything it runs,
// and the host is unusable, as an interrupted run is over anyway. Once the
// reply is in, ctx ending (every caller cancels it as the call returns)
// cuts nothing.
func (h *sshHost) call(ctx context.Context, op string, args, result any) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.broken != nil {
		return h.broken
	}
	req := agentRequest{Op: op}
	if args != nil {
		b, err := json.Marshal(args)
		if err != nil {
			return err
		}
		req.Args = b
	}
	// The kill is tied to ctx only while the call waits: stop unties it
	// before the call returns, whatever happens to ctx afterwards. (A
	// goroutine that selected on ctx.Done() and a done channel closed on
	// return could run only after the caller had cancelled ctx, find both
	// ready and pick the kill: under load, a connection cut after a call
	// that had succeeded.)
	stop := context.AfterFunc(ctx, h.kill)
	b, _ := json.Marshal(req)
	var rep agentReply
	_, err := h.stdin.Write(append(b, '\n'))
	if err == nil {
		err = h.dec.Decode(&rep)
	}
	if !stop() && err == nil {
		// ctx ended as the reply came in: the kill has started.
		err = ctx.Err()
	}
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		h.broken = h.lost(op, err)
		return h.broken
	}
	if rep.Err != "" {
		if rep.Unavailable {
			return fmt.Errorf("%w: %s (on %s)", harness.ErrUnavailable, strings.TrimPrefix(rep.Err, harness.ErrUnavailable.Error()+": "), h.dest)
		}
		return fmt.Errorf("%s (on %s)", rep.Err, h.dest)
	}
	if result != nil {
		return json.Unmarshal(rep.Result, result)
	}
	return nil
}

// kill cuts the connection: ssh dies, the agent's input ends.
func (h *sshHost) kill() {
	if h.cmd != nil && h.cmd.Process != nil {
		_ = syscall.Kill(-h.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// lostWait bounds how long a lost connection waits for ssh to exit before
// it quotes the agent's log.
const lostWait = 10 * time.Second

// lost is the error of a connection lost during op, with err the reason
// the controller saw. It cuts what is left of the connection (a garbled
// one is lost too), waits for ssh to exit so that its last words and the
// agent's are in the log, and quotes the log's end: there ssh or the agent
// says why it went.
func (h *sshHost) lost(op string, err error) error {
	h.kill()
	select {
	case <-h.exited():
	case <-time.After(lostWait):
	}
	return fmt.Errorf("%w %s: connection to the agent lost during %s: %w; the agent's log %s ends: %s",
		ErrHost, h.dest, op, err, h.logPath, harness.LogTail(h.logPath))
}

// exited is closed when ssh has exited (waitErr says how). The first call
// starts waiting for it: call it only once nothing reads ssh's output any
// more (Wait closes the pipe), i.e. when the connection is lost or closed.
func (h *sshHost) exited() <-chan struct{} {
	h.waiting.Do(func() {
		h.gone = make(chan struct{})
		go func() {
			h.waitErr = h.cmd.Wait()
			close(h.gone)
		}()
	})
	return h.gone
}

// quick bounds the calls that have no context of their own.
func quick() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 5*time.Minute)
}

// remaining is ctx's time left (an hour when it has no deadline).
func remaining(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		return max(time.Until(d), time.Millisecond)
	}
	return time.Hour
}

func (h *sshHost) Role() string          { return h.role }
func (h *sshHost) Describe() string      { return "ssh " + h.dest }
func (h *sshHost) Remote() bool          { return true }
func (h *sshHost) Dir(rel string) string { return path.Join(h.root, rel) }

func (h *sshHost) Tool(cfg *harness.Config, name string) (string, error) {
	if p, ok := h.staged[name]; ok {
		return p, nil
	}
	configured := ""
	switch name {
	case "java":
		configured = cfg.Java
	case "redis-server":
		configured = cfg.RedisServer
	case "goblin-server", "goblin-bench", "aeron-jar", "aeronmd":
		return "", fmt.Errorf("%w: %s was not staged to %s", harness.ErrUnavailable, name, h.dest)
	}
	ctx, cancel := quick()
	defer cancel()
	var p string
	err := h.call(ctx, "tool", agentTool{Configured: configured, Name: name}, &p)
	return p, err
}

func (h *sshHost) Start(ctx context.Context, s harness.ProcSpec) (harness.Proc, error) {
	var ap agentProc
	if err := h.call(ctx, "start", s, &ap); err != nil {
		return nil, err
	}
	return &remoteProc{h: h, p: ap}, nil
}

func (h *sshHost) WaitReady(ctx context.Context, p harness.Proc, r harness.Readiness) error {
	rp, ok := p.(*remoteProc)
	if !ok {
		return fmt.Errorf("harness: %s was not started on %s", p.Name(), h.dest)
	}
	return h.call(ctx, "ready", agentReady{ID: rp.p.ID, Ready: r, Timeout: remaining(ctx)}, nil)
}

func (h *sshHost) Run(ctx context.Context, s harness.ProcSpec) ([]byte, error) {
	var res agentRunResult
	if err := h.call(ctx, "run", agentRun{Spec: s, Timeout: remaining(ctx)}, &res); err != nil {
		return nil, err
	}
	if res.Err != "" {
		return res.Out, fmt.Errorf("%s (on %s)", res.Err, h.dest)
	}
	return res.Out, nil
}

func (h *sshHost) ReadFile(p string) ([]byte, error) {
	ctx, cancel := quick()
	defer cancel()
	var b []byte
	err := h.call(ctx, "read", agentPath{Path: p}, &b)
	return b, err
}

func (h *sshHost) FreePort(network, addr string) (int, error) {
	ctx, cancel := quick()
	defer cancel()
	var port int
	err := h.call(ctx, "freeport", agentPort{Network: network, Addr: addr}, &port)
	return port, err
}

func (h *sshHost) Threads(pid int) ([]harness.ThreadInfo, error) {
	ctx, cancel := quick()
	defer cancel()
	var ts []harness.ThreadInfo
	err := h.call(ctx, "threads", agentPath{PID: pid}, &ts)
	return ts, err
}

func (h *sshHost) PinAgents(ctx context.Context, pid int, pins []harness.AgentPin) error {
	return h.call(ctx, "pin", agentPin{PID: pid, Pins: pins, Timeout: remaining(ctx)}, nil)
}

func (h *sshHost) Counters(dir string) (string, error) {
	ctx, cancel := quick()
	defer cancel()
	var s string
	err := h.call(ctx, "counters", agentPath{Path: dir}, &s)
	return s, err
}

func (h *sshHost) Collect(dir string) (map[string][]byte, error) {
	ctx, cancel := quick()
	defer cancel()
	var files map[string][]byte
	err := h.call(ctx, "collect", agentPath{Path: dir}, &files)
	return files, err
}

func (h *sshHost) Remove(dir string) error {
	ctx, cancel := quick()
	defer cancel()
	return h.call(ctx, "remove", agentPath{Path: dir}, nil)
}

// Close ends the agent (it stops whatever still runs), waits for it, and
// removes the host's runtime directory. It is safe to call more than once.
func (h *sshHost) Close() error {
	var err error
	h.closing.Do(func() {
		h.mu.Lock()
		if h.stdin != nil {
			h.stdin.Close()
		}
		h.mu.Unlock()
		select {
		case <-h.exited():
		case <-time.After(time.Minute):
			h.kill()
			<-h.exited()
		}
		err = h.waitErr
		if h.stderr != nil {
			h.stderr.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// The run's directory holds one directory per role; the other
		// host removes its own (or, on a shared filesystem, the last one
		// removes the run's).
		script := "rm -rf " + shellQuote(h.root) + "; rmdir " + shellQuote(path.Dir(h.root)) + " 2>/dev/null; true"
		if _, rerr := h.ssh.run(ctx, h.dest, script, nil); rerr != nil && err == nil {
			err = rerr
		}
		h.master.close()
	})
	return err
}

// remoteProc is a process an agent started.
type remoteProc struct {
	h *sshHost
	p agentProc
}

func (p *remoteProc) Name() string        { return p.p.Name }
func (p *remoteProc) PID() int            { return p.p.PID }
func (p *remoteProc) StartTicks() int64   { return p.p.Ticks }
func (p *remoteProc) CommandLine() string { return p.p.Cmd }
func (p *remoteProc) Log() string         { return p.p.Log }

func (p *remoteProc) Exited() error {
	ctx, cancel := quick()
	defer cancel()
	var s string
	if err := p.h.call(ctx, "exited", agentProcID{ID: p.p.ID}, &s); err != nil {
		return err
	}
	if s != "" {
		return errors.New(s)
	}
	return nil
}

func (p *remoteProc) Tail() string {
	ctx, cancel := quick()
	defer cancel()
	var s string
	if err := p.h.call(ctx, "tail", agentProcID{ID: p.p.ID}, &s); err != nil {
		return "(" + err.Error() + ")"
	}
	return s
}

func (p *remoteProc) Stop(grace time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), grace+time.Minute)
	defer cancel()
	return p.h.call(ctx, "stop", agentProcID{ID: p.p.ID, Grace: grace}, nil)
}
