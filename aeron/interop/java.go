// Package interop proves goblin's Aeron client (package aeron) against the
// real Aeron Java client and media driver, and times the two side by side.
//
// The tests in this package start the Java media driver (package
// aeron/javadriver) and the Java programs of the Maven project in
// aeron/interop/java (Publisher, Subscriber, Ping, Pong, Throughput,
// ResponseServer, ResponseClient), and check every byte that crosses between
// Go and Java over IPC and UDP loopback, including fragmented messages and
// response channels through two drivers.
//
// The non-test part of the package is the harness other packages reuse to
// put a Java reference beside their own benchmarks: BuildJava builds the
// Maven project (once per process, and only when its sources changed) and
// Java.Start runs one of its programs and reads its line protocol
// ("READY ...", "RESULT key=value ..."). Pattern, Fill and Check are the
// payload pattern both sides agree on.
package interop

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/goblin-kv/goblin/aeron/javadriver"
	"golang.org/x/sys/unix"
)

// ErrToolMissing means java or mvn is not installed, so the Java programs
// cannot be built or run. Tests skip with this error's message.
var ErrToolMissing = errors.New("interop: java or mvn not installed")

// ErrBuild means the Maven build of aeron/interop/java failed.
var ErrBuild = errors.New("interop: building aeron/interop/java failed")

// ProjectEnv names the environment variable that overrides where the
// aeron/interop/java Maven project is (by default it is found from this source
// file's location in the module).
const ProjectEnv = "GOBLIN_INTEROP_JAVA"

// Java runs the programs of the aeron/interop/java Maven project.
type Java struct {
	// JavaPath is the java executable.
	JavaPath string
	// Classpath holds the project's jar and its dependencies (aeron-all).
	Classpath string
	// Wrap, when set, prefixes every command (ip netns exec NS runs the
	// program in a network namespace).
	Wrap []string
	// JVMArgs are added after javadriver.JVMFlags (-Dname=value).
	JVMArgs []string
}

var (
	buildOnce sync.Once
	built     *Java
	buildErr  error
)

// BuildJava builds aeron/interop/java with `mvn -q -B package` unless its jar and
// classpath file are newer than every source file and the pom, or an
// earlier build of the same pom, sources and JDK is in the build cache
// (CacheEnv), and returns how to run its programs. The build runs at most once per process and is
// serialised with other processes by a lock file in the target directory.
// The error wraps ErrToolMissing when java or mvn is absent, and ErrBuild
// (with Maven's output) when the build fails.
func BuildJava(ctx context.Context) (*Java, error) {
	buildOnce.Do(func() { built, buildErr = buildJava(ctx) })
	return built, buildErr
}

// ProjectDir returns the aeron/interop/java directory.
func ProjectDir() string {
	if d := os.Getenv(ProjectEnv); d != "" {
		return d
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return filepath.Join("aeron", "interop", "java")
	}
	return filepath.Join(filepath.Dir(file), "java")
}

func buildJava(ctx context.Context) (*Java, error) {
	java, err := javadriver.FindJava()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrToolMissing, err)
	}
	dir, err := filepath.Abs(ProjectDir())
	if err != nil {
		return nil, err
	}
	pom := filepath.Join(dir, "pom.xml")
	if _, err := os.Stat(pom); err != nil {
		return nil, fmt.Errorf("%w: no Maven project at %s (set $%s): %w", ErrBuild, dir, ProjectEnv, err)
	}
	target := filepath.Join(dir, "target")
	jar := filepath.Join(target, "goblin-aeron-interop.jar")
	cpFile := filepath.Join(target, "classpath.txt")

	if cp, ok := upToDate(dir, jar, cpFile); ok {
		return &Java{JavaPath: java, Classpath: jar + string(os.PathListSeparator) + cp}, nil
	}
	if err := os.MkdirAll(target, 0o755); err != nil {
		return nil, err
	}
	lock, err := os.OpenFile(filepath.Join(target, ".build.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	// Another test binary may be building the same project right now.
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return nil, fmt.Errorf("interop: lock %s: %w", lock.Name(), err)
	}
	defer unix.Flock(int(lock.Fd()), unix.LOCK_UN)
	if cp, ok := upToDate(dir, jar, cpFile); ok {
		return &Java{JavaPath: java, Classpath: jar + string(os.PathListSeparator) + cp}, nil
	}
	// A clean checkout takes the output of an earlier build of the same
	// inputs from the cache (javacache.go) instead of running Maven.
	_, err = cachedBuild(javaCacheRoot(), dir, javaVersion(java), jar, cpFile, func() error {
		mvn, err := exec.LookPath("mvn")
		if err != nil {
			return fmt.Errorf("%w: mvn not on $PATH (install Maven 3.8+ to build %s): %w", ErrToolMissing, dir, err)
		}
		cmd := exec.CommandContext(ctx, mvn, "-q", "-B", "-f", pom, "package")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%w: mvn -q -B -f %s package: %w\n%s", ErrBuild, pom, err, out)
		}
		// The dependency plugin leaves an unchanged classpath file alone, so
		// after a source-only rebuild it would still look older than the
		// sources: it is as fresh as the jar now.
		now := time.Now()
		os.Chtimes(cpFile, now, now)
		return nil
	})
	if err != nil {
		return nil, err
	}
	cp, ok := upToDate(dir, jar, cpFile)
	if !ok {
		return nil, fmt.Errorf("%w: the build (or its copy from the build cache) left %s or %s missing or stale", ErrBuild, jar, cpFile)
	}
	return &Java{JavaPath: java, Classpath: jar + string(os.PathListSeparator) + cp}, nil
}

