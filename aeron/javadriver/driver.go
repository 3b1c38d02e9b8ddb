package javadriver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/goblin-kv/goblin/internal/unixgroup"
)

// Errors returned by this package, wrapped with %w.
var (
	// ErrJavaNotFound means no java executable was found.
	ErrJavaNotFound = errors.New("javadriver: java not found")
	// ErrJarNotFound means the aeron-all jar is missing; `make setup` fetches it.
	ErrJarNotFound = errors.New("javadriver: aeron-all jar not found")
	// ErrInvalidOptions means an Options field is out of range.
	ErrInvalidOptions = errors.New("javadriver: invalid options")
	// ErrStartTimeout means the driver did not become ready within
	// Options.StartTimeout.
	ErrStartTimeout = errors.New("javadriver: driver did not become ready in time")
	// ErrExited means the driver process exited when nobody asked it to.
	ErrExited = errors.New("javadriver: driver exited")
	// ErrIncompatibleDriver means the CnC file has a layout this package
	// does not know.
	ErrIncompatibleDriver = errors.New("javadriver: incompatible CnC file")
	// ErrStopped means the driver was stopped (Stop, Kill or Restart).
	ErrStopped = errors.New("javadriver: driver stopped")
)

// Options configure a driver. The zero value starts a Frugal driver in a new
// private directory with Aeron's default sizes and timeouts.
type Options struct {
	// Dir is the Aeron directory (aeron.dir). Empty means a new private
	// directory under /dev/shm (or the temp dir when /dev/shm is missing),
	// which Stop removes. The driver deletes Dir when it starts and when it
	// shuts down cleanly, so never point it at anything else.
	Dir string
	// Profile selects threading and idle strategies (default Frugal).
	Profile Profile
	// JavaPath is the java executable; empty means FindJava.
	JavaPath string
	// JarPath is the aeron-all jar; empty means FindJar's search.
	JarPath string
	// LogPath receives the driver's stdout and stderr (appended). Empty
	// means driver.log beside the private directory, or <Dir>.driver.log.
	LogPath string
	// Group, a group name or numeric gid, shares the driver's directory
	// with that group, so its members' Aeron clients can use the driver:
	// directories 02750 and files 0660, owned by the group. Without it
	// the directory is the owner's alone: 0700 and 0600. Either way no
	// other user can read the driver's files (its log buffers hold every
	// request and reply).
	Group string

	// TermLength is the term buffer length of network publications
	// (aeron.term.buffer.length; driver default 16 MiB). A power of two
	// from 64 KiB to 1 GiB; 0 keeps the default.
	TermLength int
	// IPCTermLength is the same for IPC publications
	// (aeron.ipc.term.buffer.length; default 64 MiB).
	IPCTermLength int
	// MTU is the maximum datagram length of network publications
	// (aeron.mtu.length; default 1408). A multiple of 32 from 64 to 65504;
	// 0 keeps the default. Messages longer than MTU−32 are fragmented.
	MTU int
	// IPCMTU is the maximum frame length of IPC publications
	// (aeron.ipc.mtu.length; default 1408), same range as MTU.
	IPCMTU int

	// ClientLivenessTimeout is how long the driver keeps a client that has
	// stopped heartbeating (aeron.client.liveness.timeout; default 10 s).
	// When it is 15 s or more and PublicationUnblockTimeout is 0, the
	// unblock timeout is raised to ClientLivenessTimeout+5s, as the driver
	// requires it to be longer.
	ClientLivenessTimeout time.Duration
	// PublicationUnblockTimeout (aeron.publication.unblock.timeout; 15 s).
	PublicationUnblockTimeout time.Duration
	// ImageLivenessTimeout (aeron.image.liveness.timeout; 10 s).
	ImageLivenessTimeout time.Duration
	// PublicationLingerTimeout (aeron.publication.linger.timeout; 5 s).
	PublicationLingerTimeout time.Duration
	// PublicationConnectionTimeout (aeron.publication.connection.timeout; 5 s).
	PublicationConnectionTimeout time.Duration
	// TimerInterval is how often the driver stamps its heartbeat and checks
	// liveness (aeron.timer.interval; 1 s).
	TimerInterval time.Duration
	// DriverTimeout is the client-side driver timeout (aeron.driver.timeout;
	// 10 s). The driver uses it to decide whether an existing CnC file
	// belongs to a live driver; this package uses it as the largest
	// heartbeat age it accepts as "ready" and "alive".
	DriverTimeout time.Duration

	// StartTimeout bounds Start's wait for a ready CnC file (default 60 s:
	// a JVM on a loaded 2-core machine can take many seconds).
	StartTimeout time.Duration
	// StopGrace is how long Stop waits after SIGTERM before SIGKILL
	// (default 10 s).
	StopGrace time.Duration

	// JVMArgs are extra JVM arguments, placed after JVMFlags (so they can
	// override the heap size, for example).
	JVMArgs []string
	// Properties are extra Aeron (or any) system properties, passed as
	// -Dkey=value after everything this package sets, so they win.
	Properties map[string]string
}

