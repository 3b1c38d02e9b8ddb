package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
)

func TestParsePaths(t *testing.T) {
	got, err := ParsePaths("10gbe=10.0.0.1/10.0.0.2, 100gbe=192.168.7.1/192.168.7.2")
	if err != nil {
		t.Fatal(err)
	}
	want := []NetPath{{Name: "10gbe", Server: "10.0.0.1", Client: "10.0.0.2"}, {Name: "100gbe", Server: "192.168.7.1", Client: "192.168.7.2"}}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got[0].ControlAddr() != "10.0.0.1" {
		t.Errorf("the control address defaults to %q, want the server's", got[0].ControlAddr())
	}
	if p, _ := ParsePaths("x=fd00::1/fd00::2/fd00::3"); len(p) != 1 || p[0].Control != "fd00::3" || p[0].String() != "x=fd00::1/fd00::2/fd00::3" {
		t.Errorf("IPv6 path with a control address: %v", p)
	}
	for _, bad := range []string{"10.0.0.1/10.0.0.2", "a=10.0.0.1", "a=/x", "a b=1/2", "a=1/2,a=3/4", "a=1/2/3/4"} {
		if _, err := ParsePaths(bad); !errors.Is(err, ErrConfig) {
			t.Errorf("ParsePaths(%q) = %v, want ErrConfig", bad, err)
		}
	}
}

func TestParseDriverEnv(t *testing.T) {
	path, env, err := ParseDriverEnv("100gbe:LD_PRELOAD=/usr/lib/libxlio.so XLIO_SPEC=latency")
	if err != nil || path != "100gbe" || !slices.Equal(env, []string{"LD_PRELOAD=/usr/lib/libxlio.so", "XLIO_SPEC=latency"}) {
		t.Errorf("got %q %q %v", path, env, err)
	}
	path, env, err = ParseDriverEnv("AERON_PRINT_CONFIGURATION=true")
	if err != nil || path != "" || len(env) != 1 {
		t.Errorf("got %q %q %v", path, env, err)
	}
	for _, bad := range []string{"", "p:", "NOVALUE", "=x"} {
		if _, _, err := ParseDriverEnv(bad); !errors.Is(err, ErrConfig) {
			t.Errorf("ParseDriverEnv(%q) = %v, want ErrConfig", bad, err)
		}
	}
	cfg := DefaultConfig()
	cfg.DriverEnv = map[string][]string{"100gbe": env}
	if err := cfg.Validate(); !errors.Is(err, ErrConfig) {
		t.Errorf("an environment for a path PATHS does not name validated: %v", err)
	}
}

func TestParseAgentPins(t *testing.T) {
	pins, err := ParseAgentPins("conductor=2,sender=3-4,receiver=5")
	if err != nil || len(pins) != 3 || pins[1] != (AgentPin{"sender", "3-4"}) {
		t.Errorf("got %v, %v", pins, err)
	}
	for _, bad := range []string{"conductor", "pinger=1", "sender=x"} {
		if _, err := ParseAgentPins(bad); !errors.Is(err, ErrConfig) {
			t.Errorf("ParseAgentPins(%q) = %v, want ErrConfig", bad, err)
		}
	}
	if p := HostsProfiles(8)["spin"]; p.ServerAgents == "" || p.ClientCPU != "1" || p.DriverIdle != "spin" {
		t.Errorf("the two-host spin profile pins no agents: %v", p)
	}
	if p := DefaultHostsProfile(4); p.Name != "fit2" {
		t.Errorf("four CPUs a host default to %s, want fit2", p.Name)
	}
}

