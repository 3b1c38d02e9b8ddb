package harness

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// aeronRaw is the raw Aeron floor: Aeron's own Ping and Pong samples (from
// io.aeron:aeron-all) bouncing a 32-byte message through the real Java media
// driver, no goblin anywhere. On IPC both use one driver; on UDP each side
// has its own driver, as goblin's two-driver UDP case does. Ping measures
// with its own clock into an HdrHistogram (3 significant digits), whose
// percentile distribution the harness reads back.
type aeronRaw struct{ transport string }

// NewAeronRaw returns the raw Aeron ping-pong provider for aeron-ipc or
// aeron-udp.
func NewAeronRaw(transport string) Provider { return aeronRaw{transport: transport} }

func (a aeronRaw) System() string        { return SysAeronRaw }
func (a aeronRaw) Transport() string     { return a.transport }
func (a aeronRaw) Protocols() []Protocol { return []Protocol{Raw} }
func (a aeronRaw) Ops() []Op             { return []Op{Ping} }

func (a aeronRaw) Check(cfg *Config, _ Protocol) error {
	if _, err := lookTool(cfg.Java, "java"); err != nil {
		return err
	}
	_, err := aeronJar(cfg)
	return err
}

// aeronJar finds io.aeron:aeron-all: the configured jar, else the version
// scripts/aeron.version pins in the local Maven repository (what
// scripts/setup.sh fetches).
func aeronJar(cfg *Config) (string, error) {
	if cfg.AeronJar != "" {
		if _, err := os.Stat(cfg.AeronJar); err != nil {
			return "", fmt.Errorf("%w: aeron jar %s: %v", ErrUnavailable, cfg.AeronJar, err)
		}
		return cfg.AeronJar, nil
	}
	version := readTrim(filepath.Join(repoRoot(), "scripts", "aeron.version"), "1.51.0")
	home, _ := os.UserHomeDir()
	repo := os.Getenv("MAVEN_REPO")
	if repo == "" {
		repo = filepath.Join(home, ".m2", "repository")
	}
	jar := filepath.Join(repo, "io", "aeron", "aeron-all", version, "aeron-all-"+version+".jar")
	if _, err := os.Stat(jar); err != nil {
		return "", fmt.Errorf("%w: %s is missing (run scripts/setup.sh)", ErrUnavailable, jar)
	}
	return jar, nil
}

// repoRoot is the checkout the harness runs in (for scripts/aeron.version).
func repoRoot() string {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "."
	}
	return strings.TrimSpace(string(out))
}

// aeronIdle maps a profile idle name to Aeron's idle strategy names.
func aeronIdle(s string) string {
	switch s {
	case "spin":
		return "noop" // start the next duty cycle at once, as Goblin's latency profile
	case "yield":
		return "yield"
	}
	return "backoff"
}

// agronaIdle maps a profile idle name to an Agrona idle strategy class.
func agronaIdle(s string) string {
	switch s {
	case "spin":
		return "org.agrona.concurrent.BusySpinIdleStrategy"
	case "yield":
		return "org.agrona.concurrent.YieldingIdleStrategy"
	}
	return "org.agrona.concurrent.BackoffIdleStrategy"
}

var jvmFlags = []string{"-Xms64m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:-UsePerfData",
	"-Dagrona.disable.bounds.checks=true", "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
	"--add-opens", "java.base/java.nio=ALL-UNNAMED", "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED"}

// mediaDriver starts the Java media driver in dir and waits for its CnC file.
func mediaDriver(ctx context.Context, cfg *Config, prof Profile, java, jar, dir, name string, server bool) (*process, string, error) {
	aeronDir := filepath.Join(dir, name)
	idle := aeronIdle(prof.DriverIdle)
	threading := "SHARED"
	if prof.DriverIdle == "spin" {
		threading = "DEDICATED"
	}
	args := append([]string{java}, jvmFlags...)
	args = append(args, "-cp", jar,
		"-Daeron.dir="+aeronDir,
		"-Daeron.dir.delete.on.start=true",
		"-Daeron.dir.delete.on.shutdown=true",
		"-Daeron.threading.mode="+threading,
		"-Daeron.conductor.idle.strategy="+idle,
		"-Daeron.sender.idle.strategy="+idle,
		"-Daeron.receiver.idle.strategy="+idle,
		"-Daeron.shared.idle.strategy="+idle,
		"-Daeron.sharednetwork.idle.strategy="+idle,
		"-Daeron.term.buffer.sparse.file=true",
		"-Daeron.socket.so_sndbuf=2m", "-Daeron.socket.so_rcvbuf=2m",
		"io.aeron.driver.MediaDriver")
	p, err := startProcess(cfg, dir, name, server, prof.DriverCPU, nil, args...)
	if err != nil {
		return nil, "", err
	}
	cnc := filepath.Join(aeronDir, "cnc.dat")
	ready := func() error {
		st, err := os.Stat(cnc)
		if err != nil {
			return err
		}
		if st.Size() == 0 {
			return fmt.Errorf("cnc.dat is empty")
		}
		return nil
	}
	if err := waitFor(ctx, p, "Aeron media driver "+name, ready); err != nil {
		p.stop(graceStop)
		return nil, "", err
	}
	return p, fmt.Sprintf("%s (threading %s, agents %s)", p.commandLine(), threading, idle), nil
}