// withDefaults returns o with defaults filled in and checks the ranges.
func (o Options) withDefaults() (Options, error) {
	if o.StartTimeout <= 0 {
		o.StartTimeout = 60 * time.Second
	}
	if o.StopGrace <= 0 {
		o.StopGrace = 10 * time.Second
	}
	if o.DriverTimeout <= 0 {
		o.DriverTimeout = 10 * time.Second
	}
	if o.ClientLivenessTimeout >= 15*time.Second && o.PublicationUnblockTimeout == 0 {
		o.PublicationUnblockTimeout = o.ClientLivenessTimeout + 5*time.Second
	}
	if _, err := o.Profile.properties(); err != nil {
		return o, err
	}
	for _, t := range []struct {
		name string
		v    int
	}{{"TermLength", o.TermLength}, {"IPCTermLength", o.IPCTermLength}} {
		if t.v != 0 && (t.v < 64<<10 || t.v > 1<<30 || t.v&(t.v-1) != 0) {
			return o, fmt.Errorf("%w: %s %d is not a power of two from 64 KiB to 1 GiB", ErrInvalidOptions, t.name, t.v)
		}
	}
	for _, m := range []struct {
		name string
		v    int
	}{{"MTU", o.MTU}, {"IPCMTU", o.IPCMTU}} {
		if m.v != 0 && (m.v < 64 || m.v > 65504 || m.v%32 != 0) {
			return o, fmt.Errorf("%w: %s %d is not a multiple of 32 from 64 to 65504", ErrInvalidOptions, m.name, m.v)
		}
	}
	if o.PublicationUnblockTimeout != 0 {
		live := o.ClientLivenessTimeout
		if live == 0 {
			live = 10 * time.Second
		}
		if o.PublicationUnblockTimeout <= live {
			return o, fmt.Errorf("%w: PublicationUnblockTimeout %v must exceed ClientLivenessTimeout %v",
				ErrInvalidOptions, o.PublicationUnblockTimeout, live)
		}
	}
	return o, nil
}

