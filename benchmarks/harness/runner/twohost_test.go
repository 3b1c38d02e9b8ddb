package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/benchmarks/harness"
	"github.com/goblin-kv/goblin/benchmarks/harness/internal/sshlab"
	"github.com/goblin-kv/goblin/benchmarks/harness/report"
	"github.com/goblin-kv/goblin/internal/testkit"
)

// An aeronmd-compatible driver gets the C driver's -D command line and pins
// single-CPU agents itself; the Java driver's agents are pinned by thread.
func TestDriverCommand(t *testing.T) {
	cfg := harness.DefaultConfig()
	cfg.Driver = harness.Driver{Kind: harness.DriverAeronmd, Binary: "/bin/true", Name: "goblin"}
	prof := harness.Profiles(8)["spin"]
	agents := []harness.AgentPin{{Agent: "conductor", CPUs: "2"}, {Agent: "sender", CPUs: "3-4"}}
	dc, err := driverCommand(&cfg, harness.NewLocalHost("server", nil, t.TempDir()), prof, "/dev/shm/x", agents)
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
	cfg.Driver = harness.Driver{}
	cfg.Java, cfg.AeronJar = "/bin/true", filepath.Join(t.TempDir(), "aeron-all.jar")
	os.WriteFile(cfg.AeronJar, nil, 0o644)
	dc, err = driverCommand(&cfg, harness.NewLocalHost("server", nil, t.TempDir()), prof, "/x", agents)
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
	sshlab.RequireTools(t, false, "ip")
	cfg := harness.DefaultConfig()
	cfg.OutDir = t.TempDir()
	cfg.Paths = []harness.NetPath{{Name: "p", Server: "127.0.0.1", Client: "127.0.0.2", Control: "127.0.0.2"}}
	warnings, err := report.CheckPaths(context.Background(), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "127.0.0.2 is the client's address") {
		t.Errorf("warnings %q", warnings)
	}
	cfg.Paths[0].Control = ""
	if warnings, _ := report.CheckPaths(context.Background(), &cfg); len(warnings) != 0 {
		t.Errorf("the server's own control address warned: %q", warnings)
	}
}

// The Java driver's agents are pinned one by one once its threads exist,
// and the case's affinity check reads them back.
func TestDriverAgentPinning(t *testing.T) {
	sshlab.RequireTools(t, false, "java", "taskset")
	cfg := harness.DefaultConfig()
	_, err := harness.AeronJar(&cfg)
	testkit.Require(t, "the Aeron jar", err)
	cfg.OutDir = t.TempDir()
	cfg.Track = &harness.CaseTrack{}
	prof := harness.Profiles(2)["backoff"]
	last := runtime.NumCPU() - 1
	prof.ServerAgents = fmt.Sprintf("conductor=0,sender=%d,receiver=0", last)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, err := startDriver(ctx, &cfg, cfg.ServerSideHost(), prof, cfg.OutDir, "driver-server")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop(graceStop)
	text, err := cfg.Track.SettleAffinity(ctx, 10*time.Second)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	for _, want := range []string{`"sender"`, `"receiver"`, `"driver-conducto"`, fmt.Sprintf("ok (sender asked %d)", last)} {
		if !strings.Contains(text, want) {
			t.Errorf("affinity.txt lacks %s:\n%s", want, text)
		}
	}
	// Move the sender: the check says so.
	if err := harness.PinAgents(ctx, d.PID(), []harness.AgentPin{{Agent: "sender", CPUs: "0-" + fmt.Sprint(last)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.Track.CheckAffinity(); err == nil || !strings.Contains(err.Error(), "sender") {
		t.Errorf("a sender moved off its CPU passed the check: %v", err)
	}
}

// With housekeeping CPUs, goblin-server runs there and only its store loop
// moves to the server's CPU; the affinity check finds it alone there.
func TestServerLoopOnItsOwnCPU(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("needs two CPUs to put the loop and the rest apart")
	}
	cfg := harness.DefaultConfig()
	cfg.OutDir = t.TempDir()
	cfg.GoblinServer = buildGoblinServer(t)
	cfg.Track = &harness.CaseTrack{}
	cfg.Profile = harness.Profiles(2)["backoff"]
	cfg.Profile.ServerCPU, cfg.Profile.HousekeepingCPU = "0", "1"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	inst, err := NewGoblin(harness.TTCP).Start(ctx, &cfg, harness.RESP, cfg.OutDir)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	// The loop pins itself once it runs, which may be after the server
	// answers: settle as the harness does before it archives the check.
	text, err := cfg.Track.SettleAffinity(ctx, 10*time.Second)
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
	sshlab.RequireTools(t, false, "java")
	cfg := harness.DefaultConfig()
	jar, err := harness.AeronJar(&cfg)
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
	cfg.Profile = harness.Profiles(2)["backoff"]
	cfg.GoblinServer = buildGoblinServer(t)
	cfg.Systems, cfg.Transports, cfg.Protocols, cfg.Ops = []string{harness.SysGoblin}, []string{harness.TAeronUDP}, []harness.Protocol{harness.SBE}, []harness.Op{harness.Ping}
	if cfg.Driver, err = harness.ParseDriver("goblin", aeronmd); err != nil {
		t.Fatal(err)
	}
	cfg.DriverEnv = map[string][]string{"": {"GOBLIN_TEST_MARK=dropped-in"}}
	cfg.CaseTimeout = 2 * time.Minute
	cfg.RunID = NewRunID() + "-aeronmd"
	rep, err := Run(context.Background(), cfg, DefaultProviders())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Cases) != 1 || rep.Cases[0].Status != harness.StatusOK {
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
	meta, _ := os.ReadFile(filepath.Join(cfg.OutDir, report.MetadataTXT))
	if !strings.Contains(string(meta), "\ndriver: goblin ("+aeronmd+")\n") || !strings.Contains(string(meta), "\ndriver.env: GOBLIN_TEST_MARK=dropped-in\n") {
		t.Errorf("metadata.txt does not name the driver kind and its environment")
	}
}
