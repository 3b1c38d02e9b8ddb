package harness

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// process is one child the harness started: a server, a peer or a media
// driver. It runs in its own process group so that stopping it also stops
// anything it started.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// startProcess runs argv (prefixed by cfg.ServerWrap when server is true,
// and by taskset when cpus is not empty) with its output in dir/name.log.
func startProcess(cfg *Config, dir, name string, server bool, cpus string, env []string, argv ...string) (*process, error) {
	full := argv
	if cpus != "" {
		ts, err := exec.LookPath("taskset")
		if err != nil {
			return nil, fmt.Errorf("%w: pinning %s to CPU %s needs taskset (util-linux)", ErrUnavailable, name, cpus)
		}
		full = append([]string{ts, "-c", cpus}, full...)
	}
	if server && len(cfg.ServerWrap) > 0 {
		full = append(append([]string(nil), cfg.ServerWrap...), full...)
	}
	logPath := filepath.Join(dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(full[0], full[1:]...)
	cmd.Dir = dir
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

// commandLine is the command as it was run, for the archive.
func (p *process) commandLine() string { return strings.Join(p.cmd.Args, " ") }

// exited reports whether the process has ended, with its log's tail.
func (p *process) exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited (%v): %s", p.name, p.err, p.tail())
	default:
		return nil
	}
}

// tail is the end of the process's log, for error messages.
func (p *process) tail() string {
	b, _ := os.ReadFile(p.log)
	// A Go panic's first line says what happened; its stack does not fit.
	if i := strings.Index(string(b), "panic: "); i >= 0 {
		line, _, _ := strings.Cut(string(b[i:]), "\n")
		return line + " (stack in " + p.log + ")"
	}
	if len(b) > 600 {
		b = b[len(b)-600:]
	}
	return strings.TrimSpace(string(b))
}

// stop asks the process group to end (SIGTERM), waits up to grace, then
// kills it. It is safe to call more than once.
func (p *process) stop(grace time.Duration) error {
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
func waitFor(ctx context.Context, p *process, what string, ready func() error) error {
	delay := time.Millisecond
	for {
		err := ready()
		if err == nil {
			return nil
		}
		if p != nil {
			if perr := p.exited(); perr != nil {
				return perr
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last error: %v)", what, ctx.Err(), err)
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

// freeUDPPort is freePort for UDP.
func freeUDPPort(host string) (int, error) {
	c, err := net.ListenPacket("udp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port, nil
}

// lookTool finds a binary: the configured path, else PATH.
func lookTool(configured, name string) (string, error) {
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
