package remote

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/benchmarks/harness"
	"github.com/goblin-kv/goblin/benchmarks/harness/internal/sshlab"
)

// TestMain lets this test binary serve as goblin-bench's agent (agent),
// as TestAgentStopsEverythingWhenTheControllerGoes starts it over ssh.
func TestMain(m *testing.M) {
	if len(os.Args) == 5 && os.Args[1] == "agent" && os.Args[2] == "-role" {
		if err := ServeAgent(os.Stdin, os.Stdout, os.Args[4], os.Args[3]); err != nil {
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
	t.Parallel() // its own namespaces, sshds and processes; mostly waits on them
	lab := sshlab.New(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The agent is goblin-bench agent; this test binary serves the same
	// way when asked to (TestMain).
	base := t.TempDir()
	root := filepath.Join(base, "goblin-bench-test", "server")
	h, err := dialAgent(ctx, lab.SSH(), "server", lab.Server, root, self, filepath.Join(base, "agent.log"), nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.Start(ctx, harness.ProcSpec{Name: "sleeper", Dir: filepath.Join(root, "case"), Argv: []string{"sleep", "600"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Exited(); err != nil {
		t.Fatalf("the sleeper is not running: %v", err)
	}
	if !sshlab.Alive(fmt.Sprint(p.PID()), fmt.Sprint(p.StartTicks())) {
		t.Fatalf("pid %d is not the sleeper", p.PID())
	}
	h.kill() // the controller's side of the connection dies
	deadline := time.Now().Add(time.Minute)
	for sshlab.Alive(fmt.Sprint(p.PID()), fmt.Sprint(p.StartTicks())) {
		if time.Now().After(deadline) {
			t.Fatalf("the sleeper (pid %d) outlived its controller", p.PID())
		}
		time.Sleep(50 * time.Millisecond)
	}
	h.Close()
	if _, err := os.Stat(filepath.Dir(root)); !os.IsNotExist(err) {
		t.Errorf("the runtime directory %s is still there (%v)", filepath.Dir(root), err)
	}
	if s := lab.SettledStrangers(); len(s) > 0 {
		t.Errorf("left running: %v", s)
	}
}
