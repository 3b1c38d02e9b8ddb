package harness

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Process is one child the harness started: a server, a peer or a media
// driver. It runs in its own process group so that stopping it also stops
// anything it started.
type Process struct {
	name  string
	cmd   *exec.Cmd
	log   string
	ticks int64
	done  chan struct{}
	err   error
}

// startProcess runs argv in dir with its output in dir/name.log, in a
// process group of its own that is killed if this process dies.
func startProcess(dir, name string, argv, env []string, stdin string) (*Process, error) {
	logPath := filepath.Join(dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdout = logf
	cmd.Stderr = logf
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{name: name, cmd: cmd, log: logPath, ticks: StartTicks(cmd.Process.Pid), done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

// runProcess runs argv to completion, bounded by ctx: with a name, its
// output goes to dir/name.log and the log's tail is returned; without,
// the combined output is.
func runProcess(ctx context.Context, dir, name string, argv, env []string, stdin string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	if name == "" {
		out, err := cmd.CombinedOutput()
		if err != nil {
			return out, fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, LastLines(string(out), 6))
		}
		return out, nil
	}
	logPath := filepath.Join(dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	err = cmd.Run()
	logf.Close()
	out, _ := os.ReadFile(logPath)
	if err != nil {
		return out, fmt.Errorf("%s: %w: %s", name, err, LastLines(string(out), 6))
	}
	return out, nil
}

// StartTicks reads a process's start time (clock ticks after boot) from
// /proc/PID/stat; 0 when it cannot.
func StartTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces; the fields after it start
	// after its closing parenthesis. starttime is field 22.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		f := strings.Fields(s[i+1:])
		if len(f) >= 20 {
			n, _ := strconv.ParseInt(f[19], 10, 64)
			return n
		}
	}
	return 0
}

func (p *Process) Name() string      { return p.name }
func (p *Process) PID() int          { return p.cmd.Process.Pid }
func (p *Process) StartTicks() int64 { return p.ticks }
func (p *Process) Log() string       { return p.log }

// CommandLine is the command as it was run, for the archive.
func (p *Process) CommandLine() string { return strings.Join(p.cmd.Args, " ") }

// Exited reports whether the process has ended, with its log's tail.
func (p *Process) Exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited (%v): %s", p.name, p.err, p.Tail())
	default:
		return nil
	}
}

// Tail is the end of the process's log, for error messages.
func (p *Process) Tail() string { return LogTail(p.log) }

// LogTail is the end of a log file: a Go panic's first line, else its last
// 600 bytes.
func LogTail(path string) string {
	b, _ := os.ReadFile(path)
	// A Go panic's first line says what happened; its stack does not fit.
	if i := strings.Index(string(b), "panic: "); i >= 0 {
		line, _, _ := strings.Cut(string(b[i:]), "\n")
		return line + " (stack in " + path + ")"
	}
	if len(b) > 600 {
		b = b[len(b)-600:]
	}
	return strings.TrimSpace(string(b))
}

// Stop asks the process group to end (SIGTERM), waits up to grace, then
// kills it. It is safe to call more than once.
func (p *Process) Stop(grace time.Duration) error {
	if p == nil {
		return nil
	}
	select {
	case <-p.done:
		return nil
	default:
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.name, pgid)
	}
}

// waitFor polls ready until it returns nil, the process exits, or ctx ends.
func waitFor(ctx context.Context, p Proc, what string, ready func() error) error {
	delay := time.Millisecond
	for {
		err := ready()
		if err == nil {
			return nil
		}
		if p != nil {
			if perr := p.Exited(); perr != nil {
				return perr
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last error: %w)", what, ctx.Err(), err)
		case <-time.After(delay):
		}
		if delay < 50*time.Millisecond {
			delay *= 2
		}
	}
}

// dialable returns a readiness check that connects to a socket.
func dialable(network, addr string) func() error {
	return func() error {
		c, err := net.DialTimeout(network, addr, time.Second)
		if err != nil {
			return err
		}
		return c.Close()
	}
}

// freePort asks the kernel for an unused TCP port on host. The port is
// released before the server binds it; a clash shows as a start failure.
func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// FreeUDPPort is freePort for UDP.
func FreeUDPPort(host string) (int, error) {
	c, err := net.ListenPacket("udp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port, nil
}

// LookTool finds a binary: the configured path, else PATH.
func LookTool(configured, name string) (string, error) {
	if configured != "" {
		if st, err := os.Stat(configured); err != nil || st.IsDir() {
			return "", fmt.Errorf("%w: %s not found at %s", ErrUnavailable, name, configured)
		}
		return configured, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%w: %s is not installed (not on PATH)", ErrUnavailable, name)
	}
	return p, nil
}
