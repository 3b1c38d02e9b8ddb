package runner

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"

	"github.com/goblin-kv/goblin/benchmarks/harness"
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
func NewAeronRaw(transport string) harness.Provider { return aeronRaw{transport: transport} }

func (a aeronRaw) System() string                { return harness.SysAeronRaw }
func (a aeronRaw) Transport() string             { return a.transport }
func (a aeronRaw) Protocols() []harness.Protocol { return []harness.Protocol{harness.Raw} }
func (a aeronRaw) Ops() []harness.Op             { return []harness.Op{harness.Ping} }

func (a aeronRaw) Check(cfg *harness.Config, _ harness.Protocol) error {
	if err := cfg.OneHostOnly(a.transport); err != nil {
		return err
	}
	for _, h := range []harness.Host{cfg.ServerSideHost(), cfg.ClientSideHost()} {
		if _, _, err := javaTools(cfg, h); err != nil {
			return err
		}
	}
	return nil
}

// javaTools finds java and the aeron-all jar on a host: what the Java media
// driver and Aeron's Ping and Pong run with.
func javaTools(cfg *harness.Config, h harness.Host) (java, jar string, err error) {
	if java, err = h.Tool(cfg, "java"); err != nil {
		return "", "", err
	}
	jar, err = h.Tool(cfg, "aeron-jar")
	return java, jar, err
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

type aeronRawInstance struct {
	cfg     *harness.Config
	prof    harness.Profile
	procs   []harness.Proc // drivers and pong, stopped in reverse
	cliDir  string         // the client's case directory, on the client host
	cliAero string         // the aeron dir Ping uses
	pingCh  string
	pongCh  string
	info    map[string]string
}

func (a aeronRaw) Start(ctx context.Context, cfg *harness.Config, _ harness.Protocol, dir string) (harness.Instance, error) {
	srvHost, cliHost := cfg.ServerSideHost(), cfg.ClientSideHost()
	java, jar, err := javaTools(cfg, srvHost)
	if err != nil {
		return nil, err
	}
	prof := cfg.Profile.ForTransport(a.transport)
	srvDir := cfg.HostDir(srvHost, dir)
	in := &aeronRawInstance{cfg: cfg, prof: prof, cliDir: cfg.HostDir(cliHost, dir), info: map[string]string{}}
	ok := false
	defer func() {
		if !ok {
			in.Close()
		}
	}()
	srv, err := startDriver(ctx, cfg, srvHost, prof, srvDir, "driver-server")
	if err != nil {
		return nil, err
	}
	in.procs = append(in.procs, srv)
	in.info["driver.server"] = srv.Info
	in.cliAero = srv.Dir
	switch a.transport {
	case harness.TAeronIPC:
		in.pingCh, in.pongCh = "aeron:ipc", "aeron:ipc"
	case harness.TAeronUDP:
		cli, err := startDriver(ctx, cfg, cliHost, prof, in.cliDir, "driver-client")
		if err != nil {
			return nil, err
		}
		in.procs = append(in.procs, cli)
		in.info["driver.client"] = cli.Info
		in.cliAero = cli.Dir
		clientAddr := cfg.ClientHost
		if clientAddr == "" {
			clientAddr = cfg.ServerHost
		}
		p1, err := srvHost.FreePort("udp", cfg.ServerHost)
		if err != nil {
			return nil, err
		}
		p2, err := cliHost.FreePort("udp", clientAddr)
		if err != nil {
			return nil, err
		}
		in.pingCh = "aeron:udp?endpoint=" + net.JoinHostPort(cfg.ServerHost, strconv.Itoa(p1))
		in.pongCh = "aeron:udp?endpoint=" + net.JoinHostPort(clientAddr, strconv.Itoa(p2))
	default:
		return nil, fmt.Errorf("%w: raw Aeron over %s", harness.ErrUnavailable, a.transport)
	}
	args := append([]string{java}, jvmFlags...)
	args = append(args, "-cp", jar, "-Daeron.dir="+srv.Dir,
		"-Daeron.sample.ping.channel="+in.pingCh, "-Daeron.sample.pong.channel="+in.pongCh,
		"-Daeron.sample.idleStrategy="+agronaIdle(prof.ServerIdle),
		"-Daeron.sample.exclusive.publications=true",
		"io.aeron.samples.Pong")
	pong, err := cfg.Launch(ctx, srvHost, harness.ProcSpec{Name: "pong", Dir: srvDir, Argv: args, CPUs: prof.ServerCPU}, nil)
	if err != nil {
		return nil, err
	}
	in.procs = append(in.procs, pong)
	in.info["pong.command"] = pong.CommandLine()
	in.info["channel.ping"] = in.pingCh + " stream 1002"
	in.info["channel.pong"] = in.pongCh + " stream 1003"
	cfg.Channel("ping (client→server)", in.pingCh, 1002)
	cfg.Channel("pong (server→client)", in.pongCh, 1003)
	in.info["server.idle"] = prof.ServerIdle + " (Pong: " + agronaIdle(prof.ServerIdle) + ")"
	in.info["server.affinity"] = harness.OrAny(prof.ServerCPU)
	in.info["driver.affinity"] = harness.OrAny(prof.DriverCPU)
	ok = true
	return in, nil
}

// Dial is not used: Ping is the measuring client (see Measure).
func (in *aeronRawInstance) Dial(context.Context) (harness.Prober, error) {
	return nil, fmt.Errorf("harness: the raw Aeron case is measured by Aeron's Ping (Measure), not dialled")
}

func (in *aeronRawInstance) Info() map[string]string { return in.info }

// Measure runs Aeron's Ping on the client host against the running Pong:
// warm-up messages, then samples measured round trips, and reads its
// histogram back.
func (in *aeronRawInstance) Measure(ctx context.Context, op harness.Op, warmup, samples int) (harness.Summary, []int64, string, error) {
	h := in.cfg.ClientSideHost()
	java, jar, err := javaTools(in.cfg, h)
	if err != nil {
		return harness.Summary{}, nil, "", err
	}
	args := append([]string{java}, jvmFlags...)
	args = append(args, "-cp", jar, "-Daeron.dir="+in.cliAero,
		"-Daeron.sample.ping.channel="+in.pingCh, "-Daeron.sample.pong.channel="+in.pongCh,
		"-Daeron.sample.messages="+strconv.Itoa(samples),
		"-Daeron.sample.warmup.messages="+strconv.Itoa(max(warmup, 1)),
		"-Daeron.sample.warmup.iterations=1",
		"-Daeron.sample.messageLength=32",
		"-Daeron.sample.exclusive.publications=true",
		"io.aeron.samples.Ping")
	cctx, cancel := context.WithTimeout(ctx, in.cfg.CaseTimeout)
	defer cancel()
	// Ping writes straight into its log, so a slow run can be watched; "n"
	// answers its "Execute again?".
	spec := harness.ProcSpec{Name: "ping", Dir: in.cliDir, Argv: args, CPUs: in.prof.ClientCPU, Stdin: "n\n"}
	out, err := h.Run(cctx, spec)
	in.info["client.command"] = strings.Join(args, " ")
	if err != nil {
		return harness.Summary{}, nil, "", fmt.Errorf("aeron Ping: %w", err)
	}
	s, dist, err := parseHdrPercentiles(string(out))
	if err != nil {
		return harness.Summary{}, nil, "", fmt.Errorf("aeron Ping output: %w", err)
	}
	if s.Samples != samples {
		return harness.Summary{}, nil, "", fmt.Errorf("aeron Ping recorded %d round trips, want %d", s.Samples, samples)
	}
	return s, dist, harness.OrAny(in.prof.ClientCPU), nil
}

func (in *aeronRawInstance) Describe() string {
	return "Aeron's Java Ping sample (io.aeron.samples.Ping, busy-spin polling, HdrHistogram)"
}

func (in *aeronRawInstance) Close() error {
	var first error
	for i := len(in.procs) - 1; i >= 0; i-- {
		if err := in.procs[i].Stop(graceStop); err != nil && first == nil {
			first = err
		}
	}
	in.procs = nil
	return first
}

// parseHdrPercentiles reads HdrHistogram's outputPercentileDistribution
// (values in µs) into a Summary and the values at DistributionPoints (the
// first bucket at or above each percentile).
func parseHdrPercentiles(out string) (harness.Summary, []int64, error) {
	type row struct {
		us, q float64
		count int
	}
	var rows []row
	var s harness.Summary
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
		return harness.Summary{}, nil, fmt.Errorf("no percentile distribution found")
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
	dist := make([]int64, len(harness.DistributionPoints))
	for i, q := range harness.DistributionPoints {
		dist[i] = at(q)
		if q >= 100 {
			dist[i] = s.Max
		}
	}
	return s, dist, nil
}

var _ harness.Measurer = (*aeronRawInstance)(nil)