// The affinity check passes threads where they were asked to run and
// names the first that is not.
func TestJudgeAffinity(t *testing.T) {
	p := trackedProc{cpus: "0", agents: []AgentPin{{"conductor", "2"}, {"sender", "3"}, {"receiver", "4"}}}
	good := []ThreadInfo{{1, "java", "0"}, {2, "driver-conducto", "2"}, {3, "sender", "3"}, {4, "receiver", "4"}, {5, "C2 CompilerThre", "0"}}
	if v, err := judgeAffinity(p, good); err != nil {
		t.Errorf("%v (%v)", err, v)
	}
	bad := slices.Clone(good)
	bad[3].CPUs = "3-4"
	if _, err := judgeAffinity(p, bad); err == nil || !strings.Contains(err.Error(), "receiver") {
		t.Errorf("a receiver on 3-4 passed: %v", err)
	}
	bad = slices.Clone(good)
	bad[4].CPUs = "0-1"
	if _, err := judgeAffinity(p, bad); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("a JVM thread outside the process's CPUs passed: %v", err)
	}
	// A driver that does not name its threads: some thread must run on
	// exactly each agent's CPUs.
	unnamed := []ThreadInfo{{1, "aeronmd", "0"}, {2, "aeronmd", "2"}, {3, "aeronmd", "3"}, {4, "aeronmd", "4"}}
	if _, err := judgeAffinity(p, unnamed); err != nil {
		t.Errorf("unnamed agent threads on their CPUs: %v", err)
	}
	if _, err := judgeAffinity(p, unnamed[:3]); err == nil || !strings.Contains(err.Error(), "receiver") {
		t.Errorf("no thread on the receiver's CPU passed: %v", err)
	}
}

// An aeronmd-compatible driver gets the C driver's -D command line and pins
// single-CPU agents itself; the Java driver's agents are pinned by thread.
func TestDriverCommand(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Driver = Driver{Kind: DriverAeronmd, Binary: "/bin/true", Name: "goblin"}
	prof := Profiles(8)["spin"]
	agents := []AgentPin{{"conductor", "2"}, {"sender", "3-4"}}
	dc, err := driverCommand(&cfg, newLocalHost("server", nil, t.TempDir()), prof, "/dev/shm/x", agents)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Join(dc.argv, " ")
	for _, want := range []string{"/bin/true -Daeron.dir=/dev/shm/x ", "-Daeron.threading.mode=DEDICATED", "-Daeron.sender.idle.strategy=noop",
		"-Daeron.conductor.cpu.affinity=2"} {
		if !strings.Contains(line, want) {
			t.Errorf("aeronmd command line lacks %q: %s", want, line)
		}
	}
	if len(dc.pinLater) != 1 || dc.pinLater[0].Agent != "sender" {
		t.Errorf("the sender's two CPUs are pinned by thread, got %v", dc.pinLater)
	}
	cfg.Driver = Driver{}
	cfg.Java, cfg.AeronJar = "/bin/true", filepath.Join(t.TempDir(), "aeron-all.jar")
	os.WriteFile(cfg.AeronJar, nil, 0o644)
	dc, err = driverCommand(&cfg, newLocalHost("server", nil, t.TempDir()), prof, "/x", agents)
	if err != nil {
		t.Fatal(err)
	}
	line = strings.Join(dc.argv, " ")
	if !strings.HasPrefix(line, "/bin/true ") || !strings.Contains(line, " -cp "+cfg.AeronJar+" -Daeron.dir=/x ") ||
		!strings.HasSuffix(line, " io.aeron.driver.MediaDriver") || strings.Contains(line, "cpu.affinity") || len(dc.pinLater) != 2 {
		t.Errorf("java driver: %s, pinned later %v", line, dc.pinLater)
	}
}

// A response control address that is the client's gets a warning.
func TestCheckPathsWarnsOfTheClientsControlAddress(t *testing.T) {
	requireTools(t, false, "ip")
	cfg := DefaultConfig()
	cfg.OutDir = t.TempDir()
	cfg.Paths = []NetPath{{Name: "p", Server: "127.0.0.1", Client: "127.0.0.2", Control: "127.0.0.2"}}
	warnings, err := checkPaths(context.Background(), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "127.0.0.2 is the client's address") {
		t.Errorf("warnings %q", warnings)
	}
	cfg.Paths[0].Control = ""
	if warnings, _ := checkPaths(context.Background(), &cfg); len(warnings) != 0 {
		t.Errorf("the server's own control address warned: %q", warnings)
	}
}

