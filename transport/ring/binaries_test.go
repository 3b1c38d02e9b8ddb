package ring_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// TestRealBinaries runs goblin-server with a ring listener and several
// goblin-client processes on it: one-shot commands, a client SIGKILLed in
// the middle of a session (its rings are reclaimed, the others carry on),
// and a clean stop that leaves no file behind.
func TestRealBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("builds goblin-server and goblin-client")
	}
	srvBin := testproc.Build(t, "./cmd/goblin-server")
	cliBin := testproc.Build(t, "./cmd/goblin-client")
	dir := filepath.Join(t.TempDir(), "ring")
	tgt := "ring://" + dir + "?proto=sbe&wait=park"
	srv := testproc.Start(t, srvBin, "--listen", "ring://"+dir+"?proto=sbe", "--metrics", "off")
	srv.WaitLog(t, `ready`, 60*time.Second)

	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(cliBin, append([]string{"--target", tgt}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("goblin-client %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := run("ping"); got != "PONG" {
		t.Fatalf("ping: %q", got)
	}
	if got := run("set", "greeting", "hello ring"); got != "OK" {
		t.Fatalf("set: %q", got)
	}

	// A long-lived client reading commands from a pipe, killed mid-session.
	cmd := exec.Command(cliBin, "--target", tgt)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	victim, err := testproc.StartCmd(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { victim.Stop(5 * time.Second) })
	stdin.Write([]byte("incr counter\n"))
	victim.WaitLog(t, `1`, 30*time.Second)
	testkit.Eventually(t, 30*time.Second, "the victim's ring", func() (bool, string) { return serverRings(t, srv) == 1, "" })
	victim.Signal(syscall.SIGKILL)
	victim.Wait(10 * time.Second)
	testkit.Eventually(t, 30*time.Second, "the killed client's rings reclaimed", func() (bool, string) { return serverRings(t, srv) == 0, "" })

	if got := run("get", "greeting"); got != `"hello ring"` && got != "hello ring" {
		t.Fatalf("get after a client was killed: %q", got)
	}
	if got := run("incr", "counter"); !strings.Contains(got, "2") {
		t.Fatalf("incr: %q", got)
	}
	if code := srv.Stop(30 * time.Second); code != 0 {
		t.Fatalf("server exit %d\n%s", code, srv.Log())
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		ents, _ := os.ReadDir(dir)
		t.Fatalf("files outlive goblin-server's clean stop: %v", ents)
	}
}
