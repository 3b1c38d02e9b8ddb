package report

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/goblin-kv/goblin/benchmarks/harness"
	"golang.org/x/sys/unix"
)

func CollectMetadata(cfg *harness.Config, rep *harness.Report) harness.Metadata {
	var m harness.Metadata
	add := func(k, v string) { m = append(m, harness.KV{Key: k, Value: v}) }
	model, physical, sockets := cpuInfo()
	add("date.start", rep.Started.Format(time.RFC3339))
	add("date.end", rep.Ended.Format(time.RFC3339))
	host, _ := os.Hostname()
	if cfg.TwoHosts() {
		host += " (the controller: it ran ssh and wrote this archive; the cases ran on hosts.server and hosts.client, whose facts are host.server.* and host.client.*)"
	}
	add("host", host)
	add("cpu.model", model)
	add("cpu.logical", fmt.Sprint(runtime.NumCPU()))
	add("cpu.physical_cores", fmt.Sprint(physical))
	add("cpu.sockets", fmt.Sprint(sockets))
	add("cpu.numa_nodes", fmt.Sprint(numaNodes()))
	add("cpu.governor", harness.ReadTrim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "not exposed"))
	add("kernel", kernel())
	add("load.start", rep.LoadStart)
	loadEnd := rep.LoadEnd
	if loadEnd == "" {
		loadEnd = harness.ReadTrim("/proc/loadavg", "unknown")
	}
	add("load.end", loadEnd)
	add("go.version", runtime.Version())
	add("goblin.commit", rep.Commit)
	if bin, err := harness.LookTool(cfg.GoblinServer, "goblin-server"); err == nil {
		add("goblin.server", bin)
	}
	if bin, err := harness.LookTool(cfg.RedisServer, "redis-server"); err == nil {
		add("redis.version", harness.RedisVersion(bin))
	}
	add("aeron.version", aeronVersion(cfg))
	if j, err := harness.LookTool(cfg.Java, "java"); err == nil {
		add("java.version", javaVersion(j))
	}
	add("method.runs", fmt.Sprint(cfg.Runs))
	add("method.warmup", fmt.Sprint(cfg.Warmup))
	add("method.samples", fmt.Sprint(cfg.Samples))
	add("method.depth", fmt.Sprint(cfg.Depth))
	add("method.value_size", fmt.Sprint(cfg.ValueSize))
	add("method.keys", fmt.Sprint(cfg.Keys))
	add("method.percentiles", "exact, nearest rank, from every measured sample")
	add("method.clock", fmt.Sprintf("Go monotonic clock around each round trip; back-to-back reading costs %d ns (min of 1000)", clockOverhead()))
	add("profile", cfg.Profile.String())
	if cfg.Profile.UDP != nil {
		add("profile.aeron-udp", cfg.Profile.UDP.String())
	}
	if len(cfg.Paths) == 0 {
		add("network.server_host", cfg.ServerHost)
		if cfg.ClientHost != "" {
			add("network.client_host", cfg.ClientHost)
		}
	}
	if len(cfg.ServerWrap) > 0 {
		add("network.server_wrap", strings.Join(cfg.ServerWrap, " "))
	}
	add("hosts.server", cfg.ServerSideHost().Describe())
	add("hosts.client", cfg.ClientSideHost().Describe())
	for _, p := range cfg.NetPaths() {
		add("path."+p.Label(), fmt.Sprintf("server %s, client %s, response control %s", p.Server, p.Client, p.ControlAddr()))
	}
	add("driver", cfg.Driver.String())
	for _, k := range slices.Sorted(maps.Keys(cfg.DriverEnv)) {
		name := "driver.env"
		if k != "" {
			name += "." + k
		}
		add(name, strings.Join(cfg.DriverEnv[k], " "))
	}
	if cfg.Qualify != nil {
		collector := cfg.Qualify.Collector
		if collector == "" {
			collector = "goblin-bench aeron-stat (the driver's counters every second)"
		}
		add("qualification", "one extra pass with a statistics collector attached to every media driver, in "+harness.QualificationDir+"/, not in the aggregate; collector: "+collector)
	}
	add("run.id", cfg.RunID)
	for _, hf := range rep.Hosts {
		for _, kv := range hf.Facts {
			add("host."+hf.Role+"."+kv.Key, kv.Value)
		}
	}
	if st := rep.Staging; st != nil {
		add("staging.dir.server", st.Dirs["server"])
		add("staging.dir.client", st.Dirs["client"])
		add("staging.shared", fmt.Sprint(st.Shared))
		for _, f := range st.Files {
			add("staging.sha256."+f.Name, f.SHA256)
		}
	}
	for i, w := range rep.Warnings {
		add(fmt.Sprintf("warning.%d", i+1), w)
	}
	add("command", cfg.Command)
	cases := rep.Cases
	cases = append(cases[:len(cases):len(cases)], rep.QualificationCases...)
	for i, c := range cases {
		prefix := fmt.Sprintf("case.run-%d.%s.", c.Run, c.Case.ID())
		if i >= len(rep.Cases) {
			prefix = harness.QualificationDir + "." + prefix
		}
		add(prefix+"status", c.Status)
		if c.Note != "" {
			add(prefix+"note", c.Note)
		}
		if c.Status != harness.StatusUnavailable {
			add(prefix+"profile", c.Profile.String())
		}
		if c.Client != "" {
			add(prefix+"client", c.Client)
		}
		keys := make([]string, 0, len(c.Info))
		for k := range c.Info {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			add(prefix+k, c.Info[k])
		}
	}
	return m
}