// upToDate reports whether jar and cpFile exist, are newer than pom.xml and
// every file under src, and name dependencies that exist; it returns the
// dependency classpath.
func upToDate(dir, jar, cpFile string) (string, bool) {
	jfi, err1 := os.Stat(jar)
	cfi, err2 := os.Stat(cpFile)
	if err1 != nil || err2 != nil {
		return "", false
	}
	built := jfi.ModTime()
	if cfi.ModTime().Before(built) {
		built = cfi.ModTime()
	}
	stale := false
	check := func(p string) {
		if fi, err := os.Stat(p); err != nil || fi.ModTime().After(built) {
			stale = true
		}
	}
	check(filepath.Join(dir, "pom.xml"))
	filepath.WalkDir(filepath.Join(dir, "src"), func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			stale = true
			return err
		}
		if !e.IsDir() {
			check(p)
		}
		return nil
	})
	if stale {
		return "", false
	}
	b, err := os.ReadFile(cpFile)
	if err != nil {
		return "", false
	}
	cp := strings.TrimSpace(string(b))
	for _, p := range filepath.SplitList(cp) {
		if _, err := os.Stat(p); err != nil {
			return "", false
		}
	}
	return cp, cp != ""
}

// Proc is a running Java interop program. Its stdout lines are collected;
// stderr goes to the same log.
type Proc struct {
	Name string
	cmd  *exec.Cmd
	in   io.WriteCloser

	mu    sync.Mutex
	lines []string // stdout lines so far
	log   strings.Builder
	grew  chan struct{} // closed and replaced whenever a line arrives
	eof   bool

	done    chan struct{}
	waitErr error
}

// Start runs program (a class in dev.goblin.interop, e.g. "Ping") against
// the driver in aeronDir with key=value args. The process is killed when
// ctx ends; call Stop or Kill when done with it.
func (j *Java) Start(ctx context.Context, aeronDir, program string, args ...string) (*Proc, error) {
	return j.StartClass(ctx, aeronDir, "dev.goblin.interop."+program, args...)
}

// StartClass runs any main class on the project's classpath, such as
// Aeron's own io.aeron.samples.AeronStat, against the driver in aeronDir.
func (j *Java) StartClass(ctx context.Context, aeronDir, class string, args ...string) (*Proc, error) {
	program := class[strings.LastIndexByte(class, '.')+1:]
	jvm := append([]string{}, javadriver.JVMFlags...)
	jvm = append(jvm, j.JVMArgs...)
	jvm = append(jvm, "-Daeron.dir="+aeronDir, "-cp", j.Classpath, class)
	argv := append(append(append([]string{}, j.Wrap...), j.JavaPath), append(jvm, args...)...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SysProcAttr = procAttr()
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &Proc{Name: program, cmd: cmd, in: in, grew: make(chan struct{}), done: make(chan struct{})}
	cmd.Stderr = procStderr{p}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("interop: start %s: %w", program, err)
	}
	go p.read(out)
	return p, nil
}

type procStderr struct{ p *Proc }

func (w procStderr) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	w.p.log.Write(b)
	w.p.mu.Unlock()
	return len(b), nil
}

func (p *Proc) read(out io.Reader) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		p.mu.Lock()
		p.lines = append(p.lines, sc.Text())
		p.log.WriteString(sc.Text() + "\n")
		close(p.grew)
		p.grew = make(chan struct{})
		p.mu.Unlock()
	}
	err := p.cmd.Wait()
	p.mu.Lock()
	p.eof = true
	p.waitErr = err
	close(p.grew)
	p.grew = make(chan struct{})
	p.mu.Unlock()
	close(p.done)
}

