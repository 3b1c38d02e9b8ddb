package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// TestCLIAgainstGoblin drives the real goblin-server with the real
// goblin-client binary over both sockets and both protocols.
func TestCLIAgainstGoblin(t *testing.T) {
	t.Parallel()
	targets := testproc.StartGoblinServer(t)
	for _, name := range testproc.GoblinServerKeys {
		t.Run(name, func(t *testing.T) { exerciseCLI(t, targets[name]) })
	}
	// --proto overrides the target's protocol: a bare socket path (RESP by
	// default) with --proto sbe reaches the SBE listener.
	sbePath := strings.TrimSuffix(strings.TrimPrefix(targets["uds/sbe"], "uds://"), "?proto=sbe")
	runCLI(t, "", "--target", sbePath, "--proto", "sbe", "ping").expect(t, 0, "PONG\n")
}

func TestCLIPassword(t *testing.T) {
	t.Parallel()
	targets := testproc.StartGoblinServer(t, "--requirepass", "s3cret")
	tgt := targets["uds/resp"]
	r := runCLI(t, "", "--target", tgt, "get", "k")
	if r.code != 1 || !strings.Contains(r.stdout, "NOAUTH") {
		t.Fatalf("without a password: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	runCLI(t, "", "--target", tgt, "--password", "s3cret", "ping").expect(t, 0, "PONG\n")
	if r := runCLI(t, "", "--target", tgt, "--password", "wrong", "ping"); r.code != 1 {
		t.Fatalf("wrong password: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestCLIServerStopped checks the message and exit code when the socket
// file is left but nobody listens, and when the server went away.
func TestCLIServerStopped(t *testing.T) {
	t.Parallel()
	bin := testproc.Build(t, "./cmd/goblin-server")
	sock := filepath.Join(t.TempDir(), "g.sock")
	p := testproc.Start(t, bin, "--metrics", "off", "--listen", "uds://"+sock)
	p.WaitLog(t, `msg=ready`, 60*time.Second)
	runCLI(t, "", "--target", sock, "ping").expect(t, 0, "PONG\n")
	p.Stop(10 * time.Second)
	r := runCLI(t, "", "--target", sock, "ping")
	if r.code != 3 || !strings.Contains(r.stderr, sock) || !strings.Contains(r.stderr, "goblin-server --listen") {
		t.Fatalf("after the server stopped: exit %d, stderr %q", r.code, r.stderr)
	}
}