type aeronRawInstance struct {
	cfg       *Config
	prof      Profile
	java, jar string
	dir       string
	procs     []*process // drivers and pong, stopped in reverse
	clientDir string     // the aeron dir Ping uses
	pingCh    string
	pongCh    string
	info      map[string]string
}

func (a aeronRaw) Start(ctx context.Context, cfg *Config, _ Protocol, dir string) (Instance, error) {
	java, err := lookTool(cfg.Java, "java")
	if err != nil {
		return nil, err
	}
	jar, err := aeronJar(cfg)
	if err != nil {
		return nil, err
	}
	prof := cfg.Profile.ForTransport(a.transport)
	in := &aeronRawInstance{cfg: cfg, prof: prof, java: java, jar: jar, dir: dir, info: map[string]string{}}
	ok := false
	defer func() {
		if !ok {
			in.Close()
		}
	}()
	srv, srvInfo, err := mediaDriver(ctx, cfg, prof, java, jar, dir, "driver-server", true)
	if err != nil {
		return nil, err
	}
	in.procs = append(in.procs, srv)
	in.info["driver.server"] = srvInfo
	serverDir := filepath.Join(dir, "driver-server")
	in.clientDir = serverDir
	switch a.transport {
	case TAeronIPC:
		in.pingCh, in.pongCh = "aeron:ipc", "aeron:ipc"
	case TAeronUDP:
		cli, cliInfo, err := mediaDriver(ctx, cfg, prof, java, jar, dir, "driver-client", false)
		if err != nil {
			return nil, err
		}
		in.procs = append(in.procs, cli)
		in.info["driver.client"] = cliInfo
		in.clientDir = filepath.Join(dir, "driver-client")
		clientHost := cfg.ClientHost
		if clientHost == "" {
			clientHost = cfg.ServerHost
		}
		p1, err := udpPort(cfg, cfg.ServerHost)
		if err != nil {
			return nil, err
		}
		p2, err := freeUDPPort(clientHost)
		if err != nil {
			return nil, err
		}
		in.pingCh = "aeron:udp?endpoint=" + net.JoinHostPort(cfg.ServerHost, strconv.Itoa(p1))
		in.pongCh = "aeron:udp?endpoint=" + net.JoinHostPort(clientHost, strconv.Itoa(p2))
	default:
		return nil, fmt.Errorf("%w: raw Aeron over %s", ErrUnavailable, a.transport)
	}
	args := append([]string{java}, jvmFlags...)
	args = append(args, "-cp", jar, "-Daeron.dir="+serverDir,
		"-Daeron.sample.ping.channel="+in.pingCh, "-Daeron.sample.pong.channel="+in.pongCh,
		"-Daeron.sample.idleStrategy="+agronaIdle(prof.ServerIdle),
		"-Daeron.sample.exclusive.publications=true",
		"io.aeron.samples.Pong")
	pong, err := startProcess(cfg, dir, "pong", true, prof.ServerCPU, nil, args...)
	if err != nil {
		return nil, err
	}
	in.procs = append(in.procs, pong)
	in.info["pong.command"] = pong.commandLine()
	in.info["channel.ping"] = in.pingCh + " stream 1002"
	in.info["channel.pong"] = in.pongCh + " stream 1003"
	in.info["server.idle"] = prof.ServerIdle + " (Pong: " + agronaIdle(prof.ServerIdle) + ")"
	in.info["server.affinity"] = orAny(prof.ServerCPU)
	in.info["driver.affinity"] = orAny(prof.DriverCPU)
	ok = true
	return in, nil
}

// udpPort picks a UDP port on the server's host.
func udpPort(cfg *Config, host string) (int, error) {
	if len(cfg.ServerWrap) > 0 {
		return 42000 + int(portSeq.Add(1)), nil
	}
	return freeUDPPort(host)
}

// Dial is not used: Ping is the measuring client (see Measure).
func (in *aeronRawInstance) Dial(context.Context) (Prober, error) {
	return nil, fmt.Errorf("harness: the raw Aeron case is measured by Aeron's Ping (Measure), not dialled")
}

func (in *aeronRawInstance) Info() map[string]string { return in.info }