// systemProperties returns the -D arguments for o, sorted for stable logs.
func (o Options) systemProperties() ([]string, error) {
	props := map[string]string{
		"aeron.dir":                     o.Dir,
		"aeron.dir.delete.on.start":     "true",
		"aeron.dir.delete.on.shutdown":  "true",
		"aeron.print.configuration":     "false",
		"aeron.driver.timeout":          strconv.FormatInt(o.DriverTimeout.Milliseconds(), 10),
		"aeron.term.buffer.sparse.file": "true",
	}
	pp, err := o.Profile.properties()
	if err != nil {
		return nil, err
	}
	for _, kv := range pp {
		props[kv[0]] = kv[1]
	}
	setInt := func(k string, v int) {
		if v != 0 {
			props[k] = strconv.Itoa(v)
		}
	}
	setInt("aeron.term.buffer.length", o.TermLength)
	setInt("aeron.ipc.term.buffer.length", o.IPCTermLength)
	setInt("aeron.mtu.length", o.MTU)
	setInt("aeron.ipc.mtu.length", o.IPCMTU)
	setNs := func(k string, d time.Duration) { // Aeron reads these in nanoseconds
		if d > 0 {
			props[k] = strconv.FormatInt(d.Nanoseconds(), 10)
		}
	}
	setNs("aeron.client.liveness.timeout", o.ClientLivenessTimeout)
	setNs("aeron.publication.unblock.timeout", o.PublicationUnblockTimeout)
	setNs("aeron.image.liveness.timeout", o.ImageLivenessTimeout)
	setNs("aeron.publication.linger.timeout", o.PublicationLingerTimeout)
	setNs("aeron.publication.connection.timeout", o.PublicationConnectionTimeout)
	setNs("aeron.timer.interval", o.TimerInterval)
	for k, v := range o.Properties {
		props[k] = v
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	args := make([]string, 0, len(keys))
	for _, k := range keys {
		args = append(args, "-D"+k+"="+props[k])
	}
	return args, nil
}

// Driver is a running (or exited) Java media driver. Its methods are safe
// for concurrent use.
type Driver struct {
	opts    Options // resolved: Dir, LogPath, JavaPath, JarPath set
	gid     int     // Options.Group resolved, or -1
	root    string  // private directory this Driver owns and removes, or ""
	ownLog  bool    // LogPath was chosen here beside a caller's Dir: removed by a clean Stop
	cmd     *exec.Cmd
	logFile *os.File
	done    chan struct{}
	waitErr error // set before done is closed

	mu        sync.Mutex
	requested bool // Stop, Kill or Restart asked the process to end
	stopOnce  sync.Once
	stopErr   error
	keepRoot  bool // Restart hands root to the new Driver
}

// Start launches a media driver and returns once it is ready: its CnC file
// carries a known version, this process's PID and a heartbeat younger than
// Options.DriverTimeout. If ctx ends, the driver has exited, or
// Options.StartTimeout passes first, the driver is killed and the error
// quotes the end of its log.
func Start(ctx context.Context, o Options) (*Driver, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if o.JarPath, err = FindJar(o.JarPath); err != nil {
		return nil, err
	}
	if o.JavaPath == "" {
		if o.JavaPath, err = FindJava(); err != nil {
			return nil, err
		}
	}
	gid := -1
	if o.Group != "" {
		if gid, err = unixgroup.Lookup(o.Group); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
		}
	}
	var root string
	ownLog := false
	if o.Dir == "" {
		base := os.TempDir()
		if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() && syscall.Access("/dev/shm", 2 /* W_OK */) == nil {
			base = "/dev/shm"
		}
		if root, err = os.MkdirTemp(base, "goblin-javadriver-"); err != nil {
			return nil, fmt.Errorf("javadriver: private directory: %w", err)
		}
		if gid >= 0 {
			if err := share(root, gid, true); err != nil {
				os.RemoveAll(root)
				return nil, err
			}
		}
		o.Dir = filepath.Join(root, "aeron")
		if o.LogPath == "" {
			o.LogPath = filepath.Join(root, "driver.log")
		}
	} else {
		if o.Dir, err = filepath.Abs(o.Dir); err != nil {
			return nil, fmt.Errorf("javadriver: %w", err)
		}
		if o.LogPath == "" {
			o.LogPath = filepath.Clean(o.Dir) + ".driver.log"
			ownLog = true
		}
		// Aeron's driver, told to delete its directory on start, would
		// delete a live driver's files: refuse (and clear an orphan's).
		if err := Claim(o.Dir, o.DriverTimeout); err != nil {
			return nil, err
		}
	}
	d, err := launch(o, root, gid)
	if err != nil {
		if root != "" {
			os.RemoveAll(root)
		}
		return nil, err
	}
	d.ownLog = ownLog
	if err := d.awaitReady(ctx); err != nil {
		d.Kill()
		d.Wait()
		if root != "" {
			os.RemoveAll(root)
		}
		return nil, err
	}
	return d, nil
}

