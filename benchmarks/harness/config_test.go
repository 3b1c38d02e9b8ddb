package harness

import (
	"errors"
	"slices"
	"strings"
	"testing"
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

// A run that names no operations measures the published three; the
// collection operations are measured when named, and every operation has its
// own index for the probers' per-operation arrays.
func TestOps(t *testing.T) {
	cfg := DefaultConfig()
	if got := cfg.WantedOps(AllOps); !slices.Equal(got, DefaultOps) {
		t.Errorf("no OPS: %v, want %v", got, DefaultOps)
	}
	cfg.Ops = []Op{ZRange, HSet}
	if got := cfg.WantedOps(AllOps); !slices.Equal(got, []Op{HSet, ZRange}) {
		t.Errorf("OPS=ZRANGE,HSET: %v, want the table's order [HSET ZRANGE]", got)
	}
	if got := cfg.WantedOps([]Op{Ping}); len(got) != 0 {
		t.Errorf("a floor offered PING only measures %v under OPS=ZRANGE,HSET", got)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("OPS=ZRANGE,HSET: %v", err)
	}
	cfg.Ops = []Op{"HDEL"}
	if err := cfg.Validate(); !errors.Is(err, ErrConfig) {
		t.Errorf("OPS=HDEL: %v, want ErrConfig", err)
	}
	for i, op := range AllOps {
		if op.Index() != i {
			t.Errorf("%s.Index() = %d, want %d", op, op.Index(), i)
		}
	}
	if len(AllOps) != NumOps {
		t.Errorf("%d operations, NumOps %d", len(AllOps), NumOps)
	}
}

// goblin-server's default idle strategy, doze, can be measured (SERVER_IDLE=doze);
// the media drivers have no such strategy.
func TestServerIdleDoze(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Profile.ServerIdle = "doze"
	if err := cfg.Validate(); err != nil {
		t.Errorf("server idle doze: %v", err)
	}
	cfg.Profile.DriverIdle = "doze"
	if err := cfg.Validate(); !errors.Is(err, ErrConfig) {
		t.Errorf("driver idle doze: %v, want ErrConfig", err)
	}
}