// Line waits up to timeout for a stdout line starting with prefix (the
// first such line, even if it came earlier) and returns it.
func (p *Proc) Line(prefix string, timeout time.Duration) (string, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		for _, l := range p.lines {
			if strings.HasPrefix(l, prefix) {
				p.mu.Unlock()
				return l, nil
			}
		}
		grew, eof := p.grew, p.eof
		p.mu.Unlock()
		if eof {
			return "", fmt.Errorf("interop: %s exited (%v) without printing %q; output:\n%s", p.Name, p.waitErr, prefix, p.Output())
		}
		select {
		case <-grew:
		case <-deadline.C:
			return "", fmt.Errorf("interop: %s printed no %q within %v; output:\n%s", p.Name, prefix, timeout, p.Output())
		}
	}
}

// Result waits for the program's RESULT line and returns its key=value
// fields.
func (p *Proc) Result(timeout time.Duration) (map[string]string, error) {
	l, err := p.Line("RESULT", timeout)
	if err != nil {
		return nil, err
	}
	return ParseFields(l), nil
}

// Output returns everything the program printed so far (stdout and stderr).
func (p *Proc) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// PID is the program's process id (that of the first command of Wrap when
// Java.Wrap is set).
func (p *Proc) PID() int { return p.cmd.Process.Pid }

// Send writes line and a newline to the program's stdin (Throughput's
// threads=true waits for one before it starts).
func (p *Proc) Send(line string) error {
	_, err := io.WriteString(p.in, line+"\n")
	return err
}

// CloseStdin tells programs that run until stdin ends (Publisher, Pong,
// ResponseServer) to finish.
func (p *Proc) CloseStdin() { p.in.Close() }

// Done is closed when the program has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Wait waits for the program to exit and returns its exit error (nil for
// status 0).
func (p *Proc) Wait() error {
	<-p.done
	return p.waitErr
}

// Stop closes stdin and waits up to grace for the program to exit, then
// kills it. It returns the exit error.
func (p *Proc) Stop(grace time.Duration) error {
	p.CloseStdin()
	select {
	case <-p.done:
	case <-time.After(grace):
		p.Kill()
	}
	return p.Wait()
}

// Kill ends the program at once and waits for it.
func (p *Proc) Kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// ParseFields returns the key=value fields of a protocol line such as
// "RESULT rtt_ns count=100 p50=612"; words without '=' are skipped.
func ParseFields(line string) map[string]string {
	m := make(map[string]string)
	for _, w := range strings.Fields(line) {
		if k, v, ok := strings.Cut(w, "="); ok {
			m[k] = v
		}
	}
	return m
}

// Int returns field k of m as an int64, or an error naming it.
func Int(m map[string]string, k string) (int64, error) {
	v, ok := m[k]
	if !ok {
		return 0, fmt.Errorf("interop: no %s= in %v", k, m)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("interop: %s=%q: %w", k, v, err)
	}
	return n, nil
}

// Float returns field k of m as a float64.
func Float(m map[string]string, k string) (float64, error) {
	v, ok := m[k]
	if !ok {
		return 0, fmt.Errorf("interop: no %s= in %v", k, m)
	}
	return strconv.ParseFloat(v, 64)
}

// Pattern is the payload byte both sides agree on: byte j of message seq is
// (seq*131 + j*7 + (j>>8)*13) mod 256. It depends on the message's sequence
// number and on each byte's position, so lost, repeated, reordered or
// mis-assembled fragments show up. (dev.goblin.interop.Common.pattern.)
func Pattern(seq int64, j int) byte {
	return byte(seq*131 + int64(j)*7 + int64(j>>8)*13)
}

// Fill writes message seq's pattern into b.
func Fill(b []byte, seq int64) {
	for j := range b {
		b[j] = Pattern(seq, j)
	}
}

// Check returns the index of the first byte of b that breaks message seq's
// pattern, or -1.
func Check(b []byte, seq int64) int {
	for j, c := range b {
		if c != Pattern(seq, j) {
			return j
		}
	}
	return -1
}

// SizeOf is the length of message seq when the Java programs are given
// sizes=MIN-MAX (Common.sizeOf): a deterministic mix, seven in eight within
// 256 bytes of min, the rest anywhere up to max.
func SizeOf(seq int64, min, max int) int {
	if max <= min {
		return min
	}
	span := int64(max) - int64(min) + 1
	h := (seq * 7919) ^ (int64(uint64(seq)>>3))*104729
	if h%8 != 0 {
		span = int64(math.Min(256, float64(span)))
	}
	return min + int(h%span)
}
