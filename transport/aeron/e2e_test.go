package aeron_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron/javadriver"
	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
	"github.com/goblin-kv/goblin/server"
	"github.com/goblin-kv/goblin/transport"
)

// e2eSetup is one goblin-server process with a RESP and an SBE listener on
// one media (the first listener starts the driver, the second shares it
// with driver=external), and the targets clients use.
type e2eSetup struct {
	srv               *testproc.Proc
	serverDir         string
	respT, sbeT       string // client targets (dir = the client-side driver for UDP)
	respOwnT, sbeOwnT string // UDP: client targets without dir (the client starts its own driver)
	clientDir         string
	// quickLoss is appended to the targets of clients that must notice a
	// dead driver quickly (driverRestart). Other clients keep the default
	// 10 s driver timeout: the Java driver stamps its heartbeat once a
	// second, so a 3 s timeout leaves 2 s of slack, which a driver starved
	// of CPU on a loaded machine can use up, and the client would report a
	// live driver lost (a spurious ErrServerGone).
	quickLoss string
}

// setupE2E sets up one of the kinds TestEndToEnd runs: "ipc" (the Go
// media driver inside goblin-server, the default), "ipc-java" (the
// supervised Java driver, driver=java), "udp" (the Go driver inside
// goblin-server; clients on their own in-process Go driver and on a Java
// driver) and "udp-java" (Java drivers on both sides).
func setupE2E(t *testing.T, kind string) *e2eSetup {
	t.Helper()
	e := &e2eSetup{serverDir: shmDir(t)}
	var srvResp, srvSBE string
	if kind == "ipc" || kind == "ipc-java" {
		srvResp = "aeron:ipc?proto=resp|dir=" + e.serverDir
		if kind == "ipc-java" {
			srvResp += "|driver=java"
		}
		srvSBE = "aeron:ipc?proto=sbe|stream=2001|reply-stream=2002|dir=" + e.serverDir
		e.respT, e.sbeT = srvResp, srvSBE
		e.quickLoss = "|driver-timeout=3s"
	} else {
		rr, rc, sr, sc := loopback(freeUDPPort(t)), loopback(freeUDPPort(t)), loopback(freeUDPPort(t)), loopback(freeUDPPort(t))
		e.respOwnT = fmt.Sprintf("aeron:udp?endpoint=%s|control=%s|proto=resp", rr, rc)
		e.sbeOwnT = fmt.Sprintf("aeron:udp?endpoint=%s|control=%s|proto=sbe", sr, sc)
		srvResp = e.respOwnT + "|dir=" + e.serverDir
		srvSBE = e.sbeOwnT + "|dir=" + e.serverDir
		if kind == "udp-java" {
			srvResp += "|driver=java"
			e.respOwnT += "|driver=java"
		}
		e.clientDir = startDriver(t, javadriver.Options{}).Dir()
		e.respT = e.respOwnT + "|dir=" + e.clientDir
		e.sbeT = e.sbeOwnT + "|dir=" + e.clientDir
	}
	e.srv = startServer(t, srvResp, srvSBE+"|driver=external")
	return e
}

// TestEndToEnd runs the real goblin-server and goblin-client binaries and
// client processes over Aeron IPC (one driver: goblin's Go driver inside
// goblin-server, and the supervised Java driver) and UDP (two drivers,
// response channels on loopback: goblin's Go driver inside goblin-server
// and inside the clients, or beside a client's Java driver; and Java
// drivers on both sides), in RESP and SBE. Only a driver of its own
// process can be killed and restarted, so the Go driver's runs have no
// driver-restart step.
func TestEndToEnd(t *testing.T) {
	t.Parallel() // its kinds wait out driver liveness timeouts; the long echo and flood tests overlap them
	needDriver(t)
	for _, kind := range []string{"ipc", "ipc-java", "udp", "udp-java"} {
		t.Run(kind, func(t *testing.T) {
			// Each kind has its own server, drivers, directories and
			// ports, and spends most of its time waiting out the
			// drivers' liveness timeouts: the kinds overlap.
			t.Parallel()
			e := setupE2E(t, kind)
			t.Run("commands", func(t *testing.T) { e.commands(t) })
			t.Run("clients", func(t *testing.T) { e.clients(t) })
			if strings.HasSuffix(kind, "-java") {
				t.Run("driver-restart", func(t *testing.T) { e.driverRestart(t) })
			}
		})
	}
}

// commands: PING, SET, GET through goblin-client in both protocols; over
// UDP the RESP client has no dir and starts its own media driver.
func (e *e2eSetup) commands(t *testing.T) {
	respT := e.respT
	if e.respOwnT != "" {
		respT = e.respOwnT
	}
	for _, tc := range []struct{ name, tgt string }{{"resp", respT}, {"sbe", e.sbeT}} {
		for _, step := range []struct {
			args []string
			want string
		}{
			{[]string{"ping"}, "PONG"},
			{[]string{"set", "greeting-" + tc.name, "hello aeron"}, "OK"},
			{[]string{"get", "greeting-" + tc.name}, `"hello aeron"`},
			{[]string{"get", "missing-" + tc.name}, "(nil)"},
		} {
			out, err := cli(t, tc.tgt, step.args...)
			if err != nil || strings.TrimSpace(out) != step.want {
				t.Fatalf("%s: goblin-client %v: %q (%v), want %q", tc.name, step.args, out, err, step.want)
			}
		}
	}
}