// cpuInfo reads this machine's CPU model and counts its physical cores and
// sockets.
func cpuInfo() (model string, physical, sockets int) {
	b, _ := os.ReadFile("/proc/cpuinfo")
	model, _, physical, sockets = parseCPUInfo(b)
	if physical == 0 {
		physical = runtime.NumCPU()
	}
	return model, physical, sockets
}

// parseCPUInfo reads a /proc/cpuinfo: the model name, logical CPUs,
// physical cores and sockets.
func parseCPUInfo(b []byte) (model string, logical, physical, sockets int) {
	cores := map[string]bool{}
	socks := map[string]bool{}
	var phys string
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "processor":
			logical++
		case "model name":
			if model == "" {
				model = v
			}
		case "physical id":
			phys = v
			socks[v] = true
		case "core id":
			cores[phys+"/"+v] = true
		}
	}
	if model == "" {
		model = "unknown"
	}
	physical, sockets = len(cores), len(socks)
	if physical == 0 {
		physical = logical
	}
	if sockets == 0 {
		sockets = 1
	}
	return model, logical, physical, sockets
}

func numaNodes() int {
	m, _ := filepath.Glob("/sys/devices/system/node/node[0-9]*")
	if len(m) == 0 {
		return 1
	}
	return len(m)
}

func kernel() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Machine[:])
}

// GitCommit is the checkout's commit, marked when the tree has changes.
func GitCommit() string {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown (not a git checkout)"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		c += " (with uncommitted changes)"
	}
	return c
}

// aeronVersion is the Aeron media driver and samples jar the run used.
func aeronVersion(cfg *harness.Config) string {
	jar, err := harness.AeronJar(cfg)
	if err != nil {
		return "none (" + err.Error() + ")"
	}
	return "io.aeron:aeron-all " + strings.TrimSuffix(strings.TrimPrefix(filepath.Base(jar), "aeron-all-"), ".jar") + " (" + jar + ")"
}

func javaVersion(bin string) string {
	out, err := exec.Command(bin, "-version").CombinedOutput()
	if err != nil {
		return "unknown"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}

// clockOverhead is the smallest difference between two back-to-back clock
// readings: the timing cost already inside every sample.
func clockOverhead() int64 {
	best := int64(1 << 62)
	for i := 0; i < 1000; i++ {
		t0 := time.Now()
		d := int64(time.Since(t0))
		if d < best {
			best = d
		}
	}
	return best
}