// launch starts the driver process. It runs under a umask that keeps its
// files from other users (077, or 007 with a group): Aeron has no option
// for the modes of the files it creates, so the JVM starts from a shell
// that sets the umask and execs it (the same process, keeping Pdeathsig).
func launch(o Options, root string, gid int) (*Driver, error) {
	props, err := o.systemProperties()
	if err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(o.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("javadriver: driver log: %w", err)
	}
	umask := "077"
	if gid >= 0 {
		umask = "007"
		if err := share(o.LogPath, gid, false); err != nil {
			logFile.Close()
			return nil, err
		}
		os.Chmod(o.LogPath, 0o640)
	}
	args := append([]string{}, JVMFlags...)
	args = append(args, o.JVMArgs...)
	args = append(args, props...)
	args = append(args, "-D"+supervisorProperty+"="+strconv.Itoa(os.Getpid()))
	args = append(args, "-cp", o.JarPath, "io.aeron.driver.MediaDriver")
	cmd := exec.Command("/bin/sh", append([]string{"-c", `umask ` + umask + ` && exec "$0" "$@"`, o.JavaPath}, args...)...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	fmt.Fprintf(logFile, "--- javadriver %s: %s %q\n", time.Now().Format(time.RFC3339Nano), o.JavaPath, args)
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("javadriver: start %s: %w", o.JavaPath, err)
	}
	d := &Driver{opts: o, gid: gid, root: root, cmd: cmd, logFile: logFile, done: make(chan struct{})}
	go d.reap()
	return d, nil
}

// reap waits for the process and records why it ended.
func (d *Driver) reap() {
	err := d.cmd.Wait()
	d.mu.Lock()
	requested := d.requested
	d.mu.Unlock()
	switch {
	case requested:
		d.waitErr = fmt.Errorf("%w (%v)", ErrStopped, d.cmd.ProcessState)
	case err != nil:
		d.waitErr = fmt.Errorf("%w: %w; log %s ends:\n%s", ErrExited, err, d.opts.LogPath, d.tail(2048))
	default:
		d.waitErr = fmt.Errorf("%w with status 0; log %s ends:\n%s", ErrExited, d.opts.LogPath, d.tail(2048))
	}
	d.logFile.Close()
	close(d.done)
}

func (d *Driver) awaitReady(ctx context.Context) error {
	deadline := time.NewTimer(d.opts.StartTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		st, err := readCnC(d.opts.Dir)
		if err == nil {
			err = d.check(st)
		}
		if err == nil {
			if d.gid >= 0 {
				return shareTree(d.opts.Dir, d.gid)
			}
			return nil
		}
		if errors.Is(err, ErrIncompatibleDriver) {
			return err
		}
		last = err
		select {
		case <-tick.C:
		case <-d.done:
			return fmt.Errorf("javadriver: driver exited during start-up: %w", d.waitErr)
		case <-deadline.C:
			return fmt.Errorf("%w after %v (%w); log %s ends:\n%s", ErrStartTimeout, d.opts.StartTimeout, last, d.opts.LogPath, d.tail(2048))
		case <-ctx.Done():
			return fmt.Errorf("javadriver: waiting for the driver: %w", ctx.Err())
		}
	}
}

// check accepts st if it was written by this driver and its heartbeat is
// fresh.
func (d *Driver) check(st cncState) error {
	if st.pid != int64(d.cmd.Process.Pid) {
		return fmt.Errorf("%w: cnc.dat names PID %d, not %d", errCncNotReady, st.pid, d.cmd.Process.Pid)
	}
	if st.heartbeatMs <= 0 {
		return fmt.Errorf("%w: heartbeat %d", errCncNotReady, st.heartbeatMs)
	}
	if age := time.Since(time.UnixMilli(st.heartbeatMs)); age > d.opts.DriverTimeout {
		return fmt.Errorf("%w: heartbeat %v old", errCncNotReady, age)
	}
	return nil
}

// HeartbeatAge returns how long ago the driver last stamped its heartbeat
// in the CnC file. A live driver stamps it every TimerInterval (1 s by
// default); an age above DriverTimeout means clients will consider it dead.
func (d *Driver) HeartbeatAge() (time.Duration, error) {
	st, err := readCnC(d.opts.Dir)
	if err != nil {
		return 0, err
	}
	if st.heartbeatMs <= 0 {
		return 0, fmt.Errorf("%w: heartbeat %d (driver shut down)", ErrStopped, st.heartbeatMs)
	}
	return time.Since(time.UnixMilli(st.heartbeatMs)), nil
}