// Measure runs Aeron's Ping against the running Pong: warm-up messages, then
// samples measured round trips, and reads its histogram back.
func (in *aeronRawInstance) Measure(ctx context.Context, op Op, warmup, samples int) (Summary, []int64, string, error) {
	args := append([]string{in.java}, jvmFlags...)
	args = append(args, "-cp", in.jar, "-Daeron.dir="+in.clientDir,
		"-Daeron.sample.ping.channel="+in.pingCh, "-Daeron.sample.pong.channel="+in.pongCh,
		"-Daeron.sample.messages="+strconv.Itoa(samples),
		"-Daeron.sample.warmup.messages="+strconv.Itoa(max(warmup, 1)),
		"-Daeron.sample.warmup.iterations=1",
		"-Daeron.sample.messageLength=32",
		"-Daeron.sample.exclusive.publications=true",
		"io.aeron.samples.Ping")
	if cpus := in.prof.ClientCPU; cpus != "" {
		args = append([]string{"taskset", "-c", cpus}, args...)
	}
	cctx, cancel := context.WithTimeout(ctx, in.cfg.CaseTimeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, args[0], args[1:]...)
	cmd.Stdin = strings.NewReader("n\n") // answer "Execute again?"
	// Ping writes straight into its log, so a slow run can be watched.
	logPath := filepath.Join(in.dir, "ping.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return Summary{}, nil, "", err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	err = cmd.Run()
	logf.Close()
	outb, _ := os.ReadFile(logPath)
	out := string(outb)
	in.info["client.command"] = strings.Join(args, " ")
	if err != nil {
		return Summary{}, nil, "", fmt.Errorf("aeron Ping: %v: %s", err, lastLines(out, 6))
	}
	s, dist, err := parseHdrPercentiles(out)
	if err != nil {
		return Summary{}, nil, "", fmt.Errorf("aeron Ping output: %w", err)
	}
	if s.Samples != samples {
		return Summary{}, nil, "", fmt.Errorf("aeron Ping recorded %d round trips, want %d", s.Samples, samples)
	}
	return s, dist, orAny(in.prof.ClientCPU), nil
}

func (in *aeronRawInstance) Describe() string {
	return "Aeron's Java Ping sample (io.aeron.samples.Ping, busy-spin polling, HdrHistogram)"
}

func (in *aeronRawInstance) Close() error {
	var first error
	for i := len(in.procs) - 1; i >= 0; i-- {
		if err := in.procs[i].stop(graceStop); err != nil && first == nil {
			first = err
		}
	}
	in.procs = nil
	return first
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// parseHdrPercentiles reads HdrHistogram's outputPercentileDistribution
// (values in µs) into a Summary and the values at DistributionPoints (the
// first bucket at or above each percentile).
func parseHdrPercentiles(out string) (Summary, []int64, error) {
	type row struct {
		us, q float64
		count int
	}
	var rows []row
	var s Summary
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "#[Mean"):
			f := strings.FieldsFunc(line, func(r rune) bool { return r == '=' || r == ',' || r == ']' })
			if len(f) >= 2 {
				v, _ := strconv.ParseFloat(strings.TrimSpace(f[1]), 64)
				s.Mean = v * 1000
			}
		case strings.HasPrefix(line, "#[Max"):
			f := strings.FieldsFunc(line, func(r rune) bool { return r == '=' || r == ',' || r == ']' })
			if len(f) >= 4 {
				v, _ := strconv.ParseFloat(strings.TrimSpace(f[1]), 64)
				s.Max = int64(math.Round(v * 1000))
				n, _ := strconv.Atoi(strings.TrimSpace(f[3]))
				s.Samples = n
			}
		default:
			f := strings.Fields(line)
			if len(f) != 4 {
				continue
			}
			v, err1 := strconv.ParseFloat(f[0], 64)
			q, err2 := strconv.ParseFloat(f[1], 64)
			c, err3 := strconv.Atoi(f[2])
			if err1 != nil || err2 != nil || err3 != nil {
				continue
			}
			rows = append(rows, row{v, q * 100, c})
		}
	}
	if len(rows) == 0 || s.Samples == 0 {
		return Summary{}, nil, fmt.Errorf("no percentile distribution found")
	}
	at := func(q float64) int64 {
		for _, r := range rows {
			if r.q >= q-1e-9 {
				return int64(math.Round(r.us * 1000))
			}
		}
		return int64(math.Round(rows[len(rows)-1].us * 1000))
	}
	s.Min = int64(math.Round(rows[0].us * 1000))
	s.P50, s.P90, s.P99, s.P999 = at(50), at(90), at(99), at(99.9)
	dist := make([]int64, len(DistributionPoints))
	for i, q := range DistributionPoints {
		dist[i] = at(q)
		if q >= 100 {
			dist[i] = s.Max
		}
	}
	return s, dist, nil
}

var _ Measurer = (*aeronRawInstance)(nil)