// clients: a client process is SIGKILLed mid-workload while four others
// (two per protocol) run theirs to the end with every reply checked; then
// the server forgets the dead client.
func (e *e2eSetup) clients(t *testing.T) {
	victim := startClientRole(t, e.respT, 99, 0)
	victim.WaitLog(t, `^running`, 120*time.Second)
	var ps []*testproc.Proc
	for i := range 4 {
		tgt := e.respT
		if i%2 == 1 {
			tgt = e.sbeT
		}
		ps = append(ps, startClientRole(t, tgt, i, 300))
	}
	for _, p := range ps {
		p.WaitLog(t, `^running`, 120*time.Second)
	}
	if err := victim.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		waitOK(t, p, 180*time.Second)
	}
	ctx := context.Background()
	c, err := client.Options{DialTimeout: time.Minute}.Dial(ctx, e.respT)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The driver notices the dead client (client liveness, image liveness:
	// 10 s by default) and the server closes its reply publication.
	var n int
	testkit.Eventually(t, 90*time.Second, "the server to drop the killed client", func() (bool, string) {
		n, err = connectedClients(ctx, c)
		return err == nil && n == 1, ""
	})
	if err := workload(ctx, c, 7, 50, nil); err != nil {
		t.Fatal(err)
	}
}

// driverRestart: the server's media driver is SIGKILLed; the server logs
// it, starts a new one and re-adds its subscriptions (the SBE listener,
// on the same driver with driver=external, reconnects too); connected
// clients get a recoverable error and carry on after redialling.
func (e *e2eSetup) driverRestart(t *testing.T) {
	ctx := context.Background()
	var cs []*client.Client
	for _, tgt := range []string{e.respT + e.quickLoss, e.sbeT + e.quickLoss} {
		c, err := client.Options{DialTimeout: time.Minute}.Dial(ctx, tgt)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Ping(ctx); err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	pid, err := strconv.Atoi(e.srv.WaitLog(t, `aeron media driver started.*pid=(\d+)`, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e.srv.WaitLog(t, `aeron media driver died`, 60*time.Second)
	e.srv.WaitLog(t, `aeron media driver restarted`, 120*time.Second)
	for i, c := range cs {
		var first error
		testkit.Eventually(t, 180*time.Second, "a client to get answers again", func() (bool, string) {
			cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			err := c.Ping(cctx)
			if err != nil && first == nil {
				first = err
			}
			return err == nil, ""
		})
		if first == nil {
			t.Fatalf("client %d: no error after its server's driver died", i)
		}
		if !errors.Is(first, transport.ErrServerGone) && !errors.Is(first, transport.ErrTimeout) &&
			!errors.Is(first, context.DeadlineExceeded) && !errors.Is(first, client.ErrDial) {
			t.Fatalf("client %d: first error %v is not one to recover from", i, first)
		}
		t.Logf("client %d recovered after: %v", i, first)
		if err := workload(ctx, c, 20+i, 100, nil); err != nil {
			t.Fatal(err)
		}
	}
	// The second listener (driver=external) found the new driver too.
	e.srv.WaitLog(t, `aeron client lost its media driver`, 60*time.Second)
	// And the server's stat counters are in the new driver.
	testkit.Eventually(t, 60*time.Second, "the server's stat counters in the restarted driver", func() (bool, string) {
		return hasCounterOfType(e.serverDir, server.AeronCounterRequests, "goblin requests: "), ""
	})
}

// TestExternalDriver: goblin-server --aeron-dir uses a driver something
// else runs and starts none; without it, a server refuses to start its own
// driver over a live one.
func TestExternalDriver(t *testing.T) {
	needDriver(t)
	d := startDriver(t, javadriver.Options{})
	srv := startServer(t, "--aeron-dir="+d.Dir(), "aeron:ipc?proto=sbe")
	if strings.Contains(srv.Log(), "media driver started") || strings.Contains(srv.Log(), "in-process") {
		t.Fatalf("goblin-server --aeron-dir started a driver of its own:\n%s", srv.Log())
	}
	out, err := cli(t, "aeron:ipc?proto=sbe|dir="+d.Dir(), "ping")
	if err != nil || strings.TrimSpace(out) != "PONG" {
		t.Fatalf("ping through the external driver: %q (%v)", out, err)
	}
	bin := testproc.Build(t, "./cmd/goblin-server")
	p := testproc.Start(t, bin, "--metrics", "off", "--listen", "aeron:ipc?dir="+d.Dir())
	code, err := p.Wait(120 * time.Second)
	if err != nil || code == 0 || !strings.Contains(p.Log(), "already runs") {
		t.Fatalf("a second driver over a live one: exit %d, %v\n%s", code, err, p.Log())
	}
}