// Dir returns the Aeron directory clients connect to.
func (d *Driver) Dir() string { return d.opts.Dir }

// LogPath returns the file the driver's output goes to.
func (d *Driver) LogPath() string { return d.opts.LogPath }

// PID returns the driver's process id.
func (d *Driver) PID() int { return d.cmd.Process.Pid }

// Options returns the options the driver runs with, defaults resolved.
func (d *Driver) Options() Options { return d.opts }

// Done is closed when the driver process has exited, for whatever reason.
func (d *Driver) Done() <-chan struct{} { return d.done }

// Wait blocks until the driver exits. The error wraps ErrStopped if Stop,
// Kill or Restart ended it, and ErrExited (with the end of its log)
// otherwise.
func (d *Driver) Wait() error {
	<-d.done
	return d.waitErr
}

// Log returns the driver's log so far.
func (d *Driver) Log() ([]byte, error) { return os.ReadFile(d.opts.LogPath) }

func (d *Driver) tail(n int) string {
	b, err := os.ReadFile(d.opts.LogPath)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	if len(b) > n {
		b = b[len(b)-n:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return string(b)
}

func (d *Driver) signal(sig syscall.Signal) {
	d.mu.Lock()
	d.requested = true
	d.mu.Unlock()
	select {
	case <-d.done:
	default:
		_ = d.cmd.Process.Signal(sig) // fails only if it already exited
	}
}

// Kill ends the driver at once (SIGKILL), as a crash would: it leaves its
// CnC file with a heartbeat that stops advancing, so connected clients see
// the driver time out. It waits for the process to exit but, unlike Stop,
// does not remove the private directory.
func (d *Driver) Kill() {
	d.signal(syscall.SIGKILL)
	<-d.done
}

// Stop shuts the driver down: SIGTERM (the driver closes and deletes its
// directory), then SIGKILL after Options.StopGrace. It removes the private
// directory if Start made one. It is idempotent; later calls return the
// first call's result. It returns an error only if the directory could not
// be removed.
func (d *Driver) Stop() error {
	d.stopOnce.Do(func() {
		diedFirst := false
		select {
		case <-d.done:
			diedFirst = true
		default:
		}
		d.signal(syscall.SIGTERM)
		t := time.NewTimer(d.opts.StopGrace)
		select {
		case <-d.done:
		case <-t.C:
			d.signal(syscall.SIGKILL)
			<-d.done
		}
		t.Stop()
		d.mu.Lock()
		keep := d.keepRoot
		d.mu.Unlock()
		if d.root != "" && !keep {
			if err := os.RemoveAll(d.root); err != nil {
				d.stopErr = fmt.Errorf("javadriver: remove %s: %w", d.root, err)
			}
		}
		// A log this package placed beside the caller's directory goes
		// with a clean stop, so nothing is left in /dev/shm; a driver that
		// died (Stop after Done) keeps its log for the post-mortem.
		if d.ownLog && !keep && !diedFirst {
			os.Remove(d.opts.LogPath)
		}
	})
	return d.stopErr
}

// Restart stops d if it is still running and starts a new driver with the
// same resolved options: same directory, same log file (appended). The new
// Driver takes over the private directory, so stopping it removes the
// directory. Clients must reconnect: a new driver is a new CnC file. If the
// new driver fails to start, the private directory is removed and the error
// returned; call Start for another try.
func (d *Driver) Restart(ctx context.Context) (*Driver, error) {
	d.mu.Lock()
	d.keepRoot = true
	d.mu.Unlock()
	d.Stop()
	nd, err := launch(d.opts, d.root, d.gid)
	if err == nil {
		if err = nd.awaitReady(ctx); err != nil {
			nd.Kill()
			nd.Wait()
		}
	}
	if err != nil {
		if d.root != "" {
			os.RemoveAll(d.root)
		}
		return nil, err
	}
	nd.ownLog = d.ownLog
	return nd, nil
}