// The Java driver's agents are pinned one by one once its threads exist,
// and the case's affinity check reads them back.
func TestDriverAgentPinning(t *testing.T) {
	requireTools(t, false, "java", "taskset")
	cfg := DefaultConfig()
	_, err := aeronJar(&cfg)
	testkit.Require(t, "the Aeron jar", err)
	cfg.OutDir = t.TempDir()
	cfg.track = &caseTrack{}
	prof := Profiles(2)["backoff"]
	last := runtime.NumCPU() - 1
	prof.ServerAgents = fmt.Sprintf("conductor=0,sender=%d,receiver=0", last)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, err := startDriver(ctx, &cfg, cfg.serverSide(), prof, cfg.OutDir, "driver-server")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop(graceStop)
	text, err := cfg.track.settleAffinity(ctx, 10*time.Second)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	for _, want := range []string{`"sender"`, `"receiver"`, `"driver-conducto"`, fmt.Sprintf("ok (sender asked %d)", last)} {
		if !strings.Contains(text, want) {
			t.Errorf("affinity.txt lacks %s:\n%s", want, text)
		}
	}
	// Move the sender: the check says so.
	if err := pinAgents(ctx, d.PID(), []AgentPin{{"sender", "0-" + fmt.Sprint(last)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.track.checkAffinity(); err == nil || !strings.Contains(err.Error(), "sender") {
		t.Errorf("a sender moved off its CPU passed the check: %v", err)
	}
}

// TestMain lets this test binary serve as goblin-bench's agent (-agent),
// as TestAgentStopsEverythingWhenTheControllerGoes starts it over ssh.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "-agent" {
		role := "server"
		if len(os.Args) > 4 && os.Args[3] == "-agent-role" {
			role = os.Args[4]
		}
		if err := ServeAgent(os.Stdin, os.Stdout, os.Args[2], role); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// When the controller goes (its ssh connection cut), the agent stops every
// process it started.
func TestAgentStopsEverythingWhenTheControllerGoes(t *testing.T) {
	lab := newSSHLab(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The agent is goblin-bench -agent; this test binary serves the same
	// way when asked to (TestMain).
	base := t.TempDir()
	root := filepath.Join(base, "goblin-bench-test", "server")
	h, err := dialAgent(ctx, lab.SSH(), "server", lab.server, root, self, filepath.Join(base, "agent.log"), nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.Start(ctx, ProcSpec{Name: "sleeper", Dir: filepath.Join(root, "case"), Argv: []string{"sleep", "600"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Exited(); err != nil {
		t.Fatalf("the sleeper is not running: %v", err)
	}
	if !alive(fmt.Sprint(p.PID()), fmt.Sprint(p.StartTicks())) {
		t.Fatalf("pid %d is not the sleeper", p.PID())
	}
	h.kill() // the controller's side of the connection dies
	deadline := time.Now().Add(time.Minute)
	for alive(fmt.Sprint(p.PID()), fmt.Sprint(p.StartTicks())) {
		if time.Now().After(deadline) {
			t.Fatalf("the sleeper (pid %d) outlived its controller", p.PID())
		}
		time.Sleep(50 * time.Millisecond)
	}
	h.Close()
	if _, err := os.Stat(filepath.Dir(root)); !os.IsNotExist(err) {
		t.Errorf("the runtime directory %s is still there (%v)", filepath.Dir(root), err)
	}
	if s := lab.settledStrangers(); len(s) > 0 {
		t.Errorf("left running: %v", s)
	}
}

// With housekeeping CPUs, goblin-server runs there and only its store loop
// moves to the server's CPU; the affinity check finds it alone there.
func TestServerLoopOnItsOwnCPU(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("needs two CPUs to put the loop and the rest apart")
	}
	cfg := DefaultConfig()
	cfg.OutDir = t.TempDir()
	cfg.GoblinServer = buildGoblinServer(t)
	cfg.track = &caseTrack{}
	cfg.Profile = Profiles(2)["backoff"]
	cfg.Profile.ServerCPU, cfg.Profile.HousekeepingCPU = "0", "1"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	inst, err := NewGoblin(TTCP).Start(ctx, &cfg, RESP, cfg.OutDir)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	// The loop pins itself once it runs, which may be after the server
	// answers: settle as the harness does before it archives the check.
	text, err := cfg.track.settleAffinity(ctx, 10*time.Second)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if !strings.Contains(text, "ok (unnamed; on store-loop's 0)") || !strings.Contains(text, "ok (within 1)") {
		t.Errorf("affinity.txt does not show the loop alone on 0 and the rest on 1:\n%s", text)
	}
	if !strings.Contains(inst.Info()["server.command"], "--cpu 0") {
		t.Errorf("goblin-server was not told --cpu 0: %s", inst.Info()["server.command"])
	}
}

// A driver with the C driver's command line drops in as DRIVER=aeronmd at a
// path: here a stand-in that hands its -D settings to Aeron's Java driver,
// run by the harness for a goblin Aeron UDP case with an environment of its
// own, whose counters and log land in the archive.
func TestAeronmdKindDropsIn(t *testing.T) {
	requireTools(t, false, "java")
	cfg := DefaultConfig()
	jar, err := aeronJar(&cfg)
	testkit.Require(t, "the Aeron jar", err)
	dir := t.TempDir()
	aeronmd := filepath.Join(dir, "aeronmd")
	script := "#!/bin/sh\n# aeronmd stand-in: the C driver's command line, run by Aeron's Java driver\n" +
		"echo \"aeronmd stand-in: GOBLIN_TEST_MARK=$GOBLIN_TEST_MARK args: $*\"\n" +
		"exec java " + strings.Join(jvmFlags, " ") + " -cp " + jar + " \"$@\" io.aeron.driver.MediaDriver\n"
	if err := os.WriteFile(aeronmd, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg.OutDir = filepath.Join(dir, "run")
	cfg.Runs, cfg.Warmup, cfg.Samples = 1, 20, 200
	cfg.Profile = Profiles(2)["backoff"]
	cfg.GoblinServer = buildGoblinServer(t)
	cfg.Systems, cfg.Transports, cfg.Protocols, cfg.Ops = []string{SysGoblin}, []string{TAeronUDP}, []Protocol{SBE}, []Op{Ping}
	if cfg.Driver, err = ParseDriver("goblin", aeronmd); err != nil {
		t.Fatal(err)
	}
	cfg.DriverEnv = map[string][]string{"": {"GOBLIN_TEST_MARK=dropped-in"}}
	cfg.CaseTimeout = 2 * time.Minute
	cfg.RunID = NewRunID() + "-aeronmd"
	rep, err := Run(context.Background(), cfg, DefaultProviders())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Cases) != 1 || rep.Cases[0].Status != StatusOK {
		t.Fatalf("cases: %+v", rep.Cases)
	}
	caseDir := filepath.Join(cfg.OutDir, "run-1", "goblin-aeron-udp-sbe")
	log, _ := os.ReadFile(filepath.Join(caseDir, "driver-server.log"))
	if !strings.Contains(string(log), "GOBLIN_TEST_MARK=dropped-in args: -Daeron.dir="+caseDir+"/driver-server") {
		t.Errorf("the driver did not get the C driver's command line and its environment:\n%s", log)
	}
	counters, _ := os.ReadFile(filepath.Join(caseDir, "client", "driver-client.counters.txt"))
	if !strings.Contains(string(counters), "Bytes received") {
		t.Errorf("no counters of the client's driver:\n%s", counters)
	}
	meta, _ := os.ReadFile(filepath.Join(cfg.OutDir, MetadataTXT))
	if !strings.Contains(string(meta), "\ndriver: goblin ("+aeronmd+")\n") || !strings.Contains(string(meta), "\ndriver.env: GOBLIN_TEST_MARK=dropped-in\n") {
		t.Errorf("metadata.txt does not name the driver kind and its environment")
	}
}
